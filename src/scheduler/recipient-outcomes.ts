/**
 * Turns attempt outcomes into recipient and job state changes. Every function here runs inside
 * one store transaction and guards its UPDATE with the state (and lease holder) it expects, so
 * a node that lost its lease, or raced a sweep, changes nothing.
 *
 * Only these functions write final recipient states, and each final write checks whether the
 * job is now complete. The notifications a change triggers (notifications/events.ts) are
 * written into the outbox in the same transaction.
 */
import type { Kysely } from "kysely";
import { DELIVERED_REASON, DELIVERED_STATUS, failureReason, type FailureReasonCode } from "../errors/failure-reasons.ts";
import { randomToken } from "../lib/ids.ts";
import type { AttemptOutcome } from "../line/line.ts";
import type { Database, RecipientRow } from "../store/database.ts";
import { decideAfterFailure, finalReasonText, type RetrySchedule } from "./retry-policy.ts";
import { assertRecipientTransition, type RecipientState } from "./job-states.ts";
import type { RetryClass } from "../errors/failure-reasons.ts";
import { enqueueJobNotifications } from "../notifications/enqueue-notifications.ts";
import { ATTEMPT_FAILED, JOB_COMPLETED, RECIPIENT_COMPLETED } from "../notifications/events.ts";
import { countryOfNumber } from "../numbers/country-of-number.ts";
import { rollUpJob } from "../store/queries/report-rollups.ts";

export interface DialTargetJson {
  e164: string;
  dialString: string;
}

export function dialTargets(recipient: Pick<RecipientRow, "dial_targets">): DialTargetJson[] {
  return JSON.parse(recipient.dial_targets) as DialTargetJson[];
}

/**
 * Locks the job's row for the rest of the transaction. Every transaction that may end a
 * recipient takes it first, so the "are all recipients final?" check of two recipients of one
 * job that end at once on two nodes cannot both see the other still open (PostgreSQL runs
 * READ COMMITTED; SQLite has one writer anyway). The job before its recipients, always, so
 * that these transactions cannot deadlock. A write that changes nothing: every dialect locks
 * on it, and the column written is one that no trigger watches.
 */
export async function lockJob(trx: Kysely<Database>, jobId: string): Promise<void> {
  await trx
    .updateTable("jobs")
    .set((eb) => ({ render_attempts: eb.ref("render_attempts") }))
    .where("id", "=", jobId)
    .execute();
}

/** Inserts the attempt row for a freshly claimed recipient (state `sending`). */
export async function startAttempt(trx: Kysely<Database>, recipient: RecipientRow, node: string, now: number): Promise<string> {
  const target = dialTargets(recipient)[recipient.target_index]!;
  const id = `att_${randomToken(16)}`;
  await trx
    .insertInto("attempts")
    .values({
      id,
      recipient_id: recipient.id,
      job_id: recipient.job_id,
      attempt_no: recipient.attempt_count,
      e164: target.e164,
      dial_string: target.dialString,
      country: countryOfNumber(target.e164),
      node,
      started_at: now,
      result: "in_progress",
      pages_sent: 0,
      duration_secs: 0,
    })
    .execute();
  return id;
}

/**
 * Marks the job completed when none of its recipients is still open, and writes its
 * `job.completed` notifications. True when this call completed the job.
 */
export async function completeJobIfDone(trx: Kysely<Database>, jobId: string, now: number): Promise<boolean> {
  const open = await trx
    .selectFrom("recipients")
    .select("id")
    .where("job_id", "=", jobId)
    .where("state", "not in", ["succeeded", "failed"])
    .limit(1)
    .executeTakeFirst();
  if (open) return false;
  // The job completes when its last recipient finished. With several nodes, a recipient that
  // ended a moment later by the clock may have been recorded first (the job lock orders the
  // transactions, not the clocks), so the completion time is never before any recipient's end.
  const last = await trx
    .selectFrom("recipients")
    .select((eb) => eb.fn.max("finished_at").as("last"))
    .where("job_id", "=", jobId)
    .executeTakeFirst();
  const completedAt = Math.max(now, Number(last?.last ?? now));
  const result = await trx
    .updateTable("jobs")
    .set({ state: "completed", completed_at: completedAt, locked_by: null, lease_until: null })
    .where("id", "=", jobId)
    .where("state", "!=", "completed")
    .executeTakeFirst();
  const completed = Number(result.numUpdatedRows) > 0;
  if (completed) await enqueueJobNotifications(trx, jobId, JOB_COMPLETED, completedAt);
  return completed;
}

/**
 * After a recipient became final: its calls and the fax counted in the reporting rollups, then the
 * job's completion, or else the opt-in recipient event.
 */
async function afterRecipientFinal(trx: Kysely<Database>, jobId: string, now: number): Promise<void> {
  await rollUpJob(trx, jobId);
  if (!(await completeJobIfDone(trx, jobId, now))) await enqueueJobNotifications(trx, jobId, RECIPIENT_COMPLETED, now);
}

export interface RecordOutcomeArgs {
  recipientId: string;
  attemptId: string;
  node: string;
  outcome: AttemptOutcome;
  now: number;
  schedule: RetrySchedule;
}

export type RecordOutcomeResult = "succeeded" | "retry" | "failed" | "lost";

/** Records the outcome of a call and moves the recipient on. "lost": the lease was gone. */
export async function recordAttemptOutcome(db: Kysely<Database>, args: RecordOutcomeArgs): Promise<RecordOutcomeResult> {
  const { outcome, now } = args;
  return db.transaction().execute(async (trx) => {
    const owner = await trx.selectFrom("recipients").select("job_id").where("id", "=", args.recipientId).executeTakeFirst();
    if (owner) await lockJob(trx, owner.job_id);
    const closed = await trx
      .updateTable("attempts")
      .set({
        ended_at: now,
        result: outcome.result,
        reason_code: outcome.result === "failed" ? outcome.reasonCode : null,
        raw_cause: outcome.result === "failed" ? outcome.rawCause : null,
        pages_sent: outcome.pagesSent,
        duration_secs: outcome.durationSecs,
        remote_csid: outcome.remoteCsid,
        transport: outcome.transport ?? null,
        bit_rate: outcome.result === "delivered" ? outcome.bitRate : null,
        trunk: outcome.trunk ?? null,
        // A SIP line dials its trunk's dial string, which may differ from the one stored at intake.
        ...(outcome.sentToNumber !== undefined ? { dial_string: outcome.sentToNumber } : {}),
      })
      .where("id", "=", args.attemptId)
      .where("result", "=", "in_progress")
      .executeTakeFirst();
    // The attempt was abandoned (lease sweep or deadline): whatever the recipient row holds now
    // belongs to a later attempt, possibly claimed again by this same holder.
    if (Number(closed.numUpdatedRows) === 0) return "lost";

    const recipient = await trx
      .selectFrom("recipients")
      .selectAll()
      .where("id", "=", args.recipientId)
      .where("state", "=", "sending")
      .where("locked_by", "=", args.node)
      .executeTakeFirst();
    if (!recipient) {
      // The call ended all the same: it counts in the reports.
      if (owner) await rollUpJob(trx, owner.job_id);
      return "lost";
    }
    const target = dialTargets(recipient)[recipient.target_index]!;

    if (outcome.result === "delivered") {
      assertRecipientTransition("sending", "succeeded");
      await trx
        .updateTable("recipients")
        .set({
          state: "succeeded",
          locked_by: null,
          lease_until: null,
          status: DELIVERED_STATUS,
          reason_code: null,
          reason_text: DELIVERED_REASON,
          sent_at: now,
          duration_secs: outcome.durationSecs,
          sent_to_number: outcome.sentToNumber ?? target.dialString,
          remote_csid: outcome.remoteCsid,
          pages_sent: outcome.pagesSent,
          finished_at: now,
        })
        .where("id", "=", recipient.id)
        .where("state", "=", "sending")
        .execute();
      await afterRecipientFinal(trx, recipient.job_id, now);
      return "succeeded";
    }

    return applyFailure(trx, recipient, outcome.reasonCode, now, args.schedule, {
      attempted: outcome.dialled !== false,
      durationSecs: outcome.durationSecs,
      remoteCsid: outcome.remoteCsid,
      pagesSent: outcome.pagesSent,
      expectState: "sending",
      ...(outcome.sentToNumber !== undefined ? { sentToNumber: outcome.sentToNumber } : {}),
    });
  });
}

/**
 * Applies a failure to a recipient in `expectState`: schedules the next try per the retry
 * policy, or ends the recipient with the failure's status.
 */
export async function applyFailure(
  trx: Kysely<Database>,
  recipient: RecipientRow,
  reasonCode: FailureReasonCode,
  now: number,
  schedule: RetrySchedule,
  details: {
    attempted: boolean;
    durationSecs: number;
    remoteCsid: string | null;
    pagesSent: number;
    expectState: string;
    /** The number the attempt actually dialled; absent: the target's stored dial string. */
    sentToNumber?: string;
  },
): Promise<"retry" | "failed"> {
  const reason = failureReason(reasonCode);
  const job = await trx.selectFrom("jobs").select(["valid_until", "cancelled_by"]).where("id", "=", recipient.job_id).executeTakeFirstOrThrow();
  const targets = dialTargets(recipient);
  const decision = decideAfterFailure(
    {
      targetCount: targets.length,
      targetIndex: recipient.target_index,
      deadTargets: JSON.parse(recipient.dead_targets) as number[],
      attemptCount: recipient.attempt_count,
      retriesUsed: JSON.parse(recipient.retries_used) as Partial<Record<RetryClass, number>>,
    },
    reason,
    now,
    schedule,
    job.valid_until,
  );
  const target = targets[recipient.target_index]!;
  const dialled = details.sentToNumber ?? target.dialString;
  assertRecipientTransition(details.expectState as RecipientState, decision.kind === "retry" ? "ready" : "failed");
  if (decision.kind === "retry") {
    await trx
      .updateTable("recipients")
      .set({
        state: "ready",
        locked_by: null,
        lease_until: null,
        run_at: decision.runAt,
        target_index: decision.targetIndex,
        current_e164: targets[decision.targetIndex]!.e164,
        dead_targets: JSON.stringify(decision.deadTargets),
        retries_used: JSON.stringify(decision.retriesUsed),
        // The last attempt's facts, shown while the recipient is PENDING a retry.
        reason_code: reasonCode,
        sent_at: details.attempted ? now : recipient.sent_at,
        duration_secs: details.attempted ? details.durationSecs : recipient.duration_secs,
        sent_to_number: details.attempted ? dialled : recipient.sent_to_number,
      })
      .where("id", "=", recipient.id)
      .where("state", "=", details.expectState)
      .execute();
    // The call that failed counts in the reports now; the fax when it ends.
    await rollUpJob(trx, recipient.job_id);
    await enqueueJobNotifications(trx, recipient.job_id, ATTEMPT_FAILED, now);
    return "retry";
  }
  await trx
    .updateTable("recipients")
    .set({
      state: "failed",
      locked_by: null,
      lease_until: null,
      dead_targets: JSON.stringify(decision.deadTargets),
      status: reason.status,
      reason_code: reasonCode,
      reason_text: finalReasonText(reason, recipient.attempt_count, decision.why, job.cancelled_by),
      sent_at: details.attempted ? now : recipient.sent_at,
      duration_secs: details.attempted ? details.durationSecs : recipient.duration_secs,
      sent_to_number: details.attempted ? dialled : recipient.sent_to_number,
      remote_csid: details.remoteCsid ?? recipient.remote_csid,
      pages_sent: details.pagesSent,
      finished_at: now,
    })
    .where("id", "=", recipient.id)
    .where("state", "=", details.expectState)
    .execute();
  await afterRecipientFinal(trx, recipient.job_id, now);
  return "failed";
}

/**
 * Ends open recipients for good, whatever their retry state (expiry, deadline, render
 * failure). `states` limits which recipients are ended. Returns how many were ended.
 */
export async function failRecipientsFinal(
  trx: Kysely<Database>,
  where: { jobId: string; states: readonly string[] },
  reasonCode: FailureReasonCode,
  now: number,
  detail?: string,
): Promise<number> {
  const reason = failureReason(reasonCode);
  const text = detail ? `${reason.description}: ${detail}` : reason.description;
  await lockJob(trx, where.jobId);
  for (const state of where.states) assertRecipientTransition(state as RecipientState, "failed");
  // The recipients first, guarded by their state, and only the attempts of those that moved: a
  // sender's claim (which does not take the job lock) may commit between two statements here,
  // and its new attempt must not be abandoned for a recipient this update then left alone.
  const ended = await trx
    .updateTable("recipients")
    .set({
      state: "failed",
      locked_by: null,
      lease_until: null,
      status: reason.status,
      reason_code: reasonCode,
      reason_text: text.length > 1000 ? `${text.slice(0, 997)}...` : text,
      finished_at: now,
    })
    .where("job_id", "=", where.jobId)
    .where("state", "in", [...where.states])
    .returning("id")
    .execute();
  if (ended.length === 0) return 0;
  await trx
    .updateTable("attempts")
    .set({ result: "abandoned", ended_at: now, reason_code: reasonCode })
    .where("recipient_id", "in", ended.map((r) => r.id))
    .where("result", "=", "in_progress")
    .execute();
  await afterRecipientFinal(trx, where.jobId, now);
  return ended.length;
}

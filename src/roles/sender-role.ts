/**
 * The sender role (HylaFAX's faxsend): claims due recipients and places their calls.
 *
 * A dispatcher claims work while fewer than `sender.channels` calls run. A claim is one
 * transaction: the recipient moves `ready` → `sending` under this node's lease, and an
 * `attempts` row is inserted with the next attempt number (unique per recipient, so no attempt
 * is ever claimed twice). The call then runs outside any transaction; the lease is renewed
 * every third of its length. When the call ends, the outcome is recorded and the retry policy
 * decides what follows (scheduler/recipient-outcomes.ts). If the lease was lost meanwhile (the
 * hard deadline ended the recipient), the call is aborted and its outcome only closes the
 * attempt.
 *
 * Test accounts always use the test line. Other jobs use the production line, the SIP line over
 * the configured trunks (line/sip-fax-line/); with no trunks configured there is none, and they
 * fail with no_line_configured rather than wait for ever. The line gets the recipient's fax image
 * on demand (`loadImage`), the job's own CSID (the trunk's applies when it names none), and
 * reports the number it actually dialled (`sentToNumber`).
 */
import { setMaxListeners } from "node:events";
import { coerceError } from "../errors/internal-error.ts";
import type { AttemptOutcome, Line } from "../line/line.ts";
import type { RecipientRow } from "../store/database.ts";
import { dialTargets, recordAttemptOutcome, startAttempt } from "../scheduler/recipient-outcomes.ts";
import { retrySchedule, type NodeContext, type RunningRole } from "./node-context.ts";

interface ClaimedCall {
  recipient: RecipientRow;
  attemptId: string;
}

async function claimOne(ctx: NodeContext): Promise<ClaimedCall | undefined> {
  const { db, claims } = ctx.store;
  return db.transaction().execute(async (trx) => {
    const now = ctx.clock.now();
    const recipient = await claims.claimDueRecipient(trx, {
      datacenter: ctx.config.node.datacenter,
      node: ctx.holder,
      now,
      leaseUntil: now + ctx.config.scheduler.sendLease,
      callsPerNumber: ctx.config.sender.callsPerNumber,
    });
    if (!recipient) return undefined;
    const attemptId = await startAttempt(trx, recipient, ctx.holder, now);
    return { recipient, attemptId };
  });
}

async function isBlacklisted(ctx: NodeContext, e164: string): Promise<boolean> {
  const row = await ctx.store.db.selectFrom("blacklist").select("e164").where("e164", "=", e164).executeTakeFirst();
  return row !== undefined;
}

async function runCall(ctx: NodeContext, claimed: ClaimedCall, stopSignal: AbortSignal): Promise<void> {
  const { recipient, attemptId } = claimed;
  const log = ctx.logger.child({ jobId: recipient.job_id, recipientId: recipient.id, attempt: recipient.attempt_count });
  const job = await ctx.store.db.selectFrom("jobs").selectAll().where("id", "=", recipient.job_id).executeTakeFirstOrThrow();
  const target = dialTargets(recipient)[recipient.target_index]!;
  const callController = new AbortController();
  const onStop = () => callController.abort(new Error("node stopping"));
  stopSignal.addEventListener("abort", onStop, { once: true });

  const leaseMs = ctx.config.scheduler.sendLease;
  const heartbeat = setInterval(() => {
    const now = ctx.clock.now();
    ctx.store.db
      .updateTable("recipients")
      .set({ lease_until: now + leaseMs })
      .where("id", "=", recipient.id)
      .where("state", "=", "sending")
      .where("locked_by", "=", ctx.holder)
      .executeTakeFirst()
      .then((r) => {
        if (Number(r.numUpdatedRows) === 0) callController.abort(new Error("lease lost"));
      })
      .catch((err) => log.error({ err: coerceError(err) }, "lease renewal failed"));
  }, Math.max(50, Math.floor(leaseMs / 3)));

  let outcome: AttemptOutcome;
  try {
    if (job.blacklist_check === 1 && (await isBlacklisted(ctx, target.e164))) {
      outcome = { result: "failed", reasonCode: "number_blacklisted", pagesSent: 0, durationSecs: 0, remoteCsid: null, rawCause: `${target.e164} is on the do-not-fax list`, dialled: false };
    } else {
      const line: Line | null = job.is_test === 1 ? ctx.lines.test : ctx.lines.production;
      if (line === null) {
        outcome = { result: "failed", reasonCode: "no_line_configured", pagesSent: 0, durationSecs: 0, remoteCsid: null, rawCause: null, dialled: false };
      } else {
        // The recipient's own image (its cover page and header line); the job's as a fallback.
        const imageId = recipient.fax_image_id;
        const image =
          imageId === null
            ? undefined
            : await ctx.store.db.selectFrom("fax_images").select("page_sizes").where("id", "=", imageId).executeTakeFirst();
        const pageSizes = JSON.parse(image?.page_sizes ?? job.page_sizes ?? "[]") as number[];
        const loadImage =
          image === undefined || imageId === null
            ? undefined
            : async (): Promise<Uint8Array> => {
                const row = await ctx.store.db.selectFrom("fax_images").select("content").where("id", "=", imageId).executeTakeFirstOrThrow();
                return row.content;
              };
        outcome = await line.call(
          {
            jobId: job.id,
            recipientId: recipient.id,
            attemptNo: recipient.attempt_count,
            e164: target.e164,
            dialString: target.dialString,
            csid: job.csid ?? ctx.config.sender.csid,
            jobCsid: job.csid,
            resolution: job.resolution as "HIGH" | "LOW",
            pages: pageSizes.map((encodedBytes) => ({ encodedBytes })),
            ...(loadImage !== undefined ? { loadImage } : {}),
          },
          callController.signal,
        );
      }
    }
  } catch (err) {
    clearInterval(heartbeat);
    stopSignal.removeEventListener("abort", onStop);
    if (callController.signal.aborted) {
      // Stopping or lease lost: leave the row to the lease sweep (or the deadline already ended it).
      log.info({ why: String(callController.signal.reason) }, "call aborted");
      return;
    }
    throw err;
  }
  clearInterval(heartbeat);
  stopSignal.removeEventListener("abort", onStop);

  const result = await recordAttemptOutcome(ctx.store.db, {
    recipientId: recipient.id,
    attemptId,
    node: ctx.holder,
    outcome,
    now: ctx.clock.now(),
    schedule: retrySchedule(ctx.config),
  });
  log.info(
    { e164: target.e164, result: outcome.result, reason: outcome.result === "failed" ? outcome.reasonCode : undefined, next: result },
    "attempt ended",
  );
}

export function startSenderRole(ctx: NodeContext): RunningRole {
  const controller = new AbortController();
  const { signal } = controller;
  // Every running call listens for the stop signal.
  setMaxListeners(0, signal);
  const running = new Set<Promise<void>>();
  const channels = ctx.config.sender.channels;

  const dispatcher = (async () => {
    while (!signal.aborted) {
      let claimedAny = false;
      try {
        while (!signal.aborted && running.size < channels) {
          const claimed = await claimOne(ctx);
          if (!claimed) break;
          claimedAny = true;
          const call = runCall(ctx, claimed, signal)
            .catch((err) => {
              // Could not record an outcome: the lease expires and the sweep retries the call.
              ctx.logger.error({ err: coerceError(err), recipientId: claimed.recipient.id }, "call failed with an internal error");
            })
            .finally(() => {
              running.delete(call);
              ctx.wake.send.notify();
              // The outcome may have written notifications.
              ctx.wake.notify.notify();
            });
          running.add(call);
        }
      } catch (err) {
        ctx.logger.error({ err: coerceError(err) }, "dispatcher error");
      }
      if (!claimedAny || running.size >= channels) await ctx.wake.send.wait(ctx.config.scheduler.pollInterval, signal);
    }
  })();

  return {
    name: "sender",
    async stop() {
      controller.abort();
      await dispatcher;
      await Promise.allSettled([...running]);
    },
  };
}

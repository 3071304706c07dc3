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
import type { Logger } from "../lib/logger.ts";
import type { RecipientRow } from "../store/database.ts";
import { dialTargets, recordAttemptOutcome, startAttempt } from "../scheduler/recipient-outcomes.ts";
import { receiveTestCall } from "../inbound/loopback-reception.ts";
import { newReceivedFaxId } from "../lib/ids.ts";
import { failureReason } from "../errors/failure-reasons.ts";
import { retrySchedule, type NodeContext, type RunningRole } from "./node-context.ts";
import { loopErrors, retryWhileStoreDown } from "./store-outage.ts";

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
    // The attempt starts now, not when the claim began: the claim's reads take time, and a call
    // to the same number that another node recorded as ended meanwhile (which is what let this
    // claim through the per-number limit) must not look as if it overlapped this one.
    const attemptId = await startAttempt(trx, recipient, ctx.holder, ctx.clock.now());
    return { recipient, attemptId };
  });
}

async function isBlacklisted(ctx: NodeContext, e164: string): Promise<boolean> {
  const row = await ctx.store.db.selectFrom("blacklist").select("e164").where("e164", "=", e164).executeTakeFirst();
  return row !== undefined;
}

/**
 * Renews the recipient's send lease every third of its length while the call runs. A renewal
 * that finds the lease gone (the hard deadline ended the recipient, or a sweep took it) aborts
 * the call. A renewal that fails because the store does not answer is retried every few
 * seconds; if none succeeds, the call is ended a quarter of the lease before the lease runs out,
 * so that no other node redials the recipient while this call still runs (fencing: whatever
 * this node records afterwards is refused if the attempt was taken over, see
 * recordAttemptOutcome).
 */
function renewLease(ctx: NodeContext, recipient: RecipientRow, call: AbortController, log: Logger): { stop(): void } {
  const leaseMs = ctx.config.scheduler.sendLease;
  let confirmedUntil = Number(recipient.lease_until ?? ctx.clock.now() + leaseMs);
  let renewing = false;
  const every = Math.max(50, Math.floor(leaseMs / 3));
  const retryEvery = Math.max(50, Math.min(every, ctx.config.cluster.heartbeatInterval));
  let nextRenewal = ctx.clock.now() + every;
  const timer = setInterval(() => {
    const now = ctx.clock.now();
    if (now >= confirmedUntil - Math.floor(leaseMs / 4) && !call.signal.aborted) {
      log.error({ leaseUntil: confirmedUntil }, "the store did not answer lease renewals; ending the call before its lease runs out");
      call.abort(new Error("send lease could not be renewed (store unreachable)"));
      return;
    }
    if (renewing || now < nextRenewal) return;
    renewing = true;
    const until = now + leaseMs;
    ctx.store.db
      .updateTable("recipients")
      .set({ lease_until: until })
      .where("id", "=", recipient.id)
      .where("state", "=", "sending")
      .where("locked_by", "=", ctx.holder)
      .executeTakeFirst()
      .then((r) => {
        if (Number(r.numUpdatedRows) === 0) {
          call.abort(new Error("lease lost"));
          return;
        }
        confirmedUntil = until;
        nextRenewal = now + every;
      })
      .catch((err) => {
        log.warn({ err: coerceError(err) }, "lease renewal failed; retrying");
        nextRenewal = now + retryEvery;
      })
      .finally(() => {
        renewing = false;
      });
  }, Math.max(25, Math.min(retryEvery, Math.floor(leaseMs / 12))));
  return { stop: () => clearInterval(timer) };
}

function loadJob(ctx: NodeContext, jobId: string) {
  return ctx.store.db.selectFrom("jobs").selectAll().where("id", "=", jobId).executeTakeFirstOrThrow();
}

/** Runs one claimed call; `stopSignal` hangs it up (the node stopping without grace, or its grace over). */
async function runCall(ctx: NodeContext, claimed: ClaimedCall, stopSignal: AbortSignal): Promise<void> {
  const { recipient, attemptId } = claimed;
  const log = ctx.logger.child({ jobId: recipient.job_id, recipientId: recipient.id, attempt: recipient.attempt_count });
  // Listen for the stop before anything is awaited: a stop that came while the job was read
  // would otherwise be missed, and the node would wait for the whole call before it stops.
  const callController = new AbortController();
  const onStop = () => callController.abort(stopSignal.reason ?? new Error("node stopping"));
  stopSignal.addEventListener("abort", onStop, { once: true });
  if (stopSignal.aborted) onStop();
  const heartbeat = renewLease(ctx, recipient, callController, log);
  let job: Awaited<ReturnType<typeof loadJob>>;
  try {
    job = await loadJob(ctx, recipient.job_id);
  } catch (err) {
    heartbeat.stop();
    stopSignal.removeEventListener("abort", onStop);
    throw err;
  }
  const target = dialTargets(recipient)[recipient.target_index]!;
  if (callController.signal.aborted) {
    // Stopping before the call was placed: the attempt stays with the lease, and the restarted
    // node (or the sweep) takes the recipient back at once, having dialled nobody.
    heartbeat.stop();
    stopSignal.removeEventListener("abort", onStop);
    log.info({ why: String(callController.signal.reason) }, "call not placed");
    return;
  }

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
        const lineLabel = job.is_test === 1 ? "test" : "sip";
        ctx.metrics.callStarted(lineLabel);
        let placed: AttemptOutcome | null = null;
        try {
          placed = await line.call(
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
        } finally {
          ctx.metrics.callEnded(lineLabel, placed?.result ?? "aborted", placed?.result === "failed" ? placed.reasonCode : "");
        }
        outcome = placed;
      }
    }
  } catch (err) {
    heartbeat.stop();
    stopSignal.removeEventListener("abort", onStop);
    if (callController.signal.aborted) {
      // Stopping or lease lost: leave the row to the lease sweep (or the deadline already ended it).
      log.info({ why: String(callController.signal.reason) }, "call aborted");
      return;
    }
    throw err;
  }
  heartbeat.stop();
  stopSignal.removeEventListener("abort", onStop);

  const recorded = { recipientId: recipient.id, attemptId, node: ctx.holder, outcome, now: ctx.clock.now(), schedule: retrySchedule(ctx.config) };
  const result = await retryWhileStoreDown(ctx, "outcome", () => recordAttemptOutcome(ctx.store.db, recorded), stopSignal, log);
  if (result === "succeeded" && outcome.result === "delivered" && job.is_test === 1) {
    // A test account faxing one of its own inbound numbers receives the fax there.
    const now = ctx.clock.now();
    const receivedId = newReceivedFaxId(now);
    // A reception that cannot be stored must not keep the call's own outcome from being recorded.
    const received = await retryWhileStoreDown(
      ctx,
      "test reception",
      () =>
        receiveTestCall(ctx.store.db, {
          job,
          recipient,
          e164: target.e164,
          pagesSent: outcome.pagesSent,
          durationSecs: outcome.durationSecs,
          bitRate: outcome.result === "delivered" ? outcome.bitRate : 0,
          senderCsid: job.csid ?? ctx.config.sender.csid,
          datacenter: ctx.config.node.datacenter,
          now,
          id: receivedId,
        }),
      stopSignal,
      log,
    ).catch((err: unknown) => {
      log.error({ err, e164: target.e164 }, "the test call's reception on the account's own number could not be stored");
      return null;
    });
    if (received) {
      log.info({ receivedFaxId: received.id, e164: target.e164 }, "test call received on the account's own number");
      ctx.metrics.faxReceived(received.status, "test");
      if (received.deliveries > 0) ctx.wake.notify.notify();
    }
  }

  if (result === "succeeded") ctx.metrics.recipientsFinished("OK", "delivered");
  else if (result === "failed" && outcome.result === "failed") {
    const reason = failureReason(outcome.reasonCode);
    ctx.metrics.recipientsFinished(reason.status, reason.category);
  }
  log.info(
    { e164: target.e164, result: outcome.result, reason: outcome.result === "failed" ? outcome.reasonCode : undefined, next: result },
    "attempt ended",
  );
}

export function startSenderRole(ctx: NodeContext): RunningRole & { activeCalls(): number } {
  // Stopping takes two steps: no more claims (`signal`), then, once the calls have ended or the
  // node's shutdown grace is over, the calls still running are hung up (`hangUp`).
  const controller = new AbortController();
  const { signal } = controller;
  const hangUp = new AbortController();
  // Every running call listens for the hang-up.
  setMaxListeners(0, hangUp.signal);
  const running = new Set<Promise<void>>();
  const channels = ctx.config.sender.channels;
  const reportError = loopErrors(ctx, "dispatcher");

  const dispatcher = (async () => {
    while (!signal.aborted) {
      let claimedAny = false;
      try {
        while (!signal.aborted && running.size < channels) {
          const claimed = await claimOne(ctx);
          if (!claimed) break;
          claimedAny = true;
          const call = runCall(ctx, claimed, hangUp.signal)
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
        reportError(err);
      }
      if (!claimedAny || running.size >= channels) await ctx.wake.send.wait(ctx.config.scheduler.pollInterval, signal);
    }
  })();

  return {
    name: "sender",
    activeCalls: () => running.size,
    async stop(hurry?: AbortSignal) {
      controller.abort();
      await dispatcher;
      if (hurry !== undefined && !hurry.aborted && running.size > 0) {
        ctx.logger.info({ calls: running.size }, "stopping: waiting for the calls in progress to end");
        await Promise.race([Promise.allSettled([...running]), new Promise((resolve) => hurry.addEventListener("abort", resolve, { once: true }))]);
      }
      hangUp.abort(new Error("node stopping"));
      await Promise.allSettled([...running]);
    },
  };
}

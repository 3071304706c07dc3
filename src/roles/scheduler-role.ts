/**
 * The scheduler role (HylaFAX's faxq): prepares jobs and guarantees that every job ends.
 *
 * Render loop: claims a `pending` job with a lease, fetches its referenced documents (with the
 * SSRF guard), lays the pages out, renders the fax image (TIFF-F, G4) in a worker thread under
 * render.timeout, and in one transaction stores the image, the real encoded size of each page,
 * and moves the job to `active` and its recipients to `ready`; or, when a document fails or the
 * image cannot be rendered, ends every recipient with the failure reason.
 *
 * Sweeps, every poll interval, for this data center, by one node of the data center at a time
 * (the singleton duty `sweep:<dc>`, cluster/singleton-duty.ts):
 *  - expired render leases: the job goes back to `pending`, or fails with render_failed once
 *    scheduler.renderAttempts is used up;
 *  - expired send leases (the sender died mid-call): the attempt becomes `abandoned` and the
 *    recipient is treated as failed with sender_lost, which retries it;
 *  - validity: recipients not yet dialling when jobValid.end passes end with job_expired;
 *  - hard deadline (validity end + jobs.deadlineGrace): every open recipient ends with
 *    deadline_exceeded, whatever its state, so no job can stay open for ever.
 *
 * At start it releases the leases of this node's previous life (same node id, other token).
 */
import { sql, type Kysely } from "kysely";
import { coerceError } from "../errors/internal-error.ts";
import { fetchReference } from "../documents/fetch-reference.ts";
import { failureReason, type FailureReasonCode } from "../errors/failure-reasons.ts";
import type { DocumentInput } from "../render/pages/grey-page.ts";
import { FaxImageWorker, faxImageFailureDetail, pageThreadsFor } from "../render/fax-image/fax-image-worker.ts";
import type { FaxImageVariant } from "../render/render-fax-job.ts";
import type { ToneMode } from "../render/fax-image/tone-mode.ts";
import { renderSetup } from "../scheduler/render-setup.ts";
import type { Database, JobRow } from "../store/database.ts";
import { applyFailure, completeJobIfDone, failRecipientsFinal, lockJob } from "../scheduler/recipient-outcomes.ts";
import { pause } from "../lib/wakeup.ts";
import { retrySchedule, type NodeContext, type RunningRole } from "./node-context.ts";
import { loopErrors } from "./store-outage.ts";

/**
 * `locked_by`'s node-id part, to compare with `<node id>:`. An exact, case-sensitive prefix:
 * LIKE would treat "_" and "%" in node ids as wildcards and (in SQLite) ignore case, and so
 * take the leases of other, live nodes.
 */
function ownPreviousLives(ctx: NodeContext, column: "locked_by" | "holder" = "locked_by") {
  return sql<string>`substr(${sql.ref(column)}, 1, ${`${ctx.nodeId}:`.length})`;
}

export async function releasePreviousLives(ctx: NodeContext): Promise<{ jobs: number; recipients: number; duties: number }> {
  const { db } = ctx.store;
  const prefix = `${ctx.nodeId}:`;
  const ownPrefix = ownPreviousLives(ctx);
  const jobs = await db
    .updateTable("jobs")
    .set({ lease_until: 0 })
    .where(ownPrefix, "=", prefix)
    .where("locked_by", "!=", ctx.holder)
    .where("state", "=", "rendering")
    .executeTakeFirst();
  const recipients = await db
    .updateTable("recipients")
    .set({ lease_until: 0 })
    .where(ownPrefix, "=", prefix)
    .where("locked_by", "!=", ctx.holder)
    .where("state", "=", "sending")
    .executeTakeFirst();
  // Singleton duties of the previous life: free them, so they need not wait for their lease.
  const duties = await db
    .deleteFrom("cluster_leases")
    .where(ownPreviousLives(ctx, "holder"), "=", prefix)
    .where("holder", "!=", ctx.holder)
    .executeTakeFirst();
  return { jobs: Number(jobs.numUpdatedRows), recipients: Number(recipients.numUpdatedRows), duties: Number(duties.numDeletedRows) };
}

type JobRenderResult =
  /** `toneMode`: the one the pages were made with (the job's own, or its account's default). */
  | { status: "rendered"; images: FaxImageVariant[]; toneMode: ToneMode; blankPagesLeftOut: number }
  | { status: "failed"; reasonCode: FailureReasonCode; message: string }
  /** The node is stopping: the job keeps its lease and is rendered again after the restart. */
  | { status: "interrupted" };

/** Loads, fetches and renders one claimed job; returns its fax images or the failure. */
async function renderJob(ctx: NodeContext, job: JobRow, faxImages: FaxImageWorker): Promise<JobRenderResult> {
  const { db } = ctx.store;
  const documents = await db.selectFrom("job_documents").selectAll().where("job_id", "=", job.id).orderBy("ordinal").execute();
  const inputs: DocumentInput[] = [];
  for (const doc of documents) {
    let bytes = doc.content;
    if (bytes === null && doc.reference_url !== null) {
      const fetched = await fetchReference(doc.reference_url, {
        timeoutMs: ctx.config.documents.fetchTimeout,
        maxBytes: ctx.config.jobs.maxDocumentBytes,
        allowPrivateTargets: ctx.config.documents.fetchAllowPrivateTargets,
        maxRedirects: ctx.config.documents.fetchMaxRedirects,
        userAgent: "Faxline document fetcher",
      });
      if (!fetched.ok) {
        if (fetched.operatorDetail) ctx.logger.warn({ jobId: job.id, document: doc.name }, `document reference refused: ${fetched.operatorDetail}`);
        return {
          status: "failed",
          reasonCode: fetched.kind === "too_large" ? "document_too_large" : "document_fetch_failed",
          message: `${doc.name}: ${fetched.message}`,
        };
      }
      bytes = fetched.bytes;
      // Keep the fetched bytes: a re-render after a crash must not fetch again.
      await db
        .updateTable("job_documents")
        .set({ content: fetched.bytes, size_bytes: fetched.bytes.length })
        .where("job_id", "=", job.id)
        .where("ordinal", "=", doc.ordinal)
        .execute();
    }
    if (bytes === null) {
      return { status: "failed", reasonCode: "document_unreadable", message: `${doc.name} has no content` };
    }
    inputs.push({ name: doc.name, charset: doc.charset, bytes });
  }
  const setup = await renderSetup(ctx, job);
  if (!setup.ok) return { status: "failed", reasonCode: setup.reasonCode, message: setup.message };
  const outcome = await faxImages.render({ ...setup.input, documents: inputs });
  if (outcome.ok) {
    const { result } = outcome;
    if (result.ok) return { status: "rendered", images: result.images, toneMode: setup.input.toneMode ?? "AUTO", blankPagesLeftOut: result.blankPagesLeftOut };
    return { status: "failed", reasonCode: result.reasonCode, message: result.message };
  }
  if (outcome.kind === "stopped") return { status: "interrupted" };
  return { status: "failed", reasonCode: "render_failed", message: faxImageFailureDetail(outcome) };
}

/** Counts recipients that a sweep or a render failure ended for good (the finished-recipients metric). */
function countFinal(ctx: NodeContext, code: FailureReasonCode, count: number): void {
  const reason = failureReason(code);
  ctx.metrics.recipientsFinished(reason.status, reason.category, count);
}

/** Claims and renders one job; `onClaimed` runs as soon as a job is claimed (to let the next slot look). */
async function renderOne(ctx: NodeContext, faxImages: FaxImageWorker, onClaimed: () => void): Promise<boolean> {
  const { db, claims } = ctx.store;
  const now = ctx.clock.now();
  const job = await claims.claimJobToRender(db, {
    datacenter: ctx.config.node.datacenter,
    node: ctx.holder,
    now,
    leaseUntil: now + ctx.config.scheduler.renderLease,
  });
  if (!job) return false;
  onClaimed();
  const log = ctx.logger.child({ jobId: job.id });
  let result: JobRenderResult;
  const renderStarted = ctx.clock.now();
  try {
    result = await renderJob(ctx, job, faxImages);
  } catch (err) {
    // An internal fault: leave the lease to expire so the job is retried (renderAttempts caps it).
    log.error({ err: coerceError(err) }, "rendering failed with an internal error; the job will be retried");
    return true;
  }
  if (result.status === "interrupted") {
    log.info("rendering interrupted because the node is stopping; the job will be rendered again");
    return true;
  }
  const done = ctx.clock.now();
  let renderFailedRecipients = 0;
  await db.transaction().execute(async (trx) => {
    // Locked first: a sweep that gave the job up meanwhile (render lease lost) has committed
    // or waits, and the check below sees what it did.
    await lockJob(trx, job.id);
    const still = await trx
      .selectFrom("jobs")
      .select("id")
      .where("id", "=", job.id)
      .where("state", "=", "rendering")
      .where("locked_by", "=", ctx.holder)
      .executeTakeFirst();
    if (!still) return;
    if (result.status === "rendered") {
      const first = result.images[0];
      if (first === undefined) throw new Error(`rendering job ${job.id} gave no fax image`);
      await trx
        .updateTable("jobs")
        // The tone mode is kept as rendered: one left to the account's default is fixed from now on.
        .set({ state: "active", pages: first.pageSizes.length, page_sizes: JSON.stringify(first.pageSizes), tone_mode: result.toneMode, locked_by: null, lease_until: null })
        .where("id", "=", job.id)
        .execute();
      // A job rendered again (after a crash or a lost lease) replaces its old images.
      await trx.deleteFrom("fax_images").where("job_id", "=", job.id).execute();
      for (const [variant, image] of result.images.entries()) {
        const id = `img_${job.id}_${variant}`;
        await trx
          .insertInto("fax_images")
          .values({
            id,
            job_id: job.id,
            variant,
            format: "TIFF",
            content: image.tiff,
            pages: image.pageSizes.length,
            page_sizes: JSON.stringify(image.pageSizes),
            preflight: JSON.stringify(image.preflight),
            size_bytes: image.tiff.length,
            created_at: done,
          })
          .execute();
        await trx.updateTable("recipients").set({ fax_image_id: id }).where("id", "in", image.recipientIds).execute();
      }
      await trx
        .updateTable("recipients")
        .set({ state: "ready", run_at: Math.max(job.valid_from, done) })
        .where("job_id", "=", job.id)
        .where("state", "=", "waiting")
        .execute();
    } else {
      await trx
        .updateTable("jobs")
        .set({ failure_code: result.reasonCode, failure_detail: result.message, locked_by: null, lease_until: null })
        .where("id", "=", job.id)
        .execute();
      renderFailedRecipients = await failRecipientsFinal(trx, { jobId: job.id, states: ["waiting"] }, result.reasonCode, done, result.message);
    }
  });
  const renderSeconds = (ctx.clock.now() - renderStarted) / 1000;
  if (result.status === "rendered") ctx.metrics.rendered("rendered", renderSeconds, result.images.reduce((n, image) => n + image.pageSizes.length, 0));
  else {
    ctx.metrics.rendered("failed", renderSeconds, 0);
    countFinal(ctx, result.reasonCode, renderFailedRecipients);
  }
  if (result.status === "rendered") {
    const bytes = result.images.reduce((sum, image) => sum + image.tiff.length, 0);
    log.info({ pages: result.images[0]?.pageSizes.length, images: result.images.length, bytes, ...(result.blankPagesLeftOut > 0 ? { blankPagesLeftOut: result.blankPagesLeftOut } : {}) }, "job rendered");
    ctx.wake.send.notify();
  } else {
    log.info({ reason: result.reasonCode, detail: result.message }, "job failed to render");
  }
  return true;
}

export async function sweepOnce(ctx: NodeContext): Promise<void> {
  const { db } = ctx.store;
  const dc = ctx.config.node.datacenter;
  const now = ctx.clock.now();

  // Expired render leases.
  const staleRenders = await db
    .selectFrom("jobs")
    .select(["id", "render_attempts"])
    .where("datacenter", "=", dc)
    .where("state", "=", "rendering")
    .where("lease_until", "<", now)
    .execute();
  for (const job of staleRenders) {
    const ended = await db.transaction().execute(async (trx: Kysely<Database>) => {
      await lockJob(trx, job.id);
      if (job.render_attempts >= ctx.config.scheduler.renderAttempts) {
        await trx
          .updateTable("jobs")
          .set({ failure_code: "render_failed", locked_by: null, lease_until: null })
          .where("id", "=", job.id)
          .where("state", "=", "rendering")
          .execute();
        return failRecipientsFinal(trx, { jobId: job.id, states: ["waiting"] }, "render_failed", now, `given up after ${job.render_attempts} attempts`);
      } else {
        await trx
          .updateTable("jobs")
          .set({ state: "pending", locked_by: null, lease_until: null })
          .where("id", "=", job.id)
          .where("state", "=", "rendering")
          .where("lease_until", "<", now)
          .execute();
        return 0;
      }
    });
    countFinal(ctx, "render_failed", ended);
    ctx.wake.render.notify();
  }

  // Expired send leases: the call's node is gone. Judged only on a steady connection: after an
  // outage of the store every lease looks expired, and the nodes that held them must first get
  // the time to record the calls that ended meanwhile (cluster/store-health.ts).
  // This node's own previous lives, released at start (lease_until 0), are known dead and taken at once.
  const steady = ctx.health.steadyFor(now) >= 2 * ctx.config.cluster.heartbeatInterval;
  let staleQuery = db.selectFrom("recipients").selectAll().where("datacenter", "=", dc).where("state", "=", "sending").where("lease_until", "<", now);
  if (!steady) staleQuery = staleQuery.where(ownPreviousLives(ctx), "=", `${ctx.nodeId}:`).where("lease_until", "=", 0);
  const staleSends = await staleQuery.execute();
  for (const stale of staleSends) {
    const next = await db.transaction().execute(async (trx) => {
      await lockJob(trx, stale.job_id);
      // Read again inside the transaction: since the select above, the sender may have
      // recorded its outcome and the recipient may have been claimed again under a live lease.
      const recipient = await trx
        .selectFrom("recipients")
        .selectAll()
        .where("id", "=", stale.id)
        .where("state", "=", "sending")
        .where("lease_until", "<", now)
        .executeTakeFirst();
      if (!recipient) return null;
      const abandoned = await trx
        .updateTable("attempts")
        .set({ result: "abandoned", ended_at: now, reason_code: "sender_lost", raw_cause: `lease of ${recipient.locked_by} expired` })
        .where("recipient_id", "=", recipient.id)
        .where("result", "=", "in_progress")
        .executeTakeFirst();
      ctx.logger.warn({ recipientId: recipient.id, jobId: recipient.job_id, holder: recipient.locked_by, attempts: Number(abandoned.numUpdatedRows) }, "abandoning the call of a lost sender");
      return applyFailure(trx, recipient, "sender_lost", now, retrySchedule(ctx.config), {
        attempted: false,
        durationSecs: 0,
        remoteCsid: null,
        pagesSent: 0,
        expectState: "sending",
      });
    });
    if (next === "failed") countFinal(ctx, "sender_lost", 1);
    ctx.wake.send.notify();
  }

  // Validity ended: recipients that are not dialling now will not be dialled.
  const expired = await db
    .selectFrom("jobs")
    .select("id")
    .where("datacenter", "=", dc)
    .where("state", "in", ["pending", "active"])
    .where("valid_until", "<=", now)
    .limit(ctx.config.retention.batchSize)
    .execute();
  for (const job of expired) {
    const ended = await db.transaction().execute((trx) => failRecipientsFinal(trx, { jobId: job.id, states: ["waiting", "ready"] }, "job_expired", now));
    countFinal(ctx, "job_expired", ended);
  }

  // Hard deadline: end everything still open.
  const overdue = await db
    .selectFrom("jobs")
    .select("id")
    .where("datacenter", "=", dc)
    .where("state", "!=", "completed")
    .where("deadline_at", "<=", now)
    .limit(ctx.config.retention.batchSize)
    .execute();
  for (const job of overdue) {
    const ended = await db.transaction().execute(async (trx) => {
      const n = await failRecipientsFinal(trx, { jobId: job.id, states: ["waiting", "ready", "sending"] }, "deadline_exceeded", now);
      if (n === 0) await completeJobIfDone(trx, job.id, now);
      return n;
    });
    countFinal(ctx, "deadline_exceeded", ended);
    ctx.logger.warn({ jobId: job.id, ended }, "job reached its hard deadline");
  }
}

export function startSchedulerRole(ctx: NodeContext): RunningRole {
  const controller = new AbortController();
  const { signal } = controller;
  const interval = ctx.config.scheduler.pollInterval;
  // render.concurrency slots, each a loop with a worker thread of its own. Which job a free slot
  // takes is the claim's choice: a customer with nothing rendering first (store claims).
  const workers = Array.from({ length: ctx.config.render.concurrency }, () => new FaxImageWorker({ timeoutMs: ctx.config.render.timeout, memoryLimitMb: ctx.config.render.workerMemory, pdfRenderer: ctx.config.render.pdfRenderer, pageThreads: pageThreadsFor(ctx.config.render.pageThreads, ctx.config.render.concurrency) }));

  const renderErrors = loopErrors(ctx, "render loop");
  const sweepErrors = loopErrors(ctx, "sweep");
  // Slot k claims only while k jobs are rendering (counted from their claim): one job at a time
  // keeps to the first, warm worker, and a second worker thread starts only when two jobs wait at
  // once. A slot that claims wakes the others, so the next slot looks for a second job at once.
  let rendering = 0;
  const renderLoops = workers.map(async (faxImages, slot) => {
    while (!signal.aborted) {
      // A wake-up that comes while this slot looks must not be lost: it looks again instead of waiting.
      const seen = ctx.wake.render.generation;
      if (rendering >= slot) {
        let claimed = false;
        let failed = false;
        try {
          await renderOne(ctx, faxImages, () => {
            claimed = true;
            rendering++;
            ctx.wake.render.notify();
          });
        } catch (err) {
          failed = true;
          renderErrors(err);
        } finally {
          if (claimed) rendering--;
        }
        if (claimed && !failed) continue;
      }
      if (ctx.wake.render.generation !== seen && rendering >= slot) continue;
      await ctx.wake.render.wait(interval, signal);
    }
  });

  const sweepDuty = ctx.singleton(`sweep:${ctx.config.node.datacenter}`);
  // The duty's lease is renewed (or taken over) at least three times per lease, whatever the
  // poll interval, so that it stays with one node and moves soon after that node stops.
  const tick = Math.min(interval, Math.max(10, Math.floor(ctx.config.cluster.dutyLease / 3)));
  const sweepLoop = (async () => {
    let lastSweep = Number.NEGATIVE_INFINITY;
    while (!signal.aborted) {
      try {
        if ((await sweepDuty.tryHold()) && ctx.clock.now() - lastSweep >= interval) {
          lastSweep = ctx.clock.now();
          await sweepOnce(ctx);
        }
      } catch (err) {
        sweepErrors(err);
      }
      await pause(tick, signal);
    }
    await sweepDuty.release();
  })();

  return {
    name: "scheduler",
    async stop() {
      controller.abort();
      // Ends the renders in progress at once; their jobs are rendered again after the restart.
      await Promise.all(workers.map((w) => w.close()));
      await Promise.all([...renderLoops, sweepLoop]);
    },
  };
}

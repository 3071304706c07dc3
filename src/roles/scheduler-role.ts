/**
 * The scheduler role (HylaFAX's faxq): prepares jobs and guarantees that every job ends.
 *
 * Render loop: claims a `pending` job with a lease, fetches its referenced documents (with the
 * SSRF guard), renders the pages, and moves the job to `active` and its recipients to `ready`;
 * or, when a document fails, ends every recipient with the document's failure reason.
 *
 * Sweeps, every poll interval, for this data center:
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
import { renderDocuments, estimateTextPageBytes, type DocumentInput } from "../render/render-documents.ts";
import { layoutText } from "../render/layout-text.ts";
import { coverPageText } from "../render/cover-page-text.ts";
import type { Database, JobRow } from "../store/database.ts";
import { applyFailure, completeJobIfDone, failRecipientsFinal } from "../scheduler/recipient-outcomes.ts";
import { pause } from "../lib/wakeup.ts";
import { retrySchedule, type NodeContext, type RunningRole } from "./node-context.ts";

export async function releasePreviousLives(ctx: NodeContext): Promise<{ jobs: number; recipients: number }> {
  const { db } = ctx.store;
  const prefix = `${ctx.nodeId}:`;
  // An exact, case-sensitive prefix: LIKE would treat "_" and "%" in node ids as wildcards and
  // (in SQLite) ignore case, and so release the leases of other, live nodes.
  const ownPrefix = sql<string>`substr(locked_by, 1, ${prefix.length})`;
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
  return { jobs: Number(jobs.numUpdatedRows), recipients: Number(recipients.numUpdatedRows) };
}

/** Loads, fetches and renders one claimed job; returns the pages or the failure. */
async function renderJob(ctx: NodeContext, job: JobRow) {
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
        return {
          ok: false as const,
          reasonCode: fetched.kind === "too_large" ? ("document_too_large" as const) : ("document_fetch_failed" as const),
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
      return { ok: false as const, reasonCode: "document_unreadable" as const, message: `${doc.name} has no content` };
    }
    inputs.push({ name: doc.name, charset: doc.charset, bytes });
  }
  const options = {
    paperFormat: job.paper_format as "A4" | "LETTER",
    resolution: job.resolution as "HIGH" | "LOW",
    maxPages: ctx.config.jobs.maxPages,
  };
  const rendered = renderDocuments(inputs, options);
  if (!rendered.ok) return { ok: false as const, reasonCode: rendered.reasonCode, message: rendered.message };
  const pageSizes = rendered.pages.map((p) => p.estimatedBytes);
  if (job.coverpage_template !== null) {
    const first = await db.selectFrom("recipients").select(["properties", "number"]).where("job_id", "=", job.id).orderBy("ordinal").executeTakeFirstOrThrow();
    const text = coverPageText({
      properties: first.properties === null ? null : JSON.parse(first.properties),
      recipientNumber: first.number,
      pageCount: pageSizes.length + 1,
    });
    const layout = layoutText(text, options);
    pageSizes.unshift(estimateTextPageBytes(layout.pages[0] ?? { lines: [] }, layout.columns, options.resolution));
  }
  return { ok: true as const, pageSizes };
}

async function renderOne(ctx: NodeContext): Promise<boolean> {
  const { db, claims } = ctx.store;
  const now = ctx.clock.now();
  const job = await claims.claimJobToRender(db, {
    datacenter: ctx.config.node.datacenter,
    node: ctx.holder,
    now,
    leaseUntil: now + ctx.config.scheduler.renderLease,
  });
  if (!job) return false;
  const log = ctx.logger.child({ jobId: job.id });
  let result: Awaited<ReturnType<typeof renderJob>>;
  try {
    result = await renderJob(ctx, job);
  } catch (err) {
    // An internal fault: leave the lease to expire so the job is retried (renderAttempts caps it).
    log.error({ err: coerceError(err) }, "rendering failed with an internal error; the job will be retried");
    return true;
  }
  const done = ctx.clock.now();
  await db.transaction().execute(async (trx) => {
    const still = await trx
      .selectFrom("jobs")
      .select("id")
      .where("id", "=", job.id)
      .where("state", "=", "rendering")
      .where("locked_by", "=", ctx.holder)
      .executeTakeFirst();
    if (!still) return;
    if (result.ok) {
      await trx
        .updateTable("jobs")
        .set({ state: "active", pages: result.pageSizes.length, page_sizes: JSON.stringify(result.pageSizes), locked_by: null, lease_until: null })
        .where("id", "=", job.id)
        .execute();
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
      await failRecipientsFinal(trx, { jobId: job.id, states: ["waiting"] }, result.reasonCode, done, result.message);
    }
  });
  log.info({ ok: result.ok, pages: result.ok ? result.pageSizes.length : undefined, reason: result.ok ? undefined : result.reasonCode }, "job rendered");
  if (result.ok) ctx.wake.send.notify();
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
    await db.transaction().execute(async (trx: Kysely<Database>) => {
      if (job.render_attempts >= ctx.config.scheduler.renderAttempts) {
        await trx
          .updateTable("jobs")
          .set({ failure_code: "render_failed", locked_by: null, lease_until: null })
          .where("id", "=", job.id)
          .where("state", "=", "rendering")
          .execute();
        await failRecipientsFinal(trx, { jobId: job.id, states: ["waiting"] }, "render_failed", now, `${job.render_attempts} attempts`);
      } else {
        await trx
          .updateTable("jobs")
          .set({ state: "pending", locked_by: null, lease_until: null })
          .where("id", "=", job.id)
          .where("state", "=", "rendering")
          .where("lease_until", "<", now)
          .execute();
      }
    });
    ctx.wake.render.notify();
  }

  // Expired send leases: the call's node is gone.
  const staleSends = await db
    .selectFrom("recipients")
    .selectAll()
    .where("datacenter", "=", dc)
    .where("state", "=", "sending")
    .where("lease_until", "<", now)
    .execute();
  for (const stale of staleSends) {
    await db.transaction().execute(async (trx) => {
      // Read again inside the transaction: since the select above, the sender may have
      // recorded its outcome and the recipient may have been claimed again under a live lease.
      const recipient = await trx
        .selectFrom("recipients")
        .selectAll()
        .where("id", "=", stale.id)
        .where("state", "=", "sending")
        .where("lease_until", "<", now)
        .executeTakeFirst();
      if (!recipient) return;
      const abandoned = await trx
        .updateTable("attempts")
        .set({ result: "abandoned", ended_at: now, reason_code: "sender_lost", raw_cause: `lease of ${recipient.locked_by} expired` })
        .where("recipient_id", "=", recipient.id)
        .where("result", "=", "in_progress")
        .executeTakeFirst();
      ctx.logger.warn({ recipientId: recipient.id, jobId: recipient.job_id, holder: recipient.locked_by, attempts: Number(abandoned.numUpdatedRows) }, "abandoning the call of a lost sender");
      await applyFailure(trx, recipient, "sender_lost", now, retrySchedule(ctx.config), {
        attempted: false,
        durationSecs: 0,
        remoteCsid: null,
        pagesSent: 0,
        expectState: "sending",
      });
    });
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
    await db.transaction().execute(async (trx) => {
      await failRecipientsFinal(trx, { jobId: job.id, states: ["waiting", "ready"] }, "job_expired", now);
    });
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
    await db.transaction().execute(async (trx) => {
      const ended = await failRecipientsFinal(trx, { jobId: job.id, states: ["waiting", "ready", "sending"] }, "deadline_exceeded", now);
      if (ended === 0) await completeJobIfDone(trx, job.id, now);
      ctx.logger.warn({ jobId: job.id, ended }, "job reached its hard deadline");
    });
  }
}

export function startSchedulerRole(ctx: NodeContext): RunningRole {
  const controller = new AbortController();
  const { signal } = controller;
  const interval = ctx.config.scheduler.pollInterval;

  const renderLoop = (async () => {
    while (!signal.aborted) {
      try {
        const didWork = await renderOne(ctx);
        if (didWork) continue;
      } catch (err) {
        ctx.logger.error({ err: coerceError(err) }, "render loop error");
      }
      await ctx.wake.render.wait(interval, signal);
    }
  })();

  const sweepLoop = (async () => {
    while (!signal.aborted) {
      try {
        await sweepOnce(ctx);
      } catch (err) {
        ctx.logger.error({ err: coerceError(err) }, "sweep error");
      }
      await pause(interval, signal);
    }
  })();

  return {
    name: "scheduler",
    async stop() {
      controller.abort();
      await Promise.all([renderLoop, sweepLoop]);
    },
  };
}

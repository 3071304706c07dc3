/**
 * The console's job pages. Actions (send, preview, images, cancel, delete, redeliver) go through
 * the REST API itself (/rest/v1, with the session cookie and CSRF header); these routes add what
 * the API has no view for:
 *
 *  - GET /console/api/jobs?status&from&to&number&reference&datacenter&q&before&limit
 *      the login's jobs of the region, newest first, with a `next` cursor
 *  - GET /console/api/jobs/{jobId}
 *      one job: options, documents, images, recipients with every attempt and its reason
 *  - GET /console/api/events
 *      server-sent events: `jobs` with the ids of jobs that changed (polled from the store each
 *      second, so changes made by any node of the region arrive)
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { ApiError } from "../../errors/api-errors.ts";
import { failureReason, isFailureReasonCode } from "../../errors/failure-reasons.ts";
import { toIsoSeconds } from "../../lib/clock.ts";
import { consoleJobChanges, getConsoleJob, listConsoleJobs, type ConsoleJobStatus } from "../../store/queries/console-jobs.ts";
import type { ConsoleDeps } from "../console-deps.ts";
import { toneModeOf } from "../../render/fax-image/tone-mode.ts";

const STATUSES: readonly ConsoleJobStatus[] = ["open", "delivered", "failed"];
const PAGE_SIZES = [10, 25, 50, 100];
/** How often a live-update stream asks the store what changed. */
const EVENT_POLL_MS = 1000;
/** A comment line keeps proxies from closing a quiet stream. */
const EVENT_KEEPALIVE_MS = 15_000;
/** Live-update streams one login may hold open on one node (tabs; each polls the store). */
const MAX_STREAMS_PER_LOGIN = 8;

function dateParam(value: string | undefined, name: string, endOfDay: boolean): number | undefined {
  if (value === undefined || value === "") return undefined;
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const ms = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) + (endOfDay ? 86_400_000 : 0) : Date.parse(value);
  if (!Number.isFinite(ms)) throw new ApiError("invalid_request", `${name} "${value}" is not a date (YYYY-MM-DD) or ISO-8601 timestamp`);
  return ms;
}

function reasonView(code: string | null) {
  if (code === null) return null;
  if (!isFailureReasonCode(code)) return { code, category: null, retryClass: null, description: code };
  const r = failureReason(code);
  return { code, category: r.category, retryClass: r.retryClass, description: r.description, status: r.status };
}

export function registerJobRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  const { db } = deps.store;
  const scope = (login: string) => ({ login, datacenters: deps.regionDatacenters });

  app.get("/jobs", async (request) => {
    const session = await deps.sessions.require(request);
    const q = request.query as Record<string, string | undefined>;
    if (q.status && !STATUSES.includes(q.status as ConsoleJobStatus)) throw new ApiError("enum_value_invalid", `status is "${q.status}"; use ${STATUSES.join(", ")}`);
    if (q.datacenter && !deps.regionDatacenters.includes(q.datacenter)) {
      throw new ApiError("enum_value_invalid", `datacenter is "${q.datacenter}"; use ${deps.regionDatacenters.join(" or ")}`);
    }
    const limit = q.limit === undefined ? 25 : Number(q.limit);
    if (!PAGE_SIZES.includes(limit)) throw new ApiError("invalid_request", `limit must be one of ${PAGE_SIZES.join(", ")}`);
    let before: { createdAt: number; id: string } | undefined;
    if (q.before) {
      const m = /^(\d{1,15})~(.{1,80})$/.exec(q.before);
      if (!m) throw new ApiError("invalid_request", "before is not a cursor this console handed out");
      before = { createdAt: Number(m[1]), id: m[2]! };
    }
    for (const key of ["number", "reference", "q"] as const) {
      if ((q[key]?.length ?? 0) > 200) throw new ApiError("field_too_long", `${key} is longer than 200 characters`);
    }
    const rows = await listConsoleJobs(db, {
      ...scope(session.login),
      status: q.status as ConsoleJobStatus | undefined,
      from: dateParam(q.from, "from", false),
      to: dateParam(q.to, "to", true),
      number: q.number,
      reference: q.reference,
      datacenter: q.datacenter || undefined,
      q: q.q,
      before,
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      jobs: page.map((j) => ({
        jobId: j.id,
        state: j.state,
        datacenter: j.datacenter,
        createdTs: new Date(j.createdAt).toISOString(),
        completedTs: j.completedAt === null ? null : new Date(j.completedAt).toISOString(),
        pages: j.pages,
        reference: j.reference,
        test: j.isTest,
        recipients: j.recipients.map((r) => ({ number: r.number, state: r.state, status: r.status, reasonCode: r.reasonCode, attempts: r.attempts })),
      })),
      next: rows.length > limit && last ? `${last.createdAt}~${last.id}` : null,
    };
  });

  app.get("/jobs/:jobId", async (request) => {
    const session = await deps.sessions.require(request);
    const { jobId } = request.params as { jobId: string };
    const found = await getConsoleJob(db, scope(session.login), jobId);
    if (!found) throw new ApiError("report_not_found", `You have no job ${jobId} in region ${deps.config.node.region}`);
    const { job, documents, recipients, attempts, images } = found;
    const local = job.datacenter === deps.config.node.datacenter;
    // A rendered job keeps the tone mode it was rendered with; one that gave none and is not
    // rendered yet will take its customer's default (scheduler/render-setup.ts).
    const toneMode =
      job.tone_mode ?? (await db.selectFrom("customers").select("default_tone_mode").where("cust_nr", "=", job.cust_nr).executeTakeFirst())?.default_tone_mode ?? null;
    return {
      jobId: job.id,
      state: job.state,
      datacenter: job.datacenter,
      acceptedDatacenter: job.accepted_datacenter ?? job.datacenter,
      local,
      test: job.is_test === 1,
      createdTs: toIsoSeconds(Number(job.created_at)),
      completedTs: job.completed_at === null ? null : toIsoSeconds(Number(job.completed_at)),
      validUntilTs: toIsoSeconds(Number(job.valid_until)),
      pages: job.pages,
      options: {
        resolution: job.resolution,
        paperFormat: job.paper_format,
        toneMode: toneModeOf(toneMode),
        header: job.header,
        coverpageTemplate: job.coverpage_template,
        express: job.is_express === 1,
        csid: job.csid,
      },
      reference: { customerDefinedId: job.customer_defined_id, customerReference: job.customer_reference, billingCode: job.billing_code, billingInfo: job.billing_info },
      failure: job.failure_code === null ? null : { ...reasonView(job.failure_code), detail: job.failure_detail },
      documentsPurged: job.documents_purged_at !== null,
      documents: documents.map((d) => ({ name: d.name, sizeBytes: d.size_bytes, referenceUrl: d.reference_url === null ? null : d.reference_url.replace(/\/\/[^/@]*@/, "//") })),
      images: images.map((i) => ({ imageId: i.id, variant: i.variant, pages: i.pages, sizeBytes: i.size_bytes })),
      recipients: recipients.map((r) => ({
        number: r.number,
        state: r.state,
        status: r.status,
        reason: r.reason_text,
        reasonDetail: reasonView(r.reason_code),
        attempts: r.attempt_count,
        nextAttemptTs: r.state === "ready" ? toIsoSeconds(Number(r.run_at)) : null,
        sentTs: r.sent_at === null ? null : toIsoSeconds(Number(r.sent_at)),
        sentToNumber: r.sent_to_number,
        remoteCsid: r.remote_csid,
        pagesSent: r.pages_sent,
        durationSecs: r.duration_secs,
        imageId: r.fax_image_id,
        tries: attempts
          .filter((a) => a.recipient_id === r.id)
          .map((a) => ({
            attemptNo: a.attempt_no,
            startedTs: toIsoSeconds(Number(a.started_at)),
            endedTs: a.ended_at === null ? null : toIsoSeconds(Number(a.ended_at)),
            number: a.e164,
            node: a.node,
            result: a.result,
            transport: a.transport,
            bitRate: a.bit_rate,
            pagesSent: a.pages_sent,
            durationSecs: a.duration_secs,
            remoteCsid: a.remote_csid,
            reason: reasonView(a.reason_code),
            rawCause: a.raw_cause,
          })),
      })),
    };
  });

  const streams = new Set<() => void>();
  const streamsPerLogin = new Map<string, number>();
  app.addHook("preClose", async () => {
    for (const end of [...streams]) end();
  });

  app.get("/events", async (request: FastifyRequest, reply) => {
    const session = await deps.sessions.require(request);
    const held = streamsPerLogin.get(session.login) ?? 0;
    if (held >= MAX_STREAMS_PER_LOGIN) {
      throw new ApiError("too_many_streams", `Login "${session.login}" has ${held} live-update streams open on this node; close some console tabs`);
    }
    streamsPerLogin.set(session.login, held + 1);
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-store",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
    });
    res.write(`retry: 3000\n: live updates of ${session.login}'s jobs\n\n`);
    let since = deps.clock.now();
    let previous: Map<string, string> | null = null;
    let closed = false;
    let lastWrite = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const end = () => {
      if (closed) return;
      closed = true;
      if (timer) clearTimeout(timer);
      streams.delete(end);
      const left = (streamsPerLogin.get(session.login) ?? 1) - 1;
      if (left > 0) streamsPerLogin.set(session.login, left);
      else streamsPerLogin.delete(session.login);
      res.end();
    };
    const send = (text: string) => {
      if (closed || res.writableEnded) return;
      res.write(text);
      lastWrite = Date.now();
    };
    streams.add(end);
    request.raw.on("close", end);
    res.on("error", end);
    const poll = async () => {
      if (closed) return;
      try {
        // The session may end (sign-out, expiry, login disabled) while the stream is open; the
        // check does not count as use, so an unattended tab still reaches its idle end.
        request.consoleSession = undefined;
        if (!(await deps.sessions.resolve(request, { touch: false }))) return end();
        const started = deps.clock.now();
        // One second of overlap: another node's clock may be a little behind ours.
        const changes = await consoleJobChanges(db, scope(session.login), since - 1000);
        since = started;
        if (closed) return;
        const ids = new Set(changes.createdOrCompleted);
        if (previous) {
          for (const [id, signature] of changes.open) if (previous.get(id) !== signature) ids.add(id);
          // A job no longer open has completed (or gone): say so even when its completed_at,
          // taken before a commit that waited, lies before this poll's window.
          for (const id of previous.keys()) if (!changes.open.has(id)) ids.add(id);
        }
        previous = changes.open;
        if (ids.size > 0) send(`event: jobs\ndata: ${JSON.stringify({ ids: [...ids] })}\n\n`);
        else if (Date.now() - lastWrite >= EVENT_KEEPALIVE_MS) send(": keep-alive\n\n");
      } catch (err) {
        if (closed) return;
        if (err instanceof ApiError) {
          send(`event: session\ndata: ${JSON.stringify({ error: err.definition.code, message: err.message })}\n\n`);
          return end();
        }
        // A store outage: say so and keep trying; the browser shows the stream as stalled.
        request.log.warn({ err }, "console live updates: store query failed");
        send("event: stalled\ndata: {}\n\n");
      }
      if (!closed) timer = setTimeout(() => void poll(), EVENT_POLL_MS);
    };
    timer = setTimeout(() => void poll(), EVENT_POLL_MS);
  });
}

/**
 * The inbound pull API ("Fax2WSPull"), as the provider publishes it (docs/inbound-api.md), under
 * `/faxin/rest/v1`:
 *
 *  - POST /topics/{topic}?fetch=N&ids=A,B&timeout=S   acknowledge `ids`, then hand out up to N
 *         received faxes of the topic, each hidden from other pollers for S seconds
 *         (inbound.lockTimeout by default); `meta.next` and `meta.exit` say how to go on
 *  - GET  /files/{id}.pdf | /files/{id}.tif          a received fax's pages
 *
 * Scope: the faxes of the authenticated customer's topic received in this node's region (a
 * poller of DE1 or DE2 sees the same faxes when the two share their store).
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { ApiError } from "../../../errors/api-errors.ts";
import type { PullAuthenticator, Poller } from "../../../inbound/pull-auth.ts";
import { pullMeta, pullResult } from "../../../inbound/pull-view.ts";
import { TOPIC_PATTERN } from "../../../inbound/topics.ts";
import { acknowledgeReceivedFaxes, findReceivedFax } from "../../../store/queries/received-faxes.ts";
import type { ApiDeps } from "../../api-deps.ts";

/** Most faxes one request hands out. */
export const MAX_FETCH = 100;
/** Longest lock a poller may ask for, in seconds. */
const MAX_TIMEOUT_SECONDS = 3600;
const MAX_IDS = 1000;

declare module "fastify" {
  interface FastifyRequest {
    poller?: Poller;
  }
}

function integerParam(value: string | undefined, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined || value === "") return fallback;
  if (!/^\d{1,9}$/.test(value)) throw new ApiError("invalid_request", `${name} must be a whole number from ${min} to ${max}, got "${value}"`);
  const n = Number(value);
  if (n < min || n > max) throw new ApiError("invalid_request", `${name} must be from ${min} to ${max}, got ${n}`);
  return n;
}

/** The ids to acknowledge: comma-separated (also "%"-separated, as one provider SDK sends them). */
function idsParam(value: string | undefined): string[] {
  if (value === undefined || value.trim() === "") return [];
  const ids = value.split(/[,%\s]+/).map((s) => s.trim()).filter((s) => s !== "");
  if (ids.length > MAX_IDS) throw new ApiError("too_many_job_ids", `ids names ${ids.length} faxes; acknowledge at most ${MAX_IDS} at a time`);
  return [...new Set(ids)];
}

export function registerPullRoutes(app: FastifyInstance, deps: ApiDeps & { pullAuth: PullAuthenticator }): void {
  const { db } = deps.store;
  app.addHook("onRequest", async (request, reply) => {
    request.poller = await deps.pullAuth.authenticate(request, reply);
  });
  const base = (request: FastifyRequest) => `${request.protocol}://${request.host}/faxin/rest/v1`;

  app.post("/topics/:topic", { schema: { hide: true } }, async (request) => {
    const poller = request.poller!;
    const { topic } = request.params as { topic: string };
    const q = request.query as Record<string, string | undefined>;
    if (!TOPIC_PATTERN.test(topic)) throw new ApiError("topic_not_found", `No topic "${topic.slice(0, 64)}"`);
    if (poller.topics !== null && !poller.topics.includes(topic)) throw new ApiError("topic_not_found", `This password is not for topic "${topic}"`);
    const exists = await db.selectFrom("inbound_topics").select("name").where("cust_nr", "=", poller.custNr).where("name", "=", topic).executeTakeFirst();
    // A deleted topic's faxes stay until their retention ends: they can still be fetched and acknowledged.
    const leftOver = exists ? undefined : await db.selectFrom("received_faxes").select("id").where("cust_nr", "=", poller.custNr).where("topic", "=", topic).limit(1).executeTakeFirst();
    if (!exists && !leftOver) throw new ApiError("topic_not_found", `Customer ${poller.custNr} has no topic "${topic}"`);
    const fetch = integerParam(q.fetch, "fetch", 0, MAX_FETCH, 1);
    const timeoutSeconds = integerParam(q.timeout, "timeout", 0, MAX_TIMEOUT_SECONDS, Math.round(deps.config.inbound.lockTimeout / 1000));
    const ids = idsParam(q.ids);
    const now = deps.clock.now();
    const acknowledged = await acknowledgeReceivedFaxes(db, { custNr: poller.custNr, topic }, ids, now);
    const handedOut =
      fetch === 0 ? [] : await deps.store.claims.claimReceivedFaxes(db, { custNr: poller.custNr, topic, now, lockUntil: now + timeoutSeconds * 1000, limit: fetch });
    if (acknowledged + handedOut.length > 0) request.log.info({ topic, who: poller.who, acknowledged, handedOut: handedOut.length }, "inbound pull");
    return {
      meta: pullMeta(`${base(request)}/topics/${encodeURIComponent(topic)}`, { topic, fetch, timeoutSeconds, acknowledged, handedOut: handedOut.map((r) => r.id) }),
      results: handedOut.map((row) => pullResult(row, `${base(request)}/files`)),
    };
  });

  app.get("/files/:file", { schema: { hide: true } }, async (request, reply) => {
    const poller = request.poller!;
    const { file } = request.params as { file: string };
    const m = /^(FI[A-Z0-9]{20})\.(pdf|tif|tiff)$/i.exec(file);
    if (!m) throw new ApiError("received_fax_not_found", `No received fax document "${file.slice(0, 64)}"; names are {id}.pdf or {id}.tif`);
    const row = await findReceivedFax(db, poller.custNr, m[1]!.toUpperCase());
    if (!row || (poller.topics !== null && !poller.topics.includes(row.topic)) || row.image === null) {
      throw new ApiError("received_fax_not_found", `No received fax ${m[1]} (unknown, another customer's, or deleted after its retention)`);
    }
    const tiff = Buffer.from(row.image);
    if (m[2]!.toLowerCase() === "pdf") {
      // Loaded on first use: the API process holds the PDF writer only once it serves a PDF.
      const { faxImageToPdf } = await import("../../../notifications/email/fax-image-to-pdf.ts");
      return reply.type("application/pdf").header("content-disposition", `attachment; filename="${row.id}.pdf"`).send(await faxImageToPdf(tiff));
    }
    return reply.type("image/tiff").header("content-disposition", `attachment; filename="${row.id}.tif"`).send(tiff);
  });
}

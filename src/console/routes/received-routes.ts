/**
 * The console's Received pages: the customer's received faxes (every topic; a shared inbox, as
 * fax machines are), each with its pages; and, for logins that manage the account, its topics,
 * their numbers and deliveries (what `faxline inbound …` does).
 *
 *  - GET    /console/api/received?topic&status&before&limit     newest first, cursor paging
 *  - GET    /console/api/received/{id}                          one reception
 *  - GET    /console/api/received/{id}/pages/{n}                page n as PNG
 *  - GET    /console/api/received/{id}/document.pdf|.tif         the pages to download
 *  - POST   /console/api/received/{id}/deliveries/{nid}/redeliver send a fax-to-email or -webservice delivery again
 *  - GET    /console/api/topics                                 topics with numbers and deliveries (every login reads them)
 *  - POST   /console/api/sftp-host-key                          {host, port}: the host key the server presents (manager)
 *
 * Creating topics and changing their deliveries (e-mail, web service, SFTP) the page does through
 * the configuration API with the session (`/config/v2/inbound/profiles/{name}`,
 * src/configuration/), so the console, `faxline config` and any client change them one way, and
 * every change is in its audit log. Numbers are given to customers by operators: a number is the
 * carrier's, and a customer could otherwise claim another's.
 */
import type { FastifyInstance } from "fastify";
import { ApiError } from "../../errors/api-errors.ts";
import { listTopics } from "../../inbound/topics.ts";
import { checkSftpHost } from "../../inbound/sftp-delivery-settings.ts";
import { readServerHostKey } from "../../notifications/sftp/sftp-host-key.ts";
import { pushAddressGuard } from "../../notifications/push/push-address-guard.ts";
import { systemLookup } from "../../net/pinned-lookup.ts";
import { isIP } from "node:net";
import { shownUrl } from "../../net/url-display.ts";
import { listJobNotifications, redeliverNotification } from "../../store/queries/notifications.ts";
import { receivedFaxSummary } from "../../inbound/pull-view.ts";
import type { ConsoleDeps } from "../console-deps.ts";
import { accountChange, requireManager } from "./account-changes.ts";

const PAGE_SIZES = [10, 25, 50, 100];



export function registerReceivedRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  const { db } = deps.store;

  const findFax = async (custNr: string, id: string) => {
    const row = await db.selectFrom("received_faxes").selectAll().where("id", "=", id).where("cust_nr", "=", custNr).executeTakeFirst();
    if (!row) throw new ApiError("received_fax_not_found", `No received fax ${id.slice(0, 40)}`);
    return row;
  };

  app.get("/received", async (request) => {
    const session = await deps.sessions.require(request);
    const q = request.query as Record<string, string | undefined>;
    const limit = q.limit === undefined ? 25 : Number(q.limit);
    if (!PAGE_SIZES.includes(limit)) throw new ApiError("invalid_request", `limit must be one of ${PAGE_SIZES.join(", ")}`);
    let query = db
      .selectFrom("received_faxes")
      .select(["id", "topic", "received_at", "to_number", "from_number", "remote_csid", "pages", "status", "duration_secs", "resolution", "acknowledged_at", "handed_out"])
      .where("cust_nr", "=", session.custNr);
    if (q.topic) query = query.where("topic", "=", q.topic);
    if (q.status) {
      if (!["OK", "PARTIAL", "FAILED"].includes(q.status)) throw new ApiError("enum_value_invalid", `status is "${q.status}"; use OK, PARTIAL or FAILED`);
      query = query.where("status", "=", q.status);
    }
    if (q.before) {
      const m = /^(\d{1,15})~(FI[A-Z0-9]{20})$/.exec(q.before);
      if (!m) throw new ApiError("invalid_request", "before is not a cursor this console handed out");
      query = query.where((eb) => eb(eb.refTuple("received_at", "id"), "<", eb.tuple(Number(m[1]), m[2]!)));
    }
    const rows = await query.orderBy("received_at", "desc").orderBy("id", "desc").limit(limit + 1).execute();
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      received: page.map((r) => ({ ...receivedFaxSummary(r), fetched: r.handed_out > 0, acknowledged: r.acknowledged_at !== null })),
      next: rows.length > limit && last ? `${Number(last.received_at)}~${last.id}` : null,
    };
  });

  app.get("/received/:id", async (request) => {
    const session = await deps.sessions.require(request);
    const row = await findFax(session.custNr, (request.params as { id: string }).id);
    return {
      ...receivedFaxSummary(row),
      pagesAnnounced: row.pages_announced,
      transport: row.transport,
      bitRate: row.bit_rate,
      reasonCode: row.reason_code,
      rawCause: row.raw_cause,
      fetched: row.handed_out > 0,
      acknowledged: row.acknowledged_at !== null,
      imageKept: row.image !== null,
      deliveries: (await listJobNotifications(db, row.id)).map(({ notification: n, tries }) => ({
        id: n.id,
        channel: n.channel,
        target: n.channel === "http" ? shownUrl(n.target) : n.target, // sftp: sftp://user@host:port/dir, no secret
        state: n.state,
        attempts: n.attempts,
        lastError: n.last_error,
        tries: tries.map((t) => ({ attemptNo: t.attempt_no, startedTs: new Date(Number(t.started_at)).toISOString(), outcome: t.outcome, statusCode: t.status_code, error: t.error })),
      })),
    };
  });

  app.post("/received/:id/deliveries/:notificationId/redeliver", async (request, reply) => {
    const session = await deps.sessions.require(request);
    const { id, notificationId } = request.params as { id: string; notificationId: string };
    const row = await findFax(session.custNr, id);
    const result = await redeliverNotification(db, row.id, notificationId, deps.clock.now());
    if (result === "not_found") throw new ApiError("notification_not_found", `Received fax ${row.id} has no delivery ${notificationId}`);
    if (result === "in_flight") throw new ApiError("notification_in_flight", `Delivery ${notificationId} is being tried right now; ask again when this try has ended`);
    deps.onNotificationQueued?.();
    return reply.code(202).send({ queued: true });
  });

  app.get("/received/:id/pages/:page", async (request, reply) => {
    const session = await deps.sessions.require(request);
    const { id, page } = request.params as { id: string; page: string };
    const row = await findFax(session.custNr, id);
    const n = Number(page);
    if (!Number.isInteger(n) || n < 1 || n > row.pages || row.image === null) throw new ApiError("fax_image_page_not_found", `Received fax ${id} has no page ${page}`);
    const { faxPagePng } = await import("../../render/fax-image/fax-page-png.ts");
    return reply.type("image/png").header("Cache-Control", "private, max-age=3600").send(await faxPagePng(Buffer.from(row.image), n - 1));
  });

  app.get("/received/:id/document.:format", async (request, reply) => {
    const session = await deps.sessions.require(request);
    const { id, format } = request.params as { id: string; format: string };
    const row = await findFax(session.custNr, id);
    if (row.image === null) throw new ApiError("received_fax_not_found", `Received fax ${id} has no pages any more`);
    if (format === "tif") return reply.type("image/tiff").header("content-disposition", `attachment; filename="${row.id}.tif"`).send(Buffer.from(row.image));
    if (format !== "pdf") throw new ApiError("enum_value_invalid", "The document is document.pdf or document.tif");
    const { faxImageToPdf } = await import("../../notifications/email/fax-image-to-pdf.ts");
    return reply.type("application/pdf").header("content-disposition", `attachment; filename="${row.id}.pdf"`).send(await faxImageToPdf(Buffer.from(row.image)));
  });

  app.get("/topics", async (request) => {
    const session = await deps.sessions.require(request);
    const topics = (await listTopics(db, session.custNr)).map((t) => ({ ...t, pushUrl: shownUrl(t.pushUrl) }));
    return { topics, canManage: session.isManager, defaultRetentionDays: deps.config.inbound.retentionDays };
  });

  // Reads the host key a server presents, for the manager to confirm before pinning it. The
  // address guard of deliveries applies (sftp.allowTargets): the console is no port scanner.
  const sftpGuard = pushAddressGuard(deps.config.sftp.allowTargets, "sftp.allowTargets");
  app.post("/sftp-host-key", async (request) => {
    await requireManager(deps, request);
    const b = (request.body ?? {}) as { host?: unknown; port?: unknown };
    if (typeof b.host !== "string") throw new ApiError("invalid_request", "host is required");
    const host = await accountChange(async () => checkSftpHost(b.host as string));
    const port = b.port === undefined || b.port === null || b.port === "" ? 22 : Number(b.port);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new ApiError("setting_invalid", `The SFTP port must be 1 to 65535, got ${String(b.port)}`);
    let addresses: { address: string }[];
    try {
      addresses = isIP(host) !== 0 ? [{ address: host }] : await systemLookup(host);
    } catch {
      throw new ApiError("setting_invalid", `The host name ${host} does not resolve`);
    }
    if (addresses.length === 0 || addresses.some((a) => sftpGuard(a.address) !== null)) {
      throw new ApiError("setting_invalid", `Faxline does not connect to ${host}: it is a loopback, private or reserved address (an operator allows it with sftp.allowTargets)`);
    }
    try {
      return await readServerHostKey(addresses[0]!.address, port, Math.min(deps.config.sftp.timeout, 15_000));
    } catch (err) {
      throw new ApiError("setting_invalid", (err as Error).message);
    }
  });

}

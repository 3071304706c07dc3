/**
 * The notifier role: delivers the notification outbox (status pushes and mails) of this
 * node's data center, at least once.
 *
 * Loop: claim the notification due longest (skipping receivers this node already sends to
 * push.perReceiverConcurrency times), deliver it in the background up to push.concurrency at
 * once, log the try and move the notification on (notifications/delivery-policy.ts). A
 * notification is claimed under a lease; if its node dies, the lease sweep logs the try as
 * abandoned and it is sent again. A restarted node releases its previous life's tries at once.
 *
 * Stopping with a grace (`stop(hurry)`, the node draining after its calls ended): the notifier
 * first delivers what was due when the stop began (the ended calls' reports among them), one
 * try each, and stops once none is left or `hurry` aborts (node.shutdownGrace is over); a try that
 * fails keeps its retry for after the restart or for another node.
 *
 * Pushes are formatted at delivery from the stored snapshot in the account's current format,
 * and signed with the account's current secrets; mails use the account's current templates
 * and the job's fax image if it is still kept. A received fax's SFTP delivery uses its topic's
 * current SFTP settings (a corrected key or directory lets the next try through).
 */
import { coerceError } from "../errors/internal-error.ts";
import { pause } from "../lib/wakeup.ts";
import { nextStepAfter, type DeliveryResult, type RetryPlan } from "../notifications/delivery-policy.ts";
import type { NotificationPayload } from "../notifications/enqueue-notifications.ts";
import { composeStatusMail } from "../notifications/email/compose-status-mail.ts";
import { parseMailOrigin } from "../mail-to-fax/mail-origin.ts";
import { composeReceivedFaxMail } from "../notifications/email/compose-received-fax-mail.ts";
import { FAX_RECEIVED } from "../notifications/events.ts";
import type { ReceivedFaxNotice } from "../inbound/enqueue-reception.ts";
import { createMailTransport, sendStatusMail, type StatusMailTransport } from "../notifications/email/send-status-mail.ts";
import { formatJson, formatTemplate, formatXml, type PushBody } from "../notifications/push/push-formats.ts";
import { OAuth2TokenCache, sendPush, type PushAuth } from "../notifications/push/send-push.ts";
import { pushAddressGuard } from "../notifications/push/push-address-guard.ts";
import { signWebhook } from "../notifications/push/sign-webhook.ts";
import { TemplateSyntaxError } from "../notifications/templates/render-template.ts";
import { sendSftp } from "../notifications/sftp/send-sftp.ts";
import { faxFileNames } from "../notifications/sftp/sftp-file-names.ts";
import { metadataFile } from "../notifications/sftp/sftp-metadata.ts";
import { sftpTargetOf } from "../inbound/sftp-delivery-settings.ts";
import type { NotificationRow } from "../store/database.ts";
import { recordNotificationTry, releaseNotificationLeases } from "../store/queries/notifications.ts";
import type { NodeContext, RunningRole } from "./node-context.ts";
import { loopErrors, retryWhileStoreDown } from "./store-outage.ts";

const SWEEP_EVERY_MS = 5_000;

export function startNotifierRole(ctx: NodeContext): RunningRole {
  const { config, store } = ctx;
  const controller = new AbortController();
  const signal = controller.signal;
  const guard = pushAddressGuard(config.push.allowTargets);
  const sftpGuard = pushAddressGuard(config.sftp.allowTargets, "sftp.allowTargets");
  const tokens = new OAuth2TokenCache();
  // Four times the longest a try may take (4 minutes with the default SFTP timeout): a try
  // whose node died is sent again after this.
  const lease = Math.max(4 * config.push.timeout, 4 * config.mail.timeout, 4 * config.sftp.timeout);
  const running = new Set<Promise<void>>();
  const perReceiver = new Map<string, number>();
  let transport: StatusMailTransport | null = null;
  const log = ctx.logger.child({ role: "notifier" });
  /** Set by stop(hurry): deliver what was due by then, then stop. */
  let flushDueBy: number | null = null;

  const plans = {
    http: { schedule: config.push.retrySchedule, jitterPercent: config.push.jitterPercent, maxRetryAfterMs: config.push.maxRetryAfter },
    email: { schedule: config.mail.retrySchedule, jitterPercent: config.push.jitterPercent, maxRetryAfterMs: config.push.maxRetryAfter },
    sftp: { schedule: config.sftp.retrySchedule, jitterPercent: config.push.jitterPercent, maxRetryAfterMs: config.push.maxRetryAfter },
  } satisfies Record<string, RetryPlan>;

  async function pushBody(n: NotificationRow, payload: NotificationPayload): Promise<{ body: PushBody; secrets: string[]; tokenUrl: string | null }> {
    const customer = await store.db
      .selectFrom("customers")
      .select(["push_format", "signing_secrets", "oauth2_token_url"])
      .where("cust_nr", "=", n.cust_nr)
      .executeTakeFirst();
    const format = customer?.push_format ?? "XML";
    let body: PushBody;
    if (format === "TEMPLATE") {
      const template = await store.db
        .selectFrom("customer_templates")
        .select(["content", "content_type"])
        .where("cust_nr", "=", n.cust_nr)
        .where("kind", "=", "push")
        .where("name", "=", "default")
        .executeTakeFirst();
      // An account switched to TEMPLATE without a template still gets the contract's XML.
      body = template ? formatTemplate(payload.snapshot, { content: template.content, contentType: template.content_type }) : formatXml(payload.snapshot);
    } else {
      body = format === "JSON" ? formatJson(payload.snapshot) : formatXml(payload.snapshot);
    }
    const secrets = customer?.signing_secrets ? (JSON.parse(customer.signing_secrets) as string[]) : [];
    return { body, secrets, tokenUrl: customer?.oauth2_token_url ?? null };
  }

  async function deliverPush(n: NotificationRow, payload: NotificationPayload): Promise<DeliveryResult> {
    const { body, secrets, tokenUrl } = await pushBody(n, payload);
    const headers: Record<string, string> = { "x-faxline-event": n.event, "x-faxline-job-id": n.job_id };
    if (secrets.length > 0) Object.assign(headers, signWebhook(secrets, n.id, Math.floor(ctx.clock.now() / 1000), body.body));
    else headers["webhook-id"] = n.id;
    const auth: PushAuth = n.auth ? (JSON.parse(n.auth) as PushAuth) : { method: "NONE", principal: null, credentials: null };
    return sendPush({
      url: n.target,
      body: body.body,
      contentType: body.contentType,
      headers,
      auth,
      oauth2TokenUrl: tokenUrl,
      timeoutMs: config.push.timeout,
      guard,
      tokens,
      now: () => ctx.clock.now(),
    });
  }

  async function deliverMail(n: NotificationRow, payload: NotificationPayload): Promise<DeliveryResult> {
    const none = { statusCode: null, responseExcerpt: null, retryAfterMs: null };
    if (config.mail.host === "") {
      return { kind: "permanent", error: "No SMTP server is configured (mail.host), so e-mail status reports cannot be sent", ...none };
    }
    const templates = await store.db
      .selectFrom("customer_templates")
      .select(["kind", "content"])
      .where("cust_nr", "=", n.cust_nr)
      .where("kind", "in", ["mail-subject", "mail-text", "mail-html"])
      .where("name", "=", "default")
      .execute();
    const part = (kind: string) => templates.find((t) => t.kind === kind)?.content;
    // Recipients may have images of their own (cover page, header line); a mail attaches the first.
    const image = await store.db
      .selectFrom("fax_images")
      .select(["content", "pages"])
      .where("job_id", "=", n.job_id)
      .orderBy("variant")
      .limit(1)
      .executeTakeFirst();
    const origin = await store.db.selectFrom("jobs").select("mail_origin").where("id", "=", n.job_id).executeTakeFirst();
    const mailOrigin = parseMailOrigin(origin?.mail_origin);
    const message = await composeStatusMail({
      inReplyTo: mailOrigin?.messageId ?? null,
      language: mailOrigin?.language ?? "en",
      snapshot: payload.snapshot,
      kind: payload.mailKind ?? "success",
      to: n.target,
      from: config.mail.from,
      templates: { subject: part("mail-subject"), text: part("mail-text"), html: part("mail-html") },
      faxImage: image ? { tiff: Buffer.from(image.content), pages: image.pages } : null,
    });
    transport ??= createMailTransport(config.mail);
    const sent = await sendStatusMail(transport, message);
    if (sent.ok) return { kind: "delivered", error: null, statusCode: 250, responseExcerpt: sent.response.slice(0, 1024), retryAfterMs: null };
    return { kind: sent.temporary ? "retry" : "permanent", error: sent.message, statusCode: sent.responseCode, responseExcerpt: null, retryAfterMs: null };
  }

  /**
   * A reception's fax-to-SFTP delivery: the document (PDF or TIFF, as the topic's SFTP setting
   * says) and then the metadata file, each written under a temporary name and renamed.
   */
  async function deliverSftp(n: NotificationRow): Promise<DeliveryResult> {
    const none = { statusCode: null, responseExcerpt: null, retryAfterMs: null };
    const fax = await store.db.selectFrom("received_faxes").selectAll().where("id", "=", n.job_id).executeTakeFirst();
    if (!fax || fax.image === null) {
      return { kind: "permanent", error: "The fax's pages were deleted when its topic's retention ended, so there is nothing left to write to the SFTP server", ...none };
    }
    const settings = await store.db.selectFrom("inbound_sftp_deliveries").selectAll().where("cust_nr", "=", fax.cust_nr).where("topic", "=", fax.topic).executeTakeFirst();
    if (!settings) {
      return { kind: "permanent", error: `The topic "${fax.topic}" has no SFTP delivery any more, so nothing was written; set one (faxline inbound topic set-sftp, or the console's topic settings) and redeliver`, ...none };
    }
    const documentFormat = settings.document_format === "TIFF" ? "TIFF" : "PDF";
    const metadataFormat = settings.metadata_format === "XML" ? "XML" : "JSON";
    const facts = {
      id: fax.id,
      topic: fax.topic,
      receivedAt: Number(fax.received_at),
      calledNumber: fax.to_number,
      callingNumber: fax.from_number,
      remoteCsid: fax.remote_csid,
      pages: fax.pages,
      status: fax.status,
      reasonCode: fax.reason_code,
      resolution: fax.resolution,
      durationSecs: fax.duration_secs,
      bitRate: fax.bit_rate,
    };
    const names = faxFileNames(settings.file_pattern, facts, documentFormat, metadataFormat);
    const tiff = Buffer.from(fax.image);
    const document = documentFormat === "TIFF" ? tiff : await (await import("../notifications/email/fax-image-to-pdf.ts")).faxImageToPdf(tiff);
    return sendSftp({
      target: sftpTargetOf(settings),
      files: [
        { name: names.document, content: document },
        // Last: a consumer that waits for the metadata file finds the document complete.
        { name: names.metadata, content: metadataFile(facts, documentFormat, names.document, metadataFormat) },
      ],
      timeoutMs: config.sftp.timeout,
      guard: sftpGuard,
    });
  }

  /** A reception's fax-to-webservice notice (JSON, signed like status pushes), fax-to-email, or fax-to-SFTP. */
  async function deliverReceived(n: NotificationRow, notice: ReceivedFaxNotice): Promise<DeliveryResult> {
    if (n.channel === "sftp") return deliverSftp(n);
    if (n.channel === "http") {
      const customer = await store.db.selectFrom("customers").select(["signing_secrets"]).where("cust_nr", "=", n.cust_nr).executeTakeFirst();
      const secrets = customer?.signing_secrets ? (JSON.parse(customer.signing_secrets) as string[]) : [];
      const body = JSON.stringify({ event: n.event, receivedFax: notice.receivedFax });
      const headers: Record<string, string> = { "x-faxline-event": n.event, "x-faxline-received-fax-id": n.job_id };
      if (secrets.length > 0) Object.assign(headers, signWebhook(secrets, n.id, Math.floor(ctx.clock.now() / 1000), body));
      else headers["webhook-id"] = n.id;
      return sendPush({
        url: n.target,
        body,
        contentType: "application/json; charset=utf-8",
        headers,
        auth: { method: "NONE", principal: null, credentials: null },
        oauth2TokenUrl: null,
        timeoutMs: config.push.timeout,
        guard,
        tokens,
        now: () => ctx.clock.now(),
      });
    }
    const none = { statusCode: null, responseExcerpt: null, retryAfterMs: null };
    if (config.mail.host === "") return { kind: "permanent", error: "No SMTP server is configured (mail.host), so received faxes cannot be mailed", ...none };
    const fax = await store.db.selectFrom("received_faxes").select(["image"]).where("id", "=", n.job_id).executeTakeFirst();
    let attachment: { filename: string; content: Buffer; contentType: string } | null = null;
    if (fax?.image && notice.attachment !== "NONE") {
      const tiff = Buffer.from(fax.image);
      attachment =
        notice.attachment === "TIFF"
          ? { filename: `${n.job_id}.tif`, content: tiff, contentType: "image/tiff" }
          : { filename: `${n.job_id}.pdf`, content: await (await import("../notifications/email/fax-image-to-pdf.ts")).faxImageToPdf(tiff), contentType: "application/pdf" };
    }
    const message = composeReceivedFaxMail({ notice: notice.receivedFax, to: n.target, from: config.mail.from, attachment, now: ctx.clock.now() });
    transport ??= createMailTransport(config.mail);
    const sent = await sendStatusMail(transport, message);
    if (sent.ok) return { kind: "delivered", error: null, statusCode: 250, responseExcerpt: sent.response.slice(0, 1024), retryAfterMs: null };
    return { kind: sent.temporary ? "retry" : "permanent", error: sent.message, statusCode: sent.responseCode, responseExcerpt: null, retryAfterMs: null };
  }

  async function deliver(n: NotificationRow): Promise<void> {
    const startedAt = ctx.clock.now();
    const payload = JSON.parse(n.payload) as NotificationPayload;
    let result: DeliveryResult;
    try {
      result =
        n.event === FAX_RECEIVED
          ? await deliverReceived(n, payload as unknown as ReceivedFaxNotice)
          : n.channel === "email"
            ? await deliverMail(n, payload)
            : await deliverPush(n, payload);
    } catch (err) {
      // A stored template that does not parse (installation checks it, so it was changed
      // behind that check): retrying cannot help until an operator reinstalls it.
      if (!(err instanceof TemplateSyntaxError)) throw err;
      result = {
        kind: "permanent",
        statusCode: null,
        responseExcerpt: null,
        retryAfterMs: null,
        error: `The customer's ${n.channel === "email" ? "mail" : "push"} template cannot be used (${err.message}); reinstall it with faxline templates install`,
      };
    }
    const now = ctx.clock.now();
    const next = nextStepAfter(result, n.schedule_step, now, n.channel === "email" ? plans.email : n.channel === "sftp" ? plans.sftp : plans.http);
    const recorded = await retryWhileStoreDown(ctx, "notification try", () => recordNotificationTry(store.db, {
      notification: n,
      holder: ctx.holder,
      startedAt,
      durationMs: now - startedAt,
      outcome: result.kind === "delivered" ? "delivered" : next.state === "failed" ? "failed" : "retry",
      statusCode: result.statusCode,
      error: result.error,
      responseExcerpt: result.responseExcerpt,
      next,
      now,
    }), signal, log);
    if (recorded) ctx.metrics.notificationTry(n.channel, result.kind === "delivered" ? "delivered" : next.state === "failed" ? "failed" : "retry");
    const fields = { notificationId: n.id, jobId: n.job_id, channel: n.channel, event: n.event, attempt: n.attempts + 1, status: result.statusCode };
    if (!recorded) log.warn(fields, "notification lease lost before the try was recorded; it will be sent again");
    else if (next.state === "delivered") log.info(fields, "notification delivered");
    else if (next.state === "failed") log.warn({ ...fields, error: next.why }, "notification failed for good");
    else log.info({ ...fields, error: result.error, nextAttemptAt: next.nextAttemptAt }, "notification try failed; retry scheduled");
  }

  function busyReceivers(): string[] {
    return [...perReceiver].filter(([, n]) => n >= config.push.perReceiverConcurrency).map(([r]) => r);
  }

  function launch(n: NotificationRow): void {
    perReceiver.set(n.receiver, (perReceiver.get(n.receiver) ?? 0) + 1);
    const task = deliver(n)
      .catch((err: unknown) => {
        // An internal fault: the lease expires and the sweep sends it again.
        log.error({ err: coerceError(err), notificationId: n.id }, "delivering a notification failed with an internal error");
      })
      .finally(() => {
        const left = (perReceiver.get(n.receiver) ?? 1) - 1;
        if (left === 0) perReceiver.delete(n.receiver);
        else perReceiver.set(n.receiver, left);
        running.delete(task);
        ctx.wake.notify.notify();
      });
    running.add(task);
  }

  const sweepDuty = ctx.singleton(`notification-sweep:${config.node.datacenter}`);
  const reportError = loopErrors(ctx, "notifier loop", log);
  const loop = (async () => {
    const dc = config.node.datacenter;
    try {
      const released = await releaseNotificationLeases(store.db, { datacenter: dc, now: ctx.clock.now(), holderPrefix: `${ctx.nodeId}:`, exceptHolder: ctx.holder });
      if (released > 0) log.warn({ released }, "released notifications this node was delivering before its restart");
    } catch (err) {
      // Their leases run out instead, and the sweep sends them again.
      reportError(err);
    }
    let lastSweep = 0;
    while (!signal.aborted) {
      try {
        const now = ctx.clock.now();
        // One node of the data center sweeps, and only on a steady connection to the store
        // (after an outage, the nodes that held the tries first record them). Not while stopping.
        if (flushDueBy === null && now - lastSweep >= Math.min(SWEEP_EVERY_MS, Math.floor(config.cluster.dutyLease / 3))) {
          lastSweep = now;
          if (ctx.health.steadyFor(now) >= 2 * config.cluster.heartbeatInterval && (await sweepDuty.tryHold())) {
            const expired = await releaseNotificationLeases(store.db, { datacenter: dc, now, expiredBefore: now });
            if (expired > 0) log.warn({ expired }, "notification leases expired; their tries were abandoned and are sent again");
          }
        }
        let claimed = false;
        if (running.size < config.push.concurrency) {
          const dueBy = flushDueBy ?? now;
          const n = await store.claims.claimDueNotification(store.db, { datacenter: dc, node: ctx.holder, now: dueBy, leaseUntil: now + lease, busyReceivers: busyReceivers() });
          if (n) {
            launch(n);
            claimed = true;
          }
        }
        // Stopping: nothing left that was due, and no try runs that could free a busy receiver.
        if (!claimed && flushDueBy !== null && running.size === 0) break;
        if (!claimed) await ctx.wake.notify.wait(Math.min(config.scheduler.pollInterval, Math.floor(config.cluster.dutyLease / 3)), signal);
      } catch (err) {
        reportError(err);
        await pause(config.scheduler.pollInterval, signal);
      }
    }
    await sweepDuty.release();
  })();

  return {
    name: "notifier",
    async stop(hurry?: AbortSignal) {
      if (hurry !== undefined && !hurry.aborted) {
        // Each try's end wakes the loop (launch), so it sees when the last one is done.
        flushDueBy = ctx.clock.now();
        const cut = () => controller.abort();
        hurry.addEventListener("abort", cut, { once: true });
        ctx.wake.notify.notify();
        await loop;
        hurry.removeEventListener("abort", cut);
      }
      controller.abort();
      await loop;
      await Promise.all(running);
      transport?.close();
    },
  };
}

/**
 * The console's Settings page: the account (customer) settings operators otherwise set with
 * `faxline accounts …` and `faxline templates …`, and the signed-in login's own password and
 * IP allow-list. Every change goes through the same checks as the CLI (accounts/*.ts);
 * their AccountError messages come back as 400 setting_invalid. Settings that apply to the whole
 * customer, and the login's allow-list, may be changed only by a login that manages the account
 * (logins.is_manager; 403 manager_only otherwise); every login may read them and change its own
 * password.
 *
 *  - GET  /console/api/settings
 *  - PUT  /console/api/settings/push            {url, format, events, oauth2TokenUrl}
 *  - POST /console/api/settings/signing-secret  {action: rotate|retire|retire-all}
 *  - PUT  /console/api/settings/report-mail     {successAddress, failureAddress, attachedFaxImageMode, attachedFaxImageFormat} | null
 *  - PUT  /console/api/settings/header          {header}
 *  - PUT  /console/api/settings/tone-mode       {toneMode}  (AUTO|TEXT|PHOTO|THRESHOLD, or null for none)
 *  - PUT  /console/api/settings/retention       {days}
 *  - PUT  /console/api/settings/cover-templates/{name}     {fileName, content}
 *  - DELETE /console/api/settings/cover-templates/{name}
 *  - PUT  /console/api/settings/allow-list      {entries}
 *  - POST /console/api/settings/password        {currentPassword, newPassword}
 */
import type { FastifyInstance } from "fastify";
import { shownUrl } from "../../net/url-display.ts";
import { AccountError, allowListMatches, findLogin, parseAllowList, setCustomerRetention, setLoginAllowList, setLoginPassword } from "../../accounts/accounts.ts";
import {
  getNotificationSettings,
  requireCustomer,
  retireSigningSecrets,
  rotateSigningSecret,
  setPushSettings,
  setReportMail,
  type AccountReportMail,
} from "../../accounts/notification-settings.ts";
import { installCoverTemplate, setDefaultHeader, setDefaultToneMode } from "../../accounts/rendering-settings.ts";
import { TONE_MODES } from "../../render/fax-image/tone-mode.ts";
import { ApiError } from "../../errors/api-errors.ts";
import { OPTIONAL_PUSH_EVENTS } from "../../notifications/events.ts";
import { PUSH_FORMATS } from "../../notifications/push/push-formats.ts";
import { ATTACHED_IMAGE_FORMATS, ATTACHED_IMAGE_MODES } from "../../notifications/report-snapshot.ts";
import type { ConsoleDeps } from "../console-deps.ts";
import { accountChange, requireManager } from "./account-changes.ts";

function body(request: { body: unknown }): Record<string, unknown> {
  const b = request.body;
  if (b === null || typeof b !== "object" || Array.isArray(b)) throw new ApiError("invalid_request", "The body must be a JSON object");
  return b as Record<string, unknown>;
}

function optionalString(b: Record<string, unknown>, key: string, max = 2048): string | null | undefined {
  const v = b[key];
  if (v === undefined) return undefined;
  if (v === null) return null;
  if (typeof v !== "string") throw new ApiError("invalid_request", `${key} must be text`);
  if (v.length > max) throw new ApiError("field_too_long", `${key} is longer than ${max} characters`);
  return v;
}



export function registerSettingsRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  const { db } = deps.store;

  app.get("/settings", async (request) => {
    const session = await deps.sessions.require(request);
    const [notification, customer, login, covers] = await Promise.all([
      getNotificationSettings(db, session.custNr),
      requireCustomer(db, session.custNr),
      findLogin(db, session.login),
      db.selectFrom("customer_templates").select(["name", "content_type", "updated_at"]).where("cust_nr", "=", session.custNr).where("kind", "=", "cover").orderBy("name").execute(),
    ]);
    return {
      custNr: session.custNr,
      login: session.login,
      canManage: session.isManager,
      push: {
        // Credentials in a URL are kept, but never shown: a manager who saves the form unchanged keeps them.
        url: shownUrl(notification.pushUrl),
        urlHasCredentials: notification.pushUrl !== null && shownUrl(notification.pushUrl) !== notification.pushUrl,
        format: notification.pushFormat,
        events: notification.pushEvents,
        oauth2TokenUrl: shownUrl(notification.oauth2TokenUrl),
        signingSecrets: notification.signingSecrets,
      },
      reportMail: notification.reportMail,
      defaultHeader: customer.default_header,
      defaultToneMode: customer.default_tone_mode,
      retentionDays: customer.retention_days,
      defaultRetentionDays: deps.config.retention.defaultDays,
      coverTemplates: covers.map((c) => ({ name: c.name, kind: c.content_type.includes("svg") ? "svg" : "html", updatedTs: new Date(Number(c.updated_at)).toISOString() })),
      ipAllowList: login?.ip_allow_list ? (JSON.parse(login.ip_allow_list) as string[]) : [],
      clientAddress: request.ip,
      choices: { pushFormats: PUSH_FORMATS, pushEvents: OPTIONAL_PUSH_EVENTS, attachedFaxImageModes: ATTACHED_IMAGE_MODES, attachedFaxImageFormats: ATTACHED_IMAGE_FORMATS, toneModes: TONE_MODES },
    };
  });

  app.put("/settings/push", async (request) => {
    const session = await requireManager(deps, request);
    const b = body(request);
    const events = b.events;
    if (events !== undefined && (!Array.isArray(events) || events.some((e) => typeof e !== "string"))) throw new ApiError("invalid_request", "events must be a list of event names");
    const url = optionalString(b, "url");
    const oauth2TokenUrl = optionalString(b, "oauth2TokenUrl");
    const format = optionalString(b, "format", 32);
    // The form shows URLs without their credentials: the same URL sent back keeps them.
    const current = await getNotificationSettings(db, session.custNr);
    const unchanged = (sent: string | null | undefined, stored: string | null) => sent !== undefined && sent !== null && stored !== null && sent.trim() === shownUrl(stored);
    await accountChange(() =>
      setPushSettings(db, session.custNr, {
        url: unchanged(url, current.pushUrl) ? undefined : url === undefined ? undefined : url === null || url.trim() === "" ? null : url,
        format: format ?? undefined,
        events: events as string[] | undefined,
        oauth2TokenUrl: unchanged(oauth2TokenUrl, current.oauth2TokenUrl) ? undefined : oauth2TokenUrl === undefined ? undefined : oauth2TokenUrl === null || oauth2TokenUrl.trim() === "" ? null : oauth2TokenUrl,
      }),
    );
    request.log.info({ login: session.login, custNr: session.custNr }, "console: push settings changed");
    return { ok: true };
  });

  app.post("/settings/signing-secret", async (request) => {
    const session = await requireManager(deps, request);
    const action = body(request).action;
    if (action === "rotate") {
      const { secret, previousKept } = await accountChange(() => rotateSigningSecret(db, session.custNr));
      request.log.info({ login: session.login, custNr: session.custNr }, "console: signing secret rotated");
      return { secret, previousKept };
    }
    if (action === "retire" || action === "retire-all") {
      const removed = await accountChange(() => retireSigningSecrets(db, session.custNr, action === "retire-all"));
      return { removed };
    }
    throw new ApiError("enum_value_invalid", 'action must be "rotate", "retire" or "retire-all"');
  });

  app.put("/settings/report-mail", async (request) => {
    const session = await requireManager(deps, request);
    const b = request.body;
    let mail: AccountReportMail | null = null;
    if (b !== null && b !== undefined) {
      const o = body(request);
      mail = {
        successAddress: optionalString(o, "successAddress", 320) ?? null,
        failureAddress: optionalString(o, "failureAddress", 320) ?? null,
        attachedFaxImageMode: optionalString(o, "attachedFaxImageMode", 32) ?? "NEVER",
        attachedFaxImageFormat: optionalString(o, "attachedFaxImageFormat", 32) ?? "PDF",
      };
    }
    return { reportMail: await accountChange(() => setReportMail(db, session.custNr, mail)) };
  });

  app.put("/settings/header", async (request) => {
    const session = await requireManager(deps, request);
    const header = optionalString(body(request), "header", 1000);
    await accountChange(() => setDefaultHeader(db, session.custNr, header === undefined || header === null || header.trim() === "" ? null : header));
    return { ok: true };
  });

  app.put("/settings/tone-mode", async (request) => {
    const session = await requireManager(deps, request);
    const toneMode = optionalString(body(request), "toneMode", 32);
    await accountChange(() => setDefaultToneMode(db, session.custNr, toneMode === undefined || toneMode === null || toneMode.trim() === "" ? null : toneMode.trim()));
    return { ok: true };
  });

  app.put("/settings/retention", async (request) => {
    const session = await requireManager(deps, request);
    const days = body(request).days;
    if (days !== null && (typeof days !== "number" || !Number.isInteger(days) || days < 1 || days > 3650)) {
      throw new ApiError("setting_invalid", "Retention must be a whole number of days from 1 to 3650, or empty for the service's default");
    }
    await accountChange(() => setCustomerRetention(db, session.custNr, days as number | null));
    return { ok: true };
  });

  app.put("/settings/cover-templates/:name", async (request) => {
    const session = await requireManager(deps, request);
    const { name } = request.params as { name: string };
    const b = body(request);
    const fileName = optionalString(b, "fileName", 256);
    const content = optionalString(b, "content", 512 * 1024);
    if (!fileName || !content) throw new ApiError("invalid_request", "fileName and content are required");
    const result = await accountChange(() => installCoverTemplate(db, { custNr: session.custNr, name, fileName, content }, deps.clock.now()));
    return { name, kind: result.kind, placeholders: result.keys };
  });

  app.delete("/settings/cover-templates/:name", async (request, reply) => {
    const session = await requireManager(deps, request);
    const { name } = request.params as { name: string };
    const r = await db.deleteFrom("customer_templates").where("cust_nr", "=", session.custNr).where("kind", "=", "cover").where("name", "=", name).executeTakeFirst();
    if (Number(r.numDeletedRows) === 0) throw new ApiError("setting_invalid", `There is no cover template "${name}"`);
    return reply.code(204).send();
  });

  app.put("/settings/allow-list", async (request) => {
    const session = await requireManager(deps, request);
    const entries = body(request).entries;
    if (!Array.isArray(entries) || entries.some((e) => typeof e !== "string") || entries.length > 100) {
      throw new ApiError("invalid_request", "entries must be a list of at most 100 addresses or CIDR blocks");
    }
    const list = (entries as string[]).map((e) => e.trim()).filter((e) => e !== "");
    await accountChange(async () => {
      if (list.length > 0) {
        // Refuse a list that would lock this very browser out.
        if (!allowListMatches(parseAllowList(list), request.ip)) {
          throw new AccountError(`The list does not include your own address ${request.ip}; add it, or you would be signed out for good`);
        }
      }
      await setLoginAllowList(db, session.login, list);
    });
    deps.authenticator.forget(session.login);
    return { entries: list };
  });

  app.post("/settings/password", async (request) => {
    const session = await deps.sessions.require(request);
    const b = body(request);
    const current = optionalString(b, "currentPassword", 1024);
    const next = optionalString(b, "newPassword", 1024);
    if (!current || !next) throw new ApiError("invalid_request", "currentPassword and newPassword are required");
    // The current password is checked as a sign-in would be, lockout included.
    try {
      await deps.authenticator.verify(session.login, current, request.ip);
    } catch (err) {
      if (err instanceof ApiError && err.definition.code === "authentication_failed") throw new ApiError("setting_invalid", "The current password is wrong");
      throw err;
    }
    await accountChange(() => setLoginPassword(db, session.login, next, session.tokenHash));
    deps.authenticator.forget(session.login);
    request.log.info({ login: session.login }, "console: password changed; other sessions ended");
    return { ok: true };
  });
}

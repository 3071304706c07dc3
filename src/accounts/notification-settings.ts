/**
 * Per-customer notification settings, set by operators (`faxline accounts set-push`,
 * `faxline templates …`): default push URL and format, opt-in push events, the OAuth2 token
 * URL, Standard Webhooks signing secrets, and installed templates.
 */
import type { Kysely } from "kysely";
import type { Database } from "../store/database.ts";
import { AccountError } from "./accounts.ts";
import { OPTIONAL_PUSH_EVENTS, isOptionalPushEvent } from "../notifications/events.ts";
import { PUSH_FORMATS, type PushFormat } from "../notifications/push/push-formats.ts";
import { newSigningSecret } from "../notifications/push/sign-webhook.ts";
import { ATTACHED_IMAGE_FORMATS, ATTACHED_IMAGE_MODES } from "../notifications/report-snapshot.ts";
import { parseTemplate } from "../notifications/templates/render-template.ts";

export const TEMPLATE_KINDS = ["push", "mail-subject", "mail-text", "mail-html"] as const;
export type TemplateKind = (typeof TEMPLATE_KINDS)[number];
const DEFAULT_CONTENT_TYPE: Record<TemplateKind, string> = {
  push: "application/xml; charset=utf-8",
  "mail-subject": "text/plain; charset=utf-8",
  "mail-text": "text/plain; charset=utf-8",
  "mail-html": "text/html; charset=utf-8",
};

export interface PushSettingsChange {
  /** Default push URL; null removes it. */
  url?: string | null;
  format?: string;
  /** Opt-in events; an empty list turns them off. */
  events?: readonly string[];
  /** null removes it. */
  oauth2TokenUrl?: string | null;
}

function httpUrl(text: string, what: string): string {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new AccountError(`${what} "${text}" is not a valid absolute URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new AccountError(`${what} must be an http:// or https:// URL, got ${url.protocol}`);
  return url.href;
}

export async function requireCustomer(db: Kysely<Database>, custNr: string) {
  const customer = await db.selectFrom("customers").selectAll().where("cust_nr", "=", custNr).executeTakeFirst();
  if (!customer) throw new AccountError(`No customer "${custNr}"`);
  return customer;
}

export async function setPushSettings(db: Kysely<Database>, custNr: string, change: PushSettingsChange): Promise<void> {
  await requireCustomer(db, custNr);
  const set: Partial<{ push_url: string | null; push_format: string; push_events: string | null; oauth2_token_url: string | null }> = {};
  if (change.url !== undefined) set.push_url = change.url === null ? null : httpUrl(change.url, "The push URL");
  if (change.format !== undefined) {
    const format = PUSH_FORMATS.find((f) => f === change.format!.trim().toUpperCase());
    if (!format) throw new AccountError(`The push format must be one of ${PUSH_FORMATS.join(", ")}, got "${change.format}"`);
    set.push_format = format;
  }
  if (change.events !== undefined) {
    for (const e of change.events) {
      if (!isOptionalPushEvent(e)) throw new AccountError(`"${e}" is not an optional push event; choose from ${OPTIONAL_PUSH_EVENTS.join(", ")}`);
    }
    set.push_events = change.events.length === 0 ? null : JSON.stringify([...new Set(change.events)]);
  }
  if (change.oauth2TokenUrl !== undefined) set.oauth2_token_url = change.oauth2TokenUrl === null ? null : httpUrl(change.oauth2TokenUrl, "The OAuth2 token URL");
  if (Object.keys(set).length === 0) return;
  await db.updateTable("customers").set(set).where("cust_nr", "=", custNr).execute();
}

/** The e-mail report of an account's jobs that ask for none (console settings). */
export interface AccountReportMail {
  successAddress: string | null;
  failureAddress: string | null;
  attachedFaxImageMode: string;
  attachedFaxImageFormat: string;
}

const MAIL_ADDRESS = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$/;

/** Sets (or with null removes) the account's default e-mail report; checks addresses and modes. */
export async function setReportMail(db: Kysely<Database>, custNr: string, mail: AccountReportMail | null): Promise<AccountReportMail | null> {
  await requireCustomer(db, custNr);
  let stored: AccountReportMail | null = null;
  if (mail !== null) {
    const address = (value: string | null, what: string): string | null => {
      const trimmed = value?.trim() ?? "";
      if (trimmed === "") return null;
      if (trimmed.length > 320 || !MAIL_ADDRESS.test(trimmed)) throw new AccountError(`The ${what} "${trimmed}" is not an e-mail address`);
      return trimmed;
    };
    const mode = mail.attachedFaxImageMode.trim().toUpperCase();
    if (!(ATTACHED_IMAGE_MODES as readonly string[]).includes(mode)) throw new AccountError(`The attachment mode must be one of ${ATTACHED_IMAGE_MODES.join(", ")}`);
    const format = mail.attachedFaxImageFormat.trim().toUpperCase();
    if (!(ATTACHED_IMAGE_FORMATS as readonly string[]).includes(format)) throw new AccountError(`The attachment format must be one of ${ATTACHED_IMAGE_FORMATS.join(", ")}`);
    stored = {
      successAddress: address(mail.successAddress, "success address"),
      failureAddress: address(mail.failureAddress, "failure address"),
      attachedFaxImageMode: mode,
      attachedFaxImageFormat: format,
    };
    if (stored.successAddress === null && stored.failureAddress === null) stored = null;
  }
  await db.updateTable("customers").set({ report_mail: stored === null ? null : JSON.stringify(stored) }).where("cust_nr", "=", custNr).execute();
  return stored;
}

export interface NotificationSettings {
  custNr: string;
  pushUrl: string | null;
  pushFormat: PushFormat;
  pushEvents: string[];
  oauth2TokenUrl: string | null;
  signingSecrets: number;
  reportMail: AccountReportMail | null;
  templates: { kind: string; name: string; contentType: string; bytes: number }[];
}

export async function getNotificationSettings(db: Kysely<Database>, custNr: string): Promise<NotificationSettings> {
  const c = await requireCustomer(db, custNr);
  const templates = await db.selectFrom("customer_templates").selectAll().where("cust_nr", "=", custNr).orderBy("kind").orderBy("name").execute();
  return {
    custNr,
    pushUrl: c.push_url,
    pushFormat: (c.push_format as PushFormat | null) ?? "XML",
    pushEvents: c.push_events ? (JSON.parse(c.push_events) as string[]) : [],
    oauth2TokenUrl: c.oauth2_token_url,
    signingSecrets: c.signing_secrets ? (JSON.parse(c.signing_secrets) as string[]).length : 0,
    reportMail: c.report_mail ? (JSON.parse(c.report_mail) as AccountReportMail) : null,
    templates: templates.map((t) => ({ kind: t.kind, name: t.name, contentType: t.content_type, bytes: Buffer.byteLength(t.content) })),
  };
}

/**
 * Adds a new signing secret and keeps the newest previous one, so both sign until the
 * receiver has switched; returns the new secret (shown once).
 */
export async function rotateSigningSecret(db: Kysely<Database>, custNr: string): Promise<{ secret: string; previousKept: boolean }> {
  const c = await requireCustomer(db, custNr);
  const current = c.signing_secrets ? (JSON.parse(c.signing_secrets) as string[]) : [];
  const secret = newSigningSecret();
  const kept = current.slice(0, 1);
  await db.updateTable("customers").set({ signing_secrets: JSON.stringify([secret, ...kept]) }).where("cust_nr", "=", custNr).execute();
  return { secret, previousKept: kept.length > 0 };
}

/** Drops the older secret after a rotation (receivers have switched), or all with `all`. */
export async function retireSigningSecrets(db: Kysely<Database>, custNr: string, all: boolean): Promise<number> {
  const c = await requireCustomer(db, custNr);
  const current = c.signing_secrets ? (JSON.parse(c.signing_secrets) as string[]) : [];
  const left = all ? [] : current.slice(0, 1);
  await db.updateTable("customers").set({ signing_secrets: left.length === 0 ? null : JSON.stringify(left) }).where("cust_nr", "=", custNr).execute();
  return current.length - left.length;
}

export async function installTemplate(
  db: Kysely<Database>,
  input: { custNr: string; kind: string; name?: string; content: string; contentType?: string },
  now: number,
): Promise<void> {
  await requireCustomer(db, input.custNr);
  const kind = TEMPLATE_KINDS.find((k) => k === input.kind);
  if (!kind) throw new AccountError(`The template kind must be one of ${TEMPLATE_KINDS.join(", ")}, got "${input.kind}"`);
  const parsed = parseTemplate(input.content);
  if (!parsed.ok) throw new AccountError(`The ${kind} template cannot be used: ${parsed.message}`);
  const row = {
    cust_nr: input.custNr,
    kind,
    name: input.name ?? "default",
    content_type: input.contentType ?? DEFAULT_CONTENT_TYPE[kind],
    content: input.content,
    updated_at: now,
  };
  await db
    .insertInto("customer_templates")
    .values(row)
    .onConflict((oc) => oc.columns(["cust_nr", "kind", "name"]).doUpdateSet({ content: row.content, content_type: row.content_type, updated_at: now }))
    .execute();
}

export async function removeTemplate(db: Kysely<Database>, custNr: string, kind: string, name = "default"): Promise<boolean> {
  const r = await db.deleteFrom("customer_templates").where("cust_nr", "=", custNr).where("kind", "=", kind).where("name", "=", name).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

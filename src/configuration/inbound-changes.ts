/**
 * Changing a customer's inbound configuration through the API: the customer's settings, its
 * profiles (topics, created and changed with the checks of inbound/topics.ts and
 * inbound/sftp-delivery-settings.ts) and its numbers. Each function runs inside the audited
 * transaction (audit-log.ts) and uses only the `trx` it is given; a value that cannot be used
 * throws AccountError (400 setting_invalid), a missing resource an ApiError.
 *
 * PUT replaces (a field left out is "not set": null, no delivery); PATCH changes only the fields
 * given. Write-only secrets (an SFTP password or key) stay unless a new one is given.
 */
import type { Kysely } from "kysely";
import { AccountError } from "../accounts/accounts.ts";
import { ApiError } from "../errors/api-errors.ts";
import { setTopicDeliveries, createTopic, requireTopic } from "../inbound/topics.ts";
import { removeTopicSftpDelivery, setTopicSftpDelivery, type SftpDeliveryChange } from "../inbound/sftp-delivery-settings.ts";
import { shownUrl } from "../net/url-display.ts";
import type { Database } from "../store/database.ts";
import type { ConfigRole } from "./config-actor.ts";
import type { InboundNumberChange, InboundProfileChange, InboundSettingsChange } from "./config-schemas.ts";

export type ChangeMode = "replace" | "merge";

/** A field of a change: under "replace" an absent field is null; under "merge" it is left alone (undefined). */
function field<T>(change: Record<string, unknown>, key: string, mode: ChangeMode): T | null | undefined {
  if (!(key in change) || change[key] === undefined) return mode === "replace" ? null : undefined;
  return change[key] as T | null;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const NO_CONTROL = /^[^\u0000-\u001f\u007f]*$/;

function checkFaxId(value: string | null | undefined): string | null | undefined {
  if (value === undefined || value === null) return value;
  const v = value.trim();
  if (v === "") return null;
  if (!PRINTABLE_ASCII.test(v)) throw new AccountError(`faxId "${value}" has characters a fax machine cannot show; use printable ASCII (digits, +, letters, spaces), up to 20`);
  return v;
}

function checkText(value: string | null | undefined, name: string): string | null | undefined {
  if (value === undefined || value === null) return value;
  const v = value.trim();
  if (v === "") return null;
  if (!NO_CONTROL.test(v)) throw new AccountError(`${name} may not hold control characters (line breaks, tabs)`);
  return v;
}

function activeValue(value: boolean | null | undefined): number | null | undefined {
  return value === undefined ? undefined : value === null ? null : value ? 1 : 0;
}

/** Leaves out undefined (unchanged) entries. */
function defined<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export async function changeCustomerSettings(trx: Kysely<Database>, custNr: string, change: InboundSettingsChange, mode: ChangeMode, now: number): Promise<void> {
  const c = change as Record<string, unknown>;
  if (change.customer !== undefined && change.customer !== custNr) throw new AccountError(`customer is "${change.customer}" but the request configures customer ${custNr}`);
  const set = defined({
    fax_id: checkFaxId(field<string>(c, "faxId", mode)),
    cost_center: checkText(field<string>(c, "costCenter", mode), "costCenter"),
    active: activeValue(field<boolean>(c, "active", mode)),
    paused: activeValue(field<boolean>(c, "paused", mode)),
  });
  const current = await trx.selectFrom("inbound_customer_settings").select("cust_nr").where("cust_nr", "=", custNr).executeTakeFirst();
  if (current) {
    if (Object.keys(set).length > 0) await trx.updateTable("inbound_customer_settings").set({ ...set, updated_at: now }).where("cust_nr", "=", custNr).execute();
  } else {
    await trx.insertInto("inbound_customer_settings").values({ cust_nr: custNr, fax_id: null, cost_center: null, active: null, paused: null, ...set, updated_at: now }).execute();
  }
}

/** Who holds a number: the customer and its profile, or null when it is nobody's. */
async function holderOf(trx: Kysely<Database>, e164: string): Promise<{ custNr: string; profile: string | null } | null> {
  const assigned = await trx.selectFrom("inbound_numbers").select(["cust_nr", "topic"]).where("e164", "=", e164).executeTakeFirst();
  if (assigned) return { custNr: assigned.cust_nr, profile: assigned.topic };
  const own = await trx.selectFrom("inbound_number_settings").select("cust_nr").where("e164", "=", e164).executeTakeFirst();
  return own ? { custNr: own.cust_nr, profile: null } : null;
}

/**
 * Changes a number of the customer. An operator's change of a number that is nobody's gives it
 * to the customer; a manager can change only numbers its customer has (404 otherwise).
 */
export async function changeNumber(trx: Kysely<Database>, custNr: string, e164: string, change: InboundNumberChange, mode: ChangeMode, role: ConfigRole, now: number): Promise<void> {
  const c = change as Record<string, unknown>;
  for (const kind of ["email", "ftp", "webservice"] as const) {
    if (change[kind] !== undefined && change[kind] !== null && mode === "merge") {
      throw new AccountError(`A number's ${kind} delivery is its profile's: change it on the profile (PUT or PATCH /inbound/profiles/{name})`);
    }
  }
  const holder = await holderOf(trx, e164);
  if (holder !== null && holder.custNr !== custNr) {
    if (role === "operator") throw new ApiError("number_taken", `${e164} belongs to customer ${holder.custNr}; take it away there first (DELETE /inbound/numbers/${e164}?customer=${holder.custNr})`);
    throw new ApiError("number_not_found", `Customer ${custNr} has no inbound number ${e164}`);
  }
  if (holder === null && role !== "operator") {
    throw new ApiError("number_not_found", `Customer ${custNr} has no inbound number ${e164}; an operator gives a customer its numbers`);
  }
  const set = defined({
    display_number: checkText(field<string>(c, "displayNumber", mode), "displayNumber"),
    comments: checkText(field<string>(c, "comments", mode), "comments"),
    fax_id: checkFaxId(field<string>(c, "faxId", mode)),
    cost_center: checkText(field<string>(c, "costCenter", mode), "costCenter"),
    active: activeValue(field<boolean>(c, "active", mode)),
    paused: activeValue(field<boolean>(c, "paused", mode)),
  });
  const own = await trx.selectFrom("inbound_number_settings").select("e164").where("e164", "=", e164).executeTakeFirst();
  if (own) {
    if (Object.keys(set).length > 0) await trx.updateTable("inbound_number_settings").set({ ...set, updated_at: now }).where("e164", "=", e164).execute();
  } else {
    // The settings row also keeps the number the customer's when it has no profile.
    await trx
      .insertInto("inbound_number_settings")
      .values({ e164, cust_nr: custNr, display_number: null, comments: null, fax_id: null, cost_center: null, active: null, paused: null, ...set, created_at: now, updated_at: now })
      .execute();
  }
  const profile = field<string>(c, "profile", mode);
  if (profile === undefined) return;
  const wanted = profile === null || profile.trim() === "" ? null : profile.trim();
  if (wanted === (holder?.profile ?? null)) return;
  if (wanted === null) {
    await trx.deleteFrom("inbound_numbers").where("e164", "=", e164).execute();
    return;
  }
  const topic = await trx.selectFrom("inbound_topics").select("name").where("cust_nr", "=", custNr).where("name", "=", wanted).executeTakeFirst();
  if (!topic) throw new AccountError(`Customer ${custNr} has no profile "${wanted}"; create it first (PUT /inbound/profiles/${wanted})`);
  if (holder?.profile) await trx.updateTable("inbound_numbers").set({ topic: wanted }).where("e164", "=", e164).execute();
  else await trx.insertInto("inbound_numbers").values({ e164, cust_nr: custNr, topic: wanted, created_at: now }).execute();
}

/** Takes a number away from the customer (operators only): its profile and its settings. */
export async function deleteNumber(trx: Kysely<Database>, custNr: string, e164: string): Promise<void> {
  const holder = await holderOf(trx, e164);
  if (holder === null || holder.custNr !== custNr) throw new ApiError("number_not_found", `Customer ${custNr} has no inbound number ${e164}`);
  await trx.deleteFrom("inbound_numbers").where("e164", "=", e164).execute();
  await trx.deleteFrom("inbound_number_settings").where("e164", "=", e164).execute();
}

function sftpChange(ftp: Record<string, unknown>): SftpDeliveryChange {
  const out: SftpDeliveryChange = {};
  const str = (k: string) => (typeof ftp[k] === "string" ? (ftp[k] as string) : undefined);
  if (str("protocol") !== undefined && str("protocol")!.trim().toUpperCase() !== "SFTP") throw new AccountError(`ftp.protocol must be SFTP (Faxline writes to SFTP servers only), got "${str("protocol")}"`);
  if (str("host") !== undefined) out.host = str("host")!;
  if (typeof ftp.port === "number") out.port = ftp.port;
  if (str("username") !== undefined) out.username = str("username")!;
  if (Array.isArray(ftp.hostKeys)) out.hostKeys = ftp.hostKeys as string[];
  if (str("directory") !== undefined) out.directory = str("directory")!;
  if (str("filePattern") !== undefined) out.filePattern = str("filePattern")!;
  if (str("documentFormat") !== undefined) out.documentFormat = str("documentFormat")!;
  if (str("metadataFormat") !== undefined) out.metadataFormat = str("metadataFormat")!;
  // Write-only secrets: an empty one (a form's untouched field) is "not given", the stored one stays.
  if (str("password")) out.password = str("password")!;
  if (str("privateKey")?.trim()) out.privateKey = str("privateKey")!;
  if (str("keyPassphrase")) out.keyPassphrase = str("keyPassphrase")!;
  if (ftp.generateKey === true) out.generateKey = true;
  if (str("authMethod") !== undefined) out.authMethod = str("authMethod")!;
  return out;
}

/** Whether a change writes an SFTP secret (the audit log records that it did, never the value). */
export function writesSecret(change: InboundProfileChange): boolean {
  const ftp = change.ftp as Record<string, unknown> | null | undefined;
  return ftp !== null && ftp !== undefined && (Boolean(ftp.password) || (typeof ftp.privateKey === "string" && ftp.privateKey.trim() !== "") || ftp.generateKey === true);
}

/** Creates (PUT of a new name) or changes a profile: a topic with its settings and deliveries. */
export async function changeProfile(trx: Kysely<Database>, custNr: string, name: string, change: InboundProfileChange, mode: ChangeMode, now: number): Promise<void> {
  const c = change as Record<string, unknown>;
  if (change.name !== undefined && change.name !== name) throw new AccountError(`name is "${change.name}" but the path names profile "${name}"; a profile is renamed by creating the new one and moving its numbers`);
  const existing = await trx.selectFrom("inbound_topics").selectAll().where("cust_nr", "=", custNr).where("name", "=", name).executeTakeFirst();
  const retentionDays = field<number>(c, "retentionDays", mode);
  if (!existing) await createTopic(trx, { custNr, name, retentionDays: retentionDays ?? null }, now);
  const set = defined({
    comments: checkText(field<string>(c, "comments", mode), "comments"),
    fax_id: checkFaxId(field<string>(c, "faxId", mode)),
    cost_center: checkText(field<string>(c, "costCenter", mode), "costCenter"),
    active: activeValue(field<boolean>(c, "active", mode)),
    paused: activeValue(field<boolean>(c, "paused", mode)),
    max_waiting: field<number>(c, "maxWaitingFaxes", mode),
    retention_days: existing ? retentionDays : undefined,
  });
  if (Object.keys(set).length > 0) await trx.updateTable("inbound_topics").set(set).where("cust_nr", "=", custNr).where("name", "=", name).execute();

  const email = field<{ recipients: string[]; attachment?: string }>(c, "email", mode);
  const webservice = field<{ url: string }>(c, "webservice", mode);
  const topic = await requireTopic(trx, custNr, name);
  const deliveries: Parameters<typeof setTopicDeliveries>[3] = {};
  if (email !== undefined) {
    deliveries.mailTo = email === null ? null : email.recipients;
    if (email !== null && email.attachment !== undefined) deliveries.mailAttachment = email.attachment;
  }
  if (webservice !== undefined) {
    // The URL is shown without its credentials: the same URL sent back keeps them.
    const unchanged = webservice !== null && topic.push_url !== null && webservice.url.trim() === shownUrl(topic.push_url);
    if (!unchanged) deliveries.pushUrl = webservice === null ? null : webservice.url;
  }
  await setTopicDeliveries(trx, custNr, name, deliveries);

  const ftp = field<Record<string, unknown>>(c, "ftp", mode);
  if (ftp === null) await removeTopicSftpDelivery(trx, custNr, name);
  else if (ftp !== undefined) await setTopicSftpDelivery(trx, custNr, name, sftpChange(ftp), now);
}

/** Removes a profile; its numbers stay the customer's, without a profile (callers get a wrong number). */
export async function deleteProfile(trx: Kysely<Database>, custNr: string, name: string, now: number): Promise<void> {
  const topic = await trx.selectFrom("inbound_topics").select("name").where("cust_nr", "=", custNr).where("name", "=", name).executeTakeFirst();
  if (!topic) throw new ApiError("profile_not_found", `Customer ${custNr} has no profile "${name}"`);
  const numbers = await trx.selectFrom("inbound_numbers").select("e164").where("cust_nr", "=", custNr).where("topic", "=", name).execute();
  for (const { e164 } of numbers) {
    const own = await trx.selectFrom("inbound_number_settings").select("e164").where("e164", "=", e164).executeTakeFirst();
    if (!own) await trx.insertInto("inbound_number_settings").values({ e164, cust_nr: custNr, display_number: null, comments: null, fax_id: null, cost_center: null, active: null, paused: null, created_at: now, updated_at: now }).execute();
  }
  await trx.deleteFrom("inbound_numbers").where("cust_nr", "=", custNr).where("topic", "=", name).execute();
  await trx.deleteFrom("inbound_sftp_deliveries").where("cust_nr", "=", custNr).where("topic", "=", name).execute();
  await trx.deleteFrom("inbound_topics").where("cust_nr", "=", custNr).where("name", "=", name).execute();
}

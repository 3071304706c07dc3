/**
 * Topics, their fax numbers, and the pull API's passwords: what a customer receives on, and who
 * may fetch it. Operators manage them with `faxline inbound …`.
 *
 * - A topic is a name per customer (1-64 characters of letters, digits, "-", "_", "."), the unit
 *   clients poll (`POST /faxin/rest/v1/topics/{topic}`).
 * - A number (DID) belongs to one topic; it is stored as E.164.
 * - A credential is a random password issued for a customer (the pull API's user name is the
 *   customer number), for all its topics or some; only its scrypt hash is kept, and it is shown
 *   once.
 */
import { randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import { AccountError } from "../accounts/accounts.ts";
import { hashPassword } from "../accounts/passwords.ts";
import { requireCustomer } from "../accounts/notification-settings.ts";
import { normalizeFaxNumber, type NumberContext } from "../numbers/normalize-number.ts";
import type { Database } from "../store/database.ts";
import { levelSettings, type InboundLevelSettings } from "./inbound-settings.ts";
import { listSftpDeliveries, type SftpDeliveryView } from "./sftp-delivery-settings.ts";

export const TOPIC_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
/** Active pull passwords per customer (the pull API checks each on a failed try). */
export const MAX_ACTIVE_CREDENTIALS = 10;

function checkTopicName(name: string): string {
  if (!TOPIC_PATTERN.test(name)) throw new AccountError(`A topic name must be 1 to 64 characters of letters, digits, ".", "_" or "-", got "${name}"`);
  return name;
}

export async function createTopic(db: Kysely<Database>, input: { custNr: string; name: string; retentionDays?: number | null }, now: number): Promise<void> {
  await requireCustomer(db, input.custNr);
  const name = checkTopicName(input.name);
  if (input.retentionDays !== undefined && input.retentionDays !== null && (!Number.isInteger(input.retentionDays) || input.retentionDays < 1 || input.retentionDays > 365)) {
    throw new AccountError("A topic keeps its faxes 1 to 365 days");
  }
  const existing = await db.selectFrom("inbound_topics").select("name").where("cust_nr", "=", input.custNr).where("name", "=", name).executeTakeFirst();
  if (existing) throw new AccountError(`Customer ${input.custNr} has a topic "${name}" already`);
  await db
    .insertInto("inbound_topics")
    .values({ cust_nr: input.custNr, name, retention_days: input.retentionDays ?? null, mail_to: null, mail_attachment: null, push_url: null, created_at: now })
    .execute();
}

export const MAIL_ATTACHMENTS = ["PDF", "TIFF", "NONE"] as const;
const MAIL_ADDRESS = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$/;

export interface TopicDeliveries {
  /** Addresses each reception is mailed to; empty or null: none. */
  mailTo?: readonly string[] | null;
  mailAttachment?: string;
  /** URL each reception's notice is posted to; null or "": none. */
  pushUrl?: string | null;
}

/** Sets where a topic's receptions go besides the pull API: e-mail and a web service. */
export async function setTopicDeliveries(db: Kysely<Database>, custNr: string, name: string, change: TopicDeliveries): Promise<void> {
  await requireTopic(db, custNr, name);
  const set: { mail_to?: string | null; mail_attachment?: string; push_url?: string | null } = {};
  if (change.mailTo !== undefined) {
    const list = (change.mailTo ?? []).map((a) => a.trim()).filter((a) => a !== "");
    for (const a of list) if (a.length > 320 || !MAIL_ADDRESS.test(a)) throw new AccountError(`"${a}" is not an e-mail address`);
    set.mail_to = list.length === 0 ? null : JSON.stringify([...new Set(list)]);
  }
  if (change.mailAttachment !== undefined) {
    const kind = change.mailAttachment.trim().toUpperCase();
    if (!(MAIL_ATTACHMENTS as readonly string[]).includes(kind)) throw new AccountError(`The attachment must be one of ${MAIL_ATTACHMENTS.join(", ")}`);
    set.mail_attachment = kind;
  }
  if (change.pushUrl !== undefined) {
    const text = change.pushUrl?.trim() ?? "";
    if (text === "") set.push_url = null;
    else {
      let url: URL;
      try {
        url = new URL(text);
      } catch {
        throw new AccountError(`The push URL "${text}" is not a valid absolute URL`);
      }
      if (url.protocol !== "http:" && url.protocol !== "https:") throw new AccountError(`The push URL must be an http:// or https:// URL, got ${url.protocol}`);
      set.push_url = url.href;
    }
  }
  if (Object.keys(set).length > 0) await db.updateTable("inbound_topics").set(set).where("cust_nr", "=", custNr).where("name", "=", name).execute();
}

export async function requireTopic(db: Kysely<Database>, custNr: string, name: string) {
  const topic = await db.selectFrom("inbound_topics").selectAll().where("cust_nr", "=", custNr).where("name", "=", name).executeTakeFirst();
  if (!topic) throw new AccountError(`Customer ${custNr} has no topic "${name}"`);
  return topic;
}

/** Removes a topic with its numbers; received faxes stay until their retention ends. In `db`'s transaction, or one of its own. */
export async function deleteTopic(db: Kysely<Database>, custNr: string, name: string): Promise<void> {
  await requireTopic(db, custNr, name);
  const remove = async (trx: Kysely<Database>) => {
    await trx.deleteFrom("inbound_numbers").where("cust_nr", "=", custNr).where("topic", "=", name).execute();
    await trx.deleteFrom("inbound_sftp_deliveries").where("cust_nr", "=", custNr).where("topic", "=", name).execute();
    await trx.deleteFrom("inbound_topics").where("cust_nr", "=", custNr).where("name", "=", name).execute();
  };
  await (db.isTransaction ? remove(db) : db.transaction().execute(remove));
}

/** Adds a fax number to a topic; returns it as E.164. A number belongs to one topic only. */
export async function addTopicNumber(db: Kysely<Database>, input: { custNr: string; topic: string; number: string }, context: NumberContext, now: number): Promise<string> {
  await requireTopic(db, input.custNr, input.topic);
  const normalized = normalizeFaxNumber(input.number, context);
  if (!normalized.ok) throw new AccountError(normalized.message);
  const taken = await db.selectFrom("inbound_numbers").selectAll().where("e164", "=", normalized.e164).executeTakeFirst();
  if (taken) {
    throw new AccountError(taken.cust_nr === input.custNr ? `${normalized.e164} belongs to topic "${taken.topic}" already` : `${normalized.e164} belongs to another customer`);
  }
  // A number of a customer without a profile (the configuration API's, migration 0030) is that customer's.
  const held = await db.selectFrom("inbound_number_settings").select("cust_nr").where("e164", "=", normalized.e164).executeTakeFirst();
  if (held && held.cust_nr !== input.custNr) throw new AccountError(`${normalized.e164} belongs to another customer`);
  await db.insertInto("inbound_numbers").values({ e164: normalized.e164, cust_nr: input.custNr, topic: input.topic, created_at: now }).execute();
  return normalized.e164;
}

export async function removeTopicNumber(db: Kysely<Database>, custNr: string, number: string, context: NumberContext): Promise<string> {
  const normalized = normalizeFaxNumber(number, context);
  if (!normalized.ok) throw new AccountError(normalized.message);
  const r = await db.deleteFrom("inbound_numbers").where("e164", "=", normalized.e164).where("cust_nr", "=", custNr).executeTakeFirst();
  if (Number(r.numDeletedRows) === 0) throw new AccountError(`Customer ${custNr} has no number ${normalized.e164}`);
  return normalized.e164;
}

export interface TopicSummary {
  custNr: string;
  name: string;
  retentionDays: number | null;
  numbers: string[];
  mailTo: string[];
  mailAttachment: string;
  pushUrl: string | null;
  /** Fax-to-SFTP (sftp-delivery-settings.ts), without its secrets; null when none. */
  sftp: SftpDeliveryView | null;
  /** The profile level of the inbound settings (inbound-settings.ts): fax id, cost center, active; null: not set. */
  settings: InboundLevelSettings;
  /** The most received faxes that may wait for the customer before callers get 486 (inbound-settings.ts waitingFaxes); null: no limit. */
  maxWaiting: number | null;
  comments: string | null;
}

export async function listTopics(db: Kysely<Database>, custNr?: string): Promise<TopicSummary[]> {
  let topics = db.selectFrom("inbound_topics").selectAll().orderBy("cust_nr").orderBy("name");
  if (custNr) topics = topics.where("cust_nr", "=", custNr);
  const rows = await topics.execute();
  let numbers = db.selectFrom("inbound_numbers").selectAll().orderBy("e164");
  if (custNr) numbers = numbers.where("cust_nr", "=", custNr);
  const all = await numbers.execute();
  const sftp = await listSftpDeliveries(db, custNr);
  return rows.map((t) => ({
    custNr: t.cust_nr,
    name: t.name,
    retentionDays: t.retention_days,
    mailTo: t.mail_to ? (JSON.parse(t.mail_to) as string[]) : [],
    mailAttachment: t.mail_attachment ?? "PDF",
    pushUrl: t.push_url,
    numbers: all.filter((n) => n.cust_nr === t.cust_nr && n.topic === t.name).map((n) => n.e164),
    sftp: sftp.get(`${t.cust_nr}\u0000${t.name}`) ?? null,
    settings: levelSettings(t),
    maxWaiting: t.max_waiting,
    comments: t.comments,
  }));
}

/** Issues a pull API password for a customer (all topics, or those named); returns it once. */
export async function issueInboundCredential(
  db: Kysely<Database>,
  input: { custNr: string; topics?: readonly string[] | null; label?: string | null },
  now: number,
): Promise<{ id: string; password: string }> {
  await requireCustomer(db, input.custNr);
  const topics = input.topics && input.topics.length > 0 ? [...new Set(input.topics)] : null;
  const active = await db.selectFrom("inbound_credentials").select((eb) => eb.fn.countAll().as("n")).where("cust_nr", "=", input.custNr).where("disabled_at", "is", null).executeTakeFirstOrThrow();
  if (Number(active.n) >= MAX_ACTIVE_CREDENTIALS) throw new AccountError(`Customer ${input.custNr} has ${MAX_ACTIVE_CREDENTIALS} active pull passwords; disable one first (faxline inbound credential disable)`);
  for (const t of topics ?? []) await requireTopic(db, input.custNr, t);
  const password = randomBytes(18).toString("base64url");
  const id = `cred_${randomBytes(6).toString("hex")}`;
  await db
    .insertInto("inbound_credentials")
    .values({ id, cust_nr: input.custNr, label: input.label ?? null, password_hash: await hashPassword(password), topics: topics ? JSON.stringify(topics) : null, created_at: now, disabled_at: null })
    .execute();
  return { id, password };
}

export async function disableInboundCredential(db: Kysely<Database>, id: string, now: number): Promise<void> {
  const r = await db.updateTable("inbound_credentials").set({ disabled_at: now }).where("id", "=", id).where("disabled_at", "is", null).executeTakeFirst();
  if (Number(r.numUpdatedRows) === 0) throw new AccountError(`No active inbound credential "${id}"`);
}

export async function listInboundCredentials(db: Kysely<Database>, custNr: string) {
  const rows = await db.selectFrom("inbound_credentials").select(["id", "label", "topics", "created_at", "disabled_at"]).where("cust_nr", "=", custNr).orderBy("created_at").execute();
  return rows.map((r) => ({
    id: r.id,
    label: r.label,
    topics: r.topics === null ? null : (JSON.parse(r.topics) as string[]),
    createdAt: new Date(Number(r.created_at)).toISOString(),
    disabled: r.disabled_at !== null,
  }));
}

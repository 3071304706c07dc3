/**
 * The mail-to-fax tables (migration 0035): customers that send by mail, their profiles, users
 * and allowed domains, and the look-up of a sender. Settings are stored as checked JSON
 * (mail-to-fax/settings.ts); PINs only as scrypt hashes.
 */
import type { Kysely, Selectable } from "kysely";
import type { Database, M2fUsersTable } from "../database.ts";
import { parseStoredSettings, type MailToFaxSettings } from "../../mail-to-fax/settings.ts";

export interface MailToFaxCustomer {
  custNr: string;
  login: string;
  settings: MailToFaxSettings;
}

export interface MailToFaxProfile {
  custNr: string;
  name: string;
  settings: MailToFaxSettings;
}

export interface MailToFaxUser {
  email: string;
  custNr: string;
  profile: string | null;
  active: boolean;
  hasPin: boolean;
  settings: MailToFaxSettings;
  createdAt: number;
  updatedAt: number;
}

/** Everything the SMTP intake needs to know about one sender. */
export interface SenderLookup {
  via: "user" | "domain";
  custNr: string;
  /** The customer's mail-to-fax row; null: the customer does not send by mail. */
  customer: MailToFaxCustomer | null;
  /** The login's is_test (null: the booking login does not exist or is disabled). */
  login: { login: string; isTest: boolean } | null;
  profile: MailToFaxProfile | null;
  /** The user's row when via is user. */
  user: MailToFaxUser | null;
  pinHash: string | null;
}

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

export async function getMailToFaxCustomer(db: Kysely<Database>, custNr: string): Promise<MailToFaxCustomer | null> {
  const row = await db.selectFrom("m2f_customers").selectAll().where("cust_nr", "=", custNr).executeTakeFirst();
  return row ? { custNr: row.cust_nr, login: row.login, settings: parseStoredSettings(row.settings) } : null;
}

export async function putMailToFaxCustomer(db: Kysely<Database>, input: { custNr: string; login: string; settings: MailToFaxSettings }, now: number): Promise<void> {
  const settings = JSON.stringify(input.settings);
  await db
    .insertInto("m2f_customers")
    .values({ cust_nr: input.custNr, login: input.login, settings, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column("cust_nr").doUpdateSet({ login: input.login, settings, updated_at: now }))
    .execute();
}

export async function getMailToFaxProfile(db: Kysely<Database>, custNr: string, name: string): Promise<MailToFaxProfile | null> {
  const row = await db.selectFrom("m2f_profiles").selectAll().where("cust_nr", "=", custNr).where("name", "=", name).executeTakeFirst();
  return row ? { custNr: row.cust_nr, name: row.name, settings: parseStoredSettings(row.settings) } : null;
}

export async function listMailToFaxProfiles(db: Kysely<Database>, custNr: string, page: { limit: number; offset: number }): Promise<MailToFaxProfile[]> {
  const rows = await db.selectFrom("m2f_profiles").selectAll().where("cust_nr", "=", custNr).orderBy("name").limit(page.limit).offset(page.offset).execute();
  return rows.map((row) => ({ custNr: row.cust_nr, name: row.name, settings: parseStoredSettings(row.settings) }));
}

export async function putMailToFaxProfile(db: Kysely<Database>, input: { custNr: string; name: string; settings: MailToFaxSettings }, now: number): Promise<void> {
  const settings = JSON.stringify(input.settings);
  await db
    .insertInto("m2f_profiles")
    .values({ cust_nr: input.custNr, name: input.name, settings, created_at: now, updated_at: now })
    .onConflict((oc) => oc.columns(["cust_nr", "name"]).doUpdateSet({ settings, updated_at: now }))
    .execute();
}

export async function deleteMailToFaxProfile(db: Kysely<Database>, custNr: string, name: string): Promise<boolean> {
  const result = await db.deleteFrom("m2f_profiles").where("cust_nr", "=", custNr).where("name", "=", name).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

function userOf(row: Selectable<M2fUsersTable>): MailToFaxUser {
  return {
    email: row.email,
    custNr: row.cust_nr,
    profile: row.profile,
    active: row.active === 1,
    hasPin: row.pin_hash !== null,
    settings: parseStoredSettings(row.settings),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

export async function getMailToFaxUser(db: Kysely<Database>, email: string): Promise<MailToFaxUser | null> {
  const row = await db.selectFrom("m2f_users").selectAll().where("email", "=", normalizeEmail(email)).executeTakeFirst();
  return row ? userOf(row) : null;
}

export async function listMailToFaxUsers(db: Kysely<Database>, custNr: string, page: { limit: number; offset: number }): Promise<MailToFaxUser[]> {
  const rows = await db.selectFrom("m2f_users").selectAll().where("cust_nr", "=", custNr).orderBy("email").limit(page.limit).offset(page.offset).execute();
  return rows.map(userOf);
}

/**
 * Creates or replaces a user (the provider's PUT). `pinHash`: undefined keeps the stored PIN,
 * null removes it. The caller has checked that the address is not another customer's user.
 */
export async function putMailToFaxUser(
  db: Kysely<Database>,
  input: { email: string; custNr: string; profile: string | null; active: boolean; settings: MailToFaxSettings; pinHash?: string | null },
  now: number,
): Promise<void> {
  const email = normalizeEmail(input.email);
  const settings = JSON.stringify(input.settings);
  const active = input.active ? 1 : 0;
  await db
    .insertInto("m2f_users")
    .values({ email, cust_nr: input.custNr, profile: input.profile, active, pin_hash: input.pinHash ?? null, settings, created_at: now, updated_at: now })
    .onConflict((oc) =>
      oc.column("email").doUpdateSet({
        profile: input.profile,
        active,
        settings,
        updated_at: now,
        ...(input.pinHash === undefined ? {} : { pin_hash: input.pinHash }),
      }),
    )
    .execute();
}

export async function deleteMailToFaxUser(db: Kysely<Database>, custNr: string, email: string): Promise<boolean> {
  const result = await db.deleteFrom("m2f_users").where("cust_nr", "=", custNr).where("email", "=", normalizeEmail(email)).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function listMailToFaxDomains(db: Kysely<Database>, custNr: string): Promise<{ domain: string; hasPin: boolean }[]> {
  const rows = await db.selectFrom("m2f_domains").select(["domain", "pin_hash"]).where("cust_nr", "=", custNr).orderBy("domain").execute();
  return rows.map((r) => ({ domain: r.domain, hasPin: r.pin_hash !== null }));
}

/** Allows a domain for a customer (or sets its PIN); false when another customer has it. */
export async function putMailToFaxDomain(db: Kysely<Database>, input: { custNr: string; domain: string; pinHash: string | null }, now: number): Promise<boolean> {
  const domain = input.domain.trim().toLowerCase();
  const existing = await db.selectFrom("m2f_domains").select("cust_nr").where("domain", "=", domain).executeTakeFirst();
  if (existing && existing.cust_nr !== input.custNr) return false;
  if (existing) await db.updateTable("m2f_domains").set({ pin_hash: input.pinHash }).where("domain", "=", domain).execute();
  else await db.insertInto("m2f_domains").values({ domain, cust_nr: input.custNr, pin_hash: input.pinHash, created_at: now }).execute();
  return true;
}

export async function deleteMailToFaxDomain(db: Kysely<Database>, custNr: string, domain: string): Promise<boolean> {
  const result = await db.deleteFrom("m2f_domains").where("cust_nr", "=", custNr).where("domain", "=", domain.trim().toLowerCase()).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The sender's records: its user row, else its domain's; null when neither exists. */
export async function lookUpSender(db: Kysely<Database>, address: string): Promise<SenderLookup | null> {
  const email = normalizeEmail(address);
  const userRow = await db.selectFrom("m2f_users").selectAll().where("email", "=", email).executeTakeFirst();
  let via: "user" | "domain";
  let custNr: string;
  let pinHash: string | null;
  let user: MailToFaxUser | null = null;
  if (userRow) {
    via = "user";
    custNr = userRow.cust_nr;
    pinHash = userRow.pin_hash;
    user = userOf(userRow);
  } else {
    const domain = email.slice(email.lastIndexOf("@") + 1);
    const domainRow = await db.selectFrom("m2f_domains").select(["cust_nr", "pin_hash"]).where("domain", "=", domain).executeTakeFirst();
    if (!domainRow) return null;
    via = "domain";
    custNr = domainRow.cust_nr;
    pinHash = domainRow.pin_hash;
  }
  const customer = await getMailToFaxCustomer(db, custNr);
  const profile = user?.profile ? await getMailToFaxProfile(db, custNr, user.profile) : null;
  let login: SenderLookup["login"] = null;
  if (customer) {
    const row = await db.selectFrom("logins").select(["login", "is_test", "disabled_at", "cust_nr"]).where("login", "=", customer.login).executeTakeFirst();
    if (row && row.disabled_at === null && row.cust_nr === custNr) login = { login: row.login, isTest: row.is_test === 1 };
  }
  return { via, custNr, customer, login, profile, user, pinHash };
}

/** Until when a client address is refused for a sender after wrong PINs; null: not locked out. */
export async function pinLockedUntil(db: Kysely<Database>, remote: string, sender: string, now: number): Promise<number | null> {
  const row = await db.selectFrom("m2f_pin_failures").select("locked_until").where("remote", "=", remote).where("sender", "=", sender).executeTakeFirst();
  return row?.locked_until != null && row.locked_until > now ? row.locked_until : null;
}

/**
 * Counts a wrong PIN from `remote` for `sender`, in one statement so that nodes taking mail at
 * once count every one: failures older than `lockoutMs` (or an ended lockout) start again at 1;
 * the `maxFailures`-th locks the pair out for `lockoutMs`. Returns the failures counted.
 */
export async function recordWrongPin(db: Kysely<Database>, pair: { remote: string; sender: string }, now: number, limits: { maxFailures: number; lockoutMs: number }): Promise<number> {
  const { maxFailures, lockoutMs } = limits;
  const row = await db
    .insertInto("m2f_pin_failures")
    .values({ remote: pair.remote, sender: pair.sender, failures: 1, locked_until: maxFailures <= 1 ? now + lockoutMs : null, updated_at: now })
    .onConflict((oc) =>
      oc.columns(["remote", "sender"]).doUpdateSet((eb) => {
        // The count this wrong PIN makes: a stale count (or one whose lockout ended) starts again.
        const stale = eb.or([eb("m2f_pin_failures.updated_at", "<=", now - lockoutMs), eb.and([eb("m2f_pin_failures.locked_until", "is not", null), eb("m2f_pin_failures.locked_until", "<=", now)])]);
        const failures = eb.case().when(stale).then(1).else(eb("m2f_pin_failures.failures", "+", 1)).end();
        return {
          failures,
          locked_until: eb.case().when(failures, ">=", maxFailures).then(now + lockoutMs).else(null).end(),
          updated_at: now,
        };
      }),
    )
    .returning("failures")
    .executeTakeFirstOrThrow();
  return Number(row.failures);
}

/** A right PIN: the pair's wrong ones are forgotten. */
export async function clearWrongPins(db: Kysely<Database>, remote: string, sender: string): Promise<void> {
  await db.deleteFrom("m2f_pin_failures").where("remote", "=", remote).where("sender", "=", sender).execute();
}

/** Removes the rows whose counting period and lockout have both passed (the retention role). */
export async function forgetWrongPins(db: Kysely<Database>, now: number, lockoutMs: number): Promise<number> {
  const result = await db
    .deleteFrom("m2f_pin_failures")
    .where("updated_at", "<=", now - lockoutMs)
    .where((eb) => eb.or([eb("locked_until", "is", null), eb("locked_until", "<=", now)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

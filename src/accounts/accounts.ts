/**
 * Customers and logins. A customer (custNr, e.g. 99999TE) owns logins; a login authenticates
 * API calls and sees only the jobs it created. A test login's jobs run on the simulated test
 * line only. Operators manage these with `faxline accounts …`.
 */
import { BlockList, isIP } from "node:net";
import type { Kysely } from "kysely";
import type { Database, LoginRow } from "../store/database.ts";
import { hashPassword } from "./passwords.ts";

export const CUSTOMER_NUMBER_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
export const LOGIN_PATTERN = /^[A-Za-z0-9._@+-]{1,128}$/;

export class AccountError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AccountError";
  }
}

/** Parses CIDR blocks ("10.1.0.0/16", "2001:db8::/32", "203.0.113.7"); throws AccountError on a bad one. */
export function parseAllowList(entries: readonly string[]): string[] {
  return entries.map((raw) => {
    const entry = raw.trim();
    const [address, prefix] = entry.split("/");
    const family = isIP(address ?? "");
    const bits = prefix === undefined ? (family === 6 ? 128 : 32) : Number(prefix);
    if (family === 0 || !Number.isInteger(bits) || bits < 0 || bits > (family === 6 ? 128 : 32)) {
      throw new AccountError(`"${entry}" is not an IP address or CIDR block (e.g. 203.0.113.0/24)`);
    }
    return `${address}/${bits}`;
  });
}

export function allowListMatches(cidrs: readonly string[], clientIp: string): boolean {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [address, bits] = cidr.split("/") as [string, string];
    list.addSubnet(address, Number(bits), isIP(address) === 6 ? "ipv6" : "ipv4");
  }
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(clientIp);
  const ip = mapped ? mapped[1]! : clientIp;
  return list.check(ip, isIP(ip) === 6 ? "ipv6" : "ipv4");
}

export interface CreateLoginInput {
  custNr: string;
  login: string;
  password: string;
  isTest: boolean;
  /** An operator login: the console's Operations pages. */
  isAdmin?: boolean;
  /** May change the customer's settings in the console. */
  isManager?: boolean;
  ipAllowList?: string[] | null;
  retentionDays?: number | null;
}

export async function createLogin(db: Kysely<Database>, input: CreateLoginInput, now: number): Promise<{ customerCreated: boolean }> {
  if (!CUSTOMER_NUMBER_PATTERN.test(input.custNr)) {
    throw new AccountError(`Customer number "${input.custNr}" must be 1-32 characters of A-Z, a-z, 0-9, "_" or "-"`);
  }
  if (!LOGIN_PATTERN.test(input.login)) {
    throw new AccountError(`Login "${input.login}" must be 1-128 characters of letters, digits and . _ @ + -`);
  }
  if (input.password.length < 8) throw new AccountError("The password must have at least 8 characters");
  const allow = input.ipAllowList && input.ipAllowList.length > 0 ? parseAllowList(input.ipAllowList) : null;
  const passwordHash = await hashPassword(input.password);
  return db.transaction().execute(async (trx) => {
    const existingLogin = await trx.selectFrom("logins").select("login").where("login", "=", input.login).executeTakeFirst();
    if (existingLogin) throw new AccountError(`Login "${input.login}" exists already`);
    const customer = await trx.selectFrom("customers").select("cust_nr").where("cust_nr", "=", input.custNr).executeTakeFirst();
    if (!customer) {
      await trx
        .insertInto("customers")
        .values({ cust_nr: input.custNr, retention_days: input.retentionDays ?? null, created_at: now })
        .execute();
    } else if (input.retentionDays !== undefined && input.retentionDays !== null) {
      await trx.updateTable("customers").set({ retention_days: input.retentionDays }).where("cust_nr", "=", input.custNr).execute();
    }
    await trx
      .insertInto("logins")
      .values({
        login: input.login,
        cust_nr: input.custNr,
        password_hash: passwordHash,
        is_test: input.isTest ? 1 : 0,
        is_admin: input.isAdmin ? 1 : 0,
        is_manager: input.isManager ? 1 : 0,
        ip_allow_list: allow ? JSON.stringify(allow) : null,
        disabled_at: null,
        created_at: now,
      })
      .execute();
    return { customerCreated: !customer };
  });
}

export interface LoginSummary {
  login: string;
  custNr: string;
  test: boolean;
  admin: boolean;
  manager: boolean;
  disabled: boolean;
  ipAllowList: string[] | null;
  retentionDays: number | null;
  createdAt: string;
}

export async function listLogins(db: Kysely<Database>, custNr?: string): Promise<LoginSummary[]> {
  let query = db
    .selectFrom("logins")
    .innerJoin("customers", "customers.cust_nr", "logins.cust_nr")
    .select(["logins.login", "logins.cust_nr", "logins.is_test", "logins.is_admin", "logins.is_manager", "logins.disabled_at", "logins.ip_allow_list", "logins.created_at", "customers.retention_days"])
    .orderBy("logins.cust_nr")
    .orderBy("logins.login");
  if (custNr) query = query.where("logins.cust_nr", "=", custNr);
  const rows = await query.execute();
  return rows.map((r) => ({
    login: r.login,
    custNr: r.cust_nr,
    test: r.is_test === 1,
    admin: r.is_admin === 1,
    manager: r.is_manager === 1,
    disabled: r.disabled_at !== null,
    ipAllowList: r.ip_allow_list === null ? null : (JSON.parse(r.ip_allow_list) as string[]),
    retentionDays: r.retention_days,
    createdAt: new Date(Number(r.created_at)).toISOString(),
  }));
}

export async function setLoginDisabled(db: Kysely<Database>, login: string, disabled: boolean, now: number): Promise<void> {
  const result = await db
    .updateTable("logins")
    .set({ disabled_at: disabled ? now : null })
    .where("login", "=", login)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) throw new AccountError(`No login "${login}"`);
}

export async function setLoginManager(db: Kysely<Database>, login: string, manager: boolean): Promise<void> {
  const result = await db.updateTable("logins").set({ is_manager: manager ? 1 : 0 }).where("login", "=", login).executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) throw new AccountError(`No login "${login}"`);
}

export async function setLoginAdmin(db: Kysely<Database>, login: string, admin: boolean): Promise<void> {
  const result = await db.updateTable("logins").set({ is_admin: admin ? 1 : 0 }).where("login", "=", login).executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) throw new AccountError(`No login "${login}"`);
}

/** Sets a login's password (at least 8 characters) and ends its console sessions but `keepSession`. */
export async function setLoginPassword(db: Kysely<Database>, login: string, password: string, keepSessionHash?: string): Promise<void> {
  if (password.length < 8) throw new AccountError("The password must have at least 8 characters");
  if (password.length > 1024) throw new AccountError("The password may have at most 1024 characters");
  const passwordHash = await hashPassword(password);
  const result = await db.updateTable("logins").set({ password_hash: passwordHash }).where("login", "=", login).executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) throw new AccountError(`No login "${login}"`);
  let ended = db.deleteFrom("console_sessions").where("login", "=", login);
  if (keepSessionHash !== undefined) ended = ended.where("token_hash", "!=", keepSessionHash);
  await ended.execute();
}

/** Sets (or with null or an empty list removes) a login's IP allow-list. */
export async function setLoginAllowList(db: Kysely<Database>, login: string, entries: readonly string[] | null): Promise<string[] | null> {
  const allow = entries && entries.length > 0 ? parseAllowList(entries) : null;
  const result = await db.updateTable("logins").set({ ip_allow_list: allow ? JSON.stringify(allow) : null }).where("login", "=", login).executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) throw new AccountError(`No login "${login}"`);
  return allow;
}

export async function setCustomerRetention(db: Kysely<Database>, custNr: string, days: number | null): Promise<void> {
  const result = await db.updateTable("customers").set({ retention_days: days }).where("cust_nr", "=", custNr).executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) throw new AccountError(`No customer "${custNr}"`);
}

export async function findLogin(db: Kysely<Database>, login: string): Promise<LoginRow | undefined> {
  return db.selectFrom("logins").selectAll().where("login", "=", login).executeTakeFirst();
}

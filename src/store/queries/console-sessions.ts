/**
 * Console sessions (migration 0007). Rows are keyed by the SHA-256 of the cookie's token; the
 * console (console/console-sessions.ts) decides expiry and what a session may do.
 */
import type { Kysely } from "kysely";
import type { Database } from "../database.ts";

export interface NewConsoleSession {
  tokenHash: string;
  login: string;
  csrfToken: string;
  now: number;
  expiresAt: number;
  clientAddress: string;
}

export async function insertConsoleSession(db: Kysely<Database>, s: NewConsoleSession): Promise<void> {
  await db
    .insertInto("console_sessions")
    .values({ token_hash: s.tokenHash, login: s.login, csrf_token: s.csrfToken, created_at: s.now, last_seen_at: s.now, expires_at: s.expiresAt, client_address: s.clientAddress })
    .execute();
}

/** The session with its login's current state, or undefined when there is none or it has expired. */
export async function findConsoleSession(db: Kysely<Database>, tokenHash: string, now: number) {
  return db
    .selectFrom("console_sessions")
    .innerJoin("logins", "logins.login", "console_sessions.login")
    .select([
      "console_sessions.token_hash",
      "console_sessions.csrf_token",
      "console_sessions.created_at",
      "console_sessions.last_seen_at",
      "console_sessions.expires_at",
      "logins.login",
      "logins.cust_nr",
      "logins.is_test",
      "logins.is_admin",
      "logins.is_manager",
      "logins.disabled_at",
      "logins.ip_allow_list",
    ])
    .where("console_sessions.token_hash", "=", tokenHash)
    .where("console_sessions.expires_at", ">", now)
    .executeTakeFirst();
}

export async function touchConsoleSession(db: Kysely<Database>, tokenHash: string, now: number, expiresAt: number): Promise<void> {
  await db.updateTable("console_sessions").set({ last_seen_at: now, expires_at: expiresAt }).where("token_hash", "=", tokenHash).execute();
}

export async function deleteConsoleSession(db: Kysely<Database>, tokenHash: string): Promise<void> {
  await db.deleteFrom("console_sessions").where("token_hash", "=", tokenHash).execute();
}

/** Removes sessions that have expired; returns how many. */
export async function deleteExpiredConsoleSessions(db: Kysely<Database>, now: number): Promise<number> {
  const r = await db.deleteFrom("console_sessions").where("expires_at", "<=", now).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/**
 * Console sign-in and sessions.
 *
 * - Sign-in checks the login and password with the API's Authenticator (same lockouts, disabled
 *   logins and IP allow-lists), then stores a session row (migration 0007) and sets the cookie
 *   `faxline_session`: a random 256-bit token, HttpOnly, SameSite=Strict, Path=/, Secure when the
 *   request came over HTTPS. Only the token's SHA-256 is stored.
 * - Signing in ends the session the browser's cookie still named.
 * - Every request re-reads the session with its login: a disabled login, an address no longer on
 *   the allow-list, or a session past `console.sessionIdle` without use or `console.sessionMax`
 *   after sign-in is refused (401).
 * - CSRF: requests that change something (any method but GET and HEAD) must carry the session's
 *   CSRF token in X-CSRF-Token (403 otherwise). With SameSite=Strict and JSON-only bodies this is
 *   the second of two locks.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Kysely } from "kysely";
import { allowListMatches } from "../accounts/accounts.ts";
import type { AuthenticatedAccount, Authenticator } from "../api/plugins/authenticate.ts";
import { ApiError } from "../errors/api-errors.ts";
import type { Clock } from "../lib/clock.ts";
import type { Database } from "../store/database.ts";
import {
  deleteConsoleSession,
  deleteExpiredConsoleSessions,
  findConsoleSession,
  insertConsoleSession,
  touchConsoleSession,
} from "../store/queries/console-sessions.ts";

export const SESSION_COOKIE = "faxline_session";
export const CSRF_HEADER = "x-csrf-token";
/** A session's expiry is written back at most this often (each request would be a write), or a quarter of the idle time when that is shorter. */
const TOUCH_EVERY_MS = 30_000;

export interface ConsoleAccount extends AuthenticatedAccount {
  csrfToken: string;
  /** When the session ends if left idle (ms). */
  expiresAt: number;
}

declare module "fastify" {
  interface FastifyRequest {
    consoleSession?: ConsoleAccount & { tokenHash: string };
  }
}

function tokenHash(token: string): string {
  return createHash("sha256").update(token).digest("base64url");
}

/** The value of one cookie from a Cookie header, or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export interface ConsoleSessionOptions {
  db: Kysely<Database>;
  clock: Clock;
  authenticator: Authenticator;
  idleMs: number;
  maxMs: number;
}

export class ConsoleSessions {
  readonly #o: ConsoleSessionOptions;

  constructor(options: ConsoleSessionOptions) {
    this.#o = options;
  }

  #cookie(request: FastifyRequest, value: string, maxAgeSeconds?: number): string {
    const parts = [`${SESSION_COOKIE}=${value}`, "Path=/", "HttpOnly", "SameSite=Strict"];
    if (request.protocol === "https") parts.push("Secure");
    if (maxAgeSeconds !== undefined) parts.push(`Max-Age=${maxAgeSeconds}`);
    return parts.join("; ");
  }

  async signIn(request: FastifyRequest, reply: FastifyReply, login: string, password: string): Promise<ConsoleAccount> {
    const account = await this.#o.authenticator.verify(login, password, request.ip, reply);
    const now = this.#o.clock.now();
    await deleteExpiredConsoleSessions(this.#o.db, now);
    // A session this browser still held ends: one browser, one session.
    const previous = readCookie(request.headers.cookie, SESSION_COOKIE);
    if (previous) await deleteConsoleSession(this.#o.db, tokenHash(previous));
    const token = randomBytes(32).toString("base64url");
    const csrfToken = randomBytes(24).toString("base64url");
    const expiresAt = Math.min(now + this.#o.idleMs, now + this.#o.maxMs);
    await insertConsoleSession(this.#o.db, { tokenHash: tokenHash(token), login: account.login, csrfToken, now, expiresAt, clientAddress: request.ip });
    reply.header("Set-Cookie", this.#cookie(request, token, Math.ceil(this.#o.maxMs / 1000)));
    return { ...account, csrfToken, expiresAt };
  }

  async signOut(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const token = readCookie(request.headers.cookie, SESSION_COOKIE);
    if (token) await deleteConsoleSession(this.#o.db, tokenHash(token));
    reply.header("Set-Cookie", this.#cookie(request, "", 0));
  }

  /**
   * The request's session, or null when it carries no session cookie. Throws 401 for an ended
   * or unusable session and 403 for a change without the CSRF token.
   */
  async resolve(request: FastifyRequest, options: { touch?: boolean } = {}): Promise<(ConsoleAccount & { tokenHash: string }) | null> {
    if (request.consoleSession) return request.consoleSession;
    const token = readCookie(request.headers.cookie, SESSION_COOKIE);
    if (!token) return null;
    const now = this.#o.clock.now();
    const hash = tokenHash(token);
    const row = await findConsoleSession(this.#o.db, hash, now);
    if (!row) throw new ApiError("authentication_failed", "Your console session has ended; sign in again");
    if (row.disabled_at !== null) throw new ApiError("authentication_failed", `Login "${row.login}" is disabled`);
    const allowList = row.ip_allow_list === null ? null : (JSON.parse(row.ip_allow_list) as string[]);
    if (allowList && !allowListMatches(allowList, request.ip)) throw new ApiError("ip_not_allowed", `Login "${row.login}" may not be used from ${request.ip}`);
    if (request.method !== "GET" && request.method !== "HEAD") {
      const sent = request.headers[CSRF_HEADER];
      if (typeof sent !== "string" || !sameSecret(sent, row.csrf_token)) {
        throw new ApiError("csrf_token_invalid", "This change needs the session's X-CSRF-Token header; reload the console and try again");
      }
    }
    let expiresAt = Number(row.expires_at);
    // A live-update stream checks its session without using it (touch: false): an unattended open
    // tab must still reach the idle end.
    if (options.touch !== false && now - Number(row.last_seen_at) >= Math.min(TOUCH_EVERY_MS, this.#o.idleMs / 4)) {
      expiresAt = Math.min(now + this.#o.idleMs, Number(row.created_at) + this.#o.maxMs);
      await touchConsoleSession(this.#o.db, hash, now, expiresAt);
    }
    const session = {
      login: row.login,
      custNr: row.cust_nr,
      isTest: row.is_test === 1,
      isAdmin: row.is_admin === 1,
      isManager: row.is_manager === 1,
      csrfToken: row.csrf_token,
      expiresAt,
      tokenHash: hash,
    };
    request.consoleSession = session;
    return session;
  }

  /** A preHandler for console routes: the session, or 401. */
  async require(request: FastifyRequest): Promise<ConsoleAccount & { tokenHash: string }> {
    const session = await this.resolve(request);
    if (!session) throw new ApiError("authentication_failed", "Sign in to the console first");
    return session;
  }
}

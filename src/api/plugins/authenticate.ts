/**
 * HTTP Basic authentication for /rest/v1, as the contract requires on every call.
 *
 * A request without an Authorization header may instead carry a console session cookie
 * (console/console-sessions.ts): the web console calls the same routes as any client.
 *
 * Order of checks: credentials present (401) → this login+address not locked out (429) →
 * password (401; unknown logins cost the same hash time) → login enabled (401) → client
 * address on the login's allow-list, if it has one (401) → `custNr` in the path is the login's
 * customer (401).
 *
 * Throttling: `auth.maxFailures` failures of one login from one address lock that pair out for
 * `auth.lockout`, doubling with each further lockout up to an hour. Verified passwords are
 * cached for `auth.cacheTtl` under a keyed hash, so the slow scrypt runs about once per login
 * and minute; disabling a login therefore takes effect within that time.
 */
import { createHmac, randomBytes } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import { allowListMatches, findLogin } from "../../accounts/accounts.ts";
import { hashPassword, verifyPassword } from "../../accounts/passwords.ts";
import { ApiError } from "../../errors/api-errors.ts";
import type { Kysely } from "kysely";
import type { Database } from "../../store/database.ts";
import type { Clock } from "../../lib/clock.ts";

export interface AuthenticatedAccount {
  login: string;
  custNr: string;
  isTest: boolean;
  /** An operator login (logins.is_admin): the console's Operations pages. */
  isAdmin: boolean;
  /** May change the customer's settings in the console (logins.is_manager). */
  isManager: boolean;
}

/**
 * Resolves a request's console session (cookie, and the CSRF header on changes) to its account,
 * or null when it carries none. Throws ApiError for a session that exists but may not be used.
 */
export type SessionResolver = (request: FastifyRequest) => Promise<AuthenticatedAccount | null>;

declare module "fastify" {
  interface FastifyRequest {
    account?: AuthenticatedAccount;
  }
}

export interface AuthOptions {
  db: Kysely<Database>;
  clock: Clock;
  maxFailures: number;
  lockoutMs: number;
  cacheTtlMs: number;
  /** The console's sessions; absent: Basic auth only. */
  sessions?: SessionResolver;
}

interface FailureState {
  failures: number;
  lockouts: number;
  lockedUntil: number;
  lastFailure: number;
}

const MAX_LOCKOUT_MS = 3_600_000;

export function parseBasicAuth(header: string | undefined): { login: string; password: string } | null {
  if (!header) return null;
  const m = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (!m) return null;
  const decoded = Buffer.from(m[1]!, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon <= 0) return null;
  return { login: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export class Authenticator {
  readonly #options: AuthOptions;
  readonly #cacheKey = randomBytes(32);
  readonly #verified = new Map<string, { account: AuthenticatedAccount; expires: number; allowList: string[] | null }>();
  readonly #failures = new Map<string, FailureState>();
  #dummyHash: Promise<string> | null = null;

  constructor(options: AuthOptions) {
    this.#options = options;
  }

  #fingerprint(login: string, password: string): string {
    return createHmac("sha256", this.#cacheKey).update(login).update("\0").update(password).digest("base64url");
  }

  async authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const credentials = parseBasicAuth(request.headers.authorization);
    let account: AuthenticatedAccount;
    if (!credentials && request.headers.authorization === undefined && this.#options.sessions) {
      // The web console: a session cookie instead of Basic credentials (console/console-sessions.ts).
      const session = await this.#options.sessions(request);
      if (!session) {
        reply.header("WWW-Authenticate", 'Basic realm="faxline", charset="UTF-8"');
        throw new ApiError("authentication_failed", "Missing HTTP Basic credentials (Authorization: Basic base64(login:password))");
      }
      account = session;
    } else {
      if (!credentials) {
        reply.header("WWW-Authenticate", 'Basic realm="faxline", charset="UTF-8"');
        throw new ApiError("authentication_failed", "Missing HTTP Basic credentials (Authorization: Basic base64(login:password))");
      }
      try {
        account = await this.verify(credentials.login, credentials.password, request.ip, reply);
      } catch (err) {
        // Every 401 carries a challenge (RFC 9110 §11.6.1).
        if (err instanceof ApiError && err.status === 401) reply.header("WWW-Authenticate", 'Basic realm="faxline", charset="UTF-8"');
        throw err;
      }
    }
    const params = request.params as { custNr?: string } | undefined;
    if (params?.custNr !== undefined && params.custNr !== account.custNr) {
      reply.header("WWW-Authenticate", 'Basic realm="faxline", charset="UTF-8"');
      throw new ApiError(
        "customer_mismatch",
        `Login "${account.login}" belongs to customer ${account.custNr}, not ${params.custNr}`,
      );
    }
    request.account = account;
  }

  /**
   * Checks a login and password from a client address: throttling (429), password (401),
   * disabled (401), allow-list (401). The API's Basic auth and the console's sign-in both use it,
   * so both share one lockout per login and address.
   */
  async verify(login: string, password: string, ip: string, reply?: FastifyReply): Promise<AuthenticatedAccount> {
    const now = this.#options.clock.now();
    const throttleKey = `${login}\0${ip}`;
    const state = this.#failures.get(throttleKey);
    if (state && state.lockedUntil > now) {
      const seconds = Math.ceil((state.lockedUntil - now) / 1000);
      reply?.header("Retry-After", String(seconds));
      throw new ApiError("too_many_auth_failures", `Too many failed logins for "${login}" from this address; try again in ${seconds} s`);
    }

    const fingerprint = this.#fingerprint(login, password);
    let entry = this.#verified.get(fingerprint);
    if (entry && entry.expires <= now) {
      this.#verified.delete(fingerprint);
      entry = undefined;
    }
    if (!entry) {
      const row = await findLogin(this.#options.db, login);
      const ok = row ? await verifyPassword(password, row.password_hash) : await this.#burnHashTime(password);
      if (!row || !ok || row.disabled_at !== null) {
        this.#recordFailure(throttleKey, now);
        throw new ApiError("authentication_failed", row && ok ? `Login "${login}" is disabled` : "Wrong login or password");
      }
      entry = {
        account: { login: row.login, custNr: row.cust_nr, isTest: row.is_test === 1, isAdmin: row.is_admin === 1, isManager: row.is_manager === 1 },
        allowList: row.ip_allow_list === null ? null : (JSON.parse(row.ip_allow_list) as string[]),
        expires: now + this.#options.cacheTtlMs,
      };
      this.#verified.set(fingerprint, entry);
      if (this.#verified.size > 10_000) this.#verified.delete(this.#verified.keys().next().value!);
    }
    this.#failures.delete(throttleKey);

    if (entry.allowList && !allowListMatches(entry.allowList, ip)) {
      throw new ApiError("ip_not_allowed", `Login "${entry.account.login}" may not be used from ${ip}`);
    }
    return entry.account;
  }

  /**
   * Runs another kind of password check (the inbound pull API's customer passwords) under the
   * same throttle: `name` and the client address share the failure count and lockout, and a
   * failed check (null) counts as a failure. A check that cannot decide (undefined: not this kind
   * of user name) changes nothing. Throws 429 while locked out, 401 on failure.
   */
  async throttled<T>(name: string, ip: string, reply: FastifyReply | undefined, check: () => Promise<T | null | undefined>, failure: string): Promise<T | undefined> {
    const now = this.#options.clock.now();
    const throttleKey = `${name}\0${ip}`;
    const state = this.#failures.get(throttleKey);
    if (state && state.lockedUntil > now) {
      const seconds = Math.ceil((state.lockedUntil - now) / 1000);
      reply?.header("Retry-After", String(seconds));
      throw new ApiError("too_many_auth_failures", `Too many failed logins for "${name}" from this address; try again in ${seconds} s`);
    }
    const result = await check();
    if (result === undefined) return undefined;
    if (result === null) {
      this.#recordFailure(throttleKey, now);
      throw new ApiError("authentication_failed", failure);
    }
    this.#failures.delete(throttleKey);
    return result;
  }

  /** Forgets cached verifications of a login (after its password changed). */
  forget(login: string): void {
    for (const [key, entry] of this.#verified) if (entry.account.login === login) this.#verified.delete(key);
  }

  #recordFailure(key: string, now: number): void {
    const state = this.#failures.get(key) ?? { failures: 0, lockouts: 0, lockedUntil: 0, lastFailure: 0 };
    // Failures older than a day are forgotten.
    if (now - state.lastFailure > 86_400_000) {
      state.failures = 0;
      state.lockouts = 0;
    }
    state.failures += 1;
    state.lastFailure = now;
    if (state.failures >= this.#options.maxFailures) {
      state.lockedUntil = now + Math.min(MAX_LOCKOUT_MS, this.#options.lockoutMs * 2 ** state.lockouts);
      state.lockouts += 1;
      state.failures = 0;
    }
    this.#failures.set(key, state);
    if (this.#failures.size > 100_000) this.#failures.delete(this.#failures.keys().next().value!);
  }

  /** Spends the time of one verification, so unknown logins cannot be told apart by timing. */
  async #burnHashTime(password: string): Promise<boolean> {
    this.#dummyHash ??= hashPassword("faxline-dummy-password");
    await verifyPassword(password, await this.#dummyHash);
    return false;
  }
}

/**
 * Who may poll: HTTP Basic `<customer number>:<password>` with a password issued by
 * `faxline inbound credential issue` (the provider's scheme), or a login of the customer with its
 * own password (`<login>:<password>`, as for the send API). Failed tries count against the same
 * throttle and lockout as the API's logins (auth.maxFailures, auth.lockout), checked before
 * anything is looked up, and fail with one message for both kinds. Verified pull passwords are
 * remembered for auth.cacheTtl under a keyed hash, so the slow scrypt runs about once a minute
 * per poller; disabling one takes effect within that time. A login is checked as the send API
 * checks it (allow-list, disabled, its own cache) on every request.
 */
import { createHmac, randomBytes } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Kysely } from "kysely";
import { verifyPassword } from "../accounts/passwords.ts";
import { parseBasicAuth, type Authenticator } from "../api/plugins/authenticate.ts";
import { ApiError } from "../errors/api-errors.ts";
import type { Clock } from "../lib/clock.ts";
import type { Database } from "../store/database.ts";

export interface Poller {
  custNr: string;
  /** Topics the password is for; null: every topic of the customer. */
  topics: readonly string[] | null;
  /** What authenticated: a credential id or a login name (for logs). */
  who: string;
}

export class PullAuthenticator {
  readonly #key = randomBytes(32);
  readonly #verified = new Map<string, { poller: Poller; expires: number }>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly logins: Authenticator,
    private readonly cacheTtlMs: number,
  ) {}

  async authenticate(request: FastifyRequest, reply: FastifyReply): Promise<Poller> {
    const credentials = parseBasicAuth(request.headers.authorization);
    if (!credentials) {
      reply.header("WWW-Authenticate", 'Basic realm="faxline inbound", charset="UTF-8"');
      throw new ApiError("authentication_failed", "Missing HTTP Basic credentials (Authorization: Basic base64(customer number:password))");
    }
    try {
      return await this.#verify(credentials.login, credentials.password, request.ip, reply);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        reply.header("WWW-Authenticate", 'Basic realm="faxline inbound", charset="UTF-8"');
        // One message whichever kind of user name it was: a failure tells nobody which
        // customer numbers have pull passwords.
        if (err.definition.code === "authentication_failed") throw new ApiError("authentication_failed", "Wrong user name or password");
      }
      throw err;
    }
  }

  async #verify(user: string, password: string, ip: string, reply: FastifyReply): Promise<Poller> {
    const now = this.clock.now();
    // Only issued pull passwords are cached here; a login goes through the login checks (its
    // allow-list, disabling, its own cache) on every request.
    const fingerprint = createHmac("sha256", this.#key).update(user).update("\0").update(password).digest("base64url");
    const cached = this.#verified.get(fingerprint);
    if (cached && cached.expires > now) return cached.poller;
    // The lockout is checked before anything is looked up.
    const issued = await this.logins.throttled(
      user,
      ip,
      reply,
      async () => {
        const rows = await this.db.selectFrom("inbound_credentials").selectAll().where("cust_nr", "=", user).where("disabled_at", "is", null).limit(MAX_CREDENTIALS).execute();
        if (rows.length === 0) return undefined;
        for (const c of rows) {
          if (await verifyPassword(password, c.password_hash)) return { custNr: c.cust_nr, topics: c.topics === null ? null : (JSON.parse(c.topics) as string[]), who: c.id } satisfies Poller;
        }
        return null;
      },
      "Wrong user name or password",
    );
    if (issued !== undefined) {
      this.#verified.set(fingerprint, { poller: issued, expires: now + this.cacheTtlMs });
      if (this.#verified.size > 10_000) this.#verified.delete(this.#verified.keys().next().value!);
      return issued;
    }
    // Not a customer with pull passwords: a login of a customer, as for the send API.
    const account = await this.logins.verify(user, password, ip, reply);
    return { custNr: account.custNr, topics: null, who: account.login };
  }
}

/** Active pull passwords a customer may hold (issuing refuses more): bounds a failed check's work. */
export const MAX_CREDENTIALS = 10;

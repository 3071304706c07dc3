/**
 * Who may poll: HTTP Basic `<customer number>:<password>` with a password issued by
 * `faxline inbound credential issue` (the provider's scheme), or a login of the customer with its
 * own password (`<login>:<password>`, as for the send API). Failed tries count against the same
 * throttle and lockout as the API's logins (auth.maxFailures, auth.lockout). Verified passwords
 * are remembered for auth.cacheTtl under a keyed hash, so the slow scrypt runs about once a minute
 * per poller, not per poll; disabling a credential takes effect within that time.
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
    const now = this.clock.now();
    const fingerprint = createHmac("sha256", this.#key).update(credentials.login).update("\0").update(credentials.password).digest("base64url");
    const cached = this.#verified.get(fingerprint);
    if (cached && cached.expires > now) return cached.poller;
    try {
      const poller = await this.#verify(credentials.login, credentials.password, request.ip, reply);
      this.#verified.set(fingerprint, { poller, expires: now + this.cacheTtlMs });
      if (this.#verified.size > 10_000) this.#verified.delete(this.#verified.keys().next().value!);
      return poller;
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) reply.header("WWW-Authenticate", 'Basic realm="faxline inbound", charset="UTF-8"');
      throw err;
    }
  }

  async #verify(user: string, password: string, ip: string, reply: FastifyReply): Promise<Poller> {
    const issued = await this.db.selectFrom("inbound_credentials").selectAll().where("cust_nr", "=", user).where("disabled_at", "is", null).execute();
    if (issued.length > 0) {
      return this.logins.throttled(
        user,
        ip,
        reply,
        async () => {
          for (const c of issued) {
            if (await verifyPassword(password, c.password_hash)) return { custNr: c.cust_nr, topics: c.topics === null ? null : (JSON.parse(c.topics) as string[]), who: c.id };
          }
          return null;
        },
        "Wrong customer number or password",
      );
    }
    // Not a customer with pull passwords: a login of a customer, as for the send API.
    const account = await this.logins.verify(user, password, ip, reply);
    return { custNr: account.custNr, topics: null, who: account.login };
  }
}

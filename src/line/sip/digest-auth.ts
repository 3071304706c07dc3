/**
 * SIP digest authentication (RFC 3261 §22.4, RFC 8760 for SHA-256). Client side: answers a 401
 * `WWW-Authenticate` or 407 `Proxy-Authenticate` challenge with an `Authorization` or
 * `Proxy-Authorization` header.
 *
 * The hashing is HTTP digest's (RFC 7616), so it reuses net/digest-auth.ts; SIP
 * adds only the choice of header, the Request-URI as `uri`, and the choice among several
 * challenges (RFC 8760 §2.4: a server may offer SHA-256 and MD5 side by side; we take the
 * strongest we support). qop "auth" is used when offered; "auth-int" alone falls back to the
 * RFC 2069 form, which servers offering only auth-int will refuse.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { checkDigestResponse, digestAuthorization, isSupportedDigestAlgorithm, parseDigestChallenge, parseDigestParams, type DigestChallenge } from "../../net/digest-auth.ts";
import type { SipResponse } from "./sip-message.ts";

export type { DigestChallenge };

export interface SipCredentials {
  username: string;
  password: string;
  /** Answer only challenges for this realm; absent answers any realm. */
  realm?: string;
}

export interface SipChallenge {
  /** The header to answer with. */
  authorizationHeader: "authorization" | "proxy-authorization";
  challenge: DigestChallenge;
  /** `stale=true`: the nonce expired but the credentials were right; retrying is worth it. */
  stale: boolean;
}

const STRENGTH: Record<string, number> = { "SHA-256": 2, "SHA-256-SESS": 2, MD5: 1, "MD5-SESS": 1 };

/** The challenge to answer in a 401 or 407, or null when it has none we can answer. */
export function selectChallenge(response: SipResponse, credentials?: SipCredentials): SipChallenge | null {
  const proxy = response.status === 407;
  const values = response.headers.getAll(proxy ? "proxy-authenticate" : "www-authenticate");
  let best: SipChallenge | null = null;
  for (const value of values) {
    const challenge = parseDigestChallenge(value);
    if (challenge === null || !isSupportedDigestAlgorithm(challenge.algorithm)) continue;
    if (credentials?.realm !== undefined && credentials.realm !== challenge.realm) continue;
    const stale = /(?:^|[\s,])stale\s*=\s*"?true"?/i.test(value);
    const candidate: SipChallenge = { authorizationHeader: proxy ? "proxy-authorization" : "authorization", challenge, stale };
    if (best === null || (STRENGTH[challenge.algorithm.toUpperCase()] ?? 0) > (STRENGTH[best.challenge.algorithm.toUpperCase()] ?? 0)) {
      best = candidate;
    }
  }
  return best;
}

/**
 * The header value answering `challenge` for one request.
 *
 * ### Examples
 * `sipDigestAuthorization(c, { method: "INVITE", uri: "sip:+4930123@trunk.example" }, { username: "fax", password: "…" })`
 * → `Digest username="fax", realm="trunk.example", nonce="…", uri="sip:+4930123@trunk.example", algorithm=MD5, response="…", qop=auth, nc=00000001, cnonce="…"`
 */
export function sipDigestAuthorization(
  challenge: DigestChallenge,
  request: { method: string; uri: string },
  credentials: SipCredentials,
  cnonce?: string,
  nc = 1,
): string {
  return digestAuthorization(challenge, { ...request, username: credentials.username, password: credentials.password }, cnonce, nc);
}

/**
 * The server side, for callers that must prove who they are (the SIP line's inbound trunks with
 * `inboundUsername`): a 401 challenge with a nonce of our own, and the check of the caller's
 * answer. The nonce holds the time it was made and an HMAC (under this node's key) of that time
 * and the call's Call-ID, so nothing is kept per caller and an answer is good only for the call
 * it was made for; the answer's `uri` must be the request's Request-URI. A nonce we cannot
 * verify (another node's, one from before a restart) or older than `maxAgeMs` is challenged
 * again with stale=true (RFC 7616 §3.3).
 *
 * Replay: every nonce issued is remembered (at most `maxNonces`, for `maxAgeMs`) with the
 * highest nonce count (`nc`) an answer has used; an answer must name a nonce this challenger
 * issued and still remembers, and count higher than any before it (qop=auth; without qop a
 * nonce serves one answer). A replayed answer — the same nonce and count again, sent by whoever
 * copied it — is challenged again as stale, like an unknown nonce. Nonces live in this process:
 * after a restart, or behind a balancer that sends a call's next INVITE to another node, the
 * caller is challenged once more (a balancer should keep a Call-ID on one node).
 */
export class SipDigestChallenger {
  readonly realm: string;
  readonly #secret: Buffer;
  readonly #now: () => number;
  readonly #maxAgeMs: number;
  readonly #maxNonces: number;
  /** Nonces issued and not expired → the highest nonce count answered (0: none yet). */
  readonly #issued = new Map<string, { issuedAt: number; nc: number }>();

  constructor(options: { realm: string; now?: () => number; maxAgeMs?: number; secret?: Buffer; maxNonces?: number }) {
    this.realm = options.realm;
    this.#secret = options.secret ?? randomBytes(32);
    this.#now = options.now ?? Date.now;
    this.#maxAgeMs = options.maxAgeMs ?? 300_000;
    this.#maxNonces = options.maxNonces ?? 10_000;
  }

  /** Nonces remembered now. */
  get remembered(): number {
    return this.#issued.size;
  }

  #remember(nonce: string, at: number): void {
    if (this.#issued.size >= this.#maxNonces) {
      for (const [key, entry] of this.#issued) {
        if (at - entry.issuedAt > this.#maxAgeMs || this.#issued.size >= this.#maxNonces) this.#issued.delete(key);
        else break;
      }
    }
    this.#issued.set(nonce, { issuedAt: at, nc: 0 });
  }

  /** The WWW-Authenticate value of a 401 to `request`. */
  challenge(request: { headers: { get(name: string): string | undefined } }, stale = false): string {
    const now = this.#now();
    const at = now.toString(36);
    const nonce = `${at}.${this.#mac(at, request.headers.get("call-id") ?? "")}`;
    this.#remember(nonce, now);
    return `Digest realm="${this.realm}", nonce="${nonce}", algorithm=MD5, qop="auth"${stale ? ", stale=true" : ""}`;
  }

  /**
   * Checks the request's Authorization: "missing" (none for our realm: challenge), "stale" (a
   * nonce we cannot verify or an old one: challenge again), "refused" (wrong user, password or
   * URI), or the user name it proved.
   */
  verify(
    request: { method: string; uri: string; headers: { get(name: string): string | undefined; getAll(name: string): string[] } },
    passwordOf: (username: string) => string | null,
  ): { result: "ok"; username: string } | { result: "missing" | "stale" | "refused" } {
    const params = request.headers
      .getAll("authorization")
      .map((value) => parseDigestParams(value))
      .find((p) => p !== null && p.get("realm") === this.realm);
    if (params === undefined || params === null) return { result: "missing" };
    const [at, mac] = (params.get("nonce") ?? "").split(".");
    if (at === undefined || mac === undefined || !sameText(mac, this.#mac(at, request.headers.get("call-id") ?? ""))) return { result: "stale" };
    const password = passwordOf(params.get("username") ?? "");
    if (password === null || params.get("uri") !== request.uri) return { result: "refused" };
    if (!checkDigestResponse(params, { method: request.method, password })) return { result: "refused" };
    const age = this.#now() - Number.parseInt(at, 36);
    if (!(age >= 0 && age <= this.#maxAgeMs)) return { result: "stale" };
    const issued = this.#issued.get(params.get("nonce")!);
    if (issued === undefined) return { result: "stale" };
    const qop = params.get("qop");
    const nc = qop === undefined ? 1 : /^[0-9a-f]{8}$/i.test(params.get("nc") ?? "") ? Number.parseInt(params.get("nc")!, 16) : 0;
    if (nc <= issued.nc) return { result: "stale" };
    issued.nc = nc;
    return { result: "ok", username: params.get("username")! };
  }

  #mac(at: string, callId: string): string {
    return createHmac("sha256", this.#secret).update(`${at}\n${callId}`).digest("base64url").slice(0, 22);
  }
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * SIP digest authentication, client side (RFC 3261 §22.4, RFC 8760 for SHA-256): answers a 401
 * `WWW-Authenticate` or 407 `Proxy-Authenticate` challenge with an `Authorization` or
 * `Proxy-Authorization` header.
 *
 * The hashing is HTTP digest's (RFC 7616), so it reuses net/digest-auth.ts; SIP
 * adds only the choice of header, the Request-URI as `uri`, and the choice among several
 * challenges (RFC 8760 §2.4: a server may offer SHA-256 and MD5 side by side; we take the
 * strongest we support). qop "auth" is used when offered; "auth-int" alone falls back to the
 * RFC 2069 form, which servers offering only auth-int will refuse.
 */
import { digestAuthorization, isSupportedDigestAlgorithm, parseDigestChallenge, type DigestChallenge } from "../../net/digest-auth.ts";
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

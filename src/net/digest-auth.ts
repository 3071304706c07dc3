/**
 * HTTP Digest authentication, client side (RFC 7616): the answer to a server's
 * `WWW-Authenticate: Digest …` challenge (a push receiver's; SIP builds on it in
 * line/sip/digest-auth.ts). MD5 and SHA-256 (and their -sess variants), qop
 * "auth" or none (RFC 2069 style). Pure.
 */
import { createHash, randomBytes } from "node:crypto";

export interface DigestChallenge {
  realm: string;
  nonce: string;
  opaque: string | null;
  algorithm: string;
  qop: string[];
}

/** Parses the Digest challenge out of WWW-Authenticate header values; null when there is none. */
export function parseDigestChallenge(headers: string | string[] | undefined): DigestChallenge | null {
  const values = headers === undefined ? [] : Array.isArray(headers) ? headers : [headers];
  for (const value of values) {
    const start = value.search(/Digest\s/i);
    if (start === -1) continue;
    const params = new Map<string, string>();
    const re = /([a-zA-Z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g;
    for (const m of value.slice(start + 7).matchAll(re)) {
      params.set(m[1]!.toLowerCase(), m[2] !== undefined ? m[2].replace(/\\(.)/g, "$1") : m[3]!);
    }
    const realm = params.get("realm");
    const nonce = params.get("nonce");
    if (realm === undefined || nonce === undefined) continue;
    return {
      realm,
      nonce,
      opaque: params.get("opaque") ?? null,
      algorithm: params.get("algorithm") ?? "MD5",
      qop: (params.get("qop") ?? "").split(",").map((q) => q.trim()).filter((q) => q !== ""),
    };
  }
  return null;
}

const HASHES: Record<string, string> = { MD5: "md5", "SHA-256": "sha256" };

export function isSupportedDigestAlgorithm(algorithm: string): boolean {
  return HASHES[algorithm.toUpperCase().replace(/-SESS$/, "")] !== undefined;
}

/** The Authorization header value answering `challenge` for one request. */
export function digestAuthorization(
  challenge: DigestChallenge,
  request: { method: string; uri: string; username: string; password: string },
  cnonce: string = randomBytes(12).toString("hex"),
  nc = 1,
): string {
  const upper = challenge.algorithm.toUpperCase();
  const session = upper.endsWith("-SESS");
  const hashName = HASHES[upper.replace(/-SESS$/, "")];
  if (hashName === undefined) throw new RangeError(`unsupported digest algorithm ${challenge.algorithm}`);
  const h = (text: string): string => createHash(hashName).update(text, "utf8").digest("hex");
  const ncText = nc.toString(16).padStart(8, "0");
  let ha1 = h(`${request.username}:${challenge.realm}:${request.password}`);
  if (session) ha1 = h(`${ha1}:${challenge.nonce}:${cnonce}`);
  const ha2 = h(`${request.method}:${request.uri}`);
  const qop = challenge.qop.includes("auth") ? "auth" : null;
  const response = qop === null ? h(`${ha1}:${challenge.nonce}:${ha2}`) : h(`${ha1}:${challenge.nonce}:${ncText}:${cnonce}:${qop}:${ha2}`);
  const quote = (v: string): string => `"${v.replace(/(["\\])/g, "\\$1")}"`;
  const parts = [
    `username=${quote(request.username)}`,
    `realm=${quote(challenge.realm)}`,
    `nonce=${quote(challenge.nonce)}`,
    `uri=${quote(request.uri)}`,
    `algorithm=${challenge.algorithm}`,
    `response=${quote(response)}`,
  ];
  if (qop !== null) parts.push(`qop=${qop}`, `nc=${ncText}`, `cnonce=${quote(cnonce)}`);
  if (challenge.opaque !== null) parts.push(`opaque=${quote(challenge.opaque)}`);
  return `Digest ${parts.join(", ")}`;
}

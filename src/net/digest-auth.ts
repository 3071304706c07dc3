/**
 * HTTP Digest authentication (RFC 7616): the client's answer to a server's
 * `WWW-Authenticate: Digest …` challenge (a push receiver's; SIP builds on it in
 * line/sip/digest-auth.ts), and the server's check of such an answer (`checkDigestResponse`,
 * for the SIP line's inbound trunks). MD5 and SHA-256 (and their -sess variants), qop
 * "auth" or none (RFC 2069 style). Pure.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

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
    const params = parseDigestParams(value);
    if (params === null) continue;
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

/** The `name=value` parameters after `Digest ` (names lower-cased, quotes and escapes removed); null when it is not Digest. */
export function parseDigestParams(value: string): Map<string, string> | null {
  const start = value.search(/Digest\s/i);
  if (start === -1) return null;
  const params = new Map<string, string>();
  const re = /([a-zA-Z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g;
  for (const m of value.slice(start + 7).matchAll(re)) {
    params.set(m[1]!.toLowerCase(), m[2] !== undefined ? m[2].replace(/\\(.)/g, "$1") : m[3]!);
  }
  return params;
}

const HASHES: Record<string, string> = { MD5: "md5", "SHA-256": "sha256" };

/** The `response` value (RFC 7616 §3.4.1) for one request. */
function digestResponse(
  algorithm: string,
  input: { username: string; realm: string; password: string; nonce: string; method: string; uri: string; qop: string | null; nc: string; cnonce: string },
): string {
  const upper = algorithm.toUpperCase();
  const hashName = HASHES[upper.replace(/-SESS$/, "")];
  if (hashName === undefined) throw new RangeError(`unsupported digest algorithm ${algorithm}`);
  const h = (text: string): string => createHash(hashName).update(text, "utf8").digest("hex");
  let ha1 = h(`${input.username}:${input.realm}:${input.password}`);
  if (upper.endsWith("-SESS")) ha1 = h(`${ha1}:${input.nonce}:${input.cnonce}`);
  const ha2 = h(`${input.method}:${input.uri}`);
  return input.qop === null ? h(`${ha1}:${input.nonce}:${ha2}`) : h(`${ha1}:${input.nonce}:${input.nc}:${input.cnonce}:${input.qop}:${ha2}`);
}

/**
 * Checks a client's `Authorization: Digest …` answer for `method` against the password of its
 * user name. The caller checks the nonce (its own, not too old) and the realm; this checks that
 * the answer was computed with the password (constant-time comparison).
 */
export function checkDigestResponse(params: ReadonlyMap<string, string>, request: { method: string; password: string }): boolean {
  const username = params.get("username");
  const realm = params.get("realm");
  const nonce = params.get("nonce");
  const uri = params.get("uri");
  const response = params.get("response");
  if (username === undefined || realm === undefined || nonce === undefined || uri === undefined || response === undefined) return false;
  const algorithm = params.get("algorithm") ?? "MD5";
  if (!isSupportedDigestAlgorithm(algorithm)) return false;
  const qop = params.get("qop") ?? null;
  if (qop !== null && qop !== "auth") return false;
  const expected = digestResponse(algorithm, {
    username,
    realm,
    password: request.password,
    nonce,
    method: request.method,
    uri,
    qop,
    nc: params.get("nc") ?? "",
    cnonce: params.get("cnonce") ?? "",
  });
  const a = Buffer.from(expected, "utf8");
  const b = Buffer.from(response.toLowerCase(), "utf8");
  return a.length === b.length && timingSafeEqual(a, b);
}

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
  const ncText = nc.toString(16).padStart(8, "0");
  const qop = challenge.qop.includes("auth") ? "auth" : null;
  const response = digestResponse(challenge.algorithm, { ...request, realm: challenge.realm, nonce: challenge.nonce, qop, nc: ncText, cnonce });
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

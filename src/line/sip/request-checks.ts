/**
 * What a user agent server checks of every request before it means anything (RFC 3261 §8.2),
 * after the message has parsed (sip-message.ts `readMessage` answers what does not):
 *
 *  1. §8.2.2.1 the Request-URI: a scheme other than sip, sips or tel gets 416 Unsupported URI
 *     Scheme; a sip or sips URI that does not parse gets 400.
 *  2. §8.2.2.3 `Require`: an option tag we do not support gets 420 Bad Extension with an
 *     `Unsupported` header naming it (not for ACK and CANCEL).
 *  3. §8.2.3 the body: one larger than `MAX_BODY_BYTES` gets 413 Request Entity Too Large; a
 *     `Content-Encoding` other than identity gets 415 with `Accept-Encoding: identity`; a body of
 *     an INVITE, UPDATE, PRACK or ACK that is no session description (application/sdp, or a
 *     multipart body that may hold one) gets 415 with `Accept: application/sdp`.
 *
 * An ACK cannot be answered: the user agent drops one that fails these checks.
 */
import { isSessionBodyType, mediaTypeOf } from "./message-body.ts";
import type { SipRequest } from "./sip-message.ts";
import { parseSipUri } from "./sip-uri.ts";

/** The option tags we support (RFC 4028 session timers, RFC 3262 reliable provisionals). */
export const SUPPORTED_EXTENSIONS: ReadonlySet<string> = new Set(["timer", "100rel"]);
/** The same as a Supported header's value. */
export const SUPPORTED = [...SUPPORTED_EXTENSIONS].join(", ");

/** The largest body we take: an SDP offer is about 1 KB, with an ISUP part beside it 2 KB. */
export const MAX_BODY_BYTES = 16_384;

export interface RequestRefusal {
  status: number;
  phrase: string;
  headers: [string, string][];
}

const SESSION_METHODS = new Set(["INVITE", "UPDATE", "PRACK", "ACK"]);

export function checkRequest(request: SipRequest): RequestRefusal | null {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(request.uri)?.[1]?.toLowerCase();
  if (scheme !== "sip" && scheme !== "sips" && scheme !== "tel") return { status: 416, phrase: "Unsupported URI Scheme", headers: [] };
  if (scheme !== "tel") {
    try {
      parseSipUri(request.uri);
    } catch {
      return { status: 400, phrase: "Bad Request-URI", headers: [] };
    }
  }
  if (request.method !== "ACK" && request.method !== "CANCEL") {
    const unsupported = request.headers
      .getList("require")
      .map((o) => o.trim().toLowerCase())
      .filter((o) => o !== "" && !SUPPORTED_EXTENSIONS.has(o));
    if (unsupported.length > 0) return { status: 420, phrase: "Bad Extension", headers: [["unsupported", unsupported.join(", ")]] };
  }
  if (request.body === "") return null;
  if (Buffer.byteLength(request.body, "utf8") > MAX_BODY_BYTES) return { status: 413, phrase: "Request Entity Too Large", headers: [] };
  const encoding = request.headers.get("content-encoding")?.trim().toLowerCase();
  if (encoding !== undefined && encoding !== "" && encoding !== "identity") return { status: 415, phrase: "Unsupported Media Type", headers: [["accept-encoding", "identity"]] };
  if (SESSION_METHODS.has(request.method) && !isSessionBodyType(mediaTypeOf(request.headers.get("content-type")).type)) {
    return { status: 415, phrase: "Unsupported Media Type", headers: [["accept", "application/sdp"]] };
  }
  return null;
}

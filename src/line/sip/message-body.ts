/**
 * The session description inside a SIP message's body (RFC 3261 §7.4, §20.15; RFC 5621 for
 * message bodies of several parts): a plain `application/sdp` body, or the `application/sdp`
 * part of a `multipart/mixed` (or `related`, `alternative`) body, as carriers send it beside
 * ISUP (SIP-I/SIP-T, RFC 3204) or a PIDF. Everything else a body carries is not for us.
 */
import type { SipMessage } from "./sip-message.ts";

/** The media type and its parameters (lower-case names) of a Content-Type value. */
export function mediaTypeOf(contentType: string | undefined): { type: string; params: Map<string, string> } {
  const [type = "", ...rest] = (contentType ?? "").split(";");
  const params = new Map<string, string>();
  for (const part of rest) {
    const eq = part.indexOf("=");
    if (eq === -1) continue;
    params.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).trim().replace(/^"(.*)"$/, "$1"));
  }
  return { type: type.trim().toLowerCase(), params };
}

/** Body types that can carry our session description. */
export function isSessionBodyType(type: string): boolean {
  return type === "application/sdp" || type === "multipart/mixed" || type === "multipart/related" || type === "multipart/alternative";
}

/** Most parts a multipart body may have before it is refused (a body is at most 64 KiB anyway). */
const MAX_PARTS = 16;

/**
 * The SDP text a message carries, or null when its body holds none (no body, another type, a
 * multipart body without an `application/sdp` part or with a broken boundary).
 */
export function sdpOf(message: SipMessage): string | null {
  if (message.body === "") return null;
  const { type, params } = mediaTypeOf(message.headers.get("content-type"));
  if (type === "application/sdp") return message.body;
  if (!type.startsWith("multipart/")) return null;
  const boundary = params.get("boundary");
  if (boundary === undefined || boundary === "" || boundary.length > 70) return null;
  const delimiter = `--${boundary}`;
  const pieces = message.body.split(delimiter);
  // pieces[0] is the preamble; a piece starting "--" is the close delimiter's epilogue.
  for (const piece of pieces.slice(1, 1 + MAX_PARTS)) {
    if (piece.startsWith("--")) break;
    const part = piece.replace(/^[ \t]*\r?\n/, "");
    const split = /\r?\n\r?\n/.exec(part);
    const headText = split === null ? part : part.slice(0, split.index);
    const body = split === null ? "" : part.slice(split.index + split[0].length);
    const partType = /^content-type\s*:\s*([^\r\n]*)/im.exec(headText)?.[1];
    // A part without Content-Type is text/plain (RFC 2046 §5.1); only SDP is ours.
    if (mediaTypeOf(partType).type === "application/sdp") return body.replace(/\r?\n$/, "");
  }
  return null;
}

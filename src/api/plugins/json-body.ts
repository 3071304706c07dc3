/**
 * The JSON body parser of the API, and the checks that run before anything walks a body.
 *
 * - An empty body is no body: SDKs send `Content-Type: application/json` on GET and DELETE.
 * - Nesting deeper than MAX_JSON_DEPTH is refused (400 json_too_deep) before JSON.parse: a body
 *   of thousands of nested arrays would otherwise overflow the stack of whatever walks it next
 *   (schema validation, logging, serialisation). The contract's deepest field is 4 levels down.
 * - A NUL character in a string is refused (400 invalid_request): the PostgreSQL store's text
 *   cannot hold it, and no fax field needs it.
 * - Anything unparsable is the contract's "Unable to process JSON" (400 invalid_json).
 */
import { createHash } from "node:crypto";
import { ApiError } from "../../errors/api-errors.ts";

declare module "fastify" {
  interface FastifyRequest {
    /**
     * SHA-256 of the raw body (base64url), taken while parsing and only for a request with an
     * Idempotency-Key: a repeated key tells whether the request was the same. Hashing the text as
     * it arrived avoids serialising a body of tens of megabytes again.
     */
    bodySha256?: string;
  }
}

/** Hash of a body's text, as stored in jobs.request_hash. */
export function bodyHash(text: string): string {
  return createHash("sha256").update(text).digest("base64url");
}

/** Deepest nesting of objects and arrays accepted in a request body. */
export const MAX_JSON_DEPTH = 32;

/**
 * A NUL character in a JSON string (JSON can only write it as \u0000, after an even number of
 * backslashes).
 */
const ESCAPED_NUL = /(?:^|[^\\])(?:\\\\)*\\u0000/;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * How deep `text` nests objects and arrays, counted up to `limit + 1` (it stops there). Strings are
 * skipped with indexOf, so a body that is mostly one base64 string costs a few scans.
 * Unbalanced or malformed text is left for JSON.parse to refuse.
 */
export function jsonNestingDepth(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Find the closing quote: one not preceded by an odd number of backslashes.
      let end = text.indexOf('"', i + 1);
      while (end !== -1) {
        let slashes = 0;
        for (let k = end - 1; k > i && text.charCodeAt(k) === BACKSLASH; k--) slashes++;
        if (slashes % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      if (end === -1) return deepest;
      i = end;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return deepest;
}

/** Parses a request body; throws ApiError for what the API refuses. Empty text is undefined. */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === "") return undefined;
  if (jsonNestingDepth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    throw new ApiError("json_too_deep", `The JSON body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep; no request of this API needs more than 5`);
  }
  if (ESCAPED_NUL.test(text)) {
    throw new ApiError("invalid_request", "The request contains the character U+0000 (NUL, written \\u0000) in a string; no field may hold it: remove it");
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ApiError("invalid_json", `Unable to process JSON: ${(err as Error).message}`);
  }
}

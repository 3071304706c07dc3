/**
 * SIP messages (RFC 3261 §7, §20, §25): the typed model, the parser for datagrams and for byte
 * streams (TCP/TLS framing by Content-Length, §18.3), the serializer, and helpers for the headers
 * the transaction and dialog layers read (Via, CSeq, From/To tags).
 *
 * Header names are kept lower-case and in long form (compact forms such as `v`, `i`, `l` are
 * expanded on parsing); the serializer writes the canonical spelling. A header that appears several
 * times, or a comma-separated list (Via, Route, Record-Route, Contact), is read with `getList`.
 * Bodies are UTF-8 text (SDP is ASCII); Content-Length counts bytes.
 */
import { randomBytes } from "node:crypto";
import { parseNameAddr, parseParams, SipParseError, splitOutsideQuotes } from "./sip-uri.ts";

export { SipParseError };

/** RFC 3261 §7.3.3 compact forms. */
const COMPACT: Record<string, string> = {
  i: "call-id",
  m: "contact",
  e: "content-encoding",
  l: "content-length",
  c: "content-type",
  f: "from",
  s: "subject",
  k: "supported",
  t: "to",
  v: "via",
  o: "event",
  u: "allow-events",
  r: "refer-to",
  x: "session-expires",
};

const CANONICAL: Record<string, string> = {
  "call-id": "Call-ID",
  cseq: "CSeq",
  "www-authenticate": "WWW-Authenticate",
  "mime-version": "MIME-Version",
  rack: "RAck",
  rseq: "RSeq",
  "min-se": "Min-SE",
};

/** Headers whose values are comma-separated lists (RFC 3261 §7.3.1). */
const LIST_HEADERS = new Set(["via", "route", "record-route", "contact", "allow", "supported", "require", "proxy-require", "unsupported", "accept"]);

export function canonicalHeaderName(lowerName: string): string {
  return CANONICAL[lowerName] ?? lowerName.replace(/(^|-)([a-z])/g, (_m, dash: string, ch: string) => dash + ch.toUpperCase());
}

/** An ordered, case-insensitive header list. */
export class SipHeaders {
  readonly #entries: [name: string, value: string][] = [];

  constructor(entries: Iterable<readonly [string, string]> = []) {
    for (const [name, value] of entries) this.append(name, value);
  }

  /** The first value of `name`, or undefined. */
  get(name: string): string | undefined {
    const n = normalizeName(name);
    return this.#entries.find(([k]) => k === n)?.[1];
  }

  /** Every value of `name` as separate header lines, in order. */
  getAll(name: string): string[] {
    const n = normalizeName(name);
    return this.#entries.filter(([k]) => k === n).map(([, v]) => v);
  }

  /** Every element of a comma-separated list header, over all its lines, in order. */
  getList(name: string): string[] {
    return this.getAll(name).flatMap((v) => splitOutsideQuotes(v, ",").map((s) => s.trim()).filter((s) => s !== ""));
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  append(name: string, value: string): this {
    this.#entries.push([normalizeName(name), value]);
    return this;
  }

  /** Replaces every value of `name` with one value (or removes it when `value` is undefined). */
  set(name: string, value: string | undefined): this {
    const n = normalizeName(name);
    const i = this.#entries.findIndex(([k]) => k === n);
    this.remove(n);
    if (value !== undefined) this.#entries.splice(i === -1 ? this.#entries.length : i, 0, [n, value]);
    return this;
  }

  remove(name: string): this {
    const n = normalizeName(name);
    for (let i = this.#entries.length - 1; i >= 0; i--) if (this.#entries[i]![0] === n) this.#entries.splice(i, 1);
    return this;
  }

  entries(): readonly (readonly [string, string])[] {
    return this.#entries;
  }

  clone(): SipHeaders {
    return new SipHeaders(this.#entries);
  }
}

function normalizeName(name: string): string {
  const lower = name.trim().toLowerCase();
  return COMPACT[lower] ?? lower;
}

export interface SipRequest {
  kind: "request";
  method: string;
  uri: string;
  headers: SipHeaders;
  body: string;
}

export interface SipResponse {
  kind: "response";
  status: number;
  reason: string;
  headers: SipHeaders;
  body: string;
}

export type SipMessage = SipRequest | SipResponse;

/** Writes a message with a correct Content-Length (bytes of the UTF-8 body). */
export function serializeMessage(message: SipMessage): Buffer {
  const start = message.kind === "request" ? `${message.method} ${message.uri} SIP/2.0` : `SIP/2.0 ${message.status} ${message.reason}`;
  const body = Buffer.from(message.body, "utf8");
  const lines = [start];
  for (const [name, value] of message.headers.entries()) {
    if (name === "content-length") continue;
    lines.push(`${canonicalHeaderName(name)}: ${value}`);
  }
  lines.push(`Content-Length: ${body.length}`);
  return Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "utf8"), body]);
}

/**
 * Parses one message from a datagram. The body is cut to Content-Length when the header is there
 * (RFC 3261 §18.3: extra bytes in a datagram are discarded); a shorter body is an error.
 */
export function parseMessage(data: Buffer | string): SipMessage {
  const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const split = findHeaderEnd(buf);
  if (split === null) throw new SipParseError("no end of headers");
  const message = parseHead(buf.subarray(0, split.headEnd).toString("utf8"));
  const rest = buf.subarray(split.bodyStart);
  const lengthText = message.headers.get("content-length");
  if (lengthText === undefined) {
    message.body = rest.toString("utf8");
  } else {
    const length = parseContentLength(lengthText);
    if (rest.length < length) throw new SipParseError(`body shorter (${rest.length}) than Content-Length (${length})`);
    message.body = rest.subarray(0, length).toString("utf8");
  }
  validate(message);
  return message;
}

/**
 * Frames messages out of a byte stream (TCP, TLS) by Content-Length, which is mandatory there
 * (RFC 3261 §18.3). CRLF keep-alives between messages (RFC 5626 §4.4.1) are reported so the
 * transport can answer a double-CRLF ping with a single-CRLF pong.
 */
export class SipStreamFramer {
  #buffer: Buffer = Buffer.alloc(0);
  readonly #maxMessageBytes: number;

  constructor(maxMessageBytes = 65_535) {
    this.#maxMessageBytes = maxMessageBytes;
  }

  /** Adds bytes; returns the complete messages and the number of CRLF-CRLF pings seen. Throws on garbage. */
  push(chunk: Buffer): { messages: SipMessage[]; pings: number } {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    const messages: SipMessage[] = [];
    let pings = 0;
    for (;;) {
      let skip = 0;
      while (skip + 1 < this.#buffer.length && this.#buffer[skip] === 0x0d && this.#buffer[skip + 1] === 0x0a) skip += 2;
      if (skip >= 4) pings += Math.floor(skip / 4);
      if (skip > 0) this.#buffer = this.#buffer.subarray(skip);
      const split = findHeaderEnd(this.#buffer);
      if (split === null) {
        if (this.#buffer.length > this.#maxMessageBytes) throw new SipParseError("header section too large");
        break;
      }
      const message = parseHead(this.#buffer.subarray(0, split.headEnd).toString("utf8"));
      const lengthText = message.headers.get("content-length");
      if (lengthText === undefined) throw new SipParseError("no Content-Length on a stream transport");
      const length = parseContentLength(lengthText);
      if (split.bodyStart + length > this.#maxMessageBytes) throw new SipParseError("message too large");
      if (this.#buffer.length < split.bodyStart + length) break;
      message.body = this.#buffer.subarray(split.bodyStart, split.bodyStart + length).toString("utf8");
      this.#buffer = this.#buffer.subarray(split.bodyStart + length);
      validate(message);
      messages.push(message);
    }
    return { messages, pings };
  }
}

function findHeaderEnd(buf: Buffer): { headEnd: number; bodyStart: number } | null {
  const crlf = buf.indexOf("\r\n\r\n");
  if (crlf !== -1) return { headEnd: crlf, bodyStart: crlf + 4 };
  const lf = buf.indexOf("\n\n");
  if (lf !== -1) return { headEnd: lf, bodyStart: lf + 2 };
  return null;
}

function parseContentLength(text: string): number {
  if (!/^\s*\d+\s*$/.test(text)) throw new SipParseError(`bad Content-Length ${JSON.stringify(text)}`);
  return Number(text.trim());
}

function parseHead(head: string): SipMessage {
  const rawLines = head.split(/\r?\n/);
  const startLine = rawLines.shift() ?? "";
  // Unfold continuation lines (RFC 3261 §7.3.1: LWS at line start continues the previous line).
  const lines: string[] = [];
  for (const line of rawLines) {
    if (/^[ \t]/.test(line) && lines.length > 0) lines[lines.length - 1] += ` ${line.trim()}`;
    else if (line !== "") lines.push(line);
  }
  const headers = new SipHeaders();
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon <= 0) throw new SipParseError(`bad header line ${JSON.stringify(line)}`);
    const name = line.slice(0, colon).trim();
    if (!/^[A-Za-z0-9!%*_+`'~.-]+$/.test(name)) throw new SipParseError(`bad header name ${JSON.stringify(name)}`);
    headers.append(name, line.slice(colon + 1).trim());
  }
  const response = /^SIP\/2\.0 (\d{3}) ?(.*)$/i.exec(startLine);
  if (response !== null) {
    return { kind: "response", status: Number(response[1]), reason: response[2]!.trim(), headers, body: "" };
  }
  const request = /^([A-Za-z]+) (\S+) SIP\/2\.0$/i.exec(startLine);
  if (request !== null) return { kind: "request", method: request[1]!.toUpperCase(), uri: request[2]!, headers, body: "" };
  throw new SipParseError(`bad start line ${JSON.stringify(startLine)}`);
}

/** RFC 3261 §8.1.1 / §8.2: the headers every request and response carries. */
function validate(message: SipMessage): void {
  for (const name of ["via", "call-id", "cseq", "from", "to"]) {
    if (!message.headers.has(name)) throw new SipParseError(`missing ${canonicalHeaderName(name)}`);
  }
  const cseq = parseCSeq(message.headers.get("cseq")!);
  if (message.kind === "request" && cseq.method !== message.method && !(message.method === "ACK" && cseq.method === "ACK")) {
    throw new SipParseError(`CSeq method ${cseq.method} does not match ${message.method}`);
  }
}

export interface CSeq {
  seq: number;
  method: string;
}

export function parseCSeq(text: string): CSeq {
  const m = /^\s*(\d{1,10})\s+([A-Za-z]+)\s*$/.exec(text);
  if (m === null) throw new SipParseError(`bad CSeq ${JSON.stringify(text)}`);
  return { seq: Number(m[1]), method: m[2]!.toUpperCase() };
}

export function cseqOf(message: SipMessage): CSeq {
  return parseCSeq(message.headers.get("cseq") ?? "");
}

export interface Via {
  /** "UDP", "TCP", "TLS" (upper-case). */
  transport: string;
  host: string;
  port: number | null;
  params: Map<string, string | null>;
}

export function parseVia(text: string): Via {
  const m = /^\s*SIP\s*\/\s*2\.0\s*\/\s*([A-Za-z]+)\s+([^;\s]+)\s*(.*)$/i.exec(text);
  if (m === null) throw new SipParseError(`bad Via ${JSON.stringify(text)}`);
  const hostPort = m[2]!;
  let host = hostPort;
  let port: number | null = null;
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(hostPort);
  if (v6 !== null) {
    host = v6[1]!;
    port = v6[2] !== undefined ? Number(v6[2]) : null;
  } else {
    const colon = hostPort.lastIndexOf(":");
    if (colon !== -1) {
      host = hostPort.slice(0, colon);
      port = Number(hostPort.slice(colon + 1));
    }
  }
  return { transport: m[1]!.toUpperCase(), host, port, params: parseParams(m[3]!.replace(/^;/, ""), ";") };
}

export function formatVia(via: Via): string {
  const host = via.host.includes(":") ? `[${via.host}]` : via.host;
  let s = `SIP/2.0/${via.transport} ${host}${via.port !== null ? `:${via.port}` : ""}`;
  for (const [name, value] of via.params) s += value === null ? `;${name}` : `;${name}=${value}`;
  return s;
}

/** The top Via of a message. */
export function topVia(message: SipMessage): Via {
  const first = message.headers.getList("via")[0];
  if (first === undefined) throw new SipParseError("missing Via");
  return parseVia(first);
}

/** RFC 3261 §8.1.1.7: branches of compliant implementations start with the magic cookie. */
export const BRANCH_MAGIC_COOKIE = "z9hG4bK";

export function newBranch(): string {
  return `${BRANCH_MAGIC_COOKIE}${randomBytes(10).toString("hex")}`;
}

export function newTag(): string {
  return randomBytes(6).toString("hex");
}

export function newCallId(host: string): string {
  return `${randomBytes(12).toString("hex")}@${host}`;
}

/** The `tag` parameter of a From or To value, or null. */
export function tagOf(nameAddr: string | undefined): string | null {
  if (nameAddr === undefined) return null;
  return parseNameAddr(nameAddr).params.get("tag") ?? null;
}

/**
 * Builds a response to `request` (RFC 3261 §8.2.6): Via, From, Call-ID and CSeq copied, To copied
 * with `toTag` added when it has none.
 */
export function createResponse(request: SipRequest, status: number, reason: string, toTag: string | null): SipResponse {
  const headers = new SipHeaders();
  for (const via of request.headers.getAll("via")) headers.append("via", via);
  headers.append("from", request.headers.get("from")!);
  let to = request.headers.get("to")!;
  if (toTag !== null && tagOf(to) === null) to = `${to};tag=${toTag}`;
  headers.append("to", to);
  headers.append("call-id", request.headers.get("call-id")!);
  headers.append("cseq", request.headers.get("cseq")!);
  return { kind: "response", status, reason, headers, body: "" };
}

/** Standard reason phrases for the responses this UA sends. */
export const REASON_PHRASES: Readonly<Record<number, string>> = {
  100: "Trying",
  180: "Ringing",
  200: "OK",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  415: "Unsupported Media Type",
  420: "Bad Extension",
  422: "Session Interval Too Small",
  480: "Temporarily Unavailable",
  481: "Call/Transaction Does Not Exist",
  486: "Busy Here",
  487: "Request Terminated",
  488: "Not Acceptable Here",
  491: "Request Pending",
  500: "Server Internal Error",
  501: "Not Implemented",
  503: "Service Unavailable",
  603: "Decline",
};

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
import { isIP } from "node:net";
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
 * What is wrong with a message that still parsed far enough to be answered (its top Via is
 * usable): the status and reason phrase of the answer (RFC 3261 §8.2, §21.4: a 400's phrase
 * names the header), and a detail for people.
 */
export interface SipDefect {
  status: number;
  phrase: string;
  detail: string;
}

/**
 * One message read leniently: `garbage` when nothing in it can be answered (no start line, no
 * end of headers, no usable top Via); else the message with the first defect found, or null. A
 * defective message is never handled as if it were sound: requests get `defect`'s answer,
 * responses are dropped.
 */
export type SipReadResult = { kind: "message"; message: SipMessage; defect: SipDefect | null } | { kind: "garbage"; detail: string };

/**
 * Reads one message from a datagram. The body is cut to Content-Length when the header is there
 * (§18.3: extra bytes in a datagram are discarded); a shorter body is a defect (400).
 */
export function readMessage(data: Buffer | string): SipReadResult {
  const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const split = findHeaderEnd(buf);
  if (split === null) return { kind: "garbage", detail: "no end of headers" };
  const head = readHead(buf.subarray(0, split.headEnd).toString("utf8"));
  if (head.kind === "garbage") return head;
  const { message } = head;
  let defect = head.defect;
  const rest = buf.subarray(split.bodyStart);
  const lengthText = message.headers.get("content-length");
  const length = lengthText === undefined ? rest.length : contentLength(lengthText);
  if (length === null) {
    defect ??= badHeader("Content-Length", `bad Content-Length ${JSON.stringify(lengthText)}`);
    message.body = rest.toString("utf8");
  } else if (rest.length < length) {
    defect ??= badHeader("Content-Length", `body shorter (${rest.length}) than Content-Length (${length})`);
    message.body = rest.toString("utf8");
  } else {
    message.body = rest.subarray(0, length).toString("utf8");
  }
  return finish(message, defect);
}

/**
 * Parses one message from a datagram strictly: throws SipParseError for anything `readMessage`
 * finds garbage or defective.
 */
export function parseMessage(data: Buffer | string): SipMessage {
  const read = readMessage(data);
  if (read.kind === "garbage") throw new SipParseError(read.detail);
  if (read.defect !== null) throw new SipParseError(read.defect.detail);
  return read.message;
}

/**
 * Frames messages out of a byte stream (TCP, TLS) by Content-Length, which is mandatory there
 * (RFC 3261 §18.3). CRLF keep-alives between messages (RFC 5626 §4.4.1) are reported so the
 * transport can answer a double-CRLF ping with a single-CRLF pong. A message whose head parses
 * but that is defective is framed like any other (the transport answers it); the stream is
 * unusable only when framing itself breaks (no Content-Length, a bad one, a head or message
 * over the limit, garbage where a start line should be): `push` then throws.
 */
export class SipStreamFramer {
  #buffer: Buffer = Buffer.alloc(0);
  readonly #maxMessageBytes: number;

  constructor(maxMessageBytes = 65_535) {
    this.#maxMessageBytes = maxMessageBytes;
  }

  /** Adds bytes; returns the complete messages (each read as `readMessage` does) and the number of CRLF-CRLF pings seen. Throws on broken framing. */
  push(chunk: Buffer): { messages: SipReadResult[]; pings: number } {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    const messages: SipReadResult[] = [];
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
      const head = readHead(this.#buffer.subarray(0, split.headEnd).toString("utf8"));
      if (head.kind === "garbage") throw new SipParseError(head.detail);
      const lengthText = head.message.headers.get("content-length");
      if (lengthText === undefined) throw new SipParseError("no Content-Length on a stream transport");
      const length = contentLength(lengthText);
      if (length === null) throw new SipParseError(`bad Content-Length ${JSON.stringify(lengthText)}`);
      if (split.bodyStart + length > this.#maxMessageBytes) throw new SipParseError("message too large");
      if (this.#buffer.length < split.bodyStart + length) break;
      head.message.body = this.#buffer.subarray(split.bodyStart, split.bodyStart + length).toString("utf8");
      this.#buffer = this.#buffer.subarray(split.bodyStart + length);
      messages.push(finish(head.message, head.defect));
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

function contentLength(text: string): number | null {
  if (!/^\s*\d{1,9}\s*$/.test(text)) return null;
  return Number(text.trim());
}

function badHeader(name: string, detail: string): SipDefect {
  return { status: 400, phrase: `Bad ${name} Header`, detail };
}

/** RFC 3261 §7.1 token characters: a method name. */
const TOKEN = /^[A-Za-z0-9!%*_+\x60'~.-]+$/; // \x60: the backquote

function readHead(head: string): { kind: "head"; message: SipMessage; defect: SipDefect | null } | { kind: "garbage"; detail: string } {
  const rawLines = head.split(/\r?\n/);
  const startLine = rawLines.shift() ?? "";
  // Unfold continuation lines (RFC 3261 §7.3.1: LWS at line start continues the previous line).
  const lines: string[] = [];
  for (const line of rawLines) {
    if (/^[ \t]/.test(line) && lines.length > 0) lines[lines.length - 1] += ` ${line.trim()}`;
    else if (line !== "") lines.push(line);
  }
  let defect: SipDefect | null = null;
  const headers = new SipHeaders();
  for (const line of lines) {
    const colon = line.indexOf(":");
    const name = colon <= 0 ? "" : line.slice(0, colon).trim();
    if (!TOKEN.test(name)) {
      // The other headers may still hold a usable Via: keep reading, answer 400.
      defect ??= { status: 400, phrase: "Bad Header Line", detail: `bad header line ${JSON.stringify(line.slice(0, 80))}` };
      continue;
    }
    headers.append(name, line.slice(colon + 1).trim());
  }
  const response = /^SIP\/2\.0 (\d{3})(?: (.*))?$/i.exec(startLine);
  if (response !== null) {
    return { kind: "head", message: { kind: "response", status: Number(response[1]), reason: (response[2] ?? "").trim(), headers, body: "" }, defect };
  }
  const request = /^(\S+) (\S+) SIP\/(\d+\.\d+)$/i.exec(startLine);
  if (request === null || !TOKEN.test(request[1]!)) return { kind: "garbage", detail: `bad start line ${JSON.stringify(startLine.slice(0, 80))}` };
  if (request[3] !== "2.0") defect = { status: 505, phrase: "Version Not Supported", detail: `SIP version ${request[3]}` };
  return { kind: "head", message: { kind: "request", method: request[1]!.toUpperCase(), uri: request[2]!, headers, body: "" }, defect };
}

/**
 * RFC 3261 §8.1.1 / §8.2: the headers every request and response carries. A request without a
 * usable top Via is garbage (nothing can answer it, §18.2.2); any other missing or broken
 * mandatory header is a defect naming it.
 */
function finish(message: SipMessage, defect: SipDefect | null): SipReadResult {
  const vias = message.headers.getList("via");
  if (vias.length === 0) return message.kind === "request" ? { kind: "garbage", detail: "missing Via" } : { kind: "message", message, defect: defect ?? badHeader("Via", "missing Via") };
  const via = tryParse(() => parseVia(vias[0]!));
  const route = via === null ? null : viaProblem(via);
  if (via === null || route !== null) {
    const detail = via === null ? `bad Via ${JSON.stringify(vias[0]!.slice(0, 80))}` : `Via ${route}`;
    return message.kind === "request" ? { kind: "garbage", detail } : { kind: "message", message, defect: defect ?? badHeader("Via", detail) };
  }
  if (defect !== null) return { kind: "message", message, defect };
  for (const name of ["call-id", "cseq", "from", "to"]) {
    const value = message.headers.get(name);
    if (value === undefined || value === "") return { kind: "message", message, defect: { status: 400, phrase: `Missing ${canonicalHeaderName(name)} Header`, detail: `missing ${canonicalHeaderName(name)}` } };
  }
  const cseq = tryParse(() => parseCSeq(message.headers.get("cseq")!));
  if (cseq === null) return { kind: "message", message, defect: badHeader("CSeq", `bad CSeq ${JSON.stringify(message.headers.get("cseq")!.slice(0, 80))}`) };
  for (const name of ["from", "to"] as const) {
    if (tryParse(() => parseNameAddr(message.headers.get(name)!)) === null) {
      return { kind: "message", message, defect: badHeader(canonicalHeaderName(name), `bad ${canonicalHeaderName(name)} ${JSON.stringify(message.headers.get(name)!.slice(0, 80))}`) };
    }
  }
  if (message.kind === "request") {
    if (cseq.method !== message.method && !(message.method === "ACK" && cseq.method === "ACK")) {
      return { kind: "message", message, defect: { status: 400, phrase: "CSeq Method Does Not Match", detail: `CSeq method ${cseq.method} does not match ${message.method}` } };
    }
    const maxForwards = message.headers.get("max-forwards");
    if (maxForwards !== undefined && !/^\s*\d{1,3}\s*$/.test(maxForwards)) return { kind: "message", message, defect: badHeader("Max-Forwards", `bad Max-Forwards ${JSON.stringify(maxForwards.slice(0, 20))}`) };
  }
  return { kind: "message", message, defect: null };
}

function tryParse<T>(parse: () => T): T | null {
  try {
    return parse();
  } catch {
    return null;
  }
}

const VIA_TRANSPORTS = new Set(["UDP", "TCP", "TLS", "SCTP", "WS", "WSS"]);
/** A host name (RFC 3261 §25.1 hostname) or an IPv4 address; IPv6 references are checked by net.isIP. */
const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

function usableHost(host: string): boolean {
  return isIP(host) !== 0 || HOSTNAME.test(host);
}

function usablePort(port: number | null): boolean {
  return port === null || (Number.isInteger(port) && port >= 1 && port <= 65535);
}

/**
 * Why a Via cannot route an answer (§18.2.2), or null: a transport we do not know, a sent-by
 * host that is no host name or address, a port outside 1–65535, an `rport` that is neither
 * empty nor a port, a `received` that is no address, a `maddr` that is no host.
 */
export function viaProblem(via: Via): string | null {
  if (!VIA_TRANSPORTS.has(via.transport)) return `transport ${JSON.stringify(via.transport)} is not one SIP defines`;
  if (!usableHost(via.host)) return `sent-by host ${JSON.stringify(via.host.slice(0, 80))} is not a host name or address`;
  if (!usablePort(via.port)) return `sent-by port ${via.port} is outside 1-65535`;
  const rport = via.params.get("rport");
  if (rport !== undefined && rport !== null && (!/^\d{1,5}$/.test(rport) || !usablePort(Number(rport)))) return `rport ${JSON.stringify(rport.slice(0, 20))} is not a port`;
  const received = via.params.get("received");
  if (received !== undefined && (received === null || isIP(received) === 0)) return `received ${JSON.stringify(received)} is not an address`;
  const maddr = via.params.get("maddr");
  if (maddr !== undefined && (maddr === null || !usableHost(maddr))) return `maddr ${JSON.stringify(maddr)} is not a host`;
  const branch = via.params.get("branch");
  if (branch === null) return "branch has no value";
  return null;
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
  const m = /^\s*SIP\s*\/\s*2\.0\s*\/\s*([A-Za-z]+)\s+([^;\s]+)\s*((?:;.*)?)$/i.exec(text);
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
  // A request answered for being defective (400 "Missing Call-ID Header") may lack some of them.
  const from = request.headers.get("from");
  if (from !== undefined) headers.append("from", from);
  let to = request.headers.get("to");
  if (to !== undefined) {
    if (toTag !== null && safeTag(to) === null) to = `${to};tag=${toTag}`;
    headers.append("to", to);
  }
  for (const name of ["call-id", "cseq"]) {
    const value = request.headers.get(name);
    if (value !== undefined) headers.append(name, value);
  }
  return { kind: "response", status, reason, headers, body: "" };
}

function safeTag(nameAddr: string): string | null {
  try {
    return tagOf(nameAddr);
  } catch {
    return null;
  }
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
  413: "Request Entity Too Large",
  415: "Unsupported Media Type",
  416: "Unsupported URI Scheme",
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
  505: "Version Not Supported",
  603: "Decline",
};

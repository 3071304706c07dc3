/**
 * Test support: generated malformed SIP for the SIP robustness suite (issue 30,
 * test/interop/sip-robustness.test.ts, `npm run fuzz:sip`).
 *
 * Seeds are real carrier traces (test/fixtures/sip-traces/*.sip: INVITEs with T.38 and with
 * G.711 SDP, a re-INVITE, UPDATE, PRACK, BYE, ACK, INFO, CANCEL, OPTIONS, REGISTER, two
 * responses). A generated message is a seed with its placeholders filled, then 0 to 4 mutations
 * drawn by fast-check (`mutationCase`) applied to it:
 *
 *  - on the parsed message: drop, duplicate, rename (compact forms, case, garbage names) or set a
 *    header, add any header SIP knows (or an unknown one), change the method (with or without
 *    the CSeq's), the Request-URI, the version or the whole start line, rewrite the top Via
 *    (ports 0 and 70000, rport, received, maddr, no branch…), edit the SDP line by line
 *    (m= ports, c= addresses, T.38 attributes) or replace the body;
 *  - on the bytes: line ends (LF, CR, folded lines), truncation, flipped and inserted bytes,
 *    invalid UTF-8, a repeated message (two in one datagram, or pipelined on a stream).
 *
 * Values come from `edgeValue`: empty and huge strings, numbers out of every range, control
 * characters, broken quoting and angle brackets, broken URIs, and sound values of each header
 * (so that a mutation can also leave a message well-formed and reach the call code).
 *
 * `sweepCases` is the systematic part: every method with every header set to a drawn value.
 *
 * Generation is deterministic for a seed (fast-check's `fc.sample` with `seed`), so a failing
 * window can be generated again: `npm run fuzz:sip -- --seed S`.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";

export const TRACES_DIR = fileURLToPath(new URL("../fixtures/sip-traces/", import.meta.url));

/** One carrier trace: a message with placeholders. */
export interface SipSeed {
  name: string;
  /** A request inside a call (`in-dialog-*.sip`): sent with a live call's Call-ID and tags when there is one. */
  inDialog: boolean;
  text: string;
}

export function loadSeeds(dir = TRACES_DIR): SipSeed[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".sip"))
    .sort()
    .map((f) => ({ name: f.replace(/\.sip$/, ""), inDialog: f.startsWith("in-dialog-"), text: readFileSync(path.join(dir, f), "utf8") }));
}

/** What the placeholders of a seed are filled with (test/fixtures/sip-traces/README.md). */
export interface SeedValues {
  transport: "UDP" | "TCP" | "TLS";
  localIp: string;
  localPort: number;
  node: string;
  did: string;
  caller: string;
  branch: string;
  callId: string;
  fromTag: string;
  toTag: string;
  mediaPort: number;
}

/** A seed as a message: start line, headers in order, body (CRLF line ends in the body). */
export interface EditableMessage {
  startLine: string;
  headers: [string, string][];
  body: string;
}

export function fillSeed(seed: SipSeed, v: SeedValues): EditableMessage {
  const filled = seed.text
    .replaceAll("{{transport}}", v.transport)
    .replaceAll("{{transport_lc}}", v.transport.toLowerCase())
    .replaceAll("{{local}}", `${v.localIp}:${v.localPort}`)
    .replaceAll("{{local_ip}}", v.localIp)
    .replaceAll("{{node}}", v.node)
    .replaceAll("{{did}}", v.did)
    .replaceAll("{{caller}}", v.caller)
    .replaceAll("{{branch}}", v.branch)
    .replaceAll("{{call_id}}", v.callId)
    .replaceAll("{{from_tag}}", v.fromTag)
    .replaceAll("{{to_tag}}", v.toTag)
    .replaceAll("{{media_port}}", String(v.mediaPort));
  const split = filled.indexOf("\n\n");
  const head = split === -1 ? filled : filled.slice(0, split);
  const bodyText = split === -1 ? "" : filled.slice(split + 2);
  const [startLine, ...lines] = head.split("\n");
  const headers = lines.map((l): [string, string] => {
    const colon = l.indexOf(":");
    return [l.slice(0, colon), l.slice(colon + 1).trim()];
  });
  const body = bodyText === "" ? "" : bodyText.replace(/\n/g, "\r\n");
  for (const h of headers) if (h[1] === "{{length}}") h[1] = String(Buffer.byteLength(body, "utf8"));
  return { startLine: startLine!, headers, body };
}

export function serializeEditable(m: EditableMessage): Buffer {
  const head = [m.startLine, ...m.headers.map(([n, v]) => `${n}: ${v}`)].join("\r\n");
  return Buffer.from(`${head}\r\n\r\n${m.body}`, "utf8");
}

/** Every method SIP defines, and some it does not. */
export const METHODS = ["INVITE", "ACK", "BYE", "CANCEL", "OPTIONS", "REGISTER", "PRACK", "UPDATE", "INFO", "SUBSCRIBE", "NOTIFY", "REFER", "MESSAGE", "PUBLISH"] as const;
const ODD_METHODS = ["invite", "Invite", "FROB", "", "INVITE INVITE", "IN\u0000VITE", "ÄCK", "X".repeat(300)];

/** Every header a carrier's request may carry (long forms), the compact forms, and odd names. */
export const HEADERS = [
  "Via",
  "From",
  "To",
  "Call-ID",
  "CSeq",
  "Max-Forwards",
  "Contact",
  "Content-Length",
  "Content-Type",
  "Content-Encoding",
  "Content-Disposition",
  "Require",
  "Proxy-Require",
  "Supported",
  "Unsupported",
  "Allow",
  "Accept",
  "Accept-Encoding",
  "Session-Expires",
  "Min-SE",
  "RSeq",
  "RAck",
  "Record-Route",
  "Route",
  "Authorization",
  "Proxy-Authorization",
  "WWW-Authenticate",
  "Proxy-Authenticate",
  "Expires",
  "Event",
  "Refer-To",
  "Replaces",
  "Reason",
  "Retry-After",
  "P-Asserted-Identity",
  "Privacy",
  "User-Agent",
  "Server",
  "MIME-Version",
  "Subject",
] as const;
const COMPACT_NAMES = ["v", "f", "t", "i", "m", "l", "c", "k", "x", "e", "s", "o", "r", "u"];
const ODD_NAMES = ["", " ", "Via ", " Via", "Content-Length\t", "CALL-ID", "call-id", "X-Unknown", "Ünïcode", "Na me", "a".repeat(500), "Via:Via"];

/** Values that break headers, URIs and numbers, and sound ones (so a mutation may also leave a message well-formed). */
const EDGE_CONSTANTS = [
  "",
  " ",
  "0",
  "-1",
  "1",
  "65535",
  "65536",
  "70000",
  "2147483648",
  "4294967296",
  "99999999999999999999999999",
  "1e9",
  "0x10",
  "NaN",
  "Infinity",
  "<",
  ">",
  "<>",
  "<sip:>",
  "sip:",
  "sip:@",
  "sip:a@b:0",
  "sip:a@b:99999",
  "sip:a@[::1",
  "sip:a@[::1]:5060",
  "sips:a@b;transport=tls",
  "tel:+4930123456",
  "http://example.com/",
  "<sip:a@127.0.0.1>;tag=",
  "<sip:a@127.0.0.1>;tag",
  "<sip:a@127.0.0.1;tag=x",
  '"unterminated <sip:a@b>',
  '"" <sip:a@b>;tag=1',
  ";",
  ";;;",
  "a=b=c",
  ",",
  ",,,",
  "\t",
  "%00",
  "%",
  "\u0000",
  "\u0007",
  "\u00ff",
  "\ufffd",
  "\ud83d\udce0",
  "ÄÖÜ",
  "1 INVITE",
  "2 BYE",
  "1 ACK",
  "4294967296 INVITE",
  "-1 INVITE",
  "1",
  "INVITE",
  "1 4711 INVITE",
  "0 0 INVITE",
  "application/sdp",
  "application/sdp;charset=utf-8",
  "multipart/mixed;boundary=unique",
  "multipart/mixed",
  "text/plain",
  "application/isup;version=itu-t92+",
  "gzip",
  "identity",
  "100rel",
  "timer",
  "100rel, timer",
  "foo, bar",
  "replaces",
  "90",
  "90;refresher=uac",
  "90;refresher=uas",
  "1800;refresher=nobody",
  "5",
  "Digest",
  'Digest username="a"',
  'Digest realm="x", nonce="y", response="z", uri="sip:a@b"',
  'Digest username="a", realm="faxline", nonce="b2c4e1f0", uri="sip:a@b", response="0", nc=zz, qop=auth-int',
  "SIP/2.0/UDP 127.0.0.1:0;branch=z9hG4bKport0",
  "SIP/2.0/UDP 127.0.0.1:70000;branch=z9hG4bKport70000",
  "SIP/2.0/UDP 127.0.0.1;branch=z9hG4bKnoport;rport=0",
  "SIP/2.0/UDP 127.0.0.1:5060;maddr=224.0.0.1;branch=z9hG4bKmaddr",
  "SIP/2.0/UDP 255.255.255.255:5060;branch=z9hG4bKbroadcast",
  "SIP/2.0/TCP 127.0.0.1:5060;branch=z9hG4bKtcp",
  "SIP/2.0/SCTP 127.0.0.1:5060;branch=z9hG4bKsctp",
  "SIP/2.0/UDP [::1]:5060;branch=z9hG4bKv6",
  "SIP/2.0/UDP 127.0.0.1:5060",
  "SIP/2.0/UDP 127.0.0.1:5060;branch=",
  "SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bKa, SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bKb",
  "Q.850;cause=16",
  "Q.850;cause=999999999999",
  "<sip:127.0.0.1:9;lr>",
  "<sip:192.0.2.1;lr>, <sip:127.0.0.1:9;lr>",
];

const longString = fc.constantFrom(1_000, 8_000, 17_000).chain((n) => fc.constantFrom("x".repeat(n), ";a=b".repeat(n / 4), ",".repeat(n), "<".repeat(n)));

/** A value for a header, a URI, a parameter: an edge value, random text or bytes, or a long string. */
export const edgeValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...EDGE_CONSTANTS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 1, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String) },
  { weight: 1, arbitrary: longString },
);

const headerName = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...HEADERS) }, { weight: 2, arbitrary: fc.constantFrom(...COMPACT_NAMES) }, { weight: 1, arbitrary: fc.constantFrom(...ODD_NAMES) });

const method = fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...METHODS) }, { weight: 1, arbitrary: fc.constantFrom(...ODD_METHODS) });

const viaHost = fc.constantFrom("127.0.0.1", "127.0.0.1:0", "127.0.0.1:70000", "127.0.0.1:-1", "127.0.0.1:", "[::1]", "[::1", "exa mple", "192.0.2.1:5060", "0.0.0.0:5060", "255.255.255.255:9", "224.0.0.1:5060", "host.invalid:5060", "");
const viaParam = fc.constantFrom(";rport", ";rport=0", ";rport=70000", ";rport=abc", ";received=nowhere", ";received=192.0.2.1", ";received=", ";maddr=224.0.0.1", ";maddr=", ";ttl=300", ";branch=", ";branch=z9hG4bK", ";branch=x;branch=y", "");

/** Edits of an SDP body, line by line. */
const sdpLine = fc.constantFrom(
  "m=image 0 udptl t38",
  "m=image 70000 udptl t38",
  "m=image -1 udptl t38",
  "m=image 9 udptl",
  "m=image 9",
  "m=audio 9 RTP/AVP",
  "m=audio 9 RTP/AVP 8 0 101 96 97 98 99 100 101 102 103 104 105",
  "m=audio 9 RTP/SAVP 8",
  "m=video 9 RTP/AVP 31",
  "c=IN IP4 0.0.0.0",
  "c=IN IP4 255.255.255.255",
  "c=IN IP4 224.0.0.1/127",
  "c=IN IP6 ::1",
  "c=IN IP4 host.invalid",
  "c=IN IP4",
  "c=",
  "a=T38FaxVersion:99",
  "a=T38FaxVersion:-1",
  "a=T38MaxBitRate:0",
  "a=T38MaxBitRate:99999999999999999999",
  "a=T38FaxMaxDatagram:0",
  "a=T38FaxMaxDatagram:1",
  "a=T38FaxMaxBuffer:-5",
  "a=T38FaxRateManagement:localTCF",
  "a=T38FaxRateManagement:",
  "a=T38FaxUdpEC:t38UDPFEC",
  "a=T38FaxUdpEC:nonsense",
  "a=rtpmap:8",
  "a=rtpmap:96 telephone-event/0",
  "a=ptime:0",
  "a=ptime:99999",
  "a=sendonly",
  "a=inactive",
  "v=1",
  "o=",
  "t=x y",
  "",
  "garbage",
);

/** One mutation, as data (so that fast-check can print and shrink it). */
export type Mutation =
  | { op: "dropHeader"; index: number }
  | { op: "dupHeader"; index: number }
  | { op: "renameHeader"; index: number; name: string }
  | { op: "setHeader"; index: number; value: string }
  | { op: "addHeader"; name: string; value: string; at: number }
  | { op: "setMethod"; method: string; cseqToo: boolean }
  | { op: "setUri"; uri: string }
  | { op: "setVersion"; version: string }
  | { op: "setStartLine"; line: string }
  | { op: "setVia"; host: string; params: string[] }
  | { op: "sdpLine"; index: number; action: "drop" | "dup" | "set" | "insert"; line: string }
  | { op: "setBody"; body: string; fixLength: boolean }
  | { op: "lineEnds"; style: "lf" | "cr" | "lfcr" | "fold" | "trailingSpace" }
  | { op: "truncate"; fraction: number }
  | { op: "flipBytes"; at: number[]; byte: number }
  | { op: "insertBytes"; fraction: number; bytes: number[] }
  | { op: "repeat"; times: number };

const index = fc.nat({ max: 40 });
export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant("dropHeader" as const), index }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("dupHeader" as const), index }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("renameHeader" as const), index, name: headerName }) },
  { weight: 5, arbitrary: fc.record({ op: fc.constant("setHeader" as const), index, value: edgeValue }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant("addHeader" as const), name: headerName, value: edgeValue, at: index }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("setMethod" as const), method, cseqToo: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("setUri" as const), uri: edgeValue }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("setVersion" as const), version: fc.constantFrom("SIP/2.0", "SIP/3.0", "SIP/2", "sip/2.0", "HTTP/1.1", "", "SIP/2.0 extra") }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("setStartLine" as const), line: fc.oneof(edgeValue, fc.constantFrom("SIP/2.0 200 OK", "SIP/2.0 999 Odd", "SIP/2.0 99 Low", "SIP/2.0 abc", "SIP/2.0 487", "GET / HTTP/1.1", "INVITE", "INVITE sip:a@b")) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("setVia" as const), host: viaHost, params: fc.array(viaParam, { maxLength: 3 }) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("sdpLine" as const), index: fc.nat({ max: 20 }), action: fc.constantFrom("drop" as const, "dup" as const, "set" as const, "insert" as const), line: sdpLine }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("setBody" as const), body: edgeValue, fixLength: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("lineEnds" as const), style: fc.constantFrom("lf" as const, "cr" as const, "lfcr" as const, "fold" as const, "trailingSpace" as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("truncate" as const), fraction: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("flipBytes" as const), at: fc.array(fc.nat({ max: 2000 }), { minLength: 1, maxLength: 4 }), byte: fc.nat({ max: 255 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("insertBytes" as const), fraction: fc.double({ min: 0, max: 1, noNaN: true }), bytes: fc.array(fc.nat({ max: 255 }), { minLength: 1, maxLength: 16 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("repeat" as const), times: fc.integer({ min: 2, max: 3 }) }) },
);

/** One generated message: which seed, whether it rides a live call, how it is cut into stream writes, its mutations. */
export interface MutationCase {
  seed: number;
  /** In-dialog seeds: use the live call's Call-ID and tags (when there is a live call). */
  inLiveCall: boolean;
  /** Stream transports: the sizes of the writes the bytes are cut into (the rest goes in one). */
  chunks: readonly number[];
  mutations: Mutation[];
}

export function mutationCase(seedCount: number): fc.Arbitrary<MutationCase> {
  return fc.record({
    seed: fc.nat({ max: seedCount - 1 }),
    inLiveCall: fc.double({ min: 0, max: 1, noNaN: true }).map((x) => x < 0.7),
    chunks: fc.oneof({ weight: 3, arbitrary: fc.constant<number[]>([]) }, { weight: 1, arbitrary: fc.array(fc.integer({ min: 1, max: 200 }), { maxLength: 5 }) }),
    // A tenth unmutated: the seeds themselves, as a carrier sends them.
    mutations: fc.oneof({ weight: 1, arbitrary: fc.constant<Mutation[]>([]) }, { weight: 9, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 4 }) }),
  });
}

function headerAt(m: EditableMessage, i: number): [string, string] | undefined {
  return m.headers.length === 0 ? undefined : m.headers[i % m.headers.length];
}

/** Applies the message-level mutations; returns the byte-level ones for `toBytes`. */
function applyToMessage(m: EditableMessage, mutations: readonly Mutation[]): Mutation[] {
  const later: Mutation[] = [];
  for (const mu of mutations) {
    switch (mu.op) {
      case "dropHeader":
        if (m.headers.length > 0) m.headers.splice(mu.index % m.headers.length, 1);
        break;
      case "dupHeader": {
        const h = headerAt(m, mu.index);
        if (h) m.headers.splice(mu.index % m.headers.length, 0, [h[0], h[1]]);
        break;
      }
      case "renameHeader": {
        const h = headerAt(m, mu.index);
        if (h) h[0] = mu.name;
        break;
      }
      case "setHeader": {
        const h = headerAt(m, mu.index);
        if (h) h[1] = mu.value;
        break;
      }
      case "addHeader":
        m.headers.splice(mu.at % (m.headers.length + 1), 0, [mu.name, mu.value]);
        break;
      case "setMethod": {
        const parts = m.startLine.split(" ");
        if (!m.startLine.startsWith("SIP/")) parts[0] = mu.method;
        m.startLine = parts.join(" ");
        if (mu.cseqToo) for (const h of m.headers) if (h[0].toLowerCase() === "cseq") h[1] = `${h[1].split(" ")[0]} ${mu.method}`;
        break;
      }
      case "setUri": {
        const parts = m.startLine.split(" ");
        if (parts.length >= 3) parts[1] = mu.uri;
        m.startLine = parts.join(" ");
        break;
      }
      case "setVersion": {
        const parts = m.startLine.split(" ");
        if (m.startLine.startsWith("SIP/")) parts[0] = mu.version;
        else parts[parts.length - 1] = mu.version;
        m.startLine = parts.join(" ");
        break;
      }
      case "setStartLine":
        m.startLine = mu.line;
        break;
      case "setVia": {
        const via = m.headers.find((h) => h[0].toLowerCase() === "via" || h[0] === "v");
        if (via) {
          const transport = /^SIP\/2\.0\/\w+/.exec(via[1])?.[0] ?? "SIP/2.0/UDP";
          const branch = /;branch=[^;,\s]*/.exec(via[1])?.[0] ?? "";
          via[1] = `${transport} ${mu.host}${branch}${mu.params.join("")}`;
        }
        break;
      }
      case "sdpLine": {
        const lines = m.body.split("\r\n");
        const i = mu.index % Math.max(1, lines.length);
        if (mu.action === "drop") lines.splice(i, 1);
        else if (mu.action === "dup") lines.splice(i, 0, lines[i] ?? "");
        else if (mu.action === "set") lines[i] = mu.line;
        else lines.splice(i, 0, mu.line);
        m.body = lines.join("\r\n");
        fixContentLength(m);
        break;
      }
      case "setBody":
        m.body = mu.body;
        if (mu.fixLength) fixContentLength(m);
        break;
      default:
        later.push(mu);
    }
  }
  return later;
}

function fixContentLength(m: EditableMessage): void {
  for (const h of m.headers) if (/^(content-length|l)$/i.test(h[0]) && /^\d+$/.test(h[1])) h[1] = String(Buffer.byteLength(m.body, "utf8"));
}

function toBytes(m: EditableMessage, mutations: readonly Mutation[]): Buffer {
  let bytes = serializeEditable(m);
  for (const mu of mutations) {
    switch (mu.op) {
      case "lineEnds": {
        const text = bytes.toString("latin1");
        const styled =
          mu.style === "lf"
            ? text.replace(/\r\n/g, "\n")
            : mu.style === "cr"
              ? text.replace(/\r\n/g, "\r")
              : mu.style === "lfcr"
                ? text.replace(/\r\n/g, "\n\r")
                : mu.style === "fold"
                  ? text.replace(/(;|, )/g, "$1\r\n ")
                  : text.replace(/\r\n/g, " \r\n");
        bytes = Buffer.from(styled, "latin1");
        break;
      }
      case "truncate":
        bytes = bytes.subarray(0, Math.floor(bytes.length * mu.fraction));
        break;
      case "flipBytes":
        bytes = Buffer.from(bytes);
        for (const at of mu.at) if (bytes.length > 0) bytes[at % bytes.length] = mu.byte;
        break;
      case "insertBytes": {
        const at = Math.floor(bytes.length * mu.fraction);
        bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(mu.bytes), bytes.subarray(at)]);
        break;
      }
      case "repeat":
        bytes = Buffer.concat(Array.from({ length: mu.times }, () => bytes));
        break;
      default:
        break;
    }
  }
  return bytes;
}

/** The bytes of one generated message. */
export function renderCase(seeds: readonly SipSeed[], c: MutationCase, values: SeedValues): Buffer {
  const message = fillSeed(seeds[c.seed % seeds.length]!, values);
  const later = applyToMessage(message, c.mutations);
  return toBytes(message, later);
}

/** Draws `count` cases for a seed (fast-check's generator, so that the same seed gives the same cases). */
export function drawCases(seedCount: number, count: number, seed: number): MutationCase[] {
  return fc.sample(mutationCase(seedCount), { seed, numRuns: count });
}

const SWEEP_VALUES: SeedValues = { transport: "UDP", localIp: "127.0.0.1", localPort: 9, node: "127.0.0.1:9", did: "+1", caller: "+2", branch: "z9hG4bK", callId: "c", fromTag: "f", toTag: "t", mediaPort: 9 };

/**
 * Every method with every header (the seeds' and all of HEADERS, long and compact) set to a
 * drawn edge value: a request of that method made from the seed of that method (the OPTIONS
 * seed for methods no seed has), the header set where it is and added where it is not.
 */
export function sweepCases(seeds: readonly SipSeed[], seed: number): MutationCase[] {
  const values = fc.sample(edgeValue, { seed, numRuns: METHODS.length * (HEADERS.length + COMPACT_NAMES.length) });
  const out: MutationCase[] = [];
  let v = 0;
  const options = seeds.findIndex((s) => s.name.startsWith("options"));
  for (const m of METHODS) {
    const found = seeds.findIndex((s) => !s.name.startsWith("response") && s.text.startsWith(`${m} `));
    const seedIndex = found === -1 ? options : found;
    const names = fillSeed(seeds[seedIndex]!, SWEEP_VALUES).headers.map(([n]) => n.toLowerCase());
    for (const name of [...HEADERS, ...COMPACT_NAMES]) {
      const mutations: Mutation[] = [];
      if (found === -1) mutations.push({ op: "setMethod", method: m, cseqToo: true });
      const at = names.indexOf(name.toLowerCase());
      mutations.push(at === -1 ? { op: "addHeader", name, value: values[v++]!, at: 1 } : { op: "setHeader", index: at, value: values[v++]! });
      out.push({ seed: seedIndex, inLiveCall: seeds[seedIndex]!.inDialog, chunks: [], mutations });
    }
  }
  return out;
}

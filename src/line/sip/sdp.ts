/**
 * SDP (RFC 4566) for a fax call: build our offers and answers, parse the far end's, and reduce
 * them to the typed media description the media layer uses (`NegotiatedMedia`).
 *
 * Two kinds of stream matter:
 *  - audio, `m=audio <port> RTP/AVP 8 0 [101]`: G.711 A-law (PCMA, payload type 8) and µ-law
 *    (PCMU, 0), optionally RFC 4733 telephone-event. The far end's answer picks the codec: the
 *    first of its formats that we offered.
 *  - T.38, `m=image <port> udptl t38` with the ITU-T T.38 Annex D attributes:
 *      T38FaxVersion            negotiated: the answer is ≤ the offer
 *      T38MaxBitRate            declarative; the answer takes the lower
 *      T38FaxRateManagement     negotiated: the answer repeats the offer ("transferredTCF" for UDP)
 *      T38FaxMaxBuffer          declarative: each side states its own receive buffer
 *      T38FaxMaxDatagram        declarative: the largest datagram that side accepts
 *      T38FaxUdpEC              negotiated: t38UDPRedundancy, t38UDPFEC or none
 *      T38FaxFillBitRemoval, T38FaxTranscodingMMR, T38FaxTranscodingJBIG
 *                               negotiated booleans; we support none of them, so answers omit them
 *    Attribute names are matched without regard to case (gateways write `T38faxVersion` too),
 *    and a boolean may be written bare or as `:1`/`:0`.
 *
 * Versions (RFC 3264 §8, §5): our `o=` line keeps one session id for the call; `SdpSession`
 * increases the version only when the SDP it produces differs from the last one sent, so a
 * session refresh is answered with the very same SDP and version.
 */

export class SdpParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SdpParseError";
  }
}

export interface SdpConnection {
  netType: string;
  addrType: "IP4" | "IP6";
  address: string;
}

export interface SdpAttribute {
  name: string;
  value: string | null;
}

export interface SdpOrigin {
  username: string;
  sessionId: string;
  /** Decimal text: it may exceed 2^53. */
  sessionVersion: string;
  netType: string;
  addrType: string;
  address: string;
}

export interface MediaDescription {
  /** "audio", "image", … */
  type: string;
  /** 0 rejects or disables the stream (RFC 3264 §6, §8.2). */
  port: number;
  /** RTP/AVP, udptl, UDPTL, … */
  proto: string;
  formats: string[];
  connection: SdpConnection | null;
  attributes: SdpAttribute[];
}

export interface SessionDescription {
  origin: SdpOrigin;
  sessionName: string;
  connection: SdpConnection | null;
  attributes: SdpAttribute[];
  media: MediaDescription[];
}

export type AudioCodec = "PCMA" | "PCMU";

/** RFC 3551 static payload types. */
export const STATIC_PAYLOAD_TYPES: Readonly<Record<AudioCodec, number>> = { PCMA: 8, PCMU: 0 };

export type T38ErrorCorrection = "t38UDPRedundancy" | "t38UDPFEC" | "none";
export type T38RateManagement = "transferredTCF" | "localTCF";

/** The T.38 session parameters of one side, as its SDP states them. */
export interface T38Params {
  version: 0 | 1 | 2 | 3;
  /** bit/s; 14400 for V.17. */
  maxBitRate: number;
  rateManagement: T38RateManagement;
  /** Bytes; null when not stated. */
  maxBuffer: number | null;
  /** Bytes; null when not stated (the media layer then assumes its default, 400). */
  maxDatagram: number | null;
  errorCorrection: T38ErrorCorrection;
  fillBitRemoval: boolean;
  transcodingMMR: boolean;
  transcodingJBIG: boolean;
}

export interface MediaEndpoint {
  address: string;
  port: number;
}

/** Where to send an audio stream's RTP, and its RTCP when the far end names a place for it. */
export interface AudioEndpoint extends MediaEndpoint {
  /** The far end's `a=rtcp` (RFC 3605): where it takes RTCP; absent, its RTP port + 1. */
  rtcp?: MediaEndpoint;
}

export interface AudioMedia {
  kind: "audio";
  /** Where to send RTP (and RTCP). */
  remote: AudioEndpoint;
  codec: AudioCodec;
  payloadType: number;
  /** The far end's telephone-event payload type, or null. */
  telephoneEventPayloadType: number | null;
  /** Packet time the far end asks for, ms. (Default: 20) */
  ptimeMs: number;
}

export interface T38Media {
  kind: "t38";
  /** Where to send UDPTL. */
  remote: MediaEndpoint;
  /**
   * The session parameters for the media layer: version, rate management and error correction
   * as negotiated; `maxDatagram`/`maxBuffer` are the far end's (the largest datagram we may send).
   */
  params: T38Params;
}

export type NegotiatedMedia = AudioMedia | T38Media;

/** What we are able to do in T.38; the defaults suit SpanDSP with our UDPTL. */
export interface T38Capabilities {
  /** Highest version we speak. (Default: 0) */
  version: 0 | 1 | 2 | 3;
  /** (Default: 14400) */
  maxBitRate: number;
  /** Our receive buffer, bytes. (Default: 2000) */
  maxBuffer: number;
  /** The largest datagram we accept, bytes. (Default: 400) */
  maxDatagram: number;
  /** Error correction we send, in preference order. (Default: ["t38UDPRedundancy"]) */
  errorCorrection: readonly T38ErrorCorrection[];
}

export const DEFAULT_T38_CAPABILITIES: Readonly<T38Capabilities> = Object.freeze({
  version: 0,
  maxBitRate: 14_400,
  maxBuffer: 2000,
  maxDatagram: 400,
  errorCorrection: Object.freeze(["t38UDPRedundancy"]) as readonly T38ErrorCorrection[],
});

// ---------------------------------------------------------------------------------------------
// Parsing and formatting

export function parseSdp(text: string): SessionDescription {
  const lines = text.split(/\r?\n/).map((l) => l.trimEnd()).filter((l) => l !== "");
  if (lines[0] !== "v=0") throw new SdpParseError("SDP must start with v=0");
  let origin: SdpOrigin | null = null;
  let sessionName = "";
  let connection: SdpConnection | null = null;
  const attributes: SdpAttribute[] = [];
  const media: MediaDescription[] = [];
  let current: MediaDescription | null = null;
  for (const line of lines.slice(1)) {
    if (line[1] !== "=") throw new SdpParseError(`bad SDP line ${JSON.stringify(line)}`);
    const type = line[0];
    const value = line.slice(2);
    switch (type) {
      case "o": {
        const f = value.split(/\s+/);
        if (f.length !== 6 || !/^\d+$/.test(f[2]!)) throw new SdpParseError(`bad o= line ${JSON.stringify(value)}`);
        origin = { username: f[0]!, sessionId: f[1]!, sessionVersion: f[2]!, netType: f[3]!, addrType: f[4]!, address: f[5]! };
        break;
      }
      case "s":
        sessionName = value;
        break;
      case "c": {
        const c = parseConnection(value);
        if (current === null) connection = c;
        else current.connection = c;
        break;
      }
      case "m": {
        // m=<media> <port>[/<count>] <proto> <fmt> …
        const [mediaType, portText, proto, ...formats] = value.split(/\s+/);
        if (mediaType === undefined || portText === undefined || proto === undefined) {
          throw new SdpParseError(`bad m= line ${JSON.stringify(value)}`);
        }
        const port = portText.split("/")[0]!;
        if (!/^\d+$/.test(port) || Number(port) > 65535) throw new SdpParseError(`bad m= port ${JSON.stringify(portText)}`);
        current = { type: mediaType, port: Number(port), proto, formats, connection: null, attributes: [] };
        media.push(current);
        break;
      }
      case "a": {
        const colon = value.indexOf(":");
        const attribute = colon === -1 ? { name: value, value: null } : { name: value.slice(0, colon), value: value.slice(colon + 1) };
        (current === null ? attributes : current.attributes).push(attribute);
        break;
      }
      default:
        // v, i, u, e, p, b, t, r, z, k: not needed for negotiation.
        break;
    }
  }
  if (origin === null) throw new SdpParseError("SDP without o= line");
  return { origin, sessionName, connection, attributes, media };
}

function parseConnection(value: string): SdpConnection {
  const f = value.split(/\s+/);
  if (f.length !== 3 || (f[1] !== "IP4" && f[1] !== "IP6")) throw new SdpParseError(`bad c= line ${JSON.stringify(value)}`);
  // Strip a multicast TTL/count suffix; unicast addresses have none.
  return { netType: f[0]!, addrType: f[1], address: f[2]!.split("/")[0]! };
}

export function formatSdp(session: SessionDescription): string {
  const o = session.origin;
  const lines = [
    "v=0",
    `o=${o.username} ${o.sessionId} ${o.sessionVersion} ${o.netType} ${o.addrType} ${o.address}`,
    `s=${session.sessionName || "-"}`,
  ];
  if (session.connection !== null) lines.push(formatConnection(session.connection));
  lines.push("t=0 0");
  for (const a of session.attributes) lines.push(formatAttribute(a));
  for (const m of session.media) {
    lines.push(`m=${m.type} ${m.port} ${m.proto} ${m.formats.join(" ")}`.trimEnd());
    if (m.connection !== null) lines.push(formatConnection(m.connection));
    for (const a of m.attributes) lines.push(formatAttribute(a));
  }
  return `${lines.join("\r\n")}\r\n`;
}

function formatConnection(c: SdpConnection): string {
  return `c=${c.netType} ${c.addrType} ${c.address}`;
}

function formatAttribute(a: SdpAttribute): string {
  return a.value === null ? `a=${a.name}` : `a=${a.name}:${a.value}`;
}

function attribute(media: MediaDescription, name: string): SdpAttribute | undefined {
  const lower = name.toLowerCase();
  return media.attributes.find((a) => a.name.toLowerCase() === lower);
}

// ---------------------------------------------------------------------------------------------
// Building our media descriptions

export interface AudioOfferOptions {
  port: number;
  /** In preference order. (Default: ["PCMA", "PCMU"]) */
  codecs?: readonly AudioCodec[];
  /** Offer RFC 4733 telephone-event with this payload type; null for none. (Default: null) */
  telephoneEventPayloadType?: number | null;
  /** (Default: 20) */
  ptimeMs?: number;
}

export function buildAudioMedia(options: AudioOfferOptions): MediaDescription {
  const codecs = options.codecs ?? ["PCMA", "PCMU"];
  const te = options.telephoneEventPayloadType ?? null;
  const formats = codecs.map((c) => String(STATIC_PAYLOAD_TYPES[c]));
  const attributes: SdpAttribute[] = codecs.map((c) => ({ name: "rtpmap", value: `${STATIC_PAYLOAD_TYPES[c]} ${c}/8000` }));
  if (te !== null) {
    formats.push(String(te));
    attributes.push({ name: "rtpmap", value: `${te} telephone-event/8000` }, { name: "fmtp", value: `${te} 0-15` });
  }
  attributes.push({ name: "ptime", value: String(options.ptimeMs ?? 20) }, { name: "sendrecv", value: null });
  return { type: "audio", port: options.port, proto: "RTP/AVP", formats, connection: null, attributes };
}

/** `m=image <port> udptl t38` with our parameters (an offer, or an answer from `answerT38Params`). */
export function buildT38Media(port: number, params: T38Params): MediaDescription {
  const attributes: SdpAttribute[] = [
    { name: "T38FaxVersion", value: String(params.version) },
    { name: "T38MaxBitRate", value: String(params.maxBitRate) },
  ];
  if (params.fillBitRemoval) attributes.push({ name: "T38FaxFillBitRemoval", value: null });
  if (params.transcodingMMR) attributes.push({ name: "T38FaxTranscodingMMR", value: null });
  if (params.transcodingJBIG) attributes.push({ name: "T38FaxTranscodingJBIG", value: null });
  attributes.push({ name: "T38FaxRateManagement", value: params.rateManagement });
  if (params.maxBuffer !== null) attributes.push({ name: "T38FaxMaxBuffer", value: String(params.maxBuffer) });
  if (params.maxDatagram !== null) attributes.push({ name: "T38FaxMaxDatagram", value: String(params.maxDatagram) });
  attributes.push({ name: "T38FaxUdpEC", value: params.errorCorrection });
  return { type: "image", port, proto: "udptl", formats: ["t38"], connection: null, attributes };
}

/** Our T.38 offer: everything we can do, transferred TCF (the method T.38 requires over UDP). */
export function t38OfferParams(capabilities: T38Capabilities = DEFAULT_T38_CAPABILITIES): T38Params {
  return {
    version: capabilities.version,
    maxBitRate: capabilities.maxBitRate,
    rateManagement: "transferredTCF",
    maxBuffer: capabilities.maxBuffer,
    maxDatagram: capabilities.maxDatagram,
    errorCorrection: capabilities.errorCorrection[0] ?? "none",
    fillBitRemoval: false,
    transcodingMMR: false,
    transcodingJBIG: false,
  };
}

/**
 * Our answer to the far end's T.38 parameters: version and bit rate no higher than theirs, their
 * rate management, the error correction they offered if we can send it (else the best we can,
 * else none), our own buffer and datagram limits, no fill-bit removal or transcoding.
 */
export function answerT38Params(offer: T38Params, capabilities: T38Capabilities = DEFAULT_T38_CAPABILITIES): T38Params {
  const ec: T38ErrorCorrection = capabilities.errorCorrection.includes(offer.errorCorrection)
    ? offer.errorCorrection
    : offer.errorCorrection === "none"
      ? "none"
      : capabilities.errorCorrection.includes("t38UDPRedundancy")
        ? "t38UDPRedundancy"
        : "none";
  return {
    version: Math.min(offer.version, capabilities.version) as T38Params["version"],
    maxBitRate: Math.min(offer.maxBitRate, capabilities.maxBitRate),
    rateManagement: offer.rateManagement,
    maxBuffer: capabilities.maxBuffer,
    maxDatagram: capabilities.maxDatagram,
    errorCorrection: ec,
    fillBitRemoval: false,
    transcodingMMR: false,
    transcodingJBIG: false,
  };
}

// ---------------------------------------------------------------------------------------------
// Reading the far end's media

/** The T.38 parameters an `m=image … t38` stream states; absent values take the T.38 defaults. */
export function readT38Params(media: MediaDescription): T38Params {
  const int = (name: string): number | null => {
    const v = attribute(media, name)?.value;
    if (v === undefined || v === null || !/^\s*\d+\s*$/.test(v)) return null;
    return Number(v);
  };
  const flag = (name: string): boolean => {
    const a = attribute(media, name);
    if (a === undefined) return false;
    return a.value === null || a.value.trim() !== "0";
  };
  const version = int("T38FaxVersion") ?? 0;
  const rm = attribute(media, "T38FaxRateManagement")?.value?.trim().toLowerCase();
  const ecText = attribute(media, "T38FaxUdpEC")?.value?.trim().toLowerCase();
  return {
    version: Math.min(3, Math.max(0, version)) as T38Params["version"],
    maxBitRate: int("T38MaxBitRate") ?? 14_400,
    rateManagement: rm === "localtcf" ? "localTCF" : "transferredTCF",
    maxBuffer: int("T38FaxMaxBuffer"),
    maxDatagram: int("T38FaxMaxDatagram"),
    // T.38 Annex D: "the default is t38UDPRedundancy" when the attribute is absent… in practice
    // gateways that omit it send redundancy, so that is what an absent value means here.
    errorCorrection: ecText === "t38udpfec" ? "t38UDPFEC" : ecText === "none" ? "none" : "t38UDPRedundancy",
    fillBitRemoval: flag("T38FaxFillBitRemoval"),
    transcodingMMR: flag("T38FaxTranscodingMMR"),
    transcodingJBIG: flag("T38FaxTranscodingJBIG"),
  };
}

export function isT38Media(media: MediaDescription): boolean {
  return media.type.toLowerCase() === "image" && media.proto.toLowerCase() === "udptl" && media.formats.some((f) => f.toLowerCase() === "t38");
}

export function isAudioMedia(media: MediaDescription): boolean {
  return media.type.toLowerCase() === "audio" && /^RTP\/S?AVP$/i.test(media.proto);
}

/** The address to send a stream to: its own c= line, else the session's. */
export function remoteEndpoint(session: SessionDescription, media: MediaDescription): MediaEndpoint | null {
  const c = media.connection ?? session.connection;
  if (c === null) return null;
  return { address: c.address, port: media.port };
}

/**
 * A media description's `a=rtcp:<port> [IN IP4|IP6 <address>]` (RFC 3605 §2.1), the address
 * defaulting to the stream's own; null without one, or when it cannot be read (then RTCP goes to
 * the RTP port + 1, the default the RFC keeps).
 */
export function rtcpEndpoint(media: MediaDescription, streamAddress: string): MediaEndpoint | null {
  const value = attribute(media, "rtcp")?.value;
  if (value === undefined || value === null) return null;
  const m = /^(\d{1,5})(?:\s+IN\s+IP[46]\s+(\S+))?\s*$/i.exec(value.trim());
  if (m === null) return null;
  const port = Number(m[1]);
  if (port < 1 || port > 65535) return null;
  return { address: m[2] ?? streamAddress, port };
}

/** The codec the far end's audio stream uses among `acceptable`: its first matching format. */
export function readAudio(session: SessionDescription, media: MediaDescription, acceptable: readonly AudioCodec[]): AudioMedia | null {
  const remote = remoteEndpoint(session, media);
  if (remote === null || media.port === 0) return null;
  const rtpmaps = new Map<string, string>();
  for (const a of media.attributes) {
    if (a.name.toLowerCase() !== "rtpmap" || a.value === null) continue;
    const m = /^(\d+)\s+([^/\s]+)/.exec(a.value);
    if (m !== null) rtpmaps.set(m[1]!, m[2]!.toLowerCase());
  }
  const codecOf = (pt: string): AudioCodec | null => {
    const name = rtpmaps.get(pt);
    if (name !== undefined) return name === "pcma" ? "PCMA" : name === "pcmu" ? "PCMU" : null;
    return pt === "8" ? "PCMA" : pt === "0" ? "PCMU" : null;
  };
  let chosen: { codec: AudioCodec; pt: number } | null = null;
  for (const f of media.formats) {
    const codec = codecOf(f);
    if (codec !== null && acceptable.includes(codec)) {
      chosen = { codec, pt: Number(f) };
      break;
    }
  }
  if (chosen === null) return null;
  let te: number | null = null;
  for (const [pt, name] of rtpmaps) if (name === "telephone-event" && media.formats.includes(pt)) te = Number(pt);
  const ptime = Number(attribute(media, "ptime")?.value ?? "20");
  const rtcp = rtcpEndpoint(media, remote.address);
  return {
    kind: "audio",
    remote: rtcp === null ? remote : { ...remote, rtcp },
    codec: chosen.codec,
    payloadType: chosen.pt,
    telephoneEventPayloadType: te,
    ptimeMs: Number.isFinite(ptime) && ptime > 0 ? ptime : 20,
  };
}

/** The far end's T.38 stream as the media layer needs it, or null when there is none active. */
export function readT38(session: SessionDescription, media: MediaDescription): T38Media | null {
  if (!isT38Media(media) || media.port === 0) return null;
  const remote = remoteEndpoint(session, media);
  if (remote === null) return null;
  return { kind: "t38", remote, params: readT38Params(media) };
}

/** The active stream an answer to our offer (or the far end's offer) describes: T.38 first, else audio. */
export function readNegotiatedMedia(session: SessionDescription, acceptableAudio: readonly AudioCodec[]): NegotiatedMedia | null {
  for (const m of session.media) {
    const t38 = readT38(session, m);
    if (t38 !== null) return t38;
  }
  for (const m of session.media) {
    if (!isAudioMedia(m)) continue;
    const audio = readAudio(session, m, acceptableAudio);
    if (audio !== null) return audio;
  }
  return null;
}

export function sameMedia(a: NegotiatedMedia | null, b: NegotiatedMedia | null): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

// ---------------------------------------------------------------------------------------------
// Answering the far end's offer

export interface LocalMediaPorts {
  address: string;
  audioPort: number;
  t38Port: number;
}

export interface AnswerPolicy {
  ports: LocalMediaPorts;
  /** Accept a T.38 stream. */
  t38: boolean;
  codecs: readonly AudioCodec[];
  telephoneEventPayloadType: number | null;
  t38Capabilities: T38Capabilities;
}

export interface OfferAnswer {
  /** Our answer's media lines, one per offered line in order (rejected ones with port 0). */
  media: MediaDescription[];
  /** The stream in use after this exchange: what the far end will send and receive. */
  negotiated: NegotiatedMedia;
}

/**
 * Answers an offer (RFC 3264 §6): one answer line per offered line. The first usable T.38 line
 * is accepted when `t38` is allowed; otherwise the first usable audio line with a codec we take.
 * Every other line is rejected with port 0. Returns null when nothing can be accepted (the
 * request is then answered 488 Not Acceptable Here).
 */
export function answerOffer(offer: SessionDescription, policy: AnswerPolicy): OfferAnswer | null {
  let chosen = -1;
  let found: NegotiatedMedia | null = null;
  if (policy.t38) {
    chosen = offer.media.findIndex((m) => readT38(offer, m) !== null);
    if (chosen !== -1) found = readT38(offer, offer.media[chosen]!);
  }
  if (found === null) {
    chosen = -1;
    for (let i = 0; i < offer.media.length && found === null; i++) {
      const m = offer.media[i]!;
      if (!isAudioMedia(m)) continue;
      found = readAudio(offer, m, policy.codecs);
      if (found !== null) chosen = i;
    }
  }
  if (found === null) return null;
  let negotiated: NegotiatedMedia;
  let answerLine: MediaDescription;
  if (found.kind === "t38") {
    const ours = answerT38Params(found.params, policy.t38Capabilities);
    // The media layer speaks what was agreed; the far end's own limits (buffer, datagram) stay as
    // it stated them.
    negotiated = {
      ...found,
      params: {
        ...found.params,
        version: ours.version,
        maxBitRate: ours.maxBitRate,
        errorCorrection: ours.errorCorrection,
        fillBitRemoval: false,
        transcodingMMR: false,
        transcodingJBIG: false,
      },
    };
    answerLine = buildT38Media(policy.ports.t38Port, ours);
  } else {
    negotiated = found;
    // Answer with the chosen codec only, plus telephone-event when both sides want it.
    const te = found.telephoneEventPayloadType !== null && policy.telephoneEventPayloadType !== null ? found.telephoneEventPayloadType : null;
    answerLine = buildAudioMedia({ port: policy.ports.audioPort, codecs: [found.codec], telephoneEventPayloadType: te, ptimeMs: found.ptimeMs });
    // Keep the far end's payload type number for the codec.
    answerLine.formats[0] = String(found.payloadType);
    answerLine.attributes[0] = { name: "rtpmap", value: `${found.payloadType} ${found.codec}/8000` };
  }
  const media = offer.media.map((m, i): MediaDescription =>
    i === chosen ? answerLine : { type: m.type, port: 0, proto: m.proto, formats: m.formats.slice(0, 1), connection: null, attributes: [] },
  );
  return { media, negotiated };
}

// ---------------------------------------------------------------------------------------------
// Our side of the session: one o= line, versions that move only when the SDP changes.

export class SdpSession {
  readonly #username: string;
  readonly #sessionId: string;
  readonly #address: string;
  #version: bigint;
  #lastBody: string | null = null;
  #lastText: string | null = null;

  constructor(options: { address: string; username?: string; sessionId?: string }) {
    this.#address = options.address;
    this.#username = options.username ?? "faxline";
    this.#sessionId = options.sessionId ?? String(Math.floor(Date.now() / 1000) * 1000 + Math.floor(Math.random() * 1000));
    this.#version = BigInt(this.#sessionId);
  }

  /**
   * The SDP text for `media`. The version goes up by one when the description differs from the
   * last one produced, and stays when it is the same (RFC 3264 §8: "If the SDP is unchanged, the
   * version number in the o= line MUST be the same as the previous one").
   */
  describe(media: readonly MediaDescription[]): string {
    const session: SessionDescription = {
      origin: { username: this.#username, sessionId: this.#sessionId, sessionVersion: "0", netType: "IN", addrType: addrType(this.#address), address: this.#address },
      sessionName: "faxline",
      connection: { netType: "IN", addrType: addrType(this.#address), address: this.#address },
      attributes: [],
      media: [...media],
    };
    const body = formatSdp(session);
    if (this.#lastBody !== null && body === this.#lastBody) return this.#lastText!;
    if (this.#lastBody !== null) this.#version += 1n;
    session.origin.sessionVersion = this.#version.toString();
    this.#lastBody = body;
    this.#lastText = formatSdp(session);
    return this.#lastText;
  }

  get version(): string {
    return this.#version.toString();
  }
}

function addrType(address: string): "IP4" | "IP6" {
  return address.includes(":") ? "IP6" : "IP4";
}

/**
 * RTP (RFC 3550) for G.711 fax audio: the packet codec, a fixed-delay playout buffer, and the
 * UDP socket a G.711 fax session sends and receives its 20 ms frames through.
 *
 * Packets: a 12-byte header (version 2, marker, payload type, sequence number, timestamp in
 * samples at 8 kHz, SSRC), CSRCs, an optional header extension and padding are skipped on
 * receipt. A packet with another payload type (RFC 4733 telephone-event, comfort noise) or
 * another SSRC than the stream's first is ignored and counted.
 *
 * Playout (`RtpPlayout`): fax modems want a steady stream, so received samples are played at a
 * fixed delay behind the first frame: the sample with timestamp ts plays at local sample
 * `firstArrival + delay + (ts - firstTs)`. Samples that arrive after their place are dropped
 * (late); a 20 ms tick with no sample at all is played as lost, and the modem fills it
 * (`AudioSession.process(n)`).
 * Jitter up to the delay costs nothing. The delay is in the engine's time, so on an accelerated
 * clock it must cover the wall-clock jitter times the speed.
 *
 * Sending (`RtpSocket.sendFrame`): each 20 ms frame of linear samples is G.711-encoded and sent
 * in one packet; the timestamp advances by the frame's length, the sequence number by one. The
 * socket is symmetric: it sends from the port it receives on, to the far end's address and port
 * from the SDP, and ignores datagrams from anywhere else.
 */
import type { RtcpSource } from "./rtcp.ts";
import dgram from "node:dgram";
import { bindUdpSocket } from "./bind-udp.ts";
import { randomInt } from "node:crypto";
import type { AudioCodec } from "../sip/sdp.ts";
import { g711Decode, g711Encode } from "./g711.ts";
import type { UdpEndpoint } from "./udptl-socket.ts";

export const RTP_VERSION = 2;
export const RTP_HEADER_BYTES = 12;

export interface RtpPacket {
  marker: boolean;
  payloadType: number;
  /** 0–65535. */
  sequence: number;
  /** 0–2^32-1, in samples (8 kHz for G.711). */
  timestamp: number;
  ssrc: number;
  payload: Uint8Array;
}

export class RtpDecodeError extends Error {
  constructor(message: string) {
    super(`Not an RTP packet: ${message}`);
    this.name = "RtpDecodeError";
  }
}

export function encodeRtp(packet: RtpPacket): Uint8Array {
  const out = new Uint8Array(RTP_HEADER_BYTES + packet.payload.length);
  const view = new DataView(out.buffer);
  out[0] = RTP_VERSION << 6;
  out[1] = (packet.marker ? 0x80 : 0) | (packet.payloadType & 0x7f);
  view.setUint16(2, packet.sequence & 0xffff);
  view.setUint32(4, packet.timestamp >>> 0);
  view.setUint32(8, packet.ssrc >>> 0);
  out.set(packet.payload, RTP_HEADER_BYTES);
  return out;
}

export function decodeRtp(datagram: Uint8Array): RtpPacket {
  if (datagram.length < RTP_HEADER_BYTES) throw new RtpDecodeError(`${datagram.length} bytes is shorter than the 12-byte header`);
  const view = new DataView(datagram.buffer, datagram.byteOffset, datagram.byteLength);
  const b0 = datagram[0]!;
  if (b0 >> 6 !== RTP_VERSION) throw new RtpDecodeError(`version ${b0 >> 6}, expected 2`);
  const csrcCount = b0 & 0x0f;
  let offset = RTP_HEADER_BYTES + csrcCount * 4;
  if (b0 & 0x10) {
    if (datagram.length < offset + 4) throw new RtpDecodeError("header extension cut short");
    offset += 4 + view.getUint16(offset + 2) * 4;
  }
  let end = datagram.length;
  if (b0 & 0x20) {
    const padding = datagram[datagram.length - 1]!;
    if (padding === 0 || padding > end - offset) throw new RtpDecodeError(`bad padding length ${padding}`);
    end -= padding;
  }
  if (offset > end) throw new RtpDecodeError("header longer than the packet");
  return {
    marker: (datagram[1]! & 0x80) !== 0,
    payloadType: datagram[1]! & 0x7f,
    sequence: view.getUint16(2),
    timestamp: view.getUint32(4),
    ssrc: view.getUint32(8),
    payload: datagram.subarray(offset, end),
  };
}

/** a - b for 32-bit RTP timestamps, as a signed distance. */
function timestampDistance(a: number, b: number): number {
  return ((a - b + 0x8000_0000) >>> 0) - 0x8000_0000;
}

export interface RtpPlayoutStats {
  /** Frames taken with audio in them. */
  played: number;
  /** Frames taken with no audio at all (lost, or not yet arrived). */
  missing: number;
  /** Samples that came after their place had been played, or too far ahead to keep. */
  lateSamples: number;
  /** Samples received twice. */
  duplicateSamples: number;
}

/**
 * The fixed-delay playout buffer, sample by sample, so frames of any length (ptime) line up
 * with the engine's 20 ms ticks. Times are local sample counts (the engine clock);
 * `delaySamples` is how far behind the first frame's arrival playout runs.
 */
export class RtpPlayout {
  readonly delaySamples: number;
  readonly #size: number;
  readonly #samples: Int16Array;
  readonly #filled: Uint8Array;
  /** Local sample at which the sample with timestamp `#firstTs` plays. */
  #base: number | null = null;
  #firstTs = 0;
  /** Samples before this local sample have been played (or given up). */
  #playedUpTo = 0;
  readonly stats: RtpPlayoutStats = { played: 0, missing: 0, lateSamples: 0, duplicateSamples: 0 };

  /** `capacitySamples`: how far ahead of playout a sample may be kept. (Default: 4 s, or twice the delay) */
  constructor(delaySamples: number, capacitySamples?: number) {
    if (!Number.isInteger(delaySamples) || delaySamples < 0) throw new RangeError(`delaySamples must be a whole number >= 0, got ${delaySamples}`);
    this.delaySamples = delaySamples;
    this.#size = capacitySamples ?? Math.max(32_000, 2 * delaySamples + 1600);
    this.#samples = new Int16Array(this.#size);
    this.#filled = new Uint8Array(this.#size);
  }

  /** A frame received when the local clock was at `nowSample`. */
  push(timestamp: number, samples: Int16Array, nowSample: number): void {
    if (this.#base === null) {
      this.#base = nowSample + this.delaySamples;
      this.#firstTs = timestamp;
    }
    const at = this.#base + timestampDistance(timestamp, this.#firstTs);
    for (let i = 0; i < samples.length; i++) {
      const position = at + i;
      if (position < this.#playedUpTo || position >= this.#playedUpTo + this.#size) {
        this.stats.lateSamples += 1;
        continue;
      }
      const slot = position % this.#size;
      if (this.#filled[slot]) {
        this.stats.duplicateSamples += 1;
        continue;
      }
      this.#samples[slot] = samples[i]!;
      this.#filled[slot] = 1;
    }
  }

  /**
   * The audio for the `length` samples from local sample `fromSample`: the samples received for
   * them (silence where some are missing), or the number `length` when none was received, for
   * the modem to fill in.
   */
  take(fromSample: number, length: number): Int16Array | number {
    // Anything between the last take and this one is given up.
    for (let p = this.#playedUpTo; p < fromSample && p < this.#playedUpTo + this.#size; p++) this.#filled[p % this.#size] = 0;
    const out = new Int16Array(length);
    let got = 0;
    for (let i = 0; i < length; i++) {
      const slot = (fromSample + i) % this.#size;
      if (this.#filled[slot]) {
        out[i] = this.#samples[slot]!;
        this.#filled[slot] = 0;
        got += 1;
      }
    }
    this.#playedUpTo = fromSample + length;
    if (got === 0) {
      if (this.#base !== null) this.stats.missing += 1;
      return length;
    }
    this.stats.played += 1;
    return out;
  }
}

export interface RtpSocketOptions {
  /** A bound UDP socket to use (sip-fax-line/media-ports.ts); else one is bound on `localAddress:localPort`. */
  socket?: dgram.Socket;
  localAddress?: string;
  localPort?: number;
  /** Where to send: the far end's address and port from the SDP. */
  remote: UdpEndpoint;
  codec: AudioCodec;
  /** The payload type negotiated for `codec` (8 PCMA, 0 PCMU, unless the SDP mapped another). */
  payloadType: number;
  /** Test hook: true drops the datagram about to be sent. */
  dropOutgoing?: () => boolean;
}

export interface RtpSocketStats {
  sent: number;
  received: number;
  /** Packets of another payload type (telephone-event, comfort noise …) or SSRC. */
  ignored: number;
  malformed: number;
  foreign: number;
  socketErrors: number;
}

export interface ReceivedAudioFrame {
  timestamp: number;
  sequence: number;
  samples: Int16Array;
}

export class RtpSocket {
  readonly #socket: dgram.Socket;
  readonly #options: RtpSocketOptions;
  #remote: UdpEndpoint;
  #sequence = randomInt(0, 0x10000);
  #timestamp = randomInt(0, 0x1_0000_0000);
  readonly #ssrc = randomInt(0, 0x1_0000_0000);
  #remoteSsrc: number | null = null;
  #first = true;
  #closed = false;
  #handler: ((frame: ReceivedAudioFrame) => void) | null = null;
  readonly #stats: RtpSocketStats = { sent: 0, received: 0, ignored: 0, malformed: 0, foreign: 0, socketErrors: 0 };
  /** Payload bytes sent, and the timestamp of the last packet (RTCP SR). */
  #octetsSent = 0;
  #lastTimestampSent = 0;
  #lastSentAt = 0;
  /** RFC 3550 A.1 and A.8 for the stream received: sequence cycles and interarrival jitter. */
  #rx: { base: number; max: number; cycles: number; transit: number | null; jitter: number } | null = null;

  private constructor(socket: dgram.Socket, options: RtpSocketOptions) {
    this.#socket = socket;
    this.#options = options;
    this.#remote = options.remote;
    socket.on("message", (datagram, from) => this.#onMessage(datagram, from));
    socket.on("error", () => {
      this.#stats.socketErrors += 1;
    });
  }

  static async open(options: RtpSocketOptions): Promise<RtpSocket> {
    return new RtpSocket(options.socket ?? (await bindUdpSocket(options.localAddress, options.localPort)), options);
  }

  get localPort(): number {
    return this.#socket.address().port;
  }

  get stats(): RtpSocketStats {
    return { ...this.#stats };
  }

  /** A new far end (re-INVITE or UPDATE with a new address). */
  setRemote(remote: UdpEndpoint): void {
    this.#remote = remote;
  }

  onFrame(handler: (frame: ReceivedAudioFrame) => void): void {
    this.#handler = handler;
  }

  /** Encodes and sends one frame; the timestamp moves on by its length. */
  sendFrame(samples: Int16Array): void {
    if (this.#closed) return;
    const packet = encodeRtp({
      marker: this.#first,
      payloadType: this.#options.payloadType,
      sequence: this.#sequence,
      timestamp: this.#timestamp,
      ssrc: this.#ssrc,
      payload: g711Encode(this.#options.codec, samples),
    });
    this.#first = false;
    const timestamp = this.#timestamp;
    this.#sequence = (this.#sequence + 1) & 0xffff;
    this.#timestamp = (this.#timestamp + samples.length) >>> 0;
    if (this.#options.dropOutgoing?.()) return;
    this.#stats.sent += 1;
    this.#octetsSent += samples.length;
    this.#lastTimestampSent = timestamp;
    this.#lastSentAt = performance.now();
    this.#socket.send(packet, this.#remote.port, this.#remote.address, (error) => {
      if (error) this.#stats.socketErrors += 1;
    });
  }

  /** What RTCP reports (rtcp.ts): our SSRC, what we sent, and what we received of the far end's stream. */
  rtcpSource(): ReturnType<RtcpSource> {
    const rx = this.#rx;
    const extendedHighest = rx === null ? 0 : rx.cycles + rx.max;
    return {
      ssrc: this.#ssrc,
      // §6.4.1: the RTP time of the report's NTP instant, from the last packet and the time since.
      sent: {
        packets: this.#stats.sent,
        octets: this.#octetsSent,
        rtpTimestamp: this.#stats.sent === 0 ? 0 : (this.#lastTimestampSent + Math.round((performance.now() - this.#lastSentAt) * 8)) >>> 0,
      },
      reception:
        rx === null || this.#remoteSsrc === null
          ? null
          : { ssrc: this.#remoteSsrc, extendedHighest, expected: extendedHighest - rx.base + 1, received: this.#stats.received, jitter: rx.jitter },
    };
  }

  /** RFC 3550 A.1 (sequence numbers with wrap-around, without the probation) and A.8 (jitter). */
  #track(packet: RtpPacket): void {
    // Arrival and transit in timestamp units, modulo 2^32 like the timestamps themselves.
    const arrival = Math.round(performance.now() * 8) >>> 0;
    const transit = (arrival - packet.timestamp) >>> 0;
    if (this.#rx === null) {
      this.#rx = { base: packet.sequence, max: packet.sequence, cycles: 0, transit, jitter: 0 };
      return;
    }
    const rx = this.#rx;
    const delta = (packet.sequence - rx.max + 0x10000) & 0xffff;
    if (delta > 0 && delta < 3000) {
      if (packet.sequence < rx.max) rx.cycles += 0x10000;
      rx.max = packet.sequence;
    }
    if (rx.transit !== null) {
      const d = Math.abs((transit - rx.transit) | 0);
      rx.jitter += (d - rx.jitter) / 16;
    }
    rx.transit = transit;
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    this.#handler = null;
    return new Promise((resolve) => {
      try {
        this.#socket.close(() => resolve());
      } catch {
        resolve();
      }
    });
  }

  #onMessage(datagram: Buffer, from: dgram.RemoteInfo): void {
    if (this.#closed) return;
    if (from.address !== this.#remote.address || from.port !== this.#remote.port) {
      this.#stats.foreign += 1;
      return;
    }
    let packet: RtpPacket;
    try {
      packet = decodeRtp(datagram);
    } catch {
      this.#stats.malformed += 1;
      return;
    }
    if (packet.payloadType !== this.#options.payloadType || (this.#remoteSsrc !== null && packet.ssrc !== this.#remoteSsrc)) {
      this.#stats.ignored += 1;
      return;
    }
    this.#remoteSsrc ??= packet.ssrc;
    this.#stats.received += 1;
    this.#track(packet);
    this.#handler?.({ timestamp: packet.timestamp, sequence: packet.sequence, samples: g711Decode(this.#options.codec, packet.payload) });
  }
}

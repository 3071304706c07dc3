/**
 * RTCP for G.711 fax calls (RFC 3550 §6): sender reports (SR) with a reception report block about
 * the far end's stream, receiver reports (RR) while we have sent nothing yet, and a BYE at the
 * end, from our RTP port + 1 (our SDP names no `a=rtcp`, so that is where the far end sends its
 * own) to the far end's `a=rtcp` port, or its RTP port + 1 (RFC 3605). Carriers' SBCs use
 * them to watch a call's quality and some end calls that send none; for us they also say what
 * the far end saw of our audio (loss, jitter), which a failed G.711 fax is often down to.
 *
 * Every packet is a compound packet as §6.1 requires: SR or RR first, then SDES with our CNAME
 * (and BYE last when leaving). The interval is 5 s (§6.2's minimum) times a random factor of
 * 0.5–1.5, the first report after half of it; `speed` shortens it for tests on a virtual clock.
 *
 * The reception side of a report (§6.4.1, A.3, A.8): the extended highest sequence number, the
 * packets expected and lost (cumulative and since the last report, as a fraction of 256), the
 * interarrival jitter in timestamp units, and LSR/DLSR from the far end's last SR.
 */
import dgram from "node:dgram";
import { randomInt } from "node:crypto";

export const RTCP_SR = 200;
export const RTCP_RR = 201;
export const RTCP_SDES = 202;
export const RTCP_BYE = 203;

/** What we know of the stream we receive, for a reception report block. */
export interface RtpReceptionState {
  ssrc: number;
  /** Extended highest sequence number received (cycles << 16 | highest). */
  extendedHighest: number;
  /** Packets expected: extended highest − base + 1. */
  expected: number;
  received: number;
  /** Interarrival jitter estimate, timestamp units (8 kHz). */
  jitter: number;
}

export interface ReportBlock {
  ssrc: number;
  fractionLost: number;
  cumulativeLost: number;
  extendedHighest: number;
  jitter: number;
  lastSr: number;
  delaySinceLastSr: number;
}

export interface RtcpReport {
  type: "SR" | "RR";
  ssrc: number;
  /** SR only: the sender's packet and octet counts. */
  packets?: number;
  octets?: number;
  /** SR only: the middle 32 bits of its NTP timestamp (what LSR echoes). */
  ntpMiddle?: number;
  blocks: ReportBlock[];
}

/** Builds one compound RTCP packet: SR (when we sent) or RR, SDES CNAME, and BYE when `bye`. */
export function encodeRtcp(input: {
  ssrc: number;
  cname: string;
  sender: { ntpSeconds: number; ntpFraction: number; rtpTimestamp: number; packets: number; octets: number } | null;
  blocks: readonly ReportBlock[];
  bye?: boolean;
}): Buffer {
  const parts: Buffer[] = [];
  const blocks = input.blocks.slice(0, 31);
  const head = Buffer.alloc(input.sender !== null ? 28 : 8);
  head[0] = 0x80 | blocks.length;
  head[1] = input.sender !== null ? RTCP_SR : RTCP_RR;
  head.writeUInt32BE(input.ssrc >>> 0, 4);
  if (input.sender !== null) {
    head.writeUInt32BE(input.sender.ntpSeconds >>> 0, 8);
    head.writeUInt32BE(input.sender.ntpFraction >>> 0, 12);
    head.writeUInt32BE(input.sender.rtpTimestamp >>> 0, 16);
    head.writeUInt32BE(input.sender.packets >>> 0, 20);
    head.writeUInt32BE(input.sender.octets >>> 0, 24);
  }
  const blockBytes = Buffer.alloc(24 * blocks.length);
  blocks.forEach((b, i) => {
    const at = i * 24;
    blockBytes.writeUInt32BE(b.ssrc >>> 0, at);
    blockBytes[at + 4] = Math.max(0, Math.min(255, b.fractionLost));
    const lost = Math.max(-0x800000, Math.min(0x7fffff, b.cumulativeLost));
    blockBytes.writeIntBE(lost, at + 5, 3);
    blockBytes.writeUInt32BE(b.extendedHighest >>> 0, at + 8);
    blockBytes.writeUInt32BE(Math.max(0, Math.round(b.jitter)) >>> 0, at + 12);
    blockBytes.writeUInt32BE(b.lastSr >>> 0, at + 16);
    blockBytes.writeUInt32BE(b.delaySinceLastSr >>> 0, at + 20);
  });
  const first = Buffer.concat([head, blockBytes]);
  first.writeUInt16BE(first.length / 4 - 1, 2);
  parts.push(first);
  // SDES: one chunk, CNAME item, null-terminated and padded to 32 bits.
  const cname = Buffer.from(input.cname.slice(0, 255), "utf8");
  const chunkLength = 4 + 2 + cname.length + 1;
  const padded = Math.ceil(chunkLength / 4) * 4;
  const sdes = Buffer.alloc(4 + padded);
  sdes[0] = 0x81;
  sdes[1] = RTCP_SDES;
  sdes.writeUInt16BE(sdes.length / 4 - 1, 2);
  sdes.writeUInt32BE(input.ssrc >>> 0, 4);
  sdes[8] = 1;
  sdes[9] = cname.length;
  cname.copy(sdes, 10);
  parts.push(sdes);
  if (input.bye) {
    const bye = Buffer.alloc(8);
    bye[0] = 0x81;
    bye[1] = RTCP_BYE;
    bye.writeUInt16BE(1, 2);
    bye.writeUInt32BE(input.ssrc >>> 0, 4);
    parts.push(bye);
  }
  return Buffer.concat(parts);
}

/** The SR and RR packets of a compound RTCP packet (SDES, BYE and others are skipped); throws on a malformed one. */
export function decodeRtcp(datagram: Uint8Array): { reports: RtcpReport[]; bye: boolean } {
  const data = Buffer.from(datagram.buffer, datagram.byteOffset, datagram.byteLength);
  const reports: RtcpReport[] = [];
  let bye = false;
  let at = 0;
  while (at + 4 <= data.length) {
    if (data[at]! >> 6 !== 2) throw new Error("RTCP: not version 2");
    const count = data[at]! & 0x1f;
    const type = data[at + 1]!;
    const length = (data.readUInt16BE(at + 2) + 1) * 4;
    if (at + length > data.length) throw new Error("RTCP: packet longer than the datagram");
    if (type === RTCP_SR || type === RTCP_RR) {
      const ssrc = data.readUInt32BE(at + 4);
      let blocksAt = at + 8;
      const report: RtcpReport = { type: type === RTCP_SR ? "SR" : "RR", ssrc, blocks: [] };
      if (type === RTCP_SR) {
        if (length < 28) throw new Error("RTCP: SR too short");
        report.ntpMiddle = ((data.readUInt32BE(at + 8) & 0xffff) << 16) | (data.readUInt32BE(at + 12) >>> 16);
        report.ntpMiddle >>>= 0;
        report.packets = data.readUInt32BE(at + 20);
        report.octets = data.readUInt32BE(at + 24);
        blocksAt = at + 28;
      }
      for (let i = 0; i < count && blocksAt + 24 <= at + length; i++, blocksAt += 24) {
        report.blocks.push({
          ssrc: data.readUInt32BE(blocksAt),
          fractionLost: data[blocksAt + 4]!,
          cumulativeLost: data.readIntBE(blocksAt + 5, 3),
          extendedHighest: data.readUInt32BE(blocksAt + 8),
          jitter: data.readUInt32BE(blocksAt + 12),
          lastSr: data.readUInt32BE(blocksAt + 16),
          delaySinceLastSr: data.readUInt32BE(blocksAt + 20),
        });
      }
      reports.push(report);
    } else if (type === RTCP_BYE) bye = true;
    at += length;
  }
  return { reports, bye };
}

/** What the RTP socket says at each report (RtpSocket.rtcpSource). */
export type RtcpSource = () => { ssrc: number; sent: { packets: number; octets: number; rtpTimestamp: number }; reception: RtpReceptionState | null };

export interface RtcpStats {
  sent: number;
  received: number;
  malformed: number;
  /** What the far end last reported about our stream (its report block for our SSRC). */
  lastRemoteView: ReportBlock | null;
  /** The far end sent an RTCP BYE. */
  remoteBye: boolean;
}

/** NTP time now: seconds since 1900 and the fraction, from the wall clock. */
function ntpNow(nowMs: number): { seconds: number; fraction: number } {
  const seconds = Math.floor(nowMs / 1000) + 2_208_988_800;
  const fraction = Math.floor(((nowMs % 1000) / 1000) * 0x1_0000_0000);
  return { seconds: seconds >>> 0, fraction: fraction >>> 0 };
}

/**
 * The RTCP side of one audio call: reports every interval until `close`, which sends the last
 * report with a BYE. `source` reads what the RTP socket sent and received.
 */
export class RtcpSession {
  readonly #socket: dgram.Socket;
  #remote: { address: string; port: number };
  readonly #source: RtcpSource;
  readonly #cname: string;
  readonly #intervalMs: number;
  #timer: NodeJS.Timeout | null = null;
  #closed = false;
  /** For the loss fraction "since the last report" (A.3). */
  #prior = { expected: 0, received: 0 };
  /** The far end's last SR: its NTP middle bits and when it came (for LSR/DLSR). */
  #lastSr: { ntpMiddle: number; atMs: number } | null = null;
  readonly stats: RtcpStats = { sent: 0, received: 0, malformed: 0, lastRemoteView: null, remoteBye: false };

  constructor(options: {
    socket: dgram.Socket;
    remote: { address: string; port: number };
    source: RtcpSource;
    cname: string;
    /** The engine clock's speed: intervals are 5 s of call time. (Default: 1) */
    speed?: number;
  }) {
    this.#socket = options.socket;
    this.#remote = options.remote;
    this.#source = options.source;
    this.#cname = options.cname;
    this.#intervalMs = 5000 / (options.speed ?? 1);
    this.#socket.on("message", (datagram) => this.#onMessage(datagram));
    this.#socket.on("error", () => undefined);
    this.#schedule(0.5);
  }

  setRemote(remote: { address: string; port: number }): void {
    this.#remote = remote;
  }

  #schedule(factor: number): void {
    // §6.3.1: randomised between 0.5 and 1.5 times the interval.
    const delay = this.#intervalMs * factor * (0.5 + randomInt(0, 1001) / 1000);
    this.#timer = setTimeout(() => {
      void this.#send(false);
      if (!this.#closed) this.#schedule(1);
    }, delay);
    this.#timer.unref();
  }

  #send(bye: boolean): Promise<void> {
    const now = Date.now();
    const { ssrc, sent, reception } = this.#source();
    const blocks: ReportBlock[] = [];
    if (reception !== null) {
      const expectedInterval = reception.expected - this.#prior.expected;
      const receivedInterval = reception.received - this.#prior.received;
      const lostInterval = expectedInterval - receivedInterval;
      this.#prior = { expected: reception.expected, received: reception.received };
      blocks.push({
        ssrc: reception.ssrc,
        fractionLost: expectedInterval <= 0 || lostInterval <= 0 ? 0 : Math.floor((lostInterval << 8) / expectedInterval),
        cumulativeLost: reception.expected - reception.received,
        extendedHighest: reception.extendedHighest,
        jitter: reception.jitter,
        lastSr: this.#lastSr?.ntpMiddle ?? 0,
        // Units of 1/65536 s.
        delaySinceLastSr: this.#lastSr === null ? 0 : Math.floor(((now - this.#lastSr.atMs) / 1000) * 65536),
      });
    }
    const ntp = ntpNow(now);
    const packet = encodeRtcp({
      ssrc,
      cname: this.#cname,
      sender: sent.packets > 0 ? { ntpSeconds: ntp.seconds, ntpFraction: ntp.fraction, rtpTimestamp: sent.rtpTimestamp, packets: sent.packets, octets: sent.octets } : null,
      blocks,
      bye,
    });
    return new Promise((resolve) => {
      try {
        this.#socket.send(packet, this.#remote.port, this.#remote.address, () => resolve());
        this.stats.sent += 1;
      } catch {
        // A far end's RTP port of 65535 (its RTCP port would be 65536), a closed socket …: RTCP is
        // advice, never a reason to fail the call.
        resolve();
      }
    });
  }

  #onMessage(datagram: Buffer): void {
    if (this.#closed) return;
    try {
      const { reports, bye } = decodeRtcp(datagram);
      this.stats.received += 1;
      if (bye) this.stats.remoteBye = true;
      const { ssrc } = this.#source();
      for (const r of reports) {
        if (r.type === "SR" && r.ntpMiddle !== undefined) this.#lastSr = { ntpMiddle: r.ntpMiddle, atMs: Date.now() };
        const aboutUs = r.blocks.find((b) => b.ssrc === ssrc);
        if (aboutUs !== undefined) this.stats.lastRemoteView = aboutUs;
      }
    } catch {
      this.stats.malformed += 1;
    }
  }

  /** Sends the last report with a BYE and closes the socket. */
  async close(): Promise<void> {
    if (this.#closed) return;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#closed = true;
    try {
      await this.#send(true);
    } finally {
      await new Promise<void>((resolve) => {
        try {
          this.#socket.close(() => resolve());
        } catch {
          resolve();
        }
      });
    }
  }
}

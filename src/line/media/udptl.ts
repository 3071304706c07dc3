/**
 * UDPTL: the UDP framing of T.38 IFP packets (ITU-T T.38 Annex A), with redundancy. Pure: bytes
 * in, bytes and data out; the socket is udptl-socket.ts.
 *
 * Wire format, ALIGNED PER of
 *
 *     UDPTLPacket ::= SEQUENCE {
 *       seq-number          INTEGER (0..65535),
 *       primary-ifp-packet  TYPE-IDENTIFIER.&Type(IFPPacket),
 *       error-recovery      CHOICE {
 *         secondary-ifp-packets  SEQUENCE OF TYPE-IDENTIFIER.&Type(IFPPacket),
 *         fec-info               SEQUENCE { fec-npackets INTEGER, fec-data SEQUENCE OF OCTET STRING } } }
 *
 * is, octet by octet:
 *   - the sequence number, 2 bytes big-endian;
 *   - a length determinant and the primary IFP. A determinant is 1 byte below 128 (0lllllll),
 *     2 bytes below 16384 (10llllll llllllll); longer (fragmented) ones are not used by T.38;
 *   - the CHOICE index padded to an octet: 0x00 redundancy, 0x80 FEC;
 *   - redundancy: a determinant with the count N, then N × (determinant + IFP), newest first:
 *     the IFPs of seq-1, seq-2, … seq-N;
 *   - FEC: fec-npackets as an unconstrained INTEGER (determinant + two's-complement bytes), then
 *     a determinant with the count and that many (determinant + octets).
 *
 * Sending (`UdptlSender`): every IFP gets the next sequence number (65535 wraps to 0) and carries
 * up to `redundancy` earlier IFPs as secondaries; secondaries are dropped, oldest first, until the
 * datagram fits the far end's `T38FaxMaxDatagram`. An IFP the engine wants sent `count` times is
 * framed once and the same datagram sent `count` times, under one sequence number.
 *
 * Receiving (`UdptlReceiver`): packets are delivered in sequence order. When packets are missing
 * (the new sequence number is ahead of the expected one) they are first recovered from the new
 * packet's secondaries, oldest first, and the ones no secondary carries are counted as lost. A
 * packet behind the expected number (a repeat, or late) is dropped. A jump of 2000 or more either
 * way is taken as the far end restarting its numbering (as SpanDSP's t38_core does): the receiver
 * resynchronises on it. FEC packets are parsed but only their primary is used, so a gap before an
 * FEC packet is lost.
 */

export const UDPTL_SEQ_MODULO = 0x10000;
/** The far end's T38FaxMaxDatagram when the SDP gives none (common gateway default). */
export const DEFAULT_MAX_DATAGRAM = 400;
/** SpanDSP's ACCEPTABLE_SEQ_NO_OFFSET: a sequence jump at least this large is a restart, not loss. */
export const SEQ_RESTART_DISTANCE = 2000;
const MAX_LENGTH = 0x3fff;

export type UdptlErrorRecovery =
  /** Earlier IFPs, newest first: `secondaries[0]` is seq-1. */
  | { kind: "redundancy"; secondaries: readonly Uint8Array[] }
  | { kind: "fec"; fecNpackets: number; fecData: readonly Uint8Array[] };

export interface UdptlPacket {
  seq: number;
  primary: Uint8Array;
  errorRecovery: UdptlErrorRecovery;
}

export class UdptlDecodeError extends Error {
  constructor(message: string) {
    super(`Not a UDPTL packet: ${message}`);
    this.name = "UdptlDecodeError";
  }
}

function lengthBytes(length: number): number {
  if (!Number.isInteger(length) || length < 0 || length > MAX_LENGTH) throw new RangeError(`UDPTL length ${length} is outside 0..${MAX_LENGTH}`);
  return length < 0x80 ? 1 : 2;
}

function writeLength(out: Uint8Array, at: number, length: number): number {
  if (lengthBytes(length) === 1) {
    out[at] = length;
    return at + 1;
  }
  out[at] = 0x80 | (length >> 8);
  out[at + 1] = length & 0xff;
  return at + 2;
}

/** Minimal two's-complement bytes of a non-negative integer (ALIGNED PER unconstrained INTEGER). */
function integerBytes(value: number): number[] {
  if (!Number.isInteger(value) || value < 0 || value > 0x7fffffff) throw new RangeError(`fec-npackets ${value} is outside 0..2^31-1`);
  const bytes = [value & 0xff];
  let rest = Math.floor(value / 256);
  while (rest > 0 || (bytes[0]! & 0x80) !== 0) {
    bytes.unshift(rest & 0xff);
    rest = Math.floor(rest / 256);
  }
  return bytes;
}

/** Bytes `encodeUdptlPacket` will produce for these parts. */
export function udptlPacketSize(primaryLength: number, secondaryLengths: readonly number[]): number {
  let size = 2 + lengthBytes(primaryLength) + primaryLength + 1 + lengthBytes(secondaryLengths.length);
  for (const length of secondaryLengths) size += lengthBytes(length) + length;
  return size;
}

/** Bytes of a redundancy-mode packet with this primary and the first `count` of `secondaries` (newest first). */
function redundancyPacketSize(primaryLength: number, secondaries: readonly Uint8Array[], count: number): number {
  let size = 2 + lengthBytes(primaryLength) + primaryLength + 1 + lengthBytes(count);
  for (let k = 0; k < count; k++) size += lengthBytes(secondaries[k]!.length) + secondaries[k]!.length;
  return size;
}

/**
 * What `encodeUdptlPacket` makes of a redundancy-mode packet with the first `count` of
 * `secondaries`, byte for byte, for the sending path (one datagram per 20 ms tick of every call):
 * no intermediate arrays, and the datagram cut from Node's shared buffer pool instead of a memory
 * block of its own (which the garbage collector would track and free one by one).
 */
function encodeRedundancyDatagram(seq: number, primary: Uint8Array, secondaries: readonly Uint8Array[], count: number, size: number): Uint8Array {
  const out = Buffer.allocUnsafe(size);
  out[0] = seq >> 8;
  out[1] = seq & 0xff;
  let at = writeLength(out, 2, primary.length);
  out.set(primary, at);
  at += primary.length;
  out[at++] = 0x00;
  at = writeLength(out, at, count);
  for (let k = 0; k < count; k++) {
    const item = secondaries[k]!;
    at = writeLength(out, at, item.length);
    out.set(item, at);
    at += item.length;
  }
  // Every byte of the pooled (not zeroed) buffer must have been written.
  if (at !== size) throw new Error(`UDPTL datagram: ${at} bytes written for a size of ${size}`);
  return out;
}

export function encodeUdptlPacket(packet: UdptlPacket): Uint8Array {
  const { seq, primary, errorRecovery } = packet;
  if (!Number.isInteger(seq) || seq < 0 || seq >= UDPTL_SEQ_MODULO) throw new RangeError(`UDPTL sequence number ${seq} is outside 0..65535`);
  const items = errorRecovery.kind === "redundancy" ? errorRecovery.secondaries : errorRecovery.fecData;
  const npackets = errorRecovery.kind === "fec" ? integerBytes(errorRecovery.fecNpackets) : [];
  let size = udptlPacketSize(primary.length, items.map((item) => item.length));
  if (errorRecovery.kind === "fec") size += 1 + npackets.length;
  const out = new Uint8Array(size);
  out[0] = seq >> 8;
  out[1] = seq & 0xff;
  let at = writeLength(out, 2, primary.length);
  out.set(primary, at);
  at += primary.length;
  if (errorRecovery.kind === "redundancy") {
    out[at++] = 0x00;
  } else {
    out[at++] = 0x80;
    out[at++] = npackets.length;
    for (const byte of npackets) out[at++] = byte;
  }
  at = writeLength(out, at, items.length);
  for (const item of items) {
    at = writeLength(out, at, item.length);
    out.set(item, at);
    at += item.length;
  }
  return out;
}

class Reader {
  readonly bytes: Uint8Array;
  at = 0;

  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }

  byte(what: string): number {
    if (this.at >= this.bytes.length) throw new UdptlDecodeError(`${this.bytes.length} bytes end before the ${what}`);
    return this.bytes[this.at++]!;
  }

  length(what: string): number {
    const first = this.byte(`length of the ${what}`);
    if ((first & 0x80) === 0) return first;
    if ((first & 0xc0) === 0x80) return ((first & 0x3f) << 8) | this.byte(`length of the ${what}`);
    throw new UdptlDecodeError(`the ${what} has a fragmented length (0x${first.toString(16)} at byte ${this.at - 1}), which T.38 never uses`);
  }

  octets(length: number, what: string): Uint8Array {
    if (this.at + length > this.bytes.length) {
      throw new UdptlDecodeError(`the ${what} needs ${length} bytes at byte ${this.at}, but the datagram has ${this.bytes.length}`);
    }
    const slice = this.bytes.slice(this.at, this.at + length);
    this.at += length;
    return slice;
  }
}

/** Decodes one datagram; throws `UdptlDecodeError` when it is not a well-formed UDPTL packet. */
export function decodeUdptlPacket(datagram: Uint8Array): UdptlPacket {
  const r = new Reader(datagram);
  const seq = (r.byte("sequence number") << 8) | r.byte("sequence number");
  const primary = r.octets(r.length("primary IFP"), "primary IFP");
  const choice = r.byte("error-recovery choice");
  let errorRecovery: UdptlErrorRecovery;
  if (choice === 0x00) {
    const count = r.length("secondary IFP count");
    const secondaries: Uint8Array[] = [];
    for (let i = 0; i < count; i++) secondaries.push(r.octets(r.length(`secondary IFP ${i + 1}`), `secondary IFP ${i + 1}`));
    errorRecovery = { kind: "redundancy", secondaries };
  } else if (choice === 0x80) {
    const npacketsLength = r.length("fec-npackets");
    if (npacketsLength < 1 || npacketsLength > 4) throw new UdptlDecodeError(`fec-npackets is ${npacketsLength} bytes long`);
    let fecNpackets = 0;
    for (const byte of r.octets(npacketsLength, "fec-npackets")) fecNpackets = fecNpackets * 256 + byte;
    const count = r.length("fec-data count");
    const fecData: Uint8Array[] = [];
    for (let i = 0; i < count; i++) fecData.push(r.octets(r.length(`fec-data ${i + 1}`), `fec-data ${i + 1}`));
    errorRecovery = { kind: "fec", fecNpackets, fecData };
  } else {
    throw new UdptlDecodeError(`error-recovery choice byte 0x${choice.toString(16)} is neither 0x00 (redundancy) nor 0x80 (FEC)`);
  }
  if (r.at !== datagram.length) throw new UdptlDecodeError(`${datagram.length - r.at} bytes follow the packet`);
  return { seq, primary, errorRecovery };
}

export interface UdptlSenderOptions {
  /** Secondary IFPs per datagram; T.38 gateways typically use 3 to 5. (Default: 3) */
  redundancy?: number;
  /** The far end's T38FaxMaxDatagram: the largest datagram to send, bytes. (Default: 400) */
  maxDatagram?: number;
  /** Sequence number of the first packet. (Default: 0) */
  firstSeq?: number;
}

export interface UdptlSenderStats {
  /** Distinct datagrams framed (each may be sent several times). */
  framed: number;
  /** Secondaries left out to fit `maxDatagram`. */
  trimmedSecondaries: number;
  /** Datagrams larger than `maxDatagram` even without secondaries (sent anyway; the IFP is too large). */
  oversize: number;
}

export class UdptlSender {
  readonly redundancy: number;
  readonly maxDatagram: number;
  #nextSeq: number;
  /** Earlier IFPs, newest first. */
  #history: Uint8Array[] = [];
  readonly stats: UdptlSenderStats = { framed: 0, trimmedSecondaries: 0, oversize: 0 };

  constructor(options: UdptlSenderOptions = {}) {
    this.redundancy = options.redundancy ?? 3;
    this.maxDatagram = options.maxDatagram ?? DEFAULT_MAX_DATAGRAM;
    this.#nextSeq = options.firstSeq ?? 0;
    if (!Number.isInteger(this.redundancy) || this.redundancy < 0 || this.redundancy > 16) throw new RangeError(`redundancy ${this.redundancy} is outside 0..16`);
    if (!Number.isInteger(this.maxDatagram) || this.maxDatagram < 8) throw new RangeError(`maxDatagram ${this.maxDatagram} is below 8 bytes`);
    if (!Number.isInteger(this.#nextSeq) || this.#nextSeq < 0 || this.#nextSeq >= UDPTL_SEQ_MODULO) throw new RangeError(`firstSeq ${this.#nextSeq} is outside 0..65535`);
  }

  /** The sequence number the next IFP will get. */
  get nextSeq(): number {
    return this.#nextSeq;
  }

  /**
   * Frames one IFP under the next sequence number; send the datagram as many times as the engine
   * asked. The datagram is a Buffer cut from Node's shared pool: its `.buffer` is the pool, and its
   * `.slice()` a view (`new Uint8Array(datagram)` copies it).
   */
  frame(ifp: Uint8Array): { seq: number; datagram: Uint8Array } {
    const seq = this.#nextSeq;
    const history = this.#history;
    let count = Math.min(history.length, this.redundancy);
    let size = redundancyPacketSize(ifp.length, history, count);
    while (count > 0 && size > this.maxDatagram) {
      count -= 1;
      size = redundancyPacketSize(ifp.length, history, count);
      this.stats.trimmedSecondaries += 1;
    }
    const datagram = encodeRedundancyDatagram(seq, ifp, history, count, size);
    if (datagram.length > this.maxDatagram) this.stats.oversize += 1;
    this.stats.framed += 1;
    this.#history.unshift(ifp.slice());
    if (this.#history.length > this.redundancy) this.#history.length = this.redundancy;
    this.#nextSeq = (seq + 1) % UDPTL_SEQ_MODULO;
    return { seq, datagram };
  }
}

export interface ReceivedIfp {
  seq: number;
  ifp: Uint8Array;
  /** Taken from a later packet's secondaries. */
  recovered: boolean;
}

export interface UdptlReceiverStats {
  datagrams: number;
  delivered: number;
  recovered: number;
  /** IFPs that were missing and no secondary carried. */
  lost: number;
  /** Repeats and late packets, dropped. */
  dropped: number;
  /** Datagrams using FEC (only their primary is used). */
  fec: number;
  malformed: number;
  /** Sequence restarts: jumps of SEQ_RESTART_DISTANCE or more. */
  restarts: number;
}

export class UdptlReceiver {
  #expected: number | null = null;
  readonly stats: UdptlReceiverStats = { datagrams: 0, delivered: 0, recovered: 0, lost: 0, dropped: 0, fec: 0, malformed: 0, restarts: 0 };

  /** `expectedSeq`: the first sequence number the far end will send, if known, so its first packets can be recovered too. */
  constructor(options: { expectedSeq?: number } = {}) {
    this.#expected = options.expectedSeq ?? null;
  }

  /** The IFPs a datagram makes deliverable, in sequence order; [] for repeats, late and malformed datagrams. */
  receive(datagram: Uint8Array): ReceivedIfp[] {
    this.stats.datagrams += 1;
    let packet: UdptlPacket;
    try {
      packet = decodeUdptlPacket(datagram);
    } catch (error) {
      if (error instanceof UdptlDecodeError) {
        this.stats.malformed += 1;
        return [];
      }
      throw error;
    }
    if (packet.errorRecovery.kind === "fec") this.stats.fec += 1;
    const expected = this.#expected ?? packet.seq;
    const ahead = (packet.seq - expected + UDPTL_SEQ_MODULO) % UDPTL_SEQ_MODULO;
    const delivered: ReceivedIfp[] = [];
    if (ahead >= UDPTL_SEQ_MODULO - SEQ_RESTART_DISTANCE) {
      this.stats.dropped += 1;
      return delivered;
    }
    if (ahead >= SEQ_RESTART_DISTANCE) {
      this.stats.restarts += 1;
    } else if (ahead > 0) {
      const secondaries = packet.errorRecovery.kind === "redundancy" ? packet.errorRecovery.secondaries : [];
      for (let gap = ahead; gap >= 1; gap--) {
        const secondary = secondaries[gap - 1];
        if (secondary === undefined) {
          this.stats.lost += 1;
          continue;
        }
        delivered.push({ seq: (packet.seq - gap + UDPTL_SEQ_MODULO) % UDPTL_SEQ_MODULO, ifp: secondary, recovered: true });
        this.stats.recovered += 1;
      }
    }
    delivered.push({ seq: packet.seq, ifp: packet.primary, recovered: false });
    this.stats.delivered += delivered.length;
    this.#expected = (packet.seq + 1) % UDPTL_SEQ_MODULO;
    return delivered;
  }
}

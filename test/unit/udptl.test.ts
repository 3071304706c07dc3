import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  decodeUdptlPacket,
  encodeUdptlPacket,
  UdptlDecodeError,
  UdptlReceiver,
  UdptlSender,
  udptlPacketSize,
  type ReceivedIfp,
} from "../../src/line/media/udptl.ts";

const bytes = (...values: number[]): Uint8Array => Uint8Array.from(values);
/** An IFP of `length` bytes whose bytes all equal `fill` (so tests can tell IFPs apart). */
const ifp = (fill: number, length = 3): Uint8Array => new Uint8Array(length).fill(fill);
const seqs = (received: ReceivedIfp[]): number[] => received.map((r) => r.seq);

describe("UDPTL codec", () => {
  it("encodes seq, primary and newest-first secondaries as ALIGNED PER", () => {
    const datagram = encodeUdptlPacket({
      seq: 0x0102,
      primary: bytes(0xaa, 0xbb),
      errorRecovery: { kind: "redundancy", secondaries: [bytes(0x11), bytes(0x22, 0x23)] },
    });
    // seq 01 02 | len 2, aa bb | 00 = secondary-ifp-packets | count 2 | len 1, 11 | len 2, 22 23
    assert.deepEqual([...datagram], [0x01, 0x02, 0x02, 0xaa, 0xbb, 0x00, 0x02, 0x01, 0x11, 0x02, 0x22, 0x23]);
    assert.equal(udptlPacketSize(2, [1, 2]), datagram.length);
  });

  it("round-trips packets with 0, 1 and 3 secondaries, including 2-byte lengths", () => {
    for (const secondaries of [[], [ifp(1)], [ifp(1, 200), ifp(2, 127), ifp(3, 128)]]) {
      const packet = { seq: 65535, primary: ifp(9, 300), errorRecovery: { kind: "redundancy" as const, secondaries } };
      const datagram = encodeUdptlPacket(packet);
      assert.deepEqual(decodeUdptlPacket(datagram), packet);
      assert.equal(datagram.length, udptlPacketSize(300, secondaries.map((s) => s.length)));
    }
  });

  it("writes a length of 128 or more as 10xxxxxx xxxxxxxx", () => {
    const datagram = encodeUdptlPacket({ seq: 0, primary: ifp(7, 300), errorRecovery: { kind: "redundancy", secondaries: [] } });
    assert.deepEqual([...datagram.subarray(0, 4)], [0x00, 0x00, 0x81, 0x2c]);
  });

  it("parses FEC error recovery: fec-npackets and fec-data", () => {
    // seq 5 | primary 01 02 | 80 = fec-info | fec-npackets: len 1, 3 | 2 entries: (2) a1 a2, (1) b1
    const datagram = bytes(0x00, 0x05, 0x02, 0x01, 0x02, 0x80, 0x01, 0x03, 0x02, 0x02, 0xa1, 0xa2, 0x01, 0xb1);
    const packet = decodeUdptlPacket(datagram);
    assert.equal(packet.seq, 5);
    assert.deepEqual(packet.primary, bytes(0x01, 0x02));
    assert.deepEqual(packet.errorRecovery, { kind: "fec", fecNpackets: 3, fecData: [bytes(0xa1, 0xa2), bytes(0xb1)] });
    assert.deepEqual(encodeUdptlPacket(packet), datagram);
  });

  it("encodes fec-npackets of 128 and more in two's complement with a leading zero byte", () => {
    const packet = { seq: 1, primary: bytes(0), errorRecovery: { kind: "fec" as const, fecNpackets: 200, fecData: [] } };
    const datagram = encodeUdptlPacket(packet);
    assert.deepEqual([...datagram.subarray(4, 8)], [0x80, 0x02, 0x00, 0xc8]);
    assert.deepEqual(decodeUdptlPacket(datagram), packet);
  });

  it("rejects malformed datagrams with UdptlDecodeError", () => {
    const good = encodeUdptlPacket({ seq: 3, primary: ifp(1, 4), errorRecovery: { kind: "redundancy", secondaries: [ifp(2, 4)] } });
    for (let cut = 0; cut < good.length; cut++) assert.throws(() => decodeUdptlPacket(good.subarray(0, cut)), UdptlDecodeError, `cut at ${cut}`);
    assert.throws(() => decodeUdptlPacket(Uint8Array.of(...good, 0)), /1 bytes follow the packet/);
    assert.throws(() => decodeUdptlPacket(bytes(0, 1, 1, 0xaa, 0x40, 0)), /choice byte 0x40/);
    assert.throws(() => decodeUdptlPacket(bytes(0, 1, 0xc1, 0xaa)), /fragmented length/);
  });

  it("refuses to encode out-of-range sequence numbers and lengths", () => {
    assert.throws(() => encodeUdptlPacket({ seq: 65536, primary: ifp(1), errorRecovery: { kind: "redundancy", secondaries: [] } }), RangeError);
    assert.throws(() => encodeUdptlPacket({ seq: 0, primary: new Uint8Array(0x4000), errorRecovery: { kind: "redundancy", secondaries: [] } }), RangeError);
  });
});

describe("UDPTL sender", () => {
  it("numbers IFPs in order and carries up to `redundancy` earlier IFPs, newest first", () => {
    const sender = new UdptlSender({ redundancy: 2 });
    const framed = [1, 2, 3, 4].map((n) => decodeUdptlPacket(sender.frame(ifp(n)).datagram));
    assert.deepEqual(framed.map((p) => p.seq), [0, 1, 2, 3]);
    assert.deepEqual(framed.map((p) => (p.errorRecovery.kind === "redundancy" ? p.errorRecovery.secondaries.map((s) => s[0]) : null)), [[], [1], [2, 1], [3, 2]]);
  });

  it("sends no secondaries at redundancy 0", () => {
    const sender = new UdptlSender({ redundancy: 0 });
    sender.frame(ifp(1));
    assert.deepEqual([...sender.frame(ifp(2)).datagram], [0x00, 0x01, 0x03, 2, 2, 2, 0x00, 0x00]);
  });

  it("drops the oldest secondaries until the datagram fits maxDatagram", () => {
    // Each 50-byte IFP costs 51 bytes as a secondary; primary part = 2 + 1 + 50 + 1 + 1 = 55.
    const sender = new UdptlSender({ redundancy: 3, maxDatagram: 55 + 2 * 51 });
    for (let n = 1; n <= 3; n++) sender.frame(ifp(n, 50));
    const { datagram } = sender.frame(ifp(4, 50));
    const packet = decodeUdptlPacket(datagram);
    assert.ok(datagram.length <= 55 + 2 * 51);
    assert.deepEqual(packet.errorRecovery.kind === "redundancy" && packet.errorRecovery.secondaries.map((s) => s[0]), [3, 2]);
    assert.equal(sender.stats.trimmedSecondaries, 1);
    assert.equal(sender.stats.oversize, 0);
  });

  it("still sends an IFP larger than maxDatagram, alone, and counts it", () => {
    const sender = new UdptlSender({ redundancy: 3, maxDatagram: 40 });
    sender.frame(ifp(1, 10));
    const packet = decodeUdptlPacket(sender.frame(ifp(2, 60)).datagram);
    assert.deepEqual(packet.errorRecovery, { kind: "redundancy", secondaries: [] });
    assert.equal(sender.stats.oversize, 1);
  });

  it("frames the bytes encodeUdptlPacket makes, secondaries trimmed alike (random IFPs of 0 to 300 bytes)", () => {
    let state = 7;
    const random = (n: number): number => ((state = (state * 1103515245 + 12345) >>> 0) % n);
    for (const redundancy of [0, 1, 3, 5]) {
      const maxDatagram = 120 + random(400);
      const sender = new UdptlSender({ redundancy, maxDatagram, firstSeq: 65530 });
      const sent: Uint8Array[] = [];
      for (let n = 0; n < 60; n++) {
        const primary = Uint8Array.from({ length: random(n % 7 === 0 ? 300 : 60) }, () => random(256));
        const { seq, datagram } = sender.frame(primary);
        // The reference: as many of the newest earlier IFPs as fit, through the general encoder.
        let secondaries = sent.slice(-redundancy || sent.length).reverse().slice(0, redundancy);
        while (secondaries.length > 0 && udptlPacketSize(primary.length, secondaries.map((x) => x.length)) > maxDatagram) secondaries = secondaries.slice(0, -1);
        assert.deepEqual([...datagram], [...encodeUdptlPacket({ seq, primary, errorRecovery: { kind: "redundancy", secondaries } })], `redundancy ${redundancy}, IFP ${n}`);
        sent.push(primary);
      }
    }
  });

  it("wraps the sequence number from 65535 to 0", () => {
    const sender = new UdptlSender({ redundancy: 1, firstSeq: 65534 });
    assert.deepEqual([1, 2, 3].map((n) => sender.frame(ifp(n)).seq), [65534, 65535, 0]);
    assert.equal(sender.nextSeq, 1);
  });
});

describe("UDPTL receiver", () => {
  function framedStream(count: number, options: { redundancy: number; firstSeq?: number }): Uint8Array[] {
    const sender = new UdptlSender(options);
    return Array.from({ length: count }, (_, n) => sender.frame(ifp(n + 1)).datagram);
  }

  it("delivers packets in order with their sequence numbers", () => {
    const receiver = new UdptlReceiver();
    const stream = framedStream(3, { redundancy: 3 });
    assert.deepEqual(stream.flatMap((d) => receiver.receive(d)).map((r) => [r.seq, r.ifp[0], r.recovered]), [
      [0, 1, false],
      [1, 2, false],
      [2, 3, false],
    ]);
  });

  it("recovers missing packets from the secondaries, oldest first, before the primary", () => {
    const receiver = new UdptlReceiver();
    const stream = framedStream(5, { redundancy: 3 });
    receiver.receive(stream[0]!);
    const received = receiver.receive(stream[3]!); // 1 and 2 lost
    assert.deepEqual(received.map((r) => [r.seq, r.ifp[0], r.recovered]), [
      [1, 2, true],
      [2, 3, true],
      [3, 4, false],
    ]);
    assert.equal(receiver.stats.recovered, 2);
    assert.equal(receiver.stats.lost, 0);
  });

  it("counts as lost what no secondary carries", () => {
    const receiver = new UdptlReceiver();
    const stream = framedStream(6, { redundancy: 1 });
    receiver.receive(stream[0]!);
    assert.deepEqual(seqs(receiver.receive(stream[4]!)), [3, 4]);
    assert.equal(receiver.stats.lost, 2);
    assert.equal(receiver.stats.recovered, 1);
  });

  it("drops repeats (same sequence number) and late packets", () => {
    const receiver = new UdptlReceiver();
    const stream = framedStream(4, { redundancy: 0 });
    assert.equal(receiver.receive(stream[0]!).length, 1);
    assert.equal(receiver.receive(stream[0]!).length, 0); // an IFP sent 3 times arrives 3 times
    assert.equal(receiver.receive(stream[2]!).length, 1);
    assert.equal(receiver.receive(stream[1]!).length, 0); // late: its turn has passed
    assert.equal(receiver.stats.dropped, 2);
    assert.equal(receiver.stats.lost, 1);
  });

  it("follows the sequence across the wrap at 65535, recovering packets on both sides of it", () => {
    const receiver = new UdptlReceiver();
    const stream = framedStream(6, { redundancy: 3, firstSeq: 65533 }); // 65533 65534 65535 0 1 2
    assert.deepEqual(seqs(receiver.receive(stream[0]!)), [65533]);
    assert.deepEqual(seqs(receiver.receive(stream[3]!)), [65534, 65535, 0]);
    assert.deepEqual(seqs(receiver.receive(stream[2]!)), []);
    assert.deepEqual(seqs(receiver.receive(stream[5]!)), [1, 2]);
    assert.equal(receiver.stats.recovered, 3);
  });

  it("recovers the far end's first packets when its first sequence number is known", () => {
    const receiver = new UdptlReceiver({ expectedSeq: 0 });
    const stream = framedStream(3, { redundancy: 3 });
    assert.deepEqual(seqs(receiver.receive(stream[2]!)), [0, 1, 2]);
  });

  it("resynchronises on a jump of 2000 or more (the far end restarted its numbering)", () => {
    const receiver = new UdptlReceiver();
    receiver.receive(framedStream(1, { redundancy: 3, firstSeq: 100 })[0]!);
    const restarted = framedStream(2, { redundancy: 3, firstSeq: 40_000 });
    assert.deepEqual(seqs(receiver.receive(restarted[0]!)), [40_000]);
    assert.deepEqual(seqs(receiver.receive(restarted[1]!)), [40_001]);
    assert.equal(receiver.stats.restarts, 1);
    assert.equal(receiver.stats.lost, 0);
  });

  it("uses only the primary of an FEC packet: a gap before it is lost", () => {
    const receiver = new UdptlReceiver();
    receiver.receive(encodeUdptlPacket({ seq: 10, primary: ifp(1), errorRecovery: { kind: "fec", fecNpackets: 2, fecData: [] } }));
    const received = receiver.receive(encodeUdptlPacket({ seq: 12, primary: ifp(3), errorRecovery: { kind: "fec", fecNpackets: 2, fecData: [ifp(0x5a)] } }));
    assert.deepEqual(received.map((r) => [r.seq, r.ifp[0]]), [[12, 3]]);
    assert.equal(receiver.stats.fec, 2);
    assert.equal(receiver.stats.lost, 1);
  });

  it("counts malformed datagrams and delivers nothing for them", () => {
    const receiver = new UdptlReceiver();
    assert.deepEqual(receiver.receive(bytes(0, 1, 9)), []);
    assert.equal(receiver.stats.malformed, 1);
  });

  it("delivers every IFP of a stream that loses 1 datagram in 3, at redundancy 2", () => {
    const receiver = new UdptlReceiver({ expectedSeq: 0 });
    const stream = framedStream(300, { redundancy: 2 });
    const received = stream.filter((_, i) => i % 3 !== 1).flatMap((d) => receiver.receive(d));
    assert.deepEqual(seqs(received), Array.from({ length: 300 }, (_, i) => i));
    assert.ok(received.every((r) => r.ifp[0] === ((r.seq + 1) & 0xff)));
    assert.equal(receiver.stats.lost, 0);
  });
});

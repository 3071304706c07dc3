/**
 * G.711 companding against SpanDSP's own tables, the RTP packet codec, the fixed-delay playout
 * buffer, and an audio fax session runner over a loopback transport (no network).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { g711Decode, g711Encode, g711Silence } from "../../src/line/media/g711.ts";
import { decodeRtp, encodeRtp, RtpDecodeError, RtpPlayout, RtpSocket } from "../../src/line/media/rtp.ts";

const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

describe("G.711", () => {
  const everySample = new Int16Array(65_536).map((_, i) => i - 32_768);
  const everyCode = new Uint8Array(256).map((_, i) => i);

  // The hashes of SpanDSP 0.0.6's linear_to_alaw()/linear_to_ulaw() over every 16-bit sample and
  // alaw_to_linear()/ulaw_to_linear() over every code (little-endian Int16), taken from a C program
  // against Debian's libspandsp-dev: ours are bit-exact.
  const SPANDSP = {
    PCMA: { encode: "38488f6fd710f4686360edc4d38639f96c491595ef93f8eb8d62d5e07ca6ce7b", decode: "e04788d110e58ff8c70c93b8480190d973e3b67876b6119abbaec766cc75c174" },
    PCMU: { encode: "5ee7cf5f273f842d2234121e4cb0c98d6b20a99ac29026f94e05b36955b195be", decode: "3dab54339e520bb2c924826e3b72a917a2b612e9fd12fc867500f1d983a75827" },
  } as const;

  for (const codec of ["PCMA", "PCMU"] as const) {
    it(`${codec} encodes and decodes exactly as SpanDSP does`, () => {
      assert.equal(sha256(g711Encode(codec, everySample)), SPANDSP[codec].encode);
      const decoded = g711Decode(codec, everyCode);
      assert.equal(sha256(new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.byteLength)), SPANDSP[codec].decode);
    });

    it(`${codec}: every code survives decode then encode (but µ-law's negative zero)`, () => {
      const back = g711Encode(codec, g711Decode(codec, everyCode));
      const changed = [...everyCode].filter((code) => back[code] !== code);
      assert.deepEqual(changed, codec === "PCMU" ? [0x7f] : []);
    });

    it(`${codec}: the error stays within one quantisation step (4 % of the sample above 1024)`, () => {
      const round = g711Decode(codec, g711Encode(codec, everySample));
      for (let i = 0; i < everySample.length; i++) {
        const x = everySample[i]!;
        const error = Math.abs(round[i]! - x);
        if (Math.abs(x) > 1024 && Math.abs(x) < 32_000) assert.ok(error <= Math.abs(x) * 0.04, `${x} → ${round[i]}`);
      }
    });
  }

  it("silence is 0xD5 in A-law and 0xFF in µ-law", () => {
    assert.equal(g711Silence("PCMA"), 0xd5);
    assert.equal(g711Silence("PCMU"), 0xff);
  });
});

describe("RTP packets", () => {
  it("round-trips a G.711 packet", () => {
    const payload = new Uint8Array(160).fill(0xd5);
    const bytes = encodeRtp({ marker: true, payloadType: 8, sequence: 65_535, timestamp: 0xffff_ff60, ssrc: 0xdead_beef, payload });
    assert.equal(bytes.length, 172);
    assert.deepEqual([...bytes.subarray(0, 12)], [0x80, 0x88, 0xff, 0xff, 0xff, 0xff, 0xff, 0x60, 0xde, 0xad, 0xbe, 0xef]);
    const packet = decodeRtp(bytes);
    assert.deepEqual({ ...packet, payload: packet.payload.length }, { marker: true, payloadType: 8, sequence: 65_535, timestamp: 0xffff_ff60, ssrc: 0xdead_beef, payload: 160 });
  });

  it("skips CSRCs, a header extension and padding", () => {
    const header = [0x80 | 0x20 | 0x10 | 0x02, 0x00, 0, 1, 0, 0, 0, 160, 0, 0, 0, 7];
    const csrcs = [0, 0, 0, 1, 0, 0, 0, 2];
    const extension = [0xbe, 0xde, 0, 1, 1, 2, 3, 4];
    const payload = [0x11, 0x22, 0x33];
    const padding = [0, 0, 3];
    const packet = decodeRtp(new Uint8Array([...header, ...csrcs, ...extension, ...payload, ...padding]));
    assert.equal(packet.payloadType, 0);
    assert.equal(packet.sequence, 1);
    assert.equal(packet.timestamp, 160);
    assert.deepEqual([...packet.payload], payload);
  });

  it("rejects what is not RTP version 2", () => {
    assert.throws(() => decodeRtp(new Uint8Array(8)), RtpDecodeError);
    assert.throws(() => decodeRtp(new Uint8Array(20)), /version 0/);
  });
});

describe("RTP playout", () => {
  const frame = (value: number, length = 160): Int16Array => new Int16Array(length).fill(value);

  it("plays frames at a fixed delay behind the first, whatever order they come in", () => {
    const playout = new RtpPlayout(320);
    playout.push(1000, frame(1), 0);
    playout.push(1320, frame(3), 10);
    playout.push(1160, frame(2), 20);
    assert.equal(playout.take(0, 160), 160, "nothing yet: the delay");
    assert.equal(playout.take(160, 160), 160);
    assert.deepEqual(playout.take(320, 160), frame(1));
    assert.deepEqual(playout.take(480, 160), frame(2));
    assert.deepEqual(playout.take(640, 160), frame(3));
    assert.equal(playout.take(800, 160), 160, "a gap is lost audio");
    assert.deepEqual(playout.stats, { played: 3, missing: 3, lateSamples: 0, duplicateSamples: 0 });
  });

  it("drops what comes after its time and counts repeats", () => {
    const playout = new RtpPlayout(160);
    playout.push(0, frame(1), 0);
    playout.push(0, frame(1), 0);
    assert.deepEqual(playout.take(160, 160), frame(1));
    assert.deepEqual(playout.take(320, 160), 160);
    playout.push(160, frame(2), 480); // its place (320) has been played
    assert.equal(playout.stats.lateSamples, 160);
    assert.equal(playout.stats.duplicateSamples, 160);
  });

  it("lines up 30 ms packets with 20 ms ticks", () => {
    const playout = new RtpPlayout(0);
    playout.push(0, frame(1, 240), 0);
    playout.push(240, frame(2, 240), 0);
    const a = playout.take(0, 160) as Int16Array;
    const b = playout.take(160, 160) as Int16Array;
    const c = playout.take(320, 160) as Int16Array;
    assert.deepEqual([...a], Array(160).fill(1));
    assert.deepEqual([...b], [...Array(80).fill(1), ...Array(80).fill(2)]);
    assert.deepEqual([...c], Array(160).fill(2));
  });

  it("wraps the 32-bit timestamp", () => {
    const playout = new RtpPlayout(0);
    playout.push(0xffff_ff60, frame(1), 0);
    playout.push(0, frame(2), 0);
    assert.deepEqual(playout.take(0, 160), frame(1));
    assert.deepEqual(playout.take(160, 160), frame(2));
  });
});

describe("RTP socket", () => {
  it("sends G.711 frames symmetrically and ignores other payload types and strangers", async () => {
    const a = await RtpSocket.open({ localAddress: "127.0.0.1", remote: { address: "127.0.0.1", port: 1 }, codec: "PCMU", payloadType: 0 });
    const b = await RtpSocket.open({ localAddress: "127.0.0.1", remote: { address: "127.0.0.1", port: a.localPort }, codec: "PCMU", payloadType: 0 });
    a.setRemote({ address: "127.0.0.1", port: b.localPort });
    try {
      const got: { timestamp: number; samples: Int16Array }[] = [];
      b.onFrame((f) => got.push(f));
      const samples = g711Decode("PCMU", new Uint8Array(160).map((_, i) => i));
      a.sendFrame(samples);
      a.sendFrame(samples);
      const deadline = Date.now() + 2000;
      while (got.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      assert.equal(got.length, 2);
      assert.deepEqual(got[0]!.samples, samples);
      assert.equal((got[1]!.timestamp - got[0]!.timestamp) >>> 0, 160);
      assert.equal(a.stats.sent, 2);
      assert.equal(b.stats.received, 2);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

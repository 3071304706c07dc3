/**
 * RTCP (media/rtcp.ts): compound packets as RFC 3550 lays them out, and the reception statistics
 * an RTP socket keeps for its reports (sequence numbers, loss), measured between two real UDP
 * sockets on loopback with packets dropped on purpose.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import dgram from "node:dgram";
import { decodeRtcp, encodeRtcp, RtcpSession, RTCP_RR, RTCP_SDES, RTCP_SR } from "../../src/line/media/rtcp.ts";
import { RtpSocket } from "../../src/line/media/rtp.ts";

describe("RTCP packets (RFC 3550 §6.4)", () => {
  it("an SR with one report block, then SDES CNAME and BYE, round-trips field by field", () => {
    const block = { ssrc: 0x11223344, fractionLost: 64, cumulativeLost: 3, extendedHighest: 0x1_0005, jitter: 17, lastSr: 0xaabbccdd, delaySinceLastSr: 65536 };
    const packet = encodeRtcp({
      ssrc: 0xdeadbeef,
      cname: "abc@faxline",
      sender: { ntpSeconds: 0x12345678, ntpFraction: 0x9abc0000, rtpTimestamp: 160_000, packets: 1000, octets: 160_000 },
      blocks: [block],
      bye: true,
    });
    assert.equal(packet.length % 4, 0, "32-bit aligned");
    assert.equal(packet[0], 0x81, "version 2, one report block");
    assert.equal(packet[1], RTCP_SR);
    assert.equal(packet.readUInt16BE(2), (28 + 24) / 4 - 1, "length in 32-bit words minus one");
    assert.equal(packet[52 + 1], RTCP_SDES);
    const decoded = decodeRtcp(packet);
    assert.equal(decoded.bye, true);
    assert.equal(decoded.reports.length, 1);
    const [sr] = decoded.reports;
    assert.equal(sr!.type, "SR");
    assert.equal(sr!.ssrc, 0xdeadbeef);
    assert.equal(sr!.packets, 1000);
    assert.equal(sr!.octets, 160_000);
    assert.equal(sr!.ntpMiddle, 0x56789abc, "the middle 32 bits of the NTP timestamp (what LSR echoes)");
    assert.deepEqual(sr!.blocks, [block]);
  });

  it("without anything sent it is an RR; a datagram that is not RTCP version 2 is refused", () => {
    const rr = encodeRtcp({ ssrc: 7, cname: "x", sender: null, blocks: [] });
    assert.equal(rr[1], RTCP_RR);
    assert.deepEqual(decodeRtcp(rr), { reports: [{ type: "RR", ssrc: 7, blocks: [] }], bye: false });
    assert.throws(() => decodeRtcp(Buffer.from([0x00, 200, 0, 1, 0, 0, 0, 0])), /version 2/);
    assert.throws(() => decodeRtcp(Buffer.from([0x80, 200, 0, 9, 0, 0, 0, 0])), /longer than the datagram/);
  });
});

describe("RTP reception statistics for the reports (RFC 3550 A.1, A.3)", () => {
  it("counts what was expected and what arrived when every fifth packet is lost", async () => {
    let n = 0;
    const a = await RtpSocket.open({ localAddress: "127.0.0.1", remote: { address: "127.0.0.1", port: 1 }, codec: "PCMA", payloadType: 8, dropOutgoing: () => ++n % 5 === 0 });
    const b = await RtpSocket.open({ localAddress: "127.0.0.1", remote: { address: "127.0.0.1", port: a.localPort }, codec: "PCMA", payloadType: 8 });
    a.setRemote({ address: "127.0.0.1", port: b.localPort });
    try {
      let frames = 0;
      const done = new Promise<void>((resolve) =>
        b.onFrame(() => {
          frames += 1;
          if (frames === 81) resolve();
        }),
      );
      for (let i = 0; i < 101; i++) a.sendFrame(new Int16Array(160));
      await done;
      await new Promise((r) => setTimeout(r, 20));
      const sent = a.rtcpSource();
      assert.equal(sent.sent.packets, 81, "101 built, every fifth dropped before sending");
      assert.equal(sent.sent.octets, 81 * 160);
      const seen = b.rtcpSource().reception!;
      assert.equal(seen.ssrc, sent.ssrc);
      assert.equal(seen.received, 81);
      assert.equal(seen.expected, 101, "from the first sequence number to the last");
      assert.equal(seen.expected - seen.received, 20, "the 20 dropped ones are lost");
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe("RTCP session", () => {
  it("a far end whose RTCP port cannot exist (RTP on 65535) costs no crash and no socket", async () => {
    const socket = dgram.createSocket("udp4");
    await new Promise<void>((r) => socket.bind(0, "127.0.0.1", r));
    const session = new RtcpSession({
      socket,
      remote: { address: "127.0.0.1", port: 65_536 },
      source: () => ({ ssrc: 1, sent: { packets: 1, octets: 160, rtpTimestamp: 0 }, reception: null }),
      cname: "x@faxline",
      speed: 100,
    });
    await new Promise((r) => setTimeout(r, 120));
    await session.close();
    assert.equal(session.stats.sent, 0);
    assert.throws(() => socket.address(), /Not running|ERR_SOCKET_DGRAM_NOT_RUNNING/, "the socket is closed");
  });
});

/**
 * A fax through rtpengine's T.38↔G.711 gateway (Debian `rtpengine-daemon`), in real time: the
 * one test peer here whose UDPTL is not ours and whose T.38 side is not a SpanDSP terminal fed by
 * our own framing. The SIP line places its call to SIPp as in the other line tests, but the SDP
 * that SIPp answers with points the media at rtpengine, which converts it and relays it to a
 * SpanDSP receiver of the other kind:
 *
 *   T.38:  Faxline (UDPTL) → rtpengine (T.38 decode) → G.711 receiver (RTP)
 *   G.711: Faxline (RTP)   → rtpengine (T.38 force)  → T.38 receiver (UDPTL)
 *
 * rtpengine is set up with an NG offer and answer before the call: the offer carries the SDP of
 * Faxline's side (its media ports are known, the line is given a range of exactly one port pair),
 * the answer the receiver's; the relay port that comes back is what SIPp's SDP names.
 *
 * rtpengine keeps real time, so the line runs at clockSpeed 1 and a two-page fax takes about
 * 45 s. Both faxes must arrive pixel for pixel, with the receiver's CSI in the outcome.
 */
import assert from "node:assert/strict";
import dgram from "node:dgram";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import type { CallRequest } from "../../src/line/line.ts";
import { SipFaxLine } from "../../src/line/sip-fax-line/sip-fax-line.ts";
import { REGION_NUMBER_CONTEXT } from "../../src/numbers/normalize-number.ts";
import { testTrunk } from "../support/sip-trunk.ts";
import { comparePages, identical, renderTwoPageLetter, requireNativeBuild, requirePeer, twoPageLowCallRequest } from "./interop-support.ts";
import { cleanupPeers, startG711Receiver, startSipp, startT38Receiver, type ReceiverRun } from "./peer-processes.ts";
import { mediaPort, startRtpengine, type Bencodable, type RtpengineRun } from "./rtpengine-peer.ts";

const RECEIVER_IDENT = "FAXLINE-RTPE-RX";

async function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = dgram.createSocket("udp4");
    socket.once("error", () => resolve(false));
    socket.bind(port, "127.0.0.1", () => socket.close(() => resolve(true)));
  });
}

/** An even port P with P..P+3 free: the one media port pair the line will take (RTP P, UDPTL P+2). */
async function freePortPair(from: number): Promise<number> {
  for (let p = from; p < from + 400; p += 4) {
    const free = await Promise.all([0, 1, 2, 3].map((i) => portFree(p + i)));
    if (free.every(Boolean)) return p;
  }
  throw new Error(`no four free UDP ports from ${from}`);
}

function sdp(media: string): string {
  return ["v=0", "o=- 1 1 IN IP4 127.0.0.1", "s=-", "c=IN IP4 127.0.0.1", "t=0 0", media, ""].join("\r\n");
}

const t38Sdp = (port: number): string =>
  sdp(
    [
      `m=image ${port} udptl t38`,
      "a=T38FaxVersion:0",
      "a=T38MaxBitRate:14400",
      "a=T38FaxRateManagement:transferredTCF",
      "a=T38FaxMaxBuffer:1800",
      "a=T38FaxMaxDatagram:400",
      "a=T38FaxUdpEC:t38UDPRedundancy",
    ].join("\r\n"),
  );
const pcmaSdp = (port: number): string => sdp([`m=audio ${port} RTP/AVP 8`, "a=rtpmap:8 PCMA/8000", "a=ptime:20"].join("\r\n"));

/** The first media stream rtpengine received on the leg of `tag`, from a `query` reply. */
function relayedStream(call: Record<string, Bencodable>, tag: string): { type: string; endpointPort: number; packets: number } {
  type Stream = { endpoint: { port: number }; stats: { packets: number } };
  const leg = (call.tags as Record<string, { medias: { type: string; streams: Stream[] }[] }>)[tag];
  const media = leg?.medias[0];
  const stream = media?.streams[0];
  if (media === undefined || stream === undefined) throw new Error(`rtpengine knows no media of ${tag}: ${JSON.stringify(call)}`);
  return { type: media.type, endpointPort: stream.endpoint.port, packets: stream.stats.packets };
}

describe(
  "a fax through rtpengine's T.38/G.711 gateway, in real time",
  () => {
    before(() => {
      requirePeer("rtpengine");
      requirePeer("sipp");
    });
    let image: Buffer;
    let rtpengine: RtpengineRun;
    before(async () => {
      requireNativeBuild();
      image = await renderTwoPageLetter("LOW");
      rtpengine = await startRtpengine({ portMin: 32_000, portMax: 32_199 });
    });
    after(async () => {
      cleanupPeers();
      await rtpengine?.stop();
    });

    const request = (): CallRequest => twoPageLowCallRequest(image);

    async function send(options: { t38: boolean; receiver: ReceiverRun; callId: string; scenario: string }): Promise<void> {
      const pair = await freePortPair(47_900);
      const ours = options.t38 ? t38Sdp(pair + 2) : pcmaSdp(pair);
      const theirs = options.t38 ? pcmaSdp(options.receiver.port) : t38Sdp(options.receiver.port);
      await rtpengine.command({ command: "offer", "call-id": options.callId, "from-tag": "faxline", sdp: ours, "T.38": [options.t38 ? "decode" : "force"] });
      const answer = await rtpengine.command({ command: "answer", "call-id": options.callId, "from-tag": "faxline", "to-tag": "receiver", sdp: theirs });
      const relayPort = mediaPort(String(answer.sdp));
      const sipp = await startSipp(options.scenario, { keys: { rx_host: "127.0.0.1", rx_port: String(relayPort) }, timeoutSeconds: 150 });
      const line = new SipFaxLine({
        trunks: [testTrunk(sipp.port, { maxCalls: 1, t38: options.t38 })],
        region: REGION_NUMBER_CONTEXT.DE,
        localAddress: "127.0.0.1",
        sipPort: 0,
        mediaPorts: { min: pair, max: pair + 3 },
        clockSpeed: 1,
        capabilityMaxAgeMs: 86_400_000,
      });
      try {
        const outcome = await line.call(request(), new AbortController().signal);
        const received = await options.receiver.result;
        assert.equal(outcome.result, "delivered", `${JSON.stringify(outcome)}\nreceiver: ${JSON.stringify(received.result)}\n${received.log.slice(-2000)}`);
        if (outcome.result !== "delivered") return;
        assert.equal(outcome.pagesSent, 2);
        assert.equal(outcome.remoteCsid, RECEIVER_IDENT, "the receiver's CSI crossed the gateway");
        assert.ok(outcome.durationSecs >= 20, `a real-time fax of 2 pages took ${outcome.durationSecs} s`);
        assert.equal(received.exitCode, 0, received.log.slice(-2000));
        assert.equal(received.result?.pages_rx, 2);
        assert.equal(received.result?.remote_ident, "+49 89 998877", "our TSI (the trunk's CSID) crossed the gateway");
        const pages = await comparePages(image, readFileSync(options.receiver.rxFile), 2);
        assert.ok(identical(pages), JSON.stringify(pages));
        assert.equal((await sipp.exit).code, 0, sipp.errors());
        // The media really crossed the relay: rtpengine counted it on both legs, ours from our port
        // (a T.38 receiver sends little: about 90 IFPs for two pages).
        const call = await rtpengine.command({ command: "query", "call-id": options.callId });
        const ourLeg = relayedStream(call, "faxline");
        const receiverLeg = relayedStream(call, "receiver");
        assert.equal(ourLeg.type, options.t38 ? "image" : "audio");
        assert.equal(ourLeg.endpointPort, options.t38 ? pair + 2 : pair);
        assert.equal(receiverLeg.type, options.t38 ? "audio" : "image");
        assert.equal(receiverLeg.endpointPort, options.receiver.port);
        assert.ok(ourLeg.packets > 500 && receiverLeg.packets > 50, JSON.stringify({ ourLeg, receiverLeg }));
      } finally {
        await line.close();
        await rtpengine.command({ command: "delete", "call-id": options.callId, "from-tag": "faxline" }).catch(() => undefined);
      }
    }

    it("T.38 from Faxline, decoded to G.711 by rtpengine, reaches a SpanDSP audio receiver", { timeout: 180_000 }, async () => {
      const receiver = await startG711Receiver({ speed: 1, ecm: true, ident: RECEIVER_IDENT, wallSeconds: 150 });
      await send({ t38: true, receiver, callId: "faxline-t38-to-g711", scenario: "uas-fax-t38.xml" });
    });

    it("G.711 from Faxline, turned into T.38 by rtpengine, reaches a SpanDSP T.38 receiver", { timeout: 180_000 }, async () => {
      const receiver = await startT38Receiver({ speed: 1, ecm: true, ident: RECEIVER_IDENT, wallSeconds: 150 });
      await send({ t38: false, receiver, callId: "faxline-g711-to-t38", scenario: "uas-fax-g711.xml" });
    });
  },
);

/**
 * `npm run test:interop:realtime`: the SIP line against SpanDSP receivers in real time (clock
 * speed 1, as against a real carrier), for each rung of the fallback ladder:
 *
 *   0  T.38  with ECM     14 400 bit/s     1  G.711 with ECM     14 400 bit/s
 *   2  T.38  without ECM   9 600 bit/s     3  G.711 without ECM   9 600 bit/s
 *
 * SIPp keeps the dialog and points the media at the receiver (sipp/uas-fax-t38.xml and
 * uas-fax-g711.xml), the line sends a two-page letter at HIGH resolution through
 * `SipFaxLine.send` (the path of `faxline fax send`), and every page must arrive pixel for pixel
 * at the rung's bit rate. A two-page fax takes 40 to 80 s here, which is why these run apart from
 * `npm test` (whose interop tests run the same paths on a 20 to 50 times faster virtual clock;
 * rtpengine's gateway, which only keeps real time, is in `npm test` too).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import type { FaxBitRateCap } from "../../src/line/fax-engine/engine.ts";
import type { FaxTransport } from "../../src/line/outcomes/call-outcomes.ts";
import { SipFaxLine } from "../../src/line/sip-fax-line/sip-fax-line.ts";
import { REGION_NUMBER_CONTEXT } from "../../src/numbers/normalize-number.ts";
import { testTrunk } from "../support/sip-trunk.ts";
import { comparePages, identical, renderTwoPageLetter, requireNativeBuild, requirePeer } from "../interop/interop-support.ts";
import { cleanupPeers, startG711Receiver, startSipp, startT38Receiver } from "../interop/peer-processes.ts";

const RECEIVER_IDENT = "FAXLINE-RT-RX";

describe("the SIP line in real time, every rung of the fallback ladder", () => {
  before(() => requirePeer("sipp"));
  let image: Buffer;
  before(async () => {
    requireNativeBuild();
    image = await renderTwoPageLetter("HIGH");
  });
  after(() => cleanupPeers());

  const rungs: { rung: number; transport: FaxTransport; ecm: boolean; maxBitRate: FaxBitRateCap }[] = [
    { rung: 0, transport: "t38", ecm: true, maxBitRate: 14_400 },
    { rung: 1, transport: "g711", ecm: true, maxBitRate: 14_400 },
    { rung: 2, transport: "t38", ecm: false, maxBitRate: 9_600 },
    { rung: 3, transport: "g711", ecm: false, maxBitRate: 9_600 },
  ];

  for (const { rung, transport, ecm, maxBitRate } of rungs) {
    const name = `rung ${rung}: ${transport === "t38" ? "T.38" : "G.711"} ${ecm ? "with" : "without"} ECM at ${maxBitRate} bit/s, two pages pixel-identical`;
    it(name, { timeout: 240_000 }, async (t) => {
      const receiver = transport === "t38"
        ? await startT38Receiver({ speed: 1, ecm, ident: RECEIVER_IDENT, wallSeconds: 200 })
        : await startG711Receiver({ speed: 1, ecm, ident: RECEIVER_IDENT, wallSeconds: 200 });
      const sipp = await startSipp(transport === "t38" ? "uas-fax-t38.xml" : "uas-fax-g711.xml", {
        keys: { rx_host: "127.0.0.1", rx_port: String(receiver.port) },
        timeoutSeconds: 220,
      });
      const line = new SipFaxLine({
        trunks: [testTrunk(sipp.port, { maxCalls: 1, t38: transport === "t38" })],
        region: REGION_NUMBER_CONTEXT.DE,
        localAddress: "127.0.0.1",
        sipPort: 0,
        mediaPorts: { min: 47_800, max: 47_899 },
        clockSpeed: 1,
        capabilityMaxAgeMs: 86_400_000,
      });
      try {
        const sent = await line.send({
          to: "+49 30 1234567",
          transport,
          ecm,
          maxBitRate,
          defaultCsid: "Faxline",
          image,
          pageSizes: [30_000, 10_000],
        });
        const { report } = sent;
        t.diagnostic(`${report.durationSecs} s on the line, ${Math.round(report.wallMs)} ms wall, setup ${report.setupMs?.toFixed(1)} ms`);
        const received = await receiver.result;
        assert.equal(report.attempt.result, "delivered", `${JSON.stringify(report.outcome)}\n${received.log.slice(-2000)}`);
        assert.equal(report.transport, transport);
        assert.equal(report.statistics?.pagesTx, 2);
        assert.equal(report.statistics?.bitRate, maxBitRate);
        assert.equal(report.statistics?.ecm, ecm);
        assert.equal(report.statistics?.remoteIdent, RECEIVER_IDENT);
        assert.ok(report.durationSecs >= 25, `${report.durationSecs} s: a real-time call`);
        assert.equal(received.exitCode, 0, received.log.slice(-2000));
        assert.equal(received.result?.pages_rx, 2);
        assert.equal(received.result?.bad_rows, 0);
        const pages = await comparePages(image, readFileSync(receiver.rxFile), 2);
        assert.ok(identical(pages), JSON.stringify(pages));
        assert.equal((await sipp.exit).code, 0, sipp.errors());
      } finally {
        await line.close();
        receiver.kill();
      }
    });
  }
});

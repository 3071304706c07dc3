/**
 * The SIP line in real time, short (part of `npm test`): one page on the top and the bottom rung
 * of the fallback ladder, which between them take both transports, ECM and none, and both bit
 * rates:
 *
 *   0  T.38  with ECM     14 400 bit/s          3  G.711 without ECM   9 600 bit/s
 *
 * at clock speed 1, as against a real carrier (realtime-rung.ts: SIPp keeps the dialog, a SpanDSP
 * receiver in another process takes the page, which must arrive pixel for pixel at the rung's rate).
 * About 30 s a rung. The other interop tests run the same paths on a 5 to 50 times faster
 * virtual clock; every rung with two pages at HIGH resolution runs apart, in minutes, as
 * `npm run test:interop:realtime` (test/realtime/).
 */
import { after, before, describe, it } from "node:test";
import { requireNativeBuild, requirePeer } from "./interop-support.ts";
import { cleanupPeers } from "./peer-processes.ts";
import { faxOnRung, LADDER, renderLetter, rungName, type LetterImage } from "./realtime-rung.ts";

const RUNGS = [0, 3];

describe("the SIP line in real time, one page on the top and the bottom rung of the fallback ladder", () => {
  let image: LetterImage;
  before(async () => {
    requirePeer("sipp");
    requireNativeBuild();
    image = await renderLetter("LOW", 30, 1);
  });
  after(() => cleanupPeers());

  for (const rung of LADDER.filter((r) => RUNGS.includes(r.rung))) {
    it(`${rungName(rung)}: one page pixel-identical`, { timeout: 240_000 }, async (t) => {
      await faxOnRung(t, rung, { image, ident: "FAXLINE-RT-RX", mediaPorts: { min: 47_240, max: 47_279 }, minDurationSecs: 15 });
    });
  }
});

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
 * at the rung's bit rate (test/interop/realtime-rung.ts). A two-page fax takes 40 to 80 s here,
 * which is why these run apart from `npm test`; `npm test` runs one page on rungs 0 and 3 in real
 * time (test/interop/sip-line-realtime.test.ts), and its other interop tests run the same paths
 * on a 5 to 50 times faster virtual clock (rtpengine's gateway, which only keeps real time, is
 * in `npm test` too).
 */
import { after, before, describe, it } from "node:test";
import { requireNativeBuild, requirePeer } from "../interop/interop-support.ts";
import { cleanupPeers } from "../interop/peer-processes.ts";
import { faxOnRung, LADDER, renderLetter, rungName, type LetterImage } from "../interop/realtime-rung.ts";

describe("the SIP line in real time, every rung of the fallback ladder", () => {
  let image: LetterImage;
  before(async () => {
    requirePeer("sipp");
    requireNativeBuild();
    image = await renderLetter("HIGH", 70, 2);
  });
  after(() => cleanupPeers());

  for (const rung of LADDER) {
    it(`${rungName(rung)}, two pages pixel-identical`, { timeout: 240_000 }, async (t) => {
      await faxOnRung(t, rung, { image, ident: "FAXLINE-RT-RX", mediaPorts: { min: 47_800, max: 47_899 }, minDurationSecs: 25 });
    });
  }
});

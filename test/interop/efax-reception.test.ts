/**
 * Receiving from a second, independent T.30: efax (Debian `efax` 0.9a, Ed Casas' own T.30, not
 * SpanDSP's) sends through a Class 1 modem on a pseudo-terminal (test/peers/t31-modem: SpanDSP's
 * T.31 AT interpreter and modems, its line T.38 over UDPTL or G.711 over RTP), SIPp plays the
 * carrier that calls Faxline, and the answering side is a SipFaxLine as the sender role runs it,
 * with a sink that collects what it hands over. Without ECM, in MH: two pages at V.29 and normal
 * resolution over T.38 after the caller's re-INVITE, one page at V.17 and fine over G.711 (and in
 * received-page-formats.test.ts one at V.17 and fine over T.38 offered in the INVITE, through a
 * node: stored, pulled, mailed, previewed).
 *
 * What efax can do (its source, 0.9a): it codes every page in MH (T.4 1-D) whatever it reads
 * (2-D is "not supported", its -c df field notwithstanding); it has no ECM; it negotiates only
 * the A4 width (its mincap() loop ends at the bit-rate field, so a B4 or A3 page is cut to 1728
 * pixels); it knows 98 and 196 lines per inch only. So MR, ECM and the wider pages come from
 * SpanDSP's sender (sip-reception-sipp.test.ts, received-page-formats.test.ts).
 *
 * efax runs in real time on its tty; the modem's line runs on Faxline's virtual clock (both at
 * SPEED). efax's timeouts are real-time ones that only grow more generous, but two of its habits
 * bound the speed: it waits a real second after CONNECT before each page (SPEED seconds of fill
 * on the line), and it divides the page's bytes by the page's whole wall seconds, so a page sent
 * in less than a wall second kills it (SIGFPE): each page here takes SPEED seconds of line time
 * or more (full pages; 14400 or 9600 bit/s). At 10x a two-page fax takes about 13 s; at 20x
 * about 8 s, but a loaded machine then loses G.711 audio and T.30 frames (the time a scheduling
 * hiccup costs grows with the speed), so 10x it is.
 *
 * What arrives equals what efax sends pixel for pixel: the page efax read, below the 20 white
 * scan lines efax puts on top of every page (`efaxSentPage`). EFAX_DEBUG=1 adds the modem's
 * SpanDSP and AT log to what a failing case prints.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { InboundSink, ReceivedCall } from "../../src/line/sip-fax-line/inbound-calls.ts";
import { SipFaxLine } from "../../src/line/sip-fax-line/sip-fax-line.ts";
import type { TrunkConfig } from "../../src/line/trunks/trunk-config.ts";
import { REGION_NUMBER_CONTEXT } from "../../src/numbers/normalize-number.ts";
import { decodePage, pixelDifference, type PagePixels } from "../support/fax-page-pixels.ts";
import { testTrunk } from "../support/sip-trunk.ts";
import { renderTwoPageLetter, requireNativeBuild } from "./interop-support.ts";
import { cleanupPeers, startSipp } from "./peer-processes.ts";
import { cleanupT31Peers, efaxSentPage, rawBilevelTiff, requireEfaxPeers, startEfaxReceiver, startEfaxSender, startT31Modem } from "./t31-modem-peer.ts";

const SPEED = 10;
/** efax's -c bit rate field: 5 is V.17 14400, 3 V.29 9600, 1 V.27ter 4800. */
const EFAX_BIT_RATE = { 14400: 5, 9600: 3, 4800: 1 } as const;
const DID = "+4930123456";
const EFAX_ID = "+49 40 123456";

/** The page mirrored left to right: as much ink as the page, other pixels. */
function mirrored(page: PagePixels): PagePixels {
  const pixels = Buffer.alloc(page.pixels.length);
  for (let y = 0; y < page.height; y++) {
    for (let x = 0; x < page.width; x++) pixels[y * page.width + x] = page.pixels[y * page.width + page.width - 1 - x]!;
  }
  return { width: page.width, height: page.height, pixels };
}

class CollectingSink implements InboundSink {
  readonly received: ReceivedCall[] = [];
  async lookup(e164: string) {
    return e164 === DID ? { custNr: "1234", topic: "orders" } : null;
  }
  async store(call: ReceivedCall): Promise<void> {
    this.received.push(call);
  }
}

async function answeringLine(sink: CollectingSink, trunk: Partial<TrunkConfig>): Promise<SipFaxLine> {
  const line = new SipFaxLine({
    trunks: [testTrunk(9, { name: "carrier-in", inbound: true, inboundFrom: ["127.0.0.1"], csid: "FAXLINE RX", ...trunk })],
    region: REGION_NUMBER_CONTEXT.DE,
    localAddress: "127.0.0.1",
    sipPort: 0,
    mediaPorts: { min: 47_700, max: 47_749 },
    clockSpeed: SPEED,
    capabilityMaxAgeMs: 86_400_000,
    inbound: { sink, channels: 4, defaultCsid: "Faxline" },
  });
  await line.start();
  return line;
}

async function receptions(sink: CollectingSink, count: number): Promise<ReceivedCall[]> {
  const deadline = Date.now() + 10_000;
  while (sink.received.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return sink.received;
}

describe("receiving from efax through a T.31 modem: SIPp as the carrier", () => {
  /** The letter's first page at each resolution: a full page (see the top: efax and short pages). */
  const letter = new Map<"LOW" | "HIGH", PagePixels>();
  before(async () => {
    requireNativeBuild();
    requireEfaxPeers();
    for (const resolution of ["LOW", "HIGH"] as const) letter.set(resolution, await decodePage(await renderTwoPageLetter(resolution), 0));
  });
  after(() => {
    cleanupT31Peers();
    cleanupPeers();
  });

  // Two full pages: the letter's first and the same mirrored (as much ink, other pixels).
  const twoPages = (resolution: "LOW" | "HIGH") => [letter.get(resolution)!, mirrored(letter.get(resolution)!)];
  const cases = [
    // T.38 offered in the INVITE, fine, V.17: efax's page through a node (received-page-formats.test.ts).
    { name: "T.38 after the caller's re-INVITE, normal (98 lpi), V.29 9600: two pages", line: "t38", scenario: "uac-fax-t38-reinvite.xml", resolution: "LOW", bitRate: 9600, pages: () => twoPages("LOW"), trunk: {} },
    { name: "G.711 (PCMA), fine (196 lpi), V.17 14400: one page", line: "g711", scenario: "uac-fax-g711.xml", resolution: "HIGH", bitRate: 14400, pages: () => [letter.get("HIGH")!], trunk: { t38: false } },
  ] as const;
  for (const c of cases) {
    it(`${c.name}: efax's MH pages arrive pixel-identical, without ECM, with efax's TSI`, { timeout: 90_000 }, async (t) => {
      const sink = new CollectingSink();
      const line = await answeringLine(sink, c.trunk);
      const modem = await startT31Modem({ line: c.line, speed: SPEED, debug: process.env.EFAX_DEBUG === "1" });
      const sent = c.pages();
      const yDpi = c.resolution === "HIGH" ? 196 : 98;
      // -c: vr (from each file), bit rate, A4 width, any length, 1-D, no ECM, no BFT, no scan time.
      const capabilities = `1,${EFAX_BIT_RATE[c.bitRate]},0,2,0,0,0,0`;
      const efax = startEfaxSender({ device: modem.device, number: "0301234567", pages: sent.map((p) => rawBilevelTiff(p, 204, yDpi)), ident: EFAX_ID, capabilities });
      try {
        assert.equal(await modem.dialed, "0301234567");
        const sipp = await startSipp(c.scenario, {
          call: { remote: `127.0.0.1:${line.sipLocal!.port}`, service: DID },
          keys: { rx_host: "127.0.0.1", rx_port: String(modem.port) },
        });
        const [sippExit, efaxExit] = await Promise.all([sipp.exit, efax.exit]);
        const peer = await modem.result;
        t.diagnostic(`efax: ${efaxExit.log.split("\n").filter((l) => /Error|Warning|session|sent \d|received [A-Z]{3}/.test(l)).join(" | ")}`);
        t.diagnostic(`modem: ${JSON.stringify(peer.result)}`);
        assert.equal(efaxExit.code, 0, `efax ended with ${efaxExit.code}: ${efaxExit.log.slice(-3000)}\nmodem: ${peer.log.slice(-2000)}`);
        assert.equal(sippExit.code, 0, `${sippExit.output}\n${sipp.errors()}`);
        assert.equal(peer.result?.code, 0, peer.log.slice(-2000));
        const [received] = await receptions(sink, 1);
        assert.ok(received !== undefined, "the reception was handed to the sink");
        assert.equal(received.report.status, "OK");
        assert.equal(received.report.pages, sent.length);
        assert.equal(received.report.transport, c.line);
        assert.equal(received.report.remoteCsid, EFAX_ID);
        assert.equal(received.report.ecm, false);
        assert.equal(received.report.encoding, "T.4 1-D");
        assert.equal(received.report.resolution, c.resolution);
        assert.equal(received.report.bitRate, c.bitRate);
        assert.equal(received.toNumber, DID);
        for (const [i, page] of sent.entries()) {
          const arrived = await decodePage(received.image!, i);
          const difference = pixelDifference(arrived, efaxSentPage(page, yDpi));
          assert.equal(difference.count, 0, `page ${i + 1}: ${difference.count} pixels differ (${difference.first})`);
        }
      } finally {
        efax.kill();
        modem.kill();
        await line.close();
      }
    });
  }
});

/**
 * The other way, for the modem's T.38 receive path: Faxline sends to efax (efax -r answers the
 * modem's RING). SpanDSP 0.0.6's T.31 hands non-ECM image data from T.38 to the program with its
 * bits unreversed; the modem reverses them first (its `reversed_non_ecm_bytes`), and efax's pages
 * are Faxline's, pixel for pixel. efax's DIS offers MH only and no ECM: Faxline sends MH.
 */
describe("Faxline sends to efax through the T.31 modem (T.38): the modem's receive path", () => {
  let line: SipFaxLine;
  before(async () => {
    requireNativeBuild();
    requireEfaxPeers();
    line = new SipFaxLine({
      trunks: [],
      region: REGION_NUMBER_CONTEXT.DE,
      localAddress: "127.0.0.1",
      sipPort: 0,
      mediaPorts: { min: 47_750, max: 47_799 },
      clockSpeed: SPEED,
      capabilityMaxAgeMs: 86_400_000,
      sipTimers: { D: 1000 },
    });
    await line.start();
  });
  after(async () => {
    await line.close();
    cleanupT31Peers();
    cleanupPeers();
  });

  it("two MH pages without ECM reach efax pixel-identical, the modem having reversed the non-ECM data", { timeout: 90_000 }, async (t) => {
    const image = await renderTwoPageLetter("LOW");
    const modem = await startT31Modem({ line: "t38", speed: SPEED, debug: process.env.EFAX_DEBUG === "1" });
    const efax = startEfaxReceiver({ device: modem.device, ident: EFAX_ID });
    const sipp = await startSipp("uas-fax-t38.xml", { keys: { rx_host: "127.0.0.1", rx_port: String(modem.port) } });
    try {
      const sent = await line.send({ to: `sip:4940123456@127.0.0.1:${sipp.port}`, defaultCsid: "FAXLINE TX", image, pageSizes: [20_000, 5_000], ecm: false });
      const [efaxExit, peer] = await Promise.all([efax.exit, modem.result]);
      t.diagnostic(JSON.stringify(sent.report.attempt));
      t.diagnostic(`modem: ${JSON.stringify(peer.result)}`);
      assert.equal(sent.report.attempt.result, "delivered");
      assert.equal(efaxExit.code, 0, `efax ended with ${efaxExit.code}: ${efaxExit.log.slice(-3000)}`);
      assert.match(efaxExit.log, /remote ID -> +FAXLINE TX/);
      assert.ok((peer.result?.reversed_non_ecm_bytes ?? 0) > 10_000, "the pages went through the bug's workaround");
      assert.equal(efax.pages().length, 2);
      for (const [i, file] of efax.pages().entries()) {
        const difference = pixelDifference(await decodePage(file), await decodePage(image, i));
        assert.equal(difference.count, 0, `page ${i + 1}: ${difference.count} pixels differ (${difference.first})`);
      }
    } finally {
      efax.kill();
      modem.kill();
      sipp.kill();
    }
  });
});

/**
 * One real-time fax on one rung of the fallback ladder, for the real-time line tests
 * (test/interop/sip-line-realtime.test.ts in `npm test`, test/realtime/ apart from it): SIPp
 * keeps the dialog and points the media at a SpanDSP receiver (sipp/uas-fax-t38.xml,
 * uas-fax-g711.xml), the line sends the image through `SipFaxLine.send` (the path of
 * `faxline fax send`) with clock speed 1, and every page must arrive pixel for pixel at the rung's
 * bit rate, with the rung's ECM.
 *
 * Nothing here times the call beyond its floor: the line and the receiver get minutes where the
 * fax takes seconds, and the G.711 receiver a playout delay (jitter buffer) that rides out the
 * stalls of a loaded machine.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import type { TestContext } from "node:test";
import type { FaxBitRateCap } from "../../src/line/fax-engine/engine.ts";
import type { FaxTransport } from "../../src/line/outcomes/call-outcomes.ts";
import { SipFaxLine } from "../../src/line/sip-fax-line/sip-fax-line.ts";
import { REGION_NUMBER_CONTEXT } from "../../src/numbers/normalize-number.ts";
import type { Resolution } from "../../src/render/pages/grey-page.ts";
import { testTrunk } from "../support/sip-trunk.ts";
import { comparePages, identical, LETTER, renderText } from "./interop-support.ts";
import { startG711Receiver, startSipp, startT38Receiver } from "./peer-processes.ts";

export interface Rung {
  rung: number;
  transport: FaxTransport;
  ecm: boolean;
  maxBitRate: FaxBitRateCap;
}

/** The ladder (src/line/fallback): T.38 and G.711, with ECM at 14 400 bit/s, then without at 9 600. */
export const LADDER: readonly Rung[] = [
  { rung: 0, transport: "t38", ecm: true, maxBitRate: 14_400 },
  { rung: 1, transport: "g711", ecm: true, maxBitRate: 14_400 },
  { rung: 2, transport: "t38", ecm: false, maxBitRate: 9_600 },
  { rung: 3, transport: "g711", ecm: false, maxBitRate: 9_600 },
];

export function rungName({ rung, transport, ecm, maxBitRate }: Rung): string {
  return `rung ${rung}: ${transport === "t38" ? "T.38" : "G.711"} ${ecm ? "with" : "without"} ECM at ${maxBitRate} bit/s`;
}

export interface LetterImage {
  tiff: Buffer;
  pageSizes: number[];
}

/** Faxline's own rendering of the first `lines` lines of the test letter (interop-support.ts LETTER): `pages` A4 pages. */
export async function renderLetter(resolution: Resolution, lines: number, pages: number): Promise<LetterImage> {
  const image = await renderText(LETTER.split("\n").slice(0, lines).join("\n") + "\n", resolution);
  if (image.pageSizes.length !== pages) throw new Error(`${lines} lines of the test letter rendered to ${image.pageSizes.length} pages, expected ${pages}`);
  return image;
}

export interface RealtimeRunOptions {
  image: LetterImage;
  /** The receiver's ident (CSI), which the report must carry as remote ident. */
  ident: string;
  /** The line's media ports (four a call), apart from other suites'. */
  mediaPorts: { min: number; max: number };
  /** The least the call can last (seconds on the line): the pages and T.30's exchanges around them at the rung's rate. */
  minDurationSecs: number;
}

/** Sends `image` in real time on `rung` and asserts what must hold (see the header). */
export async function faxOnRung(t: TestContext, rung: Rung, options: RealtimeRunOptions): Promise<void> {
  const { transport, ecm, maxBitRate } = rung;
  const pages = options.image.pageSizes.length;
  const receiver = transport === "t38"
    ? await startT38Receiver({ speed: 1, ecm, ident: options.ident, wallSeconds: 200 })
    : await startG711Receiver({ speed: 1, ecm, ident: options.ident, wallSeconds: 200, playoutDelayMs: 200 });
  const sipp = await startSipp(transport === "t38" ? "uas-fax-t38.xml" : "uas-fax-g711.xml", {
    keys: { rx_host: "127.0.0.1", rx_port: String(receiver.port) },
    timeoutSeconds: 220,
  });
  const line = new SipFaxLine({
    trunks: [testTrunk(sipp.port, { maxCalls: 1, t38: transport === "t38" })],
    region: REGION_NUMBER_CONTEXT.DE,
    localAddress: "127.0.0.1",
    sipPort: 0,
    mediaPorts: options.mediaPorts,
    clockSpeed: 1,
    capabilityMaxAgeMs: 86_400_000,
  });
  try {
    const { report } = await line.send({
      to: "+49 30 1234567",
      transport,
      ecm,
      maxBitRate,
      defaultCsid: "Faxline",
      image: options.image.tiff,
      pageSizes: options.image.pageSizes,
    });
    t.diagnostic(`${report.durationSecs} s on the line, ${Math.round(report.wallMs)} ms wall, setup ${report.setupMs?.toFixed(1)} ms`);
    const received = await receiver.result;
    assert.equal(report.attempt.result, "delivered", `${JSON.stringify(report.outcome)}\n${received.log.slice(-2000)}`);
    assert.equal(report.transport, transport);
    assert.equal(report.statistics?.pagesTx, pages);
    assert.equal(report.statistics?.bitRate, maxBitRate);
    assert.equal(report.statistics?.ecm, ecm);
    assert.equal(report.statistics?.remoteIdent, options.ident);
    assert.ok(report.durationSecs >= options.minDurationSecs, `${report.durationSecs} s on the line: a call of ${pages} pages lasts at least ${options.minDurationSecs} s`);
    // Real time: the call took no less wall time than its time on the line (whole seconds, rounded).
    assert.ok(report.wallMs >= (report.durationSecs - 1) * 1000, `${Math.round(report.wallMs)} ms wall for ${report.durationSecs} s on the line: not real time`);
    assert.equal(received.exitCode, 0, received.log.slice(-2000));
    assert.equal(received.result?.pages_rx, pages);
    assert.equal(received.result?.bad_rows, 0);
    const compared = await comparePages(options.image.tiff, readFileSync(receiver.rxFile), pages);
    assert.ok(identical(compared), JSON.stringify(compared));
    assert.equal((await sipp.exit).code, 0, sipp.errors());
  } finally {
    await line.close();
    receiver.kill();
  }
}

/**
 * The SIP line's failure paths against SIPp, without the job engine, and a fax that must survive
 * the far end's session refreshes in the middle of a page; calls that end in the right
 * status when the far end hangs up before the fax (NOFAX_DIS), in the middle of a page (REM_DIS,
 * with the receiver's SpanDSP at the other end of the UDPTL), and when the fax engine hangs and
 * the watchdog must end the call (a stand-in engine that never answers).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Engine, T38Session, TransferStatistics } from "../../src/line/fax-engine/engine.ts";
import type { CallRequest } from "../../src/line/line.ts";
import { SipFaxLine } from "../../src/line/sip-fax-line/sip-fax-line.ts";
import { failureReason } from "../../src/errors/failure-reasons.ts";
import { REGION_NUMBER_CONTEXT } from "../../src/numbers/normalize-number.ts";
import { testTrunk } from "../support/sip-trunk.ts";
import { renderTwoPageLetter, requireNativeBuild, requirePeer, twoPageLowCallRequest } from "./interop-support.ts";
import { cleanupPeers, startSipp, startT38Receiver } from "./peer-processes.ts";

const SPEED = 50;

function line(port: number, engine?: Engine): SipFaxLine {
  return new SipFaxLine({
    trunks: [testTrunk(port)],
    region: REGION_NUMBER_CONTEXT.DE,
    localAddress: "127.0.0.1",
    sipPort: 0,
    mediaPorts: { min: 47_700, max: 47_799 },
    clockSpeed: SPEED,
    capabilityMaxAgeMs: 86_400_000,
    ...(engine !== undefined ? { engine } : {}),
    sipTimers: { D: 1000 },
  });
}

/** A fax engine whose T.38 session never sends, never answers and never ends: the hang the watchdog is for. */
const HANGING_ENGINE: Engine = {
  name: "hanging",
  openAudioSession: () => assert.fail("audio is not expected"),
  openT38Session: (): T38Session => {
    let samples = 0;
    const statistics: TransferStatistics = {
      pagesTx: 0, pagesRx: 0, pagesInFile: 2, bitRate: 0, ecm: false, ecmRetries: 0, encoding: "none", width: 0, length: 0, xDpi: 0, yDpi: 0,
      imageBytes: 0, badRows: 0, longestBadRowRun: 0, currentStatus: 0, remoteIdent: "", localIdent: "", samples: 0,
    };
    return {
      advance: (n) => ({ packets: [], events: [], finished: false, samples: (samples += n) }),
      receiveIfp: () => ({ packets: [], events: [], finished: false, samples }),
      statistics: () => ({ ...statistics, samples }),
      close: () => undefined,
    };
  },
};

describe("the SIP line's failure paths against SIPp", () => {
  before(() => requirePeer("sipp"));
  let dir: string;
  let image: Buffer;
  before(async () => {
    requireNativeBuild();
    dir = mkdtempSync(path.join(tmpdir(), "faxline-line-"));
    image = await renderTwoPageLetter("LOW");
    writeFileSync(path.join(dir, "letter.tif"), image);
  });
  after(() => {
    cleanupPeers();
    rmSync(dir, { recursive: true, force: true });
  });

  const request = (): CallRequest => twoPageLowCallRequest(image);

  it("the far end hangs up before the fax: NOFAX_DIS (fax_disconnected), a protocol retry", { timeout: 30_000 }, async () => {
    const sipp = await startSipp("uas-remote-bye.xml");
    const sip = line(sipp.port);
    try {
      const outcome = await sip.call(request(), new AbortController().signal);
      assert.equal(outcome.result, "failed");
      if (outcome.result !== "failed") return;
      assert.equal(outcome.reasonCode, "fax_disconnected");
      assert.equal(failureReason("fax_disconnected").status, "NOFAX_DIS");
      assert.match(outcome.rawCause ?? "", /The far end hung up \(BYE \(Q\.850 cause 16 Normal call clearing\)\) before the fax began/);
      assert.equal(outcome.sentToNumber, "004930123456");
      assert.ok(outcome.durationSecs >= 1);
      assert.equal((await sipp.exit).code, 0);
    } finally {
      await sip.close();
    }
  });

  it("a session refresh re-INVITE and an UPDATE in the middle of the page: the fax goes on and is delivered", { timeout: 60_000 }, async (t) => {
    const receiver = await startT38Receiver({ speed: SPEED, ecm: true, ident: "FAXLINE-TEST-RX" });
    const sipp = await startSipp("uas-fax-t38-refresh.xml", { keys: { rx_host: "127.0.0.1", rx_port: String(receiver.port) } });
    const sip = line(sipp.port);
    try {
      const outcome = await sip.call(request(), new AbortController().signal);
      t.diagnostic(JSON.stringify(outcome));
      assert.equal(outcome.result, "delivered");
      assert.equal(outcome.pagesSent, 2);
      const exit = await sipp.exit;
      assert.equal(exit.code, 0, `${exit.output.slice(-2000)}\n${sipp.errors()}`);
      const received = await receiver.result;
      assert.equal(received.result?.code, 0);
      assert.equal(received.result?.pages_rx, 2);
    } finally {
      receiver.kill();
      await sip.close();
    }
  });

  it("the far end hangs up in the middle of page 1: REM_DIS (remote_disconnect), no page delivered", { timeout: 60_000 }, async (t) => {
    const receiver = await startT38Receiver({ speed: SPEED, ecm: true, ident: "FAXLINE-TEST-RX" });
    const sipp = await startSipp("uas-fax-t38-bye.xml", { keys: { rx_host: "127.0.0.1", rx_port: String(receiver.port) } });
    const sip = line(sipp.port);
    try {
      const outcome = await sip.call(request(), new AbortController().signal);
      t.diagnostic(JSON.stringify(outcome));
      assert.equal(outcome.result, "failed");
      if (outcome.result !== "failed") return;
      assert.equal(outcome.reasonCode, "remote_disconnect");
      assert.equal(failureReason("remote_disconnect").status, "REM_DIS");
      assert.equal(outcome.pagesSent, 0);
      assert.equal(outcome.remoteCsid, "FAXLINE-TEST-RX", "the receiver's CSI came before the hang-up");
      assert.match(outcome.rawCause ?? "", /The far end hung up \(BYE \(Q\.850 cause 16 Normal call clearing\)\) during a page \(T\.30 phase C\); 0 of 2 pages confirmed$/);
      assert.equal((await sipp.exit).code, 0);
    } finally {
      receiver.kill();
      await sip.close();
    }
  });

  it("the fax engine hangs: the watchdog ends the call as NOFAX_TO (fax_timeout) and hangs up", { timeout: 30_000 }, async () => {
    const sipp = await startSipp("uas-remote-t38.xml");
    const sip = line(sipp.port, HANGING_ENGINE);
    try {
      const started = performance.now();
      const outcome = await sip.call(request(), new AbortController().signal);
      const wallMs = performance.now() - started;
      assert.equal(outcome.result, "failed");
      if (outcome.result !== "failed") return;
      assert.equal(outcome.reasonCode, "fax_timeout");
      assert.match(outcome.rawCause ?? "", /^Watchdog: waiting for the remote fax to answer with a DIS \(T\.30 phase A\) took longer than 75 s/);
      // 75 s of call time at 50x: 1.5 s of wall time.
      assert.ok(wallMs > 1_400 && wallMs < 10_000, `${Math.round(wallMs)} ms`);
      assert.ok(outcome.durationSecs >= 75, `duration ${outcome.durationSecs} s of call time`);
      assert.equal((await sipp.exit).code, 0, "we hung up with BYE");
    } finally {
      await sip.close();
    }
  });
});

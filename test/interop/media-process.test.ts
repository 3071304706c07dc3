/**
 * Fault containment of the media process (media-host/media-host.ts, docs/adr/0010): the SIP
 * line sends a real T.38 fax (SIPp as the carrier, the SpanDSP receiver at the far end) with its
 * fax engine in the node's media process, and the test kills that process in the middle of the
 * fax: SIGKILL, SIGSEGV (what a fault in the native engine does), or SIGSTOP (a hang, found by the
 * missed pings). Each time the call ends with `engine_lost` (retried by the normal policy), the
 * line hangs up cleanly (SIPp's scenario gets its BYE), the SIP side and this event loop carry on,
 * the process is restarted, and the next fax on the same line is delivered.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { EngineEvent } from "../../src/line/fax-engine/engine.ts";
import { failureReason } from "../../src/errors/failure-reasons.ts";
import { SipFaxLine } from "../../src/line/sip-fax-line/sip-fax-line.ts";
import { REGION_NUMBER_CONTEXT } from "../../src/numbers/normalize-number.ts";
import { eventually } from "../support/test-node.ts";
import { renderTwoPageLetter, requireNativeBuild } from "./interop-support.ts";
import { cleanupPeers, HAVE_SIPP, startSipp, startT38Receiver } from "./peer-processes.ts";

const SPEED = 20;
const PAGE_SIZES = [20_000, 5_000];

describe("the media process: a crash or hang ends only its calls", { skip: HAVE_SIPP ? false : "sipp is not installed (Debian package sip-tester)" }, () => {
  let image: Buffer;
  let sip: SipFaxLine;
  before(async () => {
    requireNativeBuild();
    image = await renderTwoPageLetter("LOW");
    // One line for the whole suite: it dials each SIPp directly by its SIP URI.
    sip = new SipFaxLine({
      trunks: [],
      region: REGION_NUMBER_CONTEXT.DE,
      localAddress: "127.0.0.1",
      sipPort: 0,
      mediaPorts: { min: 47_900, max: 47_999 },
      clockSpeed: SPEED,
      capabilityMaxAgeMs: 86_400_000,
      sipTimers: { D: 1000 },
      mediaProcess: { pingEveryMs: 100, hangMs: 500, restartDelayMs: 100 },
    });
    await sip.start();
  });
  after(async () => {
    await sip.close();
    cleanupPeers();
  });

  /** One fax through SIPp to a SpanDSP receiver; `onEvent` sees the engine's events. */
  async function fax(onEvent: (event: EngineEvent) => void = () => undefined) {
    const receiver = await startT38Receiver({ speed: SPEED, ecm: true, ident: "FAXLINE-TEST-RX" });
    const sipp = await startSipp("uas-fax-t38.xml", { keys: { rx_host: "127.0.0.1", rx_port: String(receiver.port) } });
    try {
      const sent = await sip.send({ to: `sip:4930123456@127.0.0.1:${sipp.port}`, defaultCsid: "Faxline", image, pageSizes: PAGE_SIZES, onEngineEvent: onEvent });
      const exit = await sipp.exit;
      return { report: sent.report, sippExit: exit, sipp };
    } finally {
      receiver.kill();
    }
  }

  let losses = 0;
  for (const signal of ["SIGKILL", "SIGSEGV", "SIGSTOP"] as const) {
    it(`${signal} to the media process in the middle of the fax: engine_lost, a clean hang-up, a new process, the next fax delivered`, { timeout: 60_000 }, async (t) => {
      let victim: number | undefined;
      const first = await fax((event) => {
        // Once the receiver's DIS has been taken, the fax is under way: strike then.
        if (event.type === "phaseB" && victim === undefined) {
          victim = sip.mediaProcessPid;
          assert.ok(victim !== undefined, "the line runs a media process");
          process.kill(victim, signal);
        }
      });
      t.diagnostic(JSON.stringify(first.report.attempt));
      assert.ok(victim !== undefined, "the fax got as far as phase B");
      const attempt = first.report.attempt;
      assert.equal(attempt.result, "failed");
      if (attempt.result !== "failed") return;
      assert.equal(attempt.reasonCode, "engine_lost");
      assert.equal(failureReason("engine_lost").retryClass, "internal", "retried by the normal policy");
      assert.equal(attempt.pagesSent, 0);
      const how = signal === "SIGSTOP" ? /did not answer for 500 ms and was killed/ : new RegExp(`ended with signal ${signal}`);
      assert.match(attempt.rawCause ?? "", how);
      assert.match(attempt.rawCause ?? "", /during the negotiation \(T\.30 phase B\)|during a page \(T\.30 phase C\)/);
      assert.equal(first.sippExit.code, 0, `SIPp got our BYE and its scenario completed:\n${first.sippExit.output.slice(-2000)}\n${first.sipp.errors()}`);

      assert.equal(sip.mediaProcessLosses, ++losses, "counted for faxline_media_process_lost_total");
      // A new process takes over; the next fax on the same line goes through.
      await eventually(async () => (sip.mediaProcessPid !== undefined && sip.mediaProcessPid !== victim ? true : undefined), 10_000, "a new media process");
      const second = await fax();
      t.diagnostic(JSON.stringify(second.report.attempt));
      assert.equal(second.report.attempt.result, "delivered");
      assert.equal(second.report.attempt.pagesSent, 2);
    });
  }
});

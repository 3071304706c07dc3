/**
 * Fault containment of the media processes (media-host/media-host.ts, docs/adr/0010): the SIP
 * line, with two media processes, sends two real T.38 faxes at once (SIPp as the carrier, a
 * SpanDSP receiver at each far end), one in each process, and the test kills the first call's
 * process in the middle of the faxes: SIGKILL, SIGSEGV (what a fault in the native engine does),
 * or SIGSTOP (a hang, found by the missed pings). Each time that call ends with `engine_lost`
 * (retried by the normal policy) and the line hangs up cleanly (SIPp's scenario gets its BYE),
 * the other call is delivered, the SIP side and this event loop carry on, the process is
 * replaced, and the next fax on the same line is delivered.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { EngineEvent } from "../../src/line/fax-engine/engine.ts";
import { failureReason } from "../../src/errors/failure-reasons.ts";
import { SipFaxLine } from "../../src/line/sip-fax-line/sip-fax-line.ts";
import { REGION_NUMBER_CONTEXT } from "../../src/numbers/normalize-number.ts";
import { renderTwoPageLetter, requireNativeBuild, requirePeer } from "./interop-support.ts";
import { cleanupPeers, startSipp, startT38Receiver } from "./peer-processes.ts";

const SPEED = 20;
const PAGE_SIZES = [20_000, 5_000];

describe("the media process: a crash or hang ends only its calls", () => {
  before(() => requirePeer("sipp"));
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
      mediaProcess: { processes: 2, pingEveryMs: 100, hangMs: 500, restartDelayMs: 2000 },
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
    it(`${signal} to a media process in the middle of a fax: that call ends engine_lost with a clean hang-up, the other process's call is delivered, a new process takes the next fax`, { timeout: 90_000 }, async (t) => {
      // Fax A goes to the first process (both idle); once it runs, fax B goes to the second
      // (fewest sessions). When B is under way too, the first process is struck.
      let aStarted: () => void = () => undefined;
      const aRunning = new Promise<void>((resolve) => (aStarted = resolve));
      const a = fax((event) => {
        if (event.type === "phaseB") aStarted();
      });
      await aRunning;
      const [victim, bystander] = sip.mediaProcessPids;
      assert.ok(victim !== undefined && bystander !== undefined, "the line runs two media processes");
      let struck = false;
      const b = fax((event) => {
        if (event.type === "phaseB" && !struck) {
          struck = true;
          process.kill(victim, signal);
        }
      });
      const [first, second] = await Promise.all([a, b]);
      t.diagnostic(JSON.stringify(first.report.attempt));
      t.diagnostic(JSON.stringify(second.report.attempt));
      assert.ok(struck, "fax B got as far as phase B");

      const attempt = first.report.attempt;
      assert.equal(attempt.result, "failed");
      if (attempt.result !== "failed") return;
      assert.equal(attempt.reasonCode, "engine_lost");
      assert.equal(failureReason("engine_lost").retryClass, "internal", "retried by the normal policy");
      const how = signal === "SIGSTOP" ? /did not answer for 500 ms and was killed/ : new RegExp(`ended with signal ${signal}`);
      assert.match(attempt.rawCause ?? "", how);
      assert.match(attempt.rawCause ?? "", new RegExp(`pid ${victim}\\b`));
      assert.equal(first.sippExit.code, 0, `SIPp got our BYE and its scenario completed:\n${first.sippExit.output.slice(-2000)}\n${first.sipp.errors()}`);
      assert.equal(second.report.attempt.result, "delivered", "the other process's call went on");
      assert.equal(second.report.attempt.pagesSent, 2);
      assert.equal(sip.mediaProcessLosses, ++losses, "counted for faxline_media_process_lost_total");

      // The next fax goes through at once: its media waits for the new process if that is still starting.
      const third = await fax();
      t.diagnostic(JSON.stringify(third.report.attempt));
      assert.equal(third.report.attempt.result, "delivered");
      assert.equal(third.report.attempt.pagesSent, 2);
      assert.ok(!sip.mediaProcessPids.includes(victim), "the struck process was replaced");
      assert.ok(sip.mediaProcessPids.includes(bystander), "the other process still runs");
    });
  }
});

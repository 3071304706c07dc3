/**
 * The call watchdog: per-phase ceilings, the page ceiling from the G4 size at the lowest rate,
 * the whole-call ceiling, and the verdict once virtual time passes them (the −40 dBm0 hang).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  CALL_PHASES,
  DEFAULT_WATCHDOG_LIMITS as L,
  callCeilingMs,
  checkWatchdog,
  pageCeilingMs,
  phaseLimitMs,
  samplesToMs,
  watchdogDeadline,
  type WatchdogState,
} from "../../src/line/outcomes/call-watchdog.ts";
import { outcomeOfCall } from "../../src/line/outcomes/call-outcomes.ts";

describe("call watchdog", () => {
  const limits: [WatchdogState, number][] = [
    [{ phase: "setup", phaseStartedAt: 0 }, 40_000],
    [{ phase: "ringing", phaseStartedAt: 0, ringTimeoutMs: 55_000 }, 65_000],
    [{ phase: "answered", phaseStartedAt: 0 }, 75_000],
    [{ phase: "phase_b", phaseStartedAt: 0 }, 120_000],
    [{ phase: "phase_c", phaseStartedAt: 0, pageEncodedBytes: 30_000 }, 460_000],
    [{ phase: "phase_d", phaseStartedAt: 0 }, 90_000],
    [{ phase: "phase_e", phaseStartedAt: 0 }, 15_000],
  ];
  for (const [state, expected] of limits) {
    it(`limits ${state.phase} to ${expected / 1000} s`, () => {
      assert.equal(phaseLimitMs(state), expected);
    });
  }

  it("covers every phase", () => {
    assert.deepEqual(limits.map(([s]) => s.phase), [...CALL_PHASES]);
  });

  it("gives a page its G4 size, four times over, at 2400 bit/s plus a minute", () => {
    // 30 000 bytes × 4 × 8 / 2400 = 400 s, + 60 s.
    assert.equal(pageCeilingMs(30_000), 460_000);
    assert.equal(pageCeilingMs(0), 60_000);
    assert.equal(pageCeilingMs(1), 60_014);
    // Well above a healthy page: 30 KB at 14 400 bit/s is about 17 s.
    assert.ok(pageCeilingMs(30_000) > ((30_000 * 8) / 14_400) * 1000 * 10);
    assert.equal(pageCeilingMs(30_000, { ...L, pageExpansion: 1, lowestBitRate: 9600, pageMarginMs: 0 }), 25_000);
    assert.throws(() => pageCeilingMs(-1), RangeError);
  });

  it("needs the ring timeout while ringing and the page size in phase C", () => {
    assert.throws(() => phaseLimitMs({ phase: "ringing" }), /ringTimeoutMs/);
    assert.throws(() => phaseLimitMs({ phase: "phase_c" }), /pageEncodedBytes/);
  });

  it("answers with the deadline before it, and an expiry with the raw cause after it", () => {
    const state: WatchdogState = { phase: "phase_b", phaseStartedAt: 10_000 };
    assert.equal(watchdogDeadline(state), 130_000);
    assert.deepEqual(checkWatchdog(state, 129_999), { expired: false, deadline: 130_000, remainingMs: 1 });
    const v = checkWatchdog(state, 131_500);
    assert.ok(v.expired);
    assert.equal(v.phase, "phase_b");
    assert.equal(v.limitMs, 120_000);
    assert.equal(v.overByMs, 1_500);
    assert.equal(v.rawCause, "Watchdog: negotiation (T.30 phase B) took longer than 120 s; the fax engine had not ended the call, so Faxline did");
  });

  it("names the page in phase C and D", () => {
    const v = checkWatchdog({ phase: "phase_c", phaseStartedAt: 0, pageEncodedBytes: 3_000, pageNo: 3 }, 200_000);
    assert.ok(v.expired);
    assert.match(v.rawCause, /page transfer \(T\.30 phase C\), page 3 took longer than 100 s/);
  });

  it("ends a call that hangs the way SpanDSP's audio T.30 did on noise at −40 dBm0", () => {
    // 2.2·10⁹ samples in 300 s wall time, neither side timing out, stuck in phase B.
    const stuckSamples = 2.2e9;
    const enteredPhaseB = samplesToMs(8000 * 7);
    const state: WatchdogState = { phase: "phase_b", phaseStartedAt: enteredPhaseB };
    const verdict = checkWatchdog(state, samplesToMs(stuckSamples));
    assert.ok(verdict.expired);
    // The line gives up long before: at the deadline, 127 s of virtual time into the call.
    assert.equal(watchdogDeadline(state), 127_000);
    const outcome = outcomeOfCall({ kind: "watchdog", phase: verdict.phase, progress: { disReceived: true, pagesConfirmed: 0 }, rawCause: verdict.rawCause }, { pagesTotal: 1, transport: "g711" });
    assert.equal(outcome.reasonCode, "fax_negotiation_failed");
    assert.equal(outcome.advancesLadder, true);
  });

  it("bounds a whole call, and a call that cycles within every phase limit", () => {
    const pages = [30_000, 20_000];
    const ceiling = callCeilingMs(pages, 55_000);
    const expected = 40_000 + 55_000 + 10_000 + 75_000 + 120_000 + (460_000 + 90_000) + (326_667 + 90_000) + 15_000 + 60_000;
    assert.equal(ceiling, expected);
    const state: WatchdogState = { phase: "phase_d", phaseStartedAt: 1_000_000, pageNo: 2, callDeadlineAt: 1_050_000 };
    assert.equal(watchdogDeadline(state), 1_050_000);
    assert.equal(checkWatchdog(state, 1_049_000).expired, false);
    const v = checkWatchdog(state, 1_050_000);
    assert.ok(v.expired);
    assert.equal(v.phase, "call");
    assert.equal(v.overByMs, 0);
    assert.match(v.rawCause, /whole-call limit during waiting for the page confirmation \(T\.30 phase D\), page 2/);
    // The phase limit still wins when it comes first.
    const early = checkWatchdog({ ...state, callDeadlineAt: 10_000_000 }, 1_090_000);
    assert.ok(early.expired && early.phase === "phase_d");
  });

  it("counts virtual time in engine samples at 8 kHz", () => {
    assert.equal(samplesToMs(8000), 1000);
    assert.equal(samplesToMs(160), 20);
  });
});

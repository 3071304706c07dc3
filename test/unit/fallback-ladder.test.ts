/**
 * The fallback ladder: the rungs per trunk, where the next call starts from the capability
 * cache, and how an attempt changes the cache (only protocol-class failures move it down).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  chooseFaxMode,
  FALLBACK_LADDER,
  ladderFor,
  updateCapability,
  type AttemptModeReport,
  type DestinationCapability,
  type FaxMode,
} from "../../src/line/outcomes/fallback-ladder.ts";
import { outcomeOfCall, type CallEnd } from "../../src/line/outcomes/call-outcomes.ts";
import { bitRateCap } from "../../src/line/fax-engine/engine.ts";

const E164 = "+4930123456";
const DAY = 86_400_000;
const MAX_AGE = 30 * DAY;
const T0 = 1_700_000_000_000;
const BOTH = { t38: true, ecm: true };

const T38_ECM: FaxMode = { transport: "t38", ecm: true, maxBitRate: 14_400 };
const G711_ECM: FaxMode = { transport: "g711", ecm: true, maxBitRate: 14_400 };
const T38_9600: FaxMode = { transport: "t38", ecm: false, maxBitRate: 9_600 };
const G711_9600: FaxMode = { transport: "g711", ecm: false, maxBitRate: 9_600 };

const label = (m: FaxMode) => `${m.transport}/${m.ecm ? "ecm" : "no-ecm"}/${m.maxBitRate}`;

describe("fallback ladder: rungs", () => {
  it("walks T.38+ECM → G.711+ECM → T.38 no ECM 9600 → G.711 no ECM 9600", () => {
    assert.deepEqual(FALLBACK_LADDER, [T38_ECM, G711_ECM, T38_9600, G711_9600]);
    assert.deepEqual(ladderFor(BOTH), [T38_ECM, G711_ECM, T38_9600, G711_9600]);
  });

  const cases: [{ t38: boolean; ecm: boolean }, string[]][] = [
    [{ t38: false, ecm: true }, ["g711/ecm/14400", "g711/no-ecm/9600"]],
    [{ t38: true, ecm: false }, ["t38/no-ecm/14400", "g711/no-ecm/14400", "t38/no-ecm/9600", "g711/no-ecm/9600"]],
    [{ t38: false, ecm: false }, ["g711/no-ecm/14400", "g711/no-ecm/9600"]],
  ];
  for (const [trunk, expected] of cases) {
    it(`maps the rungs onto a trunk with ${JSON.stringify(trunk)}`, () => {
      assert.deepEqual(ladderFor(trunk).map(label), expected);
    });
  }
});

function report(mode: FaxMode, outcome: "delivered" | "protocol" | "busy" | "no_answer" | "t38_refused_fallback", extra: Partial<AttemptModeReport> = {}): AttemptModeReport {
  switch (outcome) {
    case "delivered":
      return { mode, delivered: true, advancesLadder: false, t38Refused: false, bitRate: mode.maxBitRate, ...extra };
    case "protocol":
      return { mode, delivered: false, advancesLadder: true, t38Refused: false, reasonCode: "fax_negotiation_failed", ...extra };
    case "busy":
    case "no_answer":
      return { mode, delivered: false, advancesLadder: false, t38Refused: false, reasonCode: outcome === "busy" ? "line_busy" : "no_answer", ...extra };
    case "t38_refused_fallback":
      return { mode, delivered: false, advancesLadder: false, t38Refused: true, ...extra };
  }
}

describe("fallback ladder: choosing the mode", () => {
  it("starts at the top without a cache entry", () => {
    assert.deepEqual(chooseFaxMode(BOTH, null, T0, MAX_AGE), { mode: T38_ECM, rung: 0, basis: "default" });
    assert.deepEqual(chooseFaxMode({ t38: false, ecm: true }, null, T0, MAX_AGE).mode, G711_ECM);
  });

  it("walks down one rung per protocol-class failure, and stays at the bottom", () => {
    let record: DestinationCapability | null = null;
    const walked: string[] = [];
    for (let i = 0; i < 6; i++) {
      const now = T0 + i * 60_000;
      const choice = chooseFaxMode(BOTH, record, now, MAX_AGE);
      walked.push(label(choice.mode));
      record = updateCapability(E164, record, report(choice.mode, "protocol"), now) ?? record;
    }
    assert.deepEqual(walked, ["t38/ecm/14400", "g711/ecm/14400", "t38/no-ecm/9600", "g711/no-ecm/9600", "g711/no-ecm/9600", "g711/no-ecm/9600"]);
    assert.equal(record!.failuresInRow, 6);
    assert.equal(chooseFaxMode(BOTH, record, T0 + 10 * 60_000, MAX_AGE).basis, "after_failure");
  });

  it("does not move on busy or no answer", () => {
    let record: DestinationCapability | null = null;
    const walked: string[] = [];
    const script = ["busy", "no_answer", "protocol", "busy", "busy", "no_answer", "protocol", "busy"] as const;
    script.forEach((outcome, i) => {
      const now = T0 + i * 60_000;
      const choice = chooseFaxMode(BOTH, record, now, MAX_AGE);
      walked.push(label(choice.mode));
      record = updateCapability(E164, record, report(choice.mode, outcome), now) ?? record;
    });
    assert.deepEqual(walked, [
      "t38/ecm/14400", "t38/ecm/14400", "t38/ecm/14400",
      "g711/ecm/14400", "g711/ecm/14400", "g711/ecm/14400", "g711/ecm/14400",
      "t38/no-ecm/9600",
    ]);
  });

  it("starts at what worked last, and steps down from it after a failure", () => {
    const worked = updateCapability(E164, null, report(T38_9600, "delivered", { bitRate: 7_200 }), T0)!;
    assert.deepEqual(worked.worked, T38_9600);
    assert.equal(worked.workedBitRate, 7_200);
    assert.deepEqual(chooseFaxMode(BOTH, worked, T0 + DAY, MAX_AGE), { mode: T38_9600, rung: 2, basis: "worked" });
    const failed = updateCapability(E164, worked, report(T38_9600, "protocol"), T0 + DAY)!;
    assert.deepEqual(chooseFaxMode(BOTH, failed, T0 + DAY + 1, MAX_AGE), { mode: G711_9600, rung: 3, basis: "after_failure" });
    // A success clears the failure, and the next call starts where that success was.
    const again = updateCapability(E164, failed, report(G711_9600, "delivered"), T0 + 2 * DAY)!;
    assert.equal(again.failed, null);
    assert.equal(again.failuresInRow, 0);
    assert.deepEqual(chooseFaxMode(BOTH, again, T0 + 2 * DAY + 1, MAX_AGE).mode, G711_9600);
  });

  it("forgets what it learnt after lines.capabilityMaxAge", () => {
    const failed = updateCapability(E164, null, report(T38_ECM, "protocol"), T0)!;
    assert.equal(chooseFaxMode(BOTH, failed, T0 + MAX_AGE - 1, MAX_AGE).rung, 1);
    assert.deepEqual(chooseFaxMode(BOTH, failed, T0 + MAX_AGE, MAX_AGE), { mode: T38_ECM, rung: 0, basis: "default" });
    const worked = updateCapability(E164, null, report(G711_9600, "delivered"), T0)!;
    assert.equal(chooseFaxMode(BOTH, worked, T0 + MAX_AGE, MAX_AGE).rung, 0);
  });

  it("skips the T.38 rungs after T.38 was refused, until T.38 works again", () => {
    // The re-INVITE was refused, the call went on as G.711 with ECM and was delivered.
    const refused = updateCapability(E164, null, report(G711_ECM, "delivered", { t38Refused: true }), T0)!;
    assert.equal(refused.t38RefusedAt, T0);
    assert.deepEqual(chooseFaxMode(BOTH, refused, T0 + 1, MAX_AGE).mode, G711_ECM);
    // A protocol failure on G.711 with ECM: the next rung would be T.38 without ECM, which is skipped.
    const failed = updateCapability(E164, refused, report(G711_ECM, "protocol"), T0 + 2)!;
    assert.deepEqual(chooseFaxMode(BOTH, failed, T0 + 3, MAX_AGE).mode, G711_9600);
    // The refusal ages out.
    assert.deepEqual(chooseFaxMode(BOTH, refused, T0 + MAX_AGE, MAX_AGE).mode, T38_ECM);
    // T.38 refused on a call that then failed for another reason still records the refusal.
    const onlyRefusal = updateCapability(E164, null, report(T38_ECM, "t38_refused_fallback"), T0)!;
    assert.equal(onlyRefusal.t38RefusedAt, T0);
    assert.equal(onlyRefusal.failed, null);
    assert.deepEqual(chooseFaxMode(BOTH, onlyRefusal, T0 + 1, MAX_AGE).mode, G711_ECM);
    // T.38 delivered later clears the refusal.
    const t38ok = updateCapability(E164, onlyRefusal, report(T38_ECM, "delivered"), T0 + 5)!;
    assert.equal(t38ok.t38RefusedAt, null);
  });

  it("maps a remembered mode onto a trunk that changed", () => {
    const worked = updateCapability(E164, null, report(T38_ECM, "delivered"), T0)!;
    assert.deepEqual(chooseFaxMode({ t38: false, ecm: true }, worked, T0 + 1, MAX_AGE).mode, G711_ECM);
    assert.deepEqual(chooseFaxMode({ t38: true, ecm: false }, worked, T0 + 1, MAX_AGE).mode, { transport: "t38", ecm: false, maxBitRate: 14_400 });
    const failedNoEcm = updateCapability(E164, null, report({ transport: "g711", ecm: false, maxBitRate: 14_400 }, "protocol"), T0)!;
    // g711/no-ecm/14400 is not a rung of the full ladder: the first gentler one stands for it.
    assert.deepEqual(chooseFaxMode(BOTH, failedNoEcm, T0 + 1, MAX_AGE).rung, 3);
  });

  it("teaches nothing on busy or no answer: the cache entry stays as it is", () => {
    assert.equal(updateCapability(E164, null, report(T38_ECM, "busy"), T0), null);
    const worked = updateCapability(E164, null, report(T38_ECM, "delivered"), T0)!;
    assert.equal(updateCapability(E164, worked, report(T38_ECM, "no_answer"), T0 + 1), null);
  });

  it("moves on exactly the outcomes call-outcomes.ts flags", () => {
    const ctx = { pagesTotal: 2, transport: "t38" as const };
    const ends: [CallEnd, boolean][] = [
      [{ kind: "rejected", response: { status: 486 } }, false],
      [{ kind: "ring_timeout", ringSeconds: 55, response: { status: 487 } }, false],
      [{ kind: "rejected", response: { status: 503 } }, false],
      [{ kind: "rejected", response: { status: 404 } }, false],
      [{ kind: "t38_refused", response: { status: 488 } }, true],
      [{ kind: "fax_completed", completionCode: "T30_ERR_CANNOT_TRAIN", progress: { disReceived: true, pagesConfirmed: 0 } }, true],
      [{ kind: "fax_completed", completionCode: "T30_ERR_RETRYDCN", progress: { transferStarted: true, pagesConfirmed: 1 } }, true],
      [{ kind: "fax_completed", completionCode: "T30_ERR_RX_INCAPABLE", progress: { disReceived: true, pagesConfirmed: 0 } }, false],
      [{ kind: "fax_completed", completionCode: "T30_ERR_FILEERROR", progress: { pagesConfirmed: 0 } }, false],
    ];
    for (const [end, moves] of ends) {
      const o = outcomeOfCall(end, ctx);
      const next = updateCapability(E164, null, { mode: T38_ECM, delivered: false, advancesLadder: o.advancesLadder, t38Refused: end.kind === "t38_refused" }, T0);
      const choice = chooseFaxMode(BOTH, next, T0 + 1, MAX_AGE);
      assert.equal(choice.rung > 0, moves, JSON.stringify(end));
    }
  });
});

describe("the engine's bit rate cap for a rung", () => {
  it("every rung's maxBitRate is a cap the engine takes, and an SDP's T38MaxBitRate rounds down to one", () => {
    for (const mode of FALLBACK_LADDER) assert.equal(bitRateCap(mode.maxBitRate), mode.maxBitRate, label(mode));
    assert.equal(bitRateCap(Math.min(14_400, 12_000)), 9_600, "a far end that takes at most 12 000 gets V.29");
    assert.equal(bitRateCap(7_200), 4_800);
    assert.equal(bitRateCap(33_600), 14_400, "V.34 rates are not spoken: V.17 at most");
  });
});

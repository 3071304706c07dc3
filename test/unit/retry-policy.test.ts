import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { failureReason, type FailureReasonCode } from "../../src/errors/failure-reasons.ts";
import {
  decideAfterFailure,
  finalReasonText,
  type RetryDecision,
  type RetrySchedule,
  type RetryState,
} from "../../src/scheduler/retry-policy.ts";

const NOW = 1_000_000;
const FAR = Number.MAX_SAFE_INTEGER;

const SCHEDULE: RetrySchedule = {
  maxAttempts: 15,
  delaysMs: {
    busy: [100, 200, 300],
    no_answer: [1_000, 2_000],
    no_fax: [5_000],
    protocol: [60, 120],
    internal: [30, 60],
  },
};

function state(overrides: Partial<RetryState> = {}): RetryState {
  return { targetCount: 1, targetIndex: 0, deadTargets: [], attemptCount: 1, retriesUsed: {}, ...overrides };
}

function decide(s: RetryState, code: FailureReasonCode, now = NOW, schedule = SCHEDULE, validUntil = FAR): RetryDecision {
  return decideAfterFailure(s, failureReason(code), now, schedule, validUntil);
}

function retry(d: RetryDecision): Extract<RetryDecision, { kind: "retry" }> {
  if (d.kind !== "retry") assert.fail(`expected a retry, got final (${d.why})`);
  return d;
}

function final(d: RetryDecision): Extract<RetryDecision, { kind: "final" }> {
  if (d.kind !== "final") assert.fail(`expected a final decision, got a retry of target ${d.targetIndex} at ${d.runAt}`);
  return d;
}

/**
 * Replays the policy the way the engine does: the next attempt dials the decided target, and
 * `fails(targetIndex, attemptNo)` names its failure (or null: delivered). Returns every dialled
 * target with its start time and the final decision.
 */
function simulate(
  targetCount: number,
  fails: (target: number, attemptNo: number) => FailureReasonCode | null,
  schedule = SCHEDULE,
  validUntil = FAR,
): { dialled: { target: number; at: number }[]; end: RetryDecision | "delivered" } {
  let s = state({ targetCount, attemptCount: 0 });
  let now = NOW;
  const dialled: { target: number; at: number }[] = [];
  for (let guard = 0; guard < 100; guard++) {
    s = { ...s, attemptCount: s.attemptCount + 1 };
    dialled.push({ target: s.targetIndex, at: now });
    const code = fails(s.targetIndex, s.attemptCount);
    if (code === null) return { dialled, end: "delivered" };
    const d = decideAfterFailure(s, failureReason(code), now, schedule, validUntil);
    if (d.kind === "final") return { dialled, end: d };
    s = { ...s, targetIndex: d.targetIndex, deadTargets: d.deadTargets, retriesUsed: d.retriesUsed };
    now = d.runAt;
  }
  throw new Error("the policy never ended");
}

describe("retry policy: alternatives before the primary is retried", () => {
  it("dials the next alternative at once, without spending retry budget", () => {
    const d = retry(decide(state({ targetCount: 3 }), "line_busy"));
    assert.equal(d.targetIndex, 1);
    assert.equal(d.runAt, NOW);
    assert.deepEqual(d.retriesUsed, {});
    assert.deepEqual(d.deadTargets, []);
  });

  it("walks the round in order and only then waits, then restarts at the primary", () => {
    const second = retry(decide(state({ targetCount: 3, targetIndex: 1, attemptCount: 2 }), "no_answer"));
    assert.equal(second.targetIndex, 2);
    assert.equal(second.runAt, NOW);
    const wrap = retry(decide(state({ targetCount: 3, targetIndex: 2, attemptCount: 3 }), "no_answer"));
    assert.equal(wrap.targetIndex, 0, "a new round starts at the primary");
    assert.equal(wrap.runAt, NOW + 1_000, "after the no_answer wait");
    assert.deepEqual(wrap.retriesUsed, { no_answer: 1 });
  });

  it("charges the wait to the class of the failure that ended the round", () => {
    const d = retry(decide(state({ targetCount: 2, targetIndex: 1, attemptCount: 2, retriesUsed: { busy: 1 } }), "not_a_fax"));
    assert.equal(d.runAt, NOW + 5_000);
    assert.deepEqual(d.retriesUsed, { busy: 1, no_fax: 1 });
  });

  it("skips dead alternatives when looking for the next number of the round", () => {
    const d = retry(decide(state({ targetCount: 4, targetIndex: 0, deadTargets: [1, 2] }), "line_busy"));
    assert.equal(d.targetIndex, 3);
    assert.equal(d.runAt, NOW);
    assert.deepEqual(d.deadTargets, [1, 2]);
  });

  it("a full replay: P busy, A busy, wait, P busy, A delivered", () => {
    const run = simulate(2, (t, n) => (t === 1 && n === 4 ? null : "line_busy"));
    assert.equal(run.end, "delivered");
    assert.deepEqual(run.dialled, [
      { target: 0, at: NOW },
      { target: 1, at: NOW },
      { target: 0, at: NOW + 100 },
      { target: 1, at: NOW + 100 },
    ]);
  });
});

describe("retry policy: never-class failures", () => {
  it("an invalid number on a single-number recipient ends it for good", () => {
    const d = final(decide(state(), "invalid_number"));
    assert.equal(d.why, "no_live_number");
    assert.deepEqual(d.deadTargets, [0]);
  });

  it("an invalid primary is given up, the alternative is dialled at once", () => {
    const d = retry(decide(state({ targetCount: 2 }), "invalid_number"));
    assert.equal(d.targetIndex, 1);
    assert.equal(d.runAt, NOW);
    assert.deepEqual(d.deadTargets, [0]);
    assert.deepEqual(d.retriesUsed, {});
  });

  it("a blacklisted alternative wraps to the live primary at once, and the primary is never given up", () => {
    const d = retry(decide(state({ targetCount: 2, targetIndex: 1, attemptCount: 2 }), "number_blacklisted"));
    assert.equal(d.targetIndex, 0);
    assert.equal(d.runAt, NOW);
    assert.deepEqual(d.deadTargets, [1]);
    assert.deepEqual(d.retriesUsed, {});
  });

  it("a dead number is never dialled again", () => {
    // P invalid; A busy for ever: every later attempt goes to A only.
    const run = simulate(2, (t) => (t === 0 ? "invalid_number" : "line_busy"));
    assert.deepEqual(
      run.dialled.map((x) => x.target),
      [0, 1, 1, 1, 1],
    );
    const end = run.end as Extract<RetryDecision, { kind: "final" }>;
    assert.equal(end.why, "budget_spent");
    assert.deepEqual(end.deadTargets, [0]);
  });

  it("ends with no_live_number when the last live number dies, whatever budget is left", () => {
    const d = final(decide(state({ targetCount: 3, targetIndex: 2, deadTargets: [0, 1], attemptCount: 3 }), "invalid_number"));
    assert.equal(d.why, "no_live_number");
    assert.deepEqual(d.deadTargets, [0, 1, 2]);
  });

  it("keeps dead targets sorted and without duplicates", () => {
    const d = retry(decide(state({ targetCount: 4, targetIndex: 2, deadTargets: [3, 0] }), "number_blacklisted"));
    assert.deepEqual(d.deadTargets, [0, 2, 3]);
    assert.equal(d.targetIndex, 1, "wraps to the first live number");
  });
});

describe("retry policy: per-class budgets and delays", () => {
  const cases: { code: FailureReasonCode; delays: readonly number[] }[] = [
    { code: "line_busy", delays: SCHEDULE.delaysMs.busy },
    { code: "no_answer", delays: SCHEDULE.delaysMs.no_answer },
    { code: "not_a_fax", delays: SCHEDULE.delaysMs.no_fax },
    { code: "fax_timeout", delays: SCHEDULE.delaysMs.no_fax },
    { code: "fax_disconnected", delays: SCHEDULE.delaysMs.protocol },
    { code: "remote_disconnect", delays: SCHEDULE.delaysMs.protocol },
    { code: "partial_transmission", delays: SCHEDULE.delaysMs.protocol },
    { code: "call_failed", delays: SCHEDULE.delaysMs.internal },
    { code: "sender_lost", delays: SCHEDULE.delaysMs.internal },
  ];
  for (const { code, delays } of cases) {
    it(`${code}: waits ${delays.join(", ")} ms, then gives up after ${delays.length + 1} attempts`, () => {
      const run = simulate(1, () => code);
      const gaps = run.dialled.slice(1).map((x, i) => x.at - run.dialled[i]!.at);
      assert.deepEqual(gaps, [...delays]);
      assert.equal(run.dialled.length, delays.length + 1);
      assert.equal((run.end as Extract<RetryDecision, { kind: "final" }>).why, "budget_spent");
    });
  }

  it("budgets are separate per class: a spent busy budget does not stop a no-answer retry", () => {
    const d = retry(decide(state({ attemptCount: 5, retriesUsed: { busy: 3 } }), "no_answer"));
    assert.equal(d.runAt, NOW + 1_000);
    assert.deepEqual(d.retriesUsed, { busy: 3, no_answer: 1 });
    const spent = final(decide(state({ attemptCount: 5, retriesUsed: { busy: 3 } }), "line_busy"));
    assert.equal(spent.why, "budget_spent");
  });

  it("the n-th retry of a class waits the n-th delay of its schedule", () => {
    assert.equal(retry(decide(state({ retriesUsed: { busy: 0 } }), "line_busy")).runAt, NOW + 100);
    assert.equal(retry(decide(state({ retriesUsed: { busy: 1 } }), "line_busy")).runAt, NOW + 200);
    assert.equal(retry(decide(state({ retriesUsed: { busy: 2 } }), "line_busy")).runAt, NOW + 300);
  });

  it("an empty schedule means no retry at all", () => {
    const schedule: RetrySchedule = { ...SCHEDULE, delaysMs: { ...SCHEDULE.delaysMs, busy: [] } };
    assert.equal(final(decide(state(), "line_busy", NOW, schedule)).why, "budget_spent");
  });

  it("does not mutate the state it is given", () => {
    const s = state({ targetCount: 2, targetIndex: 1, deadTargets: [], retriesUsed: { busy: 1 } });
    const frozen = JSON.stringify(s);
    decide(s, "invalid_number");
    decide(s, "line_busy");
    assert.equal(JSON.stringify(s), frozen);
  });
});

describe("retry policy: attempt cap", () => {
  const capped: RetrySchedule = { ...SCHEDULE, maxAttempts: 3 };

  it("stops at maxAttempts even with budget left", () => {
    const d = final(decide(state({ attemptCount: 3 }), "line_busy", NOW, capped));
    assert.equal(d.why, "attempt_cap");
    assert.equal(retry(decide(state({ attemptCount: 2 }), "line_busy", NOW, capped)).runAt, NOW + 100);
  });

  it("stops at maxAttempts even when an untried alternative remains", () => {
    const d = final(decide(state({ targetCount: 3, targetIndex: 0, attemptCount: 3 }), "line_busy", NOW, capped));
    assert.equal(d.why, "attempt_cap");
  });

  it("counts attempts over all numbers of the recipient", () => {
    const run = simulate(2, () => "line_busy", capped);
    assert.equal(run.dialled.length, 3);
    assert.deepEqual(
      run.dialled.map((x) => x.target),
      [0, 1, 0],
    );
    assert.equal((run.end as Extract<RetryDecision, { kind: "final" }>).why, "attempt_cap");
  });
});

describe("retry policy: validity end", () => {
  it("a wait that would end at or after validUntil is final with validity_ends", () => {
    assert.equal(final(decide(state(), "line_busy", NOW, SCHEDULE, NOW + 100)).why, "validity_ends");
    assert.equal(final(decide(state(), "line_busy", NOW, SCHEDULE, NOW + 50)).why, "validity_ends");
    assert.equal(retry(decide(state(), "line_busy", NOW, SCHEDULE, NOW + 101)).runAt, NOW + 100);
  });

  it("an immediate retry is still allowed while the job is valid", () => {
    const d = retry(decide(state({ targetCount: 2 }), "line_busy", NOW, SCHEDULE, NOW + 1));
    assert.equal(d.targetIndex, 1);
    assert.equal(d.runAt, NOW);
  });

  it("an immediate retry after validUntil is final with validity_ends, not a retry that can never run", () => {
    // The claim skips jobs with valid_until <= now: a retry at `now` past the end would only
    // wait for the expiry sweep, which replaces the real cause with job_expired.
    const alt = final(decide(state({ targetCount: 2 }), "line_busy", NOW, SCHEDULE, NOW));
    assert.equal(alt.why, "validity_ends");
    const wrap = final(decide(state({ targetCount: 2, targetIndex: 1, attemptCount: 2 }), "invalid_number", NOW, SCHEDULE, NOW - 1));
    assert.equal(wrap.why, "validity_ends");
    assert.deepEqual(wrap.deadTargets, [1], "the dead number is still recorded");
  });
});

describe("finalReasonText", () => {
  const busy = failureReason("line_busy");
  it("names the real cause and the attempt count", () => {
    assert.equal(finalReasonText(busy, 4, "budget_spent"), "Destination number busy (4 attempts)");
    assert.equal(finalReasonText(busy, 1, "no_live_number"), "Destination number busy (1 attempt)");
    assert.equal(finalReasonText(busy, 0, "no_live_number"), "Destination number busy");
  });
  it("explains validity and cap endings", () => {
    assert.equal(finalReasonText(busy, 2, "validity_ends"), "Destination number busy (2 attempts; the job's validity ends before the next retry)");
    assert.equal(finalReasonText(busy, 15, "attempt_cap"), "Destination number busy (15 attempts; attempt limit reached)");
  });
});

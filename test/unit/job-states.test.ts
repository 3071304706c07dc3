import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { InternalError } from "../../src/errors/internal-error.ts";
import {
  FINAL_RECIPIENT_STATES,
  JOB_TRANSITIONS,
  JobState,
  RECIPIENT_TRANSITIONS,
  RecipientState,
  assertJobTransition,
  assertRecipientTransition,
} from "../../src/scheduler/job-states.ts";

const JOB_STATES = Object.values(JobState);
const RECIPIENT_STATES = Object.values(RecipientState);

/** The machines as documented in job-states.ts, written out independently. */
const JOB_ALLOWED = new Set([
  "pending>rendering",
  "pending>completed",
  "rendering>active",
  "rendering>pending",
  "rendering>completed",
  "active>completed",
]);
const RECIPIENT_ALLOWED = new Set([
  "waiting>ready",
  "waiting>failed",
  "ready>sending",
  "ready>failed",
  "sending>succeeded",
  "sending>ready",
  "sending>failed",
]);

function throwsInternal(fn: () => void, id: string, from: string, to: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof InternalError, "an InternalError");
    assert.equal(err.id, id);
    assert.match(err.message, new RegExp(`from ${from} to ${to}`));
    return true;
  });
}

describe("job state machine", () => {
  it("has exactly the four documented states", () => {
    assert.deepEqual([...JOB_STATES].sort(), ["active", "completed", "pending", "rendering"]);
    assert.deepEqual(Object.keys(JOB_TRANSITIONS).sort(), [...JOB_STATES].sort());
  });

  for (const from of JOB_STATES) {
    for (const to of JOB_STATES) {
      const key = `${from}>${to}`;
      if (JOB_ALLOWED.has(key)) {
        it(`allows ${from} -> ${to}`, () => {
          assert.doesNotThrow(() => assertJobTransition(from, to));
        });
      } else {
        it(`refuses ${from} -> ${to}`, () => {
          throwsInternal(() => assertJobTransition(from, to), "job-transition", from, to);
        });
      }
    }
  }

  it("completed is terminal", () => {
    assert.deepEqual(JOB_TRANSITIONS.completed, []);
  });

  it("refuses a state it does not know", () => {
    throwsInternal(() => assertJobTransition("archived" as JobState, "completed"), "job-transition", "archived", "completed");
    throwsInternal(() => assertJobTransition("pending", "archived" as JobState), "job-transition", "pending", "archived");
  });
});

describe("recipient state machine", () => {
  it("has exactly the five documented states, two of them final", () => {
    assert.deepEqual([...RECIPIENT_STATES].sort(), ["failed", "ready", "sending", "succeeded", "waiting"]);
    assert.deepEqual([...FINAL_RECIPIENT_STATES].sort(), ["failed", "succeeded"]);
  });

  for (const from of RECIPIENT_STATES) {
    for (const to of RECIPIENT_STATES) {
      const key = `${from}>${to}`;
      if (RECIPIENT_ALLOWED.has(key)) {
        it(`allows ${from} -> ${to}`, () => {
          assert.doesNotThrow(() => assertRecipientTransition(from, to));
        });
      } else {
        it(`refuses ${from} -> ${to}`, () => {
          throwsInternal(() => assertRecipientTransition(from, to), "recipient-transition", from, to);
        });
      }
    }
  }

  it("final states have no way out", () => {
    for (const s of FINAL_RECIPIENT_STATES) assert.deepEqual(RECIPIENT_TRANSITIONS[s], [], s);
  });

  it("every non-final state can reach failed (so every recipient can be ended)", () => {
    for (const s of RECIPIENT_STATES) {
      if (FINAL_RECIPIENT_STATES.includes(s)) continue;
      assert.doesNotThrow(() => assertRecipientTransition(s, "failed"), s);
    }
  });

  it("a recipient is never sent twice at once and never leaves a final state", () => {
    throwsInternal(() => assertRecipientTransition("sending", "sending"), "recipient-transition", "sending", "sending");
    throwsInternal(() => assertRecipientTransition("succeeded", "ready"), "recipient-transition", "succeeded", "ready");
    throwsInternal(() => assertRecipientTransition("failed", "ready"), "recipient-transition", "failed", "ready");
  });
});

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { nextStepAfter, parseRetryAfter, type DeliveryResult } from "../../src/notifications/delivery-policy.ts";
import { CONFIG_KEYS } from "../../src/config/schema.ts";
import { parseDurationMs } from "../../src/lib/durations.ts";

const plan = { schedule: [60_000, 120_000], jitterPercent: 20, maxRetryAfterMs: 3_600_000 };
const failed = (over: Partial<DeliveryResult> = {}): DeliveryResult => ({
  kind: "retry",
  statusCode: 503,
  error: "The receiver answered 503 Service Unavailable",
  responseExcerpt: null,
  retryAfterMs: null,
  ...over,
});

describe("notification delivery policy", () => {
  it("is done on delivery", () => {
    assert.deepEqual(nextStepAfter({ ...failed(), kind: "delivered", error: null }, 0, 1000, plan), { state: "delivered" });
  });

  it("waits the scheduled time, spread by the jitter either way", () => {
    assert.deepEqual(nextStepAfter(failed(), 0, 1000, plan, () => 0), { state: "pending", nextAttemptAt: 1000 + 48_000, scheduleStep: 1 });
    assert.deepEqual(nextStepAfter(failed(), 0, 1000, plan, () => 0.5), { state: "pending", nextAttemptAt: 1000 + 60_000, scheduleStep: 1 });
    const high = nextStepAfter(failed(), 1, 1000, plan, () => 0.999999);
    assert.equal(high.state, "pending");
    assert.ok(high.state === "pending" && high.nextAttemptAt <= 1000 + 144_000 && high.nextAttemptAt > 1000 + 143_000);
  });

  it("honours Retry-After beyond the schedule, up to the cap", () => {
    const step = nextStepAfter(failed({ statusCode: 429, retryAfterMs: 600_000 }), 0, 0, plan, () => 0.5);
    assert.deepEqual(step, { state: "pending", nextAttemptAt: 600_000, scheduleStep: 1 });
    const capped = nextStepAfter(failed({ statusCode: 429, retryAfterMs: 86_400_000 }), 0, 0, plan, () => 0.5);
    assert.deepEqual(capped, { state: "pending", nextAttemptAt: 3_600_000, scheduleStep: 1 });
    const shorter = nextStepAfter(failed({ statusCode: 429, retryAfterMs: 1000 }), 0, 0, plan, () => 0.5);
    assert.deepEqual(shorter, { state: "pending", nextAttemptAt: 60_000, scheduleStep: 1 }, "a short Retry-After does not speed up the schedule");
  });

  it("gives up after the last scheduled wait, and at once on a permanent failure", () => {
    const last = nextStepAfter(failed(), 2, 0, plan);
    assert.equal(last.state, "failed");
    assert.match(last.state === "failed" ? last.why : "", /gave up after 3 tries.*503/);
    assert.deepEqual(nextStepAfter(failed({ kind: "permanent", error: "gone" }), 0, 0, plan), { state: "failed", why: "gone" });
  });

  it("parses Retry-After as seconds or an HTTP date", () => {
    assert.equal(parseRetryAfter("120", 0), 120_000);
    assert.equal(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", Date.parse("Wed, 21 Oct 2015 07:27:00 GMT")), 60_000);
    assert.equal(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", Date.parse("2016-01-01")), 0);
    assert.equal(parseRetryAfter("soon", 0), null);
    assert.equal(parseRetryAfter(undefined, 0), null);
  });

  it("retries pushes for about three days by default", () => {
    const spec = CONFIG_KEYS.find((k) => k.path === "push.retrySchedule")!;
    const total = (spec.default as string[]).reduce((sum, d) => sum + parseDurationMs(d)!, 0);
    const days = total / 86_400_000;
    assert.ok(days > 2.5 && days < 3.5, `${days} days`);
  });
});

describe("notification states", () => {
  it("allow only the documented moves", async () => {
    const { assertNotificationTransition, NOTIFICATION_TRANSITIONS } = await import("../../src/notifications/notification-states.ts");
    assert.deepEqual(NOTIFICATION_TRANSITIONS, {
      pending: ["delivering"],
      delivering: ["delivered", "pending", "failed"],
      delivered: ["pending"],
      failed: ["pending"],
    });
    assert.doesNotThrow(() => assertNotificationTransition("failed", "pending"));
    assert.throws(() => assertNotificationTransition("pending", "delivered"), /cannot move from pending to delivered/);
  });
});

/**
 * The SIP line's bounds per source address (src/line/sip/flood-limits.ts) on a manual clock:
 * token buckets for requests and new INVITEs, the refusal budget of sources that are no
 * trunk's, the lockout after repeated wrong digest answers, and the bounded memory.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SourceLimiter } from "../../src/line/sip/flood-limits.ts";

describe("SIP flood limits per source", () => {
  it("lets a burst through, then the sustained rate, per address", () => {
    let now = 0;
    const limiter = new SourceLimiter({ requestsPerSecond: 10, requestBurst: 5 }, () => now);
    const taken = () => Array.from({ length: 8 }, () => limiter.admitRequest("192.0.2.1")).filter(Boolean).length;
    assert.equal(taken(), 5, "the burst");
    assert.equal(limiter.admitRequest("192.0.2.2"), true, "another address has its own bucket");
    now += 300;
    assert.equal(taken(), 3, "10 per second: 3 in 300 ms");
    now += 60_000;
    assert.equal(taken(), 5, "never more than the burst");
  });

  it("bounds new INVITEs apart from other requests", () => {
    let now = 0;
    const limiter = new SourceLimiter({ invitesPerSecond: 1, inviteBurst: 2 }, () => now);
    assert.deepEqual([1, 2, 3].map(() => limiter.admitNewInvite("192.0.2.1")), [true, true, false]);
    assert.equal(limiter.admitRequest("192.0.2.1"), true);
    now += 1000;
    assert.equal(limiter.admitNewInvite("192.0.2.1"), true);
  });

  it("gives a source that is no trunk's a small budget of refusals a minute", () => {
    let now = 0;
    const limiter = new SourceLimiter({ refusalsPerMinute: 2 }, () => now);
    assert.deepEqual([1, 2, 3].map(() => limiter.admitRefusal("198.51.100.7")), [true, true, false]);
    now += 30_000;
    assert.equal(limiter.admitRefusal("198.51.100.7"), true, "one more after half a minute");
  });

  it("locks a source out after repeated wrong answers within the window, for the lockout's time", () => {
    let now = 0;
    const limiter = new SourceLimiter({ lockoutFailures: 3, lockoutWindowMs: 60_000, lockoutMs: 120_000 }, () => now);
    assert.equal(limiter.recordAuthFailure("203.0.113.9"), false);
    now += 70_000;
    assert.equal(limiter.recordAuthFailure("203.0.113.9"), false, "the first has left the window");
    assert.equal(limiter.recordAuthFailure("203.0.113.9"), false);
    limiter.recordAuthSuccess("203.0.113.9");
    assert.equal(limiter.recordAuthFailure("203.0.113.9"), false, "a right answer starts the count again");
    assert.equal(limiter.recordAuthFailure("203.0.113.9"), false);
    assert.equal(limiter.recordAuthFailure("203.0.113.9"), true, "locked out");
    assert.equal(limiter.isLockedOut("203.0.113.9"), true);
    assert.equal(limiter.isLockedOut("203.0.113.10"), false);
    now += 120_001;
    assert.equal(limiter.isLockedOut("203.0.113.9"), false, "the lockout ends");
  });

  it("tracks at most maxSources addresses, forgetting idle ones first", () => {
    let now = 0;
    const limiter = new SourceLimiter({ maxSources: 100, lockoutFailures: 1 }, () => now);
    assert.equal(limiter.recordAuthFailure("203.0.113.1"), true, "a lockout to remember");
    for (let i = 0; i < 1000; i++) limiter.admitRequest(`10.0.${i >> 8}.${i & 255}`);
    assert.ok(limiter.trackedSources <= 100, `${limiter.trackedSources} tracked`);
    now += 1000;
    assert.equal(limiter.isLockedOut("203.0.113.1"), true, "the locked-out source is not forgotten before idle ones");
  });
});

/**
 * The live charts' ring buffer (metrics/metrics-history.ts) on a clock advanced by hand: it
 * keeps chartWindow / chartInterval samples, oldest first; a sample puts this node's own call
 * count over its heartbeat's; a store that does not answer leaves that sample's region part
 * null; renders and ended calls land in the interval they happened in.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ManualClock } from "../../src/lib/clock.ts";
import { MetricsHistory, type RegionReading } from "../../src/metrics/metrics-history.ts";
import { NodeMetrics } from "../../src/metrics/node-metrics.ts";

const WORK = { toRender: 1, due: 2, later: 3, inCall: 4, notifications: 5 };

describe("metrics history", () => {
  function setup(read: () => Promise<RegionReading>) {
    const clock = new ManualClock(Date.UTC(2026, 10, 29, 12));
    const metrics = new NodeMetrics({ labels: { datacenter: "DE1", node: "n1" } });
    let calls = 0;
    const history = new MetricsHistory({
      clock,
      nodeId: "n1",
      intervalMs: 5000,
      windowMs: 20_000,
      readRegion: read,
      own: () => ({ calls, receptions: 1 }),
      takeInterval: () => metrics.takeInterval(),
    });
    return { clock, metrics, history, setCalls: (n: number) => (calls = n) };
  }

  it("keeps the window's samples, oldest first, and hands out those after a time", async () => {
    const { clock, history } = setup(async () => ({ calls: { n2: 3 }, queues: { DE1: WORK } }));
    const times: number[] = [];
    for (let i = 0; i < 6; i++) {
      times.push((await history.sample()).t);
      await clock.advance(5000);
    }
    assert.deepEqual(history.samples().map((s) => s.t), times.slice(2), "four samples fill 20 s at 5 s");
    assert.deepEqual(history.samples(times[3]).map((s) => s.t), times.slice(4));
    assert.deepEqual(history.samples(times[5]), []);
  });

  it("puts the node's own calls over its heartbeat's, and leaves a gap when the store does not answer", async () => {
    let fail = false;
    const { history, setCalls } = setup(async () => {
      if (fail) throw new Error("connection refused");
      return { calls: { n1: 0, n2: 3 }, queues: { DE1: WORK } };
    });
    setCalls(2);
    const ok = await history.sample();
    assert.deepEqual(ok.calls, { n1: 2, n2: 3 }, "n1's own count, newer than its last heartbeat");
    assert.deepEqual(ok.queues, { DE1: WORK });
    assert.equal(ok.receptions, 1);
    fail = true;
    const gap = await history.sample();
    assert.equal(gap.calls, null);
    assert.equal(gap.queues, null);
    assert.equal(gap.receptions, 1, "what the node knows itself is still there");
  });

  it("counts renders and ended calls in the interval they happened in", async () => {
    const { metrics, history } = setup(async () => ({ calls: {}, queues: {} }));
    metrics.rendered("rendered", 0.5, 2);
    metrics.rendered("failed", 1.5, 0);
    metrics.callStarted("test");
    metrics.callStarted("test");
    metrics.callEnded("test", "delivered", "");
    metrics.callEnded("test", "failed", "busy");
    const s = await history.sample();
    assert.equal(s.renders, 2);
    assert.equal(s.renderMeanSeconds, 1);
    assert.equal(s.renderMaxSeconds, 1.5);
    assert.equal(s.callsDelivered, 1);
    assert.equal(s.callsFailed, 1);
    const next = await history.sample();
    assert.deepEqual([next.renders, next.renderMeanSeconds, next.renderMaxSeconds, next.callsDelivered, next.callsFailed], [0, null, null, 0, 0]);
  });
});

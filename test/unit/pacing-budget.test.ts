/** The start-up check of how many calls a node's configuration allows against what it paces. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { pacingBudget, pacingWarning } from "../../src/line/sip-fax-line/pacing-budget.ts";
import { testTrunk } from "../support/sip-trunk.ts";
import { mediaProcessesFor } from "../../src/line/media-host/media-host.ts";
import { mediaProcessCount } from "../../src/roles/start-node.ts";
import { loadConfig } from "../../src/config/load.ts";

describe("pacing budget", () => {
  it("counts the smaller of the channels and the trunks' maxCalls, each way", () => {
    const trunks = [testTrunk(5060, { name: "a", maxCalls: 40 }), testTrunk(5060, { name: "b", maxCalls: 30, inbound: true })];
    assert.deepEqual(pacingBudget({ trunks, senderChannels: 50, inboundChannels: 100, capacity: 100 }), { outgoing: 50, incoming: 30, capacity: 100 });
    assert.deepEqual(pacingBudget({ trunks, senderChannels: 200, inboundChannels: 10, capacity: 100 }), { outgoing: 70, incoming: 10, capacity: 100 });
  });

  it("warns, naming the figures and the keys, only when the total exceeds the capacity", () => {
    assert.equal(pacingWarning({ outgoing: 70, incoming: 30, capacity: 100 }), null);
    const warning = pacingWarning({ outgoing: 70, incoming: 31, capacity: 100 });
    assert.match(warning ?? "", /may run 101 fax calls at once \(70 outgoing.*31 incoming.*paces about 100 \(lines\.pacingCapacity/);
  });

  it("sizes the media processes: one per 75 calls the node may run, at most the cores but one, 1 to 8, unless lines.mediaProcesses says", () => {
    assert.deepEqual([1, 75, 76, 150, 151, 600, 601, 5000].map((calls) => mediaProcessesFor(calls, 16)), [1, 1, 2, 2, 3, 8, 8, 8]);
    assert.deepEqual([1, 75, 76, 151, 500, 5000].map((calls) => mediaProcessesFor(calls, 4)), [1, 1, 2, 3, 3, 3], "4 cores: up to 3");
    assert.deepEqual([1, 500, 5000].map((calls) => mediaProcessesFor(calls, 2)), [1, 1, 1], "2 cores: one, however many calls");
    assert.deepEqual([1, 500].map((calls) => mediaProcessesFor(calls, 1)), [1, 1], "1 core: one");
    const config = (overrides: Record<string, unknown>) => loadConfig({ env: {}, overrides: { "store.dataDir": "/tmp/unused", ...overrides } });
    const trunks = [testTrunk(5060, { name: "a", maxCalls: 200 }), testTrunk(5060, { name: "b", maxCalls: 100, inbound: true })];
    const big = { ...config({ "sender.channels": 200, "inbound.channels": 100 }), lines: { ...config({}).lines, trunks } };
    assert.equal(mediaProcessCount(big, 8), 4, "300 calls at once on 8 cores: 4 processes");
    assert.equal(mediaProcessCount(big, 2), 1, "on 2 cores: 1");
    assert.equal(mediaProcessCount({ ...big, lines: { ...big.lines, mediaProcesses: 2 } }, 2), 2, "as configured, whatever the cores");
  });
});

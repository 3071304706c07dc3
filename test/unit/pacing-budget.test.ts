/** The start-up check of how many calls a node's configuration allows against what it paces. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { pacingBudget, pacingWarning } from "../../src/line/sip-fax-line/pacing-budget.ts";
import { testTrunk } from "../support/sip-trunk.ts";

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
});

/**
 * runT38Session's hand-over of received IFPs off the event loop (receiveIfpAsync), with a scripted
 * session standing in for the engine (the real one is driven in test/interop/spandsp-engine.test.ts
 * and every SIP fax test): an exception while handling an answer that came back from the thread
 * pool ends the run with it, as on the loop; the engine gets no other call while one is in flight,
 * and the run settles only after it; with a pacer the IFPs stay on the loop; an IFP that finds
 * the process's offload slots taken is handled on the loop, and every slot comes back.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { T38Session, T38Step } from "../../src/line/fax-engine/engine.ts";
import { OffloadSlots, runT38Session, type IfpTransport } from "../../src/line/fax-engine/run-t38-session.ts";

const STATS = { pagesTx: 0, pagesRx: 0, pagesInFile: 0, bitRate: 0, ecm: false, ecmRetries: 0, encoding: "none", width: 0, length: 0, xDpi: 0, yDpi: 0, imageBytes: 0, badRows: 0, longestBadRowRun: 0, currentStatus: 0, remoteIdent: "", localIdent: "", samples: 0 } as never;

/** A scripted session: answers each received IFP with one packet after `delayMs` off the caller's stack; fails loudly if called while busy. */
function scriptedSession(delayMs: number, log: string[]): T38Session {
  let samples = 0;
  let busy = false;
  const step = (packets: T38Step["packets"]): T38Step => ({ packets, events: [], finished: false, samples });
  const guard = (what: string): void => {
    log.push(what);
    if (busy) throw new Error(`${what} while busy`);
  };
  return {
    advance(n) {
      guard("advance");
      samples += n;
      return step([]);
    },
    receiveIfp() {
      guard("receiveIfp");
      return step([{ ifp: Uint8Array.of(1), count: 1 }]);
    },
    async receiveIfpAsync() {
      guard("receiveIfpAsync");
      busy = true;
      await new Promise((r) => setTimeout(r, delayMs));
      busy = false;
      return step([{ ifp: Uint8Array.of(2), count: 1 }]);
    },
    statistics() {
      guard("statistics");
      return STATS;
    },
    close() {},
  };
}

function transport(onSend: (ifp: Uint8Array) => void): IfpTransport & { deliver(ifp: Uint8Array): void } {
  let handler: (r: { seq: number; ifp: Uint8Array }) => void = () => {};
  let seq = 0;
  return {
    sendIfp: (ifp) => onSend(ifp),
    onIfp: (h) => (handler = h),
    deliver: (ifp) => handler({ seq: seq++, ifp }),
  };
}

describe("runT38Session with received IFPs off the loop", () => {
  it("an exception while handling an answer from the pool ends the run with it", async () => {
    const log: string[] = [];
    const network = transport((ifp) => {
      if (ifp[0] === 2) throw new Error("the socket is gone");
    });
    const run = runT38Session(scriptedSession(5, log), network, { speed: 1, maxSeconds: 5 });
    network.deliver(Uint8Array.of(9));
    await assert.rejects(run, /the socket is gone/);
    assert.ok(log.includes("receiveIfpAsync"));
  });

  it("no engine call while an IFP is in flight; IFPs in order; the run settles after the last one", async () => {
    const log: string[] = [];
    const sent: number[] = [];
    const network = transport((ifp) => sent.push(ifp[0]!));
    const controller = new AbortController();
    const started = performance.now();
    const run = runT38Session(scriptedSession(30, log), network, { speed: 1, maxSeconds: 5, signal: controller.signal });
    network.deliver(Uint8Array.of(7));
    network.deliver(Uint8Array.of(8));
    network.deliver(Uint8Array.of(9));
    // The first answer is in by 30 ms, the second is in flight at 40 ms when the run is stopped.
    await new Promise((r) => setTimeout(r, 40));
    controller.abort(new Error("stopped"));
    await assert.rejects(run, /stopped/);
    assert.ok(performance.now() - started >= 55, "the run settled only after the IFP in flight was done");
    // The guard throws (and the run would reject with "… while busy") if anything touched the session meanwhile.
    assert.deepEqual(log.filter((l) => l !== "advance"), ["receiveIfpAsync", "receiveIfpAsync"], "one at a time; none after the stop");
    assert.deepEqual(sent, [2], "the answer that came after the stop is not sent");
  });

  it("an IFP that finds every offload slot taken is handled on the loop; the slots come back, also after an error", async () => {
    const slots = new OffloadSlots(1);
    const logA: string[] = [];
    const logB: string[] = [];
    const a = transport(() => {});
    const sentB: number[] = [];
    const b = transport((ifp) => sentB.push(ifp[0]!));
    const controller = new AbortController();
    const runA = runT38Session(scriptedSession(40, logA), a, { speed: 1, maxSeconds: 5, signal: controller.signal, offloadSlots: slots });
    const runB = runT38Session(scriptedSession(40, logB), b, { speed: 1, maxSeconds: 5, signal: controller.signal, offloadSlots: slots });
    a.deliver(Uint8Array.of(1));
    assert.equal(slots.inUse, 1, "A's IFP took the one slot");
    b.deliver(Uint8Array.of(1));
    assert.deepEqual(logB.filter((l) => l !== "advance"), ["receiveIfp"], "B's IFP went to the engine on the loop");
    assert.deepEqual(sentB, [1], "and its answer went out at once");
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(slots.inUse, 0, "A's slot came back");
    b.deliver(Uint8Array.of(2));
    assert.equal(slots.inUse, 1, "now B's IFP goes off the loop");
    controller.abort(new Error("stopped"));
    await assert.rejects(runA, /stopped/);
    await assert.rejects(runB, /stopped/);
    assert.equal(slots.inUse, 0, "B's slot came back when its IFP ended after the stop");

    // A session whose async hand-over fails (synchronously or not) gives its slot back.
    for (const how of ["throws", "rejects"] as const) {
      const failing = scriptedSession(5, []);
      failing.receiveIfpAsync = how === "throws" ? () => { throw new Error("the addon refused"); } : async () => Promise.reject(new Error("the addon refused"));
      const network = transport(() => {});
      const run = runT38Session(failing, network, { speed: 1, maxSeconds: 5, offloadSlots: slots });
      network.deliver(Uint8Array.of(3));
      await assert.rejects(run, /the addon refused/);
      assert.equal(slots.inUse, 0, `the slot came back when the hand-over ${how}`);
    }
  });

  it("OffloadSlots refuses a bad limit and a release without a take", () => {
    assert.throws(() => new OffloadSlots(-1), RangeError);
    assert.throws(() => new OffloadSlots(1.5), RangeError);
    const slots = new OffloadSlots(0);
    assert.equal(slots.tryTake(), false, "no slot at 0: every IFP on the loop");
    assert.throws(() => slots.release(), /without a slot taken/);
  });

  it("with a pacer the IFPs stay on the loop", async () => {
    const log: string[] = [];
    const network = transport(() => {});
    let ticks = 0;
    const run = runT38Session(scriptedSession(5, log), network, {
      maxSeconds: 0.2,
      offloadReceive: true,
      pacer: async () => {
        if (++ticks === 2) network.deliver(Uint8Array.of(1));
      },
    });
    const result = await run;
    assert.equal(result.phaseE, null);
    assert.ok(log.includes("receiveIfp") && !log.includes("receiveIfpAsync"), log.join(","));
  });
});

/**
 * A session that answers the IFP [9] (a sender's post-page command) with a phase D event and the
 * packet [9] in the same step, and sends [7] on every tick after that: what a receiving SpanDSP
 * does with its MCF.
 */
function pageEndingSession(): T38Session {
  let samples = 0;
  let pageEnded = false;
  return {
    advance(n) {
      samples += n;
      return { packets: pageEnded ? [{ ifp: Uint8Array.of(7), count: 1 }] : [], events: [], finished: false, samples };
    },
    receiveIfp(ifp) {
      if (ifp[0] !== 9) return { packets: [], events: [], finished: false, samples };
      pageEnded = true;
      return { packets: [{ ifp: Uint8Array.of(9), count: 1 }], events: [{ type: "phaseD", atSample: samples, fcf: 0x4e, name: "MPS" }], finished: false, samples };
    },
    statistics: () => STATS,
    close() {},
  };
}

describe("runT38Session holding its answer after phase D (holdAfterPhaseD)", () => {
  it("sends nothing while the hold is pending, though its clock runs on; then everything held, in order", async () => {
    const sent: number[] = [];
    const network = transport((ifp) => sent.push(ifp[0]!));
    let release: () => void = () => {};
    let asked = 0;
    const run = runT38Session(pageEndingSession(), network, {
      speed: 50,
      maxSeconds: 2,
      offloadReceive: false,
      holdAfterPhaseD: (event) => {
        asked++;
        assert.equal(event.name, "MPS");
        return new Promise<void>((resolve) => (release = resolve));
      },
    });
    network.deliver(Uint8Array.of(9));
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(asked, 1);
    assert.deepEqual(sent, [], "nothing went out while the page was being kept");
    release();
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(sent[0], 9, "the answer to the page first");
    assert.ok(sent.length > 3 && sent.slice(1).every((b) => b === 7), `then the ticks' packets held meanwhile and those after: ${sent.join(",")}`);
    await run;
  });

  it("a hold that fails ends the run with its error, and the held answer is never sent", async () => {
    const sent: number[] = [];
    const network = transport((ifp) => sent.push(ifp[0]!));
    const run = runT38Session(pageEndingSession(), network, {
      speed: 50,
      maxSeconds: 2,
      offloadReceive: false,
      holdAfterPhaseD: () => new Promise<void>((_, reject) => setTimeout(() => reject(new Error("ENOSPC: no space left on device")), 20)),
    });
    network.deliver(Uint8Array.of(9));
    await assert.rejects(run, /ENOSPC/);
    assert.deepEqual(sent, []);
  });
});

/**
 * TickSlots (src/line/fax-engine/tick-slots.ts): the sessions of one event loop take their 20 ms
 * tick phases from it, so that calls starting in step do not tick in step; and the session runners'
 * `startAt`, which puts a session's engine clock in the phase it was given.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AudioSession, T38Session } from "../../src/line/fax-engine/engine.ts";
import { runAudioSession } from "../../src/line/fax-engine/run-audio-session.ts";
import { runT38Session } from "../../src/line/fax-engine/run-t38-session.ts";
import { TickSlots } from "../../src/line/fax-engine/tick-slots.ts";

const STATS = { pagesTx: 0, pagesRx: 0, pagesInFile: 0, bitRate: 0, ecm: false, ecmRetries: 0, encoding: "none", width: 0, length: 0, xDpi: 0, yDpi: 0, imageBytes: 0, badRows: 0, longestBadRowRun: 0, currentStatus: 0, remoteIdent: "", localIdent: "", samples: 0 } as never;

describe("TickSlots", () => {
  it("sessions starting in the same instant get every phase once before any phase twice", () => {
    const slots = new TickSlots();
    const taken = Array.from({ length: 500 }, () => slots.take(1000));
    assert.deepEqual(slots.usage(), Array(20).fill(25));
    for (const [k, t] of taken.entries()) {
      assert.ok(t.startAt >= 1000 && t.startAt < 1020, `start ${t.startAt} within one period`);
      // Phase of the clock start = the slot's millisecond.
      assert.ok(Math.abs((t.startAt % 20) - t.slot) < 1e-9, `call ${k}: slot ${t.slot}, starts at ${t.startAt}`);
    }
    // The first twenty took twenty different phases.
    assert.equal(new Set(taken.slice(0, 20).map((t) => t.slot)).size, 20);
  });

  it("starts spaced by a multiple of the period (calls 40 ms apart) still get different phases", () => {
    const slots = new TickSlots();
    const phases = Array.from({ length: 40 }, (_, i) => slots.take(5000.3 + i * 40).startAt % 20);
    assert.equal(new Set(phases.map((p) => Math.round(p))).size, 20);
  });

  it("a released phase is the next one taken; releasing twice gives it back once", () => {
    const slots = new TickSlots();
    const taken = Array.from({ length: 40 }, () => slots.take(0));
    taken[7]!.release();
    taken[7]!.release();
    const usage = slots.usage();
    assert.equal(usage.reduce((a, b) => a + b, 0), 39);
    const next = slots.take(123.25);
    assert.equal(next.slot, taken[7]!.slot);
    assert.deepEqual(slots.usage(), Array(20).fill(2));
  });

  it("the start is never before now, at a fractional now and a phase already passed", () => {
    const slots = new TickSlots(20, 20);
    for (const now of [0, 0.5, 19.99, 20, 123456.789, 7]) {
      const t = slots.take(now);
      assert.ok(t.startAt >= now && t.startAt < now + 20, `now ${now}: start ${t.startAt}`);
    }
    assert.throws(() => new TickSlots(0, 20), RangeError);
    assert.throws(() => new TickSlots(20, 0), RangeError);
  });
});

describe("the session runners' startAt", () => {
  it("a T.38 session's ticks run no earlier than startAt + 20 ms × their number", async () => {
    const calls: { at: number; samples: number }[] = [];
    let samples = 0;
    const session: T38Session = {
      advance(n) {
        samples += n;
        calls.push({ at: performance.now(), samples });
        return { packets: [], events: [], finished: false, samples };
      },
      receiveIfp: () => ({ packets: [], events: [], finished: false, samples }),
      statistics: () => STATS,
      close() {},
    };
    const startAt = performance.now() + 15;
    const result = await runT38Session(session, { sendIfp() {}, onIfp() {} }, { speed: 1, maxSeconds: 0.1, startAt });
    assert.equal(calls.length, 5);
    for (const call of calls) assert.ok(call.at >= startAt + call.samples / 8, `tick ending at sample ${call.samples} ran ${(startAt + call.samples / 8 - call.at).toFixed(2)} ms early`);
    assert.equal(result.engineSeconds, 0.1);
  });

  it("a G.711 session's frames run no earlier than startAt + 20 ms × their number", async () => {
    const calls: { at: number; samples: number }[] = [];
    let samples = 0;
    const session: AudioSession = {
      process(rx) {
        samples += typeof rx === "number" ? rx : rx.length;
        calls.push({ at: performance.now(), samples });
        return { audio: new Int16Array(160), events: [], finished: false, samples };
      },
      statistics: () => STATS,
      close() {},
    };
    const startAt = performance.now() + 9;
    await runAudioSession(session, { sendFrame() {}, onFrame() {} }, { speed: 1, maxSeconds: 0.06, startAt });
    assert.equal(calls.length, 3);
    for (const call of calls) assert.ok(call.at >= startAt + call.samples / 8, `frame ending at sample ${call.samples} ran ${(startAt + call.samples / 8 - call.at).toFixed(2)} ms early`);
  });
});

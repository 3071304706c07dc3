import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { failureReason } from "../../src/errors/failure-reasons.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import type { AttemptOutcome, CallRequest } from "../../src/line/line.ts";
import { TEST_LINE_BIT_RATE, TestLine, pageSeconds } from "../../src/line/test-line.ts";
import { TEST_NUMBERS, testNumberFor } from "../../src/line/test-numbers.ts";

function request(e164: string, pageBytes: number[], attemptNo = 1): CallRequest {
  return {
    jobId: "FJTEST",
    recipientId: "FRTEST",
    attemptNo,
    e164,
    dialString: `00${e164.slice(1)}`,
    csid: "Faxline",
    resolution: "HIGH",
    pages: pageBytes.map((encodedBytes) => ({ encodedBytes })),
  };
}

const flush = () => new Promise<void>((r) => setImmediate(r));

/** Places a call on a manual clock and returns its outcome and the simulated ms it took. */
async function place(req: CallRequest, timeScale = 1): Promise<{ outcome: AttemptOutcome; elapsedMs: number }> {
  // Start at 0: fractional milliseconds stay exact (an epoch start would round them).
  const clock = new ManualClock(0);
  const line = new TestLine({ clock, timeScale });
  const start = clock.now();
  let endedAt: number | null = null;
  const call = line.call(req, new AbortController().signal).then((o) => {
    endedAt = clock.now();
    return o;
  });
  await clock.advance(10 * 60 * 1000);
  await flush();
  assert.notEqual(endedAt, null, "the call ended within 10 simulated minutes");
  return { outcome: await call, elapsedMs: endedAt! - start };
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
/** The module's timing model, written out: 6 s set-up, 7 s phase B, pages, 1 s phase E. */
const deliveredSeconds = (bytes: number[]) => 6 + 7 + sum(bytes.map((b) => (b * 8) / 14_400 + 2.5)) + 1;

describe("TestLine: delivered calls", () => {
  it("pageSeconds is bytes x 8 / 14 400 plus 2.5 s", () => {
    assert.equal(TEST_LINE_BIT_RATE, 14_400);
    assert.equal(pageSeconds(0), 2.5);
    assert.equal(pageSeconds(14_400), 10.5);
    assert.equal(pageSeconds(1_800), 3.5);
  });

  for (const bytes of [[2_168], [30_000], [30_000, 2_168, 9_001], Array.from({ length: 12 }, (_, i) => 1_000 * (i + 1))]) {
    it(`a ${bytes.length}-page call to an unlisted number lasts 6+7+pages+1 s (${bytes.join(",")} bytes)`, async () => {
      const { outcome, elapsedMs } = await place(request("+4989000000000", bytes));
      const seconds = deliveredSeconds(bytes);
      assert.deepEqual(outcome, {
        result: "delivered",
        pagesSent: bytes.length,
        durationSecs: Math.round(seconds),
        remoteCsid: "+4989000000000",
        bitRate: 14_400,
        transport: "test",
      });
      assert.ok(Math.abs(elapsedMs - seconds * 1000) < 1e-6, `waited ${elapsedMs} ms, expected ${seconds * 1000}`);
    });
  }

  it("a typical one-page letter (~30 KB) takes about 33 s", async () => {
    const { outcome } = await place(request("+4900000020", [30_000]));
    assert.equal(outcome.durationSecs, 33);
  });

  it("does not finish one simulated millisecond early", async () => {
    const clock = new ManualClock();
    const line = new TestLine({ clock, timeScale: 1 });
    let done = false;
    const call = line.call(request("+4989000000000", [14_400]), new AbortController().signal).then((o) => {
      done = true;
      return o;
    });
    const totalMs = deliveredSeconds([14_400]) * 1000; // 24 500 ms
    await clock.advance(totalMs - 1);
    await flush();
    assert.equal(done, false);
    await clock.advance(1);
    await flush();
    assert.equal(done, true);
    assert.equal((await call).durationSecs, 25);
  });

  it("timeScale shrinks the wait but not the reported duration", async () => {
    const bytes = [30_000, 30_000];
    const { outcome, elapsedMs } = await place(request("+4989000000000", bytes), 0.001);
    assert.ok(Math.abs(elapsedMs - deliveredSeconds(bytes)) < 1e-6, `waited ${elapsedMs} ms`);
    assert.equal(outcome.durationSecs, Math.round(deliveredSeconds(bytes)));
  });
});

describe("TestLine: failing scripts", () => {
  it("busy: fails after 4 s, not answered, no duration, the raw SIP cause", async () => {
    const { outcome, elapsedMs } = await place(request("+4900000001", [30_000]));
    assert.equal(elapsedMs, 4_000);
    assert.deepEqual(outcome, {
      result: "failed",
      reasonCode: "line_busy",
      pagesSent: 0,
      durationSecs: 0,
      remoteCsid: null,
      rawCause: "SIP 486 Busy Here (Q.850 cause 17 user busy)",
    });
  });

  const answered: [string, string, number][] = [
    ["+4900000002", "not_a_fax", 40],
    ["+4900000003", "fax_disconnected", 12],
    ["+4900000004", "fax_timeout", 62],
  ];
  for (const [number, code, seconds] of answered) {
    it(`${number}: answered, fails with ${code} after ${seconds} s and bills the time`, async () => {
      const { outcome, elapsedMs } = await place(request(number, [30_000]));
      assert.equal(elapsedMs, seconds * 1000);
      assert.equal(outcome.result, "failed");
      if (outcome.result !== "failed") return;
      assert.equal(outcome.reasonCode, code);
      assert.equal(outcome.durationSecs, seconds);
      assert.equal(outcome.pagesSent, 0);
      assert.ok(outcome.rawCause && outcome.rawCause.length > 0);
    });
  }

  const unanswered: [string, string, number][] = [
    ["+4900000005", "no_answer", 58],
    ["+4900000009", "invalid_number", 2],
    ["+4900000010", "call_failed", 1],
  ];
  for (const [number, code, seconds] of unanswered) {
    it(`${number}: unanswered, fails with ${code} after ${seconds} s with duration 0`, async () => {
      const { outcome, elapsedMs } = await place(request(number, [30_000]));
      assert.equal(elapsedMs, seconds * 1000);
      assert.equal(outcome.result, "failed");
      if (outcome.result !== "failed") return;
      assert.equal(outcome.reasonCode, code);
      assert.equal(outcome.durationSecs, 0);
      assert.equal(outcome.remoteCsid, null);
    });
  }
});

describe("TestLine: partial transmissions", () => {
  const cases: { pages: number; confirmed: number }[] = [
    { pages: 1, confirmed: 0 },
    { pages: 2, confirmed: 1 },
    { pages: 3, confirmed: 2 },
    { pages: 4, confirmed: 2 },
    { pages: 5, confirmed: 3 },
    { pages: 10, confirmed: 5 },
  ];
  for (const number of ["+4900000000", "+4900000006"]) {
    for (const { pages, confirmed } of cases) {
      it(`${number} with ${pages} page(s) confirms ${confirmed} and half-sends the next`, async () => {
        const bytes = Array.from({ length: pages }, (_, i) => 3_000 + i * 1_000);
        const { outcome, elapsedMs } = await place(request(number, bytes));
        const seconds = 6 + 7 + sum(bytes.slice(0, confirmed).map(pageSeconds)) + pageSeconds(bytes[confirmed]!) / 2;
        assert.ok(Math.abs(elapsedMs - seconds * 1000) < 1e-6, `waited ${elapsedMs} ms, expected ${seconds * 1000}`);
        assert.equal(outcome.result, "failed");
        if (outcome.result !== "failed") return;
        assert.equal(outcome.reasonCode, number === "+4900000000" ? "remote_disconnect" : "partial_transmission");
        assert.equal(outcome.pagesSent, confirmed);
        assert.equal(outcome.pagesSent, pages <= 1 ? 0 : Math.ceil(pages / 2));
        assert.equal(outcome.durationSecs, Math.round(seconds));
        assert.equal(outcome.remoteCsid, number, "the remote fax answered, so its CSID is known");
      });
    }
  }
});

describe("TestLine: attempt-dependent scripts", () => {
  it("+4900000007: no answer on attempt 1, delivered from attempt 2 on", async () => {
    const first = await place(request("+4900000007", [30_000], 1));
    assert.equal(first.outcome.result, "failed");
    assert.equal(first.outcome.result === "failed" && first.outcome.reasonCode, "no_answer");
    assert.equal(first.elapsedMs, 58_000);
    for (const n of [2, 3, 7]) {
      const later = await place(request("+4900000007", [30_000], n));
      assert.equal(later.outcome.result, "delivered", `attempt ${n}`);
      assert.equal(later.outcome.durationSecs, 33);
    }
  });

  it("+4900000008: busy on attempts 1 and 2, delivered on 3", async () => {
    const results: string[] = [];
    for (const n of [1, 2, 3, 4]) {
      const { outcome } = await place(request("+4900000008", [30_000], n));
      results.push(outcome.result === "failed" ? outcome.reasonCode : outcome.result);
    }
    assert.deepEqual(results, ["line_busy", "line_busy", "delivered", "delivered"]);
  });

  it("every fixed-outcome test number fails on every attempt with the reason its table row names", async () => {
    for (const t of TEST_NUMBERS) {
      if (t.reason === "delivered") continue;
      for (const n of [1, 2, 5]) {
        const { outcome } = await place(request(t.number, [3_000, 3_000], n));
        assert.equal(outcome.result, "failed", `${t.number} attempt ${n}`);
        if (outcome.result === "failed") assert.equal(outcome.reasonCode, t.reason, `${t.number} attempt ${n}`);
      }
      assert.equal(failureReason(t.reason).status, t.status, `${t.number}: the table's status is its reason's status`);
    }
  });

  it("the table has the documented numbers and unlisted numbers are unknown to it", () => {
    assert.equal(testNumberFor("+4989000000000"), undefined);
    assert.deepEqual(
      TEST_NUMBERS.map((t) => t.number),
      [...Array.from({ length: 11 }, (_, i) => `+49000000${String(i).padStart(2, "0")}`), "+4900000020"],
    );
  });
});

describe("TestLine: abort", () => {
  it("rejects with the signal's reason when aborted mid-call, and never resolves afterwards", async () => {
    const clock = new ManualClock();
    const line = new TestLine({ clock, timeScale: 1 });
    const controller = new AbortController();
    let settled: string | null = null;
    const call = line.call(request("+4989000000000", [30_000]), controller.signal).then(
      () => (settled = "resolved"),
      (err: Error) => {
        settled = `rejected: ${err.message}`;
      },
    );
    await clock.advance(10_000);
    await flush();
    assert.equal(settled, null);
    controller.abort(new Error("lease lost"));
    await call;
    assert.equal(settled, "rejected: lease lost");
    await clock.advance(60_000);
    await flush();
    assert.equal(settled, "rejected: lease lost");
  });

  it("rejects at once when the signal is already aborted", async () => {
    const clock = new ManualClock();
    const line = new TestLine({ clock, timeScale: 1 });
    const controller = new AbortController();
    controller.abort(new Error("node stopping"));
    await assert.rejects(line.call(request("+4900000001", [30_000]), controller.signal), /node stopping/);
  });

  it("aborts failing and partial scripts too", async () => {
    for (const number of ["+4900000005", "+4900000006"]) {
      const clock = new ManualClock();
      const line = new TestLine({ clock, timeScale: 1 });
      const controller = new AbortController();
      const call = line.call(request(number, [30_000, 30_000]), controller.signal);
      await clock.advance(1_000);
      controller.abort(new Error("stop"));
      await assert.rejects(call, /stop/, number);
    }
  });
});

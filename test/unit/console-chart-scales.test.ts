/**
 * The console charts' arithmetic (packages/console/src/charts/scale.ts, csv.ts): round ticks
 * that cover the largest value, whole ticks for counts, time ticks on whole minutes of the local
 * clock, thinned labels, and CSV as the reporting exports write it.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { countTicks, labelEvery, niceTicks, timeTicks } from "../../packages/console/src/charts/scale.ts";
import { toCsv } from "../../packages/console/src/charts/csv.ts";

describe("console chart scales", () => {
  it("ticks from 0 to at least the largest value, in round steps", () => {
    assert.deepEqual(niceTicks(0, 9), [0, 2, 4, 6, 8, 10]);
    assert.deepEqual(niceTicks(0, 0.93, 4), [0, 0.25, 0.5, 0.75, 1]);
    assert.deepEqual(niceTicks(0, 0.3, 3), [0, 0.1, 0.2, 0.3], "no 0.30000000000000004");
    assert.deepEqual(niceTicks(0, 0), [0, 0.2, 0.4, 0.6, 0.8, 1], "an empty chart still has an axis");
    assert.deepEqual(niceTicks(0, 12_345, 4), [0, 5000, 10_000, 15_000]);
  });

  it("never ticks half a call", () => {
    assert.deepEqual(countTicks(3), [0, 1, 2, 3]);
    assert.deepEqual(countTicks(0), [0, 1]);
    assert.deepEqual(countTicks(14, 4), [0, 5, 10, 15], "2.5 is skipped");
    for (const max of [7, 13, 23, 99, 1234]) assert.ok(countTicks(max, 4).every(Number.isInteger), String(max));
  });

  it("puts time ticks on whole steps of the clock and thins category labels", () => {
    const from = Date.UTC(2026, 10, 29, 12, 3, 17);
    const { ticks, step } = timeTicks(from, from + 15 * 60_000, 6);
    assert.equal(step, 5 * 60_000);
    assert.ok(ticks.length >= 2 && ticks.length <= 4);
    for (const t of ticks) assert.equal(new Date(t).getSeconds() + (new Date(t).getMinutes() % 5), 0, new Date(t).toISOString());
    assert.equal(labelEvery(30, 600, 50), 3);
    assert.equal(labelEvery(7, 600, 50), 1);
  });

  it("writes CSV as the exports do: CRLF, quotes where needed, formulas defused, numbers unformatted", () => {
    assert.equal(
      toCsv(["day", "reason", "faxes"], [["2026-11-01", "busy, twice", 12], ["2026-11-02", '=HYPERLINK("x")', 0.953], ["2026-11-03", "+4989123", null]]),
      'day,reason,faxes\r\n2026-11-01,"busy, twice",12\r\n2026-11-02,"\'=HYPERLINK(""x"")",0.953\r\n2026-11-03,+4989123,\r\n',
    );
  });
});

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { resolveJobValidity } from "../../src/api/fax-job-intake.ts";
import { ApiError } from "../../src/errors/api-errors.ts";
import { addIsoDuration, parseDurationMs, parseIsoDuration } from "../../src/lib/durations.ts";
import { newJobId, newRecipientId } from "../../src/lib/ids.ts";

const NOW = Date.UTC(2026, 10, 20, 12, 0, 0);

/** "<api error code>: <message>" of what `f` throws, or null when it does not throw. */
function code(f: () => unknown): string | null {
  try {
    f();
    return null;
  } catch (err) {
    return err instanceof ApiError ? `${err.definition.code}: ${err.message}` : String(err);
  }
}

describe("intake: job validity", () => {
  it("defaults to now until one month later", () => {
    const v = resolveJobValidity(null, NOW, "P1M", "P1Y");
    assert.equal(v.validFrom, NOW);
    assert.equal(v.validUntil, Date.UTC(2026, 11, 20, 12, 0, 0));
  });
  it("treats an empty jobValid (Go) like none", () => {
    assert.deepEqual(resolveJobValidity({}, NOW, "P1M", "P1Y"), resolveJobValidity(null, NOW, "P1M", "P1Y"));
    assert.deepEqual(resolveJobValidity({ start: "", end: "" }, NOW, "P1M", "P1Y"), resolveJobValidity(null, NOW, "P1M", "P1Y"));
  });
  it("reads zoned starts in every offset style and measures a duration end from the start", () => {
    for (const start of ["2026-11-20T14:00:00Z", "2026-11-20T15:00:00+01:00", "2026-11-20T15:00:00+0100", "2026-11-20T15:00:00.500+01"]) {
      const v = resolveJobValidity({ start, end: "PT80M" }, NOW, "P1M", "P1Y");
      assert.equal(Math.floor(v.validFrom / 1000) * 1000, Date.UTC(2026, 10, 20, 14, 0, 0), start);
      assert.equal(v.validUntil - v.validFrom, 80 * 60_000);
    }
  });
  it("starts a job with a past start now", () => {
    assert.equal(resolveJobValidity({ start: "2020-01-01T00:00:00Z" }, NOW, "P1M", "P1Y").validFrom, NOW);
  });
  it("rejects a start without time zone, a bad end and an end before the start", () => {
    assert.match(code(() => resolveJobValidity({ start: "2026-11-20T14:00:00" }, NOW, "P1M", "P1Y"))!, /^job_valid_invalid: .*no time zone/);
    assert.match(code(() => resolveJobValidity({ end: "tomorrow" }, NOW, "P1M", "P1Y"))!, /^job_valid_invalid: .*PT80M/);
    assert.match(code(() => resolveJobValidity({ end: "2026-11-20T11:00:00Z" }, NOW, "P1M", "P1Y"))!, /^job_valid_invalid: .*before/);
  });
});

describe("intake: validity out of range (every job ends)", () => {
  it("refuses durations whose end is no date (NaN or Infinity) with 400 job_valid_invalid", () => {
    for (const end of ["P300000Y", "P9999999999Y", `P${"9".repeat(400)}D`, "PT99999999999999999999S"]) {
      assert.match(code(() => resolveJobValidity({ end }, NOW, "P1M", "P1Y"))!, /^job_valid_invalid: .*out of range/, end);
    }
  });
  it("refuses starts that lie further ahead than the maximum validity, or are no date", () => {
    for (const start of ["P99999999D", "PT99999999999999999999S", `P${"9".repeat(400)}D`, "P2Y", "2099-01-01T00:00:00Z"]) {
      assert.match(code(() => resolveJobValidity({ start }, NOW, "P1M", "P1Y"))!, /^job_valid_invalid: .*at most P1Y from now/, start);
    }
    assert.equal(resolveJobValidity({ start: "P11M" }, NOW, "P1M", "P1Y").validFrom, Date.UTC(2027, 9, 20, 12, 0, 0));
  });
  it("cuts a validity longer than the maximum to the maximum", () => {
    for (const end of ["P5Y", "P1000D", "9999-12-31T23:59:59Z"]) {
      const v = resolveJobValidity({ end }, NOW, "P1M", "P1Y");
      assert.equal(v.validUntil, Date.UTC(2027, 10, 20, 12, 0, 0), end);
    }
    assert.equal(resolveJobValidity({ start: "P1D", end: "P2Y" }, NOW, "P1M", "P6M").validUntil, Date.UTC(2027, 4, 21, 12, 0, 0));
  });
});

describe("durations and ids", () => {
  it("parses ISO and short durations", () => {
    assert.deepEqual(parseIsoDuration("PT80M"), { years: 0, months: 0, weeks: 0, days: 0, hours: 0, minutes: 80, seconds: 0 });
    assert.equal(parseIsoDuration("P"), null);
    assert.equal(parseIsoDuration("PT"), null);
    assert.equal(parseDurationMs("250ms"), 250);
    assert.equal(parseDurationMs("5m"), 300_000);
    assert.equal(parseDurationMs("PT1H30M"), 5_400_000);
    assert.equal(parseDurationMs("P1M"), null);
    assert.equal(parseDurationMs("later"), null);
  });
  it("adds months with calendar semantics, clamping to the month's last day", () => {
    assert.equal(addIsoDuration(Date.UTC(2026, 0, 31), parseIsoDuration("P1M")!), Date.UTC(2026, 1, 28));
  });
  it("makes 22-character ids in the provider's style", () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newJobId()));
    assert.equal(ids.size, 1000);
    for (const id of ids) assert.match(id, /^FJ[A-Z0-9]{20}$/);
    assert.match(newRecipientId(), /^FN[A-Z0-9]{20}$/);
  });
});

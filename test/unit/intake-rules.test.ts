import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { resolveJobValidity } from "../../src/api/fax-job-intake.ts";
import { ApiError } from "../../src/errors/api-errors.ts";
import { addIsoDuration, parseDurationMs, parseIsoDuration } from "../../src/lib/durations.ts";
import { newJobId, newRecipientId } from "../../src/lib/ids.ts";

const NOW = Date.UTC(2026, 10, 20, 12, 0, 0);

describe("intake: job validity", () => {
  it("defaults to now until one month later", () => {
    const v = resolveJobValidity(null, NOW, "P1M");
    assert.equal(v.validFrom, NOW);
    assert.equal(v.validUntil, Date.UTC(2026, 11, 20, 12, 0, 0));
  });
  it("treats an empty jobValid (Go) like none", () => {
    assert.deepEqual(resolveJobValidity({}, NOW, "P1M"), resolveJobValidity(null, NOW, "P1M"));
    assert.deepEqual(resolveJobValidity({ start: "", end: "" }, NOW, "P1M"), resolveJobValidity(null, NOW, "P1M"));
  });
  it("reads zoned starts in every offset style and measures a duration end from the start", () => {
    for (const start of ["2026-11-20T14:00:00Z", "2026-11-20T15:00:00+01:00", "2026-11-20T15:00:00+0100", "2026-11-20T15:00:00.500+01"]) {
      const v = resolveJobValidity({ start, end: "PT80M" }, NOW, "P1M");
      assert.equal(Math.floor(v.validFrom / 1000) * 1000, Date.UTC(2026, 10, 20, 14, 0, 0), start);
      assert.equal(v.validUntil - v.validFrom, 80 * 60_000);
    }
  });
  it("starts a job with a past start now", () => {
    assert.equal(resolveJobValidity({ start: "2020-01-01T00:00:00Z" }, NOW, "P1M").validFrom, NOW);
  });
  it("rejects a start without time zone, a bad end and an end before the start", () => {
    const code = (f: () => unknown) => {
      try {
        f();
        return null;
      } catch (err) {
        return err instanceof ApiError ? `${err.definition.code}: ${err.message}` : String(err);
      }
    };
    assert.match(code(() => resolveJobValidity({ start: "2026-11-20T14:00:00" }, NOW, "P1M"))!, /^job_valid_invalid: .*no time zone/);
    assert.match(code(() => resolveJobValidity({ end: "tomorrow" }, NOW, "P1M"))!, /^job_valid_invalid: .*PT80M/);
    assert.match(code(() => resolveJobValidity({ end: "2026-11-20T11:00:00Z" }, NOW, "P1M"))!, /^job_valid_invalid: .*before/);
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

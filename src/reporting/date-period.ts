/**
 * The `datePeriod` of a report: `{fromIncluded, toExcluded}`, ISO-8601 instants in UTC, as the
 * provider's reporting API takes them ("2025-06-04T08:00:00.000Z"). Usage records may span at
 * most reporting.maxQuerySpan (45 days) and start no further back than reporting.history (90
 * days); aggregates read whole UTC days, so their bounds must be midnights, and may span
 * reporting.maxSummarySpan.
 */
import { ApiError } from "../errors/api-errors.ts";
import { DAY_MS } from "../store/queries/report-rollups.ts";

/** A span as people say it: "45 days", "3.5 days", "6 hours". */
function span(ms: number): string {
  if (ms >= DAY_MS) return `${Number((ms / DAY_MS).toFixed(2))} days`;
  return `${Number((ms / 3_600_000).toFixed(2))} hours`;
}

export interface DatePeriodInput {
  fromIncluded: string;
  toExcluded: string;
}

export interface Period {
  from: number;
  to: number;
}

// An instant with its zone: Z or an offset. A local time without one is ambiguous, so refused.
const INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/i;

function instant(name: string, text: unknown): number {
  if (typeof text !== "string" || !INSTANT.test(text.trim())) {
    throw new ApiError("date_period_invalid", `datePeriod.${name} is ${JSON.stringify(text)}; give an ISO-8601 instant in UTC such as 2026-11-01T00:00:00.000Z`);
  }
  const ms = Date.parse(text.trim());
  if (!Number.isFinite(ms)) throw new ApiError("date_period_invalid", `datePeriod.${name} is ${JSON.stringify(text)}, which is no date`);
  return ms;
}

export function parsePeriod(input: DatePeriodInput | null | undefined): Period {
  if (!input) throw new ApiError("date_period_invalid", "datePeriod is required: {fromIncluded, toExcluded}");
  const from = instant("fromIncluded", input.fromIncluded);
  const to = instant("toExcluded", input.toExcluded);
  if (to <= from) throw new ApiError("date_period_invalid", `datePeriod.toExcluded (${input.toExcluded}) must be after fromIncluded (${input.fromIncluded})`);
  return { from, to };
}

export interface UdrPeriodLimits {
  /** reporting.maxQuerySpan; null: no limit (exports). */
  maxSpanMs: number | null;
  historyMs: number;
  now: number;
}

/** A usage-record query's period, within the span and history limits. */
export function udrPeriod(input: DatePeriodInput | null | undefined, limits: UdrPeriodLimits): Period {
  const period = parsePeriod(input);
  if (limits.maxSpanMs !== null && period.to - period.from > limits.maxSpanMs) {
    throw new ApiError(
      "date_period_too_long",
      `datePeriod spans ${span(period.to - period.from)}; one query may span at most ${span(limits.maxSpanMs)}: split it into several (or use an export)`,
    );
  }
  const earliest = limits.now - limits.historyMs;
  if (period.from < earliest) {
    throw new ApiError("date_period_too_old", `datePeriod starts at ${new Date(period.from).toISOString()}, before the history kept for reports (${span(limits.historyMs)}: from ${new Date(earliest).toISOString()} on)`);
  }
  return period;
}

/** An aggregate query's period: whole UTC days, within reporting.maxSummarySpan. */
export function summaryPeriod(input: DatePeriodInput | null | undefined, maxSpanMs: number): Period {
  const period = parsePeriod(input);
  for (const [name, ms] of [["fromIncluded", period.from], ["toExcluded", period.to]] as const) {
    if (ms % DAY_MS !== 0) {
      throw new ApiError("date_period_invalid", `datePeriod.${name} (${new Date(ms).toISOString()}) is not a UTC midnight; aggregates count whole UTC days (e.g. ${new Date(ms - (ms % DAY_MS)).toISOString()})`);
    }
  }
  if (period.to - period.from > maxSpanMs) {
    throw new ApiError("date_period_too_long", `datePeriod spans ${span(period.to - period.from)}; an aggregate query may span at most ${span(maxSpanMs)} (reporting.maxSummarySpan)`);
  }
  return period;
}

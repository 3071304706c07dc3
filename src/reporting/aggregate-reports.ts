/**
 * Faxline's aggregate reports, which the provider's reporting API lacks: counts, pages, line
 * time, success rates and attempts per delivered fax, grouped by period and dimensions, read from
 * the daily rollups (store/queries/report-aggregates.ts). Days are UTC days; weeks start on
 * Monday (ISO 8601) and months on the 1st, both in UTC. Every query returns its totals and its
 * rows; a row names its period (`period`: the first day, YYYY-MM-DD) and the dimensions grouped by.
 *
 *  - faxOutSummary: outbound faxes (a recipient, on the day it became final);
 *  - faxOutCallSummary: outbound calls (an attempt, on the day it ended), by trunk among others;
 *  - faxInSummary: receptions (on the day they arrived);
 *  - faxOutFailingDestinations: the numbers with the most failed faxes, with their reasons.
 */
import type { Kysely, RawBuilder } from "kysely";
import { ApiError } from "../errors/api-errors.ts";
import type { Database } from "../store/database.ts";
import { readRollups, readTopFailingNumbers, sumOf, sumWhere, type RollupRow, type RollupScope, type RollupTableName } from "../store/queries/report-aggregates.ts";
import type { Period } from "./date-period.ts";
import type { FilterInput } from "./udr-reports.ts";

export type Grouping = "DAY" | "WEEK" | "MONTH" | "CUSTOMER" | "LOGIN" | "DATACENTER" | "SERVICE" | "COUNTRY" | "STATUS" | "REASON" | "TRUNK" | "RESULT" | "TOPIC";

const PERIODS: readonly Grouping[] = ["DAY", "WEEK", "MONTH"];

/** The rollup column behind a grouping, and the row field it fills. */
const COLUMN: Record<Exclude<Grouping, "DAY" | "WEEK" | "MONTH">, { column: string; field: string }> = {
  CUSTOMER: { column: "cust_nr", field: "customerId" },
  LOGIN: { column: "login", field: "login" },
  DATACENTER: { column: "datacenter", field: "datacenter" },
  SERVICE: { column: "service", field: "service" },
  COUNTRY: { column: "country", field: "country" },
  STATUS: { column: "status", field: "status" },
  REASON: { column: "reason", field: "reason" },
  TRUNK: { column: "trunk", field: "trunk" },
  RESULT: { column: "result", field: "result" },
  TOPIC: { column: "topic", field: "topic" },
};

interface SummaryKind {
  table: RollupTableName;
  groupings: readonly Grouping[];
  /** Filter argument field → rollup column. */
  filters: Readonly<Record<string, string>>;
  measures: Readonly<Record<string, RawBuilder<unknown>>>;
  /** Ratios computed from the summed measures. */
  derive(m: Record<string, number>): Record<string, number | null>;
}

const ratio = (a: number, b: number): number | null => (b > 0 ? a / b : null);

export const SUMMARIES = {
  faxOut: {
    table: "report_out_faxes",
    groupings: ["DAY", "WEEK", "MONTH", "CUSTOMER", "LOGIN", "DATACENTER", "SERVICE", "COUNTRY", "STATUS", "REASON"],
    filters: { customerIds: "cust_nr", logins: "login", datacenters: "datacenter", services: "service", countries: "country", statuses: "status", reasons: "reason" },
    measures: {
      faxes: sumOf("faxes"),
      delivered: sumWhere("faxes", "status", ["OK"]),
      pages: sumOf("pages"),
      attempts: sumOf("attempts"),
      deliveredAttempts: sumWhere("attempts", "status", ["OK"]),
      lineSeconds: sumOf("line_secs"),
    },
    derive: (m) => ({ failed: m.faxes! - m.delivered!, successRate: ratio(m.delivered!, m.faxes!), attemptsPerDeliveredFax: ratio(m.deliveredAttempts!, m.delivered!) }),
  },
  faxOutCalls: {
    table: "report_out_calls",
    groupings: ["DAY", "WEEK", "MONTH", "CUSTOMER", "LOGIN", "DATACENTER", "SERVICE", "COUNTRY", "TRUNK", "RESULT", "REASON"],
    filters: { customerIds: "cust_nr", logins: "login", datacenters: "datacenter", services: "service", countries: "country", trunks: "trunk", results: "result", reasons: "reason" },
    measures: {
      calls: sumOf("calls"),
      connected: sumOf("connected"),
      delivered: sumWhere("calls", "result", ["delivered"]),
      pages: sumOf("pages"),
      lineSeconds: sumOf("line_secs"),
    },
    derive: (m) => ({ failed: m.calls! - m.delivered!, successRate: ratio(m.delivered!, m.calls!), averageCallSeconds: ratio(m.lineSeconds!, m.connected!) }),
  },
  faxIn: {
    table: "report_in_faxes",
    groupings: ["DAY", "WEEK", "MONTH", "CUSTOMER", "TOPIC", "DATACENTER", "SERVICE", "COUNTRY", "STATUS", "REASON"],
    filters: { customerIds: "cust_nr", topics: "topic", datacenters: "datacenter", services: "service", countries: "country", statuses: "status", reasons: "reason" },
    measures: {
      faxes: sumOf("faxes"),
      ok: sumWhere("faxes", "status", ["OK"]),
      partial: sumWhere("faxes", "status", ["PARTIAL"]),
      pages: sumOf("pages"),
      lineSeconds: sumOf("line_secs"),
    },
    derive: (m) => ({ failed: m.faxes! - m.ok! - m.partial!, successRate: ratio(m.ok!, m.faxes!) }),
  },
} as const satisfies Record<string, SummaryKind>;

export type SummaryName = keyof typeof SUMMARIES;

export interface SummaryRequest {
  scope: RollupScope;
  period: Period;
  filter: FilterInput | null | undefined;
  groupBy: readonly Grouping[];
  /** Most rows returned (the period's first rows); `truncated` says when there were more. */
  limit: number;
}

export type SummaryRow = Record<string, string | number | null>;

export interface SummaryResult {
  totals: SummaryRow;
  rows: SummaryRow[];
  truncated: boolean;
}

/** YYYY-MM-DD of a UTC day. */
const dateOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** The first day of the period a UTC day belongs to. */
export function periodStart(day: number, grouping: Grouping): number {
  const d = new Date(day);
  if (grouping === "MONTH") return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  if (grouping === "WEEK") return day - ((d.getUTCDay() + 6) % 7) * 86_400_000;
  return day;
}

function filterValues(filter: FilterInput | null | undefined, kind: SummaryKind): Record<string, readonly string[]> {
  const out: Record<string, readonly string[]> = {};
  for (const [name, f] of Object.entries(filter ?? {})) {
    const column = kind.filters[name];
    if (column === undefined) throw new ApiError("graphql_query_invalid", `filter.${name} is not a filter of this report; it has ${Object.keys(kind.filters).join(", ")}`);
    if (f?.values === null || f?.values === undefined) continue;
    const upper = ["country", "datacenter", "status"].includes(column);
    out[column] = f.values.filter((v): v is string => typeof v === "string").map((v) => (upper ? v.toUpperCase() : v));
  }
  return out;
}

function withDerived(kind: SummaryKind, row: RollupRow, measures: readonly string[]): SummaryRow {
  const m: Record<string, number> = {};
  for (const name of measures) m[name] = Number(row[name] ?? 0);
  return { ...m, ...kind.derive(m) };
}

export async function summarize(db: Kysely<Database>, name: SummaryName, req: SummaryRequest): Promise<SummaryResult> {
  const kind: SummaryKind = SUMMARIES[name];
  const groupBy = [...new Set(req.groupBy)];
  for (const g of groupBy) {
    if (!kind.groupings.includes(g)) throw new ApiError("graphql_query_invalid", `groupBy ${g} is not a grouping of this report; it has ${kind.groupings.join(", ")}`);
  }
  const periods = groupBy.filter((g) => PERIODS.includes(g));
  if (periods.length > 1) throw new ApiError("graphql_query_invalid", `groupBy names ${periods.join(" and ")}; group by one period at most`);
  const periodGrouping = periods[0] ?? null;
  const dims = groupBy.filter((g) => !PERIODS.includes(g)) as (keyof typeof COLUMN)[];
  const filters = filterValues(req.filter, kind);
  const measureNames = Object.keys(kind.measures);
  const base = { table: kind.table, scope: req.scope, fromDay: req.period.from, toDay: req.period.to, filters, measures: kind.measures };

  const [totalRow] = await readRollups(db, { ...base, groupBy: [] });
  const totals = withDerived(kind, totalRow ?? {}, measureNames);

  const columns = [...(periodGrouping ? ["day"] : []), ...dims.map((d) => COLUMN[d].column)];
  const raw = columns.length === 0 ? [] : await readRollups(db, { ...base, groupBy: columns });
  // Days folded into weeks or months here: the rollups hold days.
  const folded = new Map<string, RollupRow>();
  for (const r of raw) {
    const row: RollupRow = { ...r };
    if (periodGrouping) row.day = periodStart(Number(r.day), periodGrouping);
    const key = columns.map((c) => String(row[c])).join("\u0000");
    const seen = folded.get(key);
    if (!seen) folded.set(key, row);
    else for (const m of measureNames) seen[m] = Number(seen[m]) + Number(row[m]);
  }
  const all = [...folded.values()].map((r) => {
    const out: SummaryRow = {};
    if (periodGrouping) out.period = dateOf(Number(r.day));
    for (const d of dims) out[COLUMN[d].field] = String(r[COLUMN[d].column]);
    return { ...out, ...withDerived(kind, r, measureNames) };
  });
  const main = measureNames[0]!;
  all.sort((a, b) => String(a.period ?? "").localeCompare(String(b.period ?? "")) || Number(b[main]) - Number(a[main]) || dims.map((d) => String(a[COLUMN[d].field]).localeCompare(String(b[COLUMN[d].field]))).find((c) => c !== 0) || 0);
  return { totals, rows: all.slice(0, req.limit), truncated: all.length > req.limit };
}

export interface FailingDestination {
  number: string;
  country: string;
  failedFaxes: number;
  attempts: number;
  reasons: { reason: string; faxes: number }[];
}

/**
 * The destinations with the most failed faxes in the period, most first (ties: the smaller
 * number first), with their reasons. The top is read through report_out_failing_numbers
 * (store/queries/report-aggregates.ts readTopFailingNumbers), the reasons from the period's rows
 * of those numbers only.
 */
export async function failingDestinations(db: Kysely<Database>, req: Omit<SummaryRequest, "groupBy">): Promise<FailingDestination[]> {
  const kind: SummaryKind = {
    table: "report_out_failures",
    groupings: [],
    filters: { customerIds: "cust_nr", logins: "login", datacenters: "datacenter", services: "service", countries: "country", reasons: "reason" },
    measures: { failedFaxes: sumOf("faxes"), attempts: sumOf("attempts") },
    derive: () => ({}),
  };
  const filters = filterValues(req.filter, kind);
  const top = await readTopFailingNumbers(db, { scope: req.scope, fromDay: req.period.from, toDay: req.period.to, filters, limit: req.limit });
  if (top.length === 0) return [];
  const numbers = top.map((t) => t.number);
  const base = { table: kind.table, scope: req.scope, fromDay: req.period.from, toDay: req.period.to, measures: kind.measures };
  const byReason = await readRollups(db, { ...base, filters: { ...filters, number: numbers }, groupBy: ["number", "reason"] });
  return top.map((t) => ({
    number: t.number,
    country: t.country,
    failedFaxes: t.failedFaxes,
    attempts: t.attempts,
    reasons: byReason
      .filter((r) => r.number === t.number)
      .map((r) => ({ reason: String(r.reason), faxes: Number(r.failedFaxes) }))
      .sort((a, b) => b.faxes - a.faxes || a.reason.localeCompare(b.reason)),
  }));
}

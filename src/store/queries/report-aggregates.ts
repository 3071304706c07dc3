/**
 * The reporting interface's aggregate reads: sums over the daily rollups (report-rollups.ts),
 * never over the attempts, recipients and receptions themselves, so a month over a million faxes
 * reads a few thousand rows (docs/benchmarks.md, bench:reporting).
 *
 * Every read is scoped (`RollupScope`): one customer (or all, for operators), one login (plain
 * logins see their own jobs; receptions belong to the customer), the region's data centers. Rows
 * come back grouped by `day` (UTC midnight, ms) and/or the dimensions asked for, with the measures
 * summed; folding days into weeks and months is the caller's (reporting/aggregate-reports.ts).
 */
import { sql, type Kysely, type RawBuilder } from "kysely";
import type { Database } from "../database.ts";
import { ALL_CUSTOMERS } from "./report-rollups.ts";

export type RollupTableName = "report_out_faxes" | "report_out_calls" | "report_out_failures" | "report_in_faxes";

export interface RollupScope {
  /** null: every customer (operators). */
  custNr: string | null;
  /** null: every login of the customer; ignored for receptions. */
  login: string | null;
  /** Data centers whose counts are read (the region's). */
  datacenters: readonly string[];
}

export interface RollupQuery {
  table: RollupTableName;
  scope: RollupScope;
  /** UTC days [fromDay, toDay), ms. */
  fromDay: number;
  toDay: number;
  /** Dimension → the values it must have (any of them). */
  filters: Readonly<Record<string, readonly string[]>>;
  /** Dimensions to group by; "day" groups by UTC day. Empty: one row of totals. */
  groupBy: readonly string[];
  /** Measure name → its SQL over the table's columns (sums). */
  measures: Readonly<Record<string, RawBuilder<unknown>>>;
  orderBy?: { measure: string; direction: "asc" | "desc" };
  limit?: number;
}

/** Columns each table may be grouped and filtered by (a whitelist: names are never taken from input unchecked). */
export const ROLLUP_DIMENSIONS: Readonly<Record<RollupTableName, readonly string[]>> = {
  report_out_faxes: ["day", "cust_nr", "login", "datacenter", "service", "country", "status", "reason"],
  report_out_calls: ["day", "cust_nr", "login", "datacenter", "service", "country", "trunk", "result", "reason"],
  report_out_failures: ["day", "cust_nr", "login", "datacenter", "service", "number", "country", "reason"],
  report_in_faxes: ["day", "cust_nr", "topic", "datacenter", "service", "country", "status", "reason"],
};

export type RollupRow = Record<string, string | number>;

/** Sum of a column. */
export const sumOf = (column: string): RawBuilder<unknown> => sql`coalesce(sum(${sql.ref(column)}), 0)`;
/** Sum of a column over the rows whose `dimension` is one of `values`. */
export const sumWhere = (column: string, dimension: string, values: readonly string[]): RawBuilder<unknown> =>
  sql`coalesce(sum(case when ${sql.ref(dimension)} in (${sql.join(values.map((v) => sql.lit(v)))}) then ${sql.ref(column)} else 0 end), 0)`;

export async function readRollups(db: Kysely<Database>, q: RollupQuery): Promise<RollupRow[]> {
  const allowed = ROLLUP_DIMENSIONS[q.table];
  for (const d of [...q.groupBy, ...Object.keys(q.filters)]) {
    if (!allowed.includes(d)) throw new Error(`${q.table} has no dimension ${d}`);
  }
  // Kysely's typed builder cannot know a table chosen at run time: the table and every column
  // go through the whitelist above, values are bound.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let query = (db as unknown as Kysely<any>)
    .selectFrom(q.table)
    .where("day", ">=", q.fromDay)
    .where("day", "<", q.toDay)
    .where("datacenter", "in", [...q.scope.datacenters]);
  if (q.scope.custNr !== null) query = query.where("cust_nr", "=", q.scope.custNr);
  if (q.scope.login !== null && allowed.includes("login")) query = query.where("login", "=", q.scope.login);
  for (const [dimension, values] of Object.entries(q.filters)) {
    if (values.length === 0) continue;
    query = query.where(dimension, "in", [...values]);
  }
  let select = query.select([
    ...q.groupBy.map((d) => sql.ref(d).as(d)),
    ...Object.entries(q.measures).map(([name, expr]) => expr.as(name)),
  ]);
  if (q.groupBy.length > 0) select = select.groupBy(q.groupBy.map((d) => sql.ref(d)));
  if (q.orderBy) select = select.orderBy(sql.ref(q.orderBy.measure), q.orderBy.direction);
  for (const d of q.groupBy) select = select.orderBy(sql.ref(d));
  if (q.limit !== undefined) select = select.limit(q.limit);
  const rows = (await select.execute()) as RollupRow[];
  // PostgreSQL sums bigint columns into numeric, which node-postgres hands over as strings.
  const measures = Object.keys(q.measures);
  for (const row of rows) {
    for (const m of measures) row[m] = Number(row[m] ?? 0);
    if ("day" in row) row.day = Number(row.day);
  }
  return rows;
}

export interface TopFailingQuery {
  scope: RollupScope;
  /** UTC days [fromDay, toDay), ms. */
  fromDay: number;
  toDay: number;
  /** Dimension of report_out_failures → the values it must have (any of them). */
  filters: Readonly<Record<string, readonly string[]>>;
  limit: number;
  /** Candidates per round (first, most) and before grouping instead (tests pass small ones). */
  rounds?: { first: number; most: number; budget: number };
}

export interface TopFailingNumber {
  number: string;
  country: string;
  failedFaxes: number;
  attempts: number;
}

/** Candidates read per round: the first round's, and the most. */
const FIRST_CANDIDATES = 200;
const MOST_CANDIDATES = 5000;
/** Candidates counted before the read gives up pruning and groups the period's rows instead. */
const CANDIDATE_BUDGET = 20_000;

/**
 * The `limit` numbers with the most failed faxes in the period and scope, most first, ties by
 * number: the same rows as grouping the period's report_out_failures by number and sorting, read
 * without hashing every failed number of the period (migration 0043).
 *
 * How: report_out_failing_numbers holds each number's failed faxes over all days kept, an upper
 * bound of its count in any period and scope. Candidates are read in that order
 * (report_out_failing_numbers_top_idx: the customer's rows, or every customer's for operators),
 * skipping numbers whose days lie outside the period; their period counts, with every filter, are
 * summed from report_out_failures (report_out_failures_number_idx), a round of candidates at a
 * time. It stops when no number not read yet can reach the top: the last candidate's bound is
 * below the tenth count, or equal to it with no smaller number left at that bound (ties go to
 * the smaller number; candidates of one bound come in number order). Where the bounds prune
 * little (many numbers whose failures lie mostly outside the period or the filters), after
 * CANDIDATE_BUDGET candidates it groups the period's rows instead, as before 0043.
 */
export async function readTopFailingNumbers(db: Kysely<Database>, q: TopFailingQuery): Promise<TopFailingNumber[]> {
  if (q.limit <= 0) return [];
  const measures = { failedFaxes: sumOf("faxes"), attempts: sumOf("attempts") };
  const base = { table: "report_out_failures" as const, scope: q.scope, fromDay: q.fromDay, toDay: q.toDay, measures };
  const toTop = (r: RollupRow): TopFailingNumber => ({ number: String(r.number), country: String(r.country), failedFaxes: Number(r.failedFaxes), attempts: Number(r.attempts) });
  const order = (a: TopFailingNumber, b: TopFailingNumber) => b.failedFaxes - a.failedFaxes || (a.number < b.number ? -1 : a.number > b.number ? 1 : 0) || (a.country < b.country ? -1 : a.country > b.country ? 1 : 0);

  let top: TopFailingNumber[] = [];
  let after: { faxes: number; number: string } | null = null;
  const rounds = q.rounds ?? { first: FIRST_CANDIDATES, most: MOST_CANDIDATES, budget: CANDIDATE_BUDGET };
  let round = rounds.first;
  let read = 0;
  for (;;) {
    let candidates = db
      .selectFrom("report_out_failing_numbers")
      .select(["number", "faxes"])
      .where("cust_nr", "=", q.scope.custNr ?? ALL_CUSTOMERS)
      .where("last_day", ">=", q.fromDay)
      .where("first_day", "<", q.toDay);
    if (after !== null) {
      const { faxes, number } = after;
      candidates = candidates.where((eb) => eb.or([eb("faxes", "<", faxes), eb.and([eb("faxes", "=", faxes), eb("number", ">", number)])]));
    }
    const batch = await candidates.orderBy("faxes", "desc").orderBy("number").limit(round).execute();
    if (batch.length === 0) break;
    read += batch.length;
    const counted = await readRollups(db, { ...base, filters: { ...q.filters, number: batch.map((c) => c.number) }, groupBy: ["number", "country"] });
    top = [...top, ...counted.map(toTop)].sort(order).slice(0, q.limit);
    const last = batch[batch.length - 1]!;
    after = { faxes: Number(last.faxes), number: last.number };
    if (batch.length < round) break;
    const tenth = top.length === q.limit ? top[q.limit - 1]! : null;
    if (tenth !== null && (tenth.failedFaxes > after.faxes || (tenth.failedFaxes === after.faxes && tenth.number <= after.number))) break;
    if (read >= rounds.budget) {
      const grouped = await readRollups(db, { ...base, filters: q.filters, groupBy: ["number", "country"], orderBy: { measure: "failedFaxes", direction: "desc" }, limit: q.limit });
      return grouped.map(toTop).sort(order);
    }
    round = Math.min(round * 2, rounds.most);
  }
  return top;
}

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

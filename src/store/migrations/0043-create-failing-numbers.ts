/**
 * 0043: "top failing destinations" without hashing every failed number of the period (issue 33;
 * docs/benchmarks.md "Reporting"; store/queries/report-aggregates.ts `readTopFailingNumbers`).
 *
 * report_out_failing_numbers: per customer and destination number, the failed faxes and their
 * calls summed over every day report_out_failures holds, and the first and last of those days.
 * Rows with cust_nr '' sum every customer's (the operators' view); no customer has that number.
 * The rollup writes (store/queries/report-rollups.ts) keep it in the transaction that adds to
 * report_out_failures, and take from it what they delete there, so for every (cust_nr, number):
 *   faxes, attempts = the sums of that number's rows of report_out_failures;
 *   first_day <= the first of their days, last_day >= the last (bounds: a purge or a recount of
 *   days leaves them wider than the rows, never narrower).
 * A period's count of a number never exceeds its `faxes` here, so the top ten of a period are
 * found by reading this table in `faxes` order (report_out_failing_numbers_top_idx) and counting
 * the period's rows of only as many numbers as can still reach the top.
 *
 * report_out_failures_number_idx (number, cust_nr, day): a number's days of a customer (the
 * period's counts of the candidates, and the reasons of the top numbers), or of every customer
 * (operators). Without cust_nr in it SQLite's planner prefers the unique key (cust_nr, day, …) for
 * a customer's query and reads the whole period: 158 ms instead of 4 ms for 200 numbers over a
 * month of a million faxes (no ANALYZE statistics; docs/benchmarks.md).
 *
 * The backfill is set-based: one INSERT … SELECT … GROUP BY per kind of row.
 */
import { sql, type Kysely } from "kysely";
import type { MigrationDialect } from "./migration-dialect.ts";

export async function up(db: Kysely<unknown>, t: MigrationDialect): Promise<void> {
  await db.schema
    .createTable("report_out_failing_numbers")
    .addColumn("cust_nr", "text", (c) => c.notNull())
    .addColumn("number", "text", (c) => c.notNull())
    .addColumn("country", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("faxes", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("first_day", t.timestamp, (c) => c.notNull())
    .addColumn("last_day", t.timestamp, (c) => c.notNull())
    .addUniqueConstraint("report_out_failing_numbers_key", ["cust_nr", "number"])
    .execute();
  await db.schema.createIndex("report_out_failing_numbers_top_idx").on("report_out_failing_numbers").columns(["cust_nr", "faxes desc", "number"]).execute();
  await db.schema.createIndex("report_out_failures_number_idx").on("report_out_failures").columns(["number", "cust_nr", "day"]).execute();

  // Backfill: each customer's numbers, then every customer's.
  await sql`
    insert into report_out_failing_numbers (cust_nr, number, country, faxes, attempts, first_day, last_day)
    select cust_nr, number, max(country), sum(faxes), sum(attempts), min(day), max(day)
    from report_out_failures
    where cust_nr <> ''
    group by cust_nr, number`.execute(db);
  await sql`
    insert into report_out_failing_numbers (cust_nr, number, country, faxes, attempts, first_day, last_day)
    select '', number, max(country), sum(faxes), sum(attempts), min(first_day), max(last_day)
    from report_out_failing_numbers
    where cust_nr <> ''
    group by number`.execute(db);
}

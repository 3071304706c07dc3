/**
 * 0025: the reporting interface (src/reporting/, docs/reporting.md).
 *
 * Columns the usage records need:
 *  - jobs.source: how the job came in, the provider's `accountService` (API; M2F for
 *    mail-to-fax). Existing jobs came through the API.
 *  - attempts.trunk: the SIP trunk the call went out on (null: the test line, or no call placed);
 *    attempts.country: ISO alpha-3 of the number dialled (numbers/country-of-number.ts), set when
 *    the attempt starts, so that usage records filter by it in SQL.
 *  - received_faxes.received_datacenter: the data center that received the fax (an adoption moves
 *    `datacenter`, never this); received_faxes.accounting_service: F2Mail, F2WS, F2WSPull … (the
 *    delivery the reception was queued for).
 *  - rolled_up (attempts, recipients, received_faxes): 1 once the row is counted in the daily
 *    rollups. Written in the transaction that ends the row, so a row is counted once; rows of
 *    before this migration are 0 and the rollup sweep counts them (the backfill).
 *
 * The daily rollups (store/queries/report-rollups.ts): one row per UTC day and combination of
 * the dimensions, the measures summed. Dimensions never hold NULL (an empty string instead), so
 * that one unique key serves the upserts of both dialects.
 *  - report_out_faxes: outbound faxes (recipients) on the day they ended;
 *  - report_out_calls: outbound calls (attempts) on the day they ended;
 *  - report_out_failures: failed faxes by destination number, for "top failing destinations";
 *  - report_in_faxes: receptions on the day they arrived.
 */
import { sql, type CreateTableBuilder, type Kysely } from "kysely";
import type { MigrationDialect } from "./migration-dialect.ts";

export async function up(db: Kysely<unknown>, t: MigrationDialect): Promise<void> {
  await db.schema.alterTable("jobs").addColumn("source", "text", (c) => c.notNull().defaultTo("API")).execute();
  await db.schema.alterTable("attempts").addColumn("trunk", "text").execute();
  await db.schema.alterTable("attempts").addColumn("country", "text").execute();
  await db.schema.alterTable("attempts").addColumn("rolled_up", "integer", (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable("recipients").addColumn("rolled_up", "integer", (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable("received_faxes").addColumn("received_datacenter", "text").execute();
  await db.schema.alterTable("received_faxes").addColumn("accounting_service", "text").execute();
  await db.schema.alterTable("received_faxes").addColumn("rolled_up", "integer", (c) => c.notNull().defaultTo(0)).execute();

  // Usage records by time use attempts_ended_idx (migration 0007) and received_faxes_received_idx (0008).
  // What the rollup sweep still has to count: few rows (open ones and those of before 0025).
  await db.schema.createIndex("attempts_unrolled_idx").on("attempts").column("recipient_id").where(sql.ref("rolled_up"), "=", 0).execute();
  await db.schema.createIndex("recipients_unrolled_idx").on("recipients").column("job_id").where(sql.ref("rolled_up"), "=", 0).execute();
  await db.schema.createIndex("received_faxes_unrolled_idx").on("received_faxes").column("received_at").where(sql.ref("rolled_up"), "=", 0).execute();

  const dims = (table: string, columns: string[]): CreateTableBuilder<string, string> => {
    let builder: CreateTableBuilder<string, string> = db.schema.createTable(table).addColumn("day", t.timestamp, (c) => c.notNull());
    for (const column of columns) builder = builder.addColumn(column, "text", (c) => c.notNull().defaultTo(""));
    return builder;
  };
  const measure = (name: string) => [name, "integer"] as const;

  let outFaxes = dims("report_out_faxes", ["cust_nr", "login", "datacenter", "service", "country", "status", "reason"]);
  for (const [name, type] of [measure("faxes"), measure("pages"), measure("attempts"), measure("line_secs")]) outFaxes = outFaxes.addColumn(name, type, (c) => c.notNull().defaultTo(0));
  await outFaxes.addUniqueConstraint("report_out_faxes_key", ["cust_nr", "day", "login", "datacenter", "service", "country", "status", "reason"]).execute();

  let outCalls = dims("report_out_calls", ["cust_nr", "login", "datacenter", "service", "country", "trunk", "result", "reason"]);
  for (const [name, type] of [measure("calls"), measure("connected"), measure("pages"), measure("line_secs")]) outCalls = outCalls.addColumn(name, type, (c) => c.notNull().defaultTo(0));
  await outCalls.addUniqueConstraint("report_out_calls_key", ["cust_nr", "day", "login", "datacenter", "service", "country", "trunk", "result", "reason"]).execute();

  let outFailures = dims("report_out_failures", ["cust_nr", "login", "datacenter", "service", "number", "country", "reason"]);
  for (const [name, type] of [measure("faxes"), measure("attempts")]) outFailures = outFailures.addColumn(name, type, (c) => c.notNull().defaultTo(0));
  await outFailures.addUniqueConstraint("report_out_failures_key", ["cust_nr", "day", "login", "datacenter", "service", "number", "country", "reason"]).execute();

  let inFaxes = dims("report_in_faxes", ["cust_nr", "topic", "datacenter", "service", "country", "status", "reason"]);
  for (const [name, type] of [measure("faxes"), measure("pages"), measure("line_secs")]) inFaxes = inFaxes.addColumn(name, type, (c) => c.notNull().defaultTo(0));
  await inFaxes.addUniqueConstraint("report_in_faxes_key", ["cust_nr", "day", "topic", "datacenter", "service", "country", "status", "reason"]).execute();

  // Operators read every customer's days at once.
  for (const table of ["report_out_faxes", "report_out_calls", "report_out_failures", "report_in_faxes"]) {
    await db.schema.createIndex(`${table}_day_idx`).on(table).column("day").execute();
  }
}

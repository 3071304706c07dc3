/**
 * 0042: how each received page came through the line (issue 31 item 4; line/sip-fax-line/
 * fax-reception.ts `PageQuality`): received_faxes.page_quality, JSON text of one object per page
 * (page, badRows, longestBadRowRun, bitRate, ecmRetries, retrains); null for receptions of before
 * this migration, of the test line, and those stored from the spool after a restart.
 */
import type { Kysely } from "kysely";
import type { MigrationDialect } from "./migration-dialect.ts";

export async function up(db: Kysely<unknown>, _t: MigrationDialect): Promise<void> {
  await db.schema.alterTable("received_faxes").addColumn("page_quality", "text").execute();
}

/**
 * 0011: jobs.cancelled_by, the login that cancelled the job (scheduler/cancel-job.ts), null for a
 * job never cancelled. A call that was running when its job was cancelled ends with its own
 * outcome and is not retried: its report then says so, and who cancelled, rather than that the
 * job's validity ended (cancelling closes the validity window to stop the retries).
 */
import type { Kysely } from "kysely";
import type { MigrationDialect } from "./migration-dialect.ts";

export async function up(db: Kysely<unknown>, _t: MigrationDialect): Promise<void> {
  await db.schema.alterTable("jobs").addColumn("cancelled_by", "text").execute();
}

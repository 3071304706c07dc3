/**
 * Retention, in two data classes (svix and Postal style: content first, then the record):
 *  1. Documents: a completed job's document bytes are no longer needed once every recipient is
 *     final; they are deleted right after completion (`documents_purged_at` is set).
 *  2. Reports: a completed job, with its recipients and attempts, is deleted once its
 *     customer's retention period (customers.retention_days, else retention.defaultDays) has
 *     passed since completion.
 * Each statement touches at most `batchSize` rows, and the caller yields between batches, so
 * purging never holds the store for long and the API stays responsive.
 */
import type { Kysely } from "kysely";
import type { Database } from "../store/database.ts";
import { deleteJobs } from "../store/queries/job-reports.ts";

export interface PurgeOptions {
  datacenter: string;
  now: number;
  defaultRetentionDays: number;
  batchSize: number;
}

const DAY_MS = 86_400_000;

/** Deletes document bytes of up to batchSize completed jobs; returns how many jobs. */
export async function purgeCompletedDocuments(db: Kysely<Database>, options: PurgeOptions): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const jobs = await trx
      .selectFrom("jobs")
      .select("id")
      .where("datacenter", "=", options.datacenter)
      .where("state", "=", "completed")
      .where("documents_purged_at", "is", null)
      .limit(options.batchSize)
      .execute();
    if (jobs.length === 0) return 0;
    const ids = jobs.map((j) => j.id);
    await trx.deleteFrom("job_documents").where("job_id", "in", ids).execute();
    await trx.updateTable("jobs").set({ documents_purged_at: options.now }).where("id", "in", ids).execute();
    return ids.length;
  });
}

/** Deletes up to batchSize reports past their customer's retention; returns how many. */
export async function purgeExpiredReports(db: Kysely<Database>, options: PurgeOptions): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const customers = await trx.selectFrom("customers").select(["cust_nr", "retention_days"]).where("retention_days", "is not", null).execute();
    let purged = 0;
    // Customers with their own period first, then everyone else on the default.
    for (const c of customers) {
      if (purged >= options.batchSize) break;
      const cutoff = options.now - c.retention_days! * DAY_MS;
      const rows = await trx
        .selectFrom("jobs")
        .select("id")
        .where("datacenter", "=", options.datacenter)
        .where("cust_nr", "=", c.cust_nr)
        .where("completed_at", "<", cutoff)
        .limit(options.batchSize - purged)
        .execute();
      await deleteJobs(trx, rows.map((r) => r.id));
      purged += rows.length;
    }
    if (purged < options.batchSize) {
      const cutoff = options.now - options.defaultRetentionDays * DAY_MS;
      const custom = customers.map((c) => c.cust_nr);
      let query = trx
        .selectFrom("jobs")
        .select("id")
        .where("datacenter", "=", options.datacenter)
        .where("completed_at", "<", cutoff)
        .limit(options.batchSize - purged);
      if (custom.length > 0) query = query.where("cust_nr", "not in", custom);
      const rows = await query.execute();
      await deleteJobs(trx, rows.map((r) => r.id));
      purged += rows.length;
    }
    return purged;
  });
}

/**
 * Copies a whole store into an empty one (`faxline store copy --to postgres://…`): accounts,
 * settings, templates, the do-not-fax list, the capability cache, jobs with their documents,
 * recipients, attempts and fax images, and the notification outbox with its delivery log.
 * The node registry and the singleton leases are not copied: they describe running processes;
 * nor are console sessions (people sign in again on the new store).
 *
 * Tables are copied parents first (foreign keys), each streamed from the source and inserted in
 * batches, all in one transaction on the target: a copy that fails leaves the target empty.
 * Afterwards the row count of every table is compared; `verified` is false if any differs.
 *
 * Dialect-agnostic: it reads and writes through Kysely on both sides.
 */
import type { Kysely } from "kysely";
import type { Database } from "./database.ts";
import type { Store } from "./store.ts";

/** Copied tables, parents before children. */
export const COPIED_TABLES = [
  "customers",
  "logins",
  "customer_templates",
  "inbound_topics",
  "inbound_numbers",
  "inbound_sftp_deliveries",
  "inbound_credentials",
  // The configuration API (migration 0030): inbound settings of customers and numbers, and its audit log.
  "inbound_customer_settings",
  "inbound_number_settings",
  "config_audit",
  "blacklist",
  "destination_capabilities",
  "jobs",
  "job_adoptions",
  "datacenter_adoptions",
  "job_documents",
  "recipients",
  "fax_images",
  "attempts",
  "notifications",
  "notification_attempts",
  "received_faxes",
  // The reporting rollups (migration 0025): they hold the counts of rows purged long ago.
  "report_out_faxes",
  "report_out_calls",
  "report_out_failures",
  "report_in_faxes",
  // Failed faxes per destination (migration 0043), kept with report_out_failures.
  "report_out_failing_numbers",
] as const satisfies readonly (keyof Database)[];

export type CopiedTable = (typeof COPIED_TABLES)[number];

/** Tables whose rows carry document or image bytes: copied in small batches. */
const BLOB_TABLES = new Set<CopiedTable>(["job_documents", "fax_images", "received_faxes"]);

export interface TableCopy {
  table: CopiedTable;
  source: number;
  target: number;
}

export interface CopyResult {
  tables: TableCopy[];
  verified: boolean;
}

export class StoreNotEmptyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreNotEmptyError";
  }
}

async function countRows(db: Kysely<Database>, table: CopiedTable): Promise<number> {
  const row = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The tables of `store` that hold rows (the target of a copy must have none). */
export async function nonEmptyTables(store: Store): Promise<string[]> {
  const out: string[] = [];
  for (const table of COPIED_TABLES) if ((await countRows(store.db, table)) > 0) out.push(table);
  return out;
}

export async function copyStore(source: Store, target: Store, options: { onProgress?: (table: CopiedTable, rows: number) => void } = {}): Promise<CopyResult> {
  const filled = await nonEmptyTables(target);
  if (filled.length > 0) {
    throw new StoreNotEmptyError(`The target store ${target.location} is not empty (rows in ${filled.join(", ")}); copy into a new, empty database`);
  }
  await target.db.transaction().execute(async (trx) => {
    for (const table of COPIED_TABLES) {
      const batchSize = BLOB_TABLES.has(table) ? 20 : 500;
      let batch: Record<string, unknown>[] = [];
      let copied = 0;
      const flush = async () => {
        if (batch.length === 0) return;
        await trx.insertInto(table).values(batch as never).execute();
        copied += batch.length;
        batch = [];
        options.onProgress?.(table, copied);
      };
      for await (const row of source.db.selectFrom(table).selectAll().stream(batchSize)) {
        batch.push(row as Record<string, unknown>);
        if (batch.length >= batchSize) await flush();
      }
      await flush();
    }
  });
  const tables: TableCopy[] = [];
  for (const table of COPIED_TABLES) tables.push({ table, source: await countRows(source.db, table), target: await countRows(target.db, table) });
  return { tables, verified: tables.every((t) => t.source === t.target) };
}

/**
 * 0045: jobs.suppress_blank_pages (1 | 0): the job's blank document pages are left out of its fax
 * (render/preflight/blank-page.ts; render/render-fax-job.ts). Set by the mail-to-fax intake from
 * the sender's effective `fax.suppressBlankPages` (mail-to-fax/settings.ts); jobs of the REST API
 * and jobs accepted before this migration have 0: every page is sent.
 */
import type { Kysely } from "kysely";
import type { MigrationDialect } from "./migration-dialect.ts";

export async function up(db: Kysely<unknown>, _t: MigrationDialect): Promise<void> {
  await db.schema
    .alterTable("jobs")
    .addColumn("suppress_blank_pages", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
}

/**
 * 0009: jobs.tone_mode, the job's renderingOptions.toneMode (Faxline extension: AUTO, TEXT, PHOTO
 * or THRESHOLD, how its pages become black and white; render/fax-image/encode-fax-page.ts). Null
 * for jobs accepted before it existed (and, since 0010, for jobs that give none until they are
 * rendered): the customer's default tone mode, else AUTO.
 */
import type { Kysely } from "kysely";
import type { MigrationDialect } from "./migration-dialect.ts";

export async function up(db: Kysely<unknown>, _t: MigrationDialect): Promise<void> {
  await db.schema.alterTable("jobs").addColumn("tone_mode", "text").execute();
}

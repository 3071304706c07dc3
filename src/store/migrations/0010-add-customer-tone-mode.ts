/**
 * 0010: customers.default_tone_mode, the tone mode (AUTO, TEXT, PHOTO, THRESHOLD;
 * render/fax-image/tone-mode.ts) for the customer's jobs that give no renderingOptions.toneMode.
 * Null: AUTO. Set with `faxline accounts set-tone-mode` or in the console's settings.
 */
import type { Kysely } from "kysely";
import type { MigrationDialect } from "./migration-dialect.ts";

export async function up(db: Kysely<unknown>, _t: MigrationDialect): Promise<void> {
  await db.schema.alterTable("customers").addColumn("default_tone_mode", "text").execute();
}

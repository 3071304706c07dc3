/**
 * 0044: what a receiver tells a caller besides "wrong number" (issue 31 item 4; src/inbound/
 * inbound-settings.ts):
 *  - `paused` (1 | 0 | null: not set) on each level of customer → profile → number: a paused
 *    number answers callers 480 Temporarily Unavailable, so their fax machines try again later
 *    (an inactive one answers 404, a wrong number, and they give up);
 *  - inbound_topics.max_waiting: the most received faxes that may wait for the customer (neither
 *    acknowledged through the pull API nor delivered; null: no limit); while that many wait, the
 *    profile's numbers answer callers 486 Busy Here.
 */
import type { Kysely } from "kysely";
import type { MigrationDialect } from "./migration-dialect.ts";

export async function up(db: Kysely<unknown>, _t: MigrationDialect): Promise<void> {
  for (const table of ["inbound_customer_settings", "inbound_topics", "inbound_number_settings"]) {
    await db.schema.alterTable(table).addColumn("paused", "integer").execute();
  }
  await db.schema.alterTable("inbound_topics").addColumn("max_waiting", "integer").execute();
}

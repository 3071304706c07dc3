/**
 * The capability cache: per E.164 destination, the fax settings that last worked and the
 * fallback step that last failed (line/outcomes/fallback-ladder.ts decides from them).
 *  - worked_*: transport (t38 | g711), ECM (0/1) and highest bit rate offered of the last
 *    delivered call, the bit rate it ran at, and when;
 *  - failed_*: the same for the last protocol-class failure since, its reason code, and how many
 *    came in a row;
 *  - t38_refused_at: when the far end last refused our T.38 re-INVITE.
 * Shared by every job and every node of the store: it is the remote machine that is difficult.
 */
import type { Kysely } from "kysely";
import type { MigrationDialect } from "./migration-dialect.ts";

export async function up(db: Kysely<unknown>, t: MigrationDialect): Promise<void> {
  await db.schema
    .createTable("destination_capabilities")
    .addColumn("e164", "text", (c) => c.primaryKey())
    .addColumn("worked_transport", "text")
    .addColumn("worked_ecm", "integer")
    .addColumn("worked_max_bit_rate", "integer")
    .addColumn("worked_bit_rate", "integer")
    .addColumn("worked_at", t.timestamp)
    .addColumn("failed_transport", "text")
    .addColumn("failed_ecm", "integer")
    .addColumn("failed_max_bit_rate", "integer")
    .addColumn("failed_at", t.timestamp)
    .addColumn("failed_reason", "text")
    .addColumn("failures_in_row", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("t38_refused_at", t.timestamp)
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  // Retention purges entries nobody has called for a long time.
  await db.schema.createIndex("destination_capabilities_updated_at").on("destination_capabilities").column("updated_at").execute();
}

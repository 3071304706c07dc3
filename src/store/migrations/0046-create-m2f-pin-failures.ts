/**
 * 0046: wrong mail-to-fax PINs, kept in the store (src/store/queries/mail-to-fax.ts
 * `recordWrongPin`), so that a lockout holds on every mail-to-fax node of the region and across
 * restarts (it was one node's memory). One row per client address and envelope sender:
 * `failures` within the lockout period, `locked_until` once mailToFax.pinMaxFailures is reached;
 * the retention role removes rows whose period has passed.
 */
import type { Kysely } from "kysely";
import type { MigrationDialect } from "./migration-dialect.ts";

export async function up(db: Kysely<unknown>, t: MigrationDialect): Promise<void> {
  await db.schema
    .createTable("m2f_pin_failures")
    .addColumn("remote", "text", (c) => c.notNull())
    .addColumn("sender", "text", (c) => c.notNull())
    .addColumn("failures", "integer", (c) => c.notNull())
    .addColumn("locked_until", t.timestamp)
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint("m2f_pin_failures_pk", ["remote", "sender"])
    .execute();
  await db.schema.createIndex("m2f_pin_failures_updated_idx").on("m2f_pin_failures").column("updated_at").execute();
}

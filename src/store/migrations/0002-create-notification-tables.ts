/**
 * 0002: what notifications and rendered fax images need.
 *  - customers gain the account settings for status push (default URL, format, extra events,
 *    OAuth2 token URL, signing secrets) and a default fax header;
 *  - customer_templates: operator-installed templates per customer (push layouts, mail parts,
 *    later cover pages and overlays), by kind and name;
 *  - job_fax_images: the rendered fax image of a job (TIFF-F, CCITT G4), kept with the report
 *    so that status mails can attach it after the documents are purged;
 *  - notifications: the outbox. A row is written in the same transaction as the state change
 *    it reports (job completed, ...), carries a snapshot of the report, and is delivered at
 *    least once by the notifier role;
 *  - notification_attempts: the delivery log, one row per try.
 * Notifications deliberately have no foreign key to jobs: a client may delete a report before
 * its push has gone out, and the push must still go out.
 */
import type { Kysely } from "kysely";
import type { MigrationDialect } from "./migration-dialect.ts";

export async function up(db: Kysely<unknown>, t: MigrationDialect): Promise<void> {
  await db.schema.alterTable("customers").addColumn("push_url", "text").execute();
  await db.schema.alterTable("customers").addColumn("push_format", "text").execute();
  await db.schema.alterTable("customers").addColumn("push_events", "text").execute();
  await db.schema.alterTable("customers").addColumn("oauth2_token_url", "text").execute();
  await db.schema.alterTable("customers").addColumn("signing_secrets", "text").execute();
  await db.schema.alterTable("customers").addColumn("default_header", "text").execute();

  await db.schema
    .createTable("customer_templates")
    .addColumn("cust_nr", "text", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("content_type", "text", (c) => c.notNull())
    .addColumn("content", "text", (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint("customer_templates_pk", ["cust_nr", "kind", "name"])
    .execute();

  await db.schema
    .createTable("job_fax_images")
    .addColumn("job_id", "text", (c) => c.primaryKey().references("jobs.id").onDelete("cascade"))
    .addColumn("format", "text", (c) => c.notNull())
    .addColumn("content", t.blob, (c) => c.notNull())
    .addColumn("pages", "integer", (c) => c.notNull())
    .addColumn("size_bytes", "integer", (c) => c.notNull())
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("notifications")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("job_id", "text", (c) => c.notNull())
    .addColumn("cust_nr", "text", (c) => c.notNull())
    .addColumn("datacenter", "text", (c) => c.notNull())
    .addColumn("channel", "text", (c) => c.notNull())
    .addColumn("event", "text", (c) => c.notNull())
    .addColumn("target", "text", (c) => c.notNull())
    .addColumn("receiver", "text", (c) => c.notNull())
    .addColumn("auth", "text")
    .addColumn("payload", "text", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("schedule_step", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("next_attempt_at", t.timestamp, (c) => c.notNull())
    .addColumn("locked_by", "text")
    .addColumn("lease_until", t.timestamp)
    .addColumn("last_error", "text")
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("finished_at", t.timestamp)
    .execute();
  await db.schema
    .createIndex("notifications_due_idx")
    .on("notifications")
    .columns(["datacenter", "state", "next_attempt_at"])
    .execute();
  await db.schema.createIndex("notifications_job_idx").on("notifications").columns(["job_id", "created_at"]).execute();

  await db.schema
    .createTable("notification_attempts")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("notification_id", "text", (c) => c.notNull().references("notifications.id").onDelete("cascade"))
    .addColumn("attempt_no", "integer", (c) => c.notNull())
    .addColumn("node", "text", (c) => c.notNull())
    .addColumn("started_at", t.timestamp, (c) => c.notNull())
    .addColumn("duration_ms", "integer", (c) => c.notNull())
    .addColumn("outcome", "text", (c) => c.notNull())
    .addColumn("status_code", "integer")
    .addColumn("error", "text")
    .addColumn("response_excerpt", "text")
    .addUniqueConstraint("notification_attempts_no_uq", ["notification_id", "attempt_no"])
    .execute();
}

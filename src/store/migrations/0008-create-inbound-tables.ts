/**
 * 0008: receiving faxes (src/inbound/; docs/inbound-api.md).
 *  - inbound_topics: a customer's topics (the unit clients poll); how long their faxes are kept,
 *    and where each reception is delivered besides the pull API (e-mail, a web service).
 *  - inbound_numbers: the fax numbers (DIDs, E.164) that belong to a topic; one topic each.
 *  - inbound_credentials: passwords for the pull API, issued per customer (user name: the customer
 *    number), optionally limited to some topics; only a scrypt hash is stored.
 *  - received_faxes: every reception, complete, partial or failed, with its image (TIFF-F) and
 *    the pull state: `locked_until` (handed out, hidden until then), `acknowledged_at` (never
 *    handed out again), `purged_at` (image deleted after the topic's retention).
 */
import type { Kysely } from "kysely";
import type { MigrationDialect } from "./migration-dialect.ts";

export async function up(db: Kysely<unknown>, t: MigrationDialect): Promise<void> {
  await db.schema
    .createTable("inbound_topics")
    .addColumn("cust_nr", "text", (c) => c.notNull().references("customers.cust_nr").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("retention_days", "integer")
    /** Fax-to-email: JSON array of addresses each reception is mailed to, or null. */
    .addColumn("mail_to", "text")
    /** PDF | TIFF | NONE: what the mail attaches. */
    .addColumn("mail_attachment", "text")
    /** Fax-to-webservice: the URL each reception's notice is posted to, or null. */
    .addColumn("push_url", "text")
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint("inbound_topics_pk", ["cust_nr", "name"])
    .execute();

  await db.schema
    .createTable("inbound_numbers")
    .addColumn("e164", "text", (c) => c.primaryKey())
    .addColumn("cust_nr", "text", (c) => c.notNull())
    .addColumn("topic", "text", (c) => c.notNull())
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addForeignKeyConstraint("inbound_numbers_topic_fk", ["cust_nr", "topic"], "inbound_topics", ["cust_nr", "name"], (fk) => fk.onDelete("cascade"))
    .execute();
  await db.schema.createIndex("inbound_numbers_topic_idx").on("inbound_numbers").columns(["cust_nr", "topic"]).execute();

  await db.schema
    .createTable("inbound_credentials")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("cust_nr", "text", (c) => c.notNull().references("customers.cust_nr").onDelete("cascade"))
    .addColumn("label", "text")
    .addColumn("password_hash", "text", (c) => c.notNull())
    /** JSON array of topic names, or null for every topic of the customer. */
    .addColumn("topics", "text")
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("disabled_at", t.timestamp)
    .execute();
  await db.schema.createIndex("inbound_credentials_customer_idx").on("inbound_credentials").column("cust_nr").execute();

  await db.schema
    .createTable("received_faxes")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("cust_nr", "text", (c) => c.notNull())
    .addColumn("topic", "text", (c) => c.notNull())
    .addColumn("datacenter", "text", (c) => c.notNull())
    .addColumn("to_number", "text", (c) => c.notNull())
    .addColumn("from_number", "text")
    .addColumn("remote_csid", "text")
    .addColumn("pages", "integer", (c) => c.notNull())
    .addColumn("pages_announced", "integer")
    .addColumn("resolution", "text")
    .addColumn("transport", "text")
    .addColumn("bit_rate", "integer")
    .addColumn("duration_secs", "integer", (c) => c.notNull())
    /** OK | PARTIAL | FAILED */
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("reason_code", "text")
    .addColumn("raw_cause", "text")
    .addColumn("received_at", t.timestamp, (c) => c.notNull())
    .addColumn("image", t.blob)
    .addColumn("image_bytes", "integer", (c) => c.notNull())
    .addColumn("locked_until", t.timestamp)
    .addColumn("handed_out", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("acknowledged_at", t.timestamp)
    .addColumn("purged_at", t.timestamp)
    /** The job whose call this was, when a test account faxed its own number (src/inbound/loopback-reception.ts). */
    .addColumn("source_job_id", "text")
    .execute();
  await db.schema.createIndex("received_faxes_pull_idx").on("received_faxes").columns(["cust_nr", "topic", "acknowledged_at", "received_at"]).execute();
  await db.schema.createIndex("received_faxes_received_idx").on("received_faxes").column("received_at").execute();
  await db.schema.createIndex("received_faxes_console_idx").on("received_faxes").columns(["cust_nr", "received_at", "id"]).execute();
}

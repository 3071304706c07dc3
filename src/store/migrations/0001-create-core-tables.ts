/**
 * 0001: customers, logins, jobs, documents, recipients, attempts, blacklist.
 * Migrations are numbered and never edited once released; a change is a new file.
 */
import type { Kysely } from "kysely";
import type { MigrationDialect } from "./migration-dialect.ts";

export async function up(db: Kysely<unknown>, t: MigrationDialect): Promise<void> {
  await db.schema
    .createTable("customers")
    .addColumn("cust_nr", "text", (c) => c.primaryKey())
    .addColumn("retention_days", "integer")
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("logins")
    .addColumn("login", "text", (c) => c.primaryKey())
    .addColumn("cust_nr", "text", (c) => c.notNull().references("customers.cust_nr"))
    .addColumn("password_hash", "text", (c) => c.notNull())
    .addColumn("is_test", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("ip_allow_list", "text")
    .addColumn("disabled_at", t.timestamp)
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("jobs")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("cust_nr", "text", (c) => c.notNull())
    .addColumn("login", "text", (c) => c.notNull())
    .addColumn("region", "text", (c) => c.notNull())
    .addColumn("datacenter", "text", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("is_test", "integer", (c) => c.notNull())
    .addColumn("is_express", "integer", (c) => c.notNull())
    .addColumn("blacklist_check", "integer", (c) => c.notNull())
    .addColumn("csid", "text")
    .addColumn("paper_format", "text", (c) => c.notNull())
    .addColumn("resolution", "text", (c) => c.notNull())
    .addColumn("header", "text")
    .addColumn("coverpage_template", "text")
    .addColumn("overlay_name", "text")
    .addColumn("overlay_mode", "text")
    .addColumn("customer_defined_id", "text")
    .addColumn("billing_code", "text")
    .addColumn("billing_info", "text")
    .addColumn("customer_reference", "text")
    .addColumn("status_report_options", "text")
    .addColumn("idempotency_key", "text")
    .addColumn("request_hash", "text")
    .addColumn("valid_from", t.timestamp, (c) => c.notNull())
    .addColumn("valid_until", t.timestamp, (c) => c.notNull())
    .addColumn("deadline_at", t.timestamp, (c) => c.notNull())
    .addColumn("pages", "integer")
    .addColumn("page_sizes", "text")
    .addColumn("render_attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("locked_by", "text")
    .addColumn("lease_until", t.timestamp)
    .addColumn("failure_code", "text")
    .addColumn("failure_detail", "text")
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("completed_at", t.timestamp)
    .addColumn("documents_purged_at", t.timestamp)
    .execute();
  await db.schema.createIndex("jobs_state_idx").on("jobs").columns(["datacenter", "state", "created_at"]).execute();
  await db.schema
    .createIndex("jobs_reports_idx")
    .on("jobs")
    .columns(["login", "datacenter", "completed_at", "id"])
    .execute();
  await db.schema.createIndex("jobs_completed_idx").on("jobs").columns(["completed_at"]).execute();
  await db.schema
    .createIndex("jobs_idempotency_idx")
    .on("jobs")
    .columns(["login", "idempotency_key"])
    .unique()
    .execute();

  await db.schema
    .createTable("job_documents")
    .addColumn("job_id", "text", (c) => c.notNull().references("jobs.id").onDelete("cascade"))
    .addColumn("ordinal", "integer", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("charset", "text")
    .addColumn("reference_url", "text")
    .addColumn("content", t.blob)
    .addColumn("size_bytes", "integer")
    .addPrimaryKeyConstraint("job_documents_pk", ["job_id", "ordinal"])
    .execute();

  await db.schema
    .createTable("recipients")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("job_id", "text", (c) => c.notNull().references("jobs.id").onDelete("cascade"))
    .addColumn("ordinal", "integer", (c) => c.notNull())
    .addColumn("datacenter", "text", (c) => c.notNull())
    .addColumn("is_express", "integer", (c) => c.notNull())
    .addColumn("number", "text", (c) => c.notNull())
    .addColumn("alternative_numbers", "text")
    .addColumn("properties", "text")
    .addColumn("dial_targets", "text", (c) => c.notNull())
    .addColumn("target_index", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("dead_targets", "text", (c) => c.notNull().defaultTo("[]"))
    .addColumn("current_e164", "text")
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("run_at", t.timestamp, (c) => c.notNull())
    .addColumn("attempt_count", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("retries_used", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("locked_by", "text")
    .addColumn("lease_until", t.timestamp)
    .addColumn("status", "text")
    .addColumn("reason_code", "text")
    .addColumn("reason_text", "text")
    .addColumn("sent_at", t.timestamp)
    .addColumn("duration_secs", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("sent_to_number", "text")
    .addColumn("remote_csid", "text")
    .addColumn("pages_sent", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("finished_at", t.timestamp)
    .execute();
  await db.schema.createIndex("recipients_job_idx").on("recipients").columns(["job_id", "ordinal"]).execute();
  await db.schema
    .createIndex("recipients_due_idx")
    .on("recipients")
    .columns(["datacenter", "state", "is_express", "run_at"])
    .execute();
  await db.schema.createIndex("recipients_destination_idx").on("recipients").columns(["current_e164", "state"]).execute();

  await db.schema
    .createTable("attempts")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("recipient_id", "text", (c) => c.notNull().references("recipients.id").onDelete("cascade"))
    .addColumn("job_id", "text", (c) => c.notNull())
    .addColumn("attempt_no", "integer", (c) => c.notNull())
    .addColumn("e164", "text", (c) => c.notNull())
    .addColumn("dial_string", "text", (c) => c.notNull())
    .addColumn("node", "text", (c) => c.notNull())
    .addColumn("started_at", t.timestamp, (c) => c.notNull())
    .addColumn("ended_at", t.timestamp)
    .addColumn("result", "text", (c) => c.notNull())
    .addColumn("reason_code", "text")
    .addColumn("raw_cause", "text")
    .addColumn("pages_sent", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("duration_secs", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("remote_csid", "text")
    .addUniqueConstraint("attempts_recipient_no_uq", ["recipient_id", "attempt_no"])
    .execute();

  await db.schema
    .createTable("blacklist")
    .addColumn("e164", "text", (c) => c.primaryKey())
    .addColumn("note", "text")
    .addColumn("added_at", t.timestamp, (c) => c.notNull())
    .execute();
}

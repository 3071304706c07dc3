/**
 * 0007: the web console (src/console/).
 *  - console_sessions: one row per signed-in browser. The cookie holds a random token; the row is
 *    keyed by its SHA-256, so a copy of the table signs nobody in. Any node of the region can
 *    serve a session. `csrf_token` must come back in the X-CSRF-Token header of every change.
 *  - logins.is_admin: 1 for operator logins, who see the console's Operations pages.
 *  - logins.is_manager: 1 for logins that may change their customer's settings in the console
 *    (push, signing, e-mail report, header, cover pages, retention) and their own IP allow-list.
 *    Existing logins are not managers: until now only operators changed these, with the CLI.
 *  - customers.report_mail: JSON {successAddress, failureAddress, attachedFaxImageMode,
 *    attachedFaxImageFormat}: the e-mail report a job gets when it asks for none itself.
 *  - attempts.transport (t38 | g711 | test) and attempts.bit_rate: what carried each call, for
 *    the job detail page.
 *  - nodes.calls_by_trunk: JSON [{trunk, transport, calls}] of the node's running calls at its last
 *    heartbeat, for the Operations page.
 *  - jobs_console_idx: the console's job list pages by (login, created_at, id), newest first;
 *    jobs_login_state_idx: a login's open jobs, which live updates compare each second;
 *    attempts_job_idx: a job's attempts for its detail page and live updates; attempts_ended_idx:
 *    the Operations page's failures of the last hour and day.
 */
import type { Kysely } from "kysely";
import type { MigrationDialect } from "./migration-dialect.ts";

export async function up(db: Kysely<unknown>, t: MigrationDialect): Promise<void> {
  await db.schema
    .createTable("console_sessions")
    .addColumn("token_hash", "text", (c) => c.primaryKey())
    .addColumn("login", "text", (c) => c.notNull().references("logins.login").onDelete("cascade"))
    .addColumn("csrf_token", "text", (c) => c.notNull())
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("last_seen_at", t.timestamp, (c) => c.notNull())
    .addColumn("expires_at", t.timestamp, (c) => c.notNull())
    .addColumn("client_address", "text")
    .execute();
  await db.schema.createIndex("console_sessions_expires_idx").on("console_sessions").column("expires_at").execute();
  await db.schema.createIndex("console_sessions_login_idx").on("console_sessions").column("login").execute();

  await db.schema.alterTable("logins").addColumn("is_admin", "integer", (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable("logins").addColumn("is_manager", "integer", (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable("customers").addColumn("report_mail", "text").execute();
  await db.schema.alterTable("nodes").addColumn("calls_by_trunk", "text").execute();
  await db.schema.alterTable("attempts").addColumn("transport", "text").execute();
  await db.schema.alterTable("attempts").addColumn("bit_rate", "integer").execute();
  await db.schema.createIndex("jobs_console_idx").on("jobs").columns(["login", "created_at", "id"]).execute();
  await db.schema.createIndex("jobs_login_state_idx").on("jobs").columns(["login", "state", "created_at"]).execute();
  await db.schema.createIndex("attempts_ended_idx").on("attempts").column("ended_at").execute();
  await db.schema.createIndex("attempts_job_idx").on("attempts").columns(["job_id", "started_at"]).execute();
}

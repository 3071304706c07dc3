/**
 * 0030: the configuration API (src/configuration/; docs/config-api.md; ADR 0017).
 *  - config_audit: every change made through the configuration API, one row each: who (login and
 *    role), when, which customer, which resource and key, the action, and the resource as JSON
 *    before and after (without secrets: a secret written shows as "(set)").
 *  - inbound_customer_settings: a customer's own inbound settings, the top of the hierarchy
 *    customer → profile → number: fax id (CSID), cost center, active. Null: not set (defaults).
 *  - inbound_topics gains the profile level of the same settings (fax_id, cost_center, active)
 *    and a comment: a topic is the API's inbound profile.
 *  - inbound_number_settings: a number of a customer with its own settings (display number,
 *    comment, fax id, cost center, active). A number with a row here but none in
 *    inbound_numbers belongs to the customer without a profile ("unassigned": callers get a
 *    wrong number); a number in inbound_numbers without a row here has no settings of its own.
 */
import type { Kysely } from "kysely";
import type { MigrationDialect } from "./migration-dialect.ts";

export async function up(db: Kysely<unknown>, t: MigrationDialect): Promise<void> {
  await db.schema
    .createTable("config_audit")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("cust_nr", "text", (c) => c.notNull())
    .addColumn("at", t.timestamp, (c) => c.notNull())
    .addColumn("actor_login", "text", (c) => c.notNull())
    /** manager | operator */
    .addColumn("actor_role", "text", (c) => c.notNull())
    /** e.g. inbound/numbers, inbound/profiles, inbound/settings */
    .addColumn("resource", "text", (c) => c.notNull())
    /** The resource's key (a number, a profile name); "" for the customer's settings. */
    .addColumn("resource_key", "text", (c) => c.notNull())
    /** create | update | delete */
    .addColumn("action", "text", (c) => c.notNull())
    .addColumn("before_json", "text")
    .addColumn("after_json", "text")
    .execute();
  await db.schema.createIndex("config_audit_customer_idx").on("config_audit").columns(["cust_nr", "at", "id"]).execute();

  await db.schema
    .createTable("inbound_customer_settings")
    .addColumn("cust_nr", "text", (c) => c.primaryKey().references("customers.cust_nr").onDelete("cascade"))
    .addColumn("fax_id", "text")
    .addColumn("cost_center", "text")
    /** 1 | 0 | null (not set: active) */
    .addColumn("active", "integer")
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();

  await db.schema.alterTable("inbound_topics").addColumn("fax_id", "text").execute();
  await db.schema.alterTable("inbound_topics").addColumn("cost_center", "text").execute();
  await db.schema.alterTable("inbound_topics").addColumn("active", "integer").execute();
  await db.schema.alterTable("inbound_topics").addColumn("comments", "text").execute();

  await db.schema
    .createTable("inbound_number_settings")
    .addColumn("e164", "text", (c) => c.primaryKey())
    .addColumn("cust_nr", "text", (c) => c.notNull().references("customers.cust_nr").onDelete("cascade"))
    .addColumn("display_number", "text")
    .addColumn("comments", "text")
    .addColumn("fax_id", "text")
    .addColumn("cost_center", "text")
    .addColumn("active", "integer")
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex("inbound_number_settings_customer_idx").on("inbound_number_settings").columns(["cust_nr", "e164"]).execute();
}

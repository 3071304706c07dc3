/**
 * 0035: mail-to-fax (src/mail-to-fax/, docs/mail-to-fax.md, ADR 0021).
 *
 * The provider's settings hierarchy for sending by e-mail: customer → profile → user, a lower
 * level overriding what it sets, the rest inherited (mail-to-fax/settings.ts). Each level keeps
 * its settings as one JSON object of the provider's groups (`general`, `fax`, `dialing`,
 * `reportEmail`, `coverSheet`, `personalization`), so that a new setting needs no migration.
 *  - m2f_customers: a customer that sends by mail: the login its mail-to-fax jobs are booked on
 *    (a test login's jobs go to the test line, as through the API) and its customer-level
 *    settings. Without a row here a customer's senders are refused.
 *  - m2f_profiles: named profiles of a customer.
 *  - m2f_users: the senders, by e-mail address (stored lower-case, unique over all customers:
 *    an address sends for one customer), with their profile (null: the customer's settings
 *    only), their own settings, an optional PIN (scrypt hash, accounts/passwords.ts) that the
 *    subject must then carry, and whether the user is active.
 *  - m2f_domains: sender domains a customer allows (unique over all customers): a sender of such
 *    a domain who is no user may send when the receiving relay's SPF/DKIM/DMARC results say the
 *    mail is from that domain, or with the domain's PIN in the subject.
 *  - jobs.mail_origin: JSON of the mail a job came from (its Message-ID, sender, subject and
 *    language), written with the job in one insert, for the threaded report mail; null for jobs
 *    of the API.
 */
import type { Kysely } from "kysely";
import type { MigrationDialect } from "./migration-dialect.ts";

export async function up(db: Kysely<unknown>, t: MigrationDialect): Promise<void> {
  await db.schema
    .createTable("m2f_customers")
    .addColumn("cust_nr", "text", (c) => c.primaryKey().references("customers.cust_nr").onDelete("cascade"))
    .addColumn("login", "text", (c) => c.notNull())
    .addColumn("settings", "text", (c) => c.notNull())
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("m2f_profiles")
    .addColumn("cust_nr", "text", (c) => c.notNull().references("customers.cust_nr").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("settings", "text", (c) => c.notNull())
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint("m2f_profiles_pkey", ["cust_nr", "name"])
    .execute();
  await db.schema
    .createTable("m2f_users")
    .addColumn("email", "text", (c) => c.primaryKey())
    .addColumn("cust_nr", "text", (c) => c.notNull().references("customers.cust_nr").onDelete("cascade"))
    .addColumn("profile", "text")
    .addColumn("active", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("pin_hash", "text")
    .addColumn("settings", "text", (c) => c.notNull())
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex("m2f_users_customer_idx").on("m2f_users").columns(["cust_nr", "email"]).execute();
  await db.schema
    .createTable("m2f_domains")
    .addColumn("domain", "text", (c) => c.primaryKey())
    .addColumn("cust_nr", "text", (c) => c.notNull().references("customers.cust_nr").onDelete("cascade"))
    .addColumn("pin_hash", "text")
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.alterTable("jobs").addColumn("mail_origin", "text").execute();
}

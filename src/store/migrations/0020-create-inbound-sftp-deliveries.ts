/**
 * 0020: fax-to-SFTP, a topic's delivery of each received fax to an SFTP server
 * (src/inbound/sftp-delivery-settings.ts; docs/notifications.md "Fax-to-SFTP").
 *  - inbound_sftp_deliveries: at most one per topic (cascades with it). The server (host, port),
 *    its pinned host keys (JSON array of OpenSSH SHA-256 fingerprints, `SHA256:…`), the login
 *    (user name with a private key, or a password), where and how files are written (directory,
 *    file name pattern, document format PDF|TIFF, metadata JSON|XML). A key given with a
 *    passphrase is stored decrypted (a passphrase stored beside its key would protect nothing).
 *    The secrets are stored as the store keeps push credentials and signing secrets: in their
 *    columns, never logged and never shown by the console or the CLI's listings.
 * Each reception queues a notification with channel `sftp`; the settings are read when it is
 * delivered, so a corrected key or directory lets the next try (or a redelivery) through.
 */
import type { Kysely } from "kysely";
import type { MigrationDialect } from "./migration-dialect.ts";

export async function up(db: Kysely<unknown>, t: MigrationDialect): Promise<void> {
  await db.schema
    .createTable("inbound_sftp_deliveries")
    .addColumn("cust_nr", "text", (c) => c.notNull())
    .addColumn("topic", "text", (c) => c.notNull())
    .addColumn("host", "text", (c) => c.notNull())
    .addColumn("port", "integer", (c) => c.notNull())
    .addColumn("username", "text", (c) => c.notNull())
    /** key | password */
    .addColumn("auth_method", "text", (c) => c.notNull())
    /** The private key (unencrypted OpenSSH or PEM text) when auth_method is key. Secret. */
    .addColumn("private_key", "text")
    /** The password when auth_method is password. Secret. */
    .addColumn("password", "text")
    /** JSON array of accepted host key fingerprints (`SHA256:` + unpadded base64). */
    .addColumn("host_keys", "text", (c) => c.notNull())
    /** Remote directory; "" is the login's directory. */
    .addColumn("directory", "text", (c) => c.notNull())
    .addColumn("file_pattern", "text", (c) => c.notNull())
    /** PDF | TIFF */
    .addColumn("document_format", "text", (c) => c.notNull())
    /** JSON | XML */
    .addColumn("metadata_format", "text", (c) => c.notNull())
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint("inbound_sftp_deliveries_pk", ["cust_nr", "topic"])
    .addForeignKeyConstraint("inbound_sftp_deliveries_topic_fk", ["cust_nr", "topic"], "inbound_topics", ["cust_nr", "name"], (fk) => fk.onDelete("cascade"))
    .execute();
}

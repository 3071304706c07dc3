/**
 * A topic's fax-to-SFTP delivery: the SFTP server each received fax of the topic is written to,
 * as a document (PDF or TIFF) and a metadata file (JSON or XML). One per topic, in
 * `inbound_sftp_deliveries` (migration 0020). The CLI (`faxline inbound topic set-sftp …`) and
 * the console's topic settings both change it through `setTopicSftpDelivery`.
 *
 * - The server's host key is pinned: the setting holds one or more SHA-256 fingerprints
 *   (`SHA256:…`, as `ssh-keygen -lf` prints them), and a server that presents another key is
 *   refused. There is no "trust on first use": the operator reads the fingerprint
 *   (`faxline inbound topic sftp-host-key`), confirms it with the server's administrator, and
 *   sets it.
 * - The login is a user name with a private key (OpenSSH, PEM or PuTTY format; an encrypted one
 *   with its passphrase, which is used once to decrypt it and not kept; or a new Ed25519 key
 *   made here) or with a password. Secrets are kept as the store keeps push credentials and
 *   signing secrets (in their columns); they are never logged, and `SftpDeliveryView` (what
 *   the CLI's listing and the console show) holds none: for a key it holds the public key line,
 *   which the server's administrator adds to authorized_keys.
 * - A change names only what it changes; the secrets stay unless a new one is given. Giving a
 *   password switches the login to the password (the key is dropped), giving a key switches to
 *   the key.
 */
import type { Kysely } from "kysely";
import { isIP } from "node:net";
import { AccountError } from "../accounts/accounts.ts";
import { checkFilePattern, checkRemoteDirectory, DEFAULT_FILE_PATTERN, FilePatternError } from "../notifications/sftp/sftp-file-names.ts";
import { ClientKeyError, clientPublicKey, newClientKey, normalizeFingerprint, readClientKey } from "../notifications/sftp/sftp-host-key.ts";
import { sftpTargetLabel, type SftpTarget } from "../notifications/sftp/send-sftp.ts";
import type { Database, InboundSftpDeliveriesTable } from "../store/database.ts";

export const SFTP_DOCUMENT_FORMATS = ["PDF", "TIFF"] as const;
export const SFTP_METADATA_FORMATS = ["JSON", "XML"] as const;
export type SftpDocumentFormat = (typeof SFTP_DOCUMENT_FORMATS)[number];
export type SftpMetadataFormat = (typeof SFTP_METADATA_FORMATS)[number];
const MAX_HOST_KEYS = 5;
const MAX_KEY_CHARS = 16 * 1024;

export interface SftpDeliveryChange {
  host?: string;
  port?: number;
  username?: string;
  /** A private key (text of the key file); switches the login to the key. */
  privateKey?: string;
  /** The passphrase of an encrypted privateKey (used to decrypt it; not kept). */
  keyPassphrase?: string | null;
  /** Make a new Ed25519 key pair and log in with it (its public key is in the returned view). */
  generateKey?: boolean;
  /** A password; switches the login to the password. */
  password?: string;
  /** The login the caller means; refused when the change does not make it so (e.g. "password" without a password on a key login). */
  authMethod?: string;
  /** Accepted host key fingerprints (replaces the list). */
  hostKeys?: readonly string[];
  directory?: string;
  filePattern?: string;
  documentFormat?: string;
  metadataFormat?: string;
}

/** What may be shown of a delivery: everything but its secrets. */
export interface SftpDeliveryView {
  host: string;
  port: number;
  username: string;
  authMethod: "key" | "password";
  /** For key logins: the public key line for the server's authorized_keys. */
  publicKey: string | null;
  hostKeys: string[];
  directory: string;
  filePattern: string;
  documentFormat: SftpDocumentFormat;
  metadataFormat: SftpMetadataFormat;
  /** `sftp://user@host:port/directory`, as the delivery log shows it. */
  target: string;
}

type Row = InboundSftpDeliveriesTable;

export function sftpDeliveryView(row: Row): SftpDeliveryView {
  let publicKey: string | null = null;
  if (row.auth_method === "key" && row.private_key !== null) {
    try {
      publicKey = clientPublicKey(row.private_key);
    } catch {
      publicKey = null; // a key that no longer reads: the delivery log says so at the next try
    }
  }
  return {
    host: row.host,
    port: row.port,
    username: row.username,
    authMethod: row.auth_method === "password" ? "password" : "key",
    publicKey,
    hostKeys: JSON.parse(row.host_keys) as string[],
    directory: row.directory,
    filePattern: row.file_pattern,
    documentFormat: row.document_format as SftpDocumentFormat,
    metadataFormat: row.metadata_format as SftpMetadataFormat,
    target: sftpTargetLabel(row),
  };
}

/** What a delivery try needs, secrets included (the notifier's use only). */
export function sftpTargetOf(row: Row): SftpTarget {
  return {
    host: row.host,
    port: row.port,
    username: row.username,
    auth: row.auth_method === "password" ? { method: "password", password: row.password ?? "" } : { method: "key", privateKey: row.private_key ?? "" },
    hostKeys: JSON.parse(row.host_keys) as string[],
    directory: row.directory,
  };
}

export function checkSftpHost(text: string): string {
  let host = text.trim();
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  if (host === "") throw new AccountError("The SFTP server's host name or address is needed");
  if (isIP(host) !== 0) return host;
  if (host.length > 253 || !/^[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*\.?$/.test(host)) {
    throw new AccountError(`"${text}" is not a host name or IP address (give only the host, e.g. sftp.example.com; the port and directory are settings of their own)`);
  }
  return host.replace(/\.$/, "").toLowerCase();
}

function checkPort(port: number): number {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new AccountError(`The SFTP port must be 1 to 65535, got ${port}`);
  return port;
}

function checkUsername(text: string): string {
  const name = text.trim();
  if (name === "" || name.length > 100 || /[\s\u0000-\u001f\u007f]/.test(name)) throw new AccountError("The SFTP user name must be 1 to 100 characters without spaces or control characters");
  return name;
}

function checkHostKeys(list: readonly string[]): string[] {
  const keys: string[] = [];
  for (const entry of list) {
    if (entry.trim() === "") continue;
    const fp = normalizeFingerprint(entry);
    if (fp === null) {
      throw new AccountError(
        `"${entry}" is not a SHA-256 host key fingerprint; give it as ssh-keygen -lf prints it (SHA256: and 43 characters), read with faxline inbound topic sftp-host-key and confirmed with the server's administrator`,
      );
    }
    if (!keys.includes(fp)) keys.push(fp);
  }
  if (keys.length === 0) throw new AccountError("The SFTP server's host key fingerprint is needed (faxline inbound topic sftp-host-key reads it; confirm it with the server's administrator)");
  if (keys.length > MAX_HOST_KEYS) throw new AccountError(`At most ${MAX_HOST_KEYS} host key fingerprints`);
  return keys;
}

function pick<T extends string>(value: string, allowed: readonly T[], what: string): T {
  const v = value.trim().toUpperCase();
  const found = allowed.find((a) => a === v);
  if (!found) throw new AccountError(`The ${what} must be one of ${allowed.join(", ")}, got "${value}"`);
  return found;
}

async function requireTopic(db: Kysely<Database>, custNr: string, topic: string): Promise<void> {
  // (topics.ts lists topics with their SFTP deliveries, so this module does not import it.)
  const found = await db.selectFrom("inbound_topics").select("name").where("cust_nr", "=", custNr).where("name", "=", topic).executeTakeFirst();
  if (!found) throw new AccountError(`Customer ${custNr} has no topic "${topic}"`);
}

export async function getTopicSftpDelivery(db: Kysely<Database>, custNr: string, topic: string): Promise<SftpDeliveryView | null> {
  const row = await db.selectFrom("inbound_sftp_deliveries").selectAll().where("cust_nr", "=", custNr).where("topic", "=", topic).executeTakeFirst();
  return row ? sftpDeliveryView(row) : null;
}

/** The SFTP deliveries of a customer's topics (or every customer's), by topic. */
export async function listSftpDeliveries(db: Kysely<Database>, custNr?: string): Promise<Map<string, SftpDeliveryView>> {
  let q = db.selectFrom("inbound_sftp_deliveries").selectAll();
  if (custNr !== undefined) q = q.where("cust_nr", "=", custNr);
  const out = new Map<string, SftpDeliveryView>();
  for (const row of await q.execute()) out.set(`${row.cust_nr}\u0000${row.topic}`, sftpDeliveryView(row));
  return out;
}

/**
 * Creates or changes a topic's SFTP delivery. A new one needs the host, the user, the host key
 * fingerprint and a key or password; everything else has a default (port 22, the login's
 * directory, the pattern `{date}-{time}_{called}_{id}`, PDF, JSON).
 */
export async function setTopicSftpDelivery(db: Kysely<Database>, custNr: string, topic: string, change: SftpDeliveryChange, now: number): Promise<SftpDeliveryView> {
  await requireTopic(db, custNr, topic);
  const current = await db.selectFrom("inbound_sftp_deliveries").selectAll().where("cust_nr", "=", custNr).where("topic", "=", topic).executeTakeFirst();
  const credentialsGiven = [change.privateKey !== undefined, change.password !== undefined, change.generateKey === true].filter(Boolean).length;
  if (credentialsGiven > 1) throw new AccountError("Give either a private key, a password, or ask for a new key; not several");

  const next: Row = current
    ? { ...current }
    : {
        cust_nr: custNr,
        topic,
        host: "",
        port: 22,
        username: "",
        auth_method: "key",
        private_key: null,
        password: null,
        host_keys: "[]",
        directory: "",
        file_pattern: DEFAULT_FILE_PATTERN,
        document_format: "PDF",
        metadata_format: "JSON",
        created_at: now,
        updated_at: now,
      };
  try {
    if (change.host !== undefined) next.host = checkSftpHost(change.host);
    if (change.port !== undefined) next.port = checkPort(change.port);
    if (change.username !== undefined) next.username = checkUsername(change.username);
    if (change.hostKeys !== undefined) next.host_keys = JSON.stringify(checkHostKeys(change.hostKeys));
    if (change.directory !== undefined) next.directory = checkRemoteDirectory(change.directory);
    if (change.filePattern !== undefined) next.file_pattern = checkFilePattern(change.filePattern);
    if (change.documentFormat !== undefined) next.document_format = pick(change.documentFormat, SFTP_DOCUMENT_FORMATS, "document format");
    if (change.metadataFormat !== undefined) next.metadata_format = pick(change.metadataFormat, SFTP_METADATA_FORMATS, "metadata format");
    if (change.generateKey === true) {
      const pair = newClientKey(`faxline ${custNr}/${topic}`);
      Object.assign(next, { auth_method: "key", private_key: pair.privateKey, password: null });
    } else if (change.privateKey !== undefined) {
      const key = change.privateKey.trim();
      if (key.length > MAX_KEY_CHARS) throw new AccountError(`The private key is ${key.length} characters long; at most ${MAX_KEY_CHARS}`);
      const passphrase = change.keyPassphrase === undefined || change.keyPassphrase === null || change.keyPassphrase === "" ? null : change.keyPassphrase;
      Object.assign(next, { auth_method: "key", private_key: readClientKey(key, passphrase).privateKey, password: null });
    } else if (change.password !== undefined) {
      if (change.password === "" || change.password.length > 1024) throw new AccountError("The SFTP password must be 1 to 1024 characters");
      Object.assign(next, { auth_method: "password", password: change.password, private_key: null });
    } else if (change.keyPassphrase !== undefined && change.keyPassphrase !== null && change.keyPassphrase !== "") {
      throw new AccountError("A passphrase belongs to a private key; give the key as well");
    }
  } catch (err) {
    if (err instanceof FilePatternError || err instanceof ClientKeyError) throw new AccountError(err.message);
    throw err;
  }
  if (change.authMethod !== undefined) {
    const wanted = change.authMethod.trim().toLowerCase();
    if (wanted !== "key" && wanted !== "password") throw new AccountError(`The login is "key" or "password", got "${change.authMethod}"`);
    if (wanted !== next.auth_method) throw new AccountError(wanted === "password" ? "To log in with a password, give the password" : "To log in with a key, give the private key or ask for a new one");
  }
  const missing: string[] = [];
  if (next.host === "") missing.push("the host");
  if (next.username === "") missing.push("the user name");
  if (next.host_keys === "[]") missing.push("the host key fingerprint");
  if (next.private_key === null && next.password === null) missing.push("a private key (or a new one) or a password");
  if (missing.length > 0) throw new AccountError(`An SFTP delivery needs ${missing.join(", ")}`);
  next.updated_at = now;
  if (current) {
    const { cust_nr: _c, topic: _t, created_at: _a, ...set } = next;
    await db.updateTable("inbound_sftp_deliveries").set(set).where("cust_nr", "=", custNr).where("topic", "=", topic).execute();
  } else {
    await db.insertInto("inbound_sftp_deliveries").values(next).execute();
  }
  return sftpDeliveryView(next);
}

/** Removes a topic's SFTP delivery; faxes already queued for it then fail with that reason. */
export async function removeTopicSftpDelivery(db: Kysely<Database>, custNr: string, topic: string): Promise<boolean> {
  await requireTopic(db, custNr, topic);
  const r = await db.deleteFrom("inbound_sftp_deliveries").where("cust_nr", "=", custNr).where("topic", "=", topic).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

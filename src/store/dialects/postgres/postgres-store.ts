/**
 * The shared PostgreSQL store: node-postgres (pg) through Kysely's PostgresDialect, with
 * connections that follow the primary of a replicated cluster (postgres-pool.ts).
 * docs/adr/0007-postgresql-store.md says why this driver and not postgres.js.
 *
 * Column types are those of the SQLite store (integer milliseconds, 0/1, JSON text); bigint
 * columns (int8) are read as JavaScript numbers, which hold every millisecond timestamp.
 * Every connection gets the configured statement_timeout, and idle transactions are ended
 * after a minute so that a node that stalls mid-transaction cannot hold locks for ever.
 *
 * Opening checks a connection at once, so that a bad or unreachable URL stops the node at
 * start with a message that names store.url and the cause.
 */
import { queryLog } from "../query-log.ts";
import { hostname } from "node:os";
import { Kysely, PostgresDialect } from "kysely";
import Cursor from "pg-cursor";
import { ConfigError } from "../../../config/config-error.ts";
import type { Database } from "../../database.ts";
import { migrateToLatest, migrationStatus } from "../../run-migrations.ts";
import type { MigrationDialect, Store } from "../../store.ts";
import { postgresWrites } from "./postgres-writes.ts";
import { postgresClaims } from "./postgres-claims.ts";
import { postgresFaults } from "./postgres-faults.ts";
import { FailoverPool, readCaFile, type PostgresConnectionSettings } from "./postgres-pool.ts";
import { parsePostgresUrl, PostgresUrlError, redactStoreUrl, type PostgresTarget } from "./postgres-url.ts";
import { installPostgresWorkSignals, postgresWorkSignals } from "./postgres-work-signals.ts";

export const POSTGRES_MIGRATION_DIALECT: MigrationDialect = Object.freeze({
  name: "postgres",
  timestamp: "bigint",
  blob: "bytea",
  installWorkSignals: installPostgresWorkSignals,
});

export interface OpenPostgresOptions {
  url: string;
  onQuery?: (durationMs: number) => void;
  /** Connections of this node's pool. */
  poolSize: number;
  statementTimeoutMs: number;
  connectTimeoutMs: number;
  /** Shown in pg_stat_activity. */
  applicationName?: string;
  /** Told when an idle pooled connection fails (the pool drops it by itself). */
  onIdleError?: (err: Error) => void;
}

export async function openPostgresStore(options: OpenPostgresOptions): Promise<Store> {
  const location = redactStoreUrl(options.url);
  let target: PostgresTarget;
  try {
    target = parsePostgresUrl(options.url);
  } catch (err) {
    if (err instanceof PostgresUrlError) throw new ConfigError(`Invalid configuration store.url (FAXLINE_STORE_URL): ${err.message}; got ${location}`);
    throw err;
  }
  if (target.sslrootcert) {
    try {
      readCaFile(target.sslrootcert);
    } catch (err) {
      throw new ConfigError(`Invalid configuration store.url (FAXLINE_STORE_URL): sslrootcert ${target.sslrootcert} cannot be read: ${(err as Error).message}`);
    }
  }
  const settings: PostgresConnectionSettings = {
    target,
    poolSize: options.poolSize,
    statementTimeoutMs: options.statementTimeoutMs,
    connectTimeoutMs: options.connectTimeoutMs,
    applicationName: options.applicationName ?? `faxline@${hostname()}`,
    onIdleError: options.onIdleError ?? (() => {}),
  };
  const pool = new FailoverPool(settings);
  try {
    const client = await pool.connect();
    client.release();
  } catch (err) {
    await pool.end().catch(() => {});
    throw new ConfigError(`Cannot open the store at store.url (FAXLINE_STORE_URL) ${location}: ${describeConnectError(err)}`);
  }
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool, cursor: Cursor }), ...queryLog(options.onQuery) });

  return {
    dialect: "postgres",
    location,
    db,
    claims: postgresClaims,
    writes: postgresWrites,
    faults: postgresFaults,
    signals: postgresWorkSignals(settings, pool.selector),
    migrate: () => migrateToLatest(db, POSTGRES_MIGRATION_DIALECT),
    migrations: () => migrationStatus(db, POSTGRES_MIGRATION_DIALECT),
    async close() {
      await db.destroy();
    },
  };
}

/** A connect failure, in words: the driver's message plus its code when it adds something. */
export function describeConnectError(err: unknown): string {
  const e = err as { message?: string; code?: string; errors?: unknown[] };
  if (Array.isArray(e.errors) && e.errors.length > 0) return e.errors.map(describeConnectError).join("; ");
  const message = e.message ?? String(err);
  return e.code && !message.includes(e.code) ? `${message} (${e.code})` : message;
}

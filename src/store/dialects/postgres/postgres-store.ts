/**
 * The shared PostgreSQL store: postgres.js (porsager/postgres) through Kysely
 * (kysely-postgres-js). docs/adr/0007-postgresql-store.md says why this driver: it takes
 * multi-host URLs with target_session_attrs and finds the new primary by itself after a
 * failover, which node-postgres does not.
 *
 * Column types are those of the SQLite store (integer milliseconds, 0/1, JSON text); bigint
 * columns (int8) are read as JavaScript numbers, which hold every millisecond timestamp.
 * Every connection gets the configured statement_timeout, and idle transactions are ended
 * after a minute so that a node that stalls mid-transaction cannot hold locks for ever.
 *
 * Opening checks the connection at once (`select 1`), so that a bad or unreachable URL
 * stops the node at start with a message that names store.url and the cause.
 */
import { hostname } from "node:os";
import { Kysely } from "kysely";
import { PostgresJSDialect } from "kysely-postgres-js";
import postgres from "postgres";
import { ConfigError } from "../../../config/config-error.ts";
import type { Database } from "../../database.ts";
import { migrateToLatest, migrationStatus } from "../../run-migrations.ts";
import type { MigrationDialect, Store } from "../../store.ts";
import { postgresClaims } from "./postgres-claims.ts";
import { postgresFaults } from "./postgres-faults.ts";
import { postgresUrlProblem, redactStoreUrl } from "./postgres-url.ts";
import { installPostgresWorkSignals, postgresWorkSignals } from "./postgres-work-signals.ts";

export const POSTGRES_MIGRATION_DIALECT: MigrationDialect = Object.freeze({
  name: "postgres",
  timestamp: "bigint",
  blob: "bytea",
  installWorkSignals: installPostgresWorkSignals,
});

export interface OpenPostgresOptions {
  url: string;
  /** Connections of this node's pool. */
  poolSize: number;
  statementTimeoutMs: number;
  connectTimeoutMs: number;
  /** Shown in pg_stat_activity. */
  applicationName?: string;
}

/** int8 (bigint, count(*)) as a JavaScript number. */
const BIGINT_AS_NUMBER = {
  to: 20,
  from: [20],
  serialize: (value: unknown) => String(value),
  parse: (value: string) => Number(value),
};

export function postgresClientOptions(options: OpenPostgresOptions): postgres.Options<Record<string, postgres.PostgresType>> {
  return {
    max: options.poolSize,
    connect_timeout: Math.max(1, Math.ceil(options.connectTimeoutMs / 1000)),
    idle_timeout: 60,
    fetch_types: false,
    prepare: true,
    onnotice: () => {},
    types: { bigint: BIGINT_AS_NUMBER } as unknown as Record<string, postgres.PostgresType>,
    connection: {
      application_name: options.applicationName ?? `faxline@${hostname()}`,
      statement_timeout: options.statementTimeoutMs,
      idle_in_transaction_session_timeout: 60_000,
    },
  };
}

export async function openPostgresStore(options: OpenPostgresOptions): Promise<Store> {
  const location = redactStoreUrl(options.url);
  const problem = postgresUrlProblem(options.url);
  if (problem !== null) throw new ConfigError(`Invalid configuration store.url (FAXLINE_STORE_URL): ${problem}; got ${location}`);
  const clientOptions = postgresClientOptions(options);
  let client: postgres.Sql<Record<string, unknown>>;
  try {
    client = postgres(options.url, clientOptions) as unknown as postgres.Sql<Record<string, unknown>>;
  } catch (err) {
    throw new ConfigError(`Invalid configuration store.url (FAXLINE_STORE_URL) ${location}: ${(err as Error).message}`);
  }
  try {
    await client`select 1`;
  } catch (err) {
    await client.end({ timeout: 1 }).catch(() => {});
    throw new ConfigError(`Cannot open the store at store.url (FAXLINE_STORE_URL) ${location}: ${describeConnectError(err)}`);
  }
  const db = new Kysely<Database>({ dialect: new PostgresJSDialect({ postgres: client as never }) });
  const signals = postgresWorkSignals(options.url, clientOptions);

  return {
    dialect: "postgres",
    location,
    db,
    claims: postgresClaims,
    faults: postgresFaults,
    signals,
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

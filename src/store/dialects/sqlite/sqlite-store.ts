/**
 * The embedded SQLite store: one file under the data directory, better-sqlite3 through Kysely.
 *
 * WAL journal with synchronous=NORMAL: a committed transaction survives a killed process
 * (SIGKILL), which is the durability the job engine needs; only an OS crash or power loss can
 * lose the last transactions. busy_timeout lets the CLI write while a node runs.
 *
 * Several processes may share the file (each with its own node id), but they do not wake each
 * other: the work signals of this dialect are silent and its nodes find new work by polling.
 */
import { queryLog } from "../query-log.ts";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import type { Database } from "../../database.ts";
import { migrateToLatest, migrationStatus } from "../../run-migrations.ts";
import type { MigrationDialect, Store } from "../../store.ts";
import { sqliteWrites } from "./sqlite-writes.ts";
import { sqliteClaims } from "./sqlite-claims.ts";
import { sqliteFaults } from "./sqlite-faults.ts";

export const SQLITE_MIGRATION_DIALECT: MigrationDialect = Object.freeze({
  name: "sqlite",
  timestamp: "bigint",
  blob: "blob",
  installWorkSignals: async () => {},
});

export interface OpenSqliteOptions {
  /** Path of the database file, or ":memory:". */
  file: string;
  onQuery?: (durationMs: number) => void;
}

export async function openSqliteStore(options: OpenSqliteOptions): Promise<Store> {
  if (options.file !== ":memory:") mkdirSync(dirname(options.file), { recursive: true });
  const database = new BetterSqlite3(options.file);
  database.pragma("journal_mode = WAL");
  database.pragma("synchronous = NORMAL");
  database.pragma("foreign_keys = ON");
  database.pragma("busy_timeout = 5000");
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }), ...queryLog(options.onQuery) });

  return {
    dialect: "sqlite",
    location: options.file,
    db,
    claims: sqliteClaims,
    writes: sqliteWrites,
    faults: sqliteFaults,
    signals: { listen: async () => ({ close: async () => {} }) },
    migrate: () => migrateToLatest(db, SQLITE_MIGRATION_DIALECT),
    migrations: () => migrationStatus(db, SQLITE_MIGRATION_DIALECT),
    async close() {
      await db.destroy();
    },
  };
}

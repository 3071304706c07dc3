/**
 * What a migration needs to know of the dialect it runs on: the column types that differ and
 * the objects only one dialect has. Each dialect's store supplies one (sqlite/sqlite-store.ts,
 * postgres/postgres-store.ts).
 */
import type { Kysely } from "kysely";

export type MigrationDialectName = "sqlite" | "postgres";

/** What migrations need to know of the dialect: column types and dialect-only objects. */
export interface MigrationDialect {
  readonly name: MigrationDialectName;
  readonly timestamp: "bigint";
  readonly blob: "blob" | "bytea";
  /**
   * Installs what lets a write on one node wake the others (PostgreSQL: triggers that NOTIFY;
   * SQLite: nothing, its nodes poll). Called by migration 0005.
   */
  installWorkSignals(db: Kysely<unknown>): Promise<void>;
}


/**
 * Runs and lists the store's migrations with Kysely's Migrator, the same way for every dialect.
 * On PostgreSQL the Migrator holds an advisory lock while it migrates, so ten nodes that start
 * at once migrate once; on SQLite the file's single writer does the same.
 *
 * A store migrated by a newer Faxline (a migration this version does not know) is refused
 * rather than used: this node would not know the meaning of the newer columns.
 */
import { Migrator, type Kysely } from "kysely";
import { migrations } from "./migrations/all-migrations.ts";
import type { MigrationDialect } from "./migrations/migration-dialect.ts";
import type { MigrationStatus } from "./store.ts";

export class StoreMigrationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreMigrationError";
  }
}

/**
 * Migration names ("0001-create-core-tables") in code-point order, the order Kysely sorts the
 * known migrations in. Its default for the executed ones, localeCompare, loads ICU's collation on
 * every command that opens the store (about 11 ms of `faxline accounts list`).
 */
const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function migrator(db: Kysely<any>, dialect: MigrationDialect): Migrator {
  return new Migrator({ db, provider: { getMigrations: async () => migrations(dialect) }, nameComparator: byCodePoint });
}

export async function migrateToLatest(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const { error, results } = await migrator(db, dialect).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === "Error")?.migrationName;
    const message = (error as Error).message ?? String(error);
    if (/corrupted migrations/i.test(message)) {
      throw new StoreMigrationError(
        `The store was migrated by a newer Faxline than this one (${message}); run the newer version, or a copy of the store from before the upgrade`,
        { cause: error },
      );
    }
    throw new StoreMigrationError(`Store migration ${failed ?? "(before any migration ran)"} failed: ${message}`, { cause: error });
  }
}

export async function migrationStatus(db: Kysely<any>, dialect: MigrationDialect): Promise<MigrationStatus[]> {
  const list = await migrator(db, dialect).getMigrations();
  return list.map((m) => ({ name: m.name, executedAt: m.executedAt ?? null }));
}

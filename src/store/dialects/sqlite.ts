/**
 * The embedded SQLite store: one file under the data directory, better-sqlite3 through Kysely.
 *
 * WAL journal with synchronous=NORMAL: a committed transaction survives a killed process
 * (SIGKILL), which is the durability the job engine needs; only an OS crash or power loss can
 * lose the last transactions. busy_timeout lets the CLI write while a node runs.
 *
 * SQLite has one writer at a time, so a claim is a single `UPDATE … WHERE id = (SELECT … LIMIT 1)
 * RETURNING *` statement: no other writer can interleave between the choice and the update.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { Kysely, Migrator, SqliteDialect } from "kysely";
import type { Database } from "../database.ts";
import { migrations, type ClaimQueries, type ColumnTypes, type Store } from "../store.ts";

const TYPES: ColumnTypes = { timestamp: "bigint", blob: "blob" };

export const sqliteClaims: ClaimQueries = {
  async claimJobToRender(db, { datacenter, node, leaseUntil }) {
    return db
      .updateTable("jobs")
      .set((eb) => ({
        state: "rendering",
        locked_by: node,
        lease_until: leaseUntil,
        render_attempts: eb("render_attempts", "+", 1),
      }))
      .where("id", "=", (eb) =>
        eb
          .selectFrom("jobs")
          .select("id")
          .where("datacenter", "=", datacenter)
          .where("state", "=", "pending")
          .orderBy("is_express", "desc")
          .orderBy("created_at", "asc")
          .limit(1),
      )
      .where("state", "=", "pending")
      .returningAll()
      .executeTakeFirst();
  },

  async claimDueRecipient(db, { datacenter, node, now, leaseUntil, callsPerNumber }) {
    return db
      .updateTable("recipients")
      .set((eb) => ({
        state: "sending",
        locked_by: node,
        lease_until: leaseUntil,
        attempt_count: eb("attempt_count", "+", 1),
      }))
      .where("id", "=", (eb) =>
        eb
          .selectFrom("recipients as r")
          .select("r.id")
          .where("r.datacenter", "=", datacenter)
          .where("r.state", "=", "ready")
          .where("r.run_at", "<=", now)
          .where((w) =>
            w(
              w
                .selectFrom("recipients as s")
                .select(w.fn.countAll().as("n"))
                .whereRef("s.current_e164", "=", "r.current_e164")
                .where("s.state", "=", "sending"),
              "<",
              callsPerNumber,
            ),
          )
          .where((w) =>
            w.exists(
              w
                .selectFrom("jobs as j")
                .select("j.id")
                .whereRef("j.id", "=", "r.job_id")
                .where("j.valid_until", ">", now),
            ),
          )
          .orderBy("r.is_express", "desc")
          .orderBy("r.run_at", "asc")
          .orderBy("r.id", "asc")
          .limit(1),
      )
      .where("state", "=", "ready")
      .returningAll()
      .executeTakeFirst();
  },

  async claimDueNotification(db, { datacenter, node, now, leaseUntil, busyReceivers }) {
    return db
      .updateTable("notifications")
      .set({ state: "delivering", locked_by: node, lease_until: leaseUntil })
      .where("id", "=", (eb) => {
        let query = eb
          .selectFrom("notifications")
          .select("id")
          .where("datacenter", "=", datacenter)
          .where("state", "=", "pending")
          .where("next_attempt_at", "<=", now);
        if (busyReceivers.length > 0) query = query.where("receiver", "not in", [...busyReceivers]);
        return query.orderBy("next_attempt_at", "asc").orderBy("id", "asc").limit(1);
      })
      .where("state", "=", "pending")
      .returningAll()
      .executeTakeFirst();
  },
};

export interface OpenSqliteOptions {
  /** Path of the database file, or ":memory:". */
  file: string;
}

export async function openSqliteStore(options: OpenSqliteOptions): Promise<Store> {
  if (options.file !== ":memory:") mkdirSync(dirname(options.file), { recursive: true });
  const database = new BetterSqlite3(options.file);
  database.pragma("journal_mode = WAL");
  database.pragma("synchronous = NORMAL");
  database.pragma("foreign_keys = ON");
  database.pragma("busy_timeout = 5000");
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });

  return {
    dialect: "sqlite",
    db,
    claims: sqliteClaims,
    async migrate() {
      const migrator = new Migrator({
        db,
        provider: { getMigrations: async () => migrations(TYPES) },
      });
      const { error, results } = await migrator.migrateToLatest();
      if (error) {
        const failed = results?.find((r) => r.status === "Error")?.migrationName ?? "unknown";
        throw new Error(`Store migration ${failed} failed: ${(error as Error).message}`, { cause: error });
      }
    },
    async close() {
      await db.destroy();
    },
  };
}

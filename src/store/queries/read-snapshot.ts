/**
 * Several reads that make one answer, taken from one snapshot of the store.
 *
 * Outside a transaction each statement sees the store as it is when that statement runs, so
 * an answer built from several (a job row, then its documents) can mix a moment before a
 * writer's transaction with a moment after it: a job not yet marked purged beside documents
 * already deleted. In one transaction PostgreSQL at REPEATABLE READ serves every statement
 * from the snapshot taken by the first; SQLite's deferred transaction holds its read snapshot
 * (WAL) from the first read to the commit, and the store's one connection runs nothing else
 * in between. Read only: PostgreSQL refuses a write in it. Inside the callback, only `trx`: a
 * statement on the store's own handle would wait for the connection the transaction holds
 * (SQLite has one).
 */
import type { Kysely, Transaction } from "kysely";
import type { Database } from "../database.ts";

export function readOneSnapshot<T>(db: Kysely<Database>, reads: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  // Already in a transaction (a caller's): its snapshot serves.
  if (db.isTransaction) return reads(db as Transaction<Database>);
  return db.transaction().setIsolationLevel("repeatable read").setAccessMode("read only").execute(reads);
}

/**
 * The node registry's rows (nodes): register a node's new life, heartbeat, mark it stopped,
 * list. cluster/node-registry.ts decides when; this file only reads and writes.
 */
import type { Kysely } from "kysely";
import type { Database, NodeRow } from "../database.ts";

export type NewNodeLife = Omit<NodeRow, "stopped_at" | "calls_by_trunk">;

export async function findNode(db: Kysely<Database>, id: string): Promise<NodeRow | undefined> {
  return db.selectFrom("nodes").selectAll().where("id", "=", id).executeTakeFirst();
}

/** Writes the node's row for a new life (insert, or replace its previous life's row). */
export async function upsertNodeLife(db: Kysely<Database>, node: NewNodeLife): Promise<void> {
  const { id: _id, ...rest } = node;
  await db
    .insertInto("nodes")
    .values({ ...node, stopped_at: null })
    .onConflict((oc) => oc.column("id").doUpdateSet({ ...rest, stopped_at: null }))
    .execute();
}

/** The heartbeat; false when the row no longer belongs to this life (another took the id). */
export async function touchNode(
  db: Kysely<Database>,
  id: string,
  instance: string,
  now: number,
  activeCalls: number,
  callsByTrunk: readonly { trunk: string; transport: string; calls: number }[] = [],
): Promise<boolean> {
  const result = await db
    .updateTable("nodes")
    .set({ last_seen_at: now, active_calls: activeCalls, calls_by_trunk: JSON.stringify(callsByTrunk) })
    .where("id", "=", id)
    .where("instance", "=", instance)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function markNodeStopped(db: Kysely<Database>, id: string, instance: string, now: number): Promise<void> {
  await db
    .updateTable("nodes")
    .set({ stopped_at: now, last_seen_at: now, active_calls: 0 })
    .where("id", "=", id)
    .where("instance", "=", instance)
    .execute();
}

export async function listNodes(db: Kysely<Database>): Promise<NodeRow[]> {
  return db.selectFrom("nodes").selectAll().orderBy("region").orderBy("datacenter").orderBy("id").execute();
}

/** Forgets nodes stopped (or silent) since before `before`; returns how many. */
export async function forgetNodes(db: Kysely<Database>, before: number): Promise<number> {
  const result = await db.deleteFrom("nodes").where("last_seen_at", "<", before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

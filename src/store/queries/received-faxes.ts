/**
 * Received faxes (migration 0008): storing a reception, acknowledging, reading a document, and
 * the purge after the topic's retention. Handing faxes out to pollers is an atomic claim in the
 * store's dialect (`Store.claims.claimReceivedFaxes`: two pollers never get the same fax while it
 * is locked).
 */
import type { Insertable, Kysely } from "kysely";
import type { Database, ReceivedFaxesTable } from "../database.ts";
import { rollUpReceptions } from "./report-rollups.ts";

export type NewReceivedFax = Insertable<ReceivedFaxesTable>;

/** Stores a reception; storing the same id again changes nothing (a retried write). True when it was new. */
export async function insertReceivedFax(db: Kysely<Database>, row: NewReceivedFax): Promise<boolean> {
  const inserted = await db.insertInto("received_faxes").values(row).onConflict((oc) => oc.column("id").doNothing()).executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Marks faxes of the topic acknowledged: they are never handed out again. Returns how many were new. */
export async function acknowledgeReceivedFaxes(db: Kysely<Database>, scope: { custNr: string; topic: string }, ids: readonly string[], now: number): Promise<number> {
  if (ids.length === 0) return 0;
  const r = await db
    .updateTable("received_faxes")
    .set({ acknowledged_at: now, locked_until: null })
    .where("cust_nr", "=", scope.custNr)
    .where("topic", "=", scope.topic)
    .where("id", "in", [...ids])
    .where("acknowledged_at", "is", null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** A received fax of the customer with its image, or undefined (unknown, another customer's, or purged). */
export async function findReceivedFax(db: Kysely<Database>, custNr: string, id: string) {
  return db.selectFrom("received_faxes").selectAll().where("id", "=", id).where("cust_nr", "=", custNr).where("purged_at", "is", null).executeTakeFirst();
}

/**
 * Deletes received faxes older than their topic's retention (`defaultDays` where the topic sets
 * none, or the topic is gone), at most `limit` a call. Returns how many went.
 */
export async function purgeReceivedFaxes(db: Kysely<Database>, datacenter: string, now: number, defaultDays: number, limit: number): Promise<number> {
  const DAY = 86_400_000;
  const topics = await db.selectFrom("inbound_topics").select(["cust_nr", "name", "retention_days"]).where("retention_days", "is not", null).execute();
  let purged = 0;
  for (const t of topics) {
    const cutoff = now - t.retention_days! * DAY;
    const old = await db.selectFrom("received_faxes").select("id").where("datacenter", "=", datacenter).where("cust_nr", "=", t.cust_nr).where("topic", "=", t.name).where("received_at", "<", cutoff).limit(limit).execute();
    if (old.length > 0) purged += await deleteReceptions(db, old.map((r) => r.id));
  }
  // Everything else on the default period (topics without a period of their own, removed topics).
  const cutoff = now - defaultDays * DAY;
  const old = await db
    .selectFrom("received_faxes")
    .select(["received_faxes.id"])
    .leftJoin("inbound_topics", (j) => j.onRef("inbound_topics.cust_nr", "=", "received_faxes.cust_nr").onRef("inbound_topics.name", "=", "received_faxes.topic"))
    .where("received_faxes.datacenter", "=", datacenter)
    .where("received_faxes.received_at", "<", cutoff)
    .where((eb) => eb.or([eb("inbound_topics.retention_days", "is", null), eb("inbound_topics.name", "is", null)]))
    .limit(limit)
    .execute();
  if (old.length > 0) purged += await deleteReceptions(db, old.map((r) => r.id));
  return purged;
}

/** Deletes receptions, counting first in the reporting rollups whatever of them is not counted yet. */
async function deleteReceptions(db: Kysely<Database>, ids: string[]): Promise<number> {
  await rollUpReceptions(db, ids);
  return Number((await db.deleteFrom("received_faxes").where("id", "in", ids).executeTakeFirst()).numDeletedRows);
}

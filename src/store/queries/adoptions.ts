/**
 * Data-center adoption in the store: the last heartbeat of a data center's nodes, and the move
 * of everything a data center owns to its partner, in one transaction. cluster/
 * datacenter-adoption.ts decides when.
 *
 * What moves: every job the data center owns (finished or not; deleted ones are gone), its
 * recipients and its notifications (the outbox). Each moved job gets a job_adoptions row; the
 * run gets a datacenter_adoptions row. Rows are taken as they are: a recipient in `sending`
 * under a dead node's lease stays so until that lease expires and the new owner's sweep
 * abandons the attempt (never earlier: no fax is redialled while its call may still run).
 * Every statement is guarded by the old owner, so a second run (another node, or the CLI at
 * the same time) moves nothing twice.
 */
import type { Kysely } from "kysely";
import { randomToken } from "../../lib/ids.ts";
import type { Database, DatacenterAdoptionRow } from "../database.ts";

/** Nodes ever registered for a data center, and when the last of them wrote a heartbeat. */
export async function datacenterHeartbeat(db: Kysely<Database>, datacenter: string): Promise<{ nodes: number; lastSeenAt: number | null }> {
  const row = await db
    .selectFrom("nodes")
    .select((eb) => [eb.fn.countAll().as("nodes"), eb.fn.max("last_seen_at").as("last")])
    .where("datacenter", "=", datacenter)
    .executeTakeFirst();
  return { nodes: Number(row?.nodes ?? 0), lastSeenAt: row?.last === null || row?.last === undefined ? null : Number(row.last) };
}

export async function datacenterOwnsJobs(db: Kysely<Database>, datacenter: string): Promise<boolean> {
  const row = await db.selectFrom("jobs").select("id").where("datacenter", "=", datacenter).limit(1).executeTakeFirst();
  return row !== undefined;
}

export interface AdoptionArgs {
  region: string;
  from: string;
  to: string;
  mode: "failover" | "manual";
  node: string;
  now: number;
  /** The dead data center's last heartbeat (failover). */
  lastSeenAt: number | null;
}

/** Moves everything `from` owns to `to`; null when it owned nothing. */
export async function adoptDatacenter(db: Kysely<Database>, a: AdoptionArgs): Promise<DatacenterAdoptionRow | null> {
  return db.transaction().execute(async (trx) => {
    const counts = await trx
      .selectFrom("jobs")
      .select((eb) => [eb.fn.countAll().as("jobs"), eb.fn.sum<number>(eb.case().when("state", "!=", "completed").then(1).else(0).end()).as("open")])
      .where("datacenter", "=", a.from)
      .executeTakeFirst();
    const jobs = Number(counts?.jobs ?? 0);
    if (jobs === 0) return null;
    const id = `adp_${randomToken(16)}`;
    await trx
      .insertInto("job_adoptions")
      .columns(["job_id", "adoption_id", "from_datacenter", "to_datacenter", "adopted_at"])
      .expression((eb) =>
        eb
          .selectFrom("jobs")
          .select((s) => ["id", s.val(id).as("adoption_id"), s.val(a.from).as("from_datacenter"), s.val(a.to).as("to_datacenter"), s.val(a.now).as("adopted_at")])
          .where("datacenter", "=", a.from),
      )
      .execute();
    const moved = await trx.updateTable("jobs").set({ datacenter: a.to }).where("datacenter", "=", a.from).executeTakeFirst();
    const recipients = await trx.updateTable("recipients").set({ datacenter: a.to }).where("datacenter", "=", a.from).executeTakeFirst();
    const notifications = await trx.updateTable("notifications").set({ datacenter: a.to }).where("datacenter", "=", a.from).executeTakeFirst();
    const row: DatacenterAdoptionRow = {
      id,
      region: a.region,
      from_datacenter: a.from,
      to_datacenter: a.to,
      mode: a.mode,
      node: a.node,
      adopted_at: a.now,
      jobs: Number(moved.numUpdatedRows),
      open_jobs: Number(counts?.open ?? 0),
      recipients: Number(recipients.numUpdatedRows),
      notifications: Number(notifications.numUpdatedRows),
      last_seen_at: a.lastSeenAt,
    };
    await trx.insertInto("datacenter_adoptions").values(row).execute();
    return row;
  });
}

export async function listAdoptions(db: Kysely<Database>, limit = 20): Promise<DatacenterAdoptionRow[]> {
  return db.selectFrom("datacenter_adoptions").selectAll().orderBy("adopted_at", "desc").limit(limit).execute();
}

/**
 * Data-center adoption in the store: the last heartbeat of a data center's nodes, and the move
 * of everything a data center owns to its partner. cluster/datacenter-adoption.ts decides when.
 *
 * What moves: every job the data center owns (finished or not; deleted ones are gone), with its
 * recipients and notifications, notifications whose job was deleted (and those of received faxes),
 * and the received faxes themselves. Jobs move in batches of
 * ADOPTION_BATCH, unfinished ones first, each batch one transaction that moves the jobs (guarded
 * by their old owner, RETURNING the ids it moved) and then exactly those jobs' recipients,
 * notifications and job_adoptions rows: a job and its rows always move together, a second
 * adopter at the same time (another node, the CLI) moves nothing twice, no statement grows with
 * the store's history, and a job accepted meanwhile by a data center that is still alive (a
 * manual adoption) either moves whole or stays whole. One datacenter_adoptions row counts the run.
 *
 * Rows are taken as they are: a recipient in `sending` under a dead node's lease stays so until
 * that lease expires and the new owner's sweep abandons the attempt (never earlier: no fax is
 * redialled while its call may still run).
 */
import { sql, type Kysely } from "kysely";
import { randomToken } from "../../lib/ids.ts";
import type { Database, DatacenterAdoptionRow } from "../database.ts";

/** Jobs moved per transaction. */
export const ADOPTION_BATCH = 200;

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
  const id = `adp_${randomToken(16)}`;
  const totals = { jobs: 0, open: 0, recipients: 0, notifications: 0 };
  for (;;) {
    const batch = await db.transaction().execute(async (trx) => {
      const candidates = await trx
        .selectFrom("jobs")
        .select("id")
        .where("datacenter", "=", a.from)
        // What it accepted up to the verdict: a node of it that comes back meanwhile keeps the
        // jobs it accepts from then on (their clients read the reports there).
        .where("created_at", "<=", a.now)
        .orderBy(sql`case when state = 'completed' then 1 else 0 end`)
        .orderBy("id")
        .limit(ADOPTION_BATCH)
        .execute();
      if (candidates.length === 0) return null;
      const moved = await trx
        .updateTable("jobs")
        .set({ datacenter: a.to })
        .where("id", "in", candidates.map((c) => c.id))
        .where("datacenter", "=", a.from)
        .returning(["id", "state"])
        .execute();
      if (moved.length === 0) return { jobs: 0, open: 0, recipients: 0, notifications: 0, raced: true };
      const ids = moved.map((m) => m.id);
      await trx
        .insertInto("job_adoptions")
        .values(ids.map((jobId) => ({ job_id: jobId, adoption_id: id, from_datacenter: a.from, to_datacenter: a.to, adopted_at: a.now })))
        .execute();
      const recipients = await trx.updateTable("recipients").set({ datacenter: a.to }).where("job_id", "in", ids).where("datacenter", "=", a.from).executeTakeFirst();
      const notifications = await trx.updateTable("notifications").set({ datacenter: a.to }).where("job_id", "in", ids).where("datacenter", "=", a.from).executeTakeFirst();
      return {
        jobs: moved.length,
        open: moved.filter((m) => m.state !== "completed").length,
        recipients: Number(recipients.numUpdatedRows),
        notifications: Number(notifications.numUpdatedRows),
        raced: false,
      };
    });
    if (batch === null) break;
    if (batch.raced) continue;
    totals.jobs += batch.jobs;
    totals.open += batch.open;
    totals.recipients += batch.recipients;
    totals.notifications += batch.notifications;
  }
  // Notifications whose job was deleted (a client may delete a report before its push is out).
  const orphans = await db
    .updateTable("notifications")
    .set({ datacenter: a.to })
    .where("datacenter", "=", a.from)
    .where("created_at", "<=", a.now)
    .where((eb) => eb.not(eb.exists(eb.selectFrom("jobs").select("jobs.id").whereRef("jobs.id", "=", "notifications.job_id"))))
    .executeTakeFirst();
  totals.notifications += Number(orphans.numUpdatedRows);
  // Received faxes (their deliveries moved with the orphans above: their job_id is no job's):
  // the new owner purges them after their retention. As for jobs, what a returning node of the
  // dead data center receives after the verdict stays with it.
  await db.updateTable("received_faxes").set({ datacenter: a.to }).where("datacenter", "=", a.from).where("received_at", "<=", a.now).execute();
  if (totals.jobs === 0 && totals.notifications === 0) return null;
  const row: DatacenterAdoptionRow = {
    id,
    region: a.region,
    from_datacenter: a.from,
    to_datacenter: a.to,
    mode: a.mode,
    node: a.node,
    adopted_at: a.now,
    jobs: totals.jobs,
    open_jobs: totals.open,
    recipients: totals.recipients,
    notifications: totals.notifications,
    last_seen_at: a.lastSeenAt,
  };
  await db.insertInto("datacenter_adoptions").values(row).execute();
  return row;
}

export async function listAdoptions(db: Kysely<Database>, limit = 20): Promise<DatacenterAdoptionRow[]> {
  return db.selectFrom("datacenter_adoptions").selectAll().orderBy("adopted_at", "desc").limit(limit).execute();
}

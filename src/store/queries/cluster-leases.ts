/**
 * Singleton duty leases (cluster_leases): take or renew a duty in one statement, release it.
 *
 * `INSERT … ON CONFLICT (name) DO UPDATE … WHERE holder = me OR lease_until < now RETURNING`:
 * the row comes back only when this holder has the duty afterwards: it was free (created),
 * already ours (renewed), or its holder let the lease run out (taken over). Two nodes racing
 * for a free duty are serialised by the row: one wins, the other's WHERE is false.
 */
import type { Kysely } from "kysely";
import type { Database } from "../database.ts";

export type LeaseOutcome = "created" | "renewed" | "taken_over" | "held_elsewhere";

export async function acquireClusterLease(
  db: Kysely<Database>,
  args: { name: string; holder: string; now: number; leaseMs: number },
): Promise<{ outcome: LeaseOutcome; leaseUntil: number; holder: string }> {
  const { name, holder, now } = args;
  const leaseUntil = now + args.leaseMs;
  const before = await db.selectFrom("cluster_leases").select(["holder", "lease_until"]).where("name", "=", name).executeTakeFirst();
  const row = await db
    .insertInto("cluster_leases")
    .values({ name, holder, lease_until: leaseUntil, acquired_at: now, renewed_at: now })
    .onConflict((oc) =>
      oc
        .column("name")
        .doUpdateSet((eb) => ({
          holder: eb.ref("excluded.holder"),
          lease_until: eb.ref("excluded.lease_until"),
          renewed_at: eb.ref("excluded.renewed_at"),
          acquired_at: eb
            .case()
            .when("cluster_leases.holder", "=", holder)
            .then(eb.ref("cluster_leases.acquired_at"))
            .else(eb.ref("excluded.acquired_at"))
            .end(),
        }))
        .where((w) => w.or([w("cluster_leases.holder", "=", holder), w("cluster_leases.lease_until", "<", now)])),
    )
    .returning(["holder", "lease_until"])
    .executeTakeFirst();
  if (!row) {
    const current = await db.selectFrom("cluster_leases").select(["holder", "lease_until"]).where("name", "=", name).executeTakeFirst();
    return { outcome: "held_elsewhere", leaseUntil: Number(current?.lease_until ?? 0), holder: current?.holder ?? "" };
  }
  const outcome: LeaseOutcome = before === undefined ? "created" : before.holder === holder ? "renewed" : "taken_over";
  return { outcome, leaseUntil: Number(row.lease_until), holder };
}

/** Gives a duty up at once (a clean stop), so another node need not wait for the lease to run out. */
export async function releaseClusterLease(db: Kysely<Database>, name: string, holder: string): Promise<boolean> {
  const result = await db.deleteFrom("cluster_leases").where("name", "=", name).where("holder", "=", holder).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function listClusterLeases(db: Kysely<Database>) {
  return db.selectFrom("cluster_leases").selectAll().orderBy("name").execute();
}

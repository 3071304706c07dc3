/**
 * Data-center failover: the nodes of a data center watch the other data center of their region
 * (DE1 ↔ DE2, US1 ↔ US2) on the shared store, and adopt its jobs when it is dead.
 *
 * Dead: none of its nodes has written a heartbeat for `cluster.failoverAfter` (or it never had
 * a node). Judged only by a node whose own connection to the store has been steady for that
 * long: after an outage of the store (or of this node's network), every data center looks dead
 * at once, and the other one must first get the time to write its heartbeats again.
 *
 * Adopting (store/queries/adoptions.ts) moves ownership of every job the dead data center owns,
 * finished or not, with its recipients and notifications, in one transaction; the jobs record
 * "adopted by DE2 from DE1 at …". One node does it, under the singleton duty `adopt:<dead dc>`,
 * and the transaction moves each job once. Then the adopting data center's roles take over as
 * for their own jobs: renders and calls whose leases have expired are redone by its sweep (a
 * call only after its send lease expired), pushes and mails go out from there, reports are read
 * there, and retention purges there. A dead data center's nodes that come back own only what
 * they accept afterwards.
 *
 * `adoptNow()` is the same move by hand (`faxline datacenter adopt --from DE1 --to DE2`), for
 * planned maintenance, whatever the heartbeats say.
 */
import type { Kysely } from "kysely";
import { DATACENTER_REGION, PARTNER_DATACENTER, type Datacenter } from "../config/schema.ts";
import { coerceError } from "../errors/internal-error.ts";
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/logger.ts";
import { pause } from "../lib/wakeup.ts";
import type { Database, DatacenterAdoptionRow } from "../store/database.ts";
import { adoptDatacenter, datacenterHeartbeat, datacenterOwnsJobs } from "../store/queries/adoptions.ts";
import type { SingletonDuty } from "./singleton-duty.ts";
import type { StoreHealth } from "./store-health.ts";

export interface DatacenterVerdict {
  dead: boolean;
  /** The last heartbeat of any of its nodes, or null when none ever ran. */
  lastSeenAt: number | null;
}

/** Whether a data center is dead by its nodes' last heartbeat. */
export function judgeDatacenter(heartbeat: { nodes: number; lastSeenAt: number | null }, now: number, failoverAfterMs: number): DatacenterVerdict {
  if (heartbeat.lastSeenAt === null) return { dead: true, lastSeenAt: null };
  return { dead: now - heartbeat.lastSeenAt >= failoverAfterMs, lastSeenAt: heartbeat.lastSeenAt };
}

export function adoptionSummary(row: DatacenterAdoptionRow): string {
  return (
    `adopted by ${row.to_datacenter} from ${row.from_datacenter} at ${new Date(Number(row.adopted_at)).toISOString()}: ` +
    `${row.jobs} jobs (${row.open_jobs} unfinished), ${row.recipients} recipients, ${row.notifications} notifications`
  );
}

/** Moves everything `from` owns to `to` now (the CLI's adoption); null when it owned nothing. */
export async function adoptNow(db: Kysely<Database>, args: { from: Datacenter; to: Datacenter; node: string; now: number }): Promise<DatacenterAdoptionRow | null> {
  return adoptDatacenter(db, { region: DATACENTER_REGION[args.to], from: args.from, to: args.to, mode: "manual", node: args.node, now: args.now, lastSeenAt: null });
}

export interface WatcherOptions {
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  datacenter: Datacenter;
  /** Lease-holder name of this node's life, recorded as the adopting node. */
  holder: string;
  failoverAfterMs: number;
  heartbeatMs: number;
  health: StoreHealth;
  duty: SingletonDuty;
  /** Called after an adoption moved jobs here, to wake this node's roles. */
  onAdopted: (row: DatacenterAdoptionRow) => void;
}

/** One look at the partner: adopts its jobs when it is dead. Returns the adoption, if any. */
export async function watchPartnerOnce(o: WatcherOptions): Promise<DatacenterAdoptionRow | null> {
  const now = o.clock.now();
  // A node that cannot have seen the other data center's heartbeats for failoverAfter cannot judge it.
  if (o.health.steadyFor(now) < o.failoverAfterMs) return null;
  const partner = PARTNER_DATACENTER[o.datacenter];
  const verdict = judgeDatacenter(await datacenterHeartbeat(o.db, partner), now, o.failoverAfterMs);
  if (!verdict.dead) return null;
  if (!(await datacenterOwnsJobs(o.db, partner))) return null;
  if (!(await o.duty.tryHold())) return null;
  const row = await adoptDatacenter(o.db, {
    region: DATACENTER_REGION[o.datacenter],
    from: partner,
    to: o.datacenter,
    mode: "failover",
    node: o.holder,
    now,
    lastSeenAt: verdict.lastSeenAt,
  });
  if (row) {
    o.logger.warn(
      { adoptionId: row.id, from: row.from_datacenter, to: row.to_datacenter, jobs: row.jobs, openJobs: row.open_jobs, recipients: row.recipients, notifications: row.notifications, lastSeenAt: verdict.lastSeenAt === null ? null : new Date(verdict.lastSeenAt).toISOString() },
      `data center ${partner} is dead (no heartbeat for ${Math.round((now - (verdict.lastSeenAt ?? now)) / 1000)} s): ${adoptionSummary(row)}`,
    );
    o.onAdopted(row);
  }
  return row;
}

/** Watches the partner data center every heartbeat interval until stopped. */
export function startDatacenterWatcher(o: WatcherOptions): { stop(): Promise<void> } {
  const controller = new AbortController();
  const loop = (async () => {
    while (!controller.signal.aborted) {
      try {
        await watchPartnerOnce(o);
      } catch (err) {
        o.logger.error({ err: coerceError(err) }, "watching the other data center failed; trying again");
      }
      await pause(Math.min(o.heartbeatMs, Math.max(50, Math.floor(o.failoverAfterMs / 4))), controller.signal);
    }
    await o.duty.release();
  })();
  return {
    async stop() {
      controller.abort();
      await loop;
    },
  };
}

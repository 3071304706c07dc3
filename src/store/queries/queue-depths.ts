/**
 * How much work a data center has in each state: jobs, recipients and notifications grouped by
 * state (the queue-depth metric). Completed jobs and final recipients are counted too, as
 * retention keeps them; a dashboard plots the open states.
 */
import type { Kysely } from "kysely";
import type { Database } from "../database.ts";

export interface StateCount {
  kind: "job" | "recipient" | "notification";
  state: string;
  count: number;
}

export async function queueDepths(db: Kysely<Database>, datacenter: string): Promise<StateCount[]> {
  const [jobs, recipients, notifications] = await Promise.all([
    db.selectFrom("jobs").select(["state", (eb) => eb.fn.countAll().as("n")]).where("datacenter", "=", datacenter).groupBy("state").execute(),
    db.selectFrom("recipients").select(["state", (eb) => eb.fn.countAll().as("n")]).where("datacenter", "=", datacenter).groupBy("state").execute(),
    db.selectFrom("notifications").select(["state", (eb) => eb.fn.countAll().as("n")]).where("datacenter", "=", datacenter).groupBy("state").execute(),
  ]);
  return [
    ...jobs.map((r) => ({ kind: "job" as const, state: r.state, count: Number(r.n) })),
    ...recipients.map((r) => ({ kind: "recipient" as const, state: r.state, count: Number(r.n) })),
    ...notifications.map((r) => ({ kind: "notification" as const, state: r.state, count: Number(r.n) })),
  ];
}

/** A data center's open work, as the console's queue chart plots it. */
export interface OpenWork {
  /** Jobs waiting to be rendered or being rendered (pending, rendering). */
  toRender: number;
  /** Recipients whose call is due now (ready, run_at reached) but not yet placed. */
  due: number;
  /** Recipients waiting for a later try (ready, run_at ahead: retries, scheduled starts). */
  later: number;
  /** Recipients in a call (sending). */
  inCall: number;
  /** Status pushes and mails not yet delivered or given up (pending, delivering). */
  notifications: number;
}

/**
 * The open work of each data center, counted along the (datacenter, state …) indexes of the
 * three tables: only open states, so the cost follows the queue, not the history retention keeps.
 */
export async function openWork(db: Kysely<Database>, datacenters: readonly string[], now: number): Promise<Record<string, OpenWork>> {
  const dcs = [...datacenters];
  const [jobs, recipients, notifications] = await Promise.all([
    db.selectFrom("jobs").select(["datacenter", (eb) => eb.fn.countAll().as("n")]).where("datacenter", "in", dcs).where("state", "in", ["pending", "rendering"]).groupBy("datacenter").execute(),
    db
      .selectFrom("recipients")
      .select(["datacenter", "state", (eb) => eb.fn.countAll().as("n"), (eb) => eb.fn.sum(eb.case().when("run_at", "<=", now).then(1).else(0).end()).as("due")])
      .where("datacenter", "in", dcs)
      .where("state", "in", ["ready", "sending"])
      .groupBy(["datacenter", "state"])
      .execute(),
    db.selectFrom("notifications").select(["datacenter", (eb) => eb.fn.countAll().as("n")]).where("datacenter", "in", dcs).where("state", "in", ["pending", "delivering"]).groupBy("datacenter").execute(),
  ]);
  const out: Record<string, OpenWork> = {};
  for (const dc of dcs) out[dc] = { toRender: 0, due: 0, later: 0, inCall: 0, notifications: 0 };
  for (const r of jobs) out[r.datacenter]!.toRender = Number(r.n);
  for (const r of recipients) {
    const w = out[r.datacenter]!;
    if (r.state === "sending") w.inCall = Number(r.n);
    else {
      w.due = Number(r.due ?? 0);
      w.later = Number(r.n) - w.due;
    }
  }
  for (const r of notifications) out[r.datacenter]!.notifications = Number(r.n);
  return out;
}

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

/**
 * What the console's Operations page shows an operator, over all customers: calls running now,
 * failure reasons of the last hour, and destinations that keep failing. Nodes and queue depths
 * come from nodes.ts and queue-depths.ts.
 */
import type { Kysely } from "kysely";
import type { Database } from "../database.ts";

export interface RunningCall {
  jobId: string;
  /** test (the simulated test line) or sip (a trunk). */
  line: "test" | "sip";
  e164: string;
  node: string;
  startedAt: number;
  attemptNo: number;
}

/** Attempts in progress (a call placed or being placed), oldest first. */
export async function runningCalls(db: Kysely<Database>, datacenters: readonly string[], limit = 200): Promise<RunningCall[]> {
  const rows = await db
    .selectFrom("attempts")
    .innerJoin("recipients", "recipients.id", "attempts.recipient_id")
    .innerJoin("jobs", "jobs.id", "attempts.job_id")
    .select(["attempts.job_id", "attempts.e164", "attempts.node", "attempts.started_at", "attempts.attempt_no", "jobs.is_test"])
    .where("recipients.state", "=", "sending")
    .where("recipients.datacenter", "in", [...datacenters])
    .where("attempts.result", "=", "in_progress")
    .orderBy("attempts.started_at")
    .limit(limit)
    .execute();
  return rows.map((r) => ({ jobId: r.job_id, line: r.is_test === 1 ? ("test" as const) : ("sip" as const), e164: r.e164, node: r.node, startedAt: Number(r.started_at), attemptNo: r.attempt_no }));
}

export interface ReasonCount {
  reasonCode: string;
  count: number;
}

/** Failed and abandoned attempts that ended since `since`, by failure reason, most frequent first. */
export async function failureReasonsSince(db: Kysely<Database>, since: number): Promise<ReasonCount[]> {
  const rows = await db
    .selectFrom("attempts")
    .select(["reason_code", (eb) => eb.fn.countAll().as("n")])
    .where("ended_at", ">=", since)
    .where("result", "in", ["failed", "abandoned"])
    .groupBy("reason_code")
    .execute();
  return rows.map((r) => ({ reasonCode: r.reason_code ?? "unknown", count: Number(r.n) })).sort((a, b) => b.count - a.count);
}

export interface FailingDestination {
  e164: string;
  failures: number;
  delivered: number;
  lastReasonCode: string | null;
  lastAttemptAt: number;
}

/** Numbers with at least `minFailures` failed attempts since `since` and more failures than deliveries. */
export async function failingDestinations(db: Kysely<Database>, since: number, minFailures = 3, limit = 20): Promise<FailingDestination[]> {
  const rows = await db
    .selectFrom("attempts")
    .select([
      "e164",
      (eb) => eb.fn.sum<number>(eb.case().when("result", "=", "failed").then(1).else(0).end()).as("failures"),
      (eb) => eb.fn.sum<number>(eb.case().when("result", "=", "delivered").then(1).else(0).end()).as("delivered"),
      (eb) => eb.fn.max("ended_at").as("last_at"),
    ])
    .where("ended_at", ">=", since)
    .groupBy("e164")
    .execute();
  const failing = rows
    .map((r) => ({ e164: r.e164, failures: Number(r.failures), delivered: Number(r.delivered), lastAttemptAt: Number(r.last_at) }))
    .filter((r) => r.failures >= minFailures && r.failures > r.delivered)
    .sort((a, b) => b.failures - a.failures || b.lastAttemptAt - a.lastAttemptAt)
    .slice(0, limit);
  const out: FailingDestination[] = [];
  for (const d of failing) {
    const last = await db
      .selectFrom("attempts")
      .select("reason_code")
      .where("ended_at", ">=", since)
      .where("e164", "=", d.e164)
      .where("result", "=", "failed")
      .orderBy("ended_at", "desc")
      .limit(1)
      .executeTakeFirst();
    out.push({ ...d, lastReasonCode: last?.reason_code ?? null });
  }
  return out;
}

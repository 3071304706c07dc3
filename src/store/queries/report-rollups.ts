/**
 * The reporting interface's daily rollups (migration 0025; docs/reporting.md "Rollups"): what the
 * aggregate queries read instead of scanning months of attempts, recipients and receptions.
 *
 * Counting happens in the transaction that ends a row, so a count can neither be lost nor taken
 * twice:
 *  - `rollUpJob` counts a job's calls (attempts) that ended and its faxes (recipients) that became
 *    final and are not counted yet, and marks them (`rolled_up = 1`). The outcome functions
 *    (scheduler/recipient-outcomes.ts) call it under the job's lock whenever a call ends or a
 *    recipient becomes final;
 *  - `rollUpReception` counts a reception; storing it (inbound/enqueue-reception.ts) calls it.
 * Rows that something ended without counting them (rows of before migration 0025, or a call whose
 * outcome arrived after its lease was lost) are counted by `rollUpPending`, which the retention
 * role runs every round; deleting a job or a reception counts it first. So the rollups keep what
 * the purges delete: they outlive the rows by design (reporting.rollupRetention).
 *
 * Days are UTC days (`day` = midnight, ms). A call counts on the day it ended, a fax on the day
 * it became final, a reception on the day it arrived. Data center: the one that accepted the job
 * (jobSubmissionDc) or received the fax; an adoption moves ownership, not counts.
 *
 * Upserts add to a row (`faxes = faxes + excluded.faxes`), rows sorted by key so that two
 * transactions touching the same rows lock them in the same order.
 */
import { sql, type Kysely } from "kysely";
import { countryOfNumber } from "../../numbers/country-of-number.ts";
import type { Database, ReceivedFaxRow, RecipientRow } from "../database.ts";

export const DAY_MS = 86_400_000;

/** Receptions younger than this are left to the transaction that stores them. */
const RECEPTION_SWEEP_AGE_MS = 5 * 60_000;

/** Jobs counted per transaction by the rollup sweep. */
const ROLLUP_BATCH = 100;

/** UTC midnight of an instant, ms. */
export function dayOf(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

type RollupTable = "report_out_faxes" | "report_out_calls" | "report_out_failures" | "report_in_faxes";

const KEYS: Record<RollupTable, readonly string[]> = {
  report_out_faxes: ["cust_nr", "day", "login", "datacenter", "service", "country", "status", "reason"],
  report_out_calls: ["cust_nr", "day", "login", "datacenter", "service", "country", "trunk", "result", "reason"],
  report_out_failures: ["cust_nr", "day", "login", "datacenter", "service", "number", "country", "reason"],
  report_in_faxes: ["cust_nr", "day", "topic", "datacenter", "service", "country", "status", "reason"],
};

const MEASURES: Record<RollupTable, readonly string[]> = {
  report_out_faxes: ["faxes", "pages", "attempts", "line_secs"],
  report_out_calls: ["calls", "connected", "pages", "line_secs"],
  report_out_failures: ["faxes", "attempts"],
  report_in_faxes: ["faxes", "pages", "line_secs"],
};

export const ROLLUP_TABLES = Object.keys(KEYS) as RollupTable[];

type Row = Record<string, string | number>;

/** Contributions to the rollups, summed by key before they are written. */
class Contributions {
  readonly #rows = new Map<RollupTable, Map<string, Row>>();

  add(table: RollupTable, row: Row): void {
    const keyColumns = KEYS[table];
    const key = keyColumns.map((k) => String(row[k])).join("\u0000");
    let rows = this.#rows.get(table);
    if (!rows) this.#rows.set(table, (rows = new Map()));
    const existing = rows.get(key);
    if (!existing) {
      rows.set(key, { ...row });
      return;
    }
    for (const m of MEASURES[table]) existing[m] = Number(existing[m] ?? 0) + Number(row[m] ?? 0);
  }

  async write(db: Kysely<Database>): Promise<void> {
    for (const table of ROLLUP_TABLES) {
      const rows = this.#rows.get(table);
      if (!rows || rows.size === 0) continue;
      const sorted = [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
      for (let i = 0; i < sorted.length; i += 100) {
        const slice = sorted.slice(i, i + 100);
        await db
          .insertInto(table)
          .values(slice as never)
          .onConflict((oc) =>
            oc.columns(KEYS[table] as never).doUpdateSet(Object.fromEntries(MEASURES[table].map((m) => [m, sql`${sql.ref(`${table}.${m}`)} + excluded.${sql.ref(m)}`])) as never),
          )
          .execute();
      }
    }
  }
}

/** The fax's destination: the number its last call dialled, else its first number. */
function destinationOf(r: Pick<RecipientRow, "current_e164" | "dial_targets">): string {
  if (r.current_e164) return r.current_e164;
  try {
    return (JSON.parse(r.dial_targets) as { e164: string }[])[0]?.e164 ?? "";
  } catch {
    return "";
  }
}

/**
 * Counts what of the job ended and is not counted yet: its ended calls and its final faxes.
 * Call it in the transaction that ended them (the outcome functions hold the job's lock; this
 * takes it too). Returns how many calls and faxes it counted.
 */
export function rollUpJob(trx: Kysely<Database>, jobId: string): Promise<{ calls: number; faxes: number }> {
  return rollUpJobSet(trx, [jobId]);
}

/**
 * `rollUpJob` for several jobs at once, in the caller's transaction: the rollup sweep's batches
 * (a backfill of a million faxes takes minutes, not hours). Their locks are taken first, by one
 * statement in id order.
 */
export async function rollUpJobSet(trx: Kysely<Database>, jobIds: readonly string[]): Promise<{ calls: number; faxes: number }> {
  const ids = [...new Set(jobIds)].sort();
  if (ids.length === 0) return { calls: 0, faxes: 0 };
  // The jobs' locks (as scheduler/recipient-outcomes.ts lockJob: a write that changes nothing),
  // so that two transactions never count the same rows; a caller that holds one loses nothing.
  for (let i = 0; i < ids.length; i += 500) {
    await trx.updateTable("jobs").set((eb) => ({ render_attempts: eb.ref("render_attempts") })).where("id", "in", ids.slice(i, i + 500)).execute();
  }
  const jobs = new Map(
    (await trx.selectFrom("jobs").select(["id", "cust_nr", "login", "datacenter", "accepted_datacenter", "source"]).where("id", "in", ids).execute()).map((j) => [j.id, j]),
  );
  const calls = await trx
    .selectFrom("attempts")
    .select(["id", "job_id", "e164", "country", "trunk", "result", "reason_code", "ended_at", "started_at", "duration_secs", "pages_sent"])
    .where("recipient_id", "in", (eb) => eb.selectFrom("recipients").select("id").where("job_id", "in", ids))
    .where("rolled_up", "=", 0)
    .where("result", "!=", "in_progress")
    .execute();
  const faxes = await trx
    .selectFrom("recipients")
    .selectAll()
    .where("job_id", "in", ids)
    .where("rolled_up", "=", 0)
    .where("state", "in", ["succeeded", "failed"])
    .execute();
  if (calls.length === 0 && faxes.length === 0) return { calls: 0, faxes: 0 };

  const baseOf = (jobId: string) => {
    const job = jobs.get(jobId)!;
    return { cust_nr: job.cust_nr, login: job.login, datacenter: job.accepted_datacenter ?? job.datacenter, service: job.source };
  };
  const out = new Contributions();
  for (const a of calls) {
    if (!jobs.has(a.job_id)) continue;
    const ended = Number(a.ended_at ?? a.started_at);
    out.add("report_out_calls", {
      ...baseOf(a.job_id),
      day: dayOf(ended),
      country: a.country ?? countryOfNumber(a.e164),
      trunk: a.trunk ?? "",
      result: a.result,
      reason: a.result === "delivered" ? "" : a.reason_code ?? "",
      calls: 1,
      connected: a.duration_secs > 0 ? 1 : 0,
      pages: a.pages_sent,
      line_secs: a.duration_secs,
    });
  }
  if (faxes.length > 0) {
    const totals = new Map<string, { attempts: number; lineSecs: number }>();
    const recipientIds = faxes.map((r) => r.id);
    for (let i = 0; i < recipientIds.length; i += 500) {
      const rows = await trx
        .selectFrom("attempts")
        .select((eb) => ["recipient_id", eb.fn.countAll().as("n"), eb.fn.sum<number>("duration_secs").as("secs")])
        .where("recipient_id", "in", recipientIds.slice(i, i + 500))
        .groupBy("recipient_id")
        .execute();
      for (const row of rows) totals.set(row.recipient_id, { attempts: Number(row.n), lineSecs: Number(row.secs ?? 0) });
    }
    for (const r of faxes) {
      const number = destinationOf(r);
      const country = countryOfNumber(number);
      const t = totals.get(r.id) ?? { attempts: 0, lineSecs: 0 };
      const day = dayOf(Number(r.finished_at ?? 0));
      const reason = r.state === "succeeded" ? "" : r.reason_code ?? "";
      const base = baseOf(r.job_id);
      out.add("report_out_faxes", { ...base, day, country, status: r.status ?? "", reason, faxes: 1, pages: r.pages_sent, attempts: t.attempts, line_secs: t.lineSecs });
      if (r.state === "failed") out.add("report_out_failures", { ...base, day, number, country, reason, faxes: 1, attempts: t.attempts });
    }
  }
  await out.write(trx);
  for (let i = 0; i < calls.length; i += 500) {
    const slice = calls.slice(i, i + 500);
    await trx.updateTable("attempts").set({ rolled_up: 1 }).where("id", "in", slice.map((a) => a.id)).execute();
    // Attempts of before migration 0025 learn their country here, one statement per country.
    const byCountry = new Map<string, string[]>();
    for (const a of slice) {
      if (a.country !== null) continue;
      const c = countryOfNumber(a.e164);
      byCountry.set(c, [...(byCountry.get(c) ?? []), a.id]);
    }
    for (const [country, idsOfCountry] of byCountry) await trx.updateTable("attempts").set({ country }).where("id", "in", idsOfCountry).execute();
  }
  for (let i = 0; i < faxes.length; i += 500) {
    await trx.updateTable("recipients").set({ rolled_up: 1 }).where("id", "in", faxes.slice(i, i + 500).map((r) => r.id)).execute();
  }
  return { calls: calls.length, faxes: faxes.length };
}

/** The provider's accountingService of a reception, by the deliveries queued for it. */
export function accountingServiceOf(channels: readonly string[]): string {
  const has = (c: string) => channels.includes(c);
  if (has("sftp") || has("ftp")) return "F2FTP";
  if (has("email")) return "F2Mail";
  if (has("http")) return "F2WS";
  return "F2WSPull";
}

/**
 * Counts a reception, unless it is counted already, and records the data center that received it
 * and its accountingService. Call it in the transaction that stores it (after its deliveries are
 * queued: they decide the service). True when it counted it.
 */
export async function rollUpReception(trx: Kysely<Database>, faxId: string): Promise<boolean> {
  // Claimed by the write that marks it: of two sweeps, one counts it.
  const claimed = await trx.updateTable("received_faxes").set({ rolled_up: 1 }).where("id", "=", faxId).where("rolled_up", "=", 0).executeTakeFirst();
  if (Number(claimed.numUpdatedRows) === 0) return false;
  const fax = await trx.selectFrom("received_faxes").selectAll().where("id", "=", faxId).executeTakeFirstOrThrow();
  const channels = await trx.selectFrom("notifications").select("channel").distinct().where("job_id", "=", faxId).execute();
  const service = fax.accounting_service ?? accountingServiceOf(channels.map((c) => c.channel));
  const datacenter = fax.received_datacenter ?? fax.datacenter;
  const out = new Contributions();
  out.add("report_in_faxes", receptionRow(fax, datacenter, service));
  await out.write(trx);
  await trx.updateTable("received_faxes").set({ received_datacenter: datacenter, accounting_service: service }).where("id", "=", faxId).execute();
  return true;
}

function receptionRow(fax: ReceivedFaxRow, datacenter: string, service: string): Row {
  return {
    cust_nr: fax.cust_nr,
    day: dayOf(Number(fax.received_at)),
    topic: fax.topic,
    datacenter,
    service,
    country: countryOfNumber(fax.to_number),
    status: fax.status,
    reason: fax.status === "OK" ? "" : fax.reason_code ?? "",
    faxes: 1,
    pages: fax.pages,
    line_secs: fax.duration_secs,
  };
}

/** Counts the given receptions that are not counted yet (before they are deleted). */
export async function rollUpReceptions(db: Kysely<Database>, ids: readonly string[]): Promise<number> {
  let counted = 0;
  for (let i = 0; i < ids.length; i += 500) {
    const pending = await db.selectFrom("received_faxes").select("id").where("id", "in", ids.slice(i, i + 500)).where("rolled_up", "=", 0).execute();
    for (const p of pending) {
      const done = db.isTransaction ? await rollUpReception(db, p.id) : await db.transaction().execute((trx) => rollUpReception(trx, p.id));
      if (done) counted += 1;
    }
  }
  return counted;
}

/** Counts the given jobs' rows that are not counted yet (before the jobs are deleted). */
export async function rollUpJobs(db: Kysely<Database>, jobIds: readonly string[]): Promise<void> {
  for (let i = 0; i < jobIds.length; i += 500) {
    const slice = jobIds.slice(i, i + 500);
    const pendingFaxes = await db.selectFrom("recipients").select("job_id").distinct().where("rolled_up", "=", 0).where("job_id", "in", slice).execute();
    const pendingCalls = await db
      .selectFrom("attempts")
      .select("job_id")
      .distinct()
      .where("rolled_up", "=", 0)
      .where("result", "!=", "in_progress")
      .where("recipient_id", "in", (eb) => eb.selectFrom("recipients").select("id").where("job_id", "in", slice))
      .execute();
    const pending = [...new Set([...pendingFaxes, ...pendingCalls].map((r) => r.job_id))];
    if (pending.length === 0) continue;
    if (db.isTransaction) await rollUpJobSet(db, pending);
    else await db.transaction().execute((trx) => rollUpJobSet(trx, pending));
  }
}

export interface RollUpPendingResult {
  jobs: number;
  calls: number;
  faxes: number;
  receptions: number;
}

/**
 * Counts up to `limit` jobs and `limit` receptions that ended without being counted (the
 * backfill of rows of before migration 0025, and stragglers). Each job in a transaction of its
 * own, under its lock. Run it until it returns zeros to count everything. The retention role runs
 * it every round.
 */
export async function rollUpPending(db: Kysely<Database>, limit: number, now = Date.now()): Promise<RollUpPendingResult> {
  const result: RollUpPendingResult = { jobs: 0, calls: 0, faxes: 0, receptions: 0 };
  const faxJobs = await db
    .selectFrom("recipients")
    .select("job_id")
    .where("rolled_up", "=", 0)
    .where("state", "in", ["succeeded", "failed"])
    .limit(limit)
    .execute();
  const callJobs = await db
    .selectFrom("attempts")
    .select("job_id")
    .where("rolled_up", "=", 0)
    .where("result", "!=", "in_progress")
    .limit(limit)
    .execute();
  const jobIds = [...new Set([...faxJobs, ...callJobs].map((r) => r.job_id))].slice(0, limit);
  // Batches of jobs per transaction: short transactions, few round trips.
  for (let i = 0; i < jobIds.length; i += ROLLUP_BATCH) {
    const batch = jobIds.slice(i, i + ROLLUP_BATCH);
    const counted = await db.transaction().execute((trx) => rollUpJobSet(trx, batch));
    result.jobs += batch.length;
    result.calls += counted.calls;
    result.faxes += counted.faxes;
  }
  // Receptions are counted as they are stored; the sweep takes only those a while old (rows of
  // before migration 0025), so that it never locks a fresh one a poller's claim (SKIP LOCKED) would then pass over.
  const receptions = await db
    .selectFrom("received_faxes")
    .select("id")
    .where("rolled_up", "=", 0)
    .where("received_at", "<", now - RECEPTION_SWEEP_AGE_MS)
    .orderBy("received_at")
    .limit(limit)
    .execute();
  for (const r of receptions) {
    if (await db.transaction().execute((trx) => rollUpReception(trx, r.id))) result.receptions += 1;
  }
  return result;
}

/**
 * Counts the UTC days [fromDay, toDay) again from the rows still in the store
 * (`faxline report rebuild-rollups --from … --to …`): their rollup rows are deleted, the rows that
 * ended on them are marked uncounted, and `rollUpPending` counts them again. What a purge deleted
 * from those days is then gone from their counts too; without a range, only what was never
 * counted is counted.
 */
export async function resetRollupDays(db: Kysely<Database>, fromDay: number, toDay: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const table of ROLLUP_TABLES) await trx.deleteFrom(table).where("day", ">=", fromDay).where("day", "<", toDay).execute();
    await trx.updateTable("attempts").set({ rolled_up: 0 }).where("ended_at", ">=", fromDay).where("ended_at", "<", toDay).where("rolled_up", "=", 1).execute();
    await trx.updateTable("recipients").set({ rolled_up: 0 }).where("finished_at", ">=", fromDay).where("finished_at", "<", toDay).where("rolled_up", "=", 1).execute();
    await trx.updateTable("received_faxes").set({ rolled_up: 0 }).where("received_at", ">=", fromDay).where("received_at", "<", toDay).where("rolled_up", "=", 1).execute();
  });
}

/** Deletes rollup rows of days before `beforeDay` (reporting.rollupRetention); returns how many. */
export async function purgeRollups(db: Kysely<Database>, beforeDay: number): Promise<number> {
  let deleted = 0;
  for (const table of ROLLUP_TABLES) deleted += Number((await db.deleteFrom(table).where("day", "<", beforeDay).executeTakeFirst()).numDeletedRows);
  return deleted;
}

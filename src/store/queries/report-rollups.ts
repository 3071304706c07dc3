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
import { sql, type Kysely, type RawBuilder } from "kysely";
import { countryOfNumber } from "../../numbers/country-of-number.ts";
import type { Database, ReceivedFaxRow, RecipientRow } from "../database.ts";

export const DAY_MS = 86_400_000;

/** Receptions younger than this are left to the transaction that stores them. */
const RECEPTION_SWEEP_AGE_MS = 5 * 60_000;

/**
 * Jobs counted per transaction by the rollup sweep: one statement per kind of row for the whole
 * batch (`rollUpJobBatch`), so a backfill of a million faxes takes minutes (docs/benchmarks.md).
 */
const ROLLUP_BATCH = 2000;

/** Receptions counted per transaction by the rollup sweep. */
const RECEPTION_BATCH = 500;

/** Ids per IN list. */
const IN_LIST = 500;

/** UTC midnight of an instant, ms. */
export function dayOf(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** The daily rollups: a row per UTC day and combination of dimensions. */
type DailyTable = "report_out_faxes" | "report_out_calls" | "report_out_failures" | "report_in_faxes";
/** What the upserts write: the daily rollups and the failed faxes per number (migration 0043). */
type RollupTable = DailyTable | "report_out_failing_numbers";

const KEYS: Record<RollupTable, readonly string[]> = {
  report_out_faxes: ["cust_nr", "day", "login", "datacenter", "service", "country", "status", "reason"],
  report_out_calls: ["cust_nr", "day", "login", "datacenter", "service", "country", "trunk", "result", "reason"],
  report_out_failures: ["cust_nr", "day", "login", "datacenter", "service", "number", "country", "reason"],
  report_in_faxes: ["cust_nr", "day", "topic", "datacenter", "service", "country", "status", "reason"],
  report_out_failing_numbers: ["cust_nr", "number"],
};

/** Summed columns. */
const MEASURES: Record<RollupTable, readonly string[]> = {
  report_out_faxes: ["faxes", "pages", "attempts", "line_secs"],
  report_out_calls: ["calls", "connected", "pages", "line_secs"],
  report_out_failures: ["faxes", "attempts"],
  report_in_faxes: ["faxes", "pages", "line_secs"],
  report_out_failing_numbers: ["faxes", "attempts"],
};

/** Columns that keep the least and the greatest value written (report_out_failing_numbers' days). */
const LEAST: Partial<Record<RollupTable, readonly string[]>> = { report_out_failing_numbers: ["first_day"] };
const GREATEST: Partial<Record<RollupTable, readonly string[]>> = { report_out_failing_numbers: ["last_day"] };

export const ROLLUP_TABLES: readonly DailyTable[] = ["report_out_faxes", "report_out_calls", "report_out_failures", "report_in_faxes"];
const WRITTEN_TABLES: readonly RollupTable[] = [...ROLLUP_TABLES, "report_out_failing_numbers"];

/** Who sees every customer's failing numbers (operators): their rows' cust_nr. */
export const ALL_CUSTOMERS = "";

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
    for (const c of LEAST[table] ?? []) existing[c] = Math.min(Number(existing[c]), Number(row[c]));
    for (const c of GREATEST[table] ?? []) existing[c] = Math.max(Number(existing[c]), Number(row[c]));
  }

  /** A failed fax (a report_out_failures row) and its number's totals, the customer's and everyone's. */
  addFailure(row: Row): void {
    this.add("report_out_failures", row);
    const totals = { number: row.number!, country: row.country!, faxes: row.faxes!, attempts: row.attempts!, first_day: row.day!, last_day: row.day! };
    this.add("report_out_failing_numbers", { cust_nr: row.cust_nr!, ...totals });
    this.add("report_out_failing_numbers", { cust_nr: ALL_CUSTOMERS, ...totals });
  }

  async write(db: Kysely<Database>, rowsPerStatement = 100): Promise<void> {
    for (const table of WRITTEN_TABLES) {
      const rows = this.#rows.get(table);
      if (!rows || rows.size === 0) continue;
      const sorted = [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
      const t = (c: string) => sql.ref(`${table}.${c}`);
      const x = (c: string) => sql`excluded.${sql.ref(c)}`;
      const set = {
        ...Object.fromEntries(MEASURES[table].map((m) => [m, sql`${t(m)} + ${x(m)}`])),
        // CASE, not least()/min(): the same in both dialects.
        ...Object.fromEntries((LEAST[table] ?? []).map((c) => [c, sql`case when ${x(c)} < ${t(c)} then ${x(c)} else ${t(c)} end`])),
        ...Object.fromEntries((GREATEST[table] ?? []).map((c) => [c, sql`case when ${x(c)} > ${t(c)} then ${x(c)} else ${t(c)} end`])),
      };
      for (let i = 0; i < sorted.length; i += rowsPerStatement) {
        const slice = sorted.slice(i, i + rowsPerStatement);
        await db
          .insertInto(table)
          .values(slice as never)
          .onConflict((oc) => oc.columns(KEYS[table] as never).doUpdateSet(set as never))
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
export async function rollUpJobSet(trx: Kysely<Database>, jobIds: readonly string[], into?: Contributions): Promise<{ calls: number; faxes: number }> {
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
  // A caller's batch (rollUpJobBatch) takes these counts into its own, written once in key order.
  const out = into ?? new Contributions();
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
      if (r.state === "failed") out.addFailure({ ...base, day, number, country, reason, faxes: 1, attempts: t.attempts });
    }
  }
  if (into === undefined) await out.write(trx);
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

function receptionRow(fax: Pick<ReceivedFaxRow, "cust_nr" | "received_at" | "topic" | "to_number" | "status" | "reason_code" | "pages" | "duration_secs">, datacenter: string, service: string): Row {
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
 * backfill of rows of before migration 0025, and stragglers): jobs in batches of ROLLUP_BATCH per
 * transaction, under their locks, set-based (`rollUpJobBatch`); receptions in batches of
 * RECEPTION_BATCH. Run it until it returns zeros to count everything. The retention role runs it
 * every round.
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
  const jobIds = [...new Set([...faxJobs, ...callJobs].map((r) => r.job_id))].sort().slice(0, limit);
  // Batches of jobs per transaction, counted set-based: few statements for many rows.
  for (let i = 0; i < jobIds.length; i += ROLLUP_BATCH) {
    const batch = jobIds.slice(i, i + ROLLUP_BATCH);
    const counted = await db.transaction().execute((trx) => rollUpJobBatch(trx, batch));
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
  for (let i = 0; i < receptions.length; i += RECEPTION_BATCH) {
    const batch = receptions.slice(i, i + RECEPTION_BATCH).map((r) => r.id);
    result.receptions += await db.transaction().execute((trx) => rollUpReceptionBatch(trx, batch));
  }
  return result;
}

const dayExpr = (ms: RawBuilder<unknown>) => sql<number>`(${ms} / ${sql.lit(DAY_MS)}) * ${sql.lit(DAY_MS)}`;
const FINAL_STATES = ["succeeded", "failed"] as const;

/**
 * `rollUpJobSet` for a batch of jobs, set-based: the batch's ended calls and final faxes are read
 * grouped by the rollups' keys in SQL (one statement each), summed into the rollups in key order
 * (as the outcome functions write them, so the two never lock rows in opposite orders), and marked
 * counted by one statement each. What SQL alone cannot place goes the per-job way
 * (`rollUpJobSet`, in the same transaction): calls without a country (rows of before migration
 * 0025) and faxes without a current number. A fax's country is that of the call that dialled its
 * number (attempts.country, countryOfNumber of the same number), else countryOfNumber here.
 */
async function rollUpJobBatch(trx: Kysely<Database>, jobIds: readonly string[]): Promise<{ calls: number; faxes: number }> {
  const ids = [...new Set(jobIds)].sort();
  if (ids.length === 0) return { calls: 0, faxes: 0 };
  for (let i = 0; i < ids.length; i += IN_LIST) {
    await trx.updateTable("jobs").set((eb) => ({ render_attempts: eb.ref("render_attempts") })).where("id", "in", ids.slice(i, i + IN_LIST)).execute();
  }
  const out = new Contributions();
  let calls = 0;
  let faxes = 0;
  for (let i = 0; i < ids.length; i += IN_LIST) {
    const slice = ids.slice(i, i + IN_LIST);
    const dc = sql<string>`coalesce(j.accepted_datacenter, j.datacenter)`;
    const callDay = dayExpr(sql`coalesce(a.ended_at, a.started_at)`);
    const trunk = sql<string>`coalesce(a.trunk, '')`;
    const callReason = sql<string>`case when a.result = 'delivered' then '' else coalesce(a.reason_code, '') end`;
    const callRows = await trx
      .selectFrom("attempts as a")
      .innerJoin("jobs as j", "j.id", "a.job_id")
      .select((eb) => [
        "j.cust_nr",
        callDay.as("day"),
        "j.login",
        dc.as("datacenter"),
        "j.source as service",
        "a.country",
        trunk.as("trunk"),
        "a.result",
        callReason.as("reason"),
        eb.fn.countAll().as("calls"),
        sql<number>`sum(case when a.duration_secs > 0 then 1 else 0 end)`.as("connected"),
        eb.fn.sum("a.pages_sent").as("pages"),
        eb.fn.sum("a.duration_secs").as("line_secs"),
      ])
      .where("a.job_id", "in", slice)
      .where("a.rolled_up", "=", 0)
      .where("a.result", "!=", "in_progress")
      .where("a.country", "is not", null)
      .groupBy([sql.ref("j.cust_nr"), callDay, sql.ref("j.login"), dc, sql.ref("j.source"), sql.ref("a.country"), trunk, sql.ref("a.result"), callReason])
      .execute();
    for (const r of callRows) {
      calls += Number(r.calls);
      out.add("report_out_calls", { ...r, day: Number(r.day), country: r.country!, calls: Number(r.calls), connected: Number(r.connected), pages: Number(r.pages), line_secs: Number(r.line_secs) });
    }
    await trx.updateTable("attempts").set({ rolled_up: 1 }).where("job_id", "in", slice).where("rolled_up", "=", 0).where("result", "!=", "in_progress").where("country", "is not", null).execute();

    // Each final fax with its calls' count and time, and the country of the call that dialled its number.
    const totals = trx
      .selectFrom("attempts as a")
      .innerJoin("recipients as r", "r.id", "a.recipient_id")
      .select((eb) => [
        "a.recipient_id",
        eb.fn.countAll().as("n"),
        eb.fn.sum("a.duration_secs").as("secs"),
        sql<string | null>`max(case when a.e164 = r.current_e164 then a.country end)`.as("country"),
      ])
      .where("r.job_id", "in", slice)
      .where("r.rolled_up", "=", 0)
      .where("r.state", "in", FINAL_STATES)
      .groupBy("a.recipient_id");
    const faxDay = dayExpr(sql`coalesce(r.finished_at, 0)`);
    const faxReason = sql<string>`case when r.state = 'succeeded' then '' else coalesce(r.reason_code, '') end`;
    const faxRows = await trx
      .with("t", () => totals)
      .selectFrom("recipients as r")
      .innerJoin("jobs as j", "j.id", "r.job_id")
      .leftJoin("t", "t.recipient_id", "r.id")
      .select((eb) => [
        "j.cust_nr",
        faxDay.as("day"),
        "j.login",
        dc.as("datacenter"),
        "j.source as service",
        "r.current_e164 as number",
        "t.country",
        sql<string>`coalesce(r.status, '')`.as("status"),
        faxReason.as("reason"),
        "r.state",
        eb.fn.countAll().as("faxes"),
        eb.fn.sum("r.pages_sent").as("pages"),
        sql<number>`coalesce(sum(t.n), 0)`.as("attempts"),
        sql<number>`coalesce(sum(t.secs), 0)`.as("line_secs"),
      ])
      .where("r.job_id", "in", slice)
      .where("r.rolled_up", "=", 0)
      .where("r.state", "in", FINAL_STATES)
      .where("r.current_e164", "is not", null)
      .where("r.current_e164", "!=", "")
      .groupBy([sql.ref("j.cust_nr"), faxDay, sql.ref("j.login"), dc, sql.ref("j.source"), sql.ref("r.current_e164"), sql.ref("t.country"), sql`coalesce(r.status, '')`, faxReason, sql.ref("r.state")])
      .execute();
    for (const r of faxRows) {
      const n = Number(r.faxes);
      faxes += n;
      const number = r.number!;
      const country = r.country ?? countryOfNumber(number);
      const base = { cust_nr: r.cust_nr, login: r.login, datacenter: r.datacenter, service: r.service, day: Number(r.day), country, reason: r.reason };
      const attempts = Number(r.attempts);
      out.add("report_out_faxes", { ...base, status: r.status, faxes: n, pages: Number(r.pages), attempts, line_secs: Number(r.line_secs) });
      if (r.state === "failed") out.addFailure({ ...base, number, faxes: n, attempts });
    }
    await trx
      .updateTable("recipients")
      .set({ rolled_up: 1 })
      .where("job_id", "in", slice)
      .where("rolled_up", "=", 0)
      .where("state", "in", FINAL_STATES)
      .where("current_e164", "is not", null)
      .where("current_e164", "!=", "")
      .execute();
  }

  // What SQL could not place, the per-job way, into the same counts: the batch writes once, in
  // key order, as the outcome functions do (two writes would lock shared rows out of that order).
  const left = new Set<string>();
  for (let i = 0; i < ids.length; i += IN_LIST) {
    const slice = ids.slice(i, i + IN_LIST);
    for (const r of await trx.selectFrom("recipients").select("job_id").distinct().where("job_id", "in", slice).where("rolled_up", "=", 0).where("state", "in", FINAL_STATES).execute()) left.add(r.job_id);
    for (const r of await trx.selectFrom("attempts").select("job_id").distinct().where("job_id", "in", slice).where("rolled_up", "=", 0).where("result", "!=", "in_progress").execute()) left.add(r.job_id);
  }
  if (left.size > 0) {
    const rest = await rollUpJobSet(trx, [...left], out);
    calls += rest.calls;
    faxes += rest.faxes;
  }
  await out.write(trx, 500);
  return { calls, faxes };
}

/** `rollUpReception` for a batch of receptions: claimed, read and marked by a statement each. */
async function rollUpReceptionBatch(trx: Kysely<Database>, faxIds: readonly string[]): Promise<number> {
  if (faxIds.length === 0) return 0;
  const claimed = await trx.updateTable("received_faxes").set({ rolled_up: 1 }).where("id", "in", [...faxIds]).where("rolled_up", "=", 0).returning("id").execute();
  if (claimed.length === 0) return 0;
  const claimedIds = claimed.map((c) => c.id);
  const faxes = await trx
    .selectFrom("received_faxes")
    .select(["id", "cust_nr", "received_at", "topic", "datacenter", "received_datacenter", "accounting_service", "to_number", "status", "reason_code", "pages", "duration_secs"])
    .where("id", "in", claimedIds)
    .execute();
  const channels = new Map<string, string[]>();
  for (const c of await trx.selectFrom("notifications").select(["job_id", "channel"]).distinct().where("job_id", "in", claimedIds).execute()) {
    channels.set(c.job_id, [...(channels.get(c.job_id) ?? []), c.channel]);
  }
  const out = new Contributions();
  const recorded = new Map<string, string[]>();
  for (const fax of faxes) {
    const service = fax.accounting_service ?? accountingServiceOf(channels.get(fax.id) ?? []);
    const datacenter = fax.received_datacenter ?? fax.datacenter;
    out.add("report_in_faxes", receptionRow(fax, datacenter, service));
    const key = `${datacenter}\u0000${service}`;
    recorded.set(key, [...(recorded.get(key) ?? []), fax.id]);
  }
  await out.write(trx, 500);
  for (const [key, ids] of recorded) {
    const [datacenter, service] = key.split("\u0000") as [string, string];
    await trx.updateTable("received_faxes").set({ received_datacenter: datacenter, accounting_service: service }).where("id", "in", ids).execute();
  }
  return faxes.length;
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
    await deleteRollupDays(trx, fromDay, toDay);
    await trx.updateTable("attempts").set({ rolled_up: 0 }).where("ended_at", ">=", fromDay).where("ended_at", "<", toDay).where("rolled_up", "=", 1).execute();
    await trx.updateTable("recipients").set({ rolled_up: 0 }).where("finished_at", ">=", fromDay).where("finished_at", "<", toDay).where("rolled_up", "=", 1).execute();
    await trx.updateTable("received_faxes").set({ rolled_up: 0 }).where("received_at", ">=", fromDay).where("received_at", "<", toDay).where("rolled_up", "=", 1).execute();
  });
}

/**
 * Deletes rollup rows of days before `beforeDay` (reporting.rollupRetention), and takes their
 * failed faxes from report_out_failing_numbers; returns how many daily rows it deleted.
 */
export async function purgeRollups(db: Kysely<Database>, beforeDay: number): Promise<number> {
  return db.transaction().execute((trx) => deleteRollupDays(trx, 0, beforeDay));
}

/**
 * Deletes the rollup rows of days [fromDay, toDay) and takes their failed faxes from
 * report_out_failing_numbers (the customers' rows and everyone's), deleting the numbers left with
 * none; returns how many daily rows it deleted. What is taken is what this statement deleted
 * (DELETE … RETURNING), so two purges or a purge and a recount that overlap take each day once:
 * the second finds the rows gone. Tables are written in the order the outcome functions write them
 * (the daily tables, then report_out_failing_numbers, each in key order), so the two never wait on
 * each other in a circle. first_day and last_day stay as they were: bounds of the days left.
 */
async function deleteRollupDays(trx: Kysely<Database>, fromDay: number, toDay: number): Promise<number> {
  let deleted = 0;
  const taken = new Map<string, { cust_nr: string; number: string; faxes: number; attempts: number }>();
  for (const table of ROLLUP_TABLES) {
    if (table !== "report_out_failures") {
      deleted += Number((await trx.deleteFrom(table).where("day", ">=", fromDay).where("day", "<", toDay).executeTakeFirst()).numDeletedRows);
      continue;
    }
    const rows = await trx.deleteFrom("report_out_failures").where("day", ">=", fromDay).where("day", "<", toDay).returning(["cust_nr", "number", "faxes", "attempts"]).execute();
    deleted += rows.length;
    for (const r of rows) {
      const key = `${r.cust_nr}\u0000${r.number}`;
      const sum = taken.get(key) ?? { cust_nr: r.cust_nr, number: r.number, faxes: 0, attempts: 0 };
      sum.faxes += Number(r.faxes);
      sum.attempts += Number(r.attempts);
      taken.set(key, sum);
    }
  }
  if (taken.size === 0) return deleted;
  const out = new Contributions();
  for (const r of taken.values()) {
    // Upserts of numbers that have rows (every failure's number does): only the sums change.
    const minus = { number: r.number, country: "", faxes: -r.faxes, attempts: -r.attempts, first_day: Number.MAX_SAFE_INTEGER, last_day: 0 };
    out.add("report_out_failing_numbers", { cust_nr: r.cust_nr, ...minus });
    out.add("report_out_failing_numbers", { cust_nr: ALL_CUSTOMERS, ...minus });
  }
  await out.write(trx, 500);
  await trx.deleteFrom("report_out_failing_numbers").where("faxes", "<=", 0).execute();
  return deleted;
}

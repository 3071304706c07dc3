/**
 * A history of finished faxes and receptions written straight into a store with bulk inserts,
 * shaped as the engine leaves them (jobs completed, recipients final with their status and reason,
 * one attempt row per call, receptions with their topic), for the reporting tests and
 * bench:reporting (a million faxes in minutes; through the API it would take days of test line).
 *
 * Deterministic: a seeded generator picks each fax's day, customer, login, data center, country,
 * outcome and number of calls, so a test can count the same rows again by other means. The rows
 * are left uncounted (rolled_up = 0), as rows of before migration 0025: the rollup sweep counts
 * them (store/queries/report-rollups.ts rollUpPending), which is the backfill path.
 */
import type { Insertable, Kysely } from "kysely";
import type { Database } from "../../src/store/database.ts";

export interface SeedCustomer {
  custNr: string;
  logins: string[];
  topics: string[];
}

export interface SeedReportHistoryOptions {
  customers: SeedCustomer[];
  /** Faxes (one recipient each; every seventh job has two). */
  faxes: number;
  receptions: number;
  /** UTC midnight of the first day; the faxes spread over `days` days. */
  firstDay: number;
  days: number;
  datacenters: readonly string[];
  seed?: number;
  /** Distinct numbers drawn per destination prefix (1 000 000: nearly all distinct; a few dozen: numbers that fail again and again). */
  numbersPerPrefix?: number;
  /** Rows per insert statement and per transaction (bench: large). */
  rowsPerStatement?: number;
  rowsPerTransaction?: number;
  /** Called after each transaction with the faxes written so far. */
  onProgress?: (faxes: number) => void;
}

/** Where faxes go: E.164 prefixes of a few countries. */
export const SEED_DESTINATIONS = [
  { prefix: "+4930", country: "DEU" },
  { prefix: "+4989", country: "DEU" },
  { prefix: "+3314", country: "FRA" },
  { prefix: "+1212", country: "USA" },
  { prefix: "+4420", country: "GBR" },
  { prefix: "+3906", country: "ITA" },
] as const;

/** Final outcomes, weighted: most faxes are delivered. */
const OUTCOMES = [
  { status: "OK", reason: null, weight: 70 },
  { status: "BUSY", reason: "line_busy", weight: 10 },
  { status: "RING_TO", reason: "no_answer", weight: 6 },
  { status: "NOFAX", reason: "not_a_fax", weight: 6 },
  { status: "NOFAX_DIS", reason: "fax_disconnected", weight: 4 },
  { status: "EXPIRED", reason: "job_expired", weight: 4 },
] as const;

const TRUNKS = ["carrier-a", "carrier-b"];

/** mulberry32: a small seeded generator. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const DAY = 86_400_000;

export async function seedReportHistory(db: Kysely<Database>, options: SeedReportHistoryOptions): Promise<void> {
  const random = generator(options.seed ?? 33);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const totalWeight = OUTCOMES.reduce((s, o) => s + o.weight, 0);
  const outcome = () => {
    let r = random() * totalWeight;
    for (const o of OUTCOMES) if ((r -= o.weight) < 0) return o;
    return OUTCOMES[0];
  };
  const perStatement = options.rowsPerStatement ?? 200;
  const perTransaction = options.rowsPerTransaction ?? 5000;

  let written = 0;
  let serial = 0;
  while (written < options.faxes) {
    const jobs: Insertable<Database["jobs"]>[] = [];
    const recipients: Insertable<Database["recipients"]>[] = [];
    const attempts: Insertable<Database["attempts"]>[] = [];
    while (written < options.faxes && recipients.length < perTransaction) {
      const customer = pick(options.customers);
      const login = pick(customer.logins);
      const accepted = pick(options.datacenters);
      const day = options.firstDay + Math.floor(random() * options.days) * DAY;
      const created = day + Math.floor(random() * (DAY - 4 * 3_600_000));
      serial += 1;
      const jobId = `FJSEED${String(serial).padStart(10, "0")}`;
      const recipientCount = serial % 7 === 0 ? Math.min(2, options.faxes - written) : 1;
      let completed = created;
      for (let k = 0; k < recipientCount; k++) {
        const o = outcome();
        const destination = pick(SEED_DESTINATIONS);
        const e164 = `${destination.prefix}${String(Math.floor(random() * (options.numbersPerPrefix ?? 1_000_000))).padStart(6, "0")}`;
        const calls = o.reason === "job_expired" ? 0 : 1 + Math.floor(random() * 3);
        const recipientId = `FR${jobId.slice(2)}${k}`;
        let at = created + 60_000;
        let lastEnd = at;
        for (let n = 1; n <= calls; n++) {
          const delivered = o.status === "OK" && n === calls;
          const duration = delivered ? 30 + Math.floor(random() * 90) : o.reason === "line_busy" || o.reason === "no_answer" ? 0 : 5 + Math.floor(random() * 20);
          const ended = at + duration * 1000 + 2000;
          attempts.push({
            id: `att_${recipientId}_${n}`,
            recipient_id: recipientId,
            job_id: jobId,
            attempt_no: n,
            e164,
            dial_string: `00${e164.slice(1)}`,
            node: "seed",
            started_at: at,
            ended_at: ended,
            result: delivered ? "delivered" : "failed",
            reason_code: delivered ? null : o.status === "OK" ? "line_busy" : o.reason,
            raw_cause: null,
            pages_sent: delivered ? 2 : 0,
            duration_secs: duration,
            remote_csid: delivered ? e164 : null,
            transport: "t38",
            bit_rate: delivered ? 14400 : null,
            trunk: pick(TRUNKS),
            country: destination.country,
          });
          lastEnd = ended;
          at = ended + 300_000;
        }
        const finished = calls === 0 ? created + 3_600_000 : lastEnd;
        completed = Math.max(completed, finished);
        recipients.push({
          id: recipientId,
          job_id: jobId,
          ordinal: k,
          datacenter: accepted,
          is_express: 0,
          number: e164,
          alternative_numbers: null,
          properties: null,
          dial_targets: JSON.stringify([{ e164, dialString: `00${e164.slice(1)}` }]),
          target_index: 0,
          dead_targets: "[]",
          current_e164: e164,
          state: o.status === "OK" ? "succeeded" : "failed",
          run_at: created,
          attempt_count: calls,
          retries_used: "{}",
          status: o.status,
          reason_code: o.reason,
          reason_text: o.status,
          sent_at: calls === 0 ? null : lastEnd,
          duration_secs: 0,
          sent_to_number: null,
          remote_csid: null,
          pages_sent: o.status === "OK" ? 2 : 0,
          finished_at: finished,
        });
        written += 1;
      }
      jobs.push({
        id: jobId,
        cust_nr: customer.custNr,
        login,
        region: "DE",
        datacenter: accepted,
        accepted_datacenter: accepted,
        state: "completed",
        is_test: 0,
        is_express: 0,
        blacklist_check: 0,
        csid: null,
        paper_format: "A4",
        resolution: "HIGH",
        header: null,
        coverpage_template: null,
        overlay_name: null,
        overlay_mode: null,
        customer_defined_id: null,
        billing_code: serial % 3 === 0 ? "CC-1" : "CC-2",
        billing_info: null,
        customer_reference: null,
        status_report_options: null,
        idempotency_key: null,
        request_hash: null,
        valid_from: created,
        valid_until: created + 30 * DAY,
        deadline_at: created + 30 * DAY + 7_200_000,
        pages: 2,
        page_sizes: "[30000,30000]",
        render_attempts: 1,
        created_at: created,
        completed_at: completed,
        documents_purged_at: completed,
      });
    }
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < jobs.length; i += perStatement) await trx.insertInto("jobs").values(jobs.slice(i, i + perStatement)).execute();
      for (let i = 0; i < recipients.length; i += perStatement) await trx.insertInto("recipients").values(recipients.slice(i, i + perStatement)).execute();
      for (let i = 0; i < attempts.length; i += perStatement) await trx.insertInto("attempts").values(attempts.slice(i, i + perStatement)).execute();
    });
    options.onProgress?.(written);
  }

  const receptions: Insertable<Database["received_faxes"]>[] = [];
  for (let i = 0; i < options.receptions; i++) {
    const customer = pick(options.customers.filter((c) => c.topics.length > 0));
    const status = pick(["OK", "OK", "OK", "PARTIAL", "FAILED"] as const);
    const pages = status === "FAILED" ? 0 : 1 + Math.floor(random() * 4);
    const day = options.firstDay + Math.floor(random() * options.days) * DAY;
    receptions.push({
      id: `FXSEED${String(i).padStart(10, "0")}`,
      cust_nr: customer.custNr,
      topic: pick(customer.topics),
      datacenter: pick(options.datacenters),
      to_number: `+4989${String(100000 + i).slice(-6)}`,
      from_number: `+3314${String(Math.floor(random() * 1_000_000)).padStart(6, "0")}`,
      remote_csid: "SENDER",
      pages,
      pages_announced: status === "PARTIAL" ? pages + 1 : pages,
      resolution: "HIGH",
      transport: "t38",
      bit_rate: 14400,
      duration_secs: pages * 20,
      status,
      reason_code: status === "OK" ? null : "fax_disconnected",
      raw_cause: null,
      received_at: day + Math.floor(random() * DAY),
      image: null,
      image_bytes: pages * 1000,
      locked_until: null,
      acknowledged_at: null,
      purged_at: null,
      source_job_id: null,
    });
  }
  for (let i = 0; i < receptions.length; i += perStatement) await db.insertInto("received_faxes").values(receptions.slice(i, i + perStatement)).execute();
}

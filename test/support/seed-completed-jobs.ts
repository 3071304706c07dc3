/**
 * Writes completed jobs straight into a store, shaped as the engine leaves a delivered job: one
 * recipient `succeeded` with status OK, one delivered attempt, documents purged. For tests and
 * benchmarks that need many reports fast (sending them through the API would take minutes).
 */
import type { Insertable, Kysely } from "kysely";
import { newJobId, newRecipientId, randomToken } from "../../src/lib/ids.ts";
import type { Database } from "../../src/store/database.ts";

export interface SeedCompletedJobsOptions {
  custNr: string;
  login: string;
  datacenter: string;
  count: number;
  /** Completion time of the first (oldest) job; job i completes `i * spacingMs` later. */
  firstCompletedAt: number;
  spacingMs?: number;
  /** `reference.customerDefinedId` of job i. */
  customerDefinedId?: (i: number) => string;
  /** `reference.billingCode` of every job. */
  billingCode?: string;
}

const ROWS_PER_STATEMENT = 200;
const JOBS_PER_TRANSACTION = 10_000;

/** Returns the job ids in completion order, oldest first. */
export async function seedCompletedJobs(db: Kysely<Database>, options: SeedCompletedJobsOptions): Promise<string[]> {
  const { count, datacenter } = options;
  const spacing = options.spacingMs ?? 1;
  const ids: string[] = [];
  for (let t = 0; t < count; t += JOBS_PER_TRANSACTION) {
    await db.transaction().execute(async (trx) => {
      for (let b = t; b < Math.min(count, t + JOBS_PER_TRANSACTION); b += ROWS_PER_STATEMENT) {
        const jobs: Insertable<Database["jobs"]>[] = [];
        const recipients: Insertable<Database["recipients"]>[] = [];
        const attempts: Insertable<Database["attempts"]>[] = [];
        for (let i = b; i < Math.min(count, t + JOBS_PER_TRANSACTION, b + ROWS_PER_STATEMENT); i++) {
          const completed = options.firstCompletedAt + i * spacing;
          const created = completed - 40_000;
          const jobId = newJobId(completed);
          const recipientId = newRecipientId(completed);
          const e164 = `+4989555${String(i % 1_000_000).padStart(6, "0")}`;
          const dial = `00${e164.slice(1)}`;
          ids.push(jobId);
          jobs.push({
            id: jobId,
            cust_nr: options.custNr,
            login: options.login,
            region: datacenter.slice(0, 2),
            datacenter,
            state: "completed",
            is_test: 1,
            is_express: 0,
            blacklist_check: 0,
            csid: null,
            paper_format: "A4",
            resolution: "HIGH",
            header: null,
            coverpage_template: null,
            overlay_name: null,
            overlay_mode: null,
            customer_defined_id: options.customerDefinedId?.(i) ?? null,
            billing_code: options.billingCode ?? null,
            billing_info: null,
            customer_reference: null,
            status_report_options: null,
            idempotency_key: null,
            request_hash: null,
            valid_from: created,
            valid_until: created + 30 * 86_400_000,
            deadline_at: created + 30 * 86_400_000 + 7_200_000,
            pages: 1,
            page_sizes: "[30000]",
            render_attempts: 1,
            created_at: created,
            completed_at: completed,
            documents_purged_at: completed,
          });
          recipients.push({
            id: recipientId,
            job_id: jobId,
            ordinal: 0,
            datacenter,
            is_express: 0,
            number: e164,
            alternative_numbers: null,
            properties: null,
            dial_targets: JSON.stringify([{ e164, dialString: dial }]),
            target_index: 0,
            dead_targets: "[]",
            current_e164: e164,
            state: "succeeded",
            run_at: created + 100,
            attempt_count: 1,
            retries_used: "{}",
            status: "OK",
            reason_text: "OK",
            sent_at: completed,
            duration_secs: 33,
            sent_to_number: dial,
            remote_csid: e164,
            pages_sent: 1,
            finished_at: completed,
          });
          attempts.push({
            id: `att_${randomToken(16)}`,
            recipient_id: recipientId,
            job_id: jobId,
            attempt_no: 1,
            e164,
            dial_string: dial,
            node: "seed",
            started_at: created + 100,
            ended_at: completed,
            result: "delivered",
            pages_sent: 1,
            duration_secs: 33,
            remote_csid: e164,
          });
        }
        await trx.insertInto("jobs").values(jobs).execute();
        await trx.insertInto("recipients").values(recipients).execute();
        await trx.insertInto("attempts").values(attempts).execute();
      }
    });
  }
  return ids;
}

/**
 * Reads and deletes job reports, always scoped to one login and one data center: a node answers
 * only for the jobs its own data center accepted (others are absent, as clients that query
 * DE1 and DE2 in turn expect), and a login sees only the jobs it created.
 *
 * "Completed" = every recipient final. Lists and deletes of "oldest" order by completion time,
 * then id. Reports of unfinished jobs can be read (status PENDING) but not deleted.
 */
import type { Kysely, Transaction } from "kysely";
import { PENDING_STATUS, failureReason, isFailureReasonCode } from "../../errors/failure-reasons.ts";
import { toIsoSeconds } from "../../lib/clock.ts";
import type { FaxlineReportExtension, FaxReport, JobDeleteReport } from "../../api/schemas/reports.ts";
import type { Database, JobRow, RecipientRow } from "../database.ts";
import { readOneSnapshot } from "./read-snapshot.ts";
import { rollUpJobs } from "./report-rollups.ts";

export interface ReportScope {
  login: string;
  /** The data centers whose jobs are visible: this node's (the contract), or its region's (scope=region). */
  datacenters: readonly string[];
  /** Add the Faxline extension object (owner, accepting data center, adoptions) to each report. */
  extended?: boolean;
}

type ReportJob = Pick<JobRow, "id" | "pages" | "customer_defined_id" | "billing_code" | "billing_info" | "state" | "datacenter" | "accepted_datacenter">;

function pendingReason(r: RecipientRow, jobState: string): string {
  if (jobState === "pending" || jobState === "rendering" || r.state === "waiting") return "Rendering the documents";
  if (r.state === "sending") return `Sending (attempt ${r.attempt_count})`;
  if (r.reason_code && isFailureReasonCode(r.reason_code)) {
    return `Retry scheduled at ${toIsoSeconds(r.run_at)} after: ${failureReason(r.reason_code).description}`;
  }
  if (r.attempt_count === 0 && r.run_at > Date.now()) return `Scheduled: the first call is due at ${toIsoSeconds(Number(r.run_at))}`;
  return "Queued for sending";
}

function recipientStatus(r: RecipientRow, jobState: string): FaxReport["recipientStatus"][number] {
  const final = r.state === "succeeded" || r.state === "failed";
  const status: FaxReport["recipientStatus"][number] = {
    number: r.number,
    alternativeNumbers: r.alternative_numbers === null ? null : (JSON.parse(r.alternative_numbers) as string[]),
    properties: r.properties === null ? null : (JSON.parse(r.properties) as { key: string; value: string }[]),
    status: final ? r.status! : PENDING_STATUS,
    reason: final ? r.reason_text ?? "" : pendingReason(r, jobState),
    durationInSecs: r.duration_secs,
  };
  if (r.sent_at !== null) status.sentTs = toIsoSeconds(Number(r.sent_at));
  if (r.sent_to_number !== null) status.sentToNumber = r.sent_to_number;
  if (final && r.remote_csid !== null) status.remoteCsid = r.remote_csid;
  return status;
}

function toReport(job: ReportJob, recipients: RecipientRow[]): FaxReport {
  const report: FaxReport = {
    jobId: job.id,
    recipientStatus: recipients.map((r) => recipientStatus(r, job.state)),
    pages: job.pages ?? 0,
  };
  if (job.customer_defined_id !== null || job.billing_code !== null || job.billing_info !== null) {
    report.reference = {};
    if (job.customer_defined_id !== null) report.reference.customerDefinedId = job.customer_defined_id;
    if (job.billing_code !== null) report.reference.billingCode = job.billing_code;
    if (job.billing_info !== null) report.reference.billingInfo = job.billing_info;
  }
  return report;
}

const REPORT_COLUMNS = ["id", "pages", "customer_defined_id", "billing_code", "billing_info", "state", "datacenter", "accepted_datacenter"] as const;

/** Must be given the snapshot's transaction: a job and its recipients are read as one. */
async function reportsFor(db: Transaction<Database>, jobs: ReportJob[], extended = false): Promise<FaxReport[]> {
  if (jobs.length === 0) return [];
  const adoptions = new Map<string, FaxlineReportExtension["adoptions"]>();
  if (extended) {
    for (let i = 0; i < jobs.length; i += 500) {
      const rows = await db
        .selectFrom("job_adoptions")
        .selectAll()
        .where("job_id", "in", jobs.slice(i, i + 500).map((j) => j.id))
        .orderBy("adopted_at")
        .execute();
      for (const r of rows) {
        const list = adoptions.get(r.job_id) ?? [];
        list.push({ from: r.from_datacenter, to: r.to_datacenter, at: toIsoSeconds(Number(r.adopted_at)) });
        adoptions.set(r.job_id, list);
      }
    }
  }
  const byJob = new Map<string, RecipientRow[]>();
  for (let i = 0; i < jobs.length; i += 500) {
    const ids = jobs.slice(i, i + 500).map((j) => j.id);
    const rows = await db.selectFrom("recipients").selectAll().where("job_id", "in", ids).orderBy("job_id").orderBy("ordinal").execute();
    for (const row of rows) {
      const list = byJob.get(row.job_id) ?? [];
      list.push(row);
      byJob.set(row.job_id, list);
    }
  }
  return jobs.map((job) => {
    const report = toReport(job, byJob.get(job.id) ?? []);
    if (extended) {
      report.faxline = { datacenter: job.datacenter, acceptedDatacenter: job.accepted_datacenter ?? job.datacenter, adoptions: adoptions.get(job.id) ?? [] };
    }
    return report;
  });
}

export async function getReport(db: Kysely<Database>, scope: ReportScope, jobId: string): Promise<FaxReport | null> {
  // The contract's view in one statement (a job with its recipients is one snapshot, and the
  // most polled read of the API costs no transaction round trips); the extended view, which adds
  // the adoptions, reads in one snapshot.
  if (!scope.extended) {
    const rows = await db
      .selectFrom("jobs")
      .innerJoin("recipients", "recipients.job_id", "jobs.id")
      .selectAll("recipients")
      .select([
        "jobs.pages as job_pages",
        "jobs.customer_defined_id as job_customer_defined_id",
        "jobs.billing_code as job_billing_code",
        "jobs.billing_info as job_billing_info",
        "jobs.state as job_state",
        "jobs.datacenter as job_datacenter",
        "jobs.accepted_datacenter as job_accepted_datacenter",
      ])
      .where("jobs.id", "=", jobId)
      .where("jobs.login", "=", scope.login)
      .where("jobs.datacenter", "in", [...scope.datacenters])
      .orderBy("recipients.ordinal")
      .execute();
    const first = rows[0];
    if (first === undefined) return null;
    const job: ReportJob = {
      id: first.job_id,
      pages: first.job_pages,
      customer_defined_id: first.job_customer_defined_id,
      billing_code: first.job_billing_code,
      billing_info: first.job_billing_info,
      state: first.job_state,
      datacenter: first.job_datacenter,
      accepted_datacenter: first.job_accepted_datacenter,
    };
    return toReport(job, rows);
  }
  return readOneSnapshot(db, async (trx) => {
    const job = await trx
      .selectFrom("jobs")
      .select(REPORT_COLUMNS)
      .where("id", "=", jobId)
      .where("login", "=", scope.login)
      .where("datacenter", "in", [...scope.datacenters])
      .executeTakeFirst();
    if (!job) return null;
    const [report] = await reportsFor(trx, [job], true);
    return report ?? null;
  });
}

/** The oldest `limit` completed reports, oldest first. */
export async function listCompletedReports(db: Kysely<Database>, scope: ReportScope, limit: number): Promise<FaxReport[]> {
  return readOneSnapshot(db, async (trx) => {
    const jobs = await trx
      .selectFrom("jobs")
      .select(REPORT_COLUMNS)
      .where("login", "=", scope.login)
      .where("datacenter", "in", [...scope.datacenters])
      .where("completed_at", "is not", null)
      .orderBy("completed_at")
      .orderBy("id")
      .limit(limit)
      .execute();
    return reportsFor(trx, jobs, scope.extended);
  });
}

/** Reports of the known ids among `jobIds`, in request order (unfinished ones as PENDING). */
export async function getReportsByIds(db: Kysely<Database>, scope: ReportScope, jobIds: readonly string[]): Promise<FaxReport[]> {
  const unique = [...new Set(jobIds)];
  return readOneSnapshot(db, async (trx) => {
    const found: ReportJob[] = [];
    for (let i = 0; i < unique.length; i += 500) {
      const rows = await trx
        .selectFrom("jobs")
        .select(REPORT_COLUMNS)
        .where("id", "in", unique.slice(i, i + 500))
        .where("login", "=", scope.login)
        .where("datacenter", "in", [...scope.datacenters])
        .execute();
      found.push(...rows);
    }
    const order = new Map(unique.map((id, i) => [id, i]));
    found.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
    return reportsFor(trx, found, scope.extended);
  });
}

/** Deletes jobs with their documents, recipients and attempts (foreign keys cascade). */
export async function deleteJobs(db: Kysely<Database>, ids: readonly string[]): Promise<void> {
  // Whatever of them the reporting rollups have not counted yet is counted before it goes.
  await rollUpJobs(db, ids);
  for (let i = 0; i < ids.length; i += 500) {
    await db.deleteFrom("jobs").where("id", "in", ids.slice(i, i + 500)).execute();
  }
}

/** Deletes the completed jobs among `jobIds`; one entry per requested id, in request order. */
export async function deleteReportsByIds(db: Kysely<Database>, scope: ReportScope, jobIds: readonly string[]): Promise<JobDeleteReport[]> {
  const unique = [...new Set(jobIds)];
  const deletable = new Set<string>();
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < unique.length; i += 500) {
      const rows = await trx
        .selectFrom("jobs")
        .select("id")
        .where("id", "in", unique.slice(i, i + 500))
        .where("login", "=", scope.login)
        .where("datacenter", "in", [...scope.datacenters])
        .where("state", "=", "completed")
        .execute();
      for (const r of rows) deletable.add(r.id);
    }
    await deleteJobs(trx, [...deletable]);
  });
  return jobIds.map((jobId) => (deletable.has(jobId) ? { jobId, deleted: true } : { jobId, deleted: false, reason: "NOT_FOUND" }));
}

/** Deletes up to `limit` of the oldest completed reports. */
export async function deleteOldestReports(db: Kysely<Database>, scope: ReportScope, limit: number): Promise<JobDeleteReport[]> {
  return db.transaction().execute(async (trx) => {
    const rows = await trx
      .selectFrom("jobs")
      .select("id")
      .where("login", "=", scope.login)
      .where("datacenter", "in", [...scope.datacenters])
      .where("completed_at", "is not", null)
      .orderBy("completed_at")
      .orderBy("id")
      .limit(limit)
      .execute();
    const ids = rows.map((r) => r.id);
    await deleteJobs(trx, ids);
    return ids.map((jobId) => ({ jobId, deleted: true }));
  });
}

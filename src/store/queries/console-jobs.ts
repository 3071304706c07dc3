/**
 * The console's views of a login's jobs: a filtered list paged by (created_at, id), newest first
 * (index jobs_console_idx, so a page costs the same with 100 000 jobs as with 100), a job's
 * whole story (recipients, attempts, documents, images), and what changed since a moment.
 *
 * Scoped like the reports: one login, the data centers given (the console shows its region).
 */
import { sql, type Expression, type Kysely, type SqlBool, type ExpressionBuilder, type Transaction } from "kysely";
import type { Database } from "../database.ts";
import { readOneSnapshot } from "./read-snapshot.ts";

export type ConsoleJobStatus = "open" | "delivered" | "failed";

export interface ConsoleJobFilter {
  login: string;
  datacenters: readonly string[];
  status?: ConsoleJobStatus;
  /** created_at bounds, milliseconds, inclusive from, exclusive to. */
  from?: number;
  to?: number;
  /** Digits of a recipient's number (any part). */
  number?: string;
  /** Part of the customer reference, customerDefinedId, billing code or billing info. */
  reference?: string;
  datacenter?: string;
  /** Free search: a job id, a reference or digits of a number. */
  q?: string;
  /** Page after this row (the previous page's last one). */
  before?: { createdAt: number; id: string };
  limit: number;
}

export interface ConsoleJobRow {
  id: string;
  state: string;
  datacenter: string;
  createdAt: number;
  completedAt: number | null;
  pages: number | null;
  reference: string | null;
  isTest: boolean;
  recipients: { number: string; state: string; status: string | null; reasonCode: string | null; attempts: number }[];
}

/** LIKE pattern for "contains `text`", with the wildcards in `text` escaped. */
function contains(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

type JobsEb = ExpressionBuilder<Database, "jobs">;

function referenceMatches(eb: JobsEb, text: string): Expression<SqlBool> {
  const pattern = contains(text);
  const like = (column: "customer_defined_id" | "customer_reference" | "billing_code" | "billing_info") =>
    sql<SqlBool>`lower(${eb.ref(`jobs.${column}`)}) like ${pattern} escape '\\'`;
  return eb.or([like("customer_defined_id"), like("customer_reference"), like("billing_code"), like("billing_info")]);
}

function numberMatches(eb: JobsEb, digits: string): Expression<SqlBool> {
  return eb.exists(
    eb
      .selectFrom("recipients")
      .select("recipients.id")
      .whereRef("recipients.job_id", "=", "jobs.id")
      .where(sql<SqlBool>`recipients.dial_targets like ${contains(digits)} escape '\\'`),
  );
}

/** A page of the login's jobs with their recipients, from one snapshot (a job deleted meanwhile is not shown without recipients). */
export async function listConsoleJobs(db: Kysely<Database>, f: ConsoleJobFilter): Promise<ConsoleJobRow[]> {
  return readOneSnapshot(db, (trx) => listConsoleJobsIn(trx, f));
}

async function listConsoleJobsIn(db: Transaction<Database>, f: ConsoleJobFilter): Promise<ConsoleJobRow[]> {
  let query = db
    .selectFrom("jobs")
    .select(["jobs.id", "jobs.state", "jobs.datacenter", "jobs.created_at", "jobs.completed_at", "jobs.pages", "jobs.customer_defined_id", "jobs.customer_reference", "jobs.billing_code", "jobs.is_test"])
    .where("jobs.login", "=", f.login)
    .where("jobs.datacenter", "in", [...f.datacenters]);
  if (f.datacenter) query = query.where("jobs.datacenter", "=", f.datacenter);
  if (f.from !== undefined) query = query.where("jobs.created_at", ">=", f.from);
  if (f.to !== undefined) query = query.where("jobs.created_at", "<", f.to);
  if (f.status === "open") query = query.where("jobs.state", "!=", "completed");
  if (f.status === "delivered" || f.status === "failed") {
    const anyFailed = (eb: JobsEb) =>
      eb.exists(eb.selectFrom("recipients").select("recipients.id").whereRef("recipients.job_id", "=", "jobs.id").where("recipients.state", "=", "failed"));
    query = query.where("jobs.state", "=", "completed").where((eb) => (f.status === "failed" ? anyFailed(eb) : eb.not(anyFailed(eb))));
  }
  const digits = f.number?.replace(/\D/g, "") ?? "";
  if (digits !== "") query = query.where((eb) => numberMatches(eb, digits));
  if (f.reference?.trim()) query = query.where((eb) => referenceMatches(eb, f.reference!.trim()));
  const q = f.q?.trim() ?? "";
  if (/^FJ[A-Z0-9]{20}$/.test(q)) {
    // A job id is looked up by its key, not by scanning references for it.
    query = query.where("jobs.id", "=", q);
  } else if (q !== "") {
    const qDigits = q.replace(/[\s()./-]/g, "").replace(/^\+/, "");
    query = query.where((eb) =>
      eb.or([
        referenceMatches(eb, q),
        ...(/^\d{3,}$/.test(qDigits) ? [numberMatches(eb, qDigits)] : []),
      ]),
    );
  }
  if (f.before) {
    const { createdAt, id } = f.before;
    // A row-value comparison: both dialects seek the index to it (an OR of two ranges scans).
    query = query.where((eb) => eb(eb.refTuple("jobs.created_at", "jobs.id"), "<", eb.tuple(createdAt, id)));
  }
  const jobs = await query.orderBy("jobs.created_at", "desc").orderBy("jobs.id", "desc").limit(f.limit).execute();
  if (jobs.length === 0) return [];
  const recipients = await db
    .selectFrom("recipients")
    .select(["job_id", "number", "state", "status", "reason_code", "attempt_count"])
    .where("job_id", "in", jobs.map((j) => j.id))
    .orderBy("job_id")
    .orderBy("ordinal")
    .execute();
  const byJob = new Map<string, ConsoleJobRow["recipients"]>();
  for (const r of recipients) {
    const list = byJob.get(r.job_id) ?? [];
    list.push({ number: r.number, state: r.state, status: r.status, reasonCode: r.reason_code, attempts: r.attempt_count });
    byJob.set(r.job_id, list);
  }
  return jobs.map((j) => ({
    id: j.id,
    state: j.state,
    datacenter: j.datacenter,
    createdAt: Number(j.created_at),
    completedAt: j.completed_at === null ? null : Number(j.completed_at),
    pages: j.pages,
    reference: j.customer_defined_id ?? j.customer_reference ?? j.billing_code,
    isTest: j.is_test === 1,
    recipients: byJob.get(j.id) ?? [],
  }));
}

/** A job with everything the detail page shows, or undefined when the login has no such job. */
export async function getConsoleJob(db: Kysely<Database>, scope: { login: string; datacenters: readonly string[] }, jobId: string) {
  // One snapshot: the retention sweep deletes a completed job's documents and marks the job
  // purged in one transaction, and the view must show either both or neither.
  return readOneSnapshot(db, async (trx) => {
    const job = await trx
      .selectFrom("jobs")
      .selectAll()
      .where("id", "=", jobId)
      .where("login", "=", scope.login)
      .where("datacenter", "in", [...scope.datacenters])
      .executeTakeFirst();
    if (!job) return undefined;
    const documents = await trx.selectFrom("job_documents").select(["ordinal", "name", "size_bytes", "reference_url"]).where("job_id", "=", jobId).orderBy("ordinal").execute();
    const recipients = await trx.selectFrom("recipients").selectAll().where("job_id", "=", jobId).orderBy("ordinal").execute();
    const attempts = await trx.selectFrom("attempts").selectAll().where("job_id", "=", jobId).orderBy("started_at").orderBy("attempt_no").execute();
    const images = await trx.selectFrom("fax_images").select(["id", "variant", "pages", "size_bytes"]).where("job_id", "=", jobId).orderBy("variant").execute();
    return { job, documents, recipients, attempts, images };
  });
}

export interface ConsoleJobChanges {
  /** Jobs created or completed at or after `since`. */
  createdOrCompleted: string[];
  /** The login's open jobs (newest 500) with a signature of their state and their recipients' states and attempts. */
  open: Map<string, string>;
}

/**
 * What the console's live updates (server-sent events) poll each second: jobs created or
 * completed since a moment (index ranges on jobs_console_idx and jobs_completed_idx), and a
 * signature of each open job (jobs_login_state_idx, recipients_job_idx) that the stream compares with
 * its previous poll, so that a render finishing, a call starting or ending, a retry being
 * scheduled or a cancel shows up, whichever node of the region made it.
 */
export async function consoleJobChanges(
  db: Kysely<Database>,
  scope: { login: string; datacenters: readonly string[] },
  since: number,
): Promise<ConsoleJobChanges> {
  // One snapshot: a job that completes while this runs is either still open here or among
  // the completed, never in neither.
  return readOneSnapshot(db, async (trx) => {
    const dcs = [...scope.datacenters];
    // The open jobs one state at a time: (login, state) equal and created_at ordered is exactly
    // jobs_login_state_idx, which SQLite then takes even without statistics (with `state in (…)`
    // it walked the login's whole history on jobs_console_idx to avoid a sort).
    const openOf = (state: string) =>
      trx.selectFrom("jobs").select(["id", "state"]).where("login", "=", scope.login).where("state", "=", state).where("datacenter", "in", dcs).orderBy("created_at", "desc").limit(500).execute();
    // One after the other: they share the transaction's connection anyway, and a failure must
    // not leave others queued on a connection the rollback has given back.
    const created = await trx.selectFrom("jobs").select("id").where("login", "=", scope.login).where("created_at", ">=", since).where("datacenter", "in", dcs).limit(200).execute();
    const completed = await trx.selectFrom("jobs").select("id").where("completed_at", ">=", since).where("login", "=", scope.login).where("datacenter", "in", dcs).limit(200).execute();
    const open = [...(await openOf("pending")), ...(await openOf("rendering")), ...(await openOf("active"))];
    const signatures = new Map<string, string>(open.map((j) => [j.id, j.state]));
    if (open.length > 0) {
      const recipients = await trx
        .selectFrom("recipients")
        .select(["job_id", "state", "attempt_count", "status"])
        .where("job_id", "in", open.map((j) => j.id))
        .orderBy("job_id")
        .orderBy("ordinal")
        .execute();
      for (const r of recipients) signatures.set(r.job_id, `${signatures.get(r.job_id)}|${r.state}:${r.attempt_count}:${r.status ?? ""}`);
    }
    return { createdOrCompleted: [...new Set([...created, ...completed].map((r) => r.id))], open: signatures };
  });
}

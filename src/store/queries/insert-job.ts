/**
 * Stores an accepted job with its documents and recipients, all or nothing (the dialect's
 * insertJobRows). After this returns, the job is durable: whatever happens to the node, it
 * will be rendered and every recipient will reach a final state.
 */
import type { NewFaxJob } from "../../api/fax-job-intake.ts";
import { newJobId, newRecipientId, type JobId } from "../../lib/ids.ts";
import type { Store } from "../store.ts";

export interface JobOwner {
  custNr: string;
  login: string;
  isTest: boolean;
  region: string;
  datacenter: string;
}

export type InsertJobResult = { inserted: true; jobId: JobId } | { inserted: false; existingJobId: string; sameRequest: boolean };

export async function insertJob(
  store: Pick<Store, "db" | "writes">,
  job: NewFaxJob,
  owner: JobOwner,
  options: {
    now: number;
    idempotencyKey: string | null;
    deadlineGraceMs: number;
    /** How the job came in (jobs.source): API (the default) or M2F. */
    source?: "API" | "M2F";
    /** JSON of the mail a mail-to-fax job came from (jobs.mail_origin), stored with the job. */
    mailOrigin?: string | null;
  },
): Promise<InsertJobResult> {
  const { now, idempotencyKey } = options;
  const { db } = store;
  if (idempotencyKey !== null) {
    // A request sent twice at once passes this check twice; the unique index on (login,
    // idempotency_key) then refuses the second insert, and the caller asks again.
    const existing = await db
      .selectFrom("jobs")
      .select(["id", "request_hash"])
      .where("login", "=", owner.login)
      .where("idempotency_key", "=", idempotencyKey)
      .executeTakeFirst();
    if (existing) return { inserted: false, existingJobId: existing.id, sameRequest: existing.request_hash === job.requestHash };
  }
  const jobId = newJobId(now);
  await store.writes.insertJobRows(db, {
    job: {
      id: jobId,
      cust_nr: owner.custNr,
      login: owner.login,
      region: owner.region,
      datacenter: owner.datacenter,
      accepted_datacenter: owner.datacenter,
      state: "pending",
      is_test: owner.isTest ? 1 : 0,
      is_express: job.isExpress ? 1 : 0,
      blacklist_check: job.blacklistCheck ? 1 : 0,
      csid: job.csid,
      paper_format: job.paperFormat,
      resolution: job.resolution,
      header: job.header,
      coverpage_template: job.coverpageTemplate,
      overlay_name: job.overlay?.name ?? null,
      overlay_mode: job.overlay?.mode ?? null,
      tone_mode: job.toneMode,
      suppress_blank_pages: job.suppressBlankPages ? 1 : 0,
      customer_defined_id: job.reference.customerDefinedId,
      billing_code: job.reference.billingCode,
      billing_info: job.reference.billingInfo,
      customer_reference: job.customerReference,
      status_report_options: job.statusReportOptions === null ? null : JSON.stringify(job.statusReportOptions),
      idempotency_key: idempotencyKey,
      request_hash: job.requestHash,
      valid_from: job.validFrom,
      valid_until: job.validUntil,
      deadline_at: job.validUntil + options.deadlineGraceMs,
      pages: null,
      page_sizes: null,
      render_attempts: 0,
      created_at: now,
      ...(options.source === undefined ? {} : { source: options.source }),
      ...(options.mailOrigin === undefined ? {} : { mail_origin: options.mailOrigin }),
    },
    documents: job.documents.map((d, ordinal) => ({
      job_id: jobId,
      ordinal,
      name: d.name,
      charset: d.charset,
      reference_url: d.referenceUrl,
      content: d.content,
      size_bytes: d.content?.length ?? null,
    })),
    recipients: job.recipients.map((r, ordinal) => ({
      id: newRecipientId(now),
      job_id: jobId,
      ordinal,
      datacenter: owner.datacenter,
      is_express: job.isExpress ? 1 : 0,
      number: r.number,
      alternative_numbers: r.alternativeNumbers === null ? null : JSON.stringify(r.alternativeNumbers),
      properties: r.properties === null ? null : JSON.stringify(r.properties),
      dial_targets: JSON.stringify(r.targets),
      target_index: 0,
      dead_targets: "[]",
      current_e164: r.targets[0]!.e164,
      state: "waiting",
      run_at: job.validFrom,
      attempt_count: 0,
      retries_used: "{}",
      duration_secs: 0,
      pages_sent: 0,
    })),
  });
  return { inserted: true, jobId };
}

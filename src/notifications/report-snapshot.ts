/**
 * The report snapshot: what a notification says, fixed when the event happens.
 *
 * The outbox row of a notification carries this snapshot as JSON, taken in the same
 * transaction that made the job final, so a push or mail reports exactly the state that
 * triggered it, even when the client deletes the report or retention purges it before the
 * notification goes out. Formatters (push-formats.ts, the mail composer) turn a snapshot into
 * bytes; they never read the store.
 *
 * Field names follow the contract's push layout (§12 of the REST v1 reference: `sentTS`,
 * `numId`, `url`), not the REST report's, so the XML and JSON layouts map one to one.
 */
import type { Kysely } from "kysely";
import { PENDING_STATUS } from "../errors/failure-reasons.ts";
import { toIsoSeconds } from "../lib/clock.ts";
import { documentTypeFromName } from "../render/document-types.ts";
import type { Database } from "../store/database.ts";

export const ATTACHED_IMAGE_MODES = ["NEVER", "SUCCESS_ONLY", "FAILURE_ONLY", "ALWAYS"] as const;
export type AttachedImageMode = (typeof ATTACHED_IMAGE_MODES)[number];
export const ATTACHED_IMAGE_FORMATS = ["TIFF", "PDF", "PDF_WITH_OCR"] as const;
export type AttachedImageFormat = (typeof ATTACHED_IMAGE_FORMATS)[number];
export const PUSH_AUTH_METHODS = ["NONE", "HTTP_BASIC", "HTTP_DIGEST", "OAUTH2"] as const;
export type PushAuthMethod = (typeof PUSH_AUTH_METHODS)[number];

/** statusReportOptions as stored with the job: enums normalised, empty strings dropped. */
export interface StoredStatusReportOptions {
  reportMail: {
    successAddress: string | null;
    failureAddress: string | null;
    attachedFaxImageMode: AttachedImageMode;
    attachedFaxImageFormat: AttachedImageFormat;
  } | null;
  httpStatusPush: {
    targetUrl: string | null;
    principal: string | null;
    credentials: string | null;
    authMethod: PushAuthMethod;
  } | null;
}

export interface SnapshotRecipient {
  number: string;
  /** The recipient id (`FN…`). */
  numId: string;
  /** OK, BUSY, … or PENDING for an intermediate event. */
  status: string;
  reason: string;
  /** ISO-8601 UTC seconds of the last call, or null when none was made. */
  sentTS: string | null;
  durationInSecs: number;
  sentToNumber: string | null;
  remoteCsid: string | null;
  pagesSent: number;
  /** The recipient's properties (cover page data), as submitted. */
  properties: { key: string; value: string | null }[];
  /** True when the recipient's fax was delivered. */
  delivered: boolean;
}

export interface ReportSnapshot {
  jobId: string;
  custNr: string;
  /** The event this snapshot was taken for (notifications/events.ts). */
  event: string;
  /** ISO-8601 UTC seconds when the event happened. */
  eventTS: string;
  /** As the request gave it; null when absent (the element is then left out). */
  reportMail: StoredStatusReportOptions["reportMail"];
  /** The request's push settings without credentials; null when the request gave none. */
  httpStatusPush: { url: string; authMethod: PushAuthMethod } | null;
  recipients: SnapshotRecipient[];
  documents: { name: string; isText: boolean }[];
  options: {
    resolution: string;
    paperFormat: string;
    csid: string | null;
    header: string | null;
    isBlacklistEnabled: boolean;
    isExpress: boolean;
    overlay: { name: string; mode: string } | null;
    coverpageTemplateName: string | null;
    jobReference: string | null;
  };
  reference: { customerDefinedId: string | null; billingCode: string | null; billingInfo: string | null };
  /** Rendered pages (cover page included); 0 when rendering failed. */
  pages: number;
}

/** Reads the stored statusReportOptions; jobs stored before normalisation are normalised here. */
export function parseStoredStatusReportOptions(text: string | null): StoredStatusReportOptions {
  if (text === null) return { reportMail: null, httpStatusPush: null };
  const raw = JSON.parse(text) as Record<string, unknown>;
  return normalizeStatusReportOptions(raw);
}

const blankToNull = (v: unknown): string | null => (typeof v === "string" && v.trim() !== "" ? v.trim() : null);
const pick = <T extends string>(values: readonly T[], v: unknown, fallback: T, aliases: Record<string, T> = {}): T => {
  if (typeof v !== "string") return fallback;
  const upper = v.trim().toUpperCase();
  return aliases[upper] ?? values.find((x) => x === upper) ?? fallback;
};

/** Normalises statusReportOptions (already validated by intake) into the stored form. */
export function normalizeStatusReportOptions(raw: Record<string, unknown> | null | undefined): StoredStatusReportOptions {
  const mail = raw?.reportMail as Record<string, unknown> | null | undefined;
  const push = raw?.httpStatusPush as Record<string, unknown> | null | undefined;
  return {
    reportMail: mail
      ? {
          successAddress: blankToNull(mail.successAddress),
          failureAddress: blankToNull(mail.failureAddress),
          attachedFaxImageMode: pick(ATTACHED_IMAGE_MODES, mail.attachedFaxImageMode, "NEVER"),
          attachedFaxImageFormat: pick(ATTACHED_IMAGE_FORMATS, mail.attachedFaxImageFormat, "TIFF"),
        }
      : null,
    httpStatusPush: push
      ? {
          targetUrl: blankToNull(push.targetUrl),
          principal: typeof push.principal === "string" ? push.principal : null,
          credentials: typeof push.credentials === "string" ? push.credentials : null,
          authMethod: pick(PUSH_AUTH_METHODS, push.authMethod, "NONE", { OAUTH: "OAUTH2" }),
        }
      : null,
  };
}

/** Takes the snapshot of one job inside the caller's transaction. */
export async function takeReportSnapshot(db: Kysely<Database>, jobId: string, event: string, now: number): Promise<ReportSnapshot> {
  const job = await db.selectFrom("jobs").selectAll().where("id", "=", jobId).executeTakeFirstOrThrow();
  const recipients = await db.selectFrom("recipients").selectAll().where("job_id", "=", jobId).orderBy("ordinal").execute();
  const documents = await db.selectFrom("job_documents").select(["name"]).where("job_id", "=", jobId).orderBy("ordinal").execute();
  const options = parseStoredStatusReportOptions(job.status_report_options);
  const push = options.httpStatusPush;
  return {
    jobId: job.id,
    custNr: job.cust_nr,
    event,
    eventTS: toIsoSeconds(now),
    reportMail: options.reportMail,
    httpStatusPush: push && push.targetUrl !== null ? { url: push.targetUrl, authMethod: push.authMethod } : null,
    recipients: recipients.map((r) => {
      const final = r.state === "succeeded" || r.state === "failed";
      return {
        number: r.number,
        numId: r.id,
        status: final ? (r.status ?? PENDING_STATUS) : PENDING_STATUS,
        reason: final ? (r.reason_text ?? "") : "",
        sentTS: r.sent_at === null ? null : toIsoSeconds(Number(r.sent_at)),
        durationInSecs: r.duration_secs,
        sentToNumber: r.sent_to_number,
        remoteCsid: r.remote_csid,
        pagesSent: r.pages_sent,
        properties: r.properties === null ? [] : (JSON.parse(r.properties) as { key: string; value: string | null }[]),
        delivered: r.state === "succeeded",
      };
    }),
    documents: documents.map((d) => ({ name: d.name, isText: documentTypeFromName(d.name) === "text" })),
    options: {
      resolution: job.resolution,
      paperFormat: job.paper_format,
      csid: job.csid,
      header: job.header,
      isBlacklistEnabled: job.blacklist_check === 1,
      isExpress: job.is_express === 1,
      overlay: job.overlay_name === null ? null : { name: job.overlay_name, mode: job.overlay_mode ?? "ALL_PAGES" },
      coverpageTemplateName: job.coverpage_template,
      jobReference: job.customer_reference,
    },
    reference: { customerDefinedId: job.customer_defined_id, billingCode: job.billing_code, billingInfo: job.billing_info },
    pages: job.pages ?? 0,
  };
}

/**
 * The provider's usage records (UDRs), filled from Faxline's rows: `FaxOutUdr` (one per call)
 * and `FaxInUdr` (one per reception). Field names and order are the provider's
 * (retarus-config-reporting.md §2); where Faxline has no such datum the field is derived or null,
 * as docs/reporting.md "Fields" lists one by one. A few Faxline fields follow the provider's
 * (trunk, transport, rawCause, topic …), marked as extensions in the schema.
 *
 * Instants are ISO-8601 UTC with milliseconds; durations are milliseconds, as the provider's
 * example shows (`callDuration: 14000`).
 */
import { DELIVERED_STATUS, failureReason, FailureReasons, isFailureReasonCode } from "../errors/failure-reasons.ts";
import { countryOfNumber } from "../numbers/country-of-number.ts";
import type { FaxAttemptTotals, ReceptionDelivery } from "../store/queries/report-udrs.ts";

const DAY_MS = 86_400_000;

/** What records need from the node's configuration. */
export interface RecordContext {
  /** sender.csid: the TSI of jobs that name none. */
  defaultCsid: string;
  /** ISO alpha-3 of the region's home country: a call there is NATIONAL. */
  homeCountry: string;
  /** retention.defaultDays, inbound.retentionDays. */
  reportRetentionDays: number;
  receptionRetentionDays: number;
  /** mail.from: the sender of fax-to-email deliveries. */
  mailFrom: string;
}

export const OUT_UDR_FIELDS = [
  "faxId",
  "jobId",
  "accountId",
  "accountName",
  "accountServerId",
  "accountService",
  "attemptPages",
  "attemptSeqNo",
  "baudRate",
  "billedCountry",
  "callConnectedAt",
  "callDuration",
  "calledCountry",
  "calledCsId",
  "calledNumber",
  "calledZone",
  "callEndedAt",
  "callingTsId",
  "callInviteAt",
  "docPages",
  "faxCustomerRef",
  "jobArchivePurgeAt",
  "jobBillingCode",
  "jobBillingInfo",
  "jobCustomerId",
  "jobCustomerRef",
  "jobCustomerResolution",
  "jobCustomerStartFaxAt",
  "jobCustomerTags",
  "jobExpress",
  "jobPersonalized",
  "jobSubmissionDc",
  "jobSubmittedAt",
  "keyTimestamp",
  "lastAttemptEndedAt",
  "lastAttemptSeqNo",
  "maxPageTransmitted",
  "processingFinalAt",
  "statusCode",
  "statusName",
  "statusReason",
  "sumCallDurations",
  "sumPagesTransmitted",
  "timeToFirstDial",
  "virtualPagesBilled",
  // Faxline's own, after the provider's.
  "datacenter",
  "trunk",
  "transport",
  "rawCause",
  "faxStatusName",
] as const;

export const IN_UDR_FIELDS = [
  "faxId",
  "accountingService",
  "allPages",
  "archivePurgeAt",
  "archivingStatus",
  "baudRate",
  "billingCode",
  "callConnectedAt",
  "calledCountry",
  "calledCsId",
  "calledNumber",
  "calledNumberDisplay",
  "callingNumber",
  "callingTsId",
  "callStartedAt",
  "confirmedPages",
  "customerId",
  "deliveryRecipients",
  "deliverySender",
  "deliverySenderUser",
  "discardedPages",
  "docMimeType",
  "documentDeliveryStatus",
  "faxFileSize",
  "faxTransmitStatus",
  "keyTimestamp",
  "recipientsCount",
  "resolution",
  "secondaryDeliveryRecipients",
  "virtualPagesBilled",
  // Faxline's own.
  "topic",
  "datacenter",
  "transport",
  "reasonCode",
  "rawCause",
] as const;

export type OutUdr = Record<(typeof OUT_UDR_FIELDS)[number], string | number | boolean | string[] | null>;
export type InUdr = Record<(typeof IN_UDR_FIELDS)[number], string | number | boolean | string[] | null>;

const iso = (ms: unknown): string | null => (ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString());
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** statusName of a call: OK when it delivered, else its failure reason's status (BUSY, NOFAX …). */
export function callStatusName(result: string, reasonCode: string | null): string {
  if (result === "delivered") return DELIVERED_STATUS;
  return reasonCode && isFailureReasonCode(reasonCode) ? failureReason(reasonCode).status : "FAILED";
}

/** The reason codes whose status is one of `names`, and whether OK is among them: statusName filters in SQL. */
export function reasonCodesOfStatusNames(names: readonly string[]): { delivered: boolean; reasonCodes: string[] } {
  const wanted = new Set(names.map((n) => n.toUpperCase()));
  return {
    delivered: wanted.has(DELIVERED_STATUS),
    reasonCodes: Object.values(FailureReasons)
      .filter((r) => wanted.has(r.status))
      .map((r) => r.code),
  };
}

/** statusCode of a call: "delivered", or its failure reason code (docs/failure-reasons.md). */
export const DELIVERED_CODE = "delivered";

export function outUdr(row: Record<string, unknown>, totals: FaxAttemptTotals | undefined, retentionDays: number | null | undefined, ctx: RecordContext): OutUdr {
  const result = String(row.result);
  const reasonCode = (row.reason_code as string | null) ?? null;
  const endedAt = num(row.ended_at);
  const durationMs = Number(row.duration_secs ?? 0) * 1000;
  const country = (row.country as string | null) ?? countryOfNumber(row.e164 as string);
  const completedAt = num(row.completed_at);
  const jobCreated = Number(row.created_at);
  const keepDays = retentionDays ?? ctx.reportRetentionDays;
  const final = row.recipient_state === "succeeded" || row.recipient_state === "failed";
  return {
    faxId: row.recipient_id as string,
    jobId: row.job_id as string,
    accountId: row.login as string,
    accountName: row.login as string,
    accountServerId: row.node as string,
    accountService: row.source as string,
    attemptPages: Number(row.pages_sent ?? 0),
    attemptSeqNo: Number(row.attempt_no),
    baudRate: num(row.bit_rate),
    billedCountry: country,
    callConnectedAt: endedAt !== null && durationMs > 0 ? iso(endedAt - durationMs) : null,
    callDuration: durationMs,
    calledCountry: country,
    calledCsId: (row.remote_csid as string | null) ?? null,
    calledNumber: row.e164 as string,
    calledZone: country === ctx.homeCountry ? "NATIONAL" : "INTERNATIONAL",
    callEndedAt: iso(endedAt),
    callingTsId: (row.csid as string | null) ?? ctx.defaultCsid,
    callInviteAt: iso(row.started_at),
    docPages: num(row.doc_pages),
    faxCustomerRef: null,
    jobArchivePurgeAt: completedAt === null ? null : iso(completedAt + keepDays * DAY_MS),
    jobBillingCode: (row.billing_code as string | null) ?? null,
    jobBillingInfo: (row.billing_info as string | null) ?? null,
    jobCustomerId: row.cust_nr as string,
    jobCustomerRef: (row.customer_defined_id as string | null) ?? null,
    jobCustomerResolution: row.resolution as string,
    jobCustomerStartFaxAt: iso(row.valid_from),
    jobCustomerTags: row.customer_reference === null || row.customer_reference === undefined ? [] : [String(row.customer_reference)],
    jobExpress: Number(row.is_express) === 1,
    jobPersonalized: row.properties !== null && row.properties !== undefined,
    jobSubmissionDc: ((row.accepted_datacenter as string | null) ?? row.datacenter) as string,
    jobSubmittedAt: iso(jobCreated),
    keyTimestamp: iso(endedAt),
    lastAttemptEndedAt: iso(totals?.lastEndedAt ?? null),
    lastAttemptSeqNo: totals?.lastAttemptNo ?? Number(row.attempt_count),
    maxPageTransmitted: totals?.maxPages ?? Number(row.pages_sent ?? 0),
    processingFinalAt: final ? iso(row.finished_at) : null,
    statusCode: result === "delivered" ? DELIVERED_CODE : reasonCode ?? "failed",
    statusName: callStatusName(result, reasonCode),
    statusReason: result === "delivered" ? "OK" : reasonCode && isFailureReasonCode(reasonCode) ? failureReason(reasonCode).description : ((row.raw_cause as string | null) ?? "failed"),
    sumCallDurations: (totals?.durationSecs ?? 0) * 1000,
    sumPagesTransmitted: totals?.pages ?? 0,
    timeToFirstDial: totals ? Math.max(0, totals.firstStartedAt - jobCreated) : null,
    virtualPagesBilled: Number(row.pages_sent ?? 0),
    datacenter: row.datacenter as string,
    trunk: (row.trunk as string | null) ?? null,
    transport: (row.transport as string | null) ?? null,
    rawCause: (row.raw_cause as string | null) ?? null,
    faxStatusName: final ? ((row.recipient_status as string | null) ?? null) : "PENDING",
  };
}

/** documentDeliveryStatus: how the deliveries of a reception went (the pull API: by its acknowledgement). */
function deliveryStatus(deliveries: readonly ReceptionDelivery[], row: Record<string, unknown>): string {
  if (deliveries.length === 0) return row.acknowledged_at !== null && row.acknowledged_at !== undefined ? "SUCCEEDED" : Number(row.handed_out ?? 0) > 0 ? "IN_PROGRESS" : "PENDING";
  if (deliveries.some((d) => d.state === "failed")) return "FAILED";
  if (deliveries.every((d) => d.state === "delivered")) return "SUCCEEDED";
  return "IN_PROGRESS";
}

const CHANNEL_OF_SERVICE: Record<string, string> = { F2Mail: "email", F2WS: "http", F2FTP: "sftp" };

export function inUdr(row: Record<string, unknown>, deliveries: readonly ReceptionDelivery[], retentionDays: number | null | undefined, ctx: RecordContext): InUdr {
  const receivedAt = Number(row.received_at);
  const durationMs = Number(row.duration_secs ?? 0) * 1000;
  const pages = Number(row.pages ?? 0);
  const announced = num(row.pages_announced);
  const allPages = Math.max(pages, announced ?? 0);
  const service = (row.accounting_service as string | null) ?? "F2WSPull";
  const primary = CHANNEL_OF_SERVICE[service];
  const primaryTargets = deliveries.filter((d) => d.channel === primary).map((d) => d.target);
  const secondaryTargets = deliveries.filter((d) => d.channel !== primary).map((d) => d.target);
  const kept = Number(row.image_bytes ?? 0) > 0;
  const purgedAt = num(row.purged_at);
  const keepDays = retentionDays ?? ctx.receptionRetentionDays;
  return {
    faxId: row.id as string,
    accountingService: service,
    allPages,
    archivePurgeAt: purgedAt !== null ? iso(purgedAt) : kept ? iso(receivedAt + keepDays * DAY_MS) : null,
    archivingStatus: purgedAt !== null ? "PURGED" : kept ? "SUCCEEDED" : "NOT_ARCHIVED",
    baudRate: num(row.bit_rate),
    billingCode: null,
    callConnectedAt: durationMs > 0 ? iso(receivedAt - durationMs) : null,
    calledCountry: countryOfNumber(row.to_number as string),
    calledCsId: (row.to_number as string | null) ?? null,
    calledNumber: row.to_number as string,
    calledNumberDisplay: row.to_number as string,
    callingNumber: (row.from_number as string | null) ?? null,
    callingTsId: (row.remote_csid as string | null) ?? null,
    callStartedAt: iso(receivedAt - durationMs),
    confirmedPages: pages,
    customerId: row.cust_nr as string,
    deliveryRecipients: primaryTargets.length > 0 ? primaryTargets.join(", ") : null,
    deliverySender: service === "F2Mail" ? ctx.mailFrom : null,
    deliverySenderUser: null,
    discardedPages: allPages - pages,
    docMimeType: kept ? "image/tiff" : null,
    documentDeliveryStatus: deliveryStatus(deliveries, row),
    faxFileSize: Number(row.image_bytes ?? 0),
    faxTransmitStatus: row.status as string,
    keyTimestamp: iso(receivedAt),
    recipientsCount: deliveries.length,
    resolution: (row.resolution as string | null) ?? null,
    secondaryDeliveryRecipients: secondaryTargets.length > 0 ? secondaryTargets.join(", ") : null,
    virtualPagesBilled: pages,
    topic: row.topic as string,
    datacenter: ((row.received_datacenter as string | null) ?? row.datacenter) as string,
    transport: (row.transport as string | null) ?? null,
    reasonCode: (row.reason_code as string | null) ?? null,
    rawCause: (row.raw_cause as string | null) ?? null,
  };
}

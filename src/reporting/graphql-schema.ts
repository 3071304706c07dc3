/**
 * The reporting interface's GraphQL schema (docs/reporting.md): the provider's two usage-record
 * queries exactly as documented, then Faxline's aggregates. The SDL below is the reference; the
 * resolvers are in graphql-resolvers.ts.
 */
import { buildSchema, type GraphQLSchema } from "graphql";

export const REPORTING_SDL = /* GraphQL */ `
"""Reports of faxes sent and received: the provider's usage records (UDRs) and Faxline's aggregates."""
type Query {
  """
  Outbound usage records: one per call (attempt) that ended in the period, with its fax and job.
  The provider's query: at most 45 days per query (reporting.maxQuerySpan), starting within the
  last 90 days (reporting.history). Sorted by keyTimestamp (the call's end).
  """
  faxOutUdrReport(
    customerId: String!
    datePeriod: DatePeriod!
    filter: FaxOutColumnUdrFilters
    "0-based."
    page: Int
    "Records per page: 1 to reporting.maxPageSize (10 000); default reporting.defaultPageSize (100)."
    size: Int
    sort: SortDirection
  ): FaxOutUdrQueryResult!

  """
  Inbound usage records: one per reception that arrived in the period. Same limits as
  faxOutUdrReport. Sorted by keyTimestamp (the arrival).
  """
  faxInUdrReport(
    customerId: String!
    datePeriod: DatePeriod!
    filter: FaxInColumnUdrFilters
    page: Int
    size: Int
    sort: SortDirection
  ): FaxInUdrQueryResult!

  """
  Faxline: outbound faxes (recipients) counted on the UTC day they became final. datePeriod:
  whole UTC days, up to reporting.maxSummarySpan (400 days). customerId: omitted, the caller's
  customer (operators: every customer).
  """
  faxOutSummary(customerId: String, datePeriod: DatePeriod!, filter: FaxOutSummaryFilter, groupBy: [FaxOutSummaryGrouping!], limit: Int = 1000): FaxOutSummary!

  "Faxline: outbound calls (attempts) counted on the UTC day they ended; by trunk, result, reason …"
  faxOutCallSummary(customerId: String, datePeriod: DatePeriod!, filter: FaxOutCallSummaryFilter, groupBy: [FaxOutCallSummaryGrouping!], limit: Int = 1000): FaxOutCallSummary!

  "Faxline: receptions counted on the UTC day they arrived."
  faxInSummary(customerId: String, datePeriod: DatePeriod!, filter: FaxInSummaryFilter, groupBy: [FaxInSummaryGrouping!], limit: Int = 1000): FaxInSummary!

  "Faxline: the destination numbers with the most failed faxes in the period, most first."
  faxOutFailingDestinations(customerId: String, datePeriod: DatePeriod!, filter: FaxOutFailureFilter, limit: Int = 10): [FailingDestination!]!
}

"An interval of time: ISO-8601 instants in UTC, e.g. 2025-06-04T08:00:00.000Z."
input DatePeriod {
  fromIncluded: String!
  toExcluded: String!
}

enum SortDirection {
  ASC
  DESC
}

"A column filter: the record's column must be one of the values."
input ColumnValues {
  values: [String]
}

"""
Filters of faxOutUdrReport, one per column; a record must match every column given. statusName
(OK, BUSY, NOFAX …) and statusCode (delivered, or a failure reason code: docs/failure-reasons.md)
are those of the call.
"""
input FaxOutColumnUdrFilters {
  statusName: ColumnValues
  statusCode: ColumnValues
  jobBillingCode: ColumnValues
  jobCustomerRef: ColumnValues
  jobId: ColumnValues
  faxId: ColumnValues
  accountId: ColumnValues
  accountName: ColumnValues
  accountService: ColumnValues
  calledNumber: ColumnValues
  calledCountry: ColumnValues
  jobSubmissionDc: ColumnValues
  "Faxline: the SIP trunk of the call."
  trunk: ColumnValues
}

input FaxInColumnUdrFilters {
  faxTransmitStatus: ColumnValues
  accountingService: ColumnValues
  calledNumber: ColumnValues
  calledNumberDisplay: ColumnValues
  callingNumber: ColumnValues
  "Faxline: the topic the number receives into."
  topic: ColumnValues
}

type FaxOutUdrQueryResult {
  content: [FaxOutUdr!]!
  pageIndex: Int!
  pageSize: Int!
  hasMoreElements: Boolean!
}

type FaxInUdrQueryResult {
  content: [FaxInUdr!]!
  pageIndex: Int!
  pageSize: Int!
  hasMoreElements: Boolean!
}

"One call of an outbound fax (docs/reporting.md lists where each field comes from)."
type FaxOutUdr {
  "The fax: one recipient of a job."
  faxId: String!
  jobId: String!
  "The login that sent the job."
  accountId: String
  accountName: String
  "The Faxline node that placed the call."
  accountServerId: String
  "API, or M2F for mail-to-fax."
  accountService: String
  attemptPages: Int
  attemptSeqNo: Int
  baudRate: Int
  billedCountry: String
  callConnectedAt: String
  "Milliseconds from the answer to the hang-up."
  callDuration: Int
  "ISO 3166-1 alpha-3; XXX for non-geographic numbers."
  calledCountry: String
  calledCsId: String
  calledNumber: String
  "NATIONAL (the node's region's country) or INTERNATIONAL."
  calledZone: String
  callEndedAt: String
  callingTsId: String
  callInviteAt: String
  docPages: Int
  faxCustomerRef: String
  jobArchivePurgeAt: String
  jobBillingCode: String
  jobBillingInfo: String
  jobCustomerId: String
  jobCustomerRef: String
  jobCustomerResolution: String
  jobCustomerStartFaxAt: String
  jobCustomerTags: [String]
  jobExpress: Boolean
  jobPersonalized: Boolean
  jobSubmissionDc: String
  jobSubmittedAt: String
  keyTimestamp: String
  lastAttemptEndedAt: String
  lastAttemptSeqNo: Int
  maxPageTransmitted: Int
  processingFinalAt: String
  "delivered, or the failure reason code of the call."
  statusCode: String
  "OK, or the failure's status (BUSY, NOFAX, …)."
  statusName: String
  statusReason: String
  sumCallDurations: Int
  sumPagesTransmitted: Int
  "Milliseconds from the job's submission to its first call."
  timeToFirstDial: Int
  virtualPagesBilled: Int
  "Faxline: the data center that owns the job now."
  datacenter: String
  "Faxline: the SIP trunk of the call (null: the test line)."
  trunk: String
  "Faxline: t38, g711 or test."
  transport: String
  "Faxline: the SIP response, Q.850 cause or T.30 error behind a failure."
  rawCause: String
  "Faxline: the fax's status now (its final status, or PENDING)."
  faxStatusName: String
}

"One reception (docs/reporting.md lists where each field comes from)."
type FaxInUdr {
  faxId: ID!
  "F2Mail, F2WS, F2FTP, or F2WSPull (the pull API only)."
  accountingService: String
  allPages: Int
  archivePurgeAt: String
  "SUCCEEDED (image kept), PURGED, NOT_ARCHIVED (no page arrived)."
  archivingStatus: String
  baudRate: Int
  billingCode: String
  callConnectedAt: String
  calledCountry: String
  calledCsId: String
  calledNumber: String
  calledNumberDisplay: String
  callingNumber: String
  callingTsId: String
  callStartedAt: String
  confirmedPages: Int
  customerId: String
  deliveryRecipients: String
  deliverySender: String
  deliverySenderUser: String
  discardedPages: Int
  docMimeType: String
  "SUCCEEDED, FAILED, IN_PROGRESS or PENDING."
  documentDeliveryStatus: String
  faxFileSize: Int
  "OK, PARTIAL or FAILED."
  faxTransmitStatus: String
  keyTimestamp: String
  recipientsCount: Int
  resolution: String
  secondaryDeliveryRecipients: String
  virtualPagesBilled: Int
  "Faxline: the topic."
  topic: String
  "Faxline: the data center that received it."
  datacenter: String
  transport: String
  reasonCode: String
  rawCause: String
}

enum FaxOutSummaryGrouping {
  DAY
  WEEK
  MONTH
  CUSTOMER
  LOGIN
  DATACENTER
  SERVICE
  COUNTRY
  STATUS
  REASON
}

enum FaxOutCallSummaryGrouping {
  DAY
  WEEK
  MONTH
  CUSTOMER
  LOGIN
  DATACENTER
  SERVICE
  COUNTRY
  TRUNK
  RESULT
  REASON
}

enum FaxInSummaryGrouping {
  DAY
  WEEK
  MONTH
  CUSTOMER
  TOPIC
  DATACENTER
  SERVICE
  COUNTRY
  STATUS
  REASON
}

input FaxOutSummaryFilter {
  customerIds: ColumnValues
  logins: ColumnValues
  datacenters: ColumnValues
  services: ColumnValues
  countries: ColumnValues
  statuses: ColumnValues
  reasons: ColumnValues
}

input FaxOutCallSummaryFilter {
  customerIds: ColumnValues
  logins: ColumnValues
  datacenters: ColumnValues
  services: ColumnValues
  countries: ColumnValues
  trunks: ColumnValues
  results: ColumnValues
  reasons: ColumnValues
}

input FaxInSummaryFilter {
  customerIds: ColumnValues
  topics: ColumnValues
  datacenters: ColumnValues
  services: ColumnValues
  countries: ColumnValues
  statuses: ColumnValues
  reasons: ColumnValues
}

input FaxOutFailureFilter {
  customerIds: ColumnValues
  logins: ColumnValues
  datacenters: ColumnValues
  services: ColumnValues
  countries: ColumnValues
  reasons: ColumnValues
}

type FaxOutSummary {
  totals: FaxOutFigures!
  rows: [FaxOutSummaryRow!]!
  "True when there were more rows than limit."
  truncated: Boolean!
}

type FaxOutFigures {
  faxes: Int!
  delivered: Int!
  failed: Int!
  pages: Int!
  "Calls of these faxes."
  attempts: Int!
  "Calls of the delivered ones."
  deliveredAttempts: Int!
  lineSeconds: Float!
  "delivered / faxes; null without faxes."
  successRate: Float
  "deliveredAttempts / delivered; null without delivered faxes."
  attemptsPerDeliveredFax: Float
}

type FaxOutSummaryRow {
  "First day (YYYY-MM-DD, UTC) of the day, week (Monday) or month grouped by."
  period: String
  customerId: String
  login: String
  datacenter: String
  service: String
  country: String
  status: String
  "Failure reason code; empty for delivered faxes."
  reason: String
  faxes: Int!
  delivered: Int!
  failed: Int!
  pages: Int!
  attempts: Int!
  deliveredAttempts: Int!
  lineSeconds: Float!
  successRate: Float
  attemptsPerDeliveredFax: Float
}

type FaxOutCallSummary {
  totals: FaxOutCallFigures!
  rows: [FaxOutCallSummaryRow!]!
  truncated: Boolean!
}

type FaxOutCallFigures {
  calls: Int!
  "Calls that were answered."
  connected: Int!
  delivered: Int!
  failed: Int!
  pages: Int!
  lineSeconds: Float!
  successRate: Float
  "lineSeconds / connected."
  averageCallSeconds: Float
}

type FaxOutCallSummaryRow {
  period: String
  customerId: String
  login: String
  datacenter: String
  service: String
  country: String
  "Empty: the test line, or no call placed."
  trunk: String
  "delivered, failed or abandoned."
  result: String
  reason: String
  calls: Int!
  connected: Int!
  delivered: Int!
  failed: Int!
  pages: Int!
  lineSeconds: Float!
  successRate: Float
  averageCallSeconds: Float
}

type FaxInSummary {
  totals: FaxInFigures!
  rows: [FaxInSummaryRow!]!
  truncated: Boolean!
}

type FaxInFigures {
  faxes: Int!
  ok: Int!
  partial: Int!
  failed: Int!
  pages: Int!
  lineSeconds: Float!
  "ok / faxes."
  successRate: Float
}

type FaxInSummaryRow {
  period: String
  customerId: String
  topic: String
  datacenter: String
  service: String
  country: String
  status: String
  reason: String
  faxes: Int!
  ok: Int!
  partial: Int!
  failed: Int!
  pages: Int!
  lineSeconds: Float!
  successRate: Float
}

type FailingDestination {
  "E.164."
  number: String!
  country: String!
  failedFaxes: Int!
  "Calls of the failed faxes."
  attempts: Int!
  reasons: [FailureCount!]!
}

type FailureCount {
  reason: String!
  faxes: Int!
}
`;

let built: GraphQLSchema | null = null;

export function reportingSchema(): GraphQLSchema {
  built ??= buildSchema(REPORTING_SDL);
  return built;
}

/**
 * Table shapes of the Faxline store, shared by every dialect. Timestamps are integer
 * milliseconds since the epoch (`*_at`), booleans are 0/1 integers, lists and maps are JSON
 * text: the same columns work on SQLite and PostgreSQL.
 *
 * The rows are the contract between roles (HylaFAX's sendq tag table, as rows): the api role
 * inserts jobs, the scheduler renders and sweeps them, the sender claims recipients and records
 * attempts, the retention role purges. docs/architecture.md describes each column group.
 */
import type { Generated, Insertable, Selectable } from "kysely";

export interface CustomersTable {
  cust_nr: string;
  /** Days completed reports are kept; null: retention.defaultDays. */
  retention_days: number | null;
  created_at: number;
  /** Default status push URL when a job names none; null: no push. */
  push_url: string | null;
  /** XML (the contract's faxJobReport, default), JSON, or TEMPLATE (the installed push layout). */
  push_format: string | null;
  /** JSON array of extra push events beyond job.completed (opt-in), or null. */
  push_events: string | null;
  /** OAuth2 client-credentials token endpoint for pushes with authMethod OAUTH2. */
  oauth2_token_url: string | null;
  /** JSON array of Standard Webhooks secrets (`whsec_…`), newest first; null: pushes unsigned. */
  signing_secrets: string | null;
  /** Fax header used when a job gives none. */
  default_header: string | null;
  /** Tone mode (AUTO, TEXT, PHOTO, THRESHOLD) of jobs that give none; null: AUTO (migration 0010). */
  default_tone_mode: Generated<string | null>;
  /** JSON reportMail ({successAddress, failureAddress, attachedFaxImageMode, attachedFaxImageFormat}) for jobs that ask for none (migration 0007). */
  report_mail: Generated<string | null>;
}

export interface CustomerTemplatesTable {
  cust_nr: string;
  /** push | mail-subject | mail-text | mail-html (rendering adds cover pages and overlays). */
  kind: string;
  name: string;
  content_type: string;
  content: string;
  updated_at: number;
}

/** A rendered fax image: one per job and rendering variant (migration 0003 explains variants). */
export interface FaxImagesTable {
  /** `img_<jobId>_<variant>`. */
  id: string;
  job_id: string;
  /** 0, 1, ...: variants in the order of their first recipient. */
  variant: number;
  /** TIFF (TIFF-F, CCITT G4, one image per page). */
  format: string;
  content: Uint8Array;
  pages: number;
  /** JSON array: CCITT G4 encoded bytes of each page. */
  page_sizes: string;
  /** JSON array of preflight/page-preflight.ts PagePreflight, one per page. */
  preflight: string;
  size_bytes: number;
  created_at: number;
}

export interface NotificationsTable {
  /** `msg_…`; also the Standard Webhooks `webhook-id`, stable over retries. */
  id: string;
  job_id: string;
  cust_nr: string;
  datacenter: string;
  /** http | email | sftp */
  channel: string;
  /** job.completed, or an opt-in intermediate event (see notifications/events.ts). */
  event: string;
  /** The push URL, the e-mail address, or the SFTP destination (`sftp://user@host:port/directory`). */
  target: string;
  /** Whom the per-receiver concurrency limit counts against: the URL's origin, or `smtp`. */
  receiver: string;
  /** JSON credentials for the push (authMethod, principal, credentials); never shown by the API. */
  auth: string | null;
  /** JSON: the report snapshot taken when the event happened (notifications/report-snapshot.ts). */
  payload: string;
  /** pending | delivering | delivered | failed */
  state: string;
  /** Tries made so far (the delivery log's attempt numbers). */
  attempts: number;
  /** Position in the retry schedule; a redelivery request starts it again at 0. */
  schedule_step: number;
  next_attempt_at: number;
  locked_by: string | null;
  lease_until: number | null;
  last_error: string | null;
  created_at: number;
  finished_at: number | null;
}

export interface NotificationAttemptsTable {
  id: string;
  notification_id: string;
  attempt_no: number;
  node: string;
  started_at: number;
  duration_ms: number;
  /** delivered | retry | failed | abandoned */
  outcome: string;
  status_code: number | null;
  error: string | null;
  /** The first 1 KiB of the receiver's answer. */
  response_excerpt: string | null;
}

export interface LoginsTable {
  login: string;
  cust_nr: string;
  /** `scrypt$N$r$p$salt$hash` (base64 parts). */
  password_hash: string;
  /** 1: a test account; its jobs run on the simulated test line only. */
  is_test: number;
  /** JSON array of CIDR blocks, or null for any address. */
  ip_allow_list: string | null;
  disabled_at: number | null;
  created_at: number;
  /** 1: an operator login; it sees the console's Operations pages (migration 0007). */
  is_admin: Generated<number>;
  /** 1: may change the customer's settings in the console (migration 0007). */
  is_manager: Generated<number>;
}

/** A signed-in console browser (migration 0007; console/console-sessions.ts). */
export interface ConsoleSessionsTable {
  /** SHA-256 (base64url) of the cookie's token; the token itself is never stored. */
  token_hash: string;
  login: string;
  /** Must come back in X-CSRF-Token on every request that changes something. */
  csrf_token: string;
  created_at: number;
  last_seen_at: number;
  /** Idle expiry: moved forward as the session is used, never past created_at + the absolute limit. */
  expires_at: number;
  client_address: string | null;
}

export interface JobsTable {
  id: string;
  cust_nr: string;
  login: string;
  region: string;
  /** The owner: the data center that sends, reports, pushes and purges the job (an adoption moves it). */
  datacenter: string;
  /** The data center that accepted the job (migration 0006); never changes. */
  accepted_datacenter: string | null;
  /** See scheduler/job-states.ts. */
  state: string;
  is_test: number;
  is_express: number;
  blacklist_check: number;
  csid: string | null;
  paper_format: string;
  resolution: string;
  header: string | null;
  coverpage_template: string | null;
  overlay_name: string | null;
  overlay_mode: string | null;
  /** renderingOptions.toneMode (AUTO, TEXT, PHOTO, THRESHOLD) as given, and as rendered once the job is rendered; null until then when the job gave none: its customer's default_tone_mode, else AUTO. */
  tone_mode: string | null;
  /** The login that cancelled the job (scheduler/cancel-job.ts); null: never cancelled. */
  cancelled_by: Generated<string | null>;
  customer_defined_id: string | null;
  billing_code: string | null;
  billing_info: string | null;
  customer_reference: string | null;
  /** JSON: statusReportOptions as submitted (for the notification roles). */
  status_report_options: string | null;
  idempotency_key: string | null;
  request_hash: string | null;
  valid_from: number;
  valid_until: number;
  deadline_at: number;
  pages: number | null;
  /** JSON array: CCITT G4 encoded bytes of each page of the job's fax image (job_fax_images). */
  page_sizes: string | null;
  render_attempts: number;
  locked_by: string | null;
  lease_until: number | null;
  failure_code: string | null;
  failure_detail: string | null;
  created_at: number;
  completed_at: number | null;
  documents_purged_at: number | null;
  /** How the job came in: API, or M2F for mail-to-fax (migration 0025); the reports' accountService. */
  source: Generated<string>;
  /** JSON of the mail a mail-to-fax job came from (mail-to-fax/mail-origin.ts); null for API jobs (migration 0035). */
  mail_origin: Generated<string | null>;
  /** 1: blank document pages are left out of the fax (mail-to-fax's fax.suppressBlankPages; migration 0045); 0 for API jobs. */
  suppress_blank_pages: Generated<number>;
}

export interface JobDocumentsTable {
  job_id: string;
  ordinal: number;
  name: string;
  charset: string | null;
  reference_url: string | null;
  content: Uint8Array | null;
  size_bytes: number | null;
}

export interface RecipientsTable {
  id: string;
  job_id: string;
  ordinal: number;
  datacenter: string;
  is_express: number;
  /** The primary number as submitted. */
  number: string;
  /** JSON array as submitted, or null when absent. */
  alternative_numbers: string | null;
  /** JSON array of {key, value} as submitted, or null. */
  properties: string | null;
  /** JSON array of {e164, dialString}: primary first, then the alternatives. */
  dial_targets: string;
  /** Index into dial_targets of the number the next attempt dials. */
  target_index: number;
  /** JSON array of dial_targets indexes given up for good (retry class never). */
  dead_targets: string;
  /** E.164 of the number the next or current attempt dials: the per-destination limit's key. */
  current_e164: string | null;
  /** See scheduler/job-states.ts. */
  state: string;
  run_at: number;
  attempt_count: number;
  /** JSON object: retries used per retry class. */
  retries_used: string;
  locked_by: string | null;
  lease_until: number | null;
  status: string | null;
  reason_code: string | null;
  reason_text: string | null;
  sent_at: number | null;
  duration_secs: number;
  sent_to_number: string | null;
  remote_csid: string | null;
  pages_sent: number;
  finished_at: number | null;
  /** fax_images.id of the image this recipient is sent; null until the job is rendered. */
  fax_image_id: Generated<string | null>;
  /** 1 once its final outcome is counted in the daily rollups (migration 0025). */
  rolled_up: Generated<number>;
}

export interface AttemptsTable {
  id: string;
  recipient_id: string;
  job_id: string;
  attempt_no: number;
  e164: string;
  dial_string: string;
  node: string;
  started_at: number;
  ended_at: number | null;
  /** in_progress | delivered | failed | abandoned */
  result: string;
  reason_code: string | null;
  raw_cause: string | null;
  pages_sent: number;
  duration_secs: number;
  remote_csid: string | null;
  /** t38 | g711 | test: what carried the fax (migration 0007); null when unknown or no fax exchange began. */
  transport: Generated<string | null>;
  /** Bit rate of a delivered call (migration 0007). */
  bit_rate: Generated<number | null>;
  /** The SIP trunk the call went out on (migration 0025); null: the test line, or no call placed. */
  trunk: Generated<string | null>;
  /** ISO alpha-3 country of `e164` (migration 0025; numbers/country-of-number.ts). */
  country: Generated<string | null>;
  /** 1 once counted in the daily rollups (migration 0025; store/queries/report-rollups.ts). */
  rolled_up: Generated<number>;
}

/** What a destination's fax machine was seen to do (migration 0004; line/outcomes/fallback-ladder.ts). */
export interface DestinationCapabilitiesTable {
  e164: string;
  /** t38 | g711: the last delivered call's transport; null when none was delivered. */
  worked_transport: string | null;
  worked_ecm: number | null;
  /** Highest bit rate that call offered. */
  worked_max_bit_rate: number | null;
  /** Bit rate it ran at. */
  worked_bit_rate: number | null;
  worked_at: number | null;
  /** The mode of the last protocol-class failure since the last success. */
  failed_transport: string | null;
  failed_ecm: number | null;
  failed_max_bit_rate: number | null;
  failed_at: number | null;
  failed_reason: string | null;
  failures_in_row: Generated<number>;
  t38_refused_at: number | null;
  updated_at: number;
}

export interface BlacklistTable {
  e164: string;
  note: string | null;
  added_at: number;
}

/** The node registry (migration 0005; cluster/node-registry.ts). */
export interface NodesTable {
  id: string;
  /** Lease-holder name of the node's current life: `<id>:<start token>`. */
  instance: string;
  region: string;
  datacenter: string;
  /** JSON array of the roles the node runs. */
  roles: string;
  version: string;
  hostname: string;
  pid: number;
  /** The API's address when the node runs the api role. */
  api_url: string | null;
  started_at: number;
  last_seen_at: number;
  /** Set when the node stopped cleanly; null while it runs (or after it died). */
  stopped_at: number | null;
  /** Calls the node's sender was running at its last heartbeat. */
  active_calls: number;
  /** JSON [{trunk, transport, calls}] of those calls (migration 0007); null before the first heartbeat. */
  calls_by_trunk: Generated<string | null>;
}

/** Singleton duties (migration 0005; cluster/singleton-lease.ts). */
export interface ClusterLeasesTable {
  /** The duty, e.g. `sweep:DE1`, `retention:DE1`. */
  name: string;
  /** Lease-holder name (`<node id>:<start token>`) of the node doing it. */
  holder: string;
  lease_until: number;
  /** When the current holder took it. */
  acquired_at: number;
  renewed_at: number;
}

/** One adoption run (migration 0006; cluster/datacenter-adoption.ts). */
export interface DatacenterAdoptionsTable {
  id: string;
  region: string;
  from_datacenter: string;
  to_datacenter: string;
  /** failover | manual */
  mode: string;
  node: string;
  adopted_at: number;
  jobs: number;
  open_jobs: number;
  recipients: number;
  notifications: number;
  last_seen_at: number | null;
}

/** A job's adoptions (migration 0006). */
export interface JobAdoptionsTable {
  job_id: string;
  adoption_id: string;
  from_datacenter: string;
  to_datacenter: string;
  adopted_at: number;
}

/** A customer's topic (migration 0008; inbound/topics.ts). */
export interface InboundTopicsTable {
  cust_nr: string;
  name: string;
  /** Days received faxes are kept; null: inbound.retentionDays. */
  retention_days: number | null;
  /** JSON array of e-mail addresses each reception is mailed to, or null. */
  mail_to: string | null;
  /** PDF | TIFF | NONE */
  mail_attachment: string | null;
  /** URL each reception's notice is posted to (signed like status pushes), or null. */
  push_url: string | null;
  created_at: number;
  /** The profile level of the inbound settings (migration 0030; src/configuration/): CSID, cost center, active (1/0, null: not set), a comment. */
  fax_id: string | null;
  cost_center: string | null;
  active: number | null;
  comments: string | null;
  /** 1 | 0 | null (not set): a paused profile's numbers answer callers 480 (migration 0044). */
  paused: number | null;
  /** The most received faxes that may wait for the customer (inbound-settings.ts waitingFaxes); null: no limit (migration 0044). */
  max_waiting: number | null;
}

/** A customer's own inbound settings, the top of customer → profile → number (migration 0030). */
export interface InboundCustomerSettingsTable {
  cust_nr: string;
  fax_id: string | null;
  cost_center: string | null;
  /** 1 | 0 | null (not set: active) */
  active: number | null;
  /** 1 | 0 | null (not set: not paused; migration 0044) */
  paused: number | null;
  updated_at: number;
}

/** A number of a customer with its own settings (migration 0030); without an inbound_numbers row it has no profile. */
export interface InboundNumberSettingsTable {
  e164: string;
  cust_nr: string;
  display_number: string | null;
  comments: string | null;
  fax_id: string | null;
  cost_center: string | null;
  active: number | null;
  /** 1 | 0 | null (not set; migration 0044) */
  paused: number | null;
  created_at: number;
  updated_at: number;
}

/** One change made through the configuration API (migration 0030; src/configuration/audit-log.ts). */
export interface ConfigAuditTable {
  id: string;
  cust_nr: string;
  at: number;
  actor_login: string;
  /** manager | operator */
  actor_role: string;
  resource: string;
  resource_key: string;
  /** create | update | delete */
  action: string;
  before_json: string | null;
  after_json: string | null;
}

/** A topic's fax-to-SFTP delivery (migration 0020; src/inbound/sftp-delivery-settings.ts). */
export interface InboundSftpDeliveriesTable {
  cust_nr: string;
  topic: string;
  host: string;
  port: number;
  username: string;
  /** key | password */
  auth_method: string;
  /** Secret: the private key text (unencrypted OpenSSH or PEM); never shown. */
  private_key: string | null;
  /** Secret: the login password; never shown. */
  password: string | null;
  /** JSON array of accepted host key fingerprints, `SHA256:…`. */
  host_keys: string;
  /** Remote directory; "" is the login's directory. */
  directory: string;
  file_pattern: string;
  /** PDF | TIFF */
  document_format: string;
  /** JSON | XML */
  metadata_format: string;
  created_at: number;
  updated_at: number;
}

/** A fax number (DID) that receives into a topic (migration 0008). */
export interface InboundNumbersTable {
  e164: string;
  cust_nr: string;
  topic: string;
  created_at: number;
}

/** A pull API password of a customer (migration 0008). */
export interface InboundCredentialsTable {
  id: string;
  cust_nr: string;
  label: string | null;
  password_hash: string;
  /** JSON array of topic names, or null: every topic of the customer. */
  topics: string | null;
  created_at: number;
  disabled_at: number | null;
}

/** A reception (migration 0008; inbound/). */
export interface ReceivedFaxesTable {
  id: string;
  cust_nr: string;
  topic: string;
  datacenter: string;
  /** The number called (E.164). */
  to_number: string;
  /** The caller's number as the network gave it, or null when withheld. */
  from_number: string | null;
  /** The sender's fax id (TSI). */
  remote_csid: string | null;
  /** Pages received (kept in `image`). */
  pages: number;
  /** Pages the sender announced, when known. */
  pages_announced: number | null;
  /** HIGH | LOW of the received pages. */
  resolution: string | null;
  /** t38 | g711 | test */
  transport: string | null;
  bit_rate: number | null;
  duration_secs: number;
  /** OK | PARTIAL | FAILED */
  status: string;
  reason_code: string | null;
  raw_cause: string | null;
  received_at: number;
  /** TIFF-F of the received pages; null after the purge or when no page arrived. */
  image: Uint8Array | null;
  image_bytes: number;
  locked_until: number | null;
  handed_out: Generated<number>;
  acknowledged_at: number | null;
  purged_at: number | null;
  source_job_id: string | null;
  /** The data center that received it (migration 0025); `datacenter` is its owner, which an adoption moves. Null until counted. */
  received_datacenter: Generated<string | null>;
  /** F2Mail, F2WS, F2WSPull …: the delivery the reception was queued for (migration 0025); null until counted. */
  accounting_service: Generated<string | null>;
  /** 1 once counted in the daily rollups (migration 0025). */
  rolled_up: Generated<number>;
  /** JSON: how each page came through (fax-reception.ts PageQuality[]; migration 0042); null when not known. */
  page_quality: Generated<string | null>;
}

/** Daily rollups (migration 0025; store/queries/report-rollups.ts). `day`: UTC midnight, ms. Dimensions are "" when absent. */
export interface ReportOutFaxesTable {
  day: number;
  cust_nr: string;
  login: string;
  /** The data center that accepted the job (jobSubmissionDc): adoptions do not move counts. */
  datacenter: string;
  service: string;
  country: string;
  /** The fax's final status (OK, BUSY, …). */
  status: string;
  /** Failure reason code; "" for a delivered fax. */
  reason: string;
  faxes: number;
  /** Pages delivered. */
  pages: number;
  /** Calls it took, over all of its numbers. */
  attempts: number;
  /** Line seconds of all of its calls. */
  line_secs: number;
}

export interface ReportOutCallsTable {
  day: number;
  cust_nr: string;
  login: string;
  datacenter: string;
  service: string;
  country: string;
  trunk: string;
  /** delivered | failed | abandoned */
  result: string;
  reason: string;
  calls: number;
  /** Calls that were answered (line time above zero). */
  connected: number;
  pages: number;
  line_secs: number;
}

export interface ReportOutFailuresTable {
  day: number;
  cust_nr: string;
  login: string;
  datacenter: string;
  service: string;
  /** E.164 of the number the fax's last call dialled. */
  number: string;
  country: string;
  reason: string;
  faxes: number;
  attempts: number;
}

/**
 * Failed faxes per customer and destination over every day of report_out_failures (migration
 * 0043): cust_nr '' sums every customer's. first_day/last_day bound the number's days.
 */
export interface ReportOutFailingNumbersTable {
  cust_nr: string;
  number: string;
  country: string;
  faxes: number;
  attempts: number;
  first_day: number;
  last_day: number;
}

export interface ReportInFaxesTable {
  day: number;
  cust_nr: string;
  topic: string;
  datacenter: string;
  service: string;
  /** Country of the number called (ours). */
  country: string;
  /** OK | PARTIAL | FAILED */
  status: string;
  reason: string;
  faxes: number;
  pages: number;
  line_secs: number;
}

/** A customer that sends by mail (migration 0035; mail-to-fax/settings.ts). */
export interface M2fCustomersTable {
  cust_nr: string;
  /** The login mail-to-fax jobs are booked on (is_test decides the line). */
  login: string;
  /** JSON MailToFaxSettings of the customer level. */
  settings: string;
  created_at: number;
  updated_at: number;
}

export interface M2fProfilesTable {
  cust_nr: string;
  name: string;
  /** JSON MailToFaxSettings of the profile level. */
  settings: string;
  created_at: number;
  updated_at: number;
}

export interface M2fUsersTable {
  /** Lower-case e-mail address; unique over all customers. */
  email: string;
  cust_nr: string;
  /** The profile's name; null: the customer's settings only. */
  profile: string | null;
  active: Generated<number>;
  /** scrypt hash of the user's PIN; null: no PIN. */
  pin_hash: string | null;
  /** JSON MailToFaxSettings of the user level. */
  settings: string;
  created_at: number;
  updated_at: number;
}

export interface M2fDomainsTable {
  /** Lower-case domain; unique over all customers. */
  domain: string;
  cust_nr: string;
  /** scrypt hash of the domain's PIN; null: only the relay's SPF/DKIM/DMARC results authorise. */
  pin_hash: string | null;
  created_at: number;
}

/** Wrong mail-to-fax PINs per client address and envelope sender (migration 0046). */
export interface M2fPinFailuresTable {
  remote: string;
  sender: string;
  /** Wrong PINs within the lockout period (since the last right one). */
  failures: number;
  /** Refused until then (ms since the epoch); null: not locked out. */
  locked_until: number | null;
  updated_at: number;
}

export interface Database {
  customers: CustomersTable;
  logins: LoginsTable;
  jobs: JobsTable;
  job_documents: JobDocumentsTable;
  recipients: RecipientsTable;
  attempts: AttemptsTable;
  blacklist: BlacklistTable;
  destination_capabilities: DestinationCapabilitiesTable;
  customer_templates: CustomerTemplatesTable;
  fax_images: FaxImagesTable;
  notifications: NotificationsTable;
  notification_attempts: NotificationAttemptsTable;
  nodes: NodesTable;
  cluster_leases: ClusterLeasesTable;
  datacenter_adoptions: DatacenterAdoptionsTable;
  job_adoptions: JobAdoptionsTable;
  console_sessions: ConsoleSessionsTable;
  inbound_topics: InboundTopicsTable;
  inbound_numbers: InboundNumbersTable;
  inbound_sftp_deliveries: InboundSftpDeliveriesTable;
  inbound_customer_settings: InboundCustomerSettingsTable;
  inbound_number_settings: InboundNumberSettingsTable;
  config_audit: ConfigAuditTable;
  inbound_credentials: InboundCredentialsTable;
  received_faxes: ReceivedFaxesTable;
  report_out_faxes: ReportOutFaxesTable;
  report_out_calls: ReportOutCallsTable;
  report_out_failures: ReportOutFailuresTable;
  report_out_failing_numbers: ReportOutFailingNumbersTable;
  report_in_faxes: ReportInFaxesTable;
  m2f_customers: M2fCustomersTable;
  m2f_profiles: M2fProfilesTable;
  m2f_users: M2fUsersTable;
  m2f_domains: M2fDomainsTable;
  m2f_pin_failures: M2fPinFailuresTable;
}

export type JobRow = Selectable<JobsTable>;
export type ReceivedFaxRow = Selectable<ReceivedFaxesTable>;
export type NewJobRow = Insertable<JobsTable>;
export type NewJobDocumentRow = Insertable<JobDocumentsTable>;
export type RecipientRow = Selectable<RecipientsTable>;
export type NewRecipientRow = Insertable<RecipientsTable>;
export type AttemptRow = Selectable<AttemptsTable>;
export type LoginRow = Selectable<LoginsTable>;
export type NotificationRow = Selectable<NotificationsTable>;
export type NotificationAttemptRow = Selectable<NotificationAttemptsTable>;
export type DestinationCapabilityRow = Selectable<DestinationCapabilitiesTable>;
export type NodeRow = Selectable<NodesTable>;
export type DatacenterAdoptionRow = Selectable<DatacenterAdoptionsTable>;

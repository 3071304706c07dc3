/**
 * @faxline/client: a typed client of the Faxline REST API (the Retarus Fax4Applications REST v1
 * contract and Faxline's extensions), for Node.js 20 and later. Types come from the OpenAPI
 * document the server serves (./openapi.ts, generated; do not edit it).
 *
 *   const fax = new FaxlineClient({ baseUrl: "http://127.0.0.1:8080", customerNumber: "99999TE", login: "demo", password: "demo-password" });
 *   const { jobId } = await fax.sendFiles({ to: "+4900000020", files: ["letter.pdf"] });
 *   const report = await fax.waitForFinalReport(jobId);
 *
 * Every non-2xx answer becomes a FaxlineApiError carrying the API's error code (`code`, e.g.
 * "number_invalid") and HTTP status; a server that cannot be reached, a FaxlineConnectionError.
 * `verifyPushSignature` checks the Standard Webhooks signature of a status push.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import { FaxlineApiError, FaxlineConnectionError, requestJson } from "./errors.ts";
import type { operations } from "./openapi.ts";

export { FaxlineApiError, FaxlineConnectionError } from "./errors.ts";
export * from "./configuration.ts";

type JsonBody<O extends keyof operations, S extends keyof operations[O]["responses"]> = operations[O]["responses"][S] extends { content: { "application/json": infer T } } ? T : never;

/** The body of POST /rest/v1/{custNr}/fax (the contract's FaxJobRequest). */
export type FaxJobRequest = NonNullable<operations["sendJobRequest"]["requestBody"]>["content"]["application/json"];
export type FaxJobDocument = NonNullable<FaxJobRequest["documents"]>[number];
/** A job's report (the contract's FaxReport; `faxline` with `view: "extended"`). */
export type FaxReport = JsonBody<"getStatusReport", 200>;
export type FaxReportList = JsonBody<"getAllStatusReports", 200>;
export type BulkReportsResult = JsonBody<"bulkStatusReports", 200>;
export type JobDeleteReport = JsonBody<"deleteStatusReport", 200>;
export type DeleteOldestResult = JsonBody<"deleteOldestStatusReports", 200>;

export interface FaxlineClientOptions {
  /** The node or data center, e.g. http://127.0.0.1:8080 (without /rest/v1). */
  baseUrl: string;
  customerNumber: string;
  login: string;
  password: string;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
}

/** A file to send: a path, or a name with its bytes. */
export type FaxFile = string | { name: string; bytes: Uint8Array; charset?: string };

export interface SendFilesRequest extends Omit<FaxJobRequest, "recipients" | "documents"> {
  /** One number or several; each becomes a recipient. */
  to: string | string[];
  files: FaxFile[];
}

export interface WaitOptions {
  /** Give up after this long (default 10 minutes). */
  timeoutMs?: number;
  /** First pause between reads (default 500 ms); it doubles up to maxDelayMs. */
  initialDelayMs?: number;
  maxDelayMs?: number;
}

const PENDING = "PENDING";

export class FaxlineClient {
  readonly #base: string;
  readonly #custNr: string;
  readonly #auth: string;
  readonly #fetch: typeof fetch;

  constructor(options: FaxlineClientOptions) {
    this.#base = options.baseUrl.replace(/\/+$/, "");
    this.#custNr = options.customerNumber;
    this.#auth = `Basic ${Buffer.from(`${options.login}:${options.password}`).toString("base64")}`;
    this.#fetch = options.fetch ?? fetch;
  }

  async #call<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    return requestJson<T>(this.#fetch, this.#base, `${this.#base}/rest/v1/${encodeURIComponent(this.#custNr)}${path}`, {
      method,
      headers: { authorization: this.#auth, "content-type": "application/json", ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  /** Sends a job as the contract describes it. With `idempotencyKey`, a retry answers 409 (FaxlineApiError, code duplicate_job, jobId). */
  send(job: FaxJobRequest, options: { idempotencyKey?: string } = {}): Promise<{ jobId: string }> {
    return this.#call("POST", "/fax", job, options.idempotencyKey ? { "idempotency-key": options.idempotencyKey } : {});
  }

  /** Sends files (paths or buffers) to one number or several; the other job fields as in FaxJobRequest. */
  async sendFiles(request: SendFilesRequest, options: { idempotencyKey?: string } = {}): Promise<{ jobId: string }> {
    const { to, files, ...rest } = request;
    const documents: FaxJobDocument[] = [];
    for (const file of files) {
      if (typeof file === "string") documents.push({ name: documentName(file), data: (await readFile(file)).toString("base64") });
      else documents.push({ name: documentName(file.name), data: Buffer.from(file.bytes).toString("base64"), ...(file.charset ? { charset: file.charset } : {}) });
    }
    const recipients = (Array.isArray(to) ? to : [to]).map((number) => ({ number }));
    return this.send({ ...rest, recipients, documents } as FaxJobRequest, options);
  }

  /** A job's report, or null when this data center has none for it (404). */
  async getReport(jobId: string, options: { extended?: boolean } = {}): Promise<FaxReport | null> {
    try {
      return await this.#call<FaxReport>("GET", `/fax/reports/${encodeURIComponent(jobId)}${options.extended ? "?view=extended" : ""}`);
    } catch (err) {
      if (err instanceof FaxlineApiError && err.status === 404) return null;
      throw err;
    }
  }

  /** The completed reports (the oldest 1000). */
  async listReports(): Promise<FaxReport[]> {
    return (await this.#call<FaxReportList>("GET", "/fax/reports")).reports as FaxReport[];
  }

  /** GET or DELETE up to 1000 reports by id (GET leaves unknown ids out; DELETE answers them with reason NOT_FOUND). */
  async bulkReports(action: "GET" | "DELETE", jobIds: string[]): Promise<BulkReportsResult["reports"]> {
    return (await this.#call<BulkReportsResult>("POST", "/fax/reports", { action, jobIds })).reports;
  }

  /** Deletes a completed report; false when there is none (404). */
  async deleteReport(jobId: string): Promise<boolean> {
    try {
      return (await this.#call<JobDeleteReport>("DELETE", `/fax/reports/${encodeURIComponent(jobId)}`)).deleted === true;
    } catch (err) {
      if (err instanceof FaxlineApiError && err.status === 404) return false;
      throw err;
    }
  }

  /**
   * Cancels a job (Faxline extension): recipients not yet in a call end with status CANCELLED; a
   * call already running ends on its own. Returns the report after the cancel. Throws
   * FaxlineApiError `job_already_completed` (409) when nothing is left to cancel.
   */
  async cancel(jobId: string): Promise<FaxReport> {
    return this.#call<FaxReport>("POST", `/fax/reports/${encodeURIComponent(jobId)}/cancel`);
  }

  /** Deletes the oldest 1000 completed reports and says which. */
  async deleteOldestReports(): Promise<DeleteOldestResult["reports"]> {
    return (await this.#call<DeleteOldestResult>("DELETE", "/fax/reports")).reports;
  }

  /**
   * Reads the report until every recipient is final, pausing with exponential back-off;
   * rejects after `timeoutMs`. Store outages (503) are waited out like pending reports.
   */
  async waitForFinalReport(jobId: string, options: WaitOptions = {}): Promise<FaxReport> {
    const deadline = Date.now() + (options.timeoutMs ?? 600_000);
    let delay = options.initialDelayMs ?? 500;
    const maxDelay = options.maxDelayMs ?? 10_000;
    for (;;) {
      let report: FaxReport | null = null;
      try {
        report = await this.getReport(jobId);
      } catch (err) {
        if (!(err instanceof FaxlineApiError && err.status === 503)) throw err;
      }
      if (report && report.recipientStatus.every((r) => r.status !== PENDING)) return report;
      if (Date.now() + delay > deadline) throw new Error(`Job ${jobId} was not final within ${options.timeoutMs ?? 600_000} ms`);
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, maxDelay);
    }
  }
}

/** The reports the node exports (docs/reporting.md "Exports"): `GET /reporting/v1/{customerId}/{kind}`. */
export type ReportExportKind = "fax-out/records" | "fax-in/records" | "fax-out/summary" | "fax-out/calls" | "fax-in/summary" | "fax-out/failing-destinations";

export interface ReportExportRequest {
  /** ISO-8601 instants or dates (UTC): the datePeriod's fromIncluded and toExcluded. */
  from: string;
  to: string;
  format?: "csv" | "json";
  sort?: "ASC" | "DESC";
  /** Summaries: e.g. ["DAY", "COUNTRY"]. */
  groupBy?: string[];
  limit?: number;
  /** Column (records) or filter name (summaries) → the values it may have. */
  filter?: Record<string, string[]>;
  /** Another customer (operators), or "*" for every customer (operators' summaries). Default: the client's. */
  customerId?: string;
}

/** An error of a GraphQL answer: the catalogue's code and status in `extensions`. */
export interface GraphqlErrorEntry {
  message: string;
  path?: (string | number)[];
  extensions?: { code?: string; status?: number };
}

/**
 * The reporting interface (docs/reporting.md): `/graphql` and the exports. Same node and
 * credentials as FaxlineClient.
 */
export class FaxlineReports {
  readonly #base: string;
  readonly #custNr: string;
  readonly #auth: string;
  readonly #fetch: typeof fetch;

  constructor(options: FaxlineClientOptions) {
    this.#base = options.baseUrl.replace(/\/+$/, "");
    this.#custNr = options.customerNumber;
    this.#auth = `Basic ${Buffer.from(`${options.login}:${options.password}`).toString("base64")}`;
    this.#fetch = options.fetch ?? fetch;
  }

  async #send(url: string, init: RequestInit): Promise<Response> {
    try {
      return await this.#fetch(url, { ...init, headers: { authorization: this.#auth, ...(init.headers as Record<string, string> | undefined) } });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new FaxlineConnectionError(`Cannot reach ${this.#base}: ${cause?.code ?? cause?.message ?? (err as Error).message}`, { cause: err });
    }
  }

  /**
   * Runs a GraphQL query and returns its data. An answer with errors throws FaxlineApiError with
   * the first error's catalogue code (e.g. "date_period_too_long") and status.
   */
  async graphql<T = Record<string, unknown>>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
    const res = await this.#send(`${this.#base}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query, variables }) });
    const text = await res.text();
    let body: { data?: T; errors?: GraphqlErrorEntry[] } = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      throw new FaxlineApiError(res.status, text);
    }
    const first = body.errors?.[0];
    if (first) {
      const status = first.extensions?.status ?? (res.ok ? 400 : res.status);
      throw new FaxlineApiError(status, { error: first.extensions?.code, message: first.message, errors: body.errors });
    }
    return body.data as T;
  }

  /** The provider's faxOutUdrReport: one page of outbound usage records, with every field. */
  async faxOutUdrReport(args: { datePeriod: { fromIncluded: string; toExcluded: string }; filter?: Record<string, { values: string[] }>; page?: number; size?: number; sort?: "ASC" | "DESC"; customerId?: string }): Promise<{ content: Record<string, unknown>[]; pageIndex: number; pageSize: number; hasMoreElements: boolean }> {
    const data = await this.graphql<{ faxOutUdrReport: { content: Record<string, unknown>[]; pageIndex: number; pageSize: number; hasMoreElements: boolean } }>(
      `query($customerId: String!, $datePeriod: DatePeriod!, $filter: FaxOutColumnUdrFilters, $page: Int, $size: Int, $sort: SortDirection) {
        faxOutUdrReport(customerId: $customerId, datePeriod: $datePeriod, filter: $filter, page: $page, size: $size, sort: $sort) { content { ${OUT_RECORD_FIELDS} } pageIndex pageSize hasMoreElements }
      }`,
      { customerId: args.customerId ?? this.#custNr, datePeriod: args.datePeriod, filter: args.filter ?? null, page: args.page ?? 0, size: args.size ?? null, sort: args.sort ?? "ASC" },
    );
    return data.faxOutUdrReport;
  }

  /** The provider's faxInUdrReport: one page of inbound usage records. */
  async faxInUdrReport(args: { datePeriod: { fromIncluded: string; toExcluded: string }; filter?: Record<string, { values: string[] }>; page?: number; size?: number; sort?: "ASC" | "DESC"; customerId?: string }): Promise<{ content: Record<string, unknown>[]; pageIndex: number; pageSize: number; hasMoreElements: boolean }> {
    const data = await this.graphql<{ faxInUdrReport: { content: Record<string, unknown>[]; pageIndex: number; pageSize: number; hasMoreElements: boolean } }>(
      `query($customerId: String!, $datePeriod: DatePeriod!, $filter: FaxInColumnUdrFilters, $page: Int, $size: Int, $sort: SortDirection) {
        faxInUdrReport(customerId: $customerId, datePeriod: $datePeriod, filter: $filter, page: $page, size: $size, sort: $sort) { content { ${IN_RECORD_FIELDS} } pageIndex pageSize hasMoreElements }
      }`,
      { customerId: args.customerId ?? this.#custNr, datePeriod: args.datePeriod, filter: args.filter ?? null, page: args.page ?? 0, size: args.size ?? null, sort: args.sort ?? "ASC" },
    );
    return data.faxInUdrReport;
  }

  /** The export's URL (for a link: the console's session or Basic credentials open it). */
  exportUrl(kind: ReportExportKind, request: ReportExportRequest): string {
    const params = new URLSearchParams({ from: request.from, to: request.to, format: request.format ?? "csv" });
    if (request.sort) params.set("sort", request.sort);
    if (request.groupBy && request.groupBy.length > 0) params.set("groupBy", request.groupBy.join(","));
    if (request.limit !== undefined) params.set("limit", String(request.limit));
    for (const [name, values] of Object.entries(request.filter ?? {})) params.set(name, values.join(","));
    return `${this.#base}/reporting/v1/${encodeURIComponent(request.customerId ?? this.#custNr)}/${kind}?${params.toString()}`;
  }

  /** Streams an export (CSV or JSON) as it is written; FaxlineApiError when the node refuses it. */
  async export(kind: ReportExportKind, request: ReportExportRequest): Promise<ReadableStream<Uint8Array>> {
    const res = await this.#send(this.exportUrl(kind, request), { method: "GET" });
    if (!res.ok || res.body === null) {
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      throw new FaxlineApiError(res.status, parsed);
    }
    return res.body;
  }
}

const OUT_RECORD_FIELDS =
  "faxId jobId accountId accountName accountServerId accountService attemptPages attemptSeqNo baudRate billedCountry callConnectedAt callDuration calledCountry calledCsId calledNumber calledZone callEndedAt callingTsId callInviteAt docPages faxCustomerRef jobArchivePurgeAt jobBillingCode jobBillingInfo jobCustomerId jobCustomerRef jobCustomerResolution jobCustomerStartFaxAt jobCustomerTags jobExpress jobPersonalized jobSubmissionDc jobSubmittedAt keyTimestamp lastAttemptEndedAt lastAttemptSeqNo maxPageTransmitted processingFinalAt statusCode statusName statusReason sumCallDurations sumPagesTransmitted timeToFirstDial virtualPagesBilled datacenter trunk transport rawCause faxStatusName";
const IN_RECORD_FIELDS =
  "faxId accountingService allPages archivePurgeAt archivingStatus baudRate billingCode callConnectedAt calledCountry calledCsId calledNumber calledNumberDisplay callingNumber callingTsId callStartedAt confirmedPages customerId deliveryRecipients deliverySender deliverySenderUser discardedPages docMimeType documentDeliveryStatus faxFileSize faxTransmitStatus keyTimestamp recipientsCount resolution secondaryDeliveryRecipients virtualPagesBilled topic datacenter transport reasonCode rawCause";

/** A document name the contract accepts (1 to 32 of a-zA-Z0-9-_.), keeping the extension that decides the type. */
export function documentName(file: string): string {
  const base = basename(file);
  const dot = base.lastIndexOf(".");
  const ext = dot > 0 ? base.slice(dot).replace(/[^a-zA-Z0-9.]/g, "") : "";
  const stem = (dot > 0 ? base.slice(0, dot) : base).replace(/[^a-zA-Z0-9_-]+/g, "_") || "document";
  return `${stem.slice(0, Math.max(1, 32 - ext.length))}${ext}`.slice(0, 32);
}

/**
 * Checks a status push's Standard Webhooks signature: true when one of the `webhook-signature`
 * entries is the HMAC-SHA256 of `${id}.${timestamp}.${body}` under `secret` (whsec_…) and the
 * timestamp is within `toleranceSecs` (default 300) of now. Pass the body exactly as received.
 */
export function verifyPushSignature(
  secret: string,
  headers: Record<string, string | string[] | undefined>,
  body: string | Uint8Array,
  options: { nowSecs?: number; toleranceSecs?: number } = {},
): boolean {
  const header = (name: string) => {
    const v = headers[name] ?? headers[name.toLowerCase()];
    return Array.isArray(v) ? v[0] : v;
  };
  const id = header("webhook-id");
  const timestamp = Number(header("webhook-timestamp"));
  const signatures = header("webhook-signature");
  if (!id || !signatures || !Number.isInteger(timestamp) || !secret.startsWith("whsec_")) return false;
  const now = options.nowSecs ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (options.toleranceSecs ?? 300)) return false;
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const expected = Buffer.from(createHmac("sha256", key).update(`${id}.${timestamp}.`).update(body).digest("base64"));
  return signatures.split(" ").some((part) => {
    const [version, signature] = part.split(",", 2);
    if (version !== "v1" || signature === undefined) return false;
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}


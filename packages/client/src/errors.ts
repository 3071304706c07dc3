/**
 * The client's errors. No Node.js module is used here, so this file (and configuration.ts,
 * which uses it) also runs in a browser: the web console speaks the configuration API with it.
 */

/** A non-2xx answer of the API, with the catalogue's error code (docs/api-errors.md). */
export class FaxlineApiError extends Error {
  readonly status: number;
  /** The catalogue code, e.g. "number_invalid", "report_not_found", "duplicate_job". */
  readonly code: string;
  /** The job a 409 duplicate_job names. */
  readonly jobId: string | undefined;
  readonly body: unknown;

  constructor(status: number, body: unknown) {
    const b = (typeof body === "object" && body !== null ? body : {}) as { error?: unknown; message?: unknown; jobId?: unknown };
    super(typeof b.message === "string" ? b.message : `HTTP ${status}`);
    this.name = "FaxlineApiError";
    this.status = status;
    this.code = typeof b.error === "string" ? b.error : `http_${status}`;
    this.jobId = typeof b.jobId === "string" ? b.jobId : undefined;
    this.body = body;
  }
}

/** The server could not be reached (refused, reset, DNS). */
export class FaxlineConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "FaxlineConnectionError";
  }
}

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

/**
 * One request to a Faxline node, answered as JSON (or text, or null when empty): a node that cannot
 * be reached throws FaxlineConnectionError, an answer that is not 2xx FaxlineApiError. Both
 * clients (REST v1 and the configuration API) send through it.
 */
export async function requestJson<T>(fetchFn: typeof fetch, base: string, url: string, init: RequestInit): Promise<T> {
  let res: Response;
  try {
    res = await fetchFn(url, init);
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new FaxlineConnectionError(`Cannot reach ${base}: ${cause?.code ?? cause?.message ?? (err as Error).message}`, { cause: err });
  }
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text === "" ? null : JSON.parse(text);
  } catch {
    /* not JSON */
  }
  if (!res.ok) throw new FaxlineApiError(res.status, parsed);
  return parsed as T;
}

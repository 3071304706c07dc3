/** The console's calls to its node: /console/api, /rest/v1 and /config/v2, with the session cookie and CSRF header. */

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let csrfToken = "";
let onSessionEnded: (message: string) => void = () => {};

export function setCsrfToken(token: string): void {
  csrfToken = token;
}

/** The session's CSRF token, which every change carries. */
export function currentCsrfToken(): string {
  return csrfToken;
}

/** Called when a request finds the session gone (401): the shell shows the sign-in page. */
export function whenSessionEnds(handler: (message: string) => void): void {
  onSessionEnded = handler;
}

/** A request made elsewhere (the configuration client) found the session gone. */
export function sessionEnded(message: string): void {
  onSessionEnded(message);
}

export async function call<T>(method: string, path: string, body?: unknown, options: { signIn?: boolean; headers?: Record<string, string> } = {}): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json", ...options.headers };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (method !== "GET" && csrfToken) headers["x-csrf-token"] = csrfToken;
  let response: Response;
  try {
    response = await fetch(path, { method, headers, credentials: "same-origin", body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new ApiFailure(0, "network", "The Faxline node cannot be reached. Check your connection and try again.");
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text === "" ? null : JSON.parse(text);
  } catch {
    parsed = null;
  }
  if (!response.ok) {
    // The API's error body {code, error, message}, or a GraphQL answer's first error (/graphql).
    const e = (parsed ?? {}) as { error?: string; message?: string; errors?: { message?: string; extensions?: { code?: string } }[] };
    const first = e.errors?.[0];
    const failure = new ApiFailure(response.status, e.error ?? first?.extensions?.code ?? `http_${response.status}`, e.message ?? first?.message ?? `The node answered ${response.status}`);
    if (response.status === 401 && !options.signIn && failure.code !== "customer_mismatch") onSessionEnded(failure.message);
    throw failure;
  }
  return parsed as T;
}

export interface Account {
  login: string;
  custNr: string;
  test: boolean;
  operator: boolean;
  /** Changes its customer's settings, and sees every login's faxes of it in the reports. */
  manager: boolean;
  csrfToken: string;
  expiresTs: string;
  region: string;
  datacenter: string;
  datacenters: string[];
  /** The node serves the reporting interface (reporting.enabled). */
  reports: boolean;
}

export const rest = (account: Account, path: string) => `/rest/v1/${encodeURIComponent(account.custNr)}${path}`;

/** A profile (topic) of the configuration API (docs/config-api.md), which the console's topic settings change. */
export const inboundProfile = (name: string) => `/config/v2/inbound/profiles/${encodeURIComponent(name)}`;

/**
 * Fetching a referenced document: a fax job may name a document by `reference` (an http: or
 * https: URL) instead of inline base64 data, and Faxline downloads it before rendering.
 *
 * The download runs inside the operator's network on behalf of an API client, so it is guarded
 * and bounded:
 *  - SSRF guard: unless `allowPrivateTargets` is set, the URL may not lead to loopback,
 *    private, link-local (cloud metadata), CGNAT, multicast or otherwise internal addresses
 *    (see forbidden-address.ts). The host name is resolved here, EVERY resolved address is
 *    checked, and the socket is pinned to the checked addresses through the `lookup` option of
 *    http.request / https.request, so a DNS answer that changes between check and connect
 *    (DNS rebinding) cannot redirect the connection. Host header and TLS SNI still carry the
 *    host name. Every redirect hop is checked again the same way.
 *  - Bounds: one deadline (`timeoutMs`) covers DNS, connect, headers and body of all hops; the
 *    body may not exceed `maxBytes`, refused at once from Content-Length and otherwise as soon
 *    as the streamed bytes pass the limit (nothing beyond it is buffered); at most
 *    `maxRedirects` redirects are followed.
 *
 * Failures are returned, never thrown, as `{ ok: false, kind, message }`; the message is a
 * sentence an operator or client can act on. URLs in messages and in `finalUrl` never carry
 * user info (credentials are allowed in the URL and sent as HTTP Basic auth), and messages omit
 * the query string too, so the result is safe to log.
 *
 * `checkReferenceUrl` is the synchronous part (syntax, scheme, literal address, localhost) for
 * an early 400 at job intake; name resolution happens only when the document is fetched.
 */
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import type { IncomingMessage } from "node:http";
import { describeForbiddenAddress } from "./forbidden-address.ts";
import { displayUrl, withoutCredentials } from "../net/url-display.ts";
import { bareHostname, describeLookupError, describeNetworkError, pinnedLookup, systemLookup, type ResolvedAddress } from "../net/pinned-lookup.ts";

export { isForbiddenAddress } from "./forbidden-address.ts";

export interface FetchReferenceOptions {
  /** Deadline for the whole fetch: DNS, connect, headers and body of every hop. */
  timeoutMs: number;
  /** Largest body accepted; the fetch is aborted as soon as it is exceeded. */
  maxBytes: number;
  /** When false, refuse loopback, private, link-local, CGNAT, multicast and similar targets. */
  allowPrivateTargets: boolean;
  /** Redirects (301/302/303/307/308) followed; every hop is checked against the guard. */
  maxRedirects: number;
  userAgent?: string;
  /** Name resolution; injectable for tests. Default: node:dns/promises lookup with all: true. */
  lookup?: (hostname: string) => Promise<{ address: string; family: 4 | 6 }[]>;
}

export type FetchReferenceFailureKind = "forbidden_target" | "bad_url" | "http_status" | "too_large" | "timeout" | "network";

export type FetchReferenceResult =
  | { ok: true; bytes: Buffer; contentType: string | null; finalUrl: string }
  | {
      ok: false;
      kind: FetchReferenceFailureKind;
      /** For the client: never names an address a host name resolved to (no DNS oracle). */
      message: string;
      /** For the operator's log only: what the name resolved to and why that is refused. */
      operatorDetail?: string;
    };

export type CheckReferenceUrlResult =
  | { ok: true; url: URL }
  | { ok: false; kind: "bad_url" | "forbidden_target"; message: string };

/**
 * Decides whether an address may be connected to: null when it may, otherwise the reason as
 * the end of a sentence ("a loopback address"). `describeForbiddenAddress` is the standard one.
 */
export type AddressGuard = (address: string) => string | null;

const DEFAULT_USER_AGENT = "Faxline document fetcher";
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const ALLOW_HINT = "(set documents.fetchAllowPrivateTargets to allow it)";

/**
 * Synchronous check of a reference URL at job intake: valid absolute URL, http: or https:, and
 * (unless `allowPrivateTargets`) not a forbidden literal address nor a localhost name. Host
 * names are not resolved here; `fetchReference` checks what they resolve to.
 */
export function checkReferenceUrl(url: string, allowPrivateTargets: boolean): CheckReferenceUrlResult {
  return checkReference(url, allowPrivateTargets ? null : describeForbiddenAddress);
}

/** Fetches the document a reference URL names, guarded and bounded as described above. */
export async function fetchReference(url: string, options: FetchReferenceOptions): Promise<FetchReferenceResult> {
  return fetchReferenceWithGuard(url, options, options.allowPrivateTargets ? null : describeForbiddenAddress);
}

/**
 * `fetchReference` with an explicit address guard (null: no guard); `allowPrivateTargets` is
 * ignored. For tests, which can only run servers on loopback yet must see the guard refuse a
 * redirect hop, and for callers with a policy of their own.
 */
export async function fetchReferenceWithGuard(
  url: string,
  options: Omit<FetchReferenceOptions, "allowPrivateTargets"> & { allowPrivateTargets?: boolean },
  guard: AddressGuard | null,
): Promise<FetchReferenceResult> {
  requireCount("timeoutMs", options.timeoutMs, 1);
  requireCount("maxBytes", options.maxBytes, 0);
  requireCount("maxRedirects", options.maxRedirects, 0);

  const first = checkReference(url, guard);
  if (!first.ok) return first;

  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs);
  try {
    return await fetchHops(first.url, options, guard, controller.signal);
  } finally {
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------------------------------------

type HopOutcome =
  | { type: "result"; result: FetchReferenceResult }
  | { type: "redirect"; location: string; status: string };

async function fetchHops(
  start: URL,
  options: Omit<FetchReferenceOptions, "allowPrivateTargets">,
  guard: AddressGuard | null,
  signal: AbortSignal,
): Promise<FetchReferenceResult> {
  const lookup = options.lookup ?? systemLookup;
  let current = start;
  let previous: URL | null = null;
  let redirects = 0;

  for (;;) {
    const resolved = await resolveAddresses(current, previous, lookup, guard, signal, options.timeoutMs);
    if (!resolved.ok) return resolved.result;

    const outcome = await requestOnce(current, resolved.addresses, options, signal);
    if (outcome.type === "result") return outcome.result;

    if (redirects >= options.maxRedirects) {
      return fail(
        "http_status",
        `GET ${displayUrl(current)} answered ${outcome.status}, a redirect beyond the limit of ${options.maxRedirects} ` +
          `(documents.fetchMaxRedirects); give the document's final URL instead`,
      );
    }
    let next: URL;
    try {
      next = new URL(outcome.location, current);
    } catch {
      return fail("bad_url", `GET ${displayUrl(current)} answered ${outcome.status} with a Location header that is not a valid URL`);
    }
    const checked = inspectUrl(next, guard);
    if (!checked.ok) {
      return fail(
        checked.kind,
        checked.kind === "forbidden_target"
          ? `Refusing to follow the redirect from ${displayUrl(current)} to ${checked.shown ?? "an invalid URL"}: ${checked.detail} ${ALLOW_HINT}`
          : `GET ${displayUrl(current)} redirected to ${checked.shown ?? "an invalid URL"}, which cannot be fetched: ${checked.detail}`,
      );
    }
    previous = current;
    current = checked.url;
    redirects += 1;
  }
}

/** Resolves the hop's host (unless it is a literal address) and checks every address. */
async function resolveAddresses(
  url: URL,
  redirectedFrom: URL | null,
  lookup: NonNullable<FetchReferenceOptions["lookup"]>,
  guard: AddressGuard | null,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<{ ok: true; addresses: ResolvedAddress[] } | { ok: false; result: FetchReferenceResult }> {
  const host = bareHostname(url.hostname);
  const literal = isIP(host);
  if (literal !== 0) return { ok: true, addresses: [{ address: host, family: literal === 6 ? 6 : 4 }] };

  let answer: { address: string; family: 4 | 6 }[];
  try {
    const raced = await raceAbort(lookup(host), signal);
    if (raced.aborted) return { ok: false, result: timedOut(url, timeoutMs) };
    answer = raced.value;
  } catch (error) {
    return { ok: false, result: fail("network", `Could not fetch ${displayUrl(url)}: ${describeLookupError(host, error)}`) };
  }

  const addresses: ResolvedAddress[] = [];
  for (const entry of answer) {
    const family = isIP(entry.address);
    if (family === 0) {
      return { ok: false, result: fail("network", `Could not fetch ${displayUrl(url)}: looking up ${host} gave "${entry.address}", which is not an IP address`) };
    }
    addresses.push({ address: entry.address, family: family === 6 ? 6 : 4 });
  }
  if (addresses.length === 0) {
    return { ok: false, result: fail("network", `Could not fetch ${displayUrl(url)}: the host name ${host} has no addresses`) };
  }
  if (guard !== null) {
    for (const { address } of addresses) {
      const reason = guard(address);
      if (reason === null) continue;
      // The client learns that the target is not allowed, not what the name resolved to: otherwise
      // any API client could map the names and addresses of the operator's network.
      const detail = `${host} resolves to an address that documents may not be fetched from`;
      const message =
        redirectedFrom === null
          ? `Refusing to fetch ${displayUrl(url)}: ${detail} ${ALLOW_HINT}`
          : `Refusing to follow the redirect from ${displayUrl(redirectedFrom)} to ${displayUrl(url)}: ${detail} ${ALLOW_HINT}`;
      return { ok: false, result: { ...fail("forbidden_target", message), operatorDetail: `${host} resolves to ${address}, which is ${reason}` } };
    }
  }
  return { ok: true, addresses };
}

/** One GET to `url`, connecting only to `addresses`. */
function requestOnce(
  url: URL,
  addresses: ResolvedAddress[],
  options: Omit<FetchReferenceOptions, "allowPrivateTargets">,
  signal: AbortSignal,
): Promise<HopOutcome> {
  return new Promise<HopOutcome>((resolve) => {
    let settled = false;
    let response: IncomingMessage | null = null;

    const headers: Record<string, string> = {
      "user-agent": options.userAgent ?? DEFAULT_USER_AGENT,
      accept: "*/*",
    };
    if (url.username !== "" || url.password !== "") {
      const credentials = `${safeDecode(url.username)}:${safeDecode(url.password)}`;
      headers.authorization = `Basic ${Buffer.from(credentials, "utf8").toString("base64")}`;
    }

    let request: http.ClientRequest;
    try {
      request = (url.protocol === "https:" ? https : http).request({
        protocol: url.protocol,
        hostname: bareHostname(url.hostname),
        port: url.port === "" ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: "GET",
        headers,
        agent: false, // a fresh connection per hop: no pooled socket to an address checked for another hop
        lookup: pinnedLookup(addresses),
      });
    } catch (error) {
      // e.g. a user agent with characters not allowed in a header
      resolve({ type: "result", result: fail("network", `Could not fetch ${displayUrl(url)}: ${describeNetworkError(error)}`) });
      return;
    }

    const onAbort = (): void => {
      settle({ type: "result", result: timedOut(url, options.timeoutMs) });
    };
    function settle(outcome: HopOutcome): void {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", onAbort);
      if (outcome.type !== "result" || !outcome.result.ok) {
        response?.destroy();
        request.destroy();
      }
      resolve(outcome);
    }
    signal.addEventListener("abort", onAbort, { once: true });

    request.on("error", (error) => {
      settle({ type: "result", result: fail("network", `Could not fetch ${displayUrl(url)}: ${describeNetworkError(error)}`) });
    });

    request.on("response", (res) => {
      response = res;
      const code = res.statusCode ?? 0;
      const status = `${code} ${res.statusMessage || http.STATUS_CODES[code] || ""}`.trim();
      const location = res.headers.location;

      if (REDIRECT_STATUSES.has(code) && location !== undefined && location !== "") {
        settle({ type: "redirect", location, status });
        return;
      }
      if (code < 200 || code > 299) {
        settle({ type: "result", result: fail("http_status", `GET ${displayUrl(url)} answered ${status}`) });
        return;
      }

      const declared = parseContentLength(res.headers["content-length"]);
      if (declared !== null && declared > options.maxBytes) {
        settle({ type: "result", result: tooLarge(url, options.maxBytes, declared) });
        return;
      }

      const chunks: Buffer[] = [];
      let received = 0;
      res.on("data", (chunk: Buffer) => {
        if (settled) return;
        received += chunk.length;
        if (received > options.maxBytes) {
          settle({ type: "result", result: tooLarge(url, options.maxBytes, null) });
          return;
        }
        chunks.push(chunk);
      });
      res.on("end", () => {
        const contentType = res.headers["content-type"];
        settle({
          type: "result",
          result: { ok: true, bytes: Buffer.concat(chunks, received), contentType: contentType ?? null, finalUrl: withoutCredentials(url) },
        });
      });
      const cutShort = (): void => {
        settle({
          type: "result",
          result: fail("network", `Could not fetch ${displayUrl(url)}: the connection closed after ${received} bytes, before the whole document arrived`),
        });
      };
      res.on("error", cutShort);
      res.on("close", () => {
        if (!res.complete) cutShort();
      });
    });

    if (signal.aborted) onAbort();
    else request.end();
  });
}



// ---------------------------------------------------------------------------------------------

type Inspected =
  | { ok: true; url: URL }
  | { ok: false; kind: "bad_url" | "forbidden_target"; shown: string | null; detail: string };

/** Syntax, scheme, and (with a guard) literal address and localhost name. */
function inspectUrl(input: string | URL, guard: AddressGuard | null): Inspected {
  let url: URL;
  if (typeof input === "string") {
    try {
      url = new URL(input.trim());
    } catch {
      return { ok: false, kind: "bad_url", shown: null, detail: "not a valid absolute URL; give an http:// or https:// URL" };
    }
  } else {
    url = input;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return {
      ok: false,
      kind: "bad_url",
      shown: displayUrl(url),
      detail: `it uses the ${url.protocol} scheme, and only http: and https: URLs can be fetched`,
    };
  }
  if (url.hostname === "") {
    return { ok: false, kind: "bad_url", shown: displayUrl(url), detail: "the URL names no host" };
  }
  if (guard === null) return { ok: true, url };

  const host = bareHostname(url.hostname);
  if (isIP(host) !== 0) {
    const reason = guard(host);
    if (reason !== null) return { ok: false, kind: "forbidden_target", shown: displayUrl(url), detail: `${host} is ${reason}` };
    return { ok: true, url };
  }
  const name = host.toLowerCase().replace(/\.$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) {
    const reason = guard("127.0.0.1") ?? guard("::1");
    if (reason !== null) return { ok: false, kind: "forbidden_target", shown: displayUrl(url), detail: `${host} names this machine (loopback)` };
  }
  return { ok: true, url };
}

function checkReference(url: string, guard: AddressGuard | null): CheckReferenceUrlResult {
  const inspected = inspectUrl(url, guard);
  if (inspected.ok) return inspected;
  if (inspected.kind === "forbidden_target") {
    return { ok: false, kind: "forbidden_target", message: `Refusing to fetch ${inspected.shown}: ${inspected.detail} ${ALLOW_HINT}` };
  }
  const message =
    inspected.shown === null
      ? `The document reference is ${inspected.detail}`
      : `Cannot fetch the document reference ${inspected.shown}: ${inspected.detail}`;
  return { ok: false, kind: "bad_url", message };
}

// ---------------------------------------------------------------------------------------------

function fail(kind: FetchReferenceFailureKind, message: string): FetchReferenceResult & { ok: false } {
  return { ok: false, kind, message };
}

function timedOut(url: URL, timeoutMs: number): FetchReferenceResult {
  return fail(
    "timeout",
    `Fetching ${displayUrl(url)} took longer than ${timeoutMs} ms (documents.fetchTimeout); the server is slow or unreachable`,
  );
}

function tooLarge(url: URL, maxBytes: number, declared: number | null): FetchReferenceResult {
  const size = declared === null ? "is larger than" : `is ${declared} bytes, more than`;
  return fail(
    "too_large",
    `The document at ${displayUrl(url)} ${size} the limit of ${maxBytes} bytes (jobs.maxDocumentBytes); send a smaller document`,
  );
}




function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

function parseContentLength(value: string | undefined): number | null {
  if (value === undefined || !/^\d+$/.test(value.trim())) return null;
  return Number(value.trim());
}

function requireCount(name: string, value: number, min: number): void {
  if (!Number.isFinite(value) || value < min) {
    throw new RangeError(`fetchReference: options.${name} must be a finite number >= ${min}, got ${value}`);
  }
}

async function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<{ aborted: true } | { aborted: false; value: T }> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => resolve({ aborted: true });
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve({ aborted: false, value });
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}




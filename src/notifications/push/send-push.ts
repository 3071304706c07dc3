/**
 * One try of a status push: resolve and check the receiver's address (SSRF guard), add the
 * authentication the job asked for, POST the body, and classify the answer as a
 * DeliveryResult. Never throws for anything the receiver or the network does.
 *
 * Authentication towards the receiver (the job's `httpStatusPush.authMethod`):
 *  - NONE;
 *  - HTTP_BASIC: `Authorization: Basic` from principal and credentials, sent at once;
 *  - HTTP_DIGEST: the push is sent without credentials; a 401 with a Digest challenge is
 *    answered once (RFC 7616, MD5 or SHA-256);
 *  - OAUTH2: a client-credentials token from the account's token URL (principal = client id,
 *    credentials = client secret, sent as HTTP Basic per RFC 6749 §2.3.1), cached until shortly
 *    before it expires; a 401 from the receiver drops the cached token and the push is sent once
 *    more with a fresh one.
 * Redirects are not followed: a receiver must give its final URL.
 *
 * One deadline (`timeoutMs`) covers every request of the try (token, challenge, push).
 */
import http from "node:http";
import https from "node:https";
import { createHash } from "node:crypto";
import { isIP } from "node:net";
import type { IncomingHttpHeaders } from "node:http";
import { describeLookupError, describeNetworkError, bareHostname, pinnedLookup, systemLookup, type ResolvedAddress } from "../../net/pinned-lookup.ts";
import { displayUrl } from "../../net/url-display.ts";
import { parseRetryAfter, type DeliveryResult } from "../delivery-policy.ts";
import { digestAuthorization, isSupportedDigestAlgorithm, parseDigestChallenge } from "../../net/digest-auth.ts";
import type { PushAuthMethod } from "../report-snapshot.ts";

export const RESPONSE_EXCERPT_BYTES = 1024;

export interface PushAuth {
  method: PushAuthMethod;
  principal: string | null;
  credentials: string | null;
}

/** Decides whether an address may be connected to: null when it may, else why not. */
export type PushAddressGuard = (address: string) => string | null;

export interface PushTry {
  url: string;
  body: string;
  contentType: string;
  /** Extra headers (signature, event, idempotency). */
  headers: Record<string, string>;
  auth: PushAuth;
  /** The account's OAuth2 token endpoint; needed for OAUTH2 only. */
  oauth2TokenUrl: string | null;
  timeoutMs: number;
  guard: PushAddressGuard | null;
  tokens: OAuth2TokenCache;
  now: () => number;
  lookup?: (hostname: string) => Promise<{ address: string; family: 4 | 6 }[]>;
}

interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  excerpt: string;
}

class TryFailure extends Error {
  constructor(
    readonly kind: "retry" | "permanent",
    message: string,
    readonly statusCode: number | null = null,
    readonly excerpt: string | null = null,
  ) {
    super(message);
  }
}

const USER_AGENT = "Faxline status push";

export async function sendPush(t: PushTry): Promise<DeliveryResult> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), t.timeoutMs);
  try {
    return await pushWithAuth(t, controller.signal);
  } catch (error) {
    if (error instanceof TryFailure) {
      return { kind: error.kind, statusCode: error.statusCode, error: error.message, responseExcerpt: error.excerpt, retryAfterMs: null };
    }
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

async function pushWithAuth(t: PushTry, signal: AbortSignal): Promise<DeliveryResult> {
  const url = parseTarget(t.url, "push URL");
  const headers: Record<string, string> = {
    "content-type": t.contentType,
    "user-agent": USER_AGENT,
    ...t.headers,
  };
  const { method, principal, credentials } = t.auth;
  const send = (extra: Record<string, string> = {}): Promise<HttpAnswer> => post(url, { ...headers, ...extra }, t.body, t, signal);

  let answer: HttpAnswer;
  if (method === "HTTP_BASIC") {
    answer = await send({ authorization: basic(principal ?? "", credentials ?? "") });
  } else if (method === "OAUTH2") {
    const tokenUrl = t.oauth2TokenUrl;
    if (tokenUrl === null) {
      throw new TryFailure("permanent", "The push asks for OAUTH2, but the account has no OAuth2 token URL (faxline accounts set-push --oauth2-token-url)");
    }
    const client = { tokenUrl, clientId: principal ?? "", clientSecret: credentials ?? "" };
    answer = await send({ authorization: `Bearer ${await token(t, client, signal, false)}` });
    if (answer.status === 401) {
      t.tokens.forget(client);
      answer = await send({ authorization: `Bearer ${await token(t, client, signal, true)}` });
    }
  } else if (method === "HTTP_DIGEST") {
    answer = await send();
    if (answer.status === 401) {
      const challenge = parseDigestChallenge(answer.headers["www-authenticate"]);
      if (challenge === null) {
        return result(answer, t, "answered 401 without a Digest challenge although the push uses HTTP_DIGEST");
      }
      if (!isSupportedDigestAlgorithm(challenge.algorithm)) {
        return result(answer, t, `asks for the digest algorithm ${challenge.algorithm}; Faxline answers MD5 and SHA-256 only`);
      }
      const authorization = digestAuthorization(challenge, {
        method: "POST",
        uri: `${url.pathname}${url.search}`,
        username: principal ?? "",
        password: credentials ?? "",
      });
      answer = await send({ authorization });
    }
  } else {
    answer = await send();
  }
  return result(answer, t, null);
}

function result(answer: HttpAnswer, t: PushTry, note: string | null): DeliveryResult {
  const { status } = answer;
  const base = { statusCode: status, responseExcerpt: answer.excerpt === "" ? null : answer.excerpt };
  if (status >= 200 && status <= 299) return { kind: "delivered", error: null, retryAfterMs: null, ...base };
  const text = `${status} ${http.STATUS_CODES[status] ?? ""}`.trim();
  const said = `The receiver answered ${text}${note === null ? "" : `: it ${note}`}`;
  if (status === 410) return { kind: "permanent", error: `${said}; 410 means the endpoint is gone, so the push is not retried`, retryAfterMs: null, ...base };
  const retryAfter = status === 429 || status === 503 ? parseRetryAfter(headerText(answer.headers["retry-after"]), t.now()) : null;
  return { kind: "retry", error: said, retryAfterMs: retryAfter, ...base };
}

// ---------------------------------------------------------------------------------------------
// OAuth2 client credentials

export interface OAuth2Client {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
}

/** Access tokens per token URL and client, kept until 30 s before they expire. */
export class OAuth2TokenCache {
  private readonly tokens = new Map<string, { token: string; expiresAt: number }>();

  private key(c: OAuth2Client): string {
    return createHash("sha256").update(`${c.tokenUrl}\n${c.clientId}\n${c.clientSecret}`).digest("base64");
  }

  get(c: OAuth2Client, now: number): string | null {
    const entry = this.tokens.get(this.key(c));
    return entry !== undefined && entry.expiresAt > now ? entry.token : null;
  }

  set(c: OAuth2Client, token: string, expiresAt: number): void {
    this.tokens.set(this.key(c), { token, expiresAt });
  }

  forget(c: OAuth2Client): void {
    this.tokens.delete(this.key(c));
  }
}

const DEFAULT_TOKEN_LIFETIME_SECS = 300;
const TOKEN_EXPIRY_MARGIN_MS = 30_000;

async function token(t: PushTry, client: OAuth2Client, signal: AbortSignal, fresh: boolean): Promise<string> {
  if (!fresh) {
    const cached = t.tokens.get(client, t.now());
    if (cached !== null) return cached;
  }
  const url = parseTarget(client.tokenUrl, "OAuth2 token URL");
  const form = new URLSearchParams({ grant_type: "client_credentials" }).toString();
  const answer = await post(
    url,
    {
      "content-type": "application/x-www-form-urlencoded",
      accept: "application/json",
      "user-agent": USER_AGENT,
      authorization: basic(formEncode(client.clientId), formEncode(client.clientSecret)),
    },
    form,
    t,
    signal,
    64 * 1024,
  );
  if (answer.status < 200 || answer.status > 299) {
    throw new TryFailure("retry", `The OAuth2 token endpoint ${displayUrl(url)} answered ${answer.status} ${http.STATUS_CODES[answer.status] ?? ""}`.trim(), answer.status, answer.excerpt);
  }
  let parsed: { access_token?: unknown; token_type?: unknown; expires_in?: unknown };
  try {
    parsed = JSON.parse(answer.excerpt) as typeof parsed;
  } catch {
    throw new TryFailure("retry", `The OAuth2 token endpoint ${displayUrl(url)} answered 2xx without a JSON body`, answer.status, answer.excerpt.slice(0, RESPONSE_EXCERPT_BYTES));
  }
  if (typeof parsed.access_token !== "string" || parsed.access_token === "") {
    throw new TryFailure("retry", `The OAuth2 token endpoint ${displayUrl(url)} answered without an access_token`, answer.status, null);
  }
  if (typeof parsed.token_type === "string" && parsed.token_type.toLowerCase() !== "bearer") {
    throw new TryFailure("permanent", `The OAuth2 token endpoint ${displayUrl(url)} issued a "${parsed.token_type}" token; Faxline sends Bearer tokens only`, answer.status, null);
  }
  const lifetime = typeof parsed.expires_in === "number" && parsed.expires_in > 0 ? parsed.expires_in : DEFAULT_TOKEN_LIFETIME_SECS;
  t.tokens.set(client, parsed.access_token, t.now() + lifetime * 1000 - TOKEN_EXPIRY_MARGIN_MS);
  return parsed.access_token;
}

// ---------------------------------------------------------------------------------------------
// HTTP

function parseTarget(text: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new TryFailure("permanent", `The ${what} "${text}" is not a valid absolute URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TryFailure("permanent", `The ${what} ${displayUrl(url)} uses ${url.protocol}; only http: and https: are allowed`);
  }
  return url;
}

async function resolve(url: URL, t: PushTry): Promise<ResolvedAddress[]> {
  const host = bareHostname(url.hostname);
  const literal = isIP(host);
  let addresses: ResolvedAddress[];
  if (literal !== 0) {
    addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await (t.lookup ?? systemLookup)(host);
    } catch (error) {
      throw new TryFailure("retry", `Could not reach ${displayUrl(url)}: ${describeLookupError(host, error)}`);
    }
    if (addresses.length === 0) throw new TryFailure("retry", `Could not reach ${displayUrl(url)}: ${host} has no addresses`);
  }
  if (t.guard !== null) {
    for (const { address } of addresses) {
      const reason = t.guard(address);
      if (reason !== null) {
        throw new TryFailure(
          "permanent",
          // A name's resolved address is not told: the delivery log is readable over the API, and
          // would otherwise map the operator's internal names to addresses.
          `Refusing to push to ${displayUrl(url)}: ${host === address ? `${address} is ${reason}` : `${host} resolves to an address that pushes may not go to`} (allow it in push.allowTargets)`,
        );
      }
    }
  }
  return addresses;
}

async function post(url: URL, headers: Record<string, string>, body: string, t: PushTry, signal: AbortSignal, keepBytes = RESPONSE_EXCERPT_BYTES): Promise<HttpAnswer> {
  const addresses = await resolve(url, t);
  if (signal.aborted) throw timedOut(url, t.timeoutMs);
  const payload = Buffer.from(body, "utf8");
  return new Promise<HttpAnswer>((resolvePromise, reject) => {
    let settled = false;
    const settle = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", onAbort);
      fn();
    };
    const request = (url.protocol === "https:" ? https : http).request({
      protocol: url.protocol,
      hostname: bareHostname(url.hostname),
      port: url.port === "" ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: "POST",
      headers: { ...headers, "content-length": String(payload.length) },
      agent: false,
      lookup: pinnedLookup(addresses),
    });
    const onAbort = (): void => {
      settle(() => reject(timedOut(url, t.timeoutMs)));
      request.destroy();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    request.on("error", (error) => settle(() => reject(new TryFailure("retry", `Could not reach ${displayUrl(url)}: ${describeNetworkError(error)}`))));
    request.on("response", (res) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      const finish = (): void => {
        settle(() => resolvePromise({ status: res.statusCode ?? 0, headers: res.headers, excerpt: Buffer.concat(chunks).toString("utf8") }));
        res.destroy();
      };
      res.on("data", (chunk: Buffer) => {
        if (kept >= keepBytes) return;
        const part = chunk.subarray(0, keepBytes - kept);
        chunks.push(part);
        kept += part.length;
        // The answer's start is all the log keeps; do not wait for a long body.
        if (kept >= keepBytes) finish();
      });
      res.on("end", finish);
      res.on("error", finish);
      res.on("close", finish);
    });
    request.end(payload);
  });
}

function timedOut(url: URL, timeoutMs: number): TryFailure {
  return new TryFailure("retry", `The push to ${displayUrl(url)} took longer than ${timeoutMs} ms (push.timeout)`);
}

/** application/x-www-form-urlencoded, as RFC 6749 Appendix B asks for client credentials. */
function formEncode(text: string): string {
  return new URLSearchParams([["", text]]).toString().slice(1);
}

function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`, "utf8").toString("base64")}`;
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

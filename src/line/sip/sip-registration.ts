/**
 * Registration with a trunk's registrar (RFC 3261 §10), for carriers that want to know where the
 * trunk is before they take its calls. One `SipRegistration` keeps one binding alive: REGISTER
 * (answering 401/407 with digest), then a refresh before the binding expires, with the same
 * Call-ID and a rising CSeq (§10.2.4), and `Expires: 0` on `unregister()`.
 *
 * States:
 *  - registering: a REGISTER is on its way (the first one, a refresh, or a retry).
 *  - registered: the registrar accepted; a refresh is scheduled at the later of half the granted
 *    time and the granted time less 60 s (the binding never lapses between refreshes).
 *  - failed: the registrar refused or did not answer; a retry is scheduled after `retryAfterMs`
 *    (or the registrar's Retry-After). A 423 Interval Too Brief is retried at once with its
 *    Min-Expires (§10.2.8).
 *  - unregistered: `unregister()` ran (or the signal aborted); nothing more is sent.
 */
import { TimerSet } from "./sip-timers.ts";
import { selectChallenge, sipDigestAuthorization, type SipChallenge, type SipCredentials } from "./digest-auth.ts";
import { parseReasonHeader, type SipReason } from "./sip-call-events.ts";
import { newTag, SipHeaders, type SipRequest, type SipResponse } from "./sip-message.ts";
import { parseNameAddr, parseSipUri, type SipUri } from "./sip-uri.ts";
import { viaFor } from "./dialog.ts";
import type { SipCallHost } from "./sip-call.ts";
import type { SipFlow, SipHop } from "./transports.ts";
import type { SipTransportChoice } from "./resolve-targets.ts";

export interface RegisterOptions {
  /** Where REGISTER goes: `host`, `host:port` or a SIP URI. Its host is the Request-URI's domain unless `domain` is set. */
  registrar: string;
  /** The address of record (To and From): `sip:+4940999888@trunk.example`. */
  aor: string;
  /** Request-URI domain: `sip:<domain>`. (Default: the AOR's host) */
  domain?: string;
  credentials?: SipCredentials;
  /** The transport, or "auto": DNS chooses it (RFC 3263 §4.1, resolve-targets.ts). */
  transport: SipTransportChoice;
  /** Binding lifetime asked for, ms; the registrar may grant less. */
  expiresMs: number;
  /** Wait before retrying a failed registration, ms. (Default: 60 000) */
  retryAfterMs?: number;
  /** Aborting unregisters. */
  signal?: AbortSignal;
}

export const SipRegistrationState = {
  Registering: "registering",
  Registered: "registered",
  Failed: "failed",
  Unregistered: "unregistered",
} as const;
export type SipRegistrationState = (typeof SipRegistrationState)[keyof typeof SipRegistrationState];

export type SipRegistrationEvent =
  | { type: "registered"; expiresMs: number }
  | { type: "failed"; sipStatus: number; reasonPhrase: string; reason: SipReason | null; retryInMs: number }
  | { type: "unregistered" };

const MAX_AUTH_TRIES = 3;
/** A refresh goes out this long before the binding would lapse, at most. */
const REFRESH_MARGIN_MS = 60_000;

export class SipRegistration {
  readonly options: RegisterOptions;
  readonly #host: SipCallHost;
  readonly #timers: TimerSet<"refresh" | "retry">;
  readonly #callId: string;
  readonly #tag = newTag();
  readonly #listeners = new Set<(event: SipRegistrationEvent) => void>();
  #state: SipRegistrationState = SipRegistrationState.Registering;
  #seq = 0;
  #expiresMs: number;
  #auth: { challenge: SipChallenge; nc: number } | null = null;
  #authTries = 0;
  #flow: SipFlow | null = null;
  /** The registrar's targets (RFC 3263) and the one in use. */
  #hops: SipHop[] = [];
  #hopIndex = 0;
  #contactUri = "";
  readonly #onAbort = (): void => void this.unregister();

  constructor(host: SipCallHost, options: RegisterOptions, callId: string) {
    this.#host = host;
    this.options = options;
    this.#callId = callId;
    this.#timers = new TimerSet(host.clock);
    this.#expiresMs = options.expiresMs;
    options.signal?.addEventListener("abort", this.#onAbort, { once: true });
  }

  get state(): SipRegistrationState {
    return this.#state;
  }

  onEvent(listener: (event: SipRegistrationEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The next event (registered, failed or unregistered). */
  next(): Promise<SipRegistrationEvent> {
    return new Promise((resolve) => {
      const stop = this.onEvent((event) => {
        stop();
        resolve(event);
      });
    });
  }

  /** Sends the first REGISTER. Called once by the user agent. */
  start(): void {
    void this.#register(this.#expiresMs);
  }

  /** Removes the binding (`Expires: 0`) and stops refreshing. */
  async unregister(): Promise<void> {
    if (this.#state === SipRegistrationState.Unregistered) return;
    const wasRegistered = this.#state === SipRegistrationState.Registered;
    this.#state = SipRegistrationState.Unregistered;
    this.#timers.cancelAll();
    this.options.signal?.removeEventListener("abort", this.#onAbort);
    if (wasRegistered) await this.#send(0).catch(() => undefined);
    this.#emit({ type: "unregistered" });
  }

  async #register(expiresMs: number): Promise<void> {
    if (this.#state === SipRegistrationState.Unregistered) return;
    this.#state = SipRegistrationState.Registering;
    let response: SipResponse;
    try {
      response = await this.#send(expiresMs);
    } catch (error) {
      this.#failed((error as { sipStatus?: number }).sipStatus ?? 503, (error as Error).message, null, null);
      return;
    }
    if (this.#stopped()) return;
    if (response.status >= 200 && response.status < 300) {
      const granted = grantedExpiresMs(response, this.#contactUri, expiresMs);
      this.#state = SipRegistrationState.Registered;
      this.#authTries = 0;
      this.#timers.start("refresh", Math.max(granted / 2, granted - REFRESH_MARGIN_MS), () => void this.#register(this.#expiresMs));
      this.#emit({ type: "registered", expiresMs: granted });
      return;
    }
    if (response.status === 423) {
      // §10.2.8: "the UAC MAY retry the registration with an expiration interval … greater than
      // or equal to the one in the Min-Expires header field".
      const min = Number(response.headers.get("min-expires") ?? "NaN") * 1000;
      if (Number.isFinite(min) && min > expiresMs) {
        this.#expiresMs = min;
        void this.#register(min);
        return;
      }
    }
    const retryAfter = Number(/^\s*(\d+)/.exec(response.headers.get("retry-after") ?? "")?.[1] ?? "NaN") * 1000;
    this.#failed(response.status, response.reason, parseReasonHeader(response.headers.get("reason")), Number.isFinite(retryAfter) ? retryAfter : null);
  }

  /** Whether `unregister()` ran (read through a method: the state changes across awaits). */
  #stopped(): boolean {
    return this.#state === SipRegistrationState.Unregistered;
  }

  #failed(sipStatus: number, reasonPhrase: string, reason: SipReason | null, retryAfterMs: number | null): void {
    if (this.#state === SipRegistrationState.Unregistered) return;
    this.#state = SipRegistrationState.Failed;
    const retryInMs = retryAfterMs ?? this.options.retryAfterMs ?? 60_000;
    this.#timers.start("retry", retryInMs, () => {
      this.#authTries = 0;
      void this.#register(this.#expiresMs);
    });
    this.#emit({ type: "failed", sipStatus, reasonPhrase, reason, retryInMs });
  }

  /**
   * One REGISTER (answering digest challenges) to the registrar's server in use; resolves with
   * the final response. RFC 3263 §4.3: when that server does not answer (transport error, timer F)
   * or answers 503, the next of the registrar's targets (DNS SRV by priority and weight, then
   * their addresses) is tried with a fresh request, its last challenge forgotten; the server that
   * answers is kept for the refreshes. When every target has failed, the last failure stands and
   * the next try resolves the registrar again.
   */
  async #send(expiresMs: number): Promise<SipResponse> {
    const o = this.options;
    if (this.#flow === null) {
      const registrar = /^sips?:/i.test(o.registrar) ? parseSipUri(o.registrar) : parseSipUri(`sip:${o.registrar}`);
      this.#hops = await this.#host.resolveHops(registrar, o.transport);
      this.#hopIndex = 0;
    }
    for (;;) {
      try {
        this.#flow ??= await this.#host.openFlow(this.#hops[this.#hopIndex]!);
        const response = await this.#sendOn(this.#flow, expiresMs);
        if (response.status !== 503 || !this.#nextHop()) return response;
      } catch (error) {
        if (!this.#nextHop()) throw error;
      }
    }
  }

  /** Moves to the registrar's next target, if there is one (forgetting the flow and the challenge). */
  #nextHop(): boolean {
    this.#flow = null;
    this.#auth = null;
    this.#authTries = 0;
    if (this.#hopIndex + 1 >= this.#hops.length) return false;
    this.#hopIndex++;
    return true;
  }

  async #sendOn(flow: SipFlow, expiresMs: number): Promise<SipResponse> {
    const aor = parseSipUri(this.options.aor);
    const requestUri = `sip:${this.options.domain ?? aor.host}`;
    for (;;) {
      const request = this.#request(requestUri, flow, aor, expiresMs);
      const response = await new Promise<SipResponse>((resolve, reject) => {
        this.#host.startClientTransaction(request, flow, {
          onResponse: (r) => {
            if (r.status >= 200) resolve(r);
          },
          onRequestTimeout: () => reject(Object.assign(new Error("Request Timeout"), { sipStatus: 408 })),
          onTransportError: (error) => reject(Object.assign(error, { sipStatus: 503 })),
        });
      });
      if ((response.status === 401 || response.status === 407) && this.#takeChallenge(response, request)) continue;
      return response;
    }
  }

  #request(uri: string, flow: SipFlow, aor: SipUri, expiresMs: number): SipRequest {
    const headers = new SipHeaders();
    const via = viaFor(flow.protocol, this.#host.advertisedAddress ?? flow.local.address, flow.local.port);
    headers.append("via", via.value);
    headers.append("max-forwards", "70");
    headers.append("from", `<${this.options.aor}>;tag=${this.#tag}`);
    headers.append("to", `<${this.options.aor}>`);
    headers.append("call-id", this.#callId);
    headers.append("cseq", `${++this.#seq} REGISTER`);
    const host = this.#host.advertisedAddress ?? flow.local.address;
    const transport = flow.protocol === "udp" ? "" : `;transport=${flow.protocol}`;
    this.#contactUri = `sip:${aor.user !== null ? `${aor.user}@` : ""}${host.includes(":") ? `[${host}]` : host}:${flow.local.port}${transport}`;
    headers.append("contact", `<${this.#contactUri}>`);
    headers.append("expires", String(Math.round(expiresMs / 1000)));
    headers.append("allow", "INVITE, ACK, CANCEL, BYE, OPTIONS, UPDATE, INFO");
    headers.append("user-agent", this.#host.userAgent);
    const request: SipRequest = { kind: "request", method: "REGISTER", uri, headers, body: "" };
    const auth = this.#auth;
    const credentials = this.options.credentials;
    if (auth !== null && credentials !== undefined) {
      auth.nc++;
      headers.set(auth.challenge.authorizationHeader, sipDigestAuthorization(auth.challenge.challenge, { method: "REGISTER", uri }, credentials, undefined, auth.nc));
    }
    return request;
  }

  #takeChallenge(response: SipResponse, request: SipRequest): boolean {
    const credentials = this.options.credentials;
    if (credentials === undefined || this.#authTries >= MAX_AUTH_TRIES) return false;
    const challenge = selectChallenge(response, credentials);
    if (challenge === null) return false;
    if (request.headers.has(challenge.authorizationHeader) && !challenge.stale && this.#auth?.challenge.challenge.nonce === challenge.challenge.nonce) return false;
    this.#authTries++;
    this.#auth = { challenge, nc: 0 };
    return true;
  }

  #emit(event: SipRegistrationEvent): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}

/**
 * The binding time the registrar granted us (§10.2.4): the `expires` of our Contact among the
 * bindings it lists, else the Expires header, else what we asked for.
 */
function grantedExpiresMs(response: SipResponse, ourContact: string, askedMs: number): number {
  const key = (uri: string): string => {
    try {
      const u = parseSipUri(uri);
      return `${u.host.toLowerCase()}:${u.port ?? ""}`;
    } catch {
      return uri;
    }
  };
  for (const contact of response.headers.getList("contact")) {
    const value = parseNameAddr(contact);
    const expires = value.params.get("expires");
    if (key(value.uri) === key(ourContact) && expires !== undefined && expires !== null && /^\d+$/.test(expires)) return Number(expires) * 1000;
  }
  const header = response.headers.get("expires");
  if (header !== undefined && /^\s*\d+\s*$/.test(header)) return Number(header) * 1000;
  return askedMs;
}

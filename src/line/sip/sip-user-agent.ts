/**
 * The SIP user agent for fax calls both ways: owns the transports (UDP socket, TCP/TLS
 * connections), the client and server transaction tables, and the calls, and routes every
 * message received to its transaction or call.
 *
 * Routing (RFC 3261 §17.1.3, §17.2.3, §12.2.2):
 *  - a response goes to the client transaction with its top Via branch and CSeq method; a 2xx to
 *    INVITE that no transaction claims any more goes to the call with its Call-ID (the ACK is the
 *    UA core's job, §13.2.2.4);
 *  - a request goes to the server transaction with its branch, sent-by and method (an ACK matches
 *    the INVITE's); a retransmission gets the last response again. A new request is given a
 *    server transaction and handed to the call with its Call-ID, which checks the tags. An ACK
 *    for a 2xx goes to the call. A CANCEL for a request we already answered gets 200 (§9.2).
 *  - requests outside any call: a new INVITE goes to the incoming-call handler (`onIncomingCall`:
 *    the line checks the caller and the number, then refuses it or `answerCall`s it); the rest
 *    is answered at once and statelessly (§8.2.7: no transaction is kept, nothing retransmitted):
 *    OPTIONS 200 (a carrier's trunk keep-alive, a balancer's probe), or 503 while
 *    `setAvailability`'s check names a reason to send calls elsewhere (the node drains, its
 *    store does not answer); a new INVITE without a handler 603, requests of
 *    a dialog we do not have 481, REGISTER, SUBSCRIBE and the like 405, unknown methods 501. A CANCEL for an INVITE we are still answering ends that call with 487 (§9.2).
 *
 * The guard, before any of that (sip-drops.ts counts what it drops; nothing here throws out):
 *  - a request over its source's rate (flood-limits.ts) is dropped;
 *  - a defective request (a broken or missing mandatory header, a bad Content-Length, SIP/3.0:
 *    sip-message.ts `readMessage`) and one that fails §8.2's checks (request-checks.ts: URI
 *    scheme, Require, body size, type and encoding) get their 4xx/5xx statelessly; an ACK is
 *    dropped; a defective response is dropped;
 *  - a new INVITE is screened by the line (`screenNewInvite`) before any state is kept for it:
 *    a source that is no trunk's gets a stateless 403 within its refusal budget, then silence;
 *    over its INVITE rate a trunk's source gets 503 with Retry-After, any other silence;
 *  - a fault of Faxline's own while handling a request answers 500 to that request alone.
 *
 * ### Examples
 * ```ts
 * const ua = new SipUserAgent({ localAddress: "192.0.2.10" });
 * await ua.start();
 * const call = ua.placeCall({
 *   target: "sip:+4930123456@trunk.example", from: "sip:+4940999@trunk.example",
 *   credentials: { username: "fax", password: "…" }, transport: "udp", t38: true,
 *   ringTimeoutMs: 60_000, localMedia: { address: "192.0.2.10", audioPort: 40000, t38Port: 40002 },
 * });
 * const answered = await call.next("answered");   // null when the call failed
 * const t38 = await call.switchToT38();           // "switched" | "refused" | "ended"
 * await call.hangup();                            // → SipCallOutcome
 * ```
 */
import { createHash, randomInt } from "node:crypto";
import type tls from "node:tls";
import { systemClock, type Clock } from "../../lib/clock.ts";
import { InviteClientTransaction, NonInviteClientTransaction, TransactionState, type ClientTransactionUser } from "./client-transaction.ts";
import { ALLOW, SipCall, type AnswerCallOptions, type PlaceCallOptions, type SipCallHost } from "./sip-call.ts";
import { SipRegistration, type RegisterOptions } from "./sip-registration.ts";
import { createResponse, cseqOf, newCallId, newTag, REASON_PHRASES, topVia, type SipDefect, type SipMessage, type SipRequest, type SipResponse } from "./sip-message.ts";
import { checkRequest, SUPPORTED } from "./request-checks.ts";
import { SourceLimiter } from "./flood-limits.ts";
import { SipDropCounter, type SipDropReason } from "./sip-drops.ts";
import { ServerTransaction } from "./server-transaction.ts";
import { DEFAULT_T38_CAPABILITIES, type T38Capabilities } from "./sdp.ts";
import { DEFAULT_SIP_TIMERS, type SipTimerValues } from "./sip-timers.ts";
import { DEFAULT_MIN_SE_SECONDS } from "./session-timer.ts";
import { resolveTargets, systemResolver, type SipResolver, type SipTransportChoice } from "./resolve-targets.ts";
import type { SipUri } from "./sip-uri.ts";
import {
  SipTransportError,
  SipTransportLayer,
  type SipConnectionLimits,
  type SipFlow,
  type SipHop,
  type SipListenOptions,
  type SipSource,
  type SipTlsCredentials,
  type SipTraceEntry,
  type SipTransportStats,
} from "./transports.ts";

export type { AnswerCallOptions, PlaceCallOptions, RegisterOptions };

/**
 * What the line says of a new INVITE's source before any state is kept for it: `trunk` (a
 * trunk's address: handled), `challenge` (no trunk's address, but trunks take digest
 * credentials: handled, and challenged), `refuse` (a stateless 403), `drop` (silence: a source
 * past its refusal budget, or locked out).
 */
export type InviteScreening = "trunk" | "challenge" | "refuse" | "drop";

/** A new INVITE from outside any call, for the line to refuse (`tx.respond`) or answer (`answerCall`). */
export interface IncomingInvite {
  request: SipRequest;
  tx: ServerTransaction;
  source: SipSource;
}

export interface SipUserAgentOptions {
  /** Local IP address to bind the UDP socket and stream connections to. */
  localAddress: string;
  /** The address to write into Via and Contact when it is not `localAddress` (static NAT). (Default: the local one) */
  advertisedAddress?: string;
  /** UDP port to bind; 0 takes a free port. (Default: 5060 would clash with a local PBX, so: 0) */
  udpPort?: number;
  /** TCP and TLS listeners for calls coming in. (Default: none: TCP and TLS only connect out) */
  listen?: SipListenOptions;
  /** Bounds on accepted TCP/TLS connections. */
  connectionLimits?: Partial<SipConnectionLimits>;
  /** Bounds per source address. (Default: a limiter with DEFAULT_FLOOD_LIMITS) */
  limiter?: SourceLimiter;
  /** Where drops are counted. (Default: a counter of its own) */
  drops?: SipDropCounter;
  /** Screens a new INVITE's source before any state is kept (InviteScreening). (Default: every source is a trunk's) */
  screenNewInvite?: (source: SipSource) => InviteScreening;
  /** TLS client options (`ca`, `rejectUnauthorized`, client `cert`/`key`). */
  tls?: tls.ConnectionOptions;
  /** (Default: the system clock) */
  clock?: Clock;
  /** RFC 3261 timer overrides, for tests and odd networks only. (Default: T1 500, T2 4000, T4 5000, D 32 000 ms) */
  timers?: Partial<SipTimerValues>;
  /** User-Agent and Server header value. (Default: "Faxline") */
  userAgent?: string;
  /** What our T.38 stack can do. (Default: version 0, 14 400 bit/s, redundancy, 400-byte datagrams) */
  t38Capabilities?: Partial<T38Capabilities>;
  /** Called for every SIP message sent and received. */
  trace?: (entry: SipTraceEntry) => void;
  /** The smallest session-timer interval (RFC 4028 Min-SE) we accept, seconds; tests only go lower. (Default: 90) */
  minSessionExpires?: number;
  /** Host name resolution for targets and proxies, A/AAAA only (no SRV): for tests. (Default: `resolver`) */
  lookup?: (host: string) => Promise<string>;
  /** DNS for RFC 3263 (SRV, then A/AAAA). (Default: the system's resolver, or one on `dnsServers`) */
  resolver?: SipResolver;
  /** DNS servers ("192.0.2.53", "127.0.0.1:5353") for the default resolver; empty: the system's. */
  dnsServers?: readonly string[];
}

type AnyClientTransaction = InviteClientTransaction | NonInviteClientTransaction;

/** Methods that belong to a dialog: outside one they get 481 (§12.2.2). */
const DIALOG_METHODS = new Set(["INVITE", "BYE", "UPDATE", "INFO", "PRACK", "OPTIONS"]);
/** Methods SIP defines that this user agent does not take: 405 (§8.2.1). */
const OTHER_KNOWN_METHODS = new Set(["REGISTER", "SUBSCRIBE", "NOTIFY", "MESSAGE", "PUBLISH", "REFER"]);

export class SipUserAgent {
  readonly #options: SipUserAgentOptions;
  readonly #transports: SipTransportLayer;
  readonly #clock: Clock;
  readonly #timers: SipTimerValues;
  readonly #t38: T38Capabilities;
  readonly #clientTransactions = new Map<string, AnyClientTransaction>();
  readonly #serverTransactions = new Map<string, { tx: ServerTransaction; source: SipSource }>();
  readonly #calls = new Map<string, SipCall>();
  readonly #registrations = new Set<SipRegistration>();
  readonly #host: SipCallHost;
  readonly #resolver: SipResolver;
  readonly #limiter: SourceLimiter;
  readonly drops: SipDropCounter;
  #started = false;
  #closed = false;
  #incomingHandler: ((invite: IncomingInvite) => void) | null = null;
  #unavailable: () => string | null = () => null;

  constructor(options: SipUserAgentOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#timers = { ...DEFAULT_SIP_TIMERS, ...options.timers };
    this.#t38 = { ...DEFAULT_T38_CAPABILITIES, ...options.t38Capabilities };
    const lookup = options.lookup;
    this.#resolver =
      options.resolver ??
      (lookup !== undefined ? { resolveNaptr: async () => [], resolveSrv: async () => [], lookup: async (host) => [await lookup(host)] } : systemResolver(options.dnsServers ?? []));
    this.#limiter = options.limiter ?? new SourceLimiter();
    this.drops = options.drops ?? new SipDropCounter();
    this.#transports = new SipTransportLayer({
      localAddress: options.localAddress,
      udpPort: options.udpPort ?? 0,
      drops: this.drops,
      ...(options.listen !== undefined ? { listen: options.listen } : {}),
      ...(options.connectionLimits !== undefined ? { limits: options.connectionLimits } : {}),
      ...(options.tls !== undefined ? { tls: options.tls } : {}),
      ...(options.trace !== undefined ? { trace: options.trace } : {}),
    });
    this.#transports.onMessage((message, source, defect) => this.#receive(message, source, defect));
    const ua = this;
    this.#host = {
      clock: this.#clock,
      timers: this.#timers,
      userAgent: options.userAgent ?? "Faxline",
      t38Capabilities: this.#t38,
      minSessionExpires: options.minSessionExpires ?? DEFAULT_MIN_SE_SECONDS,
      advertisedAddress: options.advertisedAddress ?? null,
      random: () => randomInt(0, 1_000_000) / 1_000_000,
      resolveHop: async (uri, protocol) => (await ua.#resolveHops(uri, protocol))[0]!,
      resolveHops: (uri, protocol) => ua.#resolveHops(uri, protocol),
      openFlow: (hop) => ua.#transports.open(hop),
      startClientTransaction: (request, flow, user) => ua.#startClientTransaction(request, flow, user),
      sendStateless: (request, flow) => flow.send(request),
      callEnded: (call) => ua.#calls.delete(call.callId),
    };
  }

  /** Binds the UDP socket. */
  async start(): Promise<void> {
    if (this.#started) return;
    await this.#transports.start();
    this.#started = true;
  }

  /** The bound UDP endpoint. */
  get udpLocal(): { address: string; port: number } {
    return this.#transports.udpLocal;
  }

  /** The TCP and TLS listeners' endpoints; null where none listens. */
  get listening(): { tcp: { address: string; port: number } | null; tls: { address: string; port: number } | null } {
    return this.#transports.listening;
  }

  /** Replaces the TLS listener's certificate and key (a reload); connections open keep theirs. */
  setTlsCredentials(credentials: SipTlsCredentials): void {
    this.#transports.setTlsCredentials(credentials);
  }

  /** The per-source bounds, shared with the line's admission (lockouts). */
  get limiter(): SourceLimiter {
    return this.#limiter;
  }

  get stats(): SipTransportStats & { calls: number; clientTransactions: number; serverTransactions: number } {
    return { ...this.#transports.stats, calls: this.#calls.size, clientTransactions: this.#clientTransactions.size, serverTransactions: this.#serverTransactions.size };
  }

  /**
   * Places a call; the returned call reports its progress through events and `outcome`. Throws
   * (SipParseError) only when `target`, `from` or `outboundProxy` is not a SIP URI.
   */
  placeCall(options: PlaceCallOptions): SipCall {
    if (!this.#started || this.#closed) throw new Error("SipUserAgent is not started");
    const callId = newCallId(this.#options.advertisedAddress ?? this.#options.localAddress);
    const call = new SipCall(this.#host, options, callId);
    this.#calls.set(callId, call);
    void call.start();
    return call;
  }

  /** Takes new INVITEs (without it they are declined with 603). */
  onIncomingCall(handler: (invite: IncomingInvite) => void): void {
    this.#incomingHandler = handler;
  }

  /**
   * What OPTIONS outside a dialog answer (a SIP load balancer's probe, a carrier's keep-alive):
   * 200 while `unavailable` returns null, else 503 with its reason in the phrase, so that new
   * calls go to another node. It is asked at each OPTIONS; it changes nothing else.
   */
  setAvailability(unavailable: () => string | null): void {
    this.#unavailable = unavailable;
  }

  /**
   * Answers an INVITE the incoming-call handler was given (`SipCall.answer`): 180, then 200 with
   * our SDP answer. The call's in-dialog requests go back to where the INVITE came from. Null
   * when the INVITE has its final response already (the caller cancelled), the connection it came
   * over has closed (the INVITE is then dropped, counted as send_failed), or the agent closed.
   */
  async answerCall(invite: IncomingInvite, options: AnswerCallOptions): Promise<SipCall | null> {
    if (!this.#started) throw new Error("SipUserAgent is not started");
    const { source } = invite;
    const answerable = (): boolean => !this.#closed && invite.tx.state === "proceeding";
    if (!answerable()) return null;
    let flow: SipFlow;
    try {
      flow = await this.#transports.openToSource(source);
    } catch (error) {
      // The TCP/TLS connection the INVITE came over has closed while the line checked the call:
      // nothing reaches the caller any more (§18.2.2), so the INVITE ends here, unanswered.
      if (!(error instanceof SipTransportError)) throw error;
      this.#drop("send_failed", source, `INVITE not answered: ${error.message}`);
      if (answerable()) invite.tx.dispose();
      return null;
    }
    // The caller may have cancelled (487 sent) or the user agent closed while the flow opened.
    if (!answerable()) return null;
    const call = SipCall.answer(this.#host, invite.request, invite.tx, flow, options);
    if (call.state !== "terminated") this.#calls.set(call.callId, call);
    return call;
  }

  /** Registers with a trunk's registrar and keeps the binding refreshed until `unregister()`. */
  register(options: RegisterOptions): SipRegistration {
    if (!this.#started || this.#closed) throw new Error("SipUserAgent is not started");
    const registration = new SipRegistration(this.#host, options, newCallId(this.#options.advertisedAddress ?? this.#options.localAddress));
    this.#registrations.add(registration);
    registration.onEvent((event) => {
      if (event.type === "unregistered") this.#registrations.delete(registration);
    });
    registration.start();
    return registration;
  }

  /**
   * Hangs up every call and removes every registration (waiting up to `graceMs` for their BYE,
   * CANCEL and REGISTER), then closes the transports.
   */
  async close(graceMs = 2000): Promise<void> {
    if (this.#closed) return;
    const calls = [...this.#calls.values()];
    const registrations = [...this.#registrations];
    await Promise.race([
      Promise.all([...calls.map((c) => c.hangup()), ...registrations.map((r) => r.unregister())]),
      new Promise((r) => setTimeout(r, graceMs).unref()),
    ]);
    this.#closed = true;
    // Calls whose BYE (or CANCEL) got no answer in time, and calls answered meanwhile, end now:
    // their transactions are disposed below, so no answer could end them later.
    for (const call of [...this.#calls.values()]) call.abandon();
    for (const tx of this.#clientTransactions.values()) tx.dispose();
    for (const { tx } of this.#serverTransactions.values()) tx.dispose();
    this.#clientTransactions.clear();
    this.#serverTransactions.clear();
    await this.#transports.close();
  }

  /** RFC 3263: the hops for `uri`, in the order a request tries them (resolve-targets.ts). */
  #resolveHops(uri: SipUri, protocol: SipTransportChoice): Promise<SipHop[]> {
    return resolveTargets(uri, protocol, this.#resolver, Math.random);
  }

  #startClientTransaction(request: SipRequest, flow: SipFlow, user: ClientTransactionUser): AnyClientTransaction {
    const key = `${topVia(request).params.get("branch")}|${request.method}`;
    let tx: AnyClientTransaction;
    const ctx = {
      clock: this.#clock,
      timers: this.#timers,
      reliable: flow.reliable,
      send: (message: SipRequest) => flow.send(message, (error) => tx.transportError(error)),
    };
    const wrapped: ClientTransactionUser = {
      onResponse: (r) => user.onResponse(r),
      onRequestTimeout: () => user.onRequestTimeout(),
      onTransportError: (e) => user.onTransportError(e),
      onTerminated: () => {
        if (this.#clientTransactions.get(key) === tx) this.#clientTransactions.delete(key);
        user.onTerminated?.();
      },
    };
    tx = request.method === "INVITE" ? new InviteClientTransaction(request, ctx, wrapped) : new NonInviteClientTransaction(request, ctx, wrapped);
    this.#clientTransactions.set(key, tx);
    tx.start();
    return tx;
  }

  #receive(message: SipMessage, source: SipSource, defect: SipDefect | null): void {
    if (this.#closed) return;
    if (message.kind === "response") {
      if (defect !== null) this.#drop("bad_response", source, `${message.status} response: ${defect.detail}`);
      else this.#receiveResponse(message);
      return;
    }
    if (!this.#limiter.admitRequest(source.address)) {
      this.#drop("rate_limited", source, `${message.method} over the source's request rate`);
      return;
    }
    const refusal = defect !== null ? { status: defect.status, phrase: defect.phrase, headers: [] } : checkRequest(message);
    if (refusal !== null) {
      // §17.1.1.3: an ACK is never answered; one that fails these checks can match nothing.
      if (message.method === "ACK") this.#drop("unparsable", source, `ACK: ${defect?.detail ?? refusal.phrase}`);
      else this.#sendStateless(message, source, refusal.status, refusal.phrase, refusal.headers);
      return;
    }
    try {
      this.#receiveRequest(message, source);
    } catch (error) {
      this.#drop("internal", source, `handling ${message.method} failed inside Faxline`, error);
      if (message.method !== "ACK") this.#answer500(message, source);
    }
  }

  #drop(reason: SipDropReason, source: SipSource, detail: string, error?: unknown): void {
    this.drops.drop({ reason, protocol: source.protocol, remote: { address: source.address, port: source.port }, detail, ...(error !== undefined ? { error } : {}) });
  }

  /** 500 to a request whose handling failed inside Faxline: through its transaction when it has one without a final answer. */
  #answer500(request: SipRequest, source: SipSource): void {
    try {
      const entry = this.#serverTransactions.get(this.#serverKey(request));
      if (entry !== undefined) {
        const tx = entry.tx;
        if (tx.state === "trying" || tx.state === "proceeding") tx.respond(this.#statelessResponse(request, 500));
        return;
      }
      this.#transports.sendResponse(this.#statelessResponse(request, 500), source);
    } catch (error) {
      this.#drop("internal", source, "the 500 could not be sent either", error);
    }
  }

  #sendStateless(request: SipRequest, source: SipSource, status: number, phrase: string, headers: readonly [string, string][] = []): void {
    // §8.2.7: a stateless answer to a retransmission carries the same To tag: derive it from the request.
    const tag = createHash("sha256").update(`${request.headers.get("via") ?? ""}\n${request.headers.get("call-id") ?? ""}\n${request.headers.get("cseq") ?? ""}`).digest("hex").slice(0, 12);
    const response = createResponse(request, status, phrase, tag);
    response.headers.append("server", this.#host.userAgent);
    for (const [name, value] of headers) response.headers.append(name, value);
    this.#transports.sendResponse(response, source);
  }

  /** The server transaction key of a request (an ACK and a CANCEL share their INVITE's). */
  #serverKey(request: SipRequest): string {
    const via = topVia(request);
    const method = request.method === "ACK" || request.method === "CANCEL" ? "INVITE" : request.method;
    return `${via.params.get("branch") ?? cseqOf(request).seq}|${via.host}:${via.port ?? ""}|${method}`;
  }

  #receiveResponse(response: SipResponse): void {
    let branch: string | undefined;
    let method: string;
    try {
      branch = topVia(response).params.get("branch") ?? undefined;
      method = cseqOf(response).method;
    } catch {
      return;
    }
    const tx = this.#clientTransactions.get(`${branch}|${method}`);
    if (tx !== undefined && tx.state !== TransactionState.Terminated) {
      tx.receiveResponse(response);
      return;
    }
    if (method === "INVITE" && response.status >= 200 && response.status < 300) {
      this.#calls.get(response.headers.get("call-id") ?? "")?.receiveStray2xx(response);
    }
  }

  #receiveRequest(request: SipRequest, source: SipSource): void {
    // readMessage has checked the Via and CSeq this reads.
    const key = this.#serverKey(request);
    const callId = request.headers.get("call-id") ?? "";
    const existing = this.#serverTransactions.get(key);
    if (request.method === "ACK") {
      if (existing !== undefined && existing.tx.lastResponse !== null && existing.tx.lastResponse.status >= 300) {
        existing.tx.ackReceived();
        return;
      }
      this.#calls.get(callId)?.receiveAck(request);
      return;
    }
    if (request.method === "CANCEL") {
      // §9.2: 200 to the CANCEL when it matches an INVITE of ours to answer (which then gets 487
      // when we have not answered it yet); without a matching transaction, 481.
      const status = existing !== undefined ? 200 : 481;
      this.#transports.sendResponse(this.#statelessResponse(request, status), source);
      if (existing !== undefined && existing.tx.isInvite) {
        const call = this.#calls.get(callId);
        if (call !== undefined) call.receiveCancel();
        else if (existing.tx.state === "proceeding") {
          // Not answered yet (the line is still checking the caller or the number): 487 now, and
          // `answerCall` will not answer it.
          const response = createResponse(existing.tx.request, 487, REASON_PHRASES[487]!, newTag());
          response.headers.append("server", this.#host.userAgent);
          existing.tx.respond(response);
        }
      }
      return;
    }
    if (existing !== undefined) {
      existing.tx.receiveRetransmission();
      return;
    }
    const toTag = request.headers.get("to")?.match(/;\s*tag=([^;\s]+)/i)?.[1] ?? null;
    if (request.method === "INVITE" && toTag === null && this.#incomingHandler !== null && !this.#calls.has(callId) && !this.#screenInvite(request, source)) return;
    const call = this.#calls.get(callId);
    const incoming = call === undefined && request.method === "INVITE" && toTag === null ? this.#incomingHandler : null;
    if (call === undefined && incoming === null) {
      this.#answerOutsideCall(request, source, toTag);
      return;
    }
    const reliable = source.protocol !== "udp";
    let tx: ServerTransaction;
    const entry = { tx: null as unknown as ServerTransaction, source };
    tx = new ServerTransaction(request, {
      clock: this.#clock,
      timers: this.#timers,
      reliable,
      send: (response) => this.#transports.sendResponse(response, source),
      onTerminated: () => {
        if (this.#serverTransactions.get(key) === entry) this.#serverTransactions.delete(key);
      },
      onAckTimeout: () => this.#calls.get(callId)?.ackTimedOut(tx),
    });
    entry.tx = tx;
    this.#serverTransactions.set(key, entry);
    if (call !== undefined) call.receiveRequest(request, tx, source);
    else incoming!({ request, tx, source });
  }

  /**
   * A request outside any call that is not a new INVITE for the line: answered at once and
   * statelessly (RFC 3261 §8.2.7), so that nothing is kept and nothing retransmitted for it:
   * OPTIONS 200 (a carrier's keep-alive), a new INVITE without a handler 603, a request of a
   * dialog we do not have 481, a method we know but do not take here 405, any other 501 (both
   * with Allow).
   */
  #answerOutsideCall(request: SipRequest, source: SipSource, toTag: string | null): void {
    if (request.method === "OPTIONS" && toTag === null) {
      const unavailable = this.#unavailable();
      const headers: [string, string][] = [
        ["allow", ALLOW],
        ["accept", "application/sdp"],
        ["supported", SUPPORTED],
      ];
      if (unavailable === null) this.#sendStateless(request, source, 200, "OK", headers);
      else this.#sendStateless(request, source, 503, `Service Unavailable (${unavailable.replace(/[\r\n]+/g, " ")})`, headers);
    } else if (request.method === "INVITE" && toTag === null) this.#sendStateless(request, source, 603, REASON_PHRASES[603]!);
    else if (DIALOG_METHODS.has(request.method)) this.#sendStateless(request, source, 481, REASON_PHRASES[481]!);
    else if (OTHER_KNOWN_METHODS.has(request.method)) this.#sendStateless(request, source, 405, "Method Not Allowed", [["allow", ALLOW]]);
    else this.#sendStateless(request, source, 501, REASON_PHRASES[501]!, [["allow", ALLOW]]);
  }

  /**
   * A new INVITE from outside any call, before any state is kept for it: false when it was
   * answered statelessly (403, 503) or dropped.
   */
  #screenInvite(request: SipRequest, source: SipSource): boolean {
    const screening = this.#options.screenNewInvite?.(source) ?? "trunk";
    if (screening === "drop") {
      this.#drop(this.#limiter.isLockedOut(source.address) ? "locked_out" : "refused_source", source, "INVITE from a source that is no trunk's, past its refusals");
      return false;
    }
    if (screening === "refuse") {
      this.#sendStateless(request, source, 403, REASON_PHRASES[403]!);
      return false;
    }
    if (!this.#limiter.admitNewInvite(source.address)) {
      if (screening === "trunk") this.#sendStateless(request, source, 503, REASON_PHRASES[503]!, [["retry-after", "5"]]);
      else this.#drop("rate_limited", source, "INVITE over the source's INVITE rate");
      return false;
    }
    return true;
  }

  #statelessResponse(request: SipRequest, status: number): SipResponse {
    const response = createResponse(request, status, REASON_PHRASES[status] ?? "OK", null);
    response.headers.append("server", this.#host.userAgent);
    return response;
  }
}


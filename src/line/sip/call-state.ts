/**
 * What the parts of one SIP call share (sip-call.ts is the façade, the parts are its neighbours:
 * call-placing.ts, call-answering.ts, prack.ts, media-offers.ts, session-refresh.ts,
 * in-dialog-requests.ts, non-invite-requests.ts, hangup.ts): the call's options and host, its
 * state, dialog and flows, the media in use and the offer/answer exchange under way, its
 * timers and events, and the helpers every part builds messages with (responses, Via, Contact,
 * digest answers) and ends the call through (`fail`, `complete`).
 */
import type { Clock } from "../../lib/clock.ts";
import type { ClientTransactionUser, InviteClientTransaction, NonInviteClientTransaction } from "./client-transaction.ts";
import { viaFor, type Dialog } from "./dialog.ts";
import { selectChallenge, sipDigestAuthorization, type SipChallenge, type SipCredentials } from "./digest-auth.ts";
import type { SipCallEvent, SipCallFailure, SipCallOutcome, SipReason, T38SwitchResult } from "./sip-call-events.ts";
import { createResponse, newTag, REASON_PHRASES, SipHeaders, type SipRequest, type SipResponse } from "./sip-message.ts";
import { sdpOf } from "./message-body.ts";
import type { ServerTransaction } from "./server-transaction.ts";
import {
  buildAudioMedia,
  SdpSession,
  type AudioCodec,
  type LocalMediaPorts,
  type MediaDescription,
  type NegotiatedMedia,
  type SessionDescription,
  type T38Capabilities,
} from "./sdp.ts";
import type { SessionTimer } from "./session-timer.ts";
import { TimerSet, type SipTimerValues } from "./sip-timers.ts";
import { parseSipUri, type SipUri } from "./sip-uri.ts";
import type { SipFlow, SipHop, SipTransportProtocol } from "./transports.ts";
import type { SipTransportChoice } from "./resolve-targets.ts";

export interface PlaceCallOptions {
  /** The Request-URI: `sip:+4930123456@trunk.example` (a `;transport=` parameter is ignored: see `transport`). */
  target: string;
  /** Our address of record for From: `sip:+4940123456@trunk.example`. */
  from: string;
  /** Display name in From. */
  fromDisplayName?: string;
  /** Trunk credentials for 401/407 challenges. */
  credentials?: SipCredentials;
  /** The transport, or "auto": DNS chooses it for the first hop (RFC 3263 §4.1, resolve-targets.ts); the dialog keeps the one chosen. */
  transport: SipTransportChoice;
  /** Send everything to this proxy instead of the target's host: `host`, `host:port` or a SIP URI. */
  outboundProxy?: string;
  /** T.38 allowed on this call: accept the far end's T.38 re-INVITE, and allow `switchToT38()`. Off answers it 488. */
  t38: boolean;
  /**
   * Start the T.38 re-INVITE ourselves this long after the answer, unless the far end has
   * switched by then; null leaves it to the caller (`switchToT38()`). (Default: null)
   */
  t38ReinviteDelayMs?: number | null;
  /** From the INVITE until a 2xx; then CANCEL. */
  ringTimeoutMs: number;
  /** Our media address and the ports the media layer listens on. */
  localMedia: LocalMediaPorts;
  /** Audio codecs to offer, in preference order. (Default: ["PCMA", "PCMU"]) */
  audioCodecs?: readonly AudioCodec[];
  /** Offer RFC 4733 telephone-event (payload type 101). (Default: false) */
  telephoneEvent?: boolean;
  /** Extra headers on the INVITE (P-Asserted-Identity, …). */
  extraHeaders?: readonly (readonly [string, string])[];
  /** Aborting hangs up (CANCEL before the answer, BYE after). */
  signal?: AbortSignal;
}

/** How we answer the far end's INVITE (`SipCall.answer`). */
export interface AnswerCallOptions {
  /** Accept T.38 (in the INVITE's offer or a re-INVITE) and allow `switchToT38()`. */
  t38: boolean;
  /** Our own T.38 re-INVITE this long after the ACK unless the far end has switched; null: never. (Default: null) */
  t38ReinviteDelayMs?: number | null;
  localMedia: LocalMediaPorts;
  /** Audio codecs we accept, in preference order. (Default: ["PCMA", "PCMU"]) */
  audioCodecs?: readonly AudioCodec[];
  /** 180 Ringing this long before the 200, ms. (Default: 0) */
  answerDelayMs?: number;
}

/** What a call needs from the user agent that runs it, but for telling it the call ended (`SipCallHost` in sip-call.ts adds that). */
export interface CallHost {
  readonly clock: Clock;
  readonly timers: SipTimerValues;
  readonly userAgent: string;
  readonly t38Capabilities: T38Capabilities;
  /** The smallest session-timer interval we accept, seconds (RFC 4028 Min-SE; 90 outside tests). */
  readonly minSessionExpires: number;
  /** Address for Via, Contact when it is not the flow's own (NAT); null uses the flow's. */
  readonly advertisedAddress: string | null;
  /** Uniform in [0, 1): for the 491 back-off. */
  random(): number;
  resolveHop(uri: SipUri, protocol: SipTransportChoice): Promise<SipHop>;
  /** Every hop for `uri`, in the order to try them (RFC 3263: NAPTR and SRV, then their addresses). */
  resolveHops(uri: SipUri, protocol: SipTransportChoice): Promise<SipHop[]>;
  openFlow(hop: SipHop): Promise<SipFlow>;
  /** Creates, registers and starts a client transaction for `request` on `flow`. */
  startClientTransaction(request: SipRequest, flow: SipFlow, user: ClientTransactionUser): InviteClientTransaction | NonInviteClientTransaction;
  /** Sends a request outside any transaction (the ACK for a 2xx). */
  sendStateless(request: SipRequest, flow: SipFlow): void;
}

export const SipCallState = {
  Calling: "calling",
  Early: "early",
  Confirmed: "confirmed",
  Terminating: "terminating",
  Terminated: "terminated",
} as const;
export type SipCallState = (typeof SipCallState)[keyof typeof SipCallState];

export const ALLOW = "INVITE, ACK, CANCEL, BYE, OPTIONS, UPDATE, INFO";
/** The RTP payload type of RFC 4733 telephone-event when we offer it. */
export const TELEPHONE_EVENT_PT = 101;
/** Challenges answered per call (a stale nonce may come back more than once). */
const MAX_AUTH_TRIES = 4;

export type CallTimerName = "ring" | "cancel-guard" | "glare" | "t38-delay" | "bye-delay" | "answer" | "session-refresh" | "session-expiry";

export type Listener = (event: SipCallEvent) => void;

/** An INVITE of ours inside the dialog (media-offers.ts): to T.38, back to audio, or a session refresh (session-refresh.ts). */
export interface PendingReinvite {
  purpose: "t38" | "restore-audio" | "refresh";
  lines: MediaDescription[];
  resolve: (result: T38SwitchResult) => void;
  glareRetries: number;
  authTries: number;
  request: SipRequest | null;
  ack: SipRequest | null;
  transaction: InviteClientTransaction | null;
}

/** An answered call: the far end's INVITE, its server transaction and whether our 200 went out (call-answering.ts). */
export interface AnsweredInvite {
  invite: SipRequest;
  tx: ServerTransaction;
  finalSent: boolean;
  answer: NegotiatedMedia | null;
  timer: SessionTimer | null;
  timerHeaders: [string, string][];
}

/** What the call's owner does for the shared state: hang up when the signal aborts, and tell the user agent the call ended. */
export interface CallHooks {
  abort(): void;
  ended(): void;
}

export class CallShared {
  readonly callId: string;
  readonly options: PlaceCallOptions;
  readonly host: CallHost;
  readonly timers: TimerSet<CallTimerName>;
  readonly listeners = new Set<Listener>();
  readonly events: SipCallEvent[] = [];
  readonly sdp: SdpSession;
  readonly localTag = newTag();
  readonly codecs: readonly AudioCodec[];
  state: SipCallState = SipCallState.Calling;
  /** The INVITE's flow: the one it went out on (placed), or the path back to the caller (answered). */
  flow: SipFlow | null = null;
  dialogFlow: SipFlow | null = null;
  dialog: Dialog | null = null;
  inviteSentAt = 0;
  answeredAt = 0;
  authTries = 0;
  auth: { challenge: SipChallenge; nc: number } | null = null;
  media: NegotiatedMedia | null = null;
  /** Our current media lines: what we answer a session refresh with. */
  localLines: MediaDescription[];
  lastRemoteOrigin: string | null = null;
  reinvite: PendingReinvite | null = null;
  /** `switchToT38()` calls waiting for the re-INVITE under way. */
  readonly afterReinvite: ((result: T38SwitchResult) => void)[] = [];
  /** The far end's INVITE (initial or re-INVITE) whose 2xx waits for its ACK. */
  incomingInvite: { tx: ServerTransaction; answerInAck: boolean } | null = null;
  afterIncomingAck: (() => void)[] = [];
  uas: AnsweredInvite | null = null;
  /** The call's transport: the one its options name, or the one DNS chose for the INVITE ("auto"). */
  transport: SipTransportProtocol;
  outcome: SipCallOutcome | null = null;
  readonly outcomePromise: Promise<SipCallOutcome>;
  #resolveOutcome!: (outcome: SipCallOutcome) => void;
  readonly onAbort: () => void;
  readonly #hooks: CallHooks;

  constructor(host: CallHost, options: PlaceCallOptions, callId: string, hooks: CallHooks) {
    this.host = host;
    this.options = options;
    this.#hooks = hooks;
    this.onAbort = (): void => hooks.abort();
    this.transport = options.transport === "auto" ? "udp" : options.transport;
    this.callId = callId;
    this.timers = new TimerSet(host.clock);
    this.codecs = options.audioCodecs ?? ["PCMA", "PCMU"];
    this.sdp = new SdpSession({ address: options.localMedia.address });
    this.localLines = [this.audioLine()];
    this.outcomePromise = new Promise((resolve) => {
      this.#resolveOutcome = resolve;
    });
  }

  /** Runs `fn` now, or after the ACK of the far end's pending re-INVITE (§14.1: one INVITE at a time). */
  runWhenIdle(fn: () => void): void {
    if (this.incomingInvite !== null && !this.incomingInvite.tx.acked) this.afterIncomingAck.push(fn);
    else fn();
  }

  /** Whether a re-INVITE of ours is on the wire, waiting for its final response. */
  ourInvitePending(): boolean {
    const tx = this.reinvite?.transaction ?? null;
    return tx !== null && (tx.state === "calling" || tx.state === "proceeding");
  }

  // -------------------------------------------------------------------------------------------
  // Building messages

  respondWithSdp(request: SipRequest, tx: ServerTransaction, sdp: string | null, extraHeaders: readonly [string, string][] = []): void {
    const response = this.response(request, 200);
    for (const [name, value] of extraHeaders) response.headers.append(name, value);
    const flow = this.dialogFlow ?? this.flow;
    if (flow !== null) response.headers.append("contact", this.contact(flow));
    response.headers.append("allow", ALLOW);
    if (sdp !== null) {
      response.headers.append("content-type", "application/sdp");
      response.body = sdp;
    }
    tx.respond(response);
  }

  response(request: SipRequest, status: number, reason?: string): SipResponse {
    const response = createResponse(request, status, reason ?? REASON_PHRASES[status] ?? "Unknown", this.localTag);
    response.headers.append("server", this.host.userAgent);
    if (status === 200 && request.method === "OPTIONS") response.headers.append("allow", ALLOW);
    return response;
  }

  audioLine(): MediaDescription {
    return buildAudioMedia({
      port: this.options.localMedia.audioPort,
      codecs: this.codecs,
      telephoneEventPayloadType: this.options.telephoneEvent ? TELEPHONE_EVENT_PT : null,
    });
  }

  contact(flow: SipFlow): string {
    const user = parseSipUri(this.options.from).user;
    const host = this.host.advertisedAddress ?? flow.local.address;
    const h = host.includes(":") ? `[${host}]` : host;
    const transport = flow.protocol === "udp" ? "" : `;transport=${flow.protocol}`;
    return `<sip:${user !== null ? `${user}@` : ""}${h}:${flow.local.port}${transport}>`;
  }

  addVia(request: SipRequest, flow: SipFlow): void {
    const via = viaFor(flow.protocol, this.host.advertisedAddress ?? flow.local.address, flow.local.port);
    request.headers.remove("via");
    const rest = request.headers.entries().map(([n, v]) => [n, v] as const);
    const headers = new SipHeaders([["via", via.value], ...rest]);
    if (!headers.has("user-agent")) headers.append("user-agent", this.host.userAgent);
    request.headers = headers;
  }

  /** The flow for requests inside the dialog: the outbound proxy's, else the next hop of the route set/remote target. */
  async flowForDialog(): Promise<SipFlow> {
    if (this.dialogFlow !== null) return this.dialogFlow;
    if (this.options.outboundProxy !== undefined || this.dialog === null) {
      this.dialogFlow = this.flow!;
      return this.dialogFlow;
    }
    const hop = await this.host.resolveHop(this.dialog.nextHopUri, this.transport);
    const current = this.flow!;
    this.dialogFlow =
      hop.address === current.remote.address && hop.port === current.remote.port && hop.protocol === current.protocol ? current : await this.host.openFlow(hop);
    return this.dialogFlow;
  }

  // -------------------------------------------------------------------------------------------
  // Digest answers (digest-auth.ts does the arithmetic)

  /**
   * Takes a 401/407 challenge for the next request; false when we cannot answer it: no
   * credentials, no digest challenge we support, or the request already carried our answer and
   * the challenge is not `stale` (the credentials were refused).
   */
  answerChallenge(response: SipResponse, request: SipRequest): boolean {
    const credentials = this.options.credentials;
    if (credentials === undefined || this.authTries >= MAX_AUTH_TRIES) return false;
    const challenge = selectChallenge(response, credentials);
    if (challenge === null) return false;
    if (request.headers.has(challenge.authorizationHeader) && !challenge.stale) return false;
    this.authTries++;
    this.auth = { challenge, nc: 0 };
    return true;
  }

  /** Adds our credentials (answering the last challenge, with the next nonce count). */
  authorize(request: SipRequest): void {
    const auth = this.auth;
    const credentials = this.options.credentials;
    if (auth === null || credentials === undefined) return;
    auth.nc++;
    request.headers.set(
      auth.challenge.authorizationHeader,
      sipDigestAuthorization(auth.challenge.challenge, { method: request.method, uri: request.uri }, credentials, undefined, auth.nc),
    );
  }

  copyAuthorization(from: SipRequest, to: SipRequest): void {
    for (const name of ["authorization", "proxy-authorization"]) {
      const value = from.headers.get(name);
      if (value !== undefined) to.headers.set(name, value);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Events and the end

  emit(event: SipCallEvent): void {
    this.events.push(event);
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (error) {
        // A listener's bug must not corrupt the SIP state; surface it as an uncaught error.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }

  fail(failure: Omit<SipCallFailure, "result" | "reason" | "answered" | "setupMs" | "credentialsSent"> & { reason?: SipReason | null; answered?: boolean }): void {
    if (this.outcome !== null) return;
    const answered = failure.answered ?? this.answeredAt !== 0;
    const outcome: SipCallFailure = {
      result: "failed",
      sipStatus: failure.sipStatus,
      reasonPhrase: failure.reasonPhrase,
      phase: failure.phase,
      cause: failure.cause,
      reason: failure.reason ?? null,
      answered,
      credentialsSent: this.authTries > 0,
      setupMs: this.answeredAt !== 0 ? this.answeredAt - this.inviteSentAt : null,
    };
    this.emit({ type: "failed", failure: outcome });
    this.#end(outcome);
  }

  complete(endedBy: "local" | "remote", reason: SipReason | null): void {
    if (this.outcome !== null) return;
    this.#end({
      result: "completed",
      endedBy,
      setupMs: this.answeredAt - this.inviteSentAt,
      connectedMs: this.host.clock.now() - this.answeredAt,
      reason,
    });
  }

  #end(outcome: SipCallOutcome): void {
    this.outcome = outcome;
    // An answered call that ends before the ACK: our 200 is not retransmitted any more.
    if (this.uas?.finalSent && !this.uas.tx.acked) this.uas.tx.ackReceived();
    this.state = SipCallState.Terminated;
    this.timers.cancelAll();
    this.options.signal?.removeEventListener("abort", this.onAbort);
    const pending = this.reinvite;
    this.reinvite = null;
    pending?.resolve({ result: "ended" });
    for (const r of this.afterReinvite.splice(0)) r({ result: "ended" });
    this.emit({ type: "ended", outcome });
    this.#resolveOutcome(outcome);
    this.#hooks.ended();
  }
}

/** The methods a request or response says its sender allows (Allow), upper-case. */
export function allowOf(message: SipRequest | SipResponse): string[] {
  return message.headers.getList("allow").map((m) => m.trim().toUpperCase());
}

/** The body carries a session description (alone or as a part of a multipart body: message-body.ts). */
export function isSdp(message: SipRequest | SipResponse): boolean {
  return sdpOf(message) !== null;
}

/** The o= line's identity and version: equal means "unchanged" (RFC 3264 §8). */
export function originKey(session: SessionDescription): string {
  const o = session.origin;
  return `${o.username} ${o.sessionId} ${o.sessionVersion} ${o.address}`;
}

/** `host`, `host:port` or a SIP URI → a SIP URI. */
export function proxyUri(proxy: string): SipUri {
  return parseSipUri(/^sips?:/i.test(proxy) ? proxy : `sip:${proxy}`);
}

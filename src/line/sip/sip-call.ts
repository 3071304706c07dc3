/**
 * One fax call, placed by us (UAC) or answered by us (UAS): the INVITE, its dialog, the offer/answer exchanges that move it between
 * G.711 audio and T.38, and its end. The user agent (sip-user-agent.ts) owns the sockets and the
 * transaction tables and hands this class the messages of its Call-ID.
 *
 * Call states:
 *  - calling: INVITE sent, no provisional with a To tag yet. Left by a 1xx (→ early), a 2xx
 *    (→ confirmed) or a final error (→ terminated).
 *  - early: a provisional came. Ring timeout or hangup() sends CANCEL here (RFC 3261 §9.1 says
 *    not to CANCEL before a provisional: in "calling" the CANCEL waits for one, and timer B
 *    bounds the wait).
 *  - confirmed: the 2xx came and was ACKed; the media is `media`. Re-INVITEs either way, UPDATE,
 *    OPTIONS and INFO are handled here.
 *  - terminating: we sent BYE (or CANCEL after the answer raced it) and wait for its response.
 *  - terminated: `outcome` is settled and `ended` emitted.
 *
 * An answered call (`SipCall.answer`, the far end's INVITE) starts in "early": 180 Ringing (with
 * our To tag, so the dialog exists), then after `answerDelayMs` the 200 with our SDP answer, which
 * the server transaction retransmits until the ACK; the ACK confirms the call (`answered`). A
 * CANCEL before the 200 ends it with 487; `hangup()` before the 200 declines with 480; after the
 * 200 the BYE waits for the ACK (§15). From "confirmed" on it is the same call as a placed one.
 *
 * Offer/answer (RFC 3264) in the confirmed state:
 *  - Our re-INVITE to T.38 (`switchToT38`) offers `m=image … udptl t38`. A 2xx with the stream
 *    accepted → `t38Switched`. 488/415/606 (or any other non-2xx except 408/481/491) → the
 *    session stays as it was (§14.1) → `t38Refused`, and the caller runs audio. 491 → retried
 *    after 2.1–4 s (§14.1, we own the Call-ID). 408/481/timeout → the dialog is over (BYE for
 *    408 and timeout) → `failed` in phase "reinvite". A 2xx that rejects the stream (port 0) is
 *    followed by a re-INVITE back to audio, then `t38Refused`.
 *  - The far end's re-INVITE or UPDATE with an offer: if its SDP version is the one we already
 *    have, it is a session refresh: we answer with our current SDP, unchanged version included,
 *    and the media is untouched (`sessionRefreshed`). Otherwise we answer it (answerOffer):
 *    T.38 accepted when `t38` is on → `t38Switched` (or `mediaChanged` when already on T.38 and
 *    something changed); audio → `mediaChanged`; nothing usable → 488. A re-INVITE without SDP
 *    gets our current SDP as the offer in the 2xx, and its answer comes in the ACK. UPDATE
 *    without SDP is a plain refresh. While an INVITE of ours is pending, theirs gets 491.
 */
import type { Clock } from "../../lib/clock.ts";
import {
  InviteClientTransaction,
  NonInviteClientTransaction,
  type ClientTransactionUser,
} from "./client-transaction.ts";
import { Dialog, viaFor } from "./dialog.ts";
import { selectChallenge, sipDigestAuthorization, type SipChallenge, type SipCredentials } from "./digest-auth.ts";
import {
  parseReasonHeader,
  SipFailureCause,
  SipFailurePhase,
  type SipCallEvent,
  type SipCallEventOf,
  type SipCallEventType,
  type SipCallFailure,
  type SipCallOutcome,
  type SipReason,
  type T38SwitchResult,
} from "./sip-call-events.ts";
import { createResponse, cseqOf, newTag, REASON_PHRASES, SipHeaders, tagOf, type SipRequest, type SipResponse } from "./sip-message.ts";
import { sdpOf } from "./message-body.ts";
import { SUPPORTED, SUPPORTED_EXTENSIONS } from "./request-checks.ts";
import type { ServerTransaction } from "./server-transaction.ts";
import {
  answerOffer,
  buildAudioMedia,
  buildT38Media,
  parseSdp,
  readNegotiatedMedia,
  readT38,
  sameMedia,
  SdpSession,
  t38OfferParams,
  type AudioCodec,
  type AudioMedia,
  type LocalMediaPorts,
  type MediaDescription,
  type NegotiatedMedia,
  type SessionDescription,
  type T38Capabilities,
  type T38Media,
} from "./sdp.ts";
import type { SipTimerValues } from "./sip-timers.ts";
import { answerTimerRequest, expiryDelayMs, listsOption, readMinSe, refreshDelayMs, timerFromResponse, type SessionTimer } from "./session-timer.ts";
import { TimerSet } from "./sip-timers.ts";
import { formatSipUri, parseNameAddr, parseSipUri, type SipUri } from "./sip-uri.ts";
import type { SipFlow, SipHop, SipSource, SipTransportProtocol } from "./transports.ts";
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

/** What a call needs from the user agent that runs it. */
export interface SipCallHost {
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
  callEnded(call: SipCall): void;
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
/** The option tags we implement (Supported, and what a caller may Require of us). */
const TELEPHONE_EVENT_PT = 101;
/** RFC 3261 §14.1: "If the UAC … did generate the Call-ID … the UAC MUST wait between 2.1 and 4 seconds". */
const GLARE_RETRY_MIN_MS = 2100;
const GLARE_RETRY_MAX_MS = 4000;
/** §14.1: "If the UAC … did not generate the Call-ID … the UAC MUST wait between 0 and 2 seconds". */
const GLARE_RETRY_OTHER_MAX_MS = 2000;
const MAX_GLARE_RETRIES = 3;
/** Challenges answered per call (a stale nonce may come back more than once). */
const MAX_AUTH_TRIES = 4;
/** Statuses that refuse T.38 outright; the session stays on audio. */
const T38_REFUSAL_STATUSES = new Set([488, 415, 606]);

type Listener = (event: SipCallEvent) => void;

interface PendingReinvite {
  purpose: "t38" | "restore-audio" | "refresh";
  lines: MediaDescription[];
  resolve: (result: T38SwitchResult) => void;
  glareRetries: number;
  authTries: number;
  request: SipRequest | null;
  ack: SipRequest | null;
  transaction: InviteClientTransaction | null;
}

export class SipCall {
  readonly callId: string;
  readonly options: PlaceCallOptions;
  readonly #host: SipCallHost;
  readonly #timers: TimerSet<"ring" | "cancel-guard" | "glare" | "t38-delay" | "bye-delay" | "answer" | "session-refresh" | "session-expiry">;
  readonly #listeners = new Set<Listener>();
  readonly #events: SipCallEvent[] = [];
  readonly #sdp: SdpSession;
  readonly #localTag = newTag();
  readonly #codecs: readonly AudioCodec[];
  #state: SipCallState = SipCallState.Calling;
  #flow: SipFlow | null = null;
  #dialogFlow: SipFlow | null = null;
  #dialog: Dialog | null = null;
  #seq = 1;
  #invite: SipRequest | null = null;
  #inviteTx: InviteClientTransaction | null = null;
  #ackFor2xx: SipRequest | null = null;
  /** The 2xx that answered the INVITE (its SDP is the answer). */
  #last2xx: SipResponse | null = null;
  #inviteSentAt = 0;
  #answeredAt = 0;
  #provisionalSeen = false;
  #cancelRequested: typeof SipFailureCause.RingTimeout | typeof SipFailureCause.Cancelled | null = null;
  #cancelSent = false;
  #authTries = 0;
  #auth: { challenge: SipChallenge; nc: number } | null = null;
  #media: NegotiatedMedia | null = null;
  /** Our current media lines: what we answer a session refresh with. */
  #localLines: MediaDescription[];
  #lastRemoteOrigin: string | null = null;
  #reinvite: PendingReinvite | null = null;
  #incomingInvite: { tx: ServerTransaction; answerInAck: boolean } | null = null;
  #afterIncomingAck: (() => void)[] = [];
  #hangupPromise: Promise<SipCallOutcome> | null = null;
  /** An answered call: the far end's INVITE, its server transaction and whether our 200 went out. */
  #uas: { invite: SipRequest; tx: ServerTransaction; finalSent: boolean; answer: NegotiatedMedia | null; timer: SessionTimer | null; timerHeaders: [string, string][] } | null = null;
  /** The session timer (RFC 4028) while one runs: its interval and who refreshes. */
  #sessionTimer: SessionTimer | null = null;
  /** The interval a 422 asked for, sent in our next INVITE. */
  #sessionAsk: number | null = null;
  /** RFC 3262: the last reliable provisional we PRACKed (per INVITE CSeq) and the early dialog's sequence number. */
  #prackState: { inviteSeq: number; lastRseq: Map<string, number>; localSeq: number } | null = null;
  /** RFC 3263: the hops the INVITE may go to, in order, and the one in use. */
  #hops: SipHop[] = [];
  #hopIndex = 0;
  /** The call's transport: the one its options name, or the one DNS chose for the INVITE ("auto"). */
  #transport: SipTransportProtocol;
  /** The methods the far end allows (its Allow), for choosing UPDATE or re-INVITE as a refresh. */
  #remoteAllow: string[] = [];
  #outcome: SipCallOutcome | null = null;
  readonly outcome: Promise<SipCallOutcome>;
  #resolveOutcome!: (outcome: SipCallOutcome) => void;
  readonly #onAbort = (): void => void this.hangup();

  /**
   * Answers the far end's INVITE (not yet answered: at most a 100 went out) on `flow`, the path
   * back to where it came from. Sends 180 at once and the 200 after `answerDelayMs`; a bad
   * INVITE is refused here (400 without From tag or Contact, 488 without usable media, 415 for a
   * body that is not SDP) and the call ends failed. The user agent registers the call first.
   */
  static answer(host: SipCallHost, invite: SipRequest, tx: ServerTransaction, flow: SipFlow, options: AnswerCallOptions): SipCall {
    // The constructor checks both as SIP URIs; a bad Contact is refused (400) once the call runs.
    const to = sipUriOrNull(parseNameAddrSafe(invite.headers.get("to")));
    const contact = sipUriOrNull(parseNameAddrSafe(invite.headers.getList("contact")[0]));
    const call = new SipCall(
      host,
      {
        target: contact ?? "sip:invalid",
        from: to ?? "sip:invalid",
        transport: flow.protocol,
        t38: options.t38,
        t38ReinviteDelayMs: options.t38ReinviteDelayMs ?? null,
        ringTimeoutMs: 0,
        localMedia: options.localMedia,
        ...(options.audioCodecs !== undefined ? { audioCodecs: options.audioCodecs } : {}),
      },
      invite.headers.get("call-id") ?? "",
      { invite, tx, flow, answerDelayMs: options.answerDelayMs ?? 0 },
    );
    return call;
  }

  /** Throws a SipParseError when `target`, `from` or `outboundProxy` is not a SIP URI (a configuration fault). */
  constructor(
    host: SipCallHost,
    options: PlaceCallOptions,
    callId: string,
    incoming?: { invite: SipRequest; tx: ServerTransaction; flow: SipFlow; answerDelayMs: number },
  ) {
    parseSipUri(options.target);
    parseSipUri(options.from);
    if (options.outboundProxy !== undefined) proxyUri(options.outboundProxy);
    this.#host = host;
    this.options = options;
    this.#transport = options.transport === "auto" ? "udp" : options.transport;
    this.callId = callId;
    this.#timers = new TimerSet(host.clock);
    this.#codecs = options.audioCodecs ?? ["PCMA", "PCMU"];
    this.#sdp = new SdpSession({ address: options.localMedia.address });
    this.#localLines = [this.#audioLine()];
    this.outcome = new Promise((resolve) => {
      this.#resolveOutcome = resolve;
    });
    if (incoming !== undefined) this.#startAnswering(incoming);
  }

  /** True for a call we answered. */
  get incoming(): boolean {
    return this.#uas !== null;
  }

  /** The far end's INVITE, for a call we answered. */
  get incomingInvite(): SipRequest | null {
    return this.#uas?.invite ?? null;
  }

  get state(): SipCallState {
    return this.#state;
  }

  /** The media in use: null until answered. */
  get media(): NegotiatedMedia | null {
    return this.#media;
  }

  /** Every event so far, in order. */
  get events(): readonly SipCallEvent[] {
    return this.#events;
  }

  /** Listens to every event; returns the function that stops listening. */
  onEvent(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Listens to one kind of event. */
  on<K extends SipCallEventType>(type: K, listener: (event: SipCallEventOf<K>) => void): () => void {
    return this.onEvent((event) => {
      if (event.type === type) listener(event as SipCallEventOf<K>);
    });
  }

  /**
   * The next event of `type` (or a past one, when `includePast`). Resolves null when the call
   * ends without it.
   */
  next<K extends SipCallEventType>(type: K, options: { includePast?: boolean } = {}): Promise<SipCallEventOf<K> | null> {
    if (options.includePast) {
      const past = this.#events.find((e) => e.type === type);
      if (past !== undefined) return Promise.resolve(past as SipCallEventOf<K>);
    }
    if (this.#outcome !== null) return Promise.resolve(null);
    return new Promise((resolve) => {
      const stop = this.onEvent((event) => {
        if (event.type === type) {
          stop();
          resolve(event as SipCallEventOf<K>);
        } else if (event.type === "ended") {
          stop();
          resolve(null);
        }
      });
    });
  }

  // -------------------------------------------------------------------------------------------
  // Placing the call

  /** Sends the INVITE. Called once by the user agent. */
  async start(): Promise<void> {
    const o = this.options;
    if (o.signal?.aborted) {
      this.#fail({ sipStatus: null, reasonPhrase: "Aborted before dialling", phase: SipFailurePhase.Ring, cause: SipFailureCause.Cancelled });
      return;
    }
    o.signal?.addEventListener("abort", this.#onAbort, { once: true });
    try {
      const targetUri = parseSipUri(o.target);
      const hopUri = o.outboundProxy !== undefined ? proxyUri(o.outboundProxy) : targetUri;
      this.#hops = await this.#host.resolveHops(hopUri, o.transport);
      // The transport DNS chose for the first hop is the call's (all its hops share it).
      this.#transport = this.#hops[0]?.protocol ?? this.#transport;
    } catch (error) {
      this.#fail({ sipStatus: 503, reasonPhrase: `Service Unavailable (${(error as Error).message})`, phase: SipFailurePhase.Ring, cause: SipFailureCause.Transport });
      return;
    }
    const flow = await this.#reachHop("");
    if (flow === null) return;
    this.#flow = flow;
    this.#inviteSentAt = this.#host.clock.now();
    this.#timers.start("ring", o.ringTimeoutMs, () => this.#onRingTimeout());
    this.#sendInvite();
  }

  /**
   * The flow the INVITE goes out on (`#openFirstReachable`), or null when the call ended meanwhile:
   * no hop reachable (503), ended, or hung up before the INVITE left (nothing of it is on the wire
   * there, so the call ends now without waiting for a CANCEL's answer).
   */
  async #reachHop(where: string): Promise<SipFlow | null> {
    let flow: SipFlow;
    try {
      flow = await this.#openFirstReachable();
    } catch (error) {
      this.#fail({ sipStatus: 503, reasonPhrase: `Service Unavailable (${(error as Error).message})`, phase: SipFailurePhase.Ring, cause: SipFailureCause.Transport });
      return null;
    }
    if (this.#state === SipCallState.Terminated) return null;
    if (this.#cancelRequested !== null) {
      this.#timers.cancel("cancel-guard");
      this.#fail({ sipStatus: null, reasonPhrase: `Cancelled before the INVITE was sent${where}`, phase: SipFailurePhase.Ring, cause: this.#cancelRequested });
      return null;
    }
    return flow;
  }

  /** Opens a flow to the current hop, or (connection refused …) to the next ones in turn. */
  async #openFirstReachable(): Promise<SipFlow> {
    for (;;) {
      try {
        return await this.#host.openFlow(this.#hops[this.#hopIndex]!);
      } catch (error) {
        if (this.#hopIndex + 1 >= this.#hops.length) throw error;
        this.#hopIndex++;
      }
    }
  }

  /**
   * RFC 3263 §4.3: the INVITE failed at this hop (transport error, no response, 503) before the
   * far end rang: the same request, on a new branch, goes to the next hop. False when there is none
   * (or the call is being cancelled), and the failure stands.
   */
  #tryNextHop(): boolean {
    // Only while "calling": a 1xx beyond 100 (ringing, early media) means this hop reached the far end.
    if (this.#cancelRequested !== null || this.#state !== SipCallState.Calling || this.#dialog !== null) return false;
    if (this.#hopIndex + 1 >= this.#hops.length) return false;
    this.#hopIndex++;
    // Another server: its challenge will be its own (an answer to the last one would be refused).
    this.#auth = null;
    void (async () => {
      const flow = await this.#reachHop(" to the next target");
      if (flow === null) return;
      this.#flow = flow;
      this.#sendInvite();
    })();
    return true;
  }

  #sendInvite(): void {
    const o = this.options;
    const flow = this.#flow!;
    const headers = new SipHeaders();
    if (o.outboundProxy !== undefined) headers.append("route", `<${formatSipUri({ ...proxyUri(o.outboundProxy), params: new Map([["lr", null]]) })}>`);
    headers.append("max-forwards", "70");
    const fromUri = parseSipUri(o.from);
    headers.append("from", `${o.fromDisplayName !== undefined ? `"${o.fromDisplayName.replace(/(["\\])/g, "\\$1")}" ` : ""}<${formatSipUri(fromUri)}>;tag=${this.#localTag}`);
    headers.append("to", `<${o.target}>`);
    headers.append("call-id", this.callId);
    headers.append("cseq", `${this.#seq} INVITE`);
    headers.append("contact", this.#contact(flow));
    headers.append("allow", ALLOW);
    headers.append("supported", SUPPORTED);
    if (this.#sessionAsk !== null) {
      headers.append("session-expires", String(this.#sessionAsk));
      headers.append("min-se", String(this.#sessionAsk));
    }
    for (const [name, value] of o.extraHeaders ?? []) headers.append(name, value);
    headers.append("content-type", "application/sdp");
    const request: SipRequest = { kind: "request", method: "INVITE", uri: o.target, headers, body: this.#sdp.describe(this.#localLines) };
    this.#addVia(request, flow);
    this.#authorize(request);
    this.#invite = request;
    this.#inviteTx = this.#host.startClientTransaction(request, flow, {
      onResponse: (response) => this.#onInviteResponse(response),
      onRequestTimeout: () => this.#onInviteFailure(408, "Request Timeout", SipFailureCause.Timeout),
      onTransportError: (error) => this.#onInviteFailure(503, `Service Unavailable (${error.message})`, SipFailureCause.Transport),
    }) as InviteClientTransaction;
  }

  #onInviteResponse(response: SipResponse): void {
    const status = response.status;
    if (status < 200) {
      if (this.#state === SipCallState.Terminated) return;
      this.#provisionalSeen = true;
      if (status > 100 && this.#state === SipCallState.Calling && tagOf(response.headers.get("to")) !== null) this.#state = SipCallState.Early;
      let earlyMedia: NegotiatedMedia | null = null;
      if (response.body !== "" && isSdp(response)) {
        try {
          earlyMedia = readNegotiatedMedia(parseSdp(sdpOf(response)!), this.#codecs);
        } catch {
          earlyMedia = null;
        }
      }
      if (status > 100 && listsOption(response.headers, "require", "100rel")) this.#prack(response);
      this.#emit({ type: "provisional", sipStatus: status, reasonPhrase: response.reason, earlyMedia });
      // §9.1: a CANCEL waits for a provisional response.
      if (this.#cancelRequested !== null) this.#sendCancel();
      return;
    }
    if (status < 300) {
      this.#on2xx(response);
      return;
    }
    this.#timers.cancel("cancel-guard");
    if (status === 503 && this.#tryNextHop()) return;
    if (status === 422 && this.#sessionAsk === null && this.#cancelRequested === null && this.#state !== SipCallState.Terminated) {
      // RFC 4028 §7.1: "Session Interval Too Small": ask again with the far end's Min-SE.
      const minSe = readMinSe(response.headers);
      if (minSe !== null) {
        this.#sessionAsk = minSe;
        this.#seq++;
        this.#sendInvite();
        return;
      }
    }
    if ((status === 401 || status === 407) && this.#cancelRequested === null && this.#state !== SipCallState.Terminated) {
      if (this.#answerChallenge(response, this.#invite!)) {
        this.#seq++;
        this.#sendInvite();
        return;
      }
      this.#fail({
        sipStatus: status,
        reasonPhrase: response.reason,
        phase: SipFailurePhase.Ring,
        cause: SipFailureCause.Auth,
        reason: parseReasonHeader(response.headers.get("reason")),
      });
      return;
    }
    const cause = status === 487 && this.#cancelRequested !== null ? this.#cancelRequested : SipFailureCause.Rejected;
    this.#fail({ sipStatus: status, reasonPhrase: response.reason, phase: SipFailurePhase.Ring, cause, reason: parseReasonHeader(response.headers.get("reason")) });
  }

  #onInviteFailure(sipStatus: number, reasonPhrase: string, cause: SipFailureCause): void {
    if (this.#tryNextHop()) return;
    this.#fail({ sipStatus, reasonPhrase, phase: SipFailurePhase.Ring, cause: this.#cancelRequested ?? cause });
  }

  #on2xx(response: SipResponse): void {
    const toTag = tagOf(response.headers.get("to"));
    if (this.#dialog !== null) {
      if (toTag === this.#dialog.id.remoteTag) {
        // A retransmitted 2xx: our ACK was lost (§13.2.2.4: ACK every 2xx).
        if (this.#ackFor2xx !== null && this.#dialogFlow !== null) this.#host.sendStateless(this.#ackFor2xx, this.#dialogFlow);
      } else {
        // A second 2xx from another fork: ACK it and end that dialog (§13.2.2.4).
        void this.#ackAndByeStray(response);
      }
      return;
    }
    if (this.#state === SipCallState.Terminated) {
      void this.#ackAndByeStray(response);
      return;
    }
    this.#timers.cancel("ring");
    this.#timers.cancel("cancel-guard");
    this.#last2xx = response;
    // Our PRACKs took sequence numbers in the early dialog; the confirmed one goes on from them.
    const dialog = new Dialog({ invite: this.#invite!, response, localSeq: Math.max(this.#seq, this.#prackState?.localSeq ?? 0) });
    this.#dialog = dialog;
    this.#answeredAt = this.#host.clock.now();
    const ack = dialog.createRequest("ACK", { seq: cseqOf(this.#invite!).seq });
    this.#copyAuthorization(this.#invite!, ack);
    void this.#sendAckFor2xx(ack);
  }

  async #sendAckFor2xx(ack: SipRequest): Promise<void> {
    let flow: SipFlow;
    try {
      flow = await this.#flowForDialog();
    } catch (error) {
      this.#fail({ sipStatus: 503, reasonPhrase: `Service Unavailable (${(error as Error).message})`, phase: SipFailurePhase.Answer, cause: SipFailureCause.Transport, answered: true });
      return;
    }
    this.#addVia(ack, flow);
    this.#ackFor2xx = ack;
    this.#host.sendStateless(ack, flow);
    if (this.#cancelRequested !== null || this.#state === SipCallState.Terminated) {
      // The answer crossed our CANCEL (or hangup): end the call we no longer want.
      const cause = this.#cancelRequested ?? SipFailureCause.Cancelled;
      this.#state = SipCallState.Terminating;
      await this.#sendBye();
      this.#fail({ sipStatus: 487, reasonPhrase: "Answered after CANCEL; hung up", phase: SipFailurePhase.Ring, cause, answered: true });
      return;
    }
    this.#completeAnswer();
  }

  /** Reads the answer SDP of the 2xx to the INVITE and confirms the call. */
  #completeAnswer(): void {
    const response = this.#last2xx;
    let media: NegotiatedMedia | null = null;
    let session: SessionDescription | null = null;
    if (response !== null && response.body !== "" && isSdp(response)) {
      try {
        session = parseSdp(sdpOf(response)!);
        media = readNegotiatedMedia(session, this.#codecs);
      } catch {
        media = null;
      }
    }
    if (media === null || media.kind !== "audio") {
      // We offered audio only, so the answer must hold an audio stream with our codec.
      this.#state = SipCallState.Terminating;
      void this.#sendBye().then(() =>
        this.#fail({
          sipStatus: null,
          reasonPhrase: session === null ? "2xx without an SDP answer" : "No audio codec in common",
          phase: SipFailurePhase.Answer,
          cause: SipFailureCause.Media,
          answered: true,
        }),
      );
      return;
    }
    this.#lastRemoteOrigin = originKey(session!);
    this.#media = media;
    this.#localLines = [this.#audioLine()];
    this.#state = SipCallState.Confirmed;
    this.#remoteAllow = allowOf(response!);
    this.#setSessionTimer(timerFromResponse(response!.headers));
    this.#emit({ type: "answered", media, setupMs: this.#answeredAt - this.#inviteSentAt });
    const delay = this.options.t38ReinviteDelayMs ?? null;
    if (this.options.t38 && delay !== null) {
      this.#timers.start("t38-delay", delay, () => {
        if (this.#state === SipCallState.Confirmed && this.#media?.kind === "audio" && this.#reinvite === null) void this.switchToT38();
      });
    }
  }

  /**
   * RFC 3262: a reliable provisional (Require: 100rel, RSeq) is acknowledged with PRACK in its
   * early dialog, RAck naming its RSeq and the INVITE's CSeq. Only the next RSeq in order is
   * PRACKed (§4: a retransmission, or one out of order, is not); the PRACK's own retransmission is
   * its transaction's.
   */
  #prack(response: SipResponse): void {
    const invite = this.#invite;
    const toTag = tagOf(response.headers.get("to"));
    const rseq = Number.parseInt(response.headers.get("rseq") ?? "", 10);
    if (invite === null || this.#flow === null || !Number.isInteger(rseq) || toTag === null) return;
    const inviteSeq = cseqOf(invite).seq;
    if (this.#prackState?.inviteSeq !== inviteSeq) this.#prackState = { inviteSeq, lastRseq: new Map(), localSeq: inviteSeq };
    const state = this.#prackState;
    // RSeq counts per early dialog (a forked INVITE has several): PRACK only the next one in order.
    const last = state.lastRseq.get(toTag);
    if (last !== undefined && rseq !== last + 1) return;
    let early: Dialog;
    try {
      early = new Dialog({ invite, response, localSeq: state.localSeq });
    } catch {
      return;
    }
    const prack = early.createRequest("PRACK");
    state.localSeq = early.localSeq;
    state.lastRseq.set(toTag, rseq);
    prack.headers.append("rack", `${rseq} ${inviteSeq} INVITE`);
    void (async () => {
      // Like every request in the (early) dialog: the outbound proxy, else the route set or the
      // far end's Contact (§12.2.1.1); the INVITE's own flow when that is where it points.
      let flow = this.#flow!;
      if (this.options.outboundProxy === undefined) {
        try {
          const hop = await this.#host.resolveHop(early.nextHopUri, this.#transport);
          if (hop.address !== flow.remote.address || hop.port !== flow.remote.port || hop.protocol !== flow.protocol) flow = await this.#host.openFlow(hop);
        } catch {
          // The INVITE's flow is the best we have.
        }
      }
      if (this.#state === SipCallState.Terminated) return;
      this.#addVia(prack, flow);
      this.#authorize(prack);
      this.#host.startClientTransaction(prack, flow, {
        // The INVITE's final response decides the call; a refused PRACK changes nothing here.
        onResponse: () => undefined,
        onRequestTimeout: () => undefined,
        onTransportError: () => undefined,
      });
    })();
  }

  #onRingTimeout(): void {
    if (this.#state !== SipCallState.Calling && this.#state !== SipCallState.Early) return;
    this.#requestCancel(SipFailureCause.RingTimeout);
  }

  #requestCancel(cause: typeof SipFailureCause.RingTimeout | typeof SipFailureCause.Cancelled): void {
    if (this.#cancelRequested !== null) return;
    this.#cancelRequested = cause;
    if (this.#provisionalSeen) this.#sendCancel();
    // §9.1: "If no final response has been received after 64*T1 seconds, the client SHOULD then
    // consider the original transaction cancelled and SHOULD destroy the client transaction".
    this.#timers.start("cancel-guard", 64 * this.#host.timers.T1, () => {
      this.#inviteTx?.dispose();
      this.#fail({ sipStatus: 408, reasonPhrase: "No final response after CANCEL", phase: SipFailurePhase.Ring, cause });
    });
  }

  /** §9.1: CANCEL copies the INVITE's Request-URI, Call-ID, From, To, CSeq number, top Via and Route. */
  #sendCancel(): void {
    if (this.#cancelSent || this.#invite === null || this.#flow === null || this.#dialog !== null) return;
    this.#cancelSent = true;
    const invite = this.#invite;
    const headers = new SipHeaders();
    headers.append("via", invite.headers.getList("via")[0]!);
    for (const route of invite.headers.getAll("route")) headers.append("route", route);
    headers.append("max-forwards", "70");
    headers.append("from", invite.headers.get("from")!);
    headers.append("to", invite.headers.get("to")!);
    headers.append("call-id", this.callId);
    headers.append("cseq", `${cseqOf(invite).seq} CANCEL`);
    headers.append("user-agent", this.#host.userAgent);
    const cancel: SipRequest = { kind: "request", method: "CANCEL", uri: invite.uri, headers, body: "" };
    this.#host.startClientTransaction(cancel, this.#flow, {
      // The INVITE's 487 (or 2xx) decides the outcome; the CANCEL's own response does not.
      onResponse: () => undefined,
      onRequestTimeout: () => undefined,
      onTransportError: () => undefined,
    });
  }

  // -------------------------------------------------------------------------------------------
  // Answering the far end's INVITE

  #startAnswering(incoming: { invite: SipRequest; tx: ServerTransaction; flow: SipFlow; answerDelayMs: number }): void {
    const { invite, tx, flow } = incoming;
    this.#uas = { invite, tx, finalSent: false, answer: null, timer: null, timerHeaders: [] };
    // Responses go back on the INVITE's own path (the transaction's); our requests in the dialog
    // go to its route set or the caller's Contact (§12.2.1.1, `#flowForDialog`), on this flow
    // when that is where the INVITE came from.
    this.#flow = flow;
    this.#inviteSentAt = this.#host.clock.now();
    this.#state = SipCallState.Early;
    const refuse = (status: number, reason: string, cause: SipFailureCause, extra?: (r: SipResponse) => void): void => {
      const response = this.#response(invite, status, REASON_PHRASES[status] ?? reason);
      extra?.(response);
      this.#uas!.finalSent = true;
      tx.respond(response);
      this.#fail({ sipStatus: status, reasonPhrase: reason, phase: SipFailurePhase.Ring, cause });
    };
    try {
      this.#dialog = Dialog.forIncomingInvite(invite, this.#localTag);
      parseSipUri(this.#dialog.remoteTarget);
    } catch (error) {
      refuse(400, `Bad Request (${(error as Error).message})`, SipFailureCause.Rejected);
      return;
    }
    // §8.2.2.3: an extension the caller requires and we lack is refused with 420.
    const unsupported = invite.headers
      .getList("require")
      .map((o) => o.trim().toLowerCase())
      .filter((o) => o !== "" && !SUPPORTED_EXTENSIONS.has(o));
    if (unsupported.length > 0) {
      refuse(420, "Bad Extension", SipFailureCause.Rejected, (r) => r.headers.append("unsupported", unsupported.join(", ")));
      return;
    }
    const timerAnswer = answerTimerRequest(invite.headers, this.#host.minSessionExpires);
    if (!timerAnswer.ok) {
      refuse(422, "Session Interval Too Small", SipFailureCause.Rejected, (r) => r.headers.append("min-se", String(timerAnswer.minSe)));
      return;
    }
    this.#uas.timer = timerAnswer.timer;
    this.#uas.timerHeaders = timerAnswer.headers;
    this.#remoteAllow = allowOf(invite);
    let answerLines: MediaDescription[];
    if (invite.body === "") {
      // No offer: ours goes in the 200 (audio), the answer comes in the ACK (RFC 3261 §13.3.1).
      answerLines = [this.#audioLine()];
    } else {
      if (!isSdp(invite)) {
        refuse(415, "Unsupported Media Type", SipFailureCause.Media, (r) => r.headers.append("accept", "application/sdp"));
        return;
      }
      let offer: SessionDescription;
      try {
        offer = parseSdp(sdpOf(invite)!);
      } catch {
        refuse(488, "Not Acceptable Here (SDP does not parse)", SipFailureCause.Media);
        return;
      }
      const answer = answerOffer(offer, {
        ports: this.options.localMedia,
        t38: this.options.t38,
        codecs: this.#codecs,
        telephoneEventPayloadType: null,
        t38Capabilities: this.#host.t38Capabilities,
      });
      if (answer === null) {
        refuse(488, "Not Acceptable Here (no G.711 or T.38 stream we can take)", SipFailureCause.Media);
        return;
      }
      answerLines = answer.media;
      this.#uas.answer = answer.negotiated;
      this.#lastRemoteOrigin = originKey(offer);
    }
    this.#localLines = answerLines;
    // A caller that requires 100rel would need every provisional sent reliably (RFC 3262): we send
    // none then (the 100 is never reliable) and answer at once.
    const noProvisionals = listsOption(invite.headers, "require", "100rel");
    if (!noProvisionals) {
      tx.respond(this.#dialogResponse(invite, 180, null));
      this.#emit({ type: "provisional", sipStatus: 180, reasonPhrase: REASON_PHRASES[180]!, earlyMedia: null });
    }
    const send200 = (): void => {
      const uas = this.#uas!;
      if (this.#state !== SipCallState.Early || uas.finalSent) return;
      uas.finalSent = true;
      this.#answeredAt = this.#host.clock.now();
      const ok = this.#dialogResponse(invite, 200, this.#sdp.describe(this.#localLines));
      for (const [name, value] of uas.timerHeaders) ok.headers.append(name, value);
      tx.respond(ok);
      this.#incomingInvite = { tx, answerInAck: invite.body === "" };
      this.#afterIncomingAck.push(() => this.#confirmAnswered());
    };
    if (incoming.answerDelayMs > 0 && !noProvisionals) this.#timers.start("answer", incoming.answerDelayMs, send200);
    else send200();
  }

  /** The ACK for our 200 came: the call is up. */
  #confirmAnswered(): void {
    if (this.#state !== SipCallState.Early) return;
    const media = this.#media ?? this.#uas?.answer ?? null;
    if (media === null) {
      // An offerless INVITE whose ACK brought no usable answer.
      this.#state = SipCallState.Terminating;
      void this.#sendBye().then(() =>
        this.#fail({ sipStatus: null, reasonPhrase: "The ACK brought no usable SDP answer", phase: SipFailurePhase.Answer, cause: SipFailureCause.Media, answered: true }),
      );
      return;
    }
    this.#media = media;
    this.#state = SipCallState.Confirmed;
    this.#setSessionTimer(this.#uas?.timer ?? null);
    this.#emit({ type: "answered", media, setupMs: this.#answeredAt - this.#inviteSentAt });
    if (media.kind === "t38") {
      this.#emit({ type: "t38Switched", media, initiatedBy: "remote" });
      return;
    }
    const delay = this.options.t38ReinviteDelayMs ?? null;
    if (this.options.t38 && delay !== null) {
      this.#timers.start("t38-delay", delay, () => {
        if (this.#state === SipCallState.Confirmed && this.#media?.kind === "audio" && this.#reinvite === null) void this.switchToT38();
      });
    }
  }

  /** A response that establishes the dialog (§12.1.1): our To tag, Contact, and the request's Record-Route copied. */
  #dialogResponse(request: SipRequest, status: number, sdp: string | null): SipResponse {
    const response = this.#response(request, status);
    for (const rr of request.headers.getAll("record-route")) response.headers.append("record-route", rr);
    response.headers.append("contact", this.#contact(this.#flow!));
    response.headers.append("allow", ALLOW);
    if (sdp !== null) {
      response.headers.append("content-type", "application/sdp");
      response.body = sdp;
    }
    return response;
  }

  /**
   * The far end's CANCEL for the INVITE we are answering (§9.2): before our 200, the INVITE gets
   * 487 and the call ends (cause "cancelled"); true when it matched. After the 200 it changes
   * nothing (the caller must send BYE).
   */
  receiveCancel(): boolean {
    const uas = this.#uas;
    if (uas === null) return false;
    if (!uas.finalSent) {
      uas.finalSent = true;
      uas.tx.respond(this.#response(uas.invite, 487));
      this.#fail({ sipStatus: 487, reasonPhrase: "Request Terminated (the caller cancelled)", phase: SipFailurePhase.Ring, cause: SipFailureCause.Cancelled });
    }
    return true;
  }

  /**
   * Ends the call at once without a word to the far end: for a user agent that closes with
   * requests still unanswered (their transactions are gone, so their answers would never come).
   */
  abandon(): void {
    if (this.#outcome !== null) return;
    this.#fail({ sipStatus: null, reasonPhrase: "The SIP user agent closed", phase: this.#answeredAt !== 0 ? SipFailurePhase.Answer : SipFailurePhase.Ring, cause: SipFailureCause.Transport });
  }

  // -------------------------------------------------------------------------------------------
  // Hanging up

  /**
   * Ends the call: CANCEL before the answer (the outcome is then a failure with cause
   * "cancelled"), BYE after it. Resolves with the outcome.
   */
  hangup(): Promise<SipCallOutcome> {
    if (this.#hangupPromise !== null) return this.#hangupPromise;
    const uas = this.#uas;
    if (uas !== null && this.#state === SipCallState.Early && !uas.finalSent) {
      // Not answered yet: decline (§15: no BYE before the dialog is confirmed).
      uas.finalSent = true;
      this.#timers.cancel("answer");
      uas.tx.respond(this.#response(uas.invite, 480, "Temporarily Unavailable"));
      this.#fail({ sipStatus: 480, reasonPhrase: "Temporarily Unavailable (declined before the answer)", phase: SipFailurePhase.Ring, cause: SipFailureCause.Cancelled });
      this.#hangupPromise = this.outcome;
      return this.outcome;
    }
    const answeredNotAcked = uas !== null && this.#state === SipCallState.Early;
    switch (answeredNotAcked ? SipCallState.Confirmed : this.#state) {
      case SipCallState.Calling:
      case SipCallState.Early:
        this.#requestCancel(SipFailureCause.Cancelled);
        break;
      case SipCallState.Confirmed: {
        this.#state = SipCallState.Terminating;
        this.#timers.cancelAll();
        let sent = false;
        const bye = (): void => {
          if (sent) return;
          sent = true;
          this.#timers.cancel("bye-delay");
          void this.#sendBye().then(() => this.#complete("local", null));
        };
        if (answeredNotAcked) {
          // §15: no BYE before the ACK of our 200 (or timer L, `ackTimedOut`).
          this.#afterIncomingAck.push(bye);
        } else if (this.#incomingInvite !== null && !this.#incomingInvite.tx.acked) {
          // The far end's re-INVITE waits for its ACK: let that arrive first (a BYE overtaking it
          // confuses some far ends), but not for long.
          this.#afterIncomingAck.push(bye);
          this.#timers.start("bye-delay", 4 * this.#host.timers.T1, bye);
        } else bye();
        break;
      }
      default:
        break;
    }
    this.#hangupPromise = this.outcome;
    return this.outcome;
  }

  /** Sends BYE in the dialog and waits for its final response (or timeout, or transport error). */
  async #sendBye(): Promise<void> {
    try {
      await this.#nonInviteRequest("BYE");
    } catch {
      // The dialog ends either way (§15.1.1: any final response, or none, ends the BYE).
    }
  }

  async #ackAndByeStray(response: SipResponse): Promise<void> {
    if (this.#invite === null) return;
    const stray = new Dialog({ invite: this.#invite, response, localSeq: cseqOf(this.#invite).seq });
    try {
      const hop = await this.#host.resolveHop(this.options.outboundProxy !== undefined ? proxyUri(this.options.outboundProxy) : stray.nextHopUri, this.#transport);
      const flow = await this.#host.openFlow(hop);
      const ack = stray.createRequest("ACK", { seq: cseqOf(this.#invite).seq });
      this.#addVia(ack, flow);
      this.#host.sendStateless(ack, flow);
      const bye = stray.createRequest("BYE");
      this.#addVia(bye, flow);
      this.#host.startClientTransaction(bye, flow, { onResponse: () => undefined, onRequestTimeout: () => undefined, onTransportError: () => undefined });
    } catch {
      // Best effort: the far end's timer H ends that dialog anyway.
    }
  }

  // -------------------------------------------------------------------------------------------
  // Our re-INVITE to T.38

  /**
   * Offers T.38 in a re-INVITE. Resolves "switched" when the far end accepts, "refused" when it
   * answers 488/415/606 (or another non-2xx that leaves the session as it was; the call stays on
   * audio), "ended" when the call ends first. Already on T.38: resolves "switched" at once.
   */
  switchToT38(): Promise<T38SwitchResult> {
    if (!this.options.t38) return Promise.reject(new Error("switchToT38() on a call placed with t38: false"));
    if (this.#media?.kind === "t38") return Promise.resolve({ result: "switched", media: this.#media });
    if (this.#state !== SipCallState.Confirmed) return Promise.resolve({ result: "ended" });
    if (this.#reinvite !== null) return new Promise((resolve) => this.#afterReinvite.push(resolve));
    return new Promise((resolve) => {
      this.#timers.cancel("t38-delay");
      this.#reinvite = {
        purpose: "t38",
        lines: [buildT38Media(this.options.localMedia.t38Port, t38OfferParams(this.#host.t38Capabilities))],
        resolve,
        glareRetries: 0,
        authTries: 0,
        request: null,
        ack: null,
        transaction: null,
      };
      this.#runWhenIdle(() => void this.#sendReinvite());
    });
  }

  readonly #afterReinvite: ((result: T38SwitchResult) => void)[] = [];

  /** Runs `fn` now, or after the ACK of the far end's pending re-INVITE (§14.1: one INVITE at a time). */
  #runWhenIdle(fn: () => void): void {
    if (this.#incomingInvite !== null && !this.#incomingInvite.tx.acked) this.#afterIncomingAck.push(fn);
    else fn();
  }

  async #sendReinvite(): Promise<void> {
    const pending = this.#reinvite;
    if (pending === null || this.#state !== SipCallState.Confirmed || this.#dialog === null) {
      this.#finishReinvite({ result: "ended" });
      return;
    }
    let flow: SipFlow;
    try {
      flow = await this.#flowForDialog();
    } catch (error) {
      this.#reinviteEndsDialog(503, `Service Unavailable (${(error as Error).message})`, SipFailureCause.Transport, false);
      return;
    }
    // The call may have ended (a BYE, a failed refresh) while the flow was found.
    if (this.#reinvite !== pending || this.#state !== SipCallState.Confirmed || this.#dialog === null) {
      if (this.#reinvite === pending) this.#finishReinvite({ result: "ended" });
      return;
    }
    const request = this.#dialog.createRequest("INVITE");
    request.headers.append("contact", this.#contact(flow));
    request.headers.append("allow", ALLOW);
    for (const [name, value] of this.#refreshHeaders()) request.headers.append(name, value);
    request.headers.append("content-type", "application/sdp");
    request.body = this.#sdp.describe(pending.lines);
    this.#addVia(request, flow);
    this.#authorize(request);
    pending.request = request;
    pending.transaction = this.#host.startClientTransaction(request, flow, {
      onResponse: (response) => this.#onReinviteResponse(pending, response),
      onRequestTimeout: () => this.#reinviteEndsDialog(408, "Request Timeout", SipFailureCause.Timeout, true),
      onTransportError: (error) => this.#reinviteEndsDialog(503, `Service Unavailable (${error.message})`, SipFailureCause.Transport, false),
    }) as InviteClientTransaction;
  }

  #onReinviteResponse(pending: PendingReinvite, response: SipResponse): void {
    const status = response.status;
    if (status < 200) return;
    if (status < 300) {
      if (pending.ack !== null) {
        // Retransmitted 2xx: ACK again.
        if (this.#dialogFlow !== null) this.#host.sendStateless(pending.ack, this.#dialogFlow);
        return;
      }
      const ack = this.#dialog!.createRequest("ACK", { seq: cseqOf(pending.request!).seq });
      this.#copyAuthorization(pending.request!, ack);
      if (this.#dialogFlow !== null) {
        this.#addVia(ack, this.#dialogFlow);
        this.#host.sendStateless(ack, this.#dialogFlow);
      }
      pending.ack = ack;
      if (this.#reinvite !== pending || this.#state !== SipCallState.Confirmed) return;
      this.#applyReinviteAnswer(pending, response);
      return;
    }
    if (this.#reinvite !== pending) return;
    if ((status === 401 || status === 407) && this.#answerChallenge(response, pending.request!)) {
      void this.#sendReinvite();
      return;
    }
    if (status === 491 && pending.glareRetries < MAX_GLARE_RETRIES) {
      pending.glareRetries++;
      // §14.1: the owner of the Call-ID (we, when we placed the call) waits 2.1–4 s, the other side 0–2 s.
      const wait = this.#uas === null ? GLARE_RETRY_MIN_MS + this.#host.random() * (GLARE_RETRY_MAX_MS - GLARE_RETRY_MIN_MS) : this.#host.random() * GLARE_RETRY_OTHER_MAX_MS;
      this.#timers.start("glare", wait, () => {
        if (this.#reinvite !== pending) return;
        // The far end's own re-INVITE may have switched us meanwhile.
        if (pending.purpose === "t38" && this.#media?.kind === "t38") {
          this.#finishReinvite({ result: "switched", media: this.#media });
          return;
        }
        this.#runWhenIdle(() => void this.#sendReinvite());
      });
      return;
    }
    if (status === 422 && pending.purpose === "refresh" && this.#raiseInterval(readMinSe(response.headers))) {
      // RFC 4028 §7.4: refresh again at once with at least the far end's Min-SE.
      this.#finishReinvite({ result: "ended" });
      this.#refreshSession();
      return;
    }
    if (status === 408 || status === 481) {
      // §14.1: "If the response is a 481 or 408 … the UAC will terminate the dialog."
      this.#reinviteEndsDialog(status, response.reason, SipFailureCause.Rejected, status === 408);
      return;
    }
    // §14.1: "If a UA receives a non-2xx final response to a re-INVITE, the session parameters
    // MUST remain unchanged, as if no re-INVITE had been issued."
    this.#refuseT38(pending, status, response.reason);
  }

  #applyReinviteAnswer(pending: PendingReinvite, response: SipResponse): void {
    let session: SessionDescription | null = null;
    try {
      session = response.body !== "" && isSdp(response) ? parseSdp(sdpOf(response)!) : null;
    } catch {
      session = null;
    }
    // Every re-INVITE of ours refreshes the session (RFC 4028): the 2xx may move the timer.
    // A 2xx without Session-Expires keeps a timer only when we refresh (RFC 4028 §7.2: none is
    // required of the far end then); one it was to refresh is off.
    if (this.#sessionTimer !== null) this.#setSessionTimer(timerFromResponse(response.headers) ?? (this.#sessionTimer.refresher === "local" ? this.#sessionTimer : null));
    if (pending.purpose === "refresh") {
      // Same SDP both ways, as a refresh is; a far end that changed its address anyway is followed.
      const media = session !== null ? readNegotiatedMedia(session, this.#codecs) : null;
      if (session !== null) this.#lastRemoteOrigin = originKey(session);
      if (media !== null && media.kind === this.#media?.kind && !sameMedia(this.#media, media)) {
        this.#media = media;
        this.#emit({ type: "mediaChanged", media });
      }
      this.#finishReinvite({ result: "ended" });
      return;
    }
    if (pending.purpose === "restore-audio") {
      const audio = session !== null ? readNegotiatedMedia(session, this.#codecs) : null;
      if (session !== null) this.#lastRemoteOrigin = originKey(session);
      if (audio !== null && audio.kind === "audio") {
        this.#media = audio;
        this.#localLines = pending.lines;
      }
      this.#finishReinvite({ result: "ended" });
      return;
    }
    const t38 = session !== null ? session.media.map((m) => readT38(session, m)).find((m) => m !== null) ?? null : null;
    if (session !== null) this.#lastRemoteOrigin = originKey(session);
    if (t38 === null) {
      // The 2xx rejected the image stream (port 0) or answered without SDP: the session now has
      // no usable stream. Offer audio again, then report the refusal.
      const reason = "T.38 stream rejected in the answer";
      const previous = this.#media?.kind === "audio" ? this.#media : null;
      this.#reinvite = null;
      const restore: PendingReinvite = {
        purpose: "restore-audio",
        lines: [this.#audioLine()],
        resolve: () => {
          const audio = this.#media?.kind === "audio" ? this.#media : previous;
          let result: T38SwitchResult = { result: "ended" };
          if (audio !== null && this.#state === SipCallState.Confirmed) {
            this.#emit({ type: "t38Refused", sipStatus: response.status, reasonPhrase: reason, media: audio });
            result = { result: "refused", sipStatus: response.status, reasonPhrase: reason, media: audio };
          }
          pending.resolve(result);
          for (const r of this.#afterReinvite.splice(0)) r(result);
        },
        glareRetries: 0,
        authTries: 0,
        request: null,
        ack: null,
        transaction: null,
      };
      this.#reinvite = restore;
      this.#runWhenIdle(() => void this.#sendReinvite());
      return;
    }
    // What we speak: their answer's version/EC (≤ our offer), their limits.
    const media: T38Media = t38;
    this.#media = media;
    this.#localLines = pending.lines;
    this.#emit({ type: "t38Switched", media, initiatedBy: "local" });
    this.#finishReinvite({ result: "switched", media });
  }

  #refuseT38(pending: PendingReinvite, status: number, reasonPhrase: string): void {
    if (pending.purpose === "refresh") {
      // §14.1: the session stays as it was; try the refresh again soon.
      this.#finishReinvite({ result: "ended" });
      if (this.#sessionTimer?.refresher === "local") this.#timers.start("session-refresh", Math.min(refreshDelayMs(this.#sessionTimer), 10_000), () => this.#refreshSession());
      return;
    }
    if (pending.purpose === "restore-audio") {
      this.#finishReinvite({ result: "ended" });
      return;
    }
    const audio = this.#media?.kind === "audio" ? this.#media : null;
    if (audio === null) {
      this.#finishReinvite(this.#media?.kind === "t38" ? { result: "switched", media: this.#media } : { result: "ended" });
      return;
    }
    const phrase = T38_REFUSAL_STATUSES.has(status) ? reasonPhrase : `${reasonPhrase} (T.38 re-INVITE not accepted)`;
    this.#emit({ type: "t38Refused", sipStatus: status, reasonPhrase: phrase, media: audio });
    this.#finishReinvite({ result: "refused", sipStatus: status, reasonPhrase: phrase, media: audio });
  }

  #finishReinvite(result: T38SwitchResult): void {
    const pending = this.#reinvite;
    this.#reinvite = null;
    this.#timers.cancel("glare");
    pending?.resolve(result);
    if (pending?.purpose === "t38") for (const r of this.#afterReinvite.splice(0)) r(result);
    else if (pending?.purpose === "refresh" && this.#afterReinvite.length > 0 && this.#state === SipCallState.Confirmed) {
      // A switch to T.38 waited for our refresh: it goes now.
      const waiting = this.#afterReinvite.splice(0);
      void this.switchToT38().then((r) => waiting.forEach((w) => w(r)));
    }
  }

  // -------------------------------------------------------------------------------------------
  // Session timers (RFC 4028; the decisions are session-timer.ts's)

  /** Starts (or restarts, or with null stops) the session timer's clock. */
  #setSessionTimer(timer: SessionTimer | null): void {
    this.#timers.cancel("session-refresh");
    this.#timers.cancel("session-expiry");
    this.#sessionTimer = timer;
    if (timer === null || this.#state === SipCallState.Terminated) return;
    if (timer.refresher === "local") this.#timers.start("session-refresh", refreshDelayMs(timer), () => this.#refreshSession());
    else this.#timers.start("session-expiry", expiryDelayMs(timer), () => this.#sessionExpired());
  }

  /** A 422 to our refresh named a Min-SE above our interval: take it (true), else false (nothing to retry). */
  #raiseInterval(minSe: number | null): boolean {
    const timer = this.#sessionTimer;
    if (timer === null || minSe === null || minSe <= timer.seconds) return false;
    this.#sessionTimer = { ...timer, seconds: minSe };
    return true;
  }

  /** Session-Expires and Supported for a refresh of ours (any re-INVITE or UPDATE we send while a timer runs). */
  #refreshHeaders(): [string, string][] {
    const timer = this.#sessionTimer;
    if (timer === null) return [];
    return [
      ["session-expires", `${timer.seconds};refresher=${timer.refresher === "local" ? "uac" : "uas"}`],
      ["supported", "timer"],
    ];
  }

  /** Our refresh: UPDATE without SDP when the far end allows UPDATE, else a re-INVITE with the same SDP. */
  #refreshSession(): void {
    const timer = this.#sessionTimer;
    if (timer === null || this.#state !== SipCallState.Confirmed) return;
    if (this.#reinvite !== null || (this.#incomingInvite !== null && !this.#incomingInvite.tx.acked)) {
      // An offer/answer exchange is under way (it refreshes too, when it ends): look again soon.
      this.#timers.start("session-refresh", 1000, () => this.#refreshSession());
      return;
    }
    if (this.#remoteAllow.includes("UPDATE")) {
      void this.#nonInviteRequest("UPDATE", this.#refreshHeaders()).then(
        (response) => {
          if (this.#state !== SipCallState.Confirmed) return;
          if (response.status >= 200 && response.status < 300) this.#setSessionTimer(timerFromResponse(response.headers) ?? timer);
          else if (response.status === 422 && this.#raiseInterval(readMinSe(response.headers))) this.#refreshSession();
          else if (response.status === 481 || response.status === 408) this.#reinviteEndsDialog(response.status, response.reason, SipFailureCause.Rejected, response.status === 408);
          else {
            // UPDATE not taken after all (405, 501 …): refresh with a re-INVITE from now on.
            this.#remoteAllow = this.#remoteAllow.filter((m) => m !== "UPDATE");
            this.#refreshSession();
          }
        },
        () => this.#reinviteEndsDialog(408, "Request Timeout (session refresh)", SipFailureCause.Timeout, true),
      );
      return;
    }
    this.#reinvite = {
      purpose: "refresh",
      lines: this.#localLines,
      resolve: () => undefined,
      glareRetries: 0,
      authTries: 0,
      request: null,
      ack: null,
      transaction: null,
    };
    void this.#sendReinvite();
  }

  /** The far end was to refresh and did not: end the session (RFC 4028 §10). */
  #sessionExpired(): void {
    const timer = this.#sessionTimer;
    if (timer === null || this.#state !== SipCallState.Confirmed) return;
    this.#state = SipCallState.Terminating;
    this.#timers.cancelAll();
    const reasonPhrase = `Session expired: no refresh from the far end within its ${timer.seconds} s session interval (RFC 4028); Faxline hung up`;
    void this.#sendBye().then(() => this.#fail({ sipStatus: null, reasonPhrase, phase: SipFailurePhase.Reinvite, cause: SipFailureCause.Timeout, answered: true }));
  }

  /**
   * The session-timer part of our 2xx to the far end's re-INVITE or UPDATE (it refreshes the
   * session): headers to add, or a Min-SE for a 422.
   */
  #answerRefresh(request: SipRequest): { headers: [string, string][] } | { minSe: number } {
    const answer = answerTimerRequest(request.headers, this.#host.minSessionExpires);
    if (!answer.ok) return { minSe: answer.minSe };
    // No Session-Expires in their request: RFC 4028 §9, the session timer is off from now on (our
    // 2xx says none either), so nobody waits for refreshes that will not come.
    this.#setSessionTimer(answer.timer);
    return { headers: answer.headers };
  }

  /** Whether a re-INVITE of ours is on the wire, waiting for its final response. */
  #ourInvitePending(): boolean {
    const tx = this.#reinvite?.transaction ?? null;
    return tx !== null && (tx.state === "calling" || tx.state === "proceeding");
  }

  #reinviteEndsDialog(sipStatus: number, reasonPhrase: string, cause: SipFailureCause, sendBye: boolean): void {
    if (this.#state !== SipCallState.Confirmed) {
      this.#finishReinvite({ result: "ended" });
      return;
    }
    // Terminating first: a T.38 switch waiting behind this re-INVITE must not start on a dead dialog.
    this.#state = SipCallState.Terminating;
    this.#finishReinvite({ result: "ended" });
    const end = (): void => this.#fail({ sipStatus, reasonPhrase, phase: SipFailurePhase.Reinvite, cause, answered: true });
    if (sendBye) void this.#sendBye().then(end);
    else end();
  }

  // -------------------------------------------------------------------------------------------
  // In-dialog OPTIONS from us

  /** Sends OPTIONS inside the dialog (a keep-alive); resolves with the final status (408 on timeout). */
  async ping(): Promise<{ sipStatus: number; reasonPhrase: string }> {
    if (this.#state !== SipCallState.Confirmed) return { sipStatus: 481, reasonPhrase: "No dialog" };
    try {
      const response = await this.#nonInviteRequest("OPTIONS");
      return { sipStatus: response.status, reasonPhrase: response.reason };
    } catch (error) {
      return { sipStatus: (error as { sipStatus?: number }).sipStatus ?? 503, reasonPhrase: (error as Error).message };
    }
  }

  /** A non-INVITE request in the dialog, answering one digest challenge. Rejects on timeout/transport error. */
  async #nonInviteRequest(method: "BYE" | "OPTIONS" | "UPDATE", extraHeaders: readonly [string, string][] = []): Promise<SipResponse> {
    const dialog = this.#dialog;
    if (dialog === null) throw Object.assign(new Error("no dialog"), { sipStatus: 481 });
    const flow = await this.#flowForDialog();
    let challenged = 0;
    for (;;) {
      const request = dialog.createRequest(method);
      if (method === "OPTIONS") request.headers.append("accept", "application/sdp");
      if (method === "UPDATE") request.headers.append("contact", this.#contact(flow));
      for (const [name, value] of extraHeaders) request.headers.append(name, value);
      this.#addVia(request, flow);
      this.#authorize(request);
      const response = await new Promise<SipResponse>((resolve, reject) => {
        this.#host.startClientTransaction(request, flow, {
          onResponse: (r) => {
            if (r.status >= 200) resolve(r);
          },
          onRequestTimeout: () => reject(Object.assign(new Error("Request Timeout"), { sipStatus: 408 })),
          onTransportError: (error) => reject(Object.assign(error, { sipStatus: 503 })),
        });
      });
      if ((response.status === 401 || response.status === 407) && challenged < 2 && this.#answerChallenge(response, request)) {
        challenged++;
        continue;
      }
      return response;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Requests from the far end (routed here by the user agent)

  /** An in-dialog request (not ACK, not CANCEL) with its server transaction. */
  receiveRequest(request: SipRequest, tx: ServerTransaction, _source: SipSource): void {
    const dialog = this.#dialog;
    const fromTag = tagOf(request.headers.get("from"));
    const toTag = tagOf(request.headers.get("to"));
    if (dialog === null || this.#state === SipCallState.Terminated || fromTag !== dialog.id.remoteTag || toTag !== dialog.id.localTag) {
      tx.respond(this.#response(request, 481));
      return;
    }
    if (!dialog.acceptRemoteSeq(cseqOf(request).seq)) {
      tx.respond(this.#response(request, 500, "CSeq out of order"));
      return;
    }
    switch (request.method) {
      case "BYE": {
        tx.respond(this.#response(request, 200));
        const uas = this.#uas;
        if (uas !== null && this.#state === SipCallState.Early) {
          // §15.1.2: the pending INVITE gets 487; an unACKed 200 is no longer retransmitted.
          if (!uas.finalSent) {
            uas.finalSent = true;
            this.#timers.cancel("answer");
            uas.tx.respond(this.#response(uas.invite, 487));
          } else uas.tx.ackReceived();
          this.#incomingInvite = null;
          this.#afterIncomingAck.splice(0);
        }
        if (this.#state === SipCallState.Terminating) return;
        const reason = parseReasonHeader(request.headers.get("reason"));
        this.#emit({ type: "remoteBye", reason });
        this.#state = SipCallState.Terminating;
        this.#finishReinvite({ result: "ended" });
        this.#complete("remote", reason);
        return;
      }
      case "OPTIONS": {
        const response = this.#response(request, 200);
        response.headers.append("accept", "application/sdp");
        tx.respond(response);
        this.#emit({ type: "requestReceived", method: "OPTIONS" });
        return;
      }
      case "INFO":
        tx.respond(this.#response(request, 200));
        this.#emit({ type: "requestReceived", method: "INFO" });
        return;
      case "INVITE":
      case "UPDATE":
        this.#receiveOffer(request, tx);
        return;
      default:
        tx.respond(this.#response(request, 501));
    }
  }

  /** The far end's re-INVITE or UPDATE (RFC 3311): a session refresh or a new offer. */
  #receiveOffer(request: SipRequest, tx: ServerTransaction): void {
    const method = request.method as "INVITE" | "UPDATE";
    if (this.#uas !== null && this.#uas.finalSent && this.#state === SipCallState.Early) {
      // Our 200 is not ACKed yet (the ACK may be lost): not now, but the dialog lives (§14.2).
      const response = this.#response(request, 500, "Server Internal Error");
      response.headers.append("retry-after", "1");
      tx.respond(response);
      return;
    }
    if (this.#state !== SipCallState.Confirmed) {
      // We have sent BYE: the dialog is over for us.
      tx.respond(this.#response(request, 481));
      return;
    }
    // §14.2: "A UAS that receives a second INVITE before it sends the final response to a first
    // INVITE with a lower CSeq sequence number on the same dialog MUST return a 500"; one that
    // receives an INVITE while its own INVITE is pending "MUST return a 491".
    if (this.#ourInvitePending()) {
      tx.respond(this.#response(request, 491));
      return;
    }
    if (method === "INVITE" && this.#incomingInvite !== null && !this.#incomingInvite.tx.acked) {
      tx.respond(this.#response(request, 500, "Server Internal Error"));
      return;
    }
    const refresh = this.#answerRefresh(request);
    if ("minSe" in refresh) {
      const tooSmall = this.#response(request, 422, "Session Interval Too Small");
      tooSmall.headers.append("min-se", String(refresh.minSe));
      tx.respond(tooSmall);
      return;
    }
    if (request.body === "") {
      if (method === "UPDATE") {
        this.#respondWithSdp(request, tx, null, refresh.headers);
        this.#emit({ type: "sessionRefreshed", method, sdpChanged: false });
      } else {
        // Offer in our 2xx, answer in the ACK (RFC 3264 via RFC 3261 §13.3.1).
        this.#respondWithSdp(request, tx, this.#sdp.describe(this.#localLines), refresh.headers);
        this.#trackIncomingInvite(tx, true);
      }
      return;
    }
    if (!isSdp(request)) {
      const response = this.#response(request, 415);
      response.headers.append("accept", "application/sdp");
      tx.respond(response);
      return;
    }
    let offer: SessionDescription;
    try {
      offer = parseSdp(sdpOf(request)!);
    } catch {
      tx.respond(this.#response(request, 488, "Not Acceptable Here (SDP does not parse)"));
      return;
    }
    const origin = originKey(offer);
    if (origin === this.#lastRemoteOrigin) {
      // RFC 3264 §8: unchanged version, unchanged session. Answer with what we have.
      this.#respondWithSdp(request, tx, this.#sdp.describe(this.#localLines), refresh.headers);
      if (method === "INVITE") this.#trackIncomingInvite(tx, false);
      this.#emit({ type: "sessionRefreshed", method, sdpChanged: false });
      return;
    }
    const answer = answerOffer(offer, {
      ports: this.options.localMedia,
      t38: this.options.t38,
      codecs: this.#codecs,
      telephoneEventPayloadType: this.options.telephoneEvent ? TELEPHONE_EVENT_PT : null,
      t38Capabilities: this.#host.t38Capabilities,
    });
    if (answer === null) {
      tx.respond(this.#response(request, 488));
      return;
    }
    this.#lastRemoteOrigin = origin;
    this.#localLines = answer.media;
    this.#respondWithSdp(request, tx, this.#sdp.describe(answer.media), refresh.headers);
    if (method === "INVITE") this.#trackIncomingInvite(tx, false);
    this.#applyRemoteMedia(answer.negotiated, method);
  }

  #applyRemoteMedia(media: NegotiatedMedia, method: "INVITE" | "UPDATE"): void {
    const previous = this.#media;
    if (sameMedia(previous, media)) {
      this.#emit({ type: "sessionRefreshed", method, sdpChanged: true });
      return;
    }
    this.#media = media;
    if (media.kind === "t38" && previous?.kind !== "t38") {
      this.#timers.cancel("t38-delay");
      this.#emit({ type: "t38Switched", media, initiatedBy: "remote" });
      // A switch of ours waiting (glare) is done: the far end's got there first.
      if (this.#reinvite?.purpose === "t38" && !this.#ourInvitePending()) {
        this.#finishReinvite({ result: "switched", media });
      }
    } else {
      this.#emit({ type: "mediaChanged", media });
    }
  }

  #trackIncomingInvite(tx: ServerTransaction, answerInAck: boolean): void {
    this.#incomingInvite = { tx, answerInAck };
  }

  /** The ACK for our 2xx to the far end's re-INVITE. */
  receiveAck(request: SipRequest): void {
    const incoming = this.#incomingInvite;
    if (incoming === null || cseqOf(request).seq !== cseqOf(incoming.tx.request).seq) return;
    incoming.tx.ackReceived();
    this.#incomingInvite = null;
    if (incoming.answerInAck && request.body !== "" && isSdp(request)) {
      try {
        const session = parseSdp(sdpOf(request)!);
        const media = readNegotiatedMedia(session, this.#codecs);
        this.#lastRemoteOrigin = originKey(session);
        if (media !== null && (media.kind === "audio" || this.options.t38)) this.#applyRemoteMedia(media, "INVITE");
      } catch {
        // A bad answer in an ACK cannot be refused (§13.2.1); keep the session as it was.
      }
    } else if (incoming.answerInAck) {
      this.#emit({ type: "sessionRefreshed", method: "INVITE", sdpChanged: false });
    }
    for (const fn of this.#afterIncomingAck.splice(0)) fn();
  }

  /** §13.3.1.4: no ACK for our 2xx within 64*T1 — end the session with BYE. */
  ackTimedOut(tx: ServerTransaction): void {
    if (this.#incomingInvite?.tx !== tx) return;
    const initial = this.#uas !== null && this.#uas.tx === tx;
    if (initial && this.#state === SipCallState.Terminating) {
      // hangup() waited for the ACK of our 200, which never came: now the BYE may go.
      this.#incomingInvite = null;
      for (const fn of this.#afterIncomingAck.splice(0)) fn();
      return;
    }
    if (this.#state !== SipCallState.Confirmed && !(initial && this.#state === SipCallState.Early)) return;
    this.#incomingInvite = null;
    this.#afterIncomingAck.splice(0);
    this.#state = SipCallState.Terminating;
    const what = initial ? "No ACK for our 200 to the INVITE" : "No ACK for our 2xx to the re-INVITE";
    // The call ends now: a caller that never ACKed (a half-open or forged INVITE) will not answer
    // the BYE either, and waiting for its timeout would hold the channel another 64*T1.
    void this.#sendBye();
    this.#fail({ sipStatus: null, reasonPhrase: what, phase: initial ? SipFailurePhase.Answer : SipFailurePhase.Reinvite, cause: SipFailureCause.NoAck, answered: true });
  }

  /** A 2xx to our INVITE that arrived after its transaction ended (stray or retransmitted). */
  receiveStray2xx(response: SipResponse): void {
    if (cseqOf(response).method !== "INVITE") return;
    if (this.#invite !== null && cseqOf(response).seq === cseqOf(this.#invite).seq) this.#on2xx(response);
    else if (this.#reinvite?.request && cseqOf(response).seq === cseqOf(this.#reinvite.request).seq) this.#onReinviteResponse(this.#reinvite, response);
    else if (this.#dialogFlow !== null && this.#dialog !== null && tagOf(response.headers.get("to")) === this.#dialog.id.remoteTag) {
      // A late 2xx to a re-INVITE already handled: re-ACK with its sequence number.
      const ack = this.#dialog.createRequest("ACK", { seq: cseqOf(response).seq });
      this.#addVia(ack, this.#dialogFlow);
      this.#host.sendStateless(ack, this.#dialogFlow);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Helpers

  #respondWithSdp(request: SipRequest, tx: ServerTransaction, sdp: string | null, extraHeaders: readonly [string, string][] = []): void {
    const response = this.#response(request, 200);
    for (const [name, value] of extraHeaders) response.headers.append(name, value);
    const flow = this.#dialogFlow ?? this.#flow;
    if (flow !== null) response.headers.append("contact", this.#contact(flow));
    response.headers.append("allow", ALLOW);
    if (sdp !== null) {
      response.headers.append("content-type", "application/sdp");
      response.body = sdp;
    }
    tx.respond(response);
  }

  #response(request: SipRequest, status: number, reason?: string): SipResponse {
    const response = createResponse(request, status, reason ?? REASON_PHRASES[status] ?? "Unknown", this.#localTag);
    response.headers.append("server", this.#host.userAgent);
    if (status === 200 && request.method === "OPTIONS") response.headers.append("allow", ALLOW);
    return response;
  }

  #audioLine(): MediaDescription {
    return buildAudioMedia({
      port: this.options.localMedia.audioPort,
      codecs: this.#codecs,
      telephoneEventPayloadType: this.options.telephoneEvent ? TELEPHONE_EVENT_PT : null,
    });
  }

  #contact(flow: SipFlow): string {
    const user = parseSipUri(this.options.from).user;
    const host = this.#host.advertisedAddress ?? flow.local.address;
    const h = host.includes(":") ? `[${host}]` : host;
    const transport = flow.protocol === "udp" ? "" : `;transport=${flow.protocol}`;
    return `<sip:${user !== null ? `${user}@` : ""}${h}:${flow.local.port}${transport}>`;
  }

  #addVia(request: SipRequest, flow: SipFlow): void {
    const via = viaFor(flow.protocol, this.#host.advertisedAddress ?? flow.local.address, flow.local.port);
    request.headers.remove("via");
    const rest = request.headers.entries().map(([n, v]) => [n, v] as const);
    const headers = new SipHeaders([["via", via.value], ...rest]);
    if (!headers.has("user-agent")) headers.append("user-agent", this.#host.userAgent);
    request.headers = headers;
  }

  /** The flow for requests inside the dialog: the outbound proxy's, else the next hop of the route set/remote target. */
  async #flowForDialog(): Promise<SipFlow> {
    if (this.#dialogFlow !== null) return this.#dialogFlow;
    if (this.options.outboundProxy !== undefined || this.#dialog === null) {
      this.#dialogFlow = this.#flow!;
      return this.#dialogFlow;
    }
    const hop = await this.#host.resolveHop(this.#dialog.nextHopUri, this.#transport);
    const current = this.#flow!;
    this.#dialogFlow =
      hop.address === current.remote.address && hop.port === current.remote.port && hop.protocol === current.protocol ? current : await this.#host.openFlow(hop);
    return this.#dialogFlow;
  }

  /**
   * Takes a 401/407 challenge for the next request; false when we cannot answer it: no
   * credentials, no digest challenge we support, or the request already carried our answer and
   * the challenge is not `stale` (the credentials were refused).
   */
  #answerChallenge(response: SipResponse, request: SipRequest): boolean {
    const credentials = this.options.credentials;
    if (credentials === undefined || this.#authTries >= MAX_AUTH_TRIES) return false;
    const challenge = selectChallenge(response, credentials);
    if (challenge === null) return false;
    if (request.headers.has(challenge.authorizationHeader) && !challenge.stale) return false;
    this.#authTries++;
    this.#auth = { challenge, nc: 0 };
    return true;
  }

  /** Adds our credentials (answering the last challenge, with the next nonce count). */
  #authorize(request: SipRequest): void {
    const auth = this.#auth;
    const credentials = this.options.credentials;
    if (auth === null || credentials === undefined) return;
    auth.nc++;
    request.headers.set(
      auth.challenge.authorizationHeader,
      sipDigestAuthorization(auth.challenge.challenge, { method: request.method, uri: request.uri }, credentials, undefined, auth.nc),
    );
  }

  #copyAuthorization(from: SipRequest, to: SipRequest): void {
    for (const name of ["authorization", "proxy-authorization"]) {
      const value = from.headers.get(name);
      if (value !== undefined) to.headers.set(name, value);
    }
  }

  #emit(event: SipCallEvent): void {
    this.#events.push(event);
    for (const listener of [...this.#listeners]) {
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

  #fail(failure: Omit<SipCallFailure, "result" | "reason" | "answered" | "setupMs" | "credentialsSent"> & { reason?: SipReason | null; answered?: boolean }): void {
    if (this.#outcome !== null) return;
    const answered = failure.answered ?? this.#answeredAt !== 0;
    const outcome: SipCallFailure = {
      result: "failed",
      sipStatus: failure.sipStatus,
      reasonPhrase: failure.reasonPhrase,
      phase: failure.phase,
      cause: failure.cause,
      reason: failure.reason ?? null,
      answered,
      credentialsSent: this.#authTries > 0,
      setupMs: this.#answeredAt !== 0 ? this.#answeredAt - this.#inviteSentAt : null,
    };
    this.#emit({ type: "failed", failure: outcome });
    this.#end(outcome);
  }

  #complete(endedBy: "local" | "remote", reason: SipReason | null): void {
    if (this.#outcome !== null) return;
    this.#end({
      result: "completed",
      endedBy,
      setupMs: this.#answeredAt - this.#inviteSentAt,
      connectedMs: this.#host.clock.now() - this.#answeredAt,
      reason,
    });
  }

  #end(outcome: SipCallOutcome): void {
    this.#outcome = outcome;
    // An answered call that ends before the ACK: our 200 is not retransmitted any more.
    if (this.#uas?.finalSent && !this.#uas.tx.acked) this.#uas.tx.ackReceived();
    this.#state = SipCallState.Terminated;
    this.#timers.cancelAll();
    this.options.signal?.removeEventListener("abort", this.#onAbort);
    const pending = this.#reinvite;
    this.#reinvite = null;
    pending?.resolve({ result: "ended" });
    for (const r of this.#afterReinvite.splice(0)) r({ result: "ended" });
    this.#emit({ type: "ended", outcome });
    this.#resolveOutcome(outcome);
    this.#host.callEnded(this);
  }
}

/** The methods a request or response says its sender allows (Allow), upper-case. */
function allowOf(message: SipRequest | SipResponse): string[] {
  return message.headers.getList("allow").map((m) => m.trim().toUpperCase());
}

/** The body carries a session description (alone or as a part of a multipart body: message-body.ts). */
function isSdp(message: SipRequest | SipResponse): boolean {
  return sdpOf(message) !== null;
}

/** The o= line's identity and version: equal means "unchanged" (RFC 3264 §8). */
function originKey(session: SessionDescription): string {
  const o = session.origin;
  return `${o.username} ${o.sessionId} ${o.sessionVersion} ${o.address}`;
}

/** The URI of a From/To/Contact value, or null when absent or unreadable. */
function parseNameAddrSafe(value: string | undefined): string | null {
  if (value === undefined) return null;
  try {
    return parseNameAddr(value).uri;
  } catch {
    return null;
  }
}

function sipUriOrNull(uri: string | null): string | null {
  if (uri === null) return null;
  try {
    parseSipUri(uri);
    return uri;
  } catch {
    return null;
  }
}

/** `host`, `host:port` or a SIP URI → a SIP URI. */
function proxyUri(proxy: string): SipUri {
  return parseSipUri(/^sips?:/i.test(proxy) ? proxy : `sip:${proxy}`);
}

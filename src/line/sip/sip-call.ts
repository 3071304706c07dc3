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
 *
 * The parts, one concern a file, over the state they share (call-state.ts):
 *  - call-placing.ts: the INVITE we send, its hops, provisionals, 2xx and ACK, CANCEL; prack.ts:
 *    PRACK for its reliable provisionals (RFC 3262).
 *  - call-answering.ts: the far end's INVITE answered (180, 200, the ACK), or refused; its CANCEL.
 *  - media-offers.ts: re-INVITE and UPDATE offers either way (the T.38 switch, glare).
 *  - session-refresh.ts: the session timer's clocks and refreshes (RFC 4028).
 *  - in-dialog-requests.ts: the far end's BYE, OPTIONS, INFO, re-INVITE/UPDATE and ACKs;
 *    non-invite-requests.ts: our BYE, OPTIONS and UPDATE.
 *  - hangup.ts: ending the call from our side.
 * This class is their one face: it builds them, wires them, and hands each call of the user agent
 * and of the fax line to the part it belongs to.
 */
import { CallAnswering } from "./call-answering.ts";
import { CallPlacing } from "./call-placing.ts";
import { CallShared, proxyUri, type AnswerCallOptions, type CallHost, type Listener, type PlaceCallOptions, type SipCallState } from "./call-state.ts";
import { Hangup } from "./hangup.ts";
import { InDialogRequests } from "./in-dialog-requests.ts";
import { MediaOffers } from "./media-offers.ts";
import { ping } from "./non-invite-requests.ts";
import { Prack } from "./prack.ts";
import { SessionRefresh } from "./session-refresh.ts";
import type { SipCallEvent, SipCallEventOf, SipCallEventType, SipCallOutcome, T38SwitchResult } from "./sip-call-events.ts";
import type { SipRequest, SipResponse } from "./sip-message.ts";
import type { NegotiatedMedia } from "./sdp.ts";
import type { ServerTransaction } from "./server-transaction.ts";
import { parseNameAddr, parseSipUri } from "./sip-uri.ts";
import type { SipFlow, SipSource } from "./transports.ts";

export { ALLOW, SipCallState, type AnswerCallOptions, type PlaceCallOptions } from "./call-state.ts";

/** What a call needs from the user agent that runs it. */
export interface SipCallHost extends CallHost {
  callEnded(call: SipCall): void;
}

export class SipCall {
  readonly callId: string;
  readonly options: PlaceCallOptions;
  readonly outcome: Promise<SipCallOutcome>;
  readonly #call: CallShared;
  readonly #placing: CallPlacing;
  readonly #answering: CallAnswering;
  readonly #offers: MediaOffers;
  readonly #inDialog: InDialogRequests;
  readonly #hangup: Hangup;

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
    this.options = options;
    this.callId = callId;
    const call = new CallShared(host, options, callId, { abort: () => void this.hangup(), ended: () => host.callEnded(this) });
    this.#call = call;
    this.outcome = call.outcomePromise;
    const refresh: SessionRefresh = new SessionRefresh(call, {
      sendReinvite: () => offers.sendReinvite(),
      reinviteEndsDialog: (sipStatus, reasonPhrase, cause, sendBye) => offers.reinviteEndsDialog(sipStatus, reasonPhrase, cause, sendBye),
    });
    const offers: MediaOffers = new MediaOffers(call, refresh);
    this.#offers = offers;
    this.#placing = new CallPlacing(call, new Prack(call), offers, refresh);
    this.#answering = new CallAnswering(call, offers, refresh);
    this.#inDialog = new InDialogRequests(call, offers);
    this.#hangup = new Hangup(call, this.#placing);
    if (incoming !== undefined) this.#answering.start(incoming);
  }

  /** True for a call we answered. */
  get incoming(): boolean {
    return this.#call.uas !== null;
  }

  /** The far end's INVITE, for a call we answered. */
  get incomingInvite(): SipRequest | null {
    return this.#call.uas?.invite ?? null;
  }

  get state(): SipCallState {
    return this.#call.state;
  }

  /** The media in use: null until answered. */
  get media(): NegotiatedMedia | null {
    return this.#call.media;
  }

  /** Every event so far, in order. */
  get events(): readonly SipCallEvent[] {
    return this.#call.events;
  }

  /** Listens to every event; returns the function that stops listening. */
  onEvent(listener: Listener): () => void {
    this.#call.listeners.add(listener);
    return () => this.#call.listeners.delete(listener);
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
      const past = this.#call.events.find((e) => e.type === type);
      if (past !== undefined) return Promise.resolve(past as SipCallEventOf<K>);
    }
    if (this.#call.outcome !== null) return Promise.resolve(null);
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

  /** Sends the INVITE (call-placing.ts). Called once by the user agent. */
  start(): Promise<void> {
    return this.#placing.start();
  }

  /** The far end's CANCEL for the INVITE we are answering (call-answering.ts); true when it matched. */
  receiveCancel(): boolean {
    return this.#answering.receiveCancel();
  }

  /**
   * Ends the call at once without a word to the far end: for a user agent that closes with
   * requests still unanswered (their transactions are gone, so their answers would never come).
   */
  abandon(): void {
    this.#hangup.abandon();
  }

  /**
   * Ends the call: CANCEL before the answer (the outcome is then a failure with cause
   * "cancelled"), BYE after it. Resolves with the outcome.
   */
  hangup(): Promise<SipCallOutcome> {
    return this.#hangup.hangup();
  }

  /**
   * Offers T.38 in a re-INVITE (media-offers.ts). Resolves "switched" when the far end accepts,
   * "refused" when it answers 488/415/606 (or another non-2xx that leaves the session as it was;
   * the call stays on audio), "ended" when the call ends first. Already on T.38: resolves
   * "switched" at once.
   */
  switchToT38(): Promise<T38SwitchResult> {
    return this.#offers.switchToT38();
  }

  /** Sends OPTIONS inside the dialog (a keep-alive); resolves with the final status (408 on timeout). */
  ping(): Promise<{ sipStatus: number; reasonPhrase: string }> {
    return ping(this.#call);
  }

  /** An in-dialog request (not ACK, not CANCEL) with its server transaction (in-dialog-requests.ts). */
  receiveRequest(request: SipRequest, tx: ServerTransaction, _source: SipSource): void {
    this.#inDialog.receiveRequest(request, tx);
  }

  /** The ACK for our 2xx to the far end's INVITE or re-INVITE. */
  receiveAck(request: SipRequest): void {
    this.#inDialog.receiveAck(request);
  }

  /** §13.3.1.4: no ACK for our 2xx within 64*T1 — end the session with BYE. */
  ackTimedOut(tx: ServerTransaction): void {
    this.#inDialog.ackTimedOut(tx);
  }

  /** A 2xx to our INVITE that arrived after its transaction ended (stray or retransmitted). */
  receiveStray2xx(response: SipResponse): void {
    this.#placing.receiveStray2xx(response);
  }
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

/**
 * Placing a call (the UAC side of the INVITE, RFC 3261 §13.2 and §17.1.1): the INVITE to the
 * first reachable hop (RFC 3263 §4.3: the next one on a transport error, a timeout or 503 before
 * anything rang), provisionals (early state; reliable ones PRACKed by prack.ts), 401/407 digest
 * answers, 422 (RFC 4028 §7.1), the 2xx and its ACK (and the ACK and BYE for a stray 2xx from
 * another fork, §13.2.2.4), the answer SDP, the ring timeout, and CANCEL (§9.1: only after a
 * provisional; timer B bounds the wait).
 */
import type { InviteClientTransaction } from "./client-transaction.ts";
import { ALLOW, allowOf, isSdp, originKey, proxyUri, SipCallState, type CallShared } from "./call-state.ts";
import { Dialog } from "./dialog.ts";
import type { MediaOffers } from "./media-offers.ts";
import { sendBye } from "./non-invite-requests.ts";
import type { Prack } from "./prack.ts";
import { parseReasonHeader, SipFailureCause, SipFailurePhase } from "./sip-call-events.ts";
import { cseqOf, SipHeaders, tagOf, type SipRequest, type SipResponse } from "./sip-message.ts";
import { sdpOf } from "./message-body.ts";
import { SUPPORTED } from "./request-checks.ts";
import { parseSdp, readNegotiatedMedia, type NegotiatedMedia, type SessionDescription } from "./sdp.ts";
import { listsOption, readMinSe, timerFromResponse } from "./session-timer.ts";
import type { SessionRefresh } from "./session-refresh.ts";
import { formatSipUri, parseSipUri } from "./sip-uri.ts";
import type { SipFlow, SipHop } from "./transports.ts";

export type CancelCause = typeof SipFailureCause.RingTimeout | typeof SipFailureCause.Cancelled;

export class CallPlacing {
  readonly #call: CallShared;
  readonly #prack: Prack;
  readonly #offers: MediaOffers;
  readonly #refresh: SessionRefresh;
  #seq = 1;
  #invite: SipRequest | null = null;
  #inviteTx: InviteClientTransaction | null = null;
  #ackFor2xx: SipRequest | null = null;
  /** The 2xx that answered the INVITE (its SDP is the answer). */
  #last2xx: SipResponse | null = null;
  #provisionalSeen = false;
  #cancelRequested: CancelCause | null = null;
  #cancelSent = false;
  /** The interval a 422 asked for, sent in our next INVITE. */
  #sessionAsk: number | null = null;
  /** RFC 3263: the hops the INVITE may go to, in order, and the one in use. */
  #hops: SipHop[] = [];
  #hopIndex = 0;

  constructor(call: CallShared, prack: Prack, offers: MediaOffers, refresh: SessionRefresh) {
    this.#call = call;
    this.#prack = prack;
    this.#offers = offers;
    this.#refresh = refresh;
  }

  /** Sends the INVITE. Called once by the user agent. */
  async start(): Promise<void> {
    const call = this.#call;
    const o = call.options;
    if (o.signal?.aborted) {
      call.fail({ sipStatus: null, reasonPhrase: "Aborted before dialling", phase: SipFailurePhase.Ring, cause: SipFailureCause.Cancelled });
      return;
    }
    o.signal?.addEventListener("abort", call.onAbort, { once: true });
    try {
      const targetUri = parseSipUri(o.target);
      const hopUri = o.outboundProxy !== undefined ? proxyUri(o.outboundProxy) : targetUri;
      this.#hops = await call.host.resolveHops(hopUri, o.transport);
      // The transport DNS chose for the first hop is the call's (all its hops share it).
      call.transport = this.#hops[0]?.protocol ?? call.transport;
    } catch (error) {
      call.fail({ sipStatus: 503, reasonPhrase: `Service Unavailable (${(error as Error).message})`, phase: SipFailurePhase.Ring, cause: SipFailureCause.Transport });
      return;
    }
    const flow = await this.#reachHop("");
    if (flow === null) return;
    call.flow = flow;
    call.inviteSentAt = call.host.clock.now();
    call.timers.start("ring", o.ringTimeoutMs, () => this.#onRingTimeout());
    this.#sendInvite();
  }

  /**
   * The flow the INVITE goes out on (`#openFirstReachable`), or null when the call ended meanwhile:
   * no hop reachable (503), ended, or hung up before the INVITE left (nothing of it is on the wire
   * there, so the call ends now without waiting for a CANCEL's answer).
   */
  async #reachHop(where: string): Promise<SipFlow | null> {
    const call = this.#call;
    let flow: SipFlow;
    try {
      flow = await this.#openFirstReachable();
    } catch (error) {
      call.fail({ sipStatus: 503, reasonPhrase: `Service Unavailable (${(error as Error).message})`, phase: SipFailurePhase.Ring, cause: SipFailureCause.Transport });
      return null;
    }
    if (call.state === SipCallState.Terminated) return null;
    if (this.#cancelRequested !== null) {
      call.timers.cancel("cancel-guard");
      call.fail({ sipStatus: null, reasonPhrase: `Cancelled before the INVITE was sent${where}`, phase: SipFailurePhase.Ring, cause: this.#cancelRequested });
      return null;
    }
    return flow;
  }

  /** Opens a flow to the current hop, or (connection refused …) to the next ones in turn. */
  async #openFirstReachable(): Promise<SipFlow> {
    for (;;) {
      try {
        return await this.#call.host.openFlow(this.#hops[this.#hopIndex]!);
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
    const call = this.#call;
    // Only while "calling": a 1xx beyond 100 (ringing, early media) means this hop reached the far end.
    if (this.#cancelRequested !== null || call.state !== SipCallState.Calling || call.dialog !== null) return false;
    if (this.#hopIndex + 1 >= this.#hops.length) return false;
    this.#hopIndex++;
    // Another server: its challenge will be its own (an answer to the last one would be refused).
    call.auth = null;
    void (async () => {
      const flow = await this.#reachHop(" to the next target");
      if (flow === null) return;
      call.flow = flow;
      this.#sendInvite();
    })();
    return true;
  }

  #sendInvite(): void {
    const call = this.#call;
    const o = call.options;
    const flow = call.flow!;
    const headers = new SipHeaders();
    if (o.outboundProxy !== undefined) headers.append("route", `<${formatSipUri({ ...proxyUri(o.outboundProxy), params: new Map([["lr", null]]) })}>`);
    headers.append("max-forwards", "70");
    const fromUri = parseSipUri(o.from);
    headers.append("from", `${o.fromDisplayName !== undefined ? `"${o.fromDisplayName.replace(/(["\\])/g, "\\$1")}" ` : ""}<${formatSipUri(fromUri)}>;tag=${call.localTag}`);
    headers.append("to", `<${o.target}>`);
    headers.append("call-id", call.callId);
    headers.append("cseq", `${this.#seq} INVITE`);
    headers.append("contact", call.contact(flow));
    headers.append("allow", ALLOW);
    headers.append("supported", SUPPORTED);
    if (this.#sessionAsk !== null) {
      headers.append("session-expires", String(this.#sessionAsk));
      headers.append("min-se", String(this.#sessionAsk));
    }
    for (const [name, value] of o.extraHeaders ?? []) headers.append(name, value);
    headers.append("content-type", "application/sdp");
    const request: SipRequest = { kind: "request", method: "INVITE", uri: o.target, headers, body: call.sdp.describe(call.localLines) };
    call.addVia(request, flow);
    call.authorize(request);
    this.#invite = request;
    this.#inviteTx = call.host.startClientTransaction(request, flow, {
      onResponse: (response) => this.#onInviteResponse(response),
      onRequestTimeout: () => this.#onInviteFailure(408, "Request Timeout", SipFailureCause.Timeout),
      onTransportError: (error) => this.#onInviteFailure(503, `Service Unavailable (${error.message})`, SipFailureCause.Transport),
    }) as InviteClientTransaction;
  }

  #onInviteResponse(response: SipResponse): void {
    const call = this.#call;
    const status = response.status;
    if (status < 200) {
      if (call.state === SipCallState.Terminated) return;
      this.#provisionalSeen = true;
      if (status > 100 && call.state === SipCallState.Calling && tagOf(response.headers.get("to")) !== null) call.state = SipCallState.Early;
      let earlyMedia: NegotiatedMedia | null = null;
      if (response.body !== "" && isSdp(response)) {
        try {
          earlyMedia = readNegotiatedMedia(parseSdp(sdpOf(response)!), call.codecs);
        } catch {
          earlyMedia = null;
        }
      }
      if (status > 100 && listsOption(response.headers, "require", "100rel")) this.#prack.send(this.#invite, response);
      call.emit({ type: "provisional", sipStatus: status, reasonPhrase: response.reason, earlyMedia });
      // §9.1: a CANCEL waits for a provisional response.
      if (this.#cancelRequested !== null) this.#sendCancel();
      return;
    }
    if (status < 300) {
      this.#on2xx(response);
      return;
    }
    call.timers.cancel("cancel-guard");
    if (status === 503 && this.#tryNextHop()) return;
    if (status === 422 && this.#sessionAsk === null && this.#cancelRequested === null && call.state !== SipCallState.Terminated) {
      // RFC 4028 §7.1: "Session Interval Too Small": ask again with the far end's Min-SE.
      const minSe = readMinSe(response.headers);
      if (minSe !== null) {
        this.#sessionAsk = minSe;
        this.#seq++;
        this.#sendInvite();
        return;
      }
    }
    if ((status === 401 || status === 407) && this.#cancelRequested === null && call.state !== SipCallState.Terminated) {
      if (call.answerChallenge(response, this.#invite!)) {
        this.#seq++;
        this.#sendInvite();
        return;
      }
      call.fail({
        sipStatus: status,
        reasonPhrase: response.reason,
        phase: SipFailurePhase.Ring,
        cause: SipFailureCause.Auth,
        reason: parseReasonHeader(response.headers.get("reason")),
      });
      return;
    }
    const cause = status === 487 && this.#cancelRequested !== null ? this.#cancelRequested : SipFailureCause.Rejected;
    call.fail({ sipStatus: status, reasonPhrase: response.reason, phase: SipFailurePhase.Ring, cause, reason: parseReasonHeader(response.headers.get("reason")) });
  }

  #onInviteFailure(sipStatus: number, reasonPhrase: string, cause: SipFailureCause): void {
    if (this.#tryNextHop()) return;
    this.#call.fail({ sipStatus, reasonPhrase, phase: SipFailurePhase.Ring, cause: this.#cancelRequested ?? cause });
  }

  #on2xx(response: SipResponse): void {
    const call = this.#call;
    const toTag = tagOf(response.headers.get("to"));
    if (call.dialog !== null) {
      if (toTag === call.dialog.id.remoteTag) {
        // A retransmitted 2xx: our ACK was lost (§13.2.2.4: ACK every 2xx).
        if (this.#ackFor2xx !== null && call.dialogFlow !== null) call.host.sendStateless(this.#ackFor2xx, call.dialogFlow);
      } else {
        // A second 2xx from another fork: ACK it and end that dialog (§13.2.2.4).
        void this.#ackAndByeStray(response);
      }
      return;
    }
    if (call.state === SipCallState.Terminated) {
      void this.#ackAndByeStray(response);
      return;
    }
    call.timers.cancel("ring");
    call.timers.cancel("cancel-guard");
    this.#last2xx = response;
    // Our PRACKs took sequence numbers in the early dialog; the confirmed one goes on from them.
    const dialog = new Dialog({ invite: this.#invite!, response, localSeq: Math.max(this.#seq, this.#prack.localSeq) });
    call.dialog = dialog;
    call.answeredAt = call.host.clock.now();
    const ack = dialog.createRequest("ACK", { seq: cseqOf(this.#invite!).seq });
    call.copyAuthorization(this.#invite!, ack);
    void this.#sendAckFor2xx(ack);
  }

  async #sendAckFor2xx(ack: SipRequest): Promise<void> {
    const call = this.#call;
    let flow: SipFlow;
    try {
      flow = await call.flowForDialog();
    } catch (error) {
      call.fail({ sipStatus: 503, reasonPhrase: `Service Unavailable (${(error as Error).message})`, phase: SipFailurePhase.Answer, cause: SipFailureCause.Transport, answered: true });
      return;
    }
    call.addVia(ack, flow);
    this.#ackFor2xx = ack;
    call.host.sendStateless(ack, flow);
    if (this.#cancelRequested !== null || call.state === SipCallState.Terminated) {
      // The answer crossed our CANCEL (or hangup): end the call we no longer want.
      const cause = this.#cancelRequested ?? SipFailureCause.Cancelled;
      call.state = SipCallState.Terminating;
      await sendBye(call);
      call.fail({ sipStatus: 487, reasonPhrase: "Answered after CANCEL; hung up", phase: SipFailurePhase.Ring, cause, answered: true });
      return;
    }
    this.#completeAnswer();
  }

  /** Reads the answer SDP of the 2xx to the INVITE and confirms the call. */
  #completeAnswer(): void {
    const call = this.#call;
    const response = this.#last2xx;
    let media: NegotiatedMedia | null = null;
    let session: SessionDescription | null = null;
    if (response !== null && response.body !== "" && isSdp(response)) {
      try {
        session = parseSdp(sdpOf(response)!);
        media = readNegotiatedMedia(session, call.codecs);
      } catch {
        media = null;
      }
    }
    if (media === null || media.kind !== "audio") {
      // We offered audio only, so the answer must hold an audio stream with our codec.
      call.state = SipCallState.Terminating;
      void sendBye(call).then(() =>
        call.fail({
          sipStatus: null,
          reasonPhrase: session === null ? "2xx without an SDP answer" : "No audio codec in common",
          phase: SipFailurePhase.Answer,
          cause: SipFailureCause.Media,
          answered: true,
        }),
      );
      return;
    }
    call.lastRemoteOrigin = originKey(session!);
    call.media = media;
    call.localLines = [call.audioLine()];
    call.state = SipCallState.Confirmed;
    this.#refresh.remoteAllow = allowOf(response!);
    this.#refresh.setTimer(timerFromResponse(response!.headers));
    call.emit({ type: "answered", media, setupMs: call.answeredAt - call.inviteSentAt });
    this.#offers.scheduleT38Reinvite();
  }

  #onRingTimeout(): void {
    const call = this.#call;
    if (call.state !== SipCallState.Calling && call.state !== SipCallState.Early) return;
    this.requestCancel(SipFailureCause.RingTimeout);
  }

  /** Cancels the INVITE: CANCEL now when a provisional came, else when one comes (§9.1); 64*T1 at most. */
  requestCancel(cause: CancelCause): void {
    const call = this.#call;
    if (this.#cancelRequested !== null) return;
    this.#cancelRequested = cause;
    if (this.#provisionalSeen) this.#sendCancel();
    // §9.1: "If no final response has been received after 64*T1 seconds, the client SHOULD then
    // consider the original transaction cancelled and SHOULD destroy the client transaction".
    call.timers.start("cancel-guard", 64 * call.host.timers.T1, () => {
      this.#inviteTx?.dispose();
      call.fail({ sipStatus: 408, reasonPhrase: "No final response after CANCEL", phase: SipFailurePhase.Ring, cause });
    });
  }

  /** §9.1: CANCEL copies the INVITE's Request-URI, Call-ID, From, To, CSeq number, top Via and Route. */
  #sendCancel(): void {
    const call = this.#call;
    if (this.#cancelSent || this.#invite === null || call.flow === null || call.dialog !== null) return;
    this.#cancelSent = true;
    const invite = this.#invite;
    const headers = new SipHeaders();
    headers.append("via", invite.headers.getList("via")[0]!);
    for (const route of invite.headers.getAll("route")) headers.append("route", route);
    headers.append("max-forwards", "70");
    headers.append("from", invite.headers.get("from")!);
    headers.append("to", invite.headers.get("to")!);
    headers.append("call-id", call.callId);
    headers.append("cseq", `${cseqOf(invite).seq} CANCEL`);
    headers.append("user-agent", call.host.userAgent);
    const cancel: SipRequest = { kind: "request", method: "CANCEL", uri: invite.uri, headers, body: "" };
    call.host.startClientTransaction(cancel, call.flow, {
      // The INVITE's 487 (or 2xx) decides the outcome; the CANCEL's own response does not.
      onResponse: () => undefined,
      onRequestTimeout: () => undefined,
      onTransportError: () => undefined,
    });
  }

  async #ackAndByeStray(response: SipResponse): Promise<void> {
    const call = this.#call;
    if (this.#invite === null) return;
    const stray = new Dialog({ invite: this.#invite, response, localSeq: cseqOf(this.#invite).seq });
    try {
      const hop = await call.host.resolveHop(call.options.outboundProxy !== undefined ? proxyUri(call.options.outboundProxy) : stray.nextHopUri, call.transport);
      const flow = await call.host.openFlow(hop);
      const ack = stray.createRequest("ACK", { seq: cseqOf(this.#invite).seq });
      call.addVia(ack, flow);
      call.host.sendStateless(ack, flow);
      const bye = stray.createRequest("BYE");
      call.addVia(bye, flow);
      call.host.startClientTransaction(bye, flow, { onResponse: () => undefined, onRequestTimeout: () => undefined, onTransportError: () => undefined });
    } catch {
      // Best effort: the far end's timer H ends that dialog anyway.
    }
  }

  /** A 2xx to our INVITE that arrived after its transaction ended (stray or retransmitted). */
  receiveStray2xx(response: SipResponse): void {
    const call = this.#call;
    if (cseqOf(response).method !== "INVITE") return;
    if (this.#invite !== null && cseqOf(response).seq === cseqOf(this.#invite).seq) this.#on2xx(response);
    else if (call.reinvite?.request && cseqOf(response).seq === cseqOf(call.reinvite.request).seq) this.#offers.onReinviteResponse(call.reinvite, response);
    else if (call.dialogFlow !== null && call.dialog !== null && tagOf(response.headers.get("to")) === call.dialog.id.remoteTag) {
      // A late 2xx to a re-INVITE already handled: re-ACK with its sequence number.
      const ack = call.dialog.createRequest("ACK", { seq: cseqOf(response).seq });
      call.addVia(ack, call.dialogFlow);
      call.host.sendStateless(ack, call.dialogFlow);
    }
  }
}

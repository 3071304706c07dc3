/**
 * Offer/answer (RFC 3264) in a confirmed call: what moves it between G.711 audio and T.38.
 *  - Our re-INVITE (`switchToT38`, and the re-INVITEs back to audio and of a session refresh):
 *    a 2xx is ACKed and its answer applied; 491 is retried after the glare wait (RFC 3261
 *    §14.1); 408/481/timeout end the dialog; any other non-2xx leaves the session as it was.
 *  - The far end's re-INVITE or UPDATE (RFC 3311) with an offer: a refresh when its SDP version
 *    is unchanged, else answered (`answerOffer`, sdp.ts) or refused with 488.
 * The session-timer side of both is session-refresh.ts's; the ACK of the far end's re-INVITE
 * reaches `applyRemoteMedia` through in-dialog-requests.ts.
 */
import type { InviteClientTransaction } from "./client-transaction.ts";
import { ALLOW, isSdp, originKey, SipCallState, TELEPHONE_EVENT_PT, type CallShared, type PendingReinvite } from "./call-state.ts";
import { sendBye } from "./non-invite-requests.ts";
import { SipFailureCause, SipFailurePhase, type T38SwitchResult } from "./sip-call-events.ts";
import { cseqOf, type SipRequest, type SipResponse } from "./sip-message.ts";
import { sdpOf } from "./message-body.ts";
import type { ServerTransaction } from "./server-transaction.ts";
import {
  answerOffer,
  buildT38Media,
  parseSdp,
  readNegotiatedMedia,
  readT38,
  sameMedia,
  t38OfferParams,
  type NegotiatedMedia,
  type SessionDescription,
  type T38Media,
} from "./sdp.ts";
import { readMinSe, refreshDelayMs, timerFromResponse } from "./session-timer.ts";
import type { SessionRefresh } from "./session-refresh.ts";
import type { SipFlow } from "./transports.ts";

/** RFC 3261 §14.1: "If the UAC … did generate the Call-ID … the UAC MUST wait between 2.1 and 4 seconds". */
const GLARE_RETRY_MIN_MS = 2100;
const GLARE_RETRY_MAX_MS = 4000;
/** §14.1: "If the UAC … did not generate the Call-ID … the UAC MUST wait between 0 and 2 seconds". */
const GLARE_RETRY_OTHER_MAX_MS = 2000;
const MAX_GLARE_RETRIES = 3;
/** Statuses that refuse T.38 outright; the session stays on audio. */
const T38_REFUSAL_STATUSES = new Set([488, 415, 606]);

export class MediaOffers {
  readonly #call: CallShared;
  readonly #refresh: SessionRefresh;

  constructor(call: CallShared, refresh: SessionRefresh) {
    this.#call = call;
    this.#refresh = refresh;
  }

  /** Once the call is up on audio: our own T.38 re-INVITE after `t38ReinviteDelayMs`, unless the far end switched first. */
  scheduleT38Reinvite(): void {
    const call = this.#call;
    const delay = call.options.t38ReinviteDelayMs ?? null;
    if (call.options.t38 && delay !== null) {
      call.timers.start("t38-delay", delay, () => {
        if (call.state === SipCallState.Confirmed && call.media?.kind === "audio" && call.reinvite === null) void this.switchToT38();
      });
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
    const call = this.#call;
    if (!call.options.t38) return Promise.reject(new Error("switchToT38() on a call placed with t38: false"));
    if (call.media?.kind === "t38") return Promise.resolve({ result: "switched", media: call.media });
    if (call.state !== SipCallState.Confirmed) return Promise.resolve({ result: "ended" });
    if (call.reinvite !== null) return new Promise((resolve) => call.afterReinvite.push(resolve));
    return new Promise((resolve) => {
      call.timers.cancel("t38-delay");
      call.reinvite = {
        purpose: "t38",
        lines: [buildT38Media(call.options.localMedia.t38Port, t38OfferParams(call.host.t38Capabilities))],
        resolve,
        glareRetries: 0,
        authTries: 0,
        request: null,
        ack: null,
        transaction: null,
      };
      call.runWhenIdle(() => void this.sendReinvite());
    });
  }

  /** Sends the re-INVITE pending in `CallShared.reinvite` (to T.38, back to audio, or a refresh). */
  async sendReinvite(): Promise<void> {
    const call = this.#call;
    const pending = call.reinvite;
    if (pending === null || call.state !== SipCallState.Confirmed || call.dialog === null) {
      this.finishReinvite({ result: "ended" });
      return;
    }
    let flow: SipFlow;
    try {
      flow = await call.flowForDialog();
    } catch (error) {
      this.reinviteEndsDialog(503, `Service Unavailable (${(error as Error).message})`, SipFailureCause.Transport, false);
      return;
    }
    // The call may have ended (a BYE, a failed refresh) while the flow was found.
    if (call.reinvite !== pending || call.state !== SipCallState.Confirmed || call.dialog === null) {
      if (call.reinvite === pending) this.finishReinvite({ result: "ended" });
      return;
    }
    const request = call.dialog.createRequest("INVITE");
    request.headers.append("contact", call.contact(flow));
    request.headers.append("allow", ALLOW);
    for (const [name, value] of this.#refresh.refreshHeaders()) request.headers.append(name, value);
    request.headers.append("content-type", "application/sdp");
    request.body = call.sdp.describe(pending.lines);
    call.addVia(request, flow);
    call.authorize(request);
    pending.request = request;
    pending.transaction = call.host.startClientTransaction(request, flow, {
      onResponse: (response) => this.onReinviteResponse(pending, response),
      onRequestTimeout: () => this.reinviteEndsDialog(408, "Request Timeout", SipFailureCause.Timeout, true),
      onTransportError: (error) => this.reinviteEndsDialog(503, `Service Unavailable (${error.message})`, SipFailureCause.Transport, false),
    }) as InviteClientTransaction;
  }

  /** A response to our re-INVITE `pending` (from its transaction, or a 2xx that came after it ended). */
  onReinviteResponse(pending: PendingReinvite, response: SipResponse): void {
    const call = this.#call;
    const status = response.status;
    if (status < 200) return;
    if (status < 300) {
      if (pending.ack !== null) {
        // Retransmitted 2xx: ACK again.
        if (call.dialogFlow !== null) call.host.sendStateless(pending.ack, call.dialogFlow);
        return;
      }
      const ack = call.dialog!.createRequest("ACK", { seq: cseqOf(pending.request!).seq });
      call.copyAuthorization(pending.request!, ack);
      if (call.dialogFlow !== null) {
        call.addVia(ack, call.dialogFlow);
        call.host.sendStateless(ack, call.dialogFlow);
      }
      pending.ack = ack;
      if (call.reinvite !== pending || call.state !== SipCallState.Confirmed) return;
      this.#applyReinviteAnswer(pending, response);
      return;
    }
    if (call.reinvite !== pending) return;
    if ((status === 401 || status === 407) && call.answerChallenge(response, pending.request!)) {
      void this.sendReinvite();
      return;
    }
    if (status === 491 && pending.glareRetries < MAX_GLARE_RETRIES) {
      pending.glareRetries++;
      // §14.1: the owner of the Call-ID (we, when we placed the call) waits 2.1–4 s, the other side 0–2 s.
      const wait = call.uas === null ? GLARE_RETRY_MIN_MS + call.host.random() * (GLARE_RETRY_MAX_MS - GLARE_RETRY_MIN_MS) : call.host.random() * GLARE_RETRY_OTHER_MAX_MS;
      call.timers.start("glare", wait, () => {
        if (call.reinvite !== pending) return;
        // The far end's own re-INVITE may have switched us meanwhile.
        if (pending.purpose === "t38" && call.media?.kind === "t38") {
          this.finishReinvite({ result: "switched", media: call.media });
          return;
        }
        call.runWhenIdle(() => void this.sendReinvite());
      });
      return;
    }
    if (status === 422 && pending.purpose === "refresh" && this.#refresh.raiseInterval(readMinSe(response.headers))) {
      // RFC 4028 §7.4: refresh again at once with at least the far end's Min-SE.
      this.finishReinvite({ result: "ended" });
      this.#refresh.refresh();
      return;
    }
    if (status === 408 || status === 481) {
      // §14.1: "If the response is a 481 or 408 … the UAC will terminate the dialog."
      this.reinviteEndsDialog(status, response.reason, SipFailureCause.Rejected, status === 408);
      return;
    }
    // §14.1: "If a UA receives a non-2xx final response to a re-INVITE, the session parameters
    // MUST remain unchanged, as if no re-INVITE had been issued."
    this.#refuseT38(pending, status, response.reason);
  }

  #applyReinviteAnswer(pending: PendingReinvite, response: SipResponse): void {
    const call = this.#call;
    let session: SessionDescription | null = null;
    try {
      session = response.body !== "" && isSdp(response) ? parseSdp(sdpOf(response)!) : null;
    } catch {
      session = null;
    }
    // Every re-INVITE of ours refreshes the session (RFC 4028): the 2xx may move the timer.
    // A 2xx without Session-Expires keeps a timer only when we refresh (RFC 4028 §7.2: none is
    // required of the far end then); one it was to refresh is off.
    const sessionTimer = this.#refresh.timer;
    if (sessionTimer !== null) this.#refresh.setTimer(timerFromResponse(response.headers) ?? (sessionTimer.refresher === "local" ? sessionTimer : null));
    if (pending.purpose === "refresh") {
      // Same SDP both ways, as a refresh is; a far end that changed its address anyway is followed.
      const media = session !== null ? readNegotiatedMedia(session, call.codecs) : null;
      if (session !== null) call.lastRemoteOrigin = originKey(session);
      if (media !== null && media.kind === call.media?.kind && !sameMedia(call.media, media)) {
        call.media = media;
        call.emit({ type: "mediaChanged", media });
      }
      this.finishReinvite({ result: "ended" });
      return;
    }
    if (pending.purpose === "restore-audio") {
      const audio = session !== null ? readNegotiatedMedia(session, call.codecs) : null;
      if (session !== null) call.lastRemoteOrigin = originKey(session);
      if (audio !== null && audio.kind === "audio") {
        call.media = audio;
        call.localLines = pending.lines;
      }
      this.finishReinvite({ result: "ended" });
      return;
    }
    const t38 = session !== null ? session.media.map((m) => readT38(session, m)).find((m) => m !== null) ?? null : null;
    if (session !== null) call.lastRemoteOrigin = originKey(session);
    if (t38 === null) {
      // The 2xx rejected the image stream (port 0) or answered without SDP: the session now has
      // no usable stream. Offer audio again, then report the refusal.
      const reason = "T.38 stream rejected in the answer";
      const previous = call.media?.kind === "audio" ? call.media : null;
      call.reinvite = null;
      const restore: PendingReinvite = {
        purpose: "restore-audio",
        lines: [call.audioLine()],
        resolve: () => {
          const audio = call.media?.kind === "audio" ? call.media : previous;
          let result: T38SwitchResult = { result: "ended" };
          if (audio !== null && call.state === SipCallState.Confirmed) {
            call.emit({ type: "t38Refused", sipStatus: response.status, reasonPhrase: reason, media: audio });
            result = { result: "refused", sipStatus: response.status, reasonPhrase: reason, media: audio };
          }
          pending.resolve(result);
          for (const r of call.afterReinvite.splice(0)) r(result);
        },
        glareRetries: 0,
        authTries: 0,
        request: null,
        ack: null,
        transaction: null,
      };
      call.reinvite = restore;
      call.runWhenIdle(() => void this.sendReinvite());
      return;
    }
    // What we speak: their answer's version/EC (≤ our offer), their limits.
    const media: T38Media = t38;
    call.media = media;
    call.localLines = pending.lines;
    call.emit({ type: "t38Switched", media, initiatedBy: "local" });
    this.finishReinvite({ result: "switched", media });
  }

  #refuseT38(pending: PendingReinvite, status: number, reasonPhrase: string): void {
    const call = this.#call;
    if (pending.purpose === "refresh") {
      // §14.1: the session stays as it was; try the refresh again soon.
      this.finishReinvite({ result: "ended" });
      const sessionTimer = this.#refresh.timer;
      if (sessionTimer?.refresher === "local") call.timers.start("session-refresh", Math.min(refreshDelayMs(sessionTimer), 10_000), () => this.#refresh.refresh());
      return;
    }
    if (pending.purpose === "restore-audio") {
      this.finishReinvite({ result: "ended" });
      return;
    }
    const audio = call.media?.kind === "audio" ? call.media : null;
    if (audio === null) {
      this.finishReinvite(call.media?.kind === "t38" ? { result: "switched", media: call.media } : { result: "ended" });
      return;
    }
    const phrase = T38_REFUSAL_STATUSES.has(status) ? reasonPhrase : `${reasonPhrase} (T.38 re-INVITE not accepted)`;
    call.emit({ type: "t38Refused", sipStatus: status, reasonPhrase: phrase, media: audio });
    this.finishReinvite({ result: "refused", sipStatus: status, reasonPhrase: phrase, media: audio });
  }

  /** Ends the re-INVITE under way with `result`; a T.38 switch that waited behind a refresh goes now. */
  finishReinvite(result: T38SwitchResult): void {
    const call = this.#call;
    const pending = call.reinvite;
    call.reinvite = null;
    call.timers.cancel("glare");
    pending?.resolve(result);
    if (pending?.purpose === "t38") for (const r of call.afterReinvite.splice(0)) r(result);
    else if (pending?.purpose === "refresh" && call.afterReinvite.length > 0 && call.state === SipCallState.Confirmed) {
      // A switch to T.38 waited for our refresh: it goes now.
      const waiting = call.afterReinvite.splice(0);
      void this.switchToT38().then((r) => waiting.forEach((w) => w(r)));
    }
  }

  /** Our re-INVITE (or refresh) got 408/481 or none: the dialog is over (BYE when `sendBye`), the call failed in phase "reinvite". */
  reinviteEndsDialog(sipStatus: number, reasonPhrase: string, cause: SipFailureCause, sendByeFirst: boolean): void {
    const call = this.#call;
    if (call.state !== SipCallState.Confirmed) {
      this.finishReinvite({ result: "ended" });
      return;
    }
    // Terminating first: a T.38 switch waiting behind this re-INVITE must not start on a dead dialog.
    call.state = SipCallState.Terminating;
    this.finishReinvite({ result: "ended" });
    const end = (): void => call.fail({ sipStatus, reasonPhrase, phase: SipFailurePhase.Reinvite, cause, answered: true });
    if (sendByeFirst) void sendBye(call).then(end);
    else end();
  }

  // -------------------------------------------------------------------------------------------
  // The far end's offers

  /**
   * The far end's re-INVITE or UPDATE (RFC 3311), in the dialog and in order
   * (in-dialog-requests.ts checked both): a session refresh or a new offer.
   */
  receiveOffer(request: SipRequest, tx: ServerTransaction): void {
    const call = this.#call;
    const method = request.method as "INVITE" | "UPDATE";
    if (call.uas !== null && call.uas.finalSent && call.state === SipCallState.Early) {
      // Our 200 is not ACKed yet (the ACK may be lost): not now, but the dialog lives (§14.2).
      const response = call.response(request, 500, "Server Internal Error");
      response.headers.append("retry-after", "1");
      tx.respond(response);
      return;
    }
    if (call.state !== SipCallState.Confirmed) {
      // We have sent BYE: the dialog is over for us.
      tx.respond(call.response(request, 481));
      return;
    }
    // §14.2: "A UAS that receives a second INVITE before it sends the final response to a first
    // INVITE with a lower CSeq sequence number on the same dialog MUST return a 500"; one that
    // receives an INVITE while its own INVITE is pending "MUST return a 491".
    if (call.ourInvitePending()) {
      tx.respond(call.response(request, 491));
      return;
    }
    if (method === "INVITE" && call.incomingInvite !== null && !call.incomingInvite.tx.acked) {
      tx.respond(call.response(request, 500, "Server Internal Error"));
      return;
    }
    const refresh = this.#refresh.answerRefresh(request);
    if ("minSe" in refresh) {
      const tooSmall = call.response(request, 422, "Session Interval Too Small");
      tooSmall.headers.append("min-se", String(refresh.minSe));
      tx.respond(tooSmall);
      return;
    }
    if (request.body === "") {
      if (method === "UPDATE") {
        call.respondWithSdp(request, tx, null, refresh.headers);
        call.emit({ type: "sessionRefreshed", method, sdpChanged: false });
      } else {
        // Offer in our 2xx, answer in the ACK (RFC 3264 via RFC 3261 §13.3.1).
        call.respondWithSdp(request, tx, call.sdp.describe(call.localLines), refresh.headers);
        this.#trackIncomingInvite(tx, true);
      }
      return;
    }
    if (!isSdp(request)) {
      const response = call.response(request, 415);
      response.headers.append("accept", "application/sdp");
      tx.respond(response);
      return;
    }
    let offer: SessionDescription;
    try {
      offer = parseSdp(sdpOf(request)!);
    } catch {
      tx.respond(call.response(request, 488, "Not Acceptable Here (SDP does not parse)"));
      return;
    }
    const origin = originKey(offer);
    if (origin === call.lastRemoteOrigin) {
      // RFC 3264 §8: unchanged version, unchanged session. Answer with what we have.
      call.respondWithSdp(request, tx, call.sdp.describe(call.localLines), refresh.headers);
      if (method === "INVITE") this.#trackIncomingInvite(tx, false);
      call.emit({ type: "sessionRefreshed", method, sdpChanged: false });
      return;
    }
    const answer = answerOffer(offer, {
      ports: call.options.localMedia,
      t38: call.options.t38,
      codecs: call.codecs,
      telephoneEventPayloadType: call.options.telephoneEvent ? TELEPHONE_EVENT_PT : null,
      t38Capabilities: call.host.t38Capabilities,
    });
    if (answer === null) {
      tx.respond(call.response(request, 488));
      return;
    }
    call.lastRemoteOrigin = origin;
    call.localLines = answer.media;
    call.respondWithSdp(request, tx, call.sdp.describe(answer.media), refresh.headers);
    if (method === "INVITE") this.#trackIncomingInvite(tx, false);
    this.applyRemoteMedia(answer.negotiated, method);
  }

  /** The far end's new media (its offer we answered, or its answer in an ACK): a switch, a change, or a refresh. */
  applyRemoteMedia(media: NegotiatedMedia, method: "INVITE" | "UPDATE"): void {
    const call = this.#call;
    const previous = call.media;
    if (sameMedia(previous, media)) {
      call.emit({ type: "sessionRefreshed", method, sdpChanged: true });
      return;
    }
    call.media = media;
    if (media.kind === "t38" && previous?.kind !== "t38") {
      call.timers.cancel("t38-delay");
      call.emit({ type: "t38Switched", media, initiatedBy: "remote" });
      // A switch of ours waiting (glare) is done: the far end's got there first.
      if (call.reinvite?.purpose === "t38" && !call.ourInvitePending()) {
        this.finishReinvite({ result: "switched", media });
      }
    } else {
      call.emit({ type: "mediaChanged", media });
    }
  }

  #trackIncomingInvite(tx: ServerTransaction, answerInAck: boolean): void {
    this.#call.incomingInvite = { tx, answerInAck };
  }
}

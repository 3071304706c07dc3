/**
 * Answering the far end's INVITE (the UAS side, RFC 3261 §13.3 and §17.2.1): the checks that
 * refuse it (400, 415, 420, 422, 488), 180 Ringing with our To tag (none when the caller requires
 * 100rel: we send no reliable provisionals), the 200 with our SDP answer (or our offer, for an
 * INVITE without one) after the answer delay, the ACK that confirms the call, and the caller's
 * CANCEL before our 200 (§9.2: 487).
 */
import { ALLOW, allowOf, isSdp, originKey, SipCallState, type CallShared } from "./call-state.ts";
import { Dialog } from "./dialog.ts";
import type { MediaOffers } from "./media-offers.ts";
import { sendBye } from "./non-invite-requests.ts";
import { SipFailureCause, SipFailurePhase } from "./sip-call-events.ts";
import { REASON_PHRASES, type SipRequest, type SipResponse } from "./sip-message.ts";
import { sdpOf } from "./message-body.ts";
import { SUPPORTED_EXTENSIONS } from "./request-checks.ts";
import type { ServerTransaction } from "./server-transaction.ts";
import { answerOffer, parseSdp, type MediaDescription, type SessionDescription } from "./sdp.ts";
import { answerTimerRequest, listsOption } from "./session-timer.ts";
import type { SessionRefresh } from "./session-refresh.ts";
import { parseSipUri } from "./sip-uri.ts";
import type { SipFlow } from "./transports.ts";

/** The far end's INVITE as the user agent hands it over: at most a 100 went out. */
export interface IncomingInvite {
  invite: SipRequest;
  tx: ServerTransaction;
  /** The path back to where the INVITE came from. */
  flow: SipFlow;
  answerDelayMs: number;
}

export class CallAnswering {
  readonly #call: CallShared;
  readonly #offers: MediaOffers;
  readonly #refresh: SessionRefresh;

  constructor(call: CallShared, offers: MediaOffers, refresh: SessionRefresh) {
    this.#call = call;
    this.#offers = offers;
    this.#refresh = refresh;
  }

  start(incoming: IncomingInvite): void {
    const call = this.#call;
    const { invite, tx, flow } = incoming;
    call.uas = { invite, tx, finalSent: false, answer: null, timer: null, timerHeaders: [] };
    // Responses go back on the INVITE's own path (the transaction's); our requests in the dialog
    // go to its route set or the caller's Contact (§12.2.1.1, `flowForDialog`), on this flow
    // when that is where the INVITE came from.
    call.flow = flow;
    call.inviteSentAt = call.host.clock.now();
    call.state = SipCallState.Early;
    const refuse = (status: number, reason: string, cause: SipFailureCause, extra?: (r: SipResponse) => void): void => {
      const response = call.response(invite, status, REASON_PHRASES[status] ?? reason);
      extra?.(response);
      call.uas!.finalSent = true;
      tx.respond(response);
      call.fail({ sipStatus: status, reasonPhrase: reason, phase: SipFailurePhase.Ring, cause });
    };
    try {
      call.dialog = Dialog.forIncomingInvite(invite, call.localTag);
      parseSipUri(call.dialog.remoteTarget);
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
    const timerAnswer = answerTimerRequest(invite.headers, call.host.minSessionExpires);
    if (!timerAnswer.ok) {
      refuse(422, "Session Interval Too Small", SipFailureCause.Rejected, (r) => r.headers.append("min-se", String(timerAnswer.minSe)));
      return;
    }
    call.uas.timer = timerAnswer.timer;
    call.uas.timerHeaders = timerAnswer.headers;
    this.#refresh.remoteAllow = allowOf(invite);
    let answerLines: MediaDescription[];
    if (invite.body === "") {
      // No offer: ours goes in the 200 (audio), the answer comes in the ACK (RFC 3261 §13.3.1).
      answerLines = [call.audioLine()];
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
        ports: call.options.localMedia,
        t38: call.options.t38,
        codecs: call.codecs,
        telephoneEventPayloadType: null,
        t38Capabilities: call.host.t38Capabilities,
      });
      if (answer === null) {
        refuse(488, "Not Acceptable Here (no G.711 or T.38 stream we can take)", SipFailureCause.Media);
        return;
      }
      answerLines = answer.media;
      call.uas.answer = answer.negotiated;
      call.lastRemoteOrigin = originKey(offer);
    }
    call.localLines = answerLines;
    // A caller that requires 100rel would need every provisional sent reliably (RFC 3262): we send
    // none then (the 100 is never reliable) and answer at once.
    const noProvisionals = listsOption(invite.headers, "require", "100rel");
    if (!noProvisionals) {
      tx.respond(this.#dialogResponse(invite, 180, null));
      call.emit({ type: "provisional", sipStatus: 180, reasonPhrase: REASON_PHRASES[180]!, earlyMedia: null });
    }
    const send200 = (): void => {
      const uas = call.uas!;
      if (call.state !== SipCallState.Early || uas.finalSent) return;
      uas.finalSent = true;
      call.answeredAt = call.host.clock.now();
      const ok = this.#dialogResponse(invite, 200, call.sdp.describe(call.localLines));
      for (const [name, value] of uas.timerHeaders) ok.headers.append(name, value);
      tx.respond(ok);
      call.incomingInvite = { tx, answerInAck: invite.body === "" };
      call.afterIncomingAck.push(() => this.#confirmAnswered());
    };
    if (incoming.answerDelayMs > 0 && !noProvisionals) call.timers.start("answer", incoming.answerDelayMs, send200);
    else send200();
  }

  /** The ACK for our 200 came: the call is up. */
  #confirmAnswered(): void {
    const call = this.#call;
    if (call.state !== SipCallState.Early) return;
    const media = call.media ?? call.uas?.answer ?? null;
    if (media === null) {
      // An offerless INVITE whose ACK brought no usable answer.
      call.state = SipCallState.Terminating;
      void sendBye(call).then(() =>
        call.fail({ sipStatus: null, reasonPhrase: "The ACK brought no usable SDP answer", phase: SipFailurePhase.Answer, cause: SipFailureCause.Media, answered: true }),
      );
      return;
    }
    call.media = media;
    call.state = SipCallState.Confirmed;
    this.#refresh.setTimer(call.uas?.timer ?? null);
    call.emit({ type: "answered", media, setupMs: call.answeredAt - call.inviteSentAt });
    if (media.kind === "t38") {
      call.emit({ type: "t38Switched", media, initiatedBy: "remote" });
      return;
    }
    this.#offers.scheduleT38Reinvite();
  }

  /** A response that establishes the dialog (§12.1.1): our To tag, Contact, and the request's Record-Route copied. */
  #dialogResponse(request: SipRequest, status: number, sdp: string | null): SipResponse {
    const call = this.#call;
    const response = call.response(request, status);
    for (const rr of request.headers.getAll("record-route")) response.headers.append("record-route", rr);
    response.headers.append("contact", call.contact(call.flow!));
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
    const call = this.#call;
    const uas = call.uas;
    if (uas === null) return false;
    if (!uas.finalSent) {
      uas.finalSent = true;
      uas.tx.respond(call.response(uas.invite, 487));
      call.fail({ sipStatus: 487, reasonPhrase: "Request Terminated (the caller cancelled)", phase: SipFailurePhase.Ring, cause: SipFailureCause.Cancelled });
    }
    return true;
  }
}

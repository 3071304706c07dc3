/**
 * The far end's requests inside a call's dialog, routed to the call by the user agent: BYE
 * (§15.1.2), OPTIONS and INFO, re-INVITE and UPDATE (handed to media-offers.ts), and the ACK
 * for our 2xx to its INVITE or re-INVITE, or its absence (§13.3.1.4).
 */
import { isSdp, originKey, SipCallState, type CallShared } from "./call-state.ts";
import type { MediaOffers } from "./media-offers.ts";
import { sendBye } from "./non-invite-requests.ts";
import { parseReasonHeader, SipFailureCause, SipFailurePhase } from "./sip-call-events.ts";
import { cseqOf, tagOf, type SipRequest } from "./sip-message.ts";
import { sdpOf } from "./message-body.ts";
import type { ServerTransaction } from "./server-transaction.ts";
import { parseSdp, readNegotiatedMedia } from "./sdp.ts";

export class InDialogRequests {
  readonly #call: CallShared;
  readonly #offers: MediaOffers;

  constructor(call: CallShared, offers: MediaOffers) {
    this.#call = call;
    this.#offers = offers;
  }

  /** An in-dialog request (not ACK, not CANCEL) with its server transaction. */
  receiveRequest(request: SipRequest, tx: ServerTransaction): void {
    const call = this.#call;
    const dialog = call.dialog;
    const fromTag = tagOf(request.headers.get("from"));
    const toTag = tagOf(request.headers.get("to"));
    if (dialog === null || call.state === SipCallState.Terminated || fromTag !== dialog.id.remoteTag || toTag !== dialog.id.localTag) {
      tx.respond(call.response(request, 481));
      return;
    }
    if (!dialog.acceptRemoteSeq(cseqOf(request).seq)) {
      tx.respond(call.response(request, 500, "CSeq out of order"));
      return;
    }
    switch (request.method) {
      case "BYE": {
        tx.respond(call.response(request, 200));
        const uas = call.uas;
        if (uas !== null && call.state === SipCallState.Early) {
          // §15.1.2: the pending INVITE gets 487; an unACKed 200 is no longer retransmitted.
          if (!uas.finalSent) {
            uas.finalSent = true;
            call.timers.cancel("answer");
            uas.tx.respond(call.response(uas.invite, 487));
          } else uas.tx.ackReceived();
          call.incomingInvite = null;
          call.afterIncomingAck.splice(0);
        }
        if (call.state === SipCallState.Terminating) return;
        const reason = parseReasonHeader(request.headers.get("reason"));
        call.emit({ type: "remoteBye", reason });
        call.state = SipCallState.Terminating;
        this.#offers.finishReinvite({ result: "ended" });
        call.complete("remote", reason);
        return;
      }
      case "OPTIONS": {
        const response = call.response(request, 200);
        response.headers.append("accept", "application/sdp");
        tx.respond(response);
        call.emit({ type: "requestReceived", method: "OPTIONS" });
        return;
      }
      case "INFO":
        tx.respond(call.response(request, 200));
        call.emit({ type: "requestReceived", method: "INFO" });
        return;
      case "INVITE":
      case "UPDATE":
        this.#offers.receiveOffer(request, tx);
        return;
      default:
        tx.respond(call.response(request, 501));
    }
  }

  /** The ACK for our 2xx to the far end's INVITE or re-INVITE. */
  receiveAck(request: SipRequest): void {
    const call = this.#call;
    const incoming = call.incomingInvite;
    if (incoming === null || cseqOf(request).seq !== cseqOf(incoming.tx.request).seq) return;
    incoming.tx.ackReceived();
    call.incomingInvite = null;
    if (incoming.answerInAck && request.body !== "" && isSdp(request)) {
      try {
        const session = parseSdp(sdpOf(request)!);
        const media = readNegotiatedMedia(session, call.codecs);
        call.lastRemoteOrigin = originKey(session);
        if (media !== null && (media.kind === "audio" || call.options.t38)) this.#offers.applyRemoteMedia(media, "INVITE");
      } catch {
        // A bad answer in an ACK cannot be refused (§13.2.1); keep the session as it was.
      }
    } else if (incoming.answerInAck) {
      call.emit({ type: "sessionRefreshed", method: "INVITE", sdpChanged: false });
    }
    for (const fn of call.afterIncomingAck.splice(0)) fn();
  }

  /** §13.3.1.4: no ACK for our 2xx within 64*T1 — end the session with BYE. */
  ackTimedOut(tx: ServerTransaction): void {
    const call = this.#call;
    if (call.incomingInvite?.tx !== tx) return;
    const initial = call.uas !== null && call.uas.tx === tx;
    if (initial && call.state === SipCallState.Terminating) {
      // hangup() waited for the ACK of our 200, which never came: now the BYE may go.
      call.incomingInvite = null;
      for (const fn of call.afterIncomingAck.splice(0)) fn();
      return;
    }
    if (call.state !== SipCallState.Confirmed && !(initial && call.state === SipCallState.Early)) return;
    call.incomingInvite = null;
    call.afterIncomingAck.splice(0);
    call.state = SipCallState.Terminating;
    const what = initial ? "No ACK for our 200 to the INVITE" : "No ACK for our 2xx to the re-INVITE";
    // The call ends now: a caller that never ACKed (a half-open or forged INVITE) will not answer
    // the BYE either, and waiting for its timeout would hold the channel another 64*T1.
    void sendBye(call);
    call.fail({ sipStatus: null, reasonPhrase: what, phase: initial ? SipFailurePhase.Answer : SipFailurePhase.Reinvite, cause: SipFailureCause.NoAck, answered: true });
  }
}

/**
 * Ending a call from our side: CANCEL before the answer of a call we placed (call-placing.ts),
 * 480 before our 200 to one we answer, BYE once the dialog is confirmed (§15: not before the ACK
 * of our 200; shortly after the ACK of the far end's re-INVITE); and abandoning it without a word
 * when the user agent closes.
 */
import { SipCallState, type CallShared } from "./call-state.ts";
import type { CallPlacing } from "./call-placing.ts";
import { sendBye } from "./non-invite-requests.ts";
import { SipFailureCause, SipFailurePhase, type SipCallOutcome } from "./sip-call-events.ts";

export class Hangup {
  readonly #call: CallShared;
  readonly #placing: CallPlacing;
  #hangupPromise: Promise<SipCallOutcome> | null = null;

  constructor(call: CallShared, placing: CallPlacing) {
    this.#call = call;
    this.#placing = placing;
  }

  /**
   * Ends the call: CANCEL before the answer (the outcome is then a failure with cause
   * "cancelled"), BYE after it. Resolves with the outcome.
   */
  hangup(): Promise<SipCallOutcome> {
    const call = this.#call;
    if (this.#hangupPromise !== null) return this.#hangupPromise;
    const uas = call.uas;
    if (uas !== null && call.state === SipCallState.Early && !uas.finalSent) {
      // Not answered yet: decline (§15: no BYE before the dialog is confirmed).
      uas.finalSent = true;
      call.timers.cancel("answer");
      uas.tx.respond(call.response(uas.invite, 480, "Temporarily Unavailable"));
      call.fail({ sipStatus: 480, reasonPhrase: "Temporarily Unavailable (declined before the answer)", phase: SipFailurePhase.Ring, cause: SipFailureCause.Cancelled });
      this.#hangupPromise = call.outcomePromise;
      return call.outcomePromise;
    }
    const answeredNotAcked = uas !== null && call.state === SipCallState.Early;
    switch (answeredNotAcked ? SipCallState.Confirmed : call.state) {
      case SipCallState.Calling:
      case SipCallState.Early:
        this.#placing.requestCancel(SipFailureCause.Cancelled);
        break;
      case SipCallState.Confirmed: {
        call.state = SipCallState.Terminating;
        call.timers.cancelAll();
        let sent = false;
        const bye = (): void => {
          if (sent) return;
          sent = true;
          call.timers.cancel("bye-delay");
          void sendBye(call).then(() => call.complete("local", null));
        };
        if (answeredNotAcked) {
          // §15: no BYE before the ACK of our 200 (or timer L, `ackTimedOut`).
          call.afterIncomingAck.push(bye);
        } else if (call.incomingInvite !== null && !call.incomingInvite.tx.acked) {
          // The far end's re-INVITE waits for its ACK: let that arrive first (a BYE overtaking it
          // confuses some far ends), but not for long.
          call.afterIncomingAck.push(bye);
          call.timers.start("bye-delay", 4 * call.host.timers.T1, bye);
        } else bye();
        break;
      }
      default:
        break;
    }
    this.#hangupPromise = call.outcomePromise;
    return call.outcomePromise;
  }

  /**
   * Ends the call at once without a word to the far end: for a user agent that closes with
   * requests still unanswered (their transactions are gone, so their answers would never come).
   */
  abandon(): void {
    const call = this.#call;
    if (call.outcome !== null) return;
    call.fail({ sipStatus: null, reasonPhrase: "The SIP user agent closed", phase: call.answeredAt !== 0 ? SipFailurePhase.Answer : SipFailurePhase.Ring, cause: SipFailureCause.Transport });
  }
}

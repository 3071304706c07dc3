/**
 * A call's session timer (RFC 4028) at run time: its two clocks (our refresh at half the
 * interval, or the BYE when the far end's refresh does not come), our refreshes (UPDATE without
 * SDP when the far end allows UPDATE, else a re-INVITE with the same SDP through media-offers.ts),
 * and the timer part of our 2xx to the far end's refresh. The decisions and headers are
 * session-timer.ts's.
 */
import { SipCallState, type CallShared } from "./call-state.ts";
import { nonInviteRequest, sendBye } from "./non-invite-requests.ts";
import { SipFailureCause, SipFailurePhase } from "./sip-call-events.ts";
import type { SipRequest } from "./sip-message.ts";
import { answerTimerRequest, expiryDelayMs, readMinSe, refreshDelayMs, timerFromResponse, type SessionTimer } from "./session-timer.ts";

/** What a refresh needs of the re-INVITE side (media-offers.ts). */
export interface RefreshReinvites {
  /** Sends the re-INVITE pending in `CallShared.reinvite`. */
  sendReinvite(): Promise<void>;
  /** A refresh answered 408/481 (or not at all): the dialog is over (BYE when `sendBye`). */
  reinviteEndsDialog(sipStatus: number, reasonPhrase: string, cause: SipFailureCause, sendBye: boolean): void;
}

export class SessionRefresh {
  readonly #call: CallShared;
  readonly #reinvites: RefreshReinvites;
  /** The session timer (RFC 4028) while one runs: its interval and who refreshes. */
  #sessionTimer: SessionTimer | null = null;
  /** The methods the far end allows (its Allow), for choosing UPDATE or re-INVITE as a refresh. */
  remoteAllow: string[] = [];

  constructor(call: CallShared, reinvites: RefreshReinvites) {
    this.#call = call;
    this.#reinvites = reinvites;
  }

  get timer(): SessionTimer | null {
    return this.#sessionTimer;
  }

  /** Starts (or restarts, or with null stops) the session timer's clock. */
  setTimer(timer: SessionTimer | null): void {
    const call = this.#call;
    call.timers.cancel("session-refresh");
    call.timers.cancel("session-expiry");
    this.#sessionTimer = timer;
    if (timer === null || call.state === SipCallState.Terminated) return;
    if (timer.refresher === "local") call.timers.start("session-refresh", refreshDelayMs(timer), () => this.refresh());
    else call.timers.start("session-expiry", expiryDelayMs(timer), () => this.#sessionExpired());
  }

  /** A 422 to our refresh named a Min-SE above our interval: take it (true), else false (nothing to retry). */
  raiseInterval(minSe: number | null): boolean {
    const timer = this.#sessionTimer;
    if (timer === null || minSe === null || minSe <= timer.seconds) return false;
    this.#sessionTimer = { ...timer, seconds: minSe };
    return true;
  }

  /** Session-Expires and Supported for a refresh of ours (any re-INVITE or UPDATE we send while a timer runs). */
  refreshHeaders(): [string, string][] {
    const timer = this.#sessionTimer;
    if (timer === null) return [];
    return [
      ["session-expires", `${timer.seconds};refresher=${timer.refresher === "local" ? "uac" : "uas"}`],
      ["supported", "timer"],
    ];
  }

  /** Our refresh: UPDATE without SDP when the far end allows UPDATE, else a re-INVITE with the same SDP. */
  refresh(): void {
    const call = this.#call;
    const timer = this.#sessionTimer;
    if (timer === null || call.state !== SipCallState.Confirmed) return;
    if (call.reinvite !== null || (call.incomingInvite !== null && !call.incomingInvite.tx.acked)) {
      // An offer/answer exchange is under way (it refreshes too, when it ends): look again soon.
      call.timers.start("session-refresh", 1000, () => this.refresh());
      return;
    }
    if (this.remoteAllow.includes("UPDATE")) {
      void nonInviteRequest(call, "UPDATE", this.refreshHeaders()).then(
        (response) => {
          if (call.state !== SipCallState.Confirmed) return;
          if (response.status >= 200 && response.status < 300) this.setTimer(timerFromResponse(response.headers) ?? timer);
          else if (response.status === 422 && this.raiseInterval(readMinSe(response.headers))) this.refresh();
          else if (response.status === 481 || response.status === 408) this.#reinvites.reinviteEndsDialog(response.status, response.reason, SipFailureCause.Rejected, response.status === 408);
          else {
            // UPDATE not taken after all (405, 501 …): refresh with a re-INVITE from now on.
            this.remoteAllow = this.remoteAllow.filter((m) => m !== "UPDATE");
            this.refresh();
          }
        },
        () => this.#reinvites.reinviteEndsDialog(408, "Request Timeout (session refresh)", SipFailureCause.Timeout, true),
      );
      return;
    }
    call.reinvite = {
      purpose: "refresh",
      lines: call.localLines,
      resolve: () => undefined,
      glareRetries: 0,
      authTries: 0,
      request: null,
      ack: null,
      transaction: null,
    };
    void this.#reinvites.sendReinvite();
  }

  /** The far end was to refresh and did not: end the session (RFC 4028 §10). */
  #sessionExpired(): void {
    const call = this.#call;
    const timer = this.#sessionTimer;
    if (timer === null || call.state !== SipCallState.Confirmed) return;
    call.state = SipCallState.Terminating;
    call.timers.cancelAll();
    const reasonPhrase = `Session expired: no refresh from the far end within its ${timer.seconds} s session interval (RFC 4028); Faxline hung up`;
    void sendBye(call).then(() => call.fail({ sipStatus: null, reasonPhrase, phase: SipFailurePhase.Reinvite, cause: SipFailureCause.Timeout, answered: true }));
  }

  /**
   * The session-timer part of our 2xx to the far end's re-INVITE or UPDATE (it refreshes the
   * session): headers to add, or a Min-SE for a 422.
   */
  answerRefresh(request: SipRequest): { headers: [string, string][] } | { minSe: number } {
    const answer = answerTimerRequest(request.headers, this.#call.host.minSessionExpires);
    if (!answer.ok) return { minSe: answer.minSe };
    // No Session-Expires in their request: RFC 4028 §9, the session timer is off from now on (our
    // 2xx says none either), so nobody waits for refreshes that will not come.
    this.setTimer(answer.timer);
    return { headers: answer.headers };
  }
}

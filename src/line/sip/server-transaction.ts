/**
 * RFC 3261 §17.2 server transactions, for the requests the far end sends inside our call
 * (re-INVITE, UPDATE, OPTIONS, BYE, INFO), with the RFC 6026 "Accepted" state for INVITE.
 *
 * What they do: absorb retransmitted requests by resending the last response; retransmit final
 * responses to INVITE over UDP until the ACK comes (timer G for non-2xx, the §13.3.1.4 2xx
 * retransmission for 2xx); give up waiting for the ACK after 64*T1 (timers H and L); linger
 * to absorb retransmissions (timers I and J). The 2xx retransmission is the UAS core's job in
 * RFC 3261; it is kept here, next to timer G, because it has the same shape.
 *
 * INVITE server transaction states (§17.2.1, RFC 6026 §7.1):
 *  - Proceeding: request received; a retransmitted INVITE gets the last provisional again.
 *  - Accepted: 2xx sent; retransmitted over UDP at T1 doubling up to T2 until the TU reports the
 *    ACK (`ackReceived`, the ACK for a 2xx is a transaction of its own); timer L (64*T1) ends it
 *    and, without an ACK, tells the TU (`onAckTimeout`: §13.3.1.4 "the UAS core SHOULD … end the
 *    session with a BYE").
 *  - Completed: 300–699 sent; timer G retransmits it (UDP); timer H waits for the ACK; an ACK →
 *    Confirmed.
 *  - Confirmed: timer I (T4 UDP, 0 reliable) absorbs ACK retransmissions → Terminated.
 *  - Terminated.
 *
 * Non-INVITE server transaction states (§17.2.2):
 *  - Trying → (1xx) Proceeding → (final) Completed: timer J (64*T1 UDP, 0 reliable) answers
 *    retransmitted requests with the final response → Terminated.
 */
import assert from "node:assert/strict";
import type { Clock } from "../../lib/clock.ts";
import type { SipRequest, SipResponse } from "./sip-message.ts";
import { TimerSet, type SipTimerName, type SipTimerValues } from "./sip-timers.ts";

export const ServerTransactionState = {
  Trying: "trying",
  Proceeding: "proceeding",
  Accepted: "accepted",
  Completed: "completed",
  Confirmed: "confirmed",
  Terminated: "terminated",
} as const;
export type ServerTransactionState = (typeof ServerTransactionState)[keyof typeof ServerTransactionState];

export interface ServerTransactionContext {
  clock: Clock;
  timers: SipTimerValues;
  reliable: boolean;
  /** Hands a response to the transport (to the request's source, §18.2.2). */
  send(response: SipResponse): void;
  /** The transaction reached Terminated. */
  onTerminated?(): void;
  /** INVITE only: no ACK came for the 2xx within 64*T1 (§13.3.1.4). */
  onAckTimeout?(): void;
}

const transitions: { readonly [S in ServerTransactionState]: readonly ServerTransactionState[] } = {
  trying: ["proceeding", "completed", "terminated"],
  proceeding: ["accepted", "completed", "terminated"],
  accepted: ["terminated"],
  completed: ["confirmed", "terminated"],
  confirmed: ["terminated"],
  terminated: [],
};

export class ServerTransaction {
  readonly request: SipRequest;
  readonly isInvite: boolean;
  readonly #ctx: ServerTransactionContext;
  readonly #timers: TimerSet<SipTimerName>;
  #state: ServerTransactionState;
  #lastResponse: SipResponse | null = null;
  #retransmitInterval = 0;
  #acked = false;

  constructor(request: SipRequest, ctx: ServerTransactionContext) {
    assert.ok(request.method !== "ACK", "an ACK does not create a server transaction");
    this.request = request;
    this.isInvite = request.method === "INVITE";
    this.#ctx = ctx;
    this.#timers = new TimerSet(ctx.clock);
    // §17.2.1: "When a server transaction is constructed for a request, it enters the 'Proceeding'
    // state." §17.2.2: the non-INVITE one starts in "Trying".
    this.#state = this.isInvite ? ServerTransactionState.Proceeding : ServerTransactionState.Trying;
  }

  get state(): ServerTransactionState {
    return this.#state;
  }

  get lastResponse(): SipResponse | null {
    return this.#lastResponse;
  }

  #transition(to: ServerTransactionState): void {
    if (!transitions[this.#state].includes(to)) throw new Error(`Invalid state transition from ${this.#state} to ${to}`);
    this.#state = to;
    if (to === ServerTransactionState.Terminated) {
      this.#timers.cancelAll();
      this.#ctx.onTerminated?.();
    }
  }

  /** The TU's response. Provisionals may repeat; one final response ends the TU's part. */
  respond(response: SipResponse): void {
    const s = this.#state;
    assert.ok(s === ServerTransactionState.Trying || s === ServerTransactionState.Proceeding, `respond() in state ${s}`);
    this.#lastResponse = response;
    this.#ctx.send(response);
    const final = response.status >= 200;
    if (!final) {
      if (s === ServerTransactionState.Trying) this.#transition(ServerTransactionState.Proceeding);
      return;
    }
    if (!this.isInvite) {
      this.#transition(ServerTransactionState.Completed);
      // "the server transaction MUST set Timer J to fire in 64*T1 seconds for unreliable
      // transports, and zero seconds for reliable transports."
      this.#timers.start("J", this.#ctx.reliable ? 0 : 64 * this.#ctx.timers.T1, () => this.dispose());
      return;
    }
    if (response.status < 300) {
      this.#transition(ServerTransactionState.Accepted);
      // §13.3.1.4: "The 2xx response is passed to the transport with an interval that starts at
      // T1 seconds and doubles for each retransmission until it reaches T2 seconds." (UDP only.)
      this.#startRetransmit("G");
      // RFC 6026 §7.1: "the server transaction MUST start Timer L with a value of 64*T1."
      this.#timers.start("L", 64 * this.#ctx.timers.T1, () => {
        if (!this.#acked) this.#ctx.onAckTimeout?.();
        this.dispose();
      });
    } else {
      this.#transition(ServerTransactionState.Completed);
      // "For unreliable transports, timer G is set to fire in T1 seconds"; "timer H MUST be set
      // to fire in 64*T1 seconds for all transports".
      this.#startRetransmit("G");
      this.#timers.start("H", 64 * this.#ctx.timers.T1, () => this.dispose());
    }
  }

  #startRetransmit(name: "G"): void {
    if (this.#ctx.reliable) return;
    this.#retransmitInterval = this.#ctx.timers.T1;
    const fire = (): void => {
      if (this.#acked || this.#lastResponse === null) return;
      if (this.#state !== ServerTransactionState.Accepted && this.#state !== ServerTransactionState.Completed) return;
      this.#ctx.send(this.#lastResponse);
      this.#retransmitInterval = Math.min(2 * this.#retransmitInterval, this.#ctx.timers.T2);
      this.#timers.start(name, this.#retransmitInterval, fire);
    };
    this.#timers.start(name, this.#retransmitInterval, fire);
  }

  /** The same request again (a retransmission): resend the last response, if any (§17.2.1, §17.2.2). */
  receiveRetransmission(): void {
    if (this.#lastResponse === null) return;
    if (this.#state === ServerTransactionState.Confirmed || this.#state === ServerTransactionState.Terminated) return;
    this.#ctx.send(this.#lastResponse);
  }

  /**
   * An ACK for this INVITE: for a non-2xx it matches this transaction (§17.2.3) and moves it to
   * Confirmed; for a 2xx the UA core matched it by dialog and reports it here to stop the
   * retransmissions.
   */
  ackReceived(): void {
    if (!this.isInvite) return;
    this.#acked = true;
    this.#timers.cancel("G");
    if (this.#state === ServerTransactionState.Completed) {
      this.#timers.cancel("H");
      this.#transition(ServerTransactionState.Confirmed);
      // "timer I is set to fire in T4 seconds for unreliable transports, and zero seconds for
      // reliable transports."
      this.#timers.start("I", this.#ctx.reliable ? 0 : this.#ctx.timers.T4, () => this.dispose());
    }
  }

  get acked(): boolean {
    return this.#acked;
  }

  dispose(): void {
    if (this.#state !== ServerTransactionState.Terminated) this.#transition(ServerTransactionState.Terminated);
  }
}

/**
 * RFC 3261 §17.1 client transactions, with the RFC 6026 "Accepted" state for INVITE.
 *
 * What they do: send a request, retransmit it over UDP (timers A and E), give up after 64*T1
 * (timers B and F), pass responses up to the transaction user (TU), ACK non-2xx final responses
 * to INVITE themselves (§17.1.1.3), and linger after the final response to absorb
 * retransmissions (timers D, K, M). They do no I/O: `send` is injected and the clock too.
 *
 * INVITE client transaction states (§17.1.1.2, RFC 6026 §8.4):
 *  - Calling: INVITE sent; timer A retransmits (UDP), timer B times out. 1xx → Proceeding,
 *    2xx → Accepted, 300–699 → Completed (ACK sent).
 *  - Proceeding: a provisional came; no retransmissions, no timeout (the TU runs its own ring
 *    timer and CANCELs). 1xx passed up; 2xx → Accepted; 300–699 → Completed.
 *  - Completed: ACK sent for the non-2xx; a retransmitted final is ACKed again; timer D → Terminated.
 *  - Accepted: 2xx passed up; retransmitted 2xx are passed up too (the TU ACKs 2xx, §13.2.2.4);
 *    timer M → Terminated.
 *  - Terminated: nothing more happens.
 *
 * Non-INVITE client transaction states (§17.1.2.2):
 *  - Trying: request sent; timer E retransmits (UDP) at T1 doubling up to T2; timer F times out.
 *  - Proceeding: a provisional came; timer E continues at T2; timer F still runs.
 *  - Completed: final passed up; timer K (T4 UDP, 0 reliable) absorbs retransmitted finals.
 *  - Terminated.
 */
import assert from "node:assert/strict";
import type { Clock } from "../../lib/clock.ts";
import { cseqOf, SipHeaders, topVia, type SipRequest, type SipResponse } from "./sip-message.ts";
import { TimerSet, type SipTimerName, type SipTimerValues } from "./sip-timers.ts";

export const TransactionState = {
  Calling: "calling",
  Trying: "trying",
  Proceeding: "proceeding",
  Completed: "completed",
  Accepted: "accepted",
  Terminated: "terminated",
} as const;
export type TransactionState = (typeof TransactionState)[keyof typeof TransactionState];

/** The layer above a client transaction (SIP.js `ClientTransactionUser`). */
export interface ClientTransactionUser {
  /** Every response the TU must see: provisionals, the final, and (INVITE) retransmitted 2xx. */
  onResponse(response: SipResponse): void;
  /**
   * RFC 3261 §8.1.3.1: "If a timeout occurs … the UAC core MUST treat this as if it had received
   * a 408 (Request Timeout) response."
   */
  onRequestTimeout(): void;
  /**
   * RFC 3261 §8.1.3.1: a fatal transport error "MUST be treated as a 503 (Service Unavailable)"
   * (RFC 3261 §8.1.3.1, via §18.4).
   */
  onTransportError(error: Error): void;
  /** The transaction reached Terminated (for removing it from the transaction table). */
  onTerminated?(): void;
}

export interface TransactionContext {
  clock: Clock;
  timers: SipTimerValues;
  /** True over TCP/TLS: no retransmissions, zero-length linger timers (§17.1.1.2, §17.1.2.2). */
  reliable: boolean;
  /** Hands a request (the original, a retransmission or an ACK) to the transport. */
  send(request: SipRequest): void;
}

const inviteTransitions: { readonly [S in TransactionState]: readonly TransactionState[] } = {
  calling: ["proceeding", "accepted", "completed", "terminated"],
  proceeding: ["accepted", "completed", "terminated"],
  completed: ["terminated"],
  accepted: ["terminated"],
  trying: [],
  terminated: [],
};

const nonInviteTransitions: { readonly [S in TransactionState]: readonly TransactionState[] } = {
  trying: ["proceeding", "completed", "terminated"],
  proceeding: ["completed", "terminated"],
  completed: ["terminated"],
  calling: [],
  accepted: [],
  terminated: [],
};

abstract class ClientTransaction {
  readonly request: SipRequest;
  /** The branch of the request's top Via: with the CSeq method, it matches responses (§17.1.3). */
  readonly branch: string;
  protected readonly ctx: TransactionContext;
  protected readonly user: ClientTransactionUser;
  protected readonly timers: TimerSet<SipTimerName>;
  #state: TransactionState;
  readonly #transitions: { readonly [S in TransactionState]: readonly TransactionState[] };

  protected constructor(
    request: SipRequest,
    ctx: TransactionContext,
    user: ClientTransactionUser,
    initial: TransactionState,
    transitions: { readonly [S in TransactionState]: readonly TransactionState[] },
  ) {
    this.request = request;
    this.branch = topVia(request).params.get("branch") ?? "";
    assert.ok(this.branch !== "", "client transaction request without a Via branch");
    this.ctx = ctx;
    this.user = user;
    this.timers = new TimerSet(ctx.clock);
    this.#state = initial;
    this.#transitions = transitions;
  }

  get state(): TransactionState {
    return this.#state;
  }

  /** Checks the move against the transition table, then runs the on-entry actions. */
  protected stateTransition(to: TransactionState): void {
    const from = this.#state;
    if (!this.#transitions[from].includes(to)) throw new Error(`Invalid state transition from ${from} to ${to}`);
    this.#state = to;
    this.onEnter(to);
    if (to === TransactionState.Terminated) {
      this.timers.cancelAll();
      this.user.onTerminated?.();
    }
  }

  protected abstract onEnter(state: TransactionState): void;

  /** A transport error on sending: §17.1.4 — inform the TU and terminate. */
  transportError(error: Error): void {
    if (this.state === TransactionState.Terminated) return;
    const wasFinal = this.state === TransactionState.Completed || this.state === TransactionState.Accepted;
    this.stateTransition(TransactionState.Terminated);
    if (!wasFinal) this.user.onTransportError(error);
  }

  /** Ends the transaction at once (call torn down, user agent closing). */
  dispose(): void {
    if (this.state !== TransactionState.Terminated) this.stateTransition(TransactionState.Terminated);
  }

  abstract receiveResponse(response: SipResponse): void;
}

export class InviteClientTransaction extends ClientTransaction {
  #timerAInterval = 0;

  constructor(request: SipRequest, ctx: TransactionContext, user: ClientTransactionUser) {
    assert.equal(request.method, "INVITE");
    super(request, ctx, user, TransactionState.Calling, inviteTransitions);
  }

  /** Sends the INVITE and starts timers A and B (§17.1.1.2). */
  start(): void {
    assert.equal(this.state, TransactionState.Calling);
    this.ctx.send(this.request);
    if (!this.ctx.reliable) {
      // "If an unreliable transport is being used, the client transaction MUST start timer A with
      // a value of T1."
      this.#timerAInterval = this.ctx.timers.T1;
      this.timers.start("A", this.#timerAInterval, () => this.#onTimerA());
    }
    // "For any transport, the client transaction MUST start timer B with a value of 64*T1 seconds."
    this.timers.start("B", 64 * this.ctx.timers.T1, () => this.#onTimerB());
  }

  #onTimerA(): void {
    if (this.state !== TransactionState.Calling) return;
    // "When timer A fires, the client transaction MUST retransmit the request … and reset the
    // timer with a value of 2*T1." (The interval keeps doubling; timer B bounds it.)
    this.ctx.send(this.request);
    this.#timerAInterval *= 2;
    this.timers.start("A", this.#timerAInterval, () => this.#onTimerA());
  }

  #onTimerB(): void {
    if (this.state !== TransactionState.Calling) return;
    // "If the client transaction is still in the Calling state when timer B fires, the client
    // transaction SHOULD inform the TU that a timeout has occurred."
    this.stateTransition(TransactionState.Terminated);
    this.user.onRequestTimeout();
  }

  receiveResponse(response: SipResponse): void {
    const status = response.status;
    switch (this.state) {
      case TransactionState.Calling:
      case TransactionState.Proceeding:
        if (status < 200) {
          if (this.state === TransactionState.Calling) this.stateTransition(TransactionState.Proceeding);
          this.user.onResponse(response);
        } else if (status < 300) {
          this.stateTransition(TransactionState.Accepted);
          this.user.onResponse(response);
        } else {
          this.stateTransition(TransactionState.Completed);
          this.#sendAck(response);
          this.user.onResponse(response);
        }
        return;
      case TransactionState.Completed:
        // "Any retransmissions of the final response that are received while in the Completed
        // state MUST cause the ACK to be re-passed to the transport layer for retransmission."
        if (status >= 300) this.#sendAck(response);
        return;
      case TransactionState.Accepted:
        // RFC 6026 §8.4: "Any 2xx responses that match this client transaction and that are
        // received while in the 'Accepted' state MUST be passed up to the TU."
        if (status >= 200 && status < 300) this.user.onResponse(response);
        return;
      default:
        return;
    }
  }

  protected onEnter(state: TransactionState): void {
    if (state === TransactionState.Proceeding || state === TransactionState.Completed || state === TransactionState.Accepted) {
      this.timers.cancel("A");
      this.timers.cancel("B");
    }
    if (state === TransactionState.Completed) {
      // "The client transaction SHOULD start timer D … with a value of at least 32 seconds for
      // unreliable transports, and a value of zero seconds for reliable transports."
      this.timers.start("D", this.ctx.reliable ? 0 : this.ctx.timers.D, () => this.dispose());
    }
    if (state === TransactionState.Accepted) {
      // RFC 6026 §8.4: "The client transaction MUST start Timer M … with a value of 64*T1."
      this.timers.start("M", 64 * this.ctx.timers.T1, () => this.dispose());
    }
  }

  /**
   * §17.1.1.3: the ACK for a non-2xx final response: the INVITE's Request-URI, Call-ID, From,
   * CSeq number and top Via, the response's To, and the INVITE's Route headers.
   */
  #sendAck(response: SipResponse): void {
    const headers = new SipHeaders();
    headers.append("via", this.request.headers.getList("via")[0]!);
    for (const route of this.request.headers.getAll("route")) headers.append("route", route);
    headers.append("max-forwards", "70");
    headers.append("from", this.request.headers.get("from")!);
    headers.append("to", response.headers.get("to")!);
    headers.append("call-id", this.request.headers.get("call-id")!);
    headers.append("cseq", `${cseqOf(this.request).seq} ACK`);
    this.ctx.send({ kind: "request", method: "ACK", uri: this.request.uri, headers, body: "" });
  }
}

export class NonInviteClientTransaction extends ClientTransaction {
  #timerEInterval = 0;

  constructor(request: SipRequest, ctx: TransactionContext, user: ClientTransactionUser) {
    assert.ok(request.method !== "INVITE" && request.method !== "ACK", `not a non-INVITE request: ${request.method}`);
    super(request, ctx, user, TransactionState.Trying, nonInviteTransitions);
  }

  /** Sends the request and starts timers E and F (§17.1.2.2). */
  start(): void {
    assert.equal(this.state, TransactionState.Trying);
    this.ctx.send(this.request);
    if (!this.ctx.reliable) {
      this.#timerEInterval = this.ctx.timers.T1;
      this.timers.start("E", this.#timerEInterval, () => this.#onTimerE());
    }
    this.timers.start("F", 64 * this.ctx.timers.T1, () => this.#onTimerF());
  }

  #onTimerE(): void {
    if (this.state !== TransactionState.Trying && this.state !== TransactionState.Proceeding) return;
    this.ctx.send(this.request);
    // Trying: "reset the timer with a value of MIN(2*T1, T2)", doubling each time up to T2.
    // Proceeding: "the request MUST be passed to the transport layer for retransmission, and
    // Timer E MUST be reset with a value of T2 seconds."
    this.#timerEInterval =
      this.state === TransactionState.Trying ? Math.min(2 * this.#timerEInterval, this.ctx.timers.T2) : this.ctx.timers.T2;
    this.timers.start("E", this.#timerEInterval, () => this.#onTimerE());
  }

  #onTimerF(): void {
    if (this.state !== TransactionState.Trying && this.state !== TransactionState.Proceeding) return;
    // "If Timer F fires while the client transaction is still in the 'Trying' [or 'Proceeding']
    // state, the client transaction SHOULD inform the TU about the timeout, and then it SHOULD
    // enter the 'Terminated' state."
    this.stateTransition(TransactionState.Terminated);
    this.user.onRequestTimeout();
  }

  receiveResponse(response: SipResponse): void {
    if (this.state !== TransactionState.Trying && this.state !== TransactionState.Proceeding) return;
    if (response.status < 200) {
      if (this.state === TransactionState.Trying) {
        this.stateTransition(TransactionState.Proceeding);
        // Timer E continues at T2 in Proceeding: restart it with that interval.
        if (!this.ctx.reliable) {
          this.#timerEInterval = this.ctx.timers.T2;
          this.timers.start("E", this.#timerEInterval, () => this.#onTimerE());
        }
      }
      this.user.onResponse(response);
      return;
    }
    this.stateTransition(TransactionState.Completed);
    this.user.onResponse(response);
  }

  protected onEnter(state: TransactionState): void {
    if (state === TransactionState.Completed) {
      this.timers.cancel("E");
      this.timers.cancel("F");
      // "The client transaction MUST start timer K … with a value of T4 for unreliable
      // transports, and zero seconds for reliable transports."
      this.timers.start("K", this.ctx.reliable ? 0 : this.ctx.timers.T4, () => this.dispose());
    }
  }
}

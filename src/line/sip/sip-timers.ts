/**
 * RFC 3261 timer values (§17, Table 4 in Appendix A) and a small helper that runs named,
 * cancellable timers on an injected `Clock`, so transactions run on virtual time in tests.
 */
import type { Clock } from "../../lib/clock.ts";

export interface SipTimerValues {
  /** T1: "RTT Estimate", 500 ms default (RFC 3261 Table 4). Timers A, B, E, F, G, H, J, M derive from it. */
  T1: number;
  /** T2: "The maximum retransmit interval for non-INVITE requests and INVITE responses", 4 s. */
  T2: number;
  /** T4: "Maximum duration a message will remain in the network", 5 s. Timers I and K. */
  T4: number;
  /** Timer D: "Wait time for response retransmits", "> 32 s for UDP", 0 s for TCP/SCTP. */
  D: number;
}

export const DEFAULT_SIP_TIMERS: Readonly<SipTimerValues> = Object.freeze({ T1: 500, T2: 4000, T4: 5000, D: 32_000 });

/**
 * The RFC's timer names, for logs and for `TimerSet` keys. Each value is computed from
 * `SipTimerValues` by the transaction that owns it:
 *  - A: INVITE request retransmit interval, UDP only — initially T1, doubling.
 *  - B: INVITE transaction timeout — 64*T1.
 *  - D: wait time for response retransmits — D (UDP), 0 (reliable).
 *  - E: non-INVITE request retransmit interval, UDP only — initially T1, doubling up to T2.
 *  - F: non-INVITE transaction timeout — 64*T1.
 *  - G: INVITE response retransmit interval — initially T1, doubling up to T2.
 *  - H: wait time for ACK receipt — 64*T1.
 *  - I: wait time for ACK retransmits — T4 (UDP), 0 (reliable).
 *  - J: wait time for non-INVITE request retransmits — 64*T1 (UDP), 0 (reliable).
 *  - K: wait time for response retransmits — T4 (UDP), 0 (reliable).
 *  - L: wait time for accepted INVITE request retransmits — 64*T1 (RFC 6026 §8.7).
 *  - M: wait time for retransmission of 2xx to INVITE — 64*T1 (RFC 6026 §8.4).
 */
export const SipTimer = {
  A: "A",
  B: "B",
  D: "D",
  E: "E",
  F: "F",
  G: "G",
  H: "H",
  I: "I",
  J: "J",
  K: "K",
  L: "L",
  M: "M",
} as const;
export type SipTimerName = (typeof SipTimer)[keyof typeof SipTimer];

/** Named one-shot timers on a Clock. Starting a timer that runs replaces it. */
export class TimerSet<Name extends string = string> {
  readonly #clock: Clock;
  readonly #running = new Map<Name, AbortController>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  start(name: Name, ms: number, onFire: () => void): void {
    this.cancel(name);
    const controller = new AbortController();
    this.#running.set(name, controller);
    this.#clock.sleep(ms, controller.signal).then(
      () => {
        if (this.#running.get(name) !== controller) return;
        this.#running.delete(name);
        onFire();
      },
      () => undefined,
    );
  }

  cancel(name: Name): void {
    const controller = this.#running.get(name);
    if (controller === undefined) return;
    this.#running.delete(name);
    controller.abort();
  }

  isRunning(name: Name): boolean {
    return this.#running.has(name);
  }

  cancelAll(): void {
    for (const name of [...this.#running.keys()]) this.cancel(name);
  }
}

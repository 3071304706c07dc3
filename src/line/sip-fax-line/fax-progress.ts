/**
 * Follows a sending fax engine's events to know where the call is in T.30, for the call
 * watchdog (outcomes/call-watchdog.ts) and for the outcome's progress (outcomes/call-outcomes.ts
 * `FaxProgress`). Pure: events and the call's virtual time in, state out.
 *
 *   answered   the engine runs, no DIS yet (T.30 phase A)
 *   phase_b    the receiver's DIS arrived; DCS, training (again after FTT)
 *   phase_c    CFR received: a page is being sent (page n, with its G4 size for the ceiling)
 *   phase_d    we sent the post-page command (MPS, EOP, EOM, PPS …) and wait for the answer
 *   phase_c    the answer came (MCF, RTP, RTN, PPR …) and the next page or block goes out
 *   phase_e    we sent DCN
 */
import type { EngineEvent } from "../fax-engine/engine.ts";
import { isFcf } from "../fax-engine/t30-fcf.ts";
import type { FaxProgress } from "../outcomes/call-outcomes.ts";
import type { CallPhase, WatchdogState } from "../outcomes/call-watchdog.ts";

/** Post-page commands of a sender: MPS, EOP, EOM, PPS (ECM, its FCF2 says which), EOR. */
const POST_PAGE = ["MPS", "EOP", "EOM", "PPS", "EOR"] as const;

export class FaxProgressTracker {
  readonly #pageSizes: readonly number[];
  #phase: CallPhase = "answered";
  #phaseStartedAt: number;
  #disReceived = false;
  #transferStarted = false;
  /** Positive answers (MCF) to post-page commands: pages, or ECM blocks, the receiver took. */
  #confirmations = 0;
  #ended = false;

  /** `pageSizes`: G4 bytes of each page to send; `startedAt`: the call's virtual time (ms) the engine started. */
  constructor(pageSizes: readonly number[], startedAt: number) {
    this.#pageSizes = pageSizes;
    this.#phaseStartedAt = startedAt;
  }

  get phase(): CallPhase {
    return this.#phase;
  }

  /** Phase E happened. */
  get ended(): boolean {
    return this.#ended;
  }

  /** Takes one engine event that happened at virtual time `at` (ms). */
  onEvent(event: EngineEvent, at: number): void {
    switch (event.type) {
      case "phaseB":
        this.#disReceived = true;
        this.#enter("phase_b", at);
        return;
      case "phaseD":
        if (event.name === "MCF") this.#confirmations += 1;
        if (this.#phase === "phase_d") this.#enter("phase_c", at);
        return;
      case "phaseE":
        this.#ended = true;
        return;
      case "frame": {
        const { fcf, direction } = event;
        if (direction === "rx") {
          if (isFcf(fcf, "DIS")) {
            this.#disReceived = true;
            if (this.#phase === "answered") this.#enter("phase_b", at);
          } else if (isFcf(fcf, "CFR")) {
            this.#transferStarted = true;
            this.#enter("phase_c", at);
          } else if (isFcf(fcf, "FTT")) {
            this.#enter("phase_b", at);
          }
          return;
        }
        if (isFcf(fcf, "DCN")) this.#enter("phase_e", at);
        else if (POST_PAGE.some((name) => isFcf(fcf, name))) this.#enter("phase_d", at);
        return;
      }
    }
  }

  /** What the watchdog needs now; `callDeadlineAt` bounds the whole call (virtual ms). */
  watchdogState(callDeadlineAt?: number): WatchdogState {
    const pageNo = Math.min(this.#confirmations + 1, Math.max(1, this.#pageSizes.length));
    const largest = this.#pageSizes.reduce((a, b) => Math.max(a, b), 0);
    return {
      phase: this.#phase,
      phaseStartedAt: this.#phaseStartedAt,
      // With ECM a page may take several blocks, each confirmed: the page's own size may be
      // too small a ceiling for a later block, so the largest page bounds every block.
      pageEncodedBytes: Math.max(this.#pageSizes[pageNo - 1] ?? 0, largest),
      pageNo,
      ...(callDeadlineAt !== undefined ? { callDeadlineAt } : {}),
    };
  }

  /** The progress for the outcome; `pagesConfirmed` is the engine's count of pages sent (statistics.pagesTx). */
  progress(pagesConfirmed: number): FaxProgress {
    return { disReceived: this.#disReceived, transferStarted: this.#transferStarted || pagesConfirmed > 0, pagesConfirmed };
  }

  #enter(phase: CallPhase, at: number): void {
    if (this.#phase === phase) return;
    this.#phase = phase;
    this.#phaseStartedAt = at;
  }
}

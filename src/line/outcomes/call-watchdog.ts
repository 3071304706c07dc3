/**
 * The call watchdog: when to give up on a call that no longer moves. Pure: the caller says
 * which phase the call is in, when (in the call's virtual time) it entered it, and what time it
 * is now; the watchdog answers with the deadline, or with the verdict that it has passed.
 *
 * Why: a fax engine can hang. In the feasibility study SpanDSP's audio T.30 met white noise at
 * −40 dBm0 and neither side ever timed out (2.2·10⁹ samples in 300 s); at −45 dBm0 the sender
 * never reached phase E. T.30's own timers do not help when the modem keeps "hearing" a
 * carrier. So every phase gets a ceiling well above what a slow but healthy call needs:
 *
 *   phase        from                               ceiling (defaults)
 *   setup        INVITE sent                        40 s: SIP timer B (32 s) and a margin
 *   ringing      first 18x                          the trunk's ring timeout + 10 s (our CANCEL should end it first)
 *   answered     200 OK, waiting for the DIS        75 s: T.30 T0 (60 s ± 5) and a margin
 *   phase_b      DIS received, before the 1st page  120 s: DCS/TCF at every rate down to 2400, 3 tries each
 *   phase_c      a page starts                      the page's G4 size × 4 at 2400 bit/s + 60 s
 *   phase_d      a page ended, waiting for MCF …    90 s: ECM receiver-not-ready (T5, 60 s) and a margin
 *   phase_e      DCN, hanging up                    15 s
 *
 * The page ceiling: the rendered page's CCITT G4 size is known before the call
 * (`LinePage.encodedBytes`). On the line the page may be bigger (without ECM it goes as
 * MH/MR, about 2–4 × the G4 size for text; with ECM, frames may be sent again), and slower (the
 * modems may fall back to V.27ter at 2400 bit/s). Hence size × expansion × 8 / 2400 s, and a
 * margin for training, minimum scan line time and the end-of-page exchange.
 *
 * A whole-call ceiling (`callCeilingMs`) bounds the sum, for the case where every phase stays
 * in its limit but the call cycles (pages sent again and again).
 *
 * Time is the call's virtual time in milliseconds: the engine clock (8000 samples per second,
 * `samplesToMs`) when the engine runs faster than real time, else the wall clock.
 */

export const CALL_PHASES = ["setup", "ringing", "answered", "phase_b", "phase_c", "phase_d", "phase_e"] as const;
export type CallPhase = (typeof CALL_PHASES)[number];

export interface WatchdogLimits {
  /** INVITE sent → first provisional or final response. */
  setupMs: number;
  /** Added to the trunk's ring timeout: time for CANCEL and its 487. */
  ringMarginMs: number;
  /** Answered → DIS (T.30 phase A). */
  answeredMs: number;
  /** DIS → first page (T.30 phase B, with every training fallback). */
  phaseBMs: number;
  /** End of a page → its response (T.30 phase D, with ECM RR/RNR). */
  phaseDMs: number;
  /** DCN → the call is over. */
  phaseEMs: number;
  /** The slowest image rate a page may go at (V.27ter). */
  lowestBitRate: number;
  /** How much bigger a page may be on the line than its G4 size. */
  pageExpansion: number;
  /** Added to every page's transfer time. */
  pageMarginMs: number;
  /** Added to the sum of the phase ceilings for the whole-call ceiling. */
  callMarginMs: number;
}

export const DEFAULT_WATCHDOG_LIMITS: Readonly<WatchdogLimits> = Object.freeze({
  setupMs: 40_000,
  ringMarginMs: 10_000,
  answeredMs: 75_000,
  phaseBMs: 120_000,
  phaseDMs: 90_000,
  phaseEMs: 15_000,
  lowestBitRate: 2400,
  pageExpansion: 4,
  pageMarginMs: 60_000,
  callMarginMs: 60_000,
});

/** The engine clock runs at 8000 samples per second. */
export function samplesToMs(samples: number): number {
  return samples / 8;
}

export interface WatchdogState {
  phase: CallPhase;
  /** Virtual time (ms) the call entered `phase`. */
  phaseStartedAt: number;
  /** The trunk's ring timeout (ms); needed in `ringing`. */
  ringTimeoutMs?: number;
  /** In `phase_c`: G4 size of the page being sent. */
  pageEncodedBytes?: number;
  /** In `phase_c` and `phase_d`: 1-based number of the page, for the message. */
  pageNo?: number;
  /** Virtual time the whole call must end by (`callStartedAt + callCeilingMs(…)`); absent: no whole-call limit. */
  callDeadlineAt?: number;
}

export type WatchdogVerdict =
  | { expired: false; deadline: number; remainingMs: number }
  | {
      expired: true;
      /** The phase that ran over, or "call" for the whole-call ceiling. */
      phase: CallPhase | "call";
      limitMs: number;
      overByMs: number;
      /** For the attempt's raw cause: what ran over, and by how much. */
      rawCause: string;
    };

/** Longest a page may take on the line: its G4 size, expanded, at the lowest rate, plus the margin. */
export function pageCeilingMs(encodedBytes: number, limits: WatchdogLimits = DEFAULT_WATCHDOG_LIMITS): number {
  if (!(encodedBytes >= 0)) throw new RangeError(`pageCeilingMs: encodedBytes must be >= 0, got ${encodedBytes}`);
  return Math.ceil((encodedBytes * limits.pageExpansion * 8 * 1000) / limits.lowestBitRate) + limits.pageMarginMs;
}

/** The ceiling of one phase, in ms. */
export function phaseLimitMs(state: Pick<WatchdogState, "phase" | "ringTimeoutMs" | "pageEncodedBytes">, limits: WatchdogLimits = DEFAULT_WATCHDOG_LIMITS): number {
  switch (state.phase) {
    case "setup":
      return limits.setupMs;
    case "ringing":
      if (state.ringTimeoutMs === undefined) throw new RangeError("phaseLimitMs: the ringing phase needs the trunk's ringTimeoutMs");
      return state.ringTimeoutMs + limits.ringMarginMs;
    case "answered":
      return limits.answeredMs;
    case "phase_b":
      return limits.phaseBMs;
    case "phase_c":
      if (state.pageEncodedBytes === undefined) throw new RangeError("phaseLimitMs: phase_c needs the page's pageEncodedBytes");
      return pageCeilingMs(state.pageEncodedBytes, limits);
    case "phase_d":
      return limits.phaseDMs;
    case "phase_e":
      return limits.phaseEMs;
  }
}

/** Upper bound of a whole call sending pages of these G4 sizes: every phase at its ceiling, plus the call margin. */
export function callCeilingMs(pageEncodedBytes: readonly number[], ringTimeoutMs: number, limits: WatchdogLimits = DEFAULT_WATCHDOG_LIMITS): number {
  const pages = pageEncodedBytes.reduce((sum, bytes) => sum + pageCeilingMs(bytes, limits) + limits.phaseDMs, 0);
  return (
    limits.setupMs +
    ringTimeoutMs +
    limits.ringMarginMs +
    limits.answeredMs +
    limits.phaseBMs +
    pages +
    limits.phaseEMs +
    limits.callMarginMs
  );
}

/** The virtual time at which the watchdog gives up, unless the phase changes first. */
export function watchdogDeadline(state: WatchdogState, limits: WatchdogLimits = DEFAULT_WATCHDOG_LIMITS): number {
  const phaseDeadline = state.phaseStartedAt + phaseLimitMs(state, limits);
  return state.callDeadlineAt === undefined ? phaseDeadline : Math.min(phaseDeadline, state.callDeadlineAt);
}

const PHASE_TEXT: Record<CallPhase, string> = {
  setup: "call set-up (no answer to the INVITE)",
  ringing: "ringing (no answer, and the CANCEL did not end the call)",
  answered: "waiting for the remote fax to answer with a DIS (T.30 phase A)",
  phase_b: "negotiation (T.30 phase B)",
  phase_c: "page transfer (T.30 phase C)",
  phase_d: "waiting for the page confirmation (T.30 phase D)",
  phase_e: "hang-up (T.30 phase E)",
};

/** Has the call overrun its phase (or whole-call) ceiling at virtual time `now`? */
export function checkWatchdog(state: WatchdogState, now: number, limits: WatchdogLimits = DEFAULT_WATCHDOG_LIMITS): WatchdogVerdict {
  const limitMs = phaseLimitMs(state, limits);
  const phaseDeadline = state.phaseStartedAt + limitMs;
  const callDeadline = state.callDeadlineAt ?? Number.POSITIVE_INFINITY;
  const deadline = Math.min(phaseDeadline, callDeadline);
  if (now < deadline) return { expired: false, deadline, remainingMs: deadline - now };
  const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
  const page = state.pageNo !== undefined && (state.phase === "phase_c" || state.phase === "phase_d") ? `, page ${state.pageNo}` : "";
  if (callDeadline <= phaseDeadline) {
    return {
      expired: true,
      phase: "call",
      limitMs: callDeadline - state.phaseStartedAt,
      overByMs: now - callDeadline,
      rawCause: `Watchdog: the call ran over its whole-call limit during ${PHASE_TEXT[state.phase]}${page}; Faxline ended it`,
    };
  }
  return {
    expired: true,
    phase: state.phase,
    limitMs,
    overByMs: now - phaseDeadline,
    rawCause: `Watchdog: ${PHASE_TEXT[state.phase]}${page} took longer than ${seconds(limitMs)}; the fax engine had not ended the call, so Faxline did`,
  };
}

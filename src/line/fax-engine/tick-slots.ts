/**
 * Spreads the 20 ms ticks of the sessions that share one event loop over the tick period.
 *
 * Why: a session ticks every 20 ms from the moment its clock starts, so its ticks keep the phase
 * (start time modulo 20 ms) they were born with. Sessions whose clocks start in step (calls set up
 * in a batch, or arrivals spaced by a multiple of 20 ms) tick in the same millisecond for the
 * whole call, and the loop runs all their ticks back to back: with 500 calls in one phase the last
 * tick of each round ran 10 ms late, every round (docs/benchmarks.md, bench:lines). A session's
 * phase is ours to choose (its engine only needs 160 samples per 20 ms), so each new session takes
 * the least used of `slots` phases, and its clock starts at the next instant of that phase: at most
 * one period later than it would have.
 *
 * One instance per event loop (a media process, or a node running its sessions inline): sessions
 * on other loops do not compete for this loop, though several media processes on one core do
 * compete for the core, and their phases are not coordinated. Every session counts the same (a
 * G.711 tick costs more than a T.38 one).
 */
export class TickSlots {
  readonly #periodMs: number;
  readonly #used: Uint32Array;
  /** Where the search for the least used slot starts: equal slots are handed out in turn. */
  #cursor = 0;

  /** `periodMs`: the tick period (20 ms); `slots`: how many phases it is cut into (20: one per millisecond, libuv's timer resolution). */
  constructor(periodMs = 20, slots = 20) {
    if (!(periodMs > 0) || !Number.isInteger(slots) || slots < 1) throw new RangeError(`a tick period > 0 and a whole number of slots >= 1 are needed, got ${periodMs} and ${slots}`);
    this.#periodMs = periodMs;
    this.#used = new Uint32Array(slots);
  }

  /**
   * Takes the least used phase for a session whose clock would start at `now` (milliseconds on the
   * clock its runner uses): `startAt` is when to start it instead, in [now, now + period);
   * `release()` gives the phase back when the session ends (more than once is harmless).
   */
  take(now: number): { startAt: number; slot: number; release(): void } {
    const n = this.#used.length;
    let slot = this.#cursor;
    for (let k = 1; k < n; k++) {
      const candidate = (this.#cursor + k) % n;
      if (this.#used[candidate]! < this.#used[slot]!) slot = candidate;
    }
    this.#cursor = (slot + 1) % n;
    this.#used[slot]! += 1;
    const width = this.#periodMs / n;
    const phaseNow = ((now % this.#periodMs) + this.#periodMs) % this.#periodMs;
    const wait = (slot * width - phaseNow + this.#periodMs) % this.#periodMs;
    let released = false;
    return {
      startAt: now + wait,
      slot,
      release: () => {
        if (released) return;
        released = true;
        this.#used[slot]! -= 1;
      },
    };
  }

  /** Sessions holding each slot (for tests and the bench). */
  usage(): number[] {
    return [...this.#used];
  }
}

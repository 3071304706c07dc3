/**
 * Time source. Everything that schedules or stamps time takes a Clock, so that tests can
 * run on virtual time where the peer allows it.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms` milliseconds of this clock's time, or rejects when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason ?? new Error("aborted"));
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, Math.max(0, ms));
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason ?? new Error("aborted"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    }),
};

/**
 * A manually advanced clock for unit tests of pure scheduling logic.
 * `advance()` fires due sleepers in time order.
 */
export class ManualClock implements Clock {
  #now: number;
  #sleepers: { until: number; resolve: () => void }[] = [];

  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason ?? new Error("aborted"));
      const entry = { until: this.#now + Math.max(0, ms), resolve };
      this.#sleepers.push(entry);
      signal?.addEventListener(
        "abort",
        () => {
          this.#sleepers = this.#sleepers.filter((s) => s !== entry);
          reject(signal.reason ?? new Error("aborted"));
        },
        { once: true },
      );
    });
  }

  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    for (;;) {
      this.#sleepers.sort((a, b) => a.until - b.until);
      const next = this.#sleepers[0];
      if (!next || next.until > target) break;
      this.#sleepers.shift();
      this.#now = next.until;
      next.resolve();
      await new Promise((r) => setImmediate(r));
    }
    this.#now = target;
  }
}

/** ISO-8601 UTC with second precision, as the contract's `sentTs` ("2017-08-10T13:05:09Z"). */
export function toIsoSeconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

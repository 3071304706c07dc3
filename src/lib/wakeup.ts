/**
 * An in-process wake-up signal: a role waits for due work with `wait(ms)` and is woken early by
 * `notify()` (a new job on this node, a finished call). Polling remains the source of truth; a
 * missed notification costs at most one poll interval.
 */
export class Wakeup {
  #waiters = new Set<() => void>();
  #pending = false;
  #generation = 0;

  /** Counts notifications: a loop that compares it before and after a look knows whether one came meanwhile. */
  get generation(): number {
    return this.#generation;
  }

  notify(): void {
    this.#generation++;
    if (this.#waiters.size === 0) {
      this.#pending = true;
      return;
    }
    for (const w of this.#waiters) w();
    this.#waiters.clear();
  }

  /** Resolves after `ms`, at `notify()`, or when `signal` aborts: whichever comes first. */
  wait(ms: number, signal: AbortSignal): Promise<void> {
    if (this.#pending || signal.aborted) {
      this.#pending = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.#waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done, { once: true });
      this.#waiters.add(done);
    });
  }
}

/** Resolves after `ms` or as soon as `signal` aborts; leaves no listener behind. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

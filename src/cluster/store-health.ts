/**
 * What this node knows of its own connection to the store, from its registry heartbeats.
 *
 * Judging other nodes needs a steady connection of one's own: after an outage every node's
 * heartbeat and every lease look stale at once, and a node that has just got its connection
 * back must not take a dead-looking node's calls before that node, back as well, has had the
 * time to record them. `steadyFor()` is how long the store has answered this node's
 * heartbeats without a failure in between (0 while they fail); the lease sweep of calls
 * waits until it is at least two heartbeat intervals.
 */
export class StoreHealth {
  #steadySince: number;
  #failingSince: number | null = null;
  #failures = 0;

  constructor(now: number) {
    this.#steadySince = now;
  }

  succeeded(now: number): void {
    if (this.#failingSince !== null) {
      this.#failingSince = null;
      this.#steadySince = now;
    }
    this.#failures = 0;
  }

  failed(now: number): void {
    this.#failingSince ??= now;
    this.#failures += 1;
  }

  get reachable(): boolean {
    return this.#failingSince === null;
  }

  /** When the current outage began, or null. */
  get failingSince(): number | null {
    return this.#failingSince;
  }

  /** Heartbeats that failed in a row. */
  get failures(): number {
    return this.#failures;
  }

  steadyFor(now: number): number {
    return this.#failingSince === null ? Math.max(0, now - this.#steadySince) : 0;
  }
}

/**
 * A singleton duty: work that one node of a data center does at a time (the sweeps of expired
 * leases, validity and deadlines; the retention purge; the sweep of abandoned notification
 * tries), under a lease in `cluster_leases` (Postal's worker role: created, renewed, taken
 * over, or held elsewhere).
 *
 * `tryHold()` is called before each round of the duty. It writes only when the lease is past a
 * third of its length (or not held), so a duty done every 500 ms costs a write every
 * cluster.dutyLease / 3. A failed write (store unreachable) counts as not holding: better a
 * round skipped than two nodes at once. `release()` gives the duty up at a clean stop, so that
 * another node takes it at its next round instead of after the lease.
 */
import type { Kysely } from "kysely";
import { coerceError } from "../errors/internal-error.ts";
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/logger.ts";
import type { Database } from "../store/database.ts";
import { acquireClusterLease, releaseClusterLease } from "../store/queries/cluster-leases.ts";

export class SingletonDuty {
  readonly name: string;
  readonly #db: Kysely<Database>;
  readonly #holder: string;
  readonly #leaseMs: number;
  readonly #clock: Clock;
  readonly #logger: Logger;
  #heldUntil = 0;
  #renewAfter = 0;

  constructor(options: { db: Kysely<Database>; name: string; holder: string; leaseMs: number; clock: Clock; logger: Logger }) {
    this.name = options.name;
    this.#db = options.db;
    this.#holder = options.holder;
    this.#leaseMs = options.leaseMs;
    this.#clock = options.clock;
    this.#logger = options.logger;
  }

  get held(): boolean {
    return this.#clock.now() < this.#heldUntil;
  }

  async tryHold(): Promise<boolean> {
    const now = this.#clock.now();
    if (now < this.#renewAfter && now < this.#heldUntil) return true;
    const wasHeld = now < this.#heldUntil;
    try {
      const result = await acquireClusterLease(this.#db, { name: this.name, holder: this.#holder, now, leaseMs: this.#leaseMs });
      if (result.outcome === "held_elsewhere") {
        if (wasHeld) this.#logger.warn({ duty: this.name, holder: result.holder }, "singleton duty lost to another node");
        this.#heldUntil = 0;
        return false;
      }
      if (result.outcome !== "renewed") this.#logger.info({ duty: this.name, outcome: result.outcome }, "singleton duty taken");
      this.#heldUntil = result.leaseUntil;
      this.#renewAfter = now + Math.floor(this.#leaseMs / 3);
      return true;
    } catch (err) {
      if (wasHeld) this.#logger.warn({ duty: this.name, err: coerceError(err) }, "singleton duty could not be renewed; pausing it");
      this.#heldUntil = 0;
      return false;
    }
  }

  async release(): Promise<void> {
    if (this.#heldUntil === 0) return;
    this.#heldUntil = 0;
    try {
      await releaseClusterLease(this.#db, this.name, this.#holder);
    } catch {
      /* the lease runs out by itself */
    }
  }
}

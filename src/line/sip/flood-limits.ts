/**
 * Bounds per source address on what the SIP line takes, so that one sender (a scanner, a
 * misconfigured PBX, a flood) cannot crowd out the carriers' calls:
 *
 *  - requests: a token bucket per address (`requestsPerSecond`, `requestBurst`); a request over
 *    it is dropped without an answer (`rate_limited`).
 *  - new INVITEs outside a dialog: a second, smaller bucket (`invitesPerSecond`, `inviteBurst`);
 *    over it, a trunk's source gets 503 with Retry-After (a carrier then tries another route or
 *    node), any other source silence.
 *  - refusals to sources that are no trunk's: at most `refusalsPerMinute` answers (403, 401)
 *    per address; past that they get silence (`refused_source`), so answering a scan costs one
 *    datagram per request at most and stops soon.
 *  - wrong digest answers: `lockoutFailures` within `lockoutWindowMs` lock the address out for
 *    `lockoutMs`: its new INVITEs get silence (`locked_out`) without their credentials being
 *    checked again.
 *
 * Memory is bounded: at most `maxSources` addresses are tracked; past that the idle ones (full
 * buckets, no failures) are forgotten first, then the oldest.
 */

export interface FloodLimits {
  /** Requests per second per source address, sustained. (Default: 100) */
  requestsPerSecond: number;
  /** Requests a source may send at once above the sustained rate. (Default: 400) */
  requestBurst: number;
  /** New INVITEs (outside a dialog) per second per source address. (Default: 20) */
  invitesPerSecond: number;
  inviteBurst: number;
  /** Refusals (403, 401) per minute to a source that is no trunk's. (Default: 20) */
  refusalsPerMinute: number;
  /** Wrong digest answers within `lockoutWindowMs` that lock a source out. (Default: 5) */
  lockoutFailures: number;
  lockoutWindowMs: number;
  lockoutMs: number;
  /** Addresses tracked at most. (Default: 10 000) */
  maxSources: number;
}

export const DEFAULT_FLOOD_LIMITS: FloodLimits = {
  requestsPerSecond: 100,
  requestBurst: 400,
  invitesPerSecond: 20,
  inviteBurst: 60,
  refusalsPerMinute: 20,
  lockoutFailures: 5,
  lockoutWindowMs: 600_000,
  lockoutMs: 900_000,
  maxSources: 10_000,
};

interface Bucket {
  tokens: number;
  at: number;
}

interface SourceState {
  requests: Bucket;
  invites: Bucket;
  refusals: Bucket;
  failures: number[];
  lockedUntil: number;
}

export class SourceLimiter {
  readonly limits: FloodLimits;
  readonly #now: () => number;
  readonly #sources = new Map<string, SourceState>();

  constructor(limits: Partial<FloodLimits> = {}, now: () => number = () => performance.now()) {
    this.limits = { ...DEFAULT_FLOOD_LIMITS, ...limits };
    this.#now = now;
  }

  /** A request from `address` may be handled (takes a token). */
  admitRequest(address: string): boolean {
    const l = this.limits;
    return this.#take(this.#state(address).requests, l.requestsPerSecond / 1000, l.requestBurst);
  }

  /** A new INVITE from `address` may be handled (takes a token). */
  admitNewInvite(address: string): boolean {
    const l = this.limits;
    return this.#take(this.#state(address).invites, l.invitesPerSecond / 1000, l.inviteBurst);
  }

  /** A refusal may be sent to `address`, which is no trunk's (takes a token). */
  admitRefusal(address: string): boolean {
    const l = this.limits;
    return this.#take(this.#state(address).refusals, l.refusalsPerMinute / 60_000, l.refusalsPerMinute);
  }

  /** Records a wrong digest answer; true when `address` is now locked out. */
  recordAuthFailure(address: string): boolean {
    const state = this.#state(address);
    const now = this.#now();
    state.failures = state.failures.filter((t) => now - t < this.limits.lockoutWindowMs);
    state.failures.push(now);
    if (state.failures.length >= this.limits.lockoutFailures) {
      state.lockedUntil = now + this.limits.lockoutMs;
      state.failures = [];
      return true;
    }
    return false;
  }

  /** A right answer clears the failures. */
  recordAuthSuccess(address: string): void {
    const state = this.#sources.get(address);
    if (state !== undefined) state.failures = [];
  }

  isLockedOut(address: string): boolean {
    const state = this.#sources.get(address);
    return state !== undefined && state.lockedUntil > this.#now();
  }

  get trackedSources(): number {
    return this.#sources.size;
  }

  #take(bucket: Bucket, perMs: number, burst: number): boolean {
    const now = this.#now();
    bucket.tokens = Math.min(burst, bucket.tokens + (now - bucket.at) * perMs);
    bucket.at = now;
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  #state(address: string): SourceState {
    let state = this.#sources.get(address);
    if (state === undefined) {
      if (this.#sources.size >= this.limits.maxSources) this.#forget();
      const now = this.#now();
      const l = this.limits;
      state = {
        requests: { tokens: l.requestBurst, at: now },
        invites: { tokens: l.inviteBurst, at: now },
        refusals: { tokens: l.refusalsPerMinute, at: now },
        failures: [],
        lockedUntil: 0,
      };
      this.#sources.set(address, state);
    }
    return state;
  }

  /** Makes room: first the sources with nothing to remember, then the oldest tenth that is not locked out. */
  #forget(): void {
    const now = this.#now();
    const l = this.limits;
    const full = (b: Bucket, perMs: number, burst: number): boolean => b.tokens + (now - b.at) * perMs >= burst;
    for (const [address, s] of this.#sources) {
      if (s.lockedUntil <= now && s.failures.length === 0 && full(s.requests, l.requestsPerSecond / 1000, l.requestBurst) && full(s.invites, l.invitesPerSecond / 1000, l.inviteBurst) && full(s.refusals, l.refusalsPerMinute / 60_000, l.refusalsPerMinute)) {
        this.#sources.delete(address);
      }
    }
    if (this.#sources.size < l.maxSources) return;
    // Then the oldest tenth, keeping lockouts (forgetting one would let its source guess again).
    let drop = Math.ceil(l.maxSources / 10);
    for (const [address, s] of this.#sources) {
      if (drop <= 0) break;
      if (s.lockedUntil > now) continue;
      this.#sources.delete(address);
      drop--;
    }
  }
}

/**
 * The short history behind the console's live charts (Operations page): a ring buffer of
 * samples taken every console.chartInterval for console.chartWindow, kept in the memory of each
 * node that serves the console (docs/console.md, ADR 0019).
 *
 * A sample holds what the whole region shares through the store, read by the node that
 * samples, and what only this node knows:
 *  - calls running on every running node of the region: this node's own count, the others' as
 *    their last heartbeat wrote it (nodes.active_calls, every cluster.heartbeatInterval);
 *  - open work of each data center of the region (store/queries/queue-depths.ts openWork);
 *  - this node's receptions running now, and its renders and ended calls of the interval
 *    (NodeMetrics.takeInterval).
 * So any node's console shows the region's calls and queues; render times are the serving
 * node's (each node renders the jobs it claims; the others' are on their /metrics).
 *
 * Nothing here does I/O: the node gives the function that reads the store. A read that fails
 * (store unreachable) leaves the store's part of that sample null: the charts show a gap.
 */
import type { Clock } from "../lib/clock.ts";
import { pause } from "../lib/wakeup.ts";
import type { OpenWork } from "../store/queries/queue-depths.ts";
import type { IntervalFigures } from "./node-metrics.ts";

export interface RegionReading {
  /** Calls by node id, for the nodes of the region that are running. */
  calls: Record<string, number>;
  /** Open work by data center. */
  queues: Record<string, OpenWork>;
}

export interface HistorySample {
  /** When it was taken (ms since the epoch). */
  t: number;
  /** Outbound calls running by node (this node's own count, the others' from their heartbeats); null: the store did not answer. */
  calls: Record<string, number> | null;
  queues: Record<string, OpenWork> | null;
  /** Faxes this node is receiving now. */
  receptions: number;
  /** This node's renders that ended in the interval before the sample, their mean and longest time (null: none). */
  renders: number;
  renderMeanSeconds: number | null;
  renderMaxSeconds: number | null;
  /** This node's calls that ended in the interval, delivered and not. */
  callsDelivered: number;
  callsFailed: number;
}

export interface MetricsHistoryOptions {
  clock: Clock;
  nodeId: string;
  intervalMs: number;
  windowMs: number;
  /** Reads the region's calls and queues from the store. */
  readRegion: (now: number) => Promise<RegionReading>;
  /** This node's calls and receptions running now. */
  own: () => { calls: number; receptions: number };
  /** This node's renders and ended calls since the previous call. */
  takeInterval: () => IntervalFigures;
}

export class MetricsHistory {
  readonly #o: MetricsHistoryOptions;
  readonly #capacity: number;
  readonly #ring: HistorySample[] = [];
  #start = 0;
  #controller = new AbortController();
  #loop: Promise<void> | null = null;

  constructor(options: MetricsHistoryOptions) {
    this.#o = options;
    this.#capacity = Math.max(2, Math.ceil(options.windowMs / options.intervalMs));
  }

  get nodeId(): string {
    return this.#o.nodeId;
  }

  get intervalMs(): number {
    return this.#o.intervalMs;
  }

  get windowMs(): number {
    return this.#o.windowMs;
  }

  /** Takes one sample now. */
  async sample(): Promise<HistorySample> {
    const o = this.#o;
    const now = o.clock.now();
    const figures = o.takeInterval();
    const own = o.own();
    let region: RegionReading | null = null;
    try {
      region = await o.readRegion(now);
    } catch {
      region = null;
    }
    const sample: HistorySample = {
      t: now,
      calls: region === null ? null : { ...region.calls, [o.nodeId]: own.calls },
      queues: region?.queues ?? null,
      receptions: own.receptions,
      renders: figures.renders,
      renderMeanSeconds: figures.renders > 0 ? figures.renderSeconds / figures.renders : null,
      renderMaxSeconds: figures.renders > 0 ? figures.renderMaxSeconds : null,
      callsDelivered: figures.callsDelivered,
      callsFailed: figures.callsFailed,
    };
    if (this.#ring.length < this.#capacity) this.#ring.push(sample);
    else {
      this.#ring[this.#start] = sample;
      this.#start = (this.#start + 1) % this.#capacity;
    }
    return sample;
  }

  /** The samples taken after `after` (ms; all when omitted), oldest first. */
  samples(after = -Infinity): HistorySample[] {
    const ordered = [...this.#ring.slice(this.#start), ...this.#ring.slice(0, this.#start)];
    return ordered.filter((s) => s.t > after);
  }

  /** Samples at once, then every interval until stop(). */
  start(): void {
    const signal = this.#controller.signal;
    this.#loop = (async () => {
      while (!signal.aborted) {
        await this.sample();
        await pause(this.#o.intervalMs, signal);
      }
    })();
  }

  async stop(): Promise<void> {
    this.#controller.abort();
    await this.#loop;
  }
}

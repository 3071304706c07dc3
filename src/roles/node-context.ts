/**
 * What every role of one node shares: config, store, clock, logger, the node's identity, the
 * wake-up signals between roles (fed by other nodes too, through the store's work signals),
 * what the node knows of its connection to the store, and its singleton duties.
 *
 * `holder` is the lease-holder name written into `locked_by`: the node id plus a token new at
 * every start. A restarted node recognises the leases of its previous life by the node id and
 * releases them at once, instead of waiting for them to expire.
 */
import type { FaxlineConfig } from "../config/schema.ts";
import type { SingletonDuty } from "../cluster/singleton-duty.ts";
import type { StoreHealth } from "../cluster/store-health.ts";
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/logger.ts";
import type { Wakeup } from "../lib/wakeup.ts";
import type { Line } from "../line/line.ts";
import type { Store } from "../store/store.ts";
import type { RetrySchedule } from "../scheduler/retry-policy.ts";
import type { NodeMetrics } from "../metrics/node-metrics.ts";

export interface NodeContext {
  config: FaxlineConfig;
  store: Store;
  clock: Clock;
  logger: Logger;
  nodeId: string;
  holder: string;
  wake: { render: Wakeup; send: Wakeup; notify: Wakeup };
  lines: { test: Line; production: Line | null };
  /** This node's connection to the store, as its registry heartbeats see it. */
  health: StoreHealth;
  /** A duty that one node of the store does at a time (cluster/singleton-duty.ts). */
  singleton(name: string): SingletonDuty;
  /** What the roles count for GET /metrics. */
  metrics: NodeMetrics;
}

export function retrySchedule(config: FaxlineConfig): RetrySchedule {
  return {
    maxAttempts: config.retry.maxAttempts,
    delaysMs: {
      busy: config.retry.busy,
      no_answer: config.retry.noAnswer,
      no_fax: config.retry.noFax,
      protocol: config.retry.protocol,
      internal: config.retry.internal,
    },
  };
}

export interface RunningRole {
  readonly name: string;
  /**
   * Stops taking new work and resolves when in-flight work has ended or been released. Work that
   * may run to its end (a call) does so until `hurry` aborts (node.shutdownGrace; absent: at once).
   */
  stop(hurry?: AbortSignal): Promise<void>;
}

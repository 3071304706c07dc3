/**
 * What the API's routes need from the node: configuration, store, clock, logger and the hooks
 * that wake the node's own roles. Shared by build-app.ts and every route module, so it lives
 * below both.
 */
import type { FaxlineConfig } from "../config/schema.ts";
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/logger.ts";
import type { Store } from "../store/store.ts";
import type { NodeMetrics } from "../metrics/node-metrics.ts";
import type { MetricsHistory } from "../metrics/metrics-history.ts";

export interface ApiDeps {
  config: FaxlineConfig;
  store: Store;
  clock: Clock;
  logger: Logger;
  /** Called after a job is stored, to wake this node's scheduler. */
  onJobAccepted?: (jobId: string) => void;
  /** Called after a notification is queued for redelivery, to wake this node's notifier. */
  onNotificationQueued?: () => void;
  /** The node's metrics: GET /metrics serves them, the routes count into them. */
  metrics?: NodeMetrics;
  /** The short history of the console's live charts (a node serving the console keeps one). */
  history?: MetricsHistory;
  /** Why this node is not ready for work now (roles not yet running), or null when it is. */
  notReady?: () => string | null;
}

/**
 * How roles behave while the store does not answer (docs/architecture.md, "The store"):
 *  - a write that records something that already happened (a call's outcome, a push's try) is
 *    tried again until the store answers, backing off up to half a heartbeat interval, so that
 *    it lands before any other node may judge this one dead (cluster/store-health.ts). A node
 *    that is stopping gives up after RECORD_GRACE_ON_STOP_MS: the lease sweep then redoes the
 *    work (a call is retried as sender_lost, a push sent again);
 *  - the role loops, which fail at every poll while the store is away, report that once per
 *    loop and LOOP_OUTAGE_REPORT_MS as a warning instead of an error each time; other errors
 *    stay errors.
 */
import { coerceError } from "../errors/internal-error.ts";
import type { Logger } from "../lib/logger.ts";
import type { NodeContext } from "./node-context.ts";

/** How long a stopping node keeps trying to record an outcome while the store is down. */
export const RECORD_GRACE_ON_STOP_MS = 10_000;
const LOOP_OUTAGE_REPORT_MS = 30_000;

export async function retryWhileStoreDown<T>(ctx: NodeContext, what: string, write: () => Promise<T>, stopSignal: AbortSignal, log: Logger): Promise<T> {
  const maxDelay = Math.max(50, Math.floor(ctx.config.cluster.heartbeatInterval / 2));
  let delay = Math.min(100, maxDelay);
  let stoppingSince: number | null = null;
  for (let tries = 1; ; tries++) {
    try {
      const result = await write();
      if (tries > 1) log.info({ tries }, `${what} recorded after the store came back`);
      return result;
    } catch (err) {
      if (!ctx.store.faults.isUnavailable(err)) throw err;
      if (stopSignal.aborted) stoppingSince ??= Date.now();
      if (stoppingSince !== null && Date.now() - stoppingSince > RECORD_GRACE_ON_STOP_MS) throw err;
      if (tries === 1) log.warn({ err: coerceError(err) }, `the store does not answer; the ${what} is kept and written when it does`);
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, maxDelay);
    }
  }
}

/** Error reporting of one role loop (see the header). */
export function loopErrors(ctx: NodeContext, loop: string, log: Logger = ctx.logger): (err: unknown) => void {
  let lastOutageReport = Number.NEGATIVE_INFINITY;
  let suppressed = 0;
  return (err) => {
    if (ctx.store.faults.isUnavailable(err)) {
      const now = Date.now();
      if (now - lastOutageReport < LOOP_OUTAGE_REPORT_MS) {
        suppressed += 1;
        return;
      }
      log.warn({ err: coerceError(err), loop, failuresSinceLastReport: suppressed }, `${loop}: the store does not answer; trying again`);
      lastOutageReport = now;
      suppressed = 0;
      return;
    }
    log.error({ err: coerceError(err), loop }, `${loop} failed; trying again`);
  };
}

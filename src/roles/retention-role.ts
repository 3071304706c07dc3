/**
 * The retention role: every `retention.interval`, on one node of the data center at a time
 * (the singleton duty `retention:<dc>`), purges completed jobs' documents, then
 * expired reports, then finished notifications older than retention.defaultDays (with their
 * delivery logs), batch by batch, yielding to other work between batches
 * (retention/purge-expired-data.ts, store/queries/notifications.ts). It also counts in the
 * reporting rollups what ended without being counted (rows of before migration 0025: the
 * backfill) and deletes rollup days past reporting.rollupRetention
 * (store/queries/report-rollups.ts), forgets nodes of the node registry that stopped, or went
 * silent, cluster.forgetNodesAfter ago (store/queries/nodes.ts), and forgets wrong mail-to-fax
 * PINs whose mailToFax.pinLockout has passed (store/queries/mail-to-fax.ts).
 */
import { purgeCompletedDocuments, purgeExpiredReports, type PurgeOptions } from "../retention/purge-expired-data.ts";
import { pause } from "../lib/wakeup.ts";
import { forgetWrongPins } from "../store/queries/mail-to-fax.ts";
import { forgetNodes } from "../store/queries/nodes.ts";
import { purgeFinishedNotifications } from "../store/queries/notifications.ts";
import { purgeReceivedFaxes } from "../store/queries/received-faxes.ts";
import { dayOf, purgeRollups, rollUpPending } from "../store/queries/report-rollups.ts";
import type { NodeContext, RunningRole } from "./node-context.ts";
import { loopErrors } from "./store-outage.ts";

const yieldToOthers = () => new Promise<void>((resolve) => setImmediate(resolve));

const DAY_MS = 86_400_000;

export async function purgeOnce(ctx: NodeContext): Promise<{ documents: number; reports: number; notifications: number; receivedFaxes: number }> {
  const options = (): PurgeOptions => ({
    datacenter: ctx.config.node.datacenter,
    now: ctx.clock.now(),
    defaultRetentionDays: ctx.config.retention.defaultDays,
    batchSize: ctx.config.retention.batchSize,
  });
  let documents = 0;
  let reports = 0;
  for (;;) {
    const n = await purgeCompletedDocuments(ctx.store.db, options());
    documents += n;
    if (n < ctx.config.retention.batchSize) break;
    await yieldToOthers();
  }
  for (;;) {
    const n = await purgeExpiredReports(ctx.store.db, options());
    reports += n;
    if (n < ctx.config.retention.batchSize) break;
    await yieldToOthers();
  }
  let notifications = 0;
  for (;;) {
    const { now, datacenter, batchSize } = options();
    const n = await purgeFinishedNotifications(ctx.store.db, datacenter, now - ctx.config.retention.defaultDays * DAY_MS, batchSize);
    notifications += n;
    if (n < batchSize) break;
    await yieldToOthers();
  }
  let receivedFaxes = 0;
  for (;;) {
    const { now, datacenter, batchSize } = options();
    const n = await purgeReceivedFaxes(ctx.store.db, datacenter, now, ctx.config.inbound.retentionDays, batchSize);
    receivedFaxes += n;
    if (n < batchSize) break;
    await yieldToOthers();
  }
  return { documents, reports, notifications, receivedFaxes };
}

/**
 * The reporting rollups' upkeep: count what was never counted (a backfill after migration 0025
 * runs here over a few rounds), then drop rollup days past reporting.rollupRetention.
 */
export async function rollupUpkeep(ctx: NodeContext): Promise<{ rolledUp: number; rollupRows: number }> {
  let rolledUp = 0;
  for (;;) {
    const n = await rollUpPending(ctx.store.db, ctx.config.retention.batchSize, ctx.clock.now());
    rolledUp += n.faxes + n.calls + n.receptions;
    if (n.jobs < ctx.config.retention.batchSize && n.receptions < ctx.config.retention.batchSize) break;
    await yieldToOthers();
  }
  const rollupRows = await purgeRollups(ctx.store.db, dayOf(ctx.clock.now() - ctx.config.reporting.rollupRetention));
  return { rolledUp, rollupRows };
}

/**
 * Removes the node registry's rows of nodes that stopped, or wrote their last heartbeat,
 * cluster.forgetNodesAfter ago, whatever their data center: a data center that died for good
 * has no retention role of its own left to do it. Returns how many.
 */
export async function forgetOldNodes(ctx: NodeContext): Promise<number> {
  return forgetNodes(ctx.store.db, ctx.clock.now() - ctx.config.cluster.forgetNodesAfter);
}

export function startRetentionRole(ctx: NodeContext): RunningRole {
  const controller = new AbortController();
  // One node of the data center purges at a time; another takes over when it stops.
  const duty = ctx.singleton(`retention:${ctx.config.node.datacenter}`);
  const reportError = loopErrors(ctx, "retention purge");
  const loop = (async () => {
    let lastPurge = Number.NEGATIVE_INFINITY;
    while (!controller.signal.aborted) {
      try {
        // The lease is renewed more often than the purge runs, so the duty stays with its node.
        if ((await duty.tryHold()) && ctx.clock.now() - lastPurge >= ctx.config.retention.interval) {
          lastPurge = ctx.clock.now();
          const purged = await purgeOnce(ctx);
          if (purged.documents + purged.reports + purged.notifications + purged.receivedFaxes > 0) ctx.logger.info(purged, "retention purge");
          const rollups = await rollupUpkeep(ctx);
          if (rollups.rolledUp + rollups.rollupRows > 0) ctx.logger.info(rollups, "reporting rollups");
          const nodes = await forgetOldNodes(ctx);
          if (nodes > 0) ctx.logger.info({ nodes, forgetNodesAfterMs: ctx.config.cluster.forgetNodesAfter }, "node registry: stopped or silent nodes forgotten");
          await forgetWrongPins(ctx.store.db, ctx.clock.now(), ctx.config.mailToFax.pinLockout);
        }
      } catch (err) {
        reportError(err);
      }
      await pause(Math.min(ctx.config.retention.interval, Math.floor(ctx.config.cluster.dutyLease / 3)), controller.signal);
    }
    await duty.release();
  })();
  return {
    name: "retention",
    async stop() {
      controller.abort();
      await loop;
    },
  };
}

/**
 * The retention role: every `retention.interval`, purges completed jobs' documents and then
 * expired reports, batch by batch, yielding to other work between batches
 * (retention/purge-expired-data.ts).
 */
import { coerceError } from "../errors/internal-error.ts";
import { purgeCompletedDocuments, purgeExpiredReports, type PurgeOptions } from "../retention/purge-expired-data.ts";
import { pause } from "../lib/wakeup.ts";
import type { NodeContext, RunningRole } from "./node-context.ts";

const yieldToOthers = () => new Promise<void>((resolve) => setImmediate(resolve));

export async function purgeOnce(ctx: NodeContext): Promise<{ documents: number; reports: number }> {
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
  return { documents, reports };
}

export function startRetentionRole(ctx: NodeContext): RunningRole {
  const controller = new AbortController();
  const loop = (async () => {
    while (!controller.signal.aborted) {
      try {
        const purged = await purgeOnce(ctx);
        if (purged.documents + purged.reports > 0) ctx.logger.info(purged, "retention purge");
      } catch (err) {
        ctx.logger.error({ err: coerceError(err) }, "retention purge failed");
      }
      await pause(ctx.config.retention.interval, controller.signal);
    }
  })();
  return {
    name: "retention",
    async stop() {
      controller.abort();
      await loop;
    },
  };
}

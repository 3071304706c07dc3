/**
 * Kysely's query log, turned into a duration callback (the node's store query metric). Shared by
 * both dialects; errors are left to the callers, who see them thrown.
 */
import type { KyselyConfig, LogEvent } from "kysely";

export function queryLog(onQuery: ((durationMs: number) => void) | undefined): Pick<KyselyConfig, "log"> {
  if (!onQuery) return {};
  return {
    log(event: LogEvent) {
      if (event.level === "query") onQuery(event.queryDurationMillis);
    },
  };
}

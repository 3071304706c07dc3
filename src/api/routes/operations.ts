/**
 * Routes for operators, outside the contract and without authentication (keep them off the public
 * listener with the proxy, docs/operations.md):
 *
 * - `GET /metrics`: the node's metrics in the Prometheus text format (metrics/node-metrics.ts).
 * - `GET /health/live`: 200 while the process serves HTTP (a liveness probe; restart when it fails).
 * - `GET /health/ready`: 200 when this node should get traffic: its roles run, it is not
 *   draining, and its store answers; else 503 with the reason (a readiness probe).
 */
import type { FastifyInstance } from "fastify";
import { ApiError } from "../../errors/api-errors.ts";
import type { ApiDeps } from "../api-deps.ts";

export function registerOperationsRoutes(app: FastifyInstance, deps: ApiDeps, state: { draining(): boolean; storeFault(err: unknown): string | null }): void {
  const { config } = deps;
  const identity = { region: config.node.region, datacenter: config.node.datacenter };

  if (deps.metrics) {
    const metrics = deps.metrics;
    app.get("/metrics", { schema: { hide: true } }, async (_request, reply) => {
      const { contentType, text } = await metrics.exposition();
      return reply.type(contentType).send(text);
    });
  }

  app.get("/health/live", { schema: { hide: true } }, async () => ({ status: "live", ...identity }));

  app.get("/health/ready", { schema: { hide: true } }, async (_request, reply) => {
    const checks: Record<string, string> = {};
    const notReady = deps.notReady?.() ?? null;
    checks.roles = notReady ?? "running";
    checks.draining = state.draining() ? "yes: the node is shutting down" : "no";
    try {
      await deps.store.db.selectFrom("nodes").select("id").limit(1).execute();
      checks.store = "reachable";
    } catch (err) {
      const fault = state.storeFault(err);
      if (fault === null) throw err;
      checks.store = fault;
    }
    const ready = notReady === null && !state.draining() && checks.store === "reachable";
    if (ready) return { status: "ready", ...identity, store: deps.store.dialect, checks };
    reply.header("Retry-After", "5");
    const why = [notReady, state.draining() ? "the node is shutting down" : null, checks.store !== "reachable" ? `the store: ${checks.store}` : null].filter(Boolean).join("; ");
    return reply.status(503).send(new ApiError(state.draining() ? "service_unavailable" : checks.store !== "reachable" ? "store_unavailable" : "service_unavailable", `Not ready: ${why}`).toBody());
  });
}

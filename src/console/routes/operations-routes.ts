/**
 * The console's Operations page, for operator logins (logins.is_admin) only: the region's nodes
 * and their heartbeats, queue depths per data center, calls running now, failure reasons of the
 * last hour and destinations that kept failing over the last day.
 *
 *  - GET /console/api/operations
 *  - GET /console/api/operations/history?after=<ms>: the live charts' samples taken after
 *    `after` (all the node keeps when omitted; metrics/metrics-history.ts)
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { ApiError } from "../../errors/api-errors.ts";
import { failureReason, isFailureReasonCode } from "../../errors/failure-reasons.ts";
import { listNodes } from "../../store/queries/nodes.ts";
import { failingDestinations, failureReasonsSince, runningCalls } from "../../store/queries/operations-overview.ts";
import { queueDepths } from "../../store/queries/queue-depths.ts";
import type { ConsoleDeps } from "../console-deps.ts";

const HOUR_MS = 3_600_000;

export function registerOperationsRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  const { db } = deps.store;
  const requireOperator = async (request: FastifyRequest) => {
    const session = await deps.sessions.require(request);
    if (!session.isAdmin) throw new ApiError("operator_only", `Login "${session.login}" is not an operator; an operator grants it with faxline accounts set-admin`);
  };

  app.get("/operations/history", async (request) => {
    await requireOperator(request);
    const raw = (request.query as { after?: string }).after;
    const after = raw === undefined || raw === "" ? undefined : Number(raw);
    if (after !== undefined && !Number.isFinite(after)) throw new ApiError("invalid_request", `after is "${raw}"; give the time of the last sample you have, in milliseconds since 1970`);
    const history = deps.history;
    return {
      node: history?.nodeId ?? null,
      roles: deps.config.node.roles,
      nowTs: deps.clock.now(),
      intervalMs: history?.intervalMs ?? deps.config.console.chartInterval,
      windowMs: history?.windowMs ?? deps.config.console.chartWindow,
      samples: history?.samples(after) ?? [],
    };
  });

  app.get("/operations", async (request) => {
    await requireOperator(request);
    const now = deps.clock.now();
    const heartbeat = deps.config.cluster.heartbeatInterval;
    const [nodes, depths, calls, reasons, failing] = await Promise.all([
      listNodes(db),
      Promise.all(deps.regionDatacenters.map(async (dc) => ({ datacenter: dc, counts: await queueDepths(db, dc) }))),
      runningCalls(db, deps.regionDatacenters),
      failureReasonsSince(db, now - HOUR_MS),
      failingDestinations(db, now - 24 * HOUR_MS),
    ]);
    return {
      generatedTs: new Date(now).toISOString(),
      region: deps.config.node.region,
      nodes: nodes
        .filter((n) => n.region === deps.config.node.region)
        .map((n) => ({
          id: n.id,
          datacenter: n.datacenter,
          roles: JSON.parse(n.roles) as string[],
          version: n.version,
          hostname: n.hostname,
          startedTs: new Date(Number(n.started_at)).toISOString(),
          lastSeenTs: new Date(Number(n.last_seen_at)).toISOString(),
          secondsSinceHeartbeat: Math.max(0, Math.round((now - Number(n.last_seen_at)) / 1000)),
          state: n.stopped_at !== null ? "stopped" : now - Number(n.last_seen_at) > 3 * heartbeat ? "silent" : "running",
          activeCalls: n.active_calls,
          callsByTrunk: n.stopped_at === null && n.calls_by_trunk ? (JSON.parse(n.calls_by_trunk) as { trunk: string; transport: string; calls: number }[]) : [],
        })),
      queues: depths,
      runningCalls: calls.map((c) => ({ ...c, startedTs: new Date(c.startedAt).toISOString(), seconds: Math.round((now - c.startedAt) / 1000) })),
      failureReasons: reasons.map((r) => ({
        ...r,
        category: isFailureReasonCode(r.reasonCode) ? failureReason(r.reasonCode).category : null,
        description: isFailureReasonCode(r.reasonCode) ? failureReason(r.reasonCode).description : r.reasonCode,
      })),
      failingDestinations: failing.map((d) => ({ ...d, lastAttemptTs: new Date(d.lastAttemptAt).toISOString() })),
    };
  });
}

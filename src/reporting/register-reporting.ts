/**
 * The reporting interface (docs/reporting.md), a room of its own on the API's Fastify app:
 * `/graphql` (graphql-route.ts) and the exports under `/reporting/v1` (export-routes.ts), with the
 * API's authentication. It reads the store through store/queries/report-udrs.ts (usage records)
 * and report-aggregates.ts (the daily rollups that report-rollups.ts keeps).
 */
import type { FastifyInstance } from "fastify";
import type { Authenticator } from "../api/plugins/authenticate.ts";
import type { Logger } from "../lib/logger.ts";
import { registerExportRoutes } from "./export-routes.ts";
import type { ReportingDeps } from "./graphql-resolvers.ts";
import { registerGraphqlRoute } from "./graphql-route.ts";

export interface RegisterReportingDeps extends ReportingDeps {
  authenticator: Authenticator;
  logger: Logger;
}

export async function registerReporting(app: FastifyInstance, deps: RegisterReportingDeps): Promise<void> {
  await app.register(async (graphql) => registerGraphqlRoute(graphql, deps));
  await app.register(async (exports) => registerExportRoutes(exports, deps), { prefix: "/reporting/v1" });
}

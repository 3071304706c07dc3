/**
 * GET /audit ?limit ?offset ?resource ?key: the customer's audit log (audit-log.ts), newest
 * first, for managers and operators like the rest of the configuration API.
 */
import type { FastifyInstance } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { ApiErrorBodySchema } from "../api/schemas/reports.ts";
import { listAudit } from "./audit-log.ts";
import { configActor } from "./config-actor.ts";
import { AuditPageSchema, CustomerQuery, PageQuery } from "./config-schemas.ts";
import { pageOf, type ConfigRouteDeps } from "./inbound-routes.ts";

export function registerAuditRoutes(root: FastifyInstance, deps: ConfigRouteDeps): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const { db } = deps.store;
  app.get(
    "/audit",
    {
      schema: {
        summary: "Every change made through the configuration API: who, when, what, before and after (newest first)",
        operationId: "listConfigAudit",
        tags: ["configuration"],
        querystring: Type.Object({
          ...CustomerQuery,
          ...PageQuery,
          resource: Type.Optional(Type.String({ maxLength: 64, description: "Only this resource, e.g. inbound/numbers" })),
          key: Type.Optional(Type.String({ maxLength: 320, description: "Only this number, profile or user" })),
        }),
        response: { 200: AuditPageSchema, 400: ApiErrorBodySchema, 401: ApiErrorBodySchema, 403: ApiErrorBodySchema, 404: ApiErrorBodySchema },
      },
    },
    async (request) => {
      const actor = await configActor(db, request);
      const page = pageOf(request.query);
      const { entries, hasMore } = await listAudit(db, actor.custNr, { ...page, resource: request.query.resource, key: request.query.key });
      return { entries, limit: page.limit, offset: page.offset, hasMore };
    },
  );
}

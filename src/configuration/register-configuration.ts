/**
 * The configuration API (docs/config-api.md; ADR 0017), a room of its own on the API's Fastify
 * app, in the shape of the provider's Fax Configuration API 2.0 under `/config/v2`: the inbound
 * resources (inbound-routes.ts) and the audit log (audit-routes.ts). Authentication is the REST
 * API's (Basic, or the console's session); who may act on which customer is config-actor.ts;
 * every change is written with its audit entry (audit-log.ts `auditedChange`). The mail-to-fax
 * resources under /outbound are outbound-routes.ts.
 */
import type { FastifyInstance } from "fastify";
import type { Authenticator } from "../api/plugins/authenticate.ts";
import { registerAuditRoutes } from "./audit-routes.ts";
import { registerInboundConfigRoutes, type ConfigRouteDeps } from "./inbound-routes.ts";
import { registerOutboundConfigRoutes } from "./outbound-routes.ts";

export const CONFIG_API_BASE = "/config/v2";

export interface RegisterConfigurationDeps extends ConfigRouteDeps {
  authenticator: Authenticator;
}

export async function registerConfiguration(app: FastifyInstance, deps: RegisterConfigurationDeps): Promise<void> {
  await app.register(
    async (config) => {
      config.addHook("onRequest", (request, reply) => deps.authenticator.authenticate(request, reply));
      registerInboundConfigRoutes(config, deps);
      registerOutboundConfigRoutes(config, deps);
      registerAuditRoutes(config, deps);
    },
    { prefix: CONFIG_API_BASE },
  );
}

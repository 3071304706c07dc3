/**
 * The web console: static files at /console/ (/ redirects there) and its JSON routes under
 * /console/api/. Sessions also sign the browser in to /rest/v1 (api/plugins/authenticate.ts), so
 * the pages send, preview, cancel, delete and redeliver through the public API itself.
 */
import type { FastifyInstance } from "fastify";
import type { ConsoleDeps } from "./console-deps.ts";
import { registerJobRoutes } from "./routes/job-routes.ts";
import { registerOperationsRoutes } from "./routes/operations-routes.ts";
import { registerReceivedRoutes } from "./routes/received-routes.ts";
import { registerSessionRoutes } from "./routes/session-routes.ts";
import { registerSettingsRoutes } from "./routes/settings-routes.ts";
import { registerStaticFiles } from "./static-files.ts";

export async function registerConsole(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  registerStaticFiles(app);
  await app.register(
    async (api) => {
      // The console's own routes are not part of the public API: kept out of /openapi.json.
      api.addHook("onRoute", (route) => {
        route.schema = { ...(route.schema ?? {}), hide: true };
      });
      // Never cached: every answer is one login's data.
      api.addHook("onSend", async (_request, reply) => {
        reply.header("Cache-Control", "no-store");
      });
      registerSessionRoutes(api, deps);
      registerJobRoutes(api, deps);
      registerSettingsRoutes(api, deps);
      registerOperationsRoutes(api, deps);
      registerReceivedRoutes(api, deps);
    },
    { prefix: "/console/api" },
  );
}

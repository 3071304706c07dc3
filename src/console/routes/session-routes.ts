/**
 * Console sign-in, the current session, sign-out, and the small lookups the Send page uses
 * while a person types (number check, test numbers).
 *
 *  - POST   /console/api/session        {login, password} → the account and its CSRF token; sets the cookie
 *  - GET    /console/api/session        the signed-in account (401 when not signed in or ended)
 *  - DELETE /console/api/session        sign out (CSRF)
 *  - GET    /console/api/numbers/check?number=…   the number as it would be dialled, or why not
 *  - GET    /console/api/test-numbers   the test line's numbers (for test logins)
 */
import type { FastifyInstance } from "fastify";
import { Type } from "typebox";
import { ApiError } from "../../errors/api-errors.ts";
import { testNumbersForDisplay } from "../../line/test-numbers.ts";
import { normalizeFaxNumber, REGION_NUMBER_CONTEXT } from "../../numbers/normalize-number.ts";
import type { ConsoleDeps } from "../console-deps.ts";
import type { ConsoleAccount } from "../console-sessions.ts";

function accountView(deps: ConsoleDeps, a: ConsoleAccount) {
  return {
    login: a.login,
    custNr: a.custNr,
    test: a.isTest,
    operator: a.isAdmin,
    manager: a.isManager,
    csrfToken: a.csrfToken,
    expiresTs: new Date(a.expiresAt).toISOString(),
    region: deps.config.node.region,
    datacenter: deps.config.node.datacenter,
    datacenters: deps.regionDatacenters,
    /** The reporting interface is served (reporting.enabled): the console shows Reports. */
    reports: deps.config.reporting.enabled,
  };
}

export function registerSessionRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  const SignIn = Type.Object({ login: Type.String({ minLength: 1, maxLength: 128 }), password: Type.String({ minLength: 1, maxLength: 1024 }) }, { additionalProperties: false });

  app.post("/session", { schema: { body: SignIn } }, async (request, reply) => {
    const { login, password } = request.body as { login: string; password: string };
    const account = await deps.sessions.signIn(request, reply, login.trim(), password);
    request.log.info({ login: account.login }, "console sign-in");
    return accountView(deps, account);
  });

  app.get("/session", async (request) => accountView(deps, await deps.sessions.require(request)));

  app.delete("/session", async (request, reply) => {
    await deps.sessions.require(request);
    await deps.sessions.signOut(request, reply);
    return reply.code(204).send();
  });

  app.get("/numbers/check", async (request) => {
    await deps.sessions.require(request);
    const number = (request.query as { number?: string }).number;
    if (typeof number !== "string") throw new ApiError("invalid_request", "number is required");
    const result = normalizeFaxNumber(number.slice(0, 200), REGION_NUMBER_CONTEXT[deps.config.node.region]);
    return result.ok ? { ok: true, e164: result.e164 } : { ok: false, message: result.message };
  });

  app.get("/test-numbers", async (request) => {
    await deps.sessions.require(request);
    return { numbers: testNumbersForDisplay() };
  });
}

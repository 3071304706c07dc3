/**
 * Builds the Fastify application (never listens: the api role or a test does that).
 *
 * - `/rest/v1/{custNr}/fax…`: the contract's six operations (routes/v1/*.ts), Basic auth on all.
 * - `/openapi.json` and `/docs`: the OpenAPI document generated from the TypeBox schemas.
 * - `/health`: liveness, with the node's region and data center.
 * - `/console/`: the web console (console/register-console.ts), when `console.enabled`.
 * - `/graphql`, `/reporting/v1/…`: the reporting interface (reporting/register-reporting.ts).
 * - `/config/v2/…`: the configuration API (configuration/register-configuration.ts).
 *
 * Errors: every non-2xx body comes from the API error catalogue (errors/api-errors.ts) through
 * one error handler; unexpected errors are logged and answered with a generic 500.
 */
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply } from "fastify";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { ApiError, type ApiErrorCode } from "../errors/api-errors.ts";
import type { ApiDeps } from "./api-deps.ts";
import { Authenticator } from "./plugins/authenticate.ts";
import { registerSendFaxRoute } from "./routes/v1/send-fax.ts";
import { registerReportRoutes } from "./routes/v1/fax-reports.ts";
import { registerNotificationRoutes } from "./routes/v1/notification-deliveries.ts";
import { registerFaxImageRoutes } from "./routes/v1/fax-images.ts";
import { bodyHash, parseJsonBody } from "./plugins/json-body.ts";
import { registerOperationsRoutes } from "./routes/operations.ts";
import { ConsoleSessions } from "../console/console-sessions.ts";
import { registerConsole } from "../console/register-console.ts";
import { PullAuthenticator } from "../inbound/pull-auth.ts";
import { registerPullRoutes } from "./routes/faxin/pull-routes.ts";
import { REGION_DATACENTERS } from "../config/schema.ts";
import { clientErrorAnswer, frameworkErrorToApiError, MAX_PATH_PARAM_LENGTH } from "./plugins/framework-errors.ts";
import { registerReporting } from "../reporting/register-reporting.ts";
import { registerConfiguration } from "../configuration/register-configuration.ts";

export interface FaxlineApp {
  app: FastifyInstance;
  /** Makes every further request answer 503 (the node is shutting down). */
  drain(): void;
}

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** Maps the first schema violation to a catalogue error with a message naming the field. */
export function validationToApiError(errors: AjvError[], context: string): ApiError {
  const first = errors[0];
  if (!first) return new ApiError("invalid_request");
  const path = first.instancePath.replace(/^\//, "").replace(/\/(\d+)(?=\/|$)/g, "[$1]").replace(/\//g, ".");
  const missing = first.keyword === "required" ? String(first.params?.missingProperty ?? "") : "";
  const field = [path, missing].filter(Boolean).join(".") || context;
  let code: ApiErrorCode = "invalid_request";
  let message = `${field} ${first.message ?? "is invalid"}`;
  if (/^documents\[\d+\]\.name$/.test(field) && (first.keyword === "maxLength" || first.keyword === "pattern" || first.keyword === "minLength")) {
    code = "document_name_invalid";
    message = `${field} must be 1 to 32 characters of a-z, A-Z, 0-9, "-", "_" and "."`;
  } else if (first.keyword === "maxLength") {
    code = "field_too_long";
    message = `${field} is longer than ${String(first.params?.limit)} characters`;
  } else if (field === "recipients" && first.keyword === "required") {
    code = "no_recipients";
    message = "recipients is missing; a job needs at least one recipient";
  } else if (field === "jobIds" && first.keyword === "maxItems") {
    code = "too_many_job_ids";
    message = `jobIds has more than ${String(first.params?.limit)} entries; split the request`;
  } else if (first.keyword === "maxItems") {
    message = `${field} has more than ${String(first.params?.limit)} entries`;
  } else if (first.keyword === "required") {
    message = `${field} is required`;
  }
  return new ApiError(code, message);
}

/** Retry-After of a 503 store_unavailable: about how long a primary switch takes. */
const STORE_RETRY_AFTER_SECONDS = 5;

/** A store fault in a few words for the client, without addresses or SQL. */
function storeFaultSummary(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (code === "57014") return "a statement took too long";
  if (code === "25006") return "the database is read-only (a failover is under way)";
  if (typeof code === "string" && code.startsWith("SQLITE_BUSY")) return "the store is busy";
  return "no connection to the database";
}

export async function buildApp(deps: ApiDeps): Promise<FaxlineApp> {
  const { config } = deps;
  const app = Fastify({
    loggerInstance: deps.logger,
    bodyLimit: config.http.bodyLimitBytes,
    trustProxy: config.http.trustProxy,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
    // The Go SDK joins its base URL and paths into "/rest/v1//{custNr}/fax/reports/{jobId}".
    routerOptions: { ignoreDuplicateSlashes: true, maxParamLength: MAX_PATH_PARAM_LENGTH },
    // The router's and the HTTP parser's own errors get the catalogue's body too.
    frameworkErrors: (error, request, reply) => {
      const apiError = frameworkErrorToApiError(error, request.url);
      request.log.info({ code: error.code }, apiError.message);
      return (reply as FastifyReply).code(apiError.status).send(apiError.toBody());
    },
    clientErrorHandler: (error, socket) => {
      // As Node's own handler: no answer of ours into a response already being written on this connection.
      const inFlight = (socket as unknown as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
      const answer = inFlight?.headersSent ? null : clientErrorAnswer(error);
      if (answer && socket.writable) socket.write(answer);
      socket.destroy(error);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  let draining = false;

  // JSON bodies: plugins/json-body.ts (empty bodies, nesting depth, NUL, "Unable to process JSON").
  // Fastify's own text/plain parser goes too: such a body reached the routes as a string and was
  // refused as "body must be object" (400) instead of 415 as every other non-JSON type.
  app.removeContentTypeParser(["application/json", "text/plain"]);
  app.addContentTypeParser(["application/json", "text/json"], { parseAs: "string" }, (req, body, done) => {
    try {
      const text = typeof body === "string" ? body : body.toString("utf8");
      if (req.headers["idempotency-key"] !== undefined) req.bodySha256 = bodyHash(text);
      done(null, parseJsonBody(text));
    } catch (err) {
      done(err as Error, undefined);
    }
  });

  await app.register(swagger, {
    openapi: {
      openapi: "3.0.3",
      info: {
        title: "Faxline REST API",
        version: "1.0.0",
        description:
          "Fax sending compatible with the Retarus Fax4Applications REST v1 contract. Every call uses HTTP Basic authentication.",
      },
      components: { securitySchemes: { basicAuth: { type: "http", scheme: "basic" } } },
      security: [{ basicAuth: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: "/docs" });

  app.addHook("onRequest", async (request) => {
    // Probes and metrics answer while draining: they say so themselves.
    if (draining && !request.url.startsWith("/health/") && request.url !== "/metrics") {
      throw new ApiError("service_unavailable", "This node is shutting down; retry on another node or shortly");
    }
  });
  if (deps.metrics) {
    const metrics = deps.metrics;
    // By the route's pattern (/rest/v1/:custNr/fax), never the raw path: ids would make a series each.
    app.addHook("onResponse", async (request, reply) => {
      metrics.httpRequest(request.method, request.routeOptions.url ?? "unmatched", reply.statusCode, reply.elapsedTime / 1000);
    });
  }

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    let apiError: ApiError;
    if (error instanceof ApiError) apiError = error;
    else if ((error as FastifyError).validation) {
      apiError = validationToApiError((error as FastifyError).validation as AjvError[], (error as FastifyError).validationContext ?? "body");
    } else if ((error as FastifyError).code === "FST_ERR_CTP_BODY_TOO_LARGE") {
      apiError = new ApiError("payload_too_large", `The request body exceeds ${config.http.bodyLimitBytes} bytes`);
    } else if ((error as FastifyError).code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") {
      apiError = new ApiError("unsupported_media_type", `Content-Type ${request.headers["content-type"] ?? "(none)"} is not supported; send application/json`);
    } else if ((error as FastifyError).code === "FST_ERR_CTP_INVALID_JSON_BODY" || (error as FastifyError).code === "FST_ERR_CTP_EMPTY_JSON_BODY") {
      apiError = new ApiError("invalid_json", "Unable to process JSON");
    } else if (deps.store.faults.isUnavailable(error)) {
      // No primary, connection lost, timeout: the request changed nothing that was acknowledged.
      request.log.warn({ err: error }, "store unavailable");
      apiError = new ApiError(
        "store_unavailable",
        request.method === "GET"
          ? `The store cannot be reached right now (${storeFaultSummary(error)}). Retry in ${STORE_RETRY_AFTER_SECONDS} s`
          : `The store cannot be reached right now (${storeFaultSummary(error)}); the request was most likely not carried out, but if the connection broke while it was being committed it may have been. Retry in ${STORE_RETRY_AFTER_SECONDS} s, a job with the same Idempotency-Key so that it cannot be stored twice`,
      );
      reply.header("Retry-After", String(STORE_RETRY_AFTER_SECONDS));
    } else if (typeof (error as FastifyError).statusCode === "number" && (error as FastifyError).statusCode! < 500) {
      apiError = new ApiError("invalid_request", error.message);
    } else {
      request.log.error({ err: error }, "unexpected error");
      apiError = new ApiError("internal_error", "Internal server error; the incident was logged");
    }
    if (apiError.status >= 500 && !(error instanceof ApiError)) reply.header("Connection", "close");
    return reply.status(apiError.status).send(apiError.toBody());
  });

  app.setNotFoundHandler((request, reply) => {
    const err = new ApiError("route_not_found", `No endpoint ${request.method} ${request.url.split("?")[0]}`);
    return reply.status(404).send(err.toBody());
  });

  app.get("/health", { schema: { hide: true } }, async () => ({
    status: "ok",
    region: config.node.region,
    datacenter: config.node.datacenter,
  }));
  // Readiness, for load balancers: 200 when this node can reach its store now, else 503.
  app.get("/ready", { schema: { hide: true } }, async (_request, reply) => {
    try {
      await deps.store.db.selectFrom("nodes").select("id").limit(1).execute();
      return { status: "ready", region: config.node.region, datacenter: config.node.datacenter, store: deps.store.dialect };
    } catch (err) {
      if (!deps.store.faults.isUnavailable(err)) throw err;
      reply.header("Retry-After", String(STORE_RETRY_AFTER_SECONDS));
      return reply.status(503).send(new ApiError("store_unavailable", `The store cannot be reached right now (${storeFaultSummary(err)})`).toBody());
    }
  });
  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
  await app.register(async (ops) =>
    registerOperationsRoutes(ops, deps, {
      draining: () => draining,
      storeFault: (err) => (deps.store.faults.isUnavailable(err) ? storeFaultSummary(err) : null),
    }),
  );

  let sessions: ConsoleSessions | null = null;
  const authenticator = new Authenticator({
    db: deps.store.db,
    clock: deps.clock,
    maxFailures: config.auth.maxFailures,
    lockoutMs: config.auth.lockout,
    cacheTtlMs: config.auth.cacheTtl,
    ...(config.console.enabled ? { sessions: (request) => sessions!.resolve(request) } : {}),
  });
  if (config.console.enabled) {
    sessions = new ConsoleSessions({ db: deps.store.db, clock: deps.clock, authenticator, idleMs: config.console.sessionIdle, maxMs: config.console.sessionMax });
    await registerConsole(app as unknown as FastifyInstance, { ...deps, sessions, authenticator, regionDatacenters: REGION_DATACENTERS[config.node.region] });
  }

  await app.register(
    async (v1) => {
      v1.addHook("onRequest", (request, reply) => authenticator.authenticate(request, reply));
      registerSendFaxRoute(v1, deps);
      registerReportRoutes(v1, deps);
      registerNotificationRoutes(v1, deps);
      registerFaxImageRoutes(v1, deps);
    },
    { prefix: "/rest/v1" },
  );

  // The reporting interface: /graphql and the exports under /reporting/v1 (src/reporting/).
  if (config.reporting.enabled) {
    await registerReporting(app as unknown as FastifyInstance, { config, store: deps.store, clock: deps.clock, logger: deps.logger, authenticator });
  }

  // The configuration API: /config/v2 (src/configuration/), managers and operators.
  await registerConfiguration(app as unknown as FastifyInstance, { config, store: deps.store, clock: deps.clock, authenticator });

  // The inbound pull API (the provider's Fax2WSPull), with its own Basic auth.
  const pullAuth = new PullAuthenticator(deps.store.db, deps.clock, authenticator, config.auth.cacheTtl);
  await app.register(async (faxin) => registerPullRoutes(faxin, { ...deps, pullAuth }), { prefix: "/faxin/rest/v1" });

  return {
    app: app as unknown as FastifyInstance,
    drain() {
      draining = true;
    },
  };
}

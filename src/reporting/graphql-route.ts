/**
 * `/graphql`: the reporting interface's GraphQL endpoint (graphql-js, the reference
 * implementation; docs/adr/0016-reporting.md).
 *
 * POST with `{query, variables, operationName}` as JSON (or GET with the same as URL
 * parameters). Authentication as the REST API: HTTP Basic, or the console's session (whose
 * POSTs carry X-CSRF-Token, as every console change does). The answer is always a GraphQL
 * response, `{data, errors}`, and each error carries the API catalogue's code and status in
 * `extensions` (`{"code": "date_period_too_long", "status": 400}`, docs/api-errors.md).
 *
 * HTTP status: a request that cannot run (no or bad credentials, no query, a syntax or schema
 * error, too deep or too costly) answers the error's status (401, 400 …); a query that ran
 * answers 200, unless its data is null because a field failed: then the first error's status.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { execute, GraphQLError, parse, validate, type DocumentNode, type ExecutionResult } from "graphql";
import type { Authenticator } from "../api/plugins/authenticate.ts";
import { REGION_DATACENTERS } from "../config/schema.ts";
import { ApiError, type ApiErrorCode } from "../errors/api-errors.ts";
import type { Logger } from "../lib/logger.ts";
import { reportingSchema } from "./graphql-schema.ts";
import { reportingRoot, type ReportingDeps } from "./graphql-resolvers.ts";
import { measureQuery } from "./query-limits.ts";

export interface GraphqlRouteDeps extends ReportingDeps {
  authenticator: Authenticator;
  logger: Logger;
}

interface GraphqlRequest {
  query?: unknown;
  variables?: unknown;
  operationName?: unknown;
}

interface ErrorEntry {
  message: string;
  locations?: readonly { line: number; column: number }[];
  path?: readonly (string | number)[];
  extensions: { code: string; status: number };
}

const STORE_RETRY_AFTER_SECONDS = 5;

function entry(error: ApiError, graphqlError?: GraphQLError): ErrorEntry {
  const out: ErrorEntry = { message: error.message, extensions: { code: error.definition.code, status: error.status } };
  if (graphqlError?.locations) out.locations = graphqlError.locations;
  if (graphqlError?.path) out.path = graphqlError.path;
  return out;
}

function answer(reply: FastifyReply, status: number, body: { data?: unknown; errors?: ErrorEntry[] }) {
  return reply.status(status).header("content-type", "application/json; charset=utf-8").header("cache-control", "no-store").send(body);
}

/** The request's {query, variables, operationName}, from the JSON body or the URL. */
function readRequest(request: FastifyRequest): { query: string; variables: Record<string, unknown>; operationName: string | null } {
  const source = (request.method === "GET" ? request.query : request.body) as GraphqlRequest | null | undefined;
  if (source === null || typeof source !== "object" || Array.isArray(source)) {
    throw new ApiError("graphql_query_invalid", "The body must be a JSON object {query, variables, operationName}");
  }
  if (typeof source.query !== "string" || source.query.trim() === "") throw new ApiError("graphql_query_invalid", "query is missing: send {\"query\": \"{ … }\"}");
  let variables = source.variables ?? {};
  if (typeof variables === "string") {
    try {
      variables = variables.trim() === "" ? {} : JSON.parse(variables);
    } catch {
      throw new ApiError("graphql_query_invalid", "variables is not a JSON object");
    }
  }
  if (variables === null || typeof variables !== "object" || Array.isArray(variables)) throw new ApiError("graphql_query_invalid", "variables must be a JSON object");
  const operationName = source.operationName === undefined || source.operationName === null || source.operationName === "" ? null : source.operationName;
  if (operationName !== null && typeof operationName !== "string") throw new ApiError("graphql_query_invalid", "operationName must be a string");
  return { query: source.query, variables: variables as Record<string, unknown>, operationName };
}

export function registerGraphqlRoute(app: FastifyInstance, deps: GraphqlRouteDeps): void {
  const schema = reportingSchema();
  const root = reportingRoot(deps);
  const datacenters = REGION_DATACENTERS[deps.config.node.region];
  const limits = { maxDepth: deps.config.reporting.maxDepth, maxCost: deps.config.reporting.maxCost, defaultPageSize: deps.config.reporting.defaultPageSize };

  /** A resolver's error as the catalogue names it; faults of the store and bugs as the REST API answers them. */
  const classify = (error: GraphQLError): ApiError => {
    const original = error.originalError;
    if (original instanceof ApiError) return original;
    if (original === undefined) return new ApiError("graphql_query_invalid", error.message);
    if (deps.store.faults.isUnavailable(original)) return new ApiError("store_unavailable", `The store cannot be reached right now; retry in ${STORE_RETRY_AFTER_SECONDS} s`);
    deps.logger.error({ err: original }, "reporting query failed");
    return new ApiError("internal_error", "Internal server error; the incident was logged");
  };

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    try {
      await deps.authenticator.authenticate(request, reply);
    } catch (err) {
      if (err instanceof ApiError) return answer(reply, err.status, { errors: [entry(err)] });
      throw err;
    }
    let document: DocumentNode;
    let req: ReturnType<typeof readRequest>;
    try {
      req = readRequest(request);
      try {
        document = parse(req.query, { maxTokens: 20_000 });
      } catch (err) {
        throw new ApiError("graphql_query_invalid", (err as Error).message);
      }
      const invalid = validate(schema, document);
      if (invalid.length > 0) {
        return answer(reply, 400, { errors: invalid.map((e) => entry(new ApiError("graphql_query_invalid", e.message), e)) });
      }
      const measured = measureQuery(document, req.operationName, req.variables, limits);
      if (measured.depth > limits.maxDepth) throw new ApiError("query_too_deep", `The query nests ${measured.depth} fields deep; at most ${limits.maxDepth} are allowed (reporting.maxDepth)`);
      if (measured.cost > limits.maxCost) {
        throw new ApiError("query_too_costly", `The query could return ${measured.cost} values; at most ${limits.maxCost} are allowed (reporting.maxCost): ask for smaller pages, lower limits or fewer fields`);
      }
    } catch (err) {
      if (err instanceof ApiError) return answer(reply, err.status, { errors: [entry(err)] });
      throw err;
    }
    const viewer = { account: request.account!, datacenters };
    const result = (await execute({ schema, document, rootValue: root, contextValue: { viewer }, variableValues: req.variables, operationName: req.operationName })) as ExecutionResult;
    if (!result.errors || result.errors.length === 0) return answer(reply, 200, { data: result.data });
    const errors = result.errors.map((e) => ({ api: classify(e), e }));
    const first = errors[0]!.api;
    if (first.definition.code === ("store_unavailable" satisfies ApiErrorCode)) reply.header("Retry-After", String(STORE_RETRY_AFTER_SECONDS));
    const status = result.data === null || result.data === undefined ? first.status : 200;
    return answer(reply, status, { data: result.data ?? null, errors: errors.map(({ api, e }) => entry(api, e)) });
  };

  app.route({ method: ["GET", "POST"], url: "/graphql", schema: { hide: true }, handler });
}

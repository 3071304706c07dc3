/**
 * Exports of the reports as streaming downloads the console (and curl) can link to, with the
 * API's authentication (Basic, or the console's session):
 *
 *   GET /reporting/v1/{customerId}/fax-out/records               usage records, outbound (FaxOutUdr)
 *   GET /reporting/v1/{customerId}/fax-in/records                usage records, inbound (FaxInUdr)
 *   GET /reporting/v1/{customerId}/fax-out/summary               faxOutSummary rows
 *   GET /reporting/v1/{customerId}/fax-out/calls                 faxOutCallSummary rows
 *   GET /reporting/v1/{customerId}/fax-in/summary                faxInSummary rows
 *   GET /reporting/v1/{customerId}/fax-out/failing-destinations  faxOutFailingDestinations
 *
 * Parameters: from, to (the datePeriod's fromIncluded and toExcluded), format (csv, the default,
 * or json), sort (ASC, DESC: records), groupBy (comma-separated: summaries), limit, and one
 * parameter per filter column, its values comma-separated (statusName=OK,BUSY;
 * countries=DEU,FRA). Records are read along a keyset cursor in batches and written as they come,
 * whatever the range (no 45-day limit; the history limit holds). `*` as customerId: every
 * customer (operators' aggregates). Errors before the first byte are the API's error bodies.
 */
import { Readable } from "node:stream";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Authenticator } from "../api/plugins/authenticate.ts";
import { REGION_DATACENTERS } from "../config/schema.ts";
import { ApiError } from "../errors/api-errors.ts";
import type { Logger } from "../lib/logger.ts";
import { failingDestinations, SUMMARIES, summarize, type Grouping, type SummaryName } from "./aggregate-reports.ts";
import { summaryPeriod, udrPeriod } from "./date-period.ts";
import { formatRows, type ExportFormat, type ExportRow } from "./export-format.ts";
import { rowLimit, type ReportingDeps } from "./graphql-resolvers.ts";
import { inUdrScope, outUdrScope, rollupScope, type ReportingViewer } from "./reporting-scope.ts";
import { IN_UDR_FIELDS, OUT_UDR_FIELDS } from "./udr-records.ts";
import { faxInUdrStream, faxOutUdrStream, type FilterInput } from "./udr-reports.ts";

export interface ExportRouteDeps extends ReportingDeps {
  authenticator: Authenticator;
  logger: Logger;
}

type Query = Record<string, string | string[] | undefined>;

const RESERVED = new Set(["from", "to", "format", "sort", "groupBy", "limit"]);

const OUT_FILTERS = ["statusName", "statusCode", "jobBillingCode", "jobCustomerRef", "jobId", "faxId", "accountId", "accountName", "accountService", "calledNumber", "calledCountry", "jobSubmissionDc", "trunk"];
const IN_FILTERS = ["faxTransmitStatus", "accountingService", "calledNumber", "calledNumberDisplay", "callingNumber", "topic"];

/** The measures of each summary's rows, in the order exports write them. */
const SUMMARY_FIELDS: Record<SummaryName, readonly string[]> = {
  faxOut: ["faxes", "delivered", "failed", "pages", "attempts", "deliveredAttempts", "lineSeconds", "successRate", "attemptsPerDeliveredFax"],
  faxOutCalls: ["calls", "connected", "delivered", "failed", "pages", "lineSeconds", "successRate", "averageCallSeconds"],
  faxIn: ["faxes", "ok", "partial", "failed", "pages", "lineSeconds", "successRate"],
};

/** The row field of each grouping (aggregate-reports.ts COLUMN), for the export's columns. */
const GROUP_FIELD: Record<Grouping, string> = {
  DAY: "period",
  WEEK: "period",
  MONTH: "period",
  CUSTOMER: "customerId",
  LOGIN: "login",
  DATACENTER: "datacenter",
  SERVICE: "service",
  COUNTRY: "country",
  STATUS: "status",
  REASON: "reason",
  TRUNK: "trunk",
  RESULT: "result",
  TOPIC: "topic",
};

function one(query: Query, name: string): string | undefined {
  const v = query[name];
  return Array.isArray(v) ? v[v.length - 1] : v;
}

function list(query: Query, name: string): string[] | undefined {
  const v = query[name];
  if (v === undefined) return undefined;
  return (Array.isArray(v) ? v : [v]).flatMap((s) => s.split(",")).map((s) => s.trim()).filter((s) => s !== "");
}

function formatOf(query: Query): ExportFormat {
  const f = (one(query, "format") ?? "csv").toLowerCase();
  if (f !== "csv" && f !== "json") throw new ApiError("enum_value_invalid", `format is "${f}"; use csv or json`);
  return f;
}

function filterOf(query: Query, columns: readonly string[]): FilterInput {
  const filter: Record<string, { values: string[] }> = {};
  for (const name of Object.keys(query)) {
    if (RESERVED.has(name)) continue;
    if (!columns.includes(name)) throw new ApiError("invalid_request", `${name} is not a parameter of this export; filters: ${columns.join(", ")}`);
    filter[name] = { values: list(query, name) ?? [] };
  }
  return filter;
}

function sortOf(query: Query): "ASC" | "DESC" {
  const s = (one(query, "sort") ?? "ASC").toUpperCase();
  if (s !== "ASC" && s !== "DESC") throw new ApiError("enum_value_invalid", `sort is "${s}"; use ASC or DESC`);
  return s;
}

function period(query: Query) {
  return { fromIncluded: one(query, "from") ?? "", toExcluded: one(query, "to") ?? "" };
}

/** A download: its name says what it holds. */
function send(reply: FastifyReply, format: ExportFormat, name: string, chunks: AsyncGenerator<string>, log: Logger) {
  const stream = Readable.from(chunks, { objectMode: false });
  stream.on("error", (err) => log.error({ err }, "report export failed while streaming; the download is cut short"));
  return reply
    .header("content-type", format === "csv" ? "text/csv; charset=utf-8" : "application/json; charset=utf-8")
    .header("content-disposition", `attachment; filename="${name}.${format}"`)
    .header("cache-control", "no-store")
    .send(stream);
}

async function* once<T>(rows: T[]): AsyncGenerator<T[]> {
  yield rows;
}

export function registerExportRoutes(app: FastifyInstance, deps: ExportRouteDeps): void {
  const { config } = deps;
  const db = deps.store.db;
  const datacenters = REGION_DATACENTERS[config.node.region];
  app.addHook("onRequest", (request, reply) => deps.authenticator.authenticate(request, reply));
  const viewerOf = (request: FastifyRequest): ReportingViewer => ({ account: request.account!, datacenters });
  const customerOf = (request: FastifyRequest): string => (request.params as { customerId: string }).customerId;
  const span = (q: Query) => ({ from: one(q, "from") ?? "", to: one(q, "to") ?? "" });
  const fileName = (kind: string, request: FastifyRequest, q: Query) => `faxline-${kind}-${customerOf(request).replace(/[^A-Za-z0-9_-]/g, "") || "all"}-${span(q).from.slice(0, 10)}-${span(q).to.slice(0, 10)}`;
  const udrLimits = () => ({ maxSpanMs: null, historyMs: config.reporting.history, now: deps.clock.now() });

  app.get("/:customerId/fax-out/records", { schema: { hide: true } }, async (request, reply) => {
    const q = request.query as Query;
    const format = formatOf(q);
    const scope = outUdrScope(viewerOf(request), customerOf(request));
    const p = udrPeriod(period(q), udrLimits());
    const filter = filterOf(q, OUT_FILTERS);
    const rows = faxOutUdrStream(db, scope, p, filter, sortOf(q), config) as AsyncGenerator<ExportRow[]>;
    return send(reply, format, fileName("fax-out-records", request, q), formatRows(format, OUT_UDR_FIELDS, rows), deps.logger);
  });

  app.get("/:customerId/fax-in/records", { schema: { hide: true } }, async (request, reply) => {
    const q = request.query as Query;
    const format = formatOf(q);
    const scope = inUdrScope(viewerOf(request), customerOf(request));
    const p = udrPeriod(period(q), udrLimits());
    const filter = filterOf(q, IN_FILTERS);
    const rows = faxInUdrStream(db, scope, p, filter, sortOf(q), config) as AsyncGenerator<ExportRow[]>;
    return send(reply, format, fileName("fax-in-records", request, q), formatRows(format, IN_UDR_FIELDS, rows), deps.logger);
  });

  const summaryRoute = (path: string, name: SummaryName, direction: "out" | "in") =>
    app.get(path, { schema: { hide: true } }, async (request, reply) => {
      const q = request.query as Query;
      const format = formatOf(q);
      const customer = customerOf(request);
      const scope = rollupScope(viewerOf(request), customer === "*" ? null : customer, direction);
      if (customer === "*" && !request.account!.isAdmin) throw new ApiError("operator_only", `Login "${request.account!.login}" is not an operator; only operators report over every customer`);
      const groupBy = (list(q, "groupBy") ?? []).map((g) => g.toUpperCase()) as Grouping[];
      for (const g of groupBy) {
        if (!(SUMMARIES[name].groupings as readonly string[]).includes(g)) throw new ApiError("enum_value_invalid", `groupBy ${g} is not a grouping of this report; use ${SUMMARIES[name].groupings.join(", ")}`);
      }
      const result = await summarize(db, name, {
        scope,
        period: summaryPeriod(period(q), config.reporting.maxSummarySpan),
        filter: filterOf(q, Object.keys(SUMMARIES[name].filters)),
        groupBy,
        limit: rowLimit(one(q, "limit") === undefined ? undefined : Number(one(q, "limit")), config.reporting.maxPageSize, config),
      });
      const fields = [...new Set(groupBy.map((g) => GROUP_FIELD[g]))].concat(SUMMARY_FIELDS[name]);
      const kind = name === "faxOut" ? "fax-out-summary" : name === "faxOutCalls" ? "fax-out-calls" : "fax-in-summary";
      return send(reply, format, fileName(kind, request, q), formatRows(format, fields, once(result.rows)), deps.logger);
    });
  summaryRoute("/:customerId/fax-out/summary", "faxOut", "out");
  summaryRoute("/:customerId/fax-out/calls", "faxOutCalls", "out");
  summaryRoute("/:customerId/fax-in/summary", "faxIn", "in");

  app.get("/:customerId/fax-out/failing-destinations", { schema: { hide: true } }, async (request, reply) => {
    const q = request.query as Query;
    const format = formatOf(q);
    const customer = customerOf(request);
    if (customer === "*" && !request.account!.isAdmin) throw new ApiError("operator_only", `Login "${request.account!.login}" is not an operator; only operators report over every customer`);
    const rows = await failingDestinations(db, {
      scope: rollupScope(viewerOf(request), customer === "*" ? null : customer, "out"),
      period: summaryPeriod(period(q), config.reporting.maxSummarySpan),
      filter: filterOf(q, ["customerIds", "logins", "datacenters", "services", "countries", "reasons"]),
      limit: rowLimit(one(q, "limit") === undefined ? undefined : Number(one(q, "limit")), 10, config),
    });
    // CSV: the reasons in one cell, "reason:faxes;…"; JSON keeps them as objects.
    const out = format === "csv" ? rows.map((r) => ({ ...r, reasons: r.reasons.map((x) => `${x.reason}:${x.faxes}`) })) : rows;
    return send(reply, format, fileName("fax-out-failing-destinations", request, q), formatRows(format, ["number", "country", "failedFaxes", "attempts", "reasons"], once(out as ExportRow[])), deps.logger);
  });
}

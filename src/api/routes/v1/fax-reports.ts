/**
 * The report operations of the contract, each scoped to the calling login and this node's
 * data center (reads may widen it to the region and add Faxline's extension object: see scopeOf):
 *  - GET    /{custNr}/fax/reports/{jobId}  getStatusReport (unfinished jobs: status PENDING)
 *  - DELETE /{custNr}/fax/reports/{jobId}  deleteStatusReport (404 unless completed and ours)
 *  - GET    /{custNr}/fax/reports          getAllStatusReports (oldest 1000 completed)
 *  - DELETE /{custNr}/fax/reports          deleteOldestStatusReports (oldest 1000 completed)
 *  - POST   /{custNr}/fax/reports          bulkStatusReports ({action: GET|DELETE, jobIds ≤ 1000})
 *  - POST   /{custNr}/fax/reports/{jobId}/cancel  cancelJob (Faxline extension: scheduler/cancel-job.ts)
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { ApiError } from "../../../errors/api-errors.ts";
import { cancelJob } from "../../../scheduler/cancel-job.ts";
import {
  deleteOldestReports,
  deleteReportsByIds,
  getReport,
  getReportsByIds,
  listCompletedReports,
  type ReportScope,
} from "../../../store/queries/job-reports.ts";
import {
  ApiErrorBodySchema,
  BulkRequestSchema,
  BulkResponseSchema,
  FaxReportSchema,
  FaxReportsSchema,
  JobDeleteReportSchema,
  JobDeleteReportsSchema,
} from "../../schemas/reports.ts";
import type { ApiDeps } from "../../api-deps.ts";
import { CustNrParams } from "./send-fax.ts";
import { REGION_DATACENTERS } from "../../../config/schema.ts";

export const REPORT_PAGE_LIMIT = 1000;
const JobParams = Type.Object({ custNr: Type.String(), jobId: Type.String({ description: "FJ…" }) });

export function registerReportRoutes(root: FastifyInstance, deps: ApiDeps): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const { db } = deps.store;
  const ownDatacenter = [deps.config.node.datacenter];
  const regionDatacenters = REGION_DATACENTERS[deps.config.node.region];
  /**
   * The contract's scope: the caller's jobs in this node's data center. Extensions (reads only):
   * `?scope=region` shows the jobs of both data centers of the region (on a shared store), and
   * `?view=extended` adds the `faxline` object (owner, accepting data center, adoptions).
   * Deletes always stay in this data center, as the contract's clients expect.
   */
  const scopeOf = (request: FastifyRequest, options: { reads?: boolean } = {}): ReportScope => {
    const query = (request.query ?? {}) as { scope?: string; view?: string };
    const region = options.reads === true && query.scope?.toLowerCase() === "region";
    return { login: request.account!.login, datacenters: region ? regionDatacenters : ownDatacenter, extended: options.reads === true && query.view?.toLowerCase() === "extended" };
  };
  const ReadQuery = Type.Object({
    scope: Type.Optional(Type.String({ description: "Faxline extension: `region` shows the reports of both data centers of the region (default: this data center's, as the contract)" })),
    view: Type.Optional(Type.String({ description: "Faxline extension: `extended` adds the faxline object (owning and accepting data center, adoptions)" })),
  });
  const checkReadQuery = (request: FastifyRequest) => {
    const query = (request.query ?? {}) as { scope?: string; view?: string };
    if (query.scope !== undefined && !["region", "datacenter"].includes(query.scope.toLowerCase())) {
      throw new ApiError("enum_value_invalid", `scope is "${query.scope}"; use region or datacenter`);
    }
    if (query.view !== undefined && !["extended", "contract"].includes(query.view.toLowerCase())) {
      throw new ApiError("enum_value_invalid", `view is "${query.view}"; use extended or contract`);
    }
  };
  const errors = { 400: ApiErrorBodySchema, 401: ApiErrorBodySchema, 404: ApiErrorBodySchema };

  app.get(
    "/:custNr/fax/reports/:jobId",
    { schema: { summary: "Get one job's report", operationId: "getStatusReport", tags: ["reports"], params: JobParams, querystring: ReadQuery, response: { 200: FaxReportSchema, ...errors } } },
    async (request) => {
      checkReadQuery(request);
      const scope = scopeOf(request, { reads: true });
      const report = await getReport(db, scope, request.params.jobId);
      if (!report) throw new ApiError("report_not_found", `No job report for ${request.params.jobId} in ${scope.datacenters.length > 1 ? `region ${deps.config.node.region}` : `data center ${deps.config.node.datacenter}`}`);
      return report;
    },
  );

  app.delete(
    "/:custNr/fax/reports/:jobId",
    {
      schema: {
        summary: "Delete one job's report",
        operationId: "deleteStatusReport",
        tags: ["reports"],
        params: JobParams,
        // The 404 body also carries the JobDeleteReport fields ({jobId, deleted: false, reason}),
        // declared here so that the response serialiser does not strip them.
        response: { 200: JobDeleteReportSchema, ...errors, 404: Type.Intersect([ApiErrorBodySchema, Type.Partial(JobDeleteReportSchema)]) },
      },
    },
    async (request, reply) => {
      const [result] = await deleteReportsByIds(db, scopeOf(request), [request.params.jobId]);
      if (!result?.deleted) {
        const notFound = new ApiError("report_not_found", `No completed job report for ${request.params.jobId} in data center ${deps.config.node.datacenter}`);
        return reply.status(404).send({
          code: notFound.status,
          error: notFound.definition.code,
          message: notFound.message,
          jobId: request.params.jobId,
          deleted: false,
          reason: "NOT_FOUND",
        });
      }
      return result;
    },
  );

  app.post(
    "/:custNr/fax/reports/:jobId/cancel",
    {
      schema: {
        summary: "Cancel a job: recipients not yet in a call end with CANCELLED; a running call ends on its own (Faxline extension)",
        operationId: "cancelJob",
        tags: ["reports"],
        params: JobParams,
        response: { 200: FaxReportSchema, 409: ApiErrorBodySchema, ...errors },
      },
    },
    async (request) => {
      const scope = scopeOf(request);
      const { jobId } = request.params;
      const result = await cancelJob(db, scope, jobId, deps.clock.now());
      if (result.kind === "not_found") throw new ApiError("report_not_found", `No job report for ${jobId} in data center ${deps.config.node.datacenter}`);
      if (result.kind === "completed") throw new ApiError("job_already_completed", `Job ${jobId} has completed already; there is nothing left to cancel`);
      if (result.cancelled > 0) {
        deps.metrics?.recipientsFinished("CANCELLED", "policy", result.cancelled);
        deps.onNotificationQueued?.();
      }
      request.log.info({ jobId, cancelled: result.cancelled, stillSending: result.stillSending }, "job cancelled");
      // Read after the cancel's commit: a cancel that completed the job lets another client
      // delete its report, or a failover move it, in between.
      const report = await getReport(db, scope, jobId);
      if (report === null) throw new ApiError("report_not_found", `Job ${jobId} was cancelled, and its report is no longer in data center ${deps.config.node.datacenter} (deleted or moved since)`);
      return report;
    },
  );

  app.get(
    "/:custNr/fax/reports",
    { schema: { summary: "List the oldest 1000 completed reports", operationId: "getAllStatusReports", tags: ["reports"], params: CustNrParams, querystring: ReadQuery, response: { 200: FaxReportsSchema, ...errors } } },
    async (request) => {
      checkReadQuery(request);
      return { reports: await listCompletedReports(db, scopeOf(request, { reads: true }), REPORT_PAGE_LIMIT) };
    },
  );

  app.delete(
    "/:custNr/fax/reports",
    { schema: { summary: "Delete the oldest 1000 completed reports", operationId: "deleteOldestStatusReports", tags: ["reports"], params: CustNrParams, response: { 200: JobDeleteReportsSchema, ...errors } } },
    async (request) => ({ reports: await deleteOldestReports(db, scopeOf(request), REPORT_PAGE_LIMIT) }),
  );

  app.post(
    "/:custNr/fax/reports",
    {
      schema: {
        summary: "Bulk GET or DELETE reports by job id",
        operationId: "bulkStatusReports",
        tags: ["reports"],
        params: CustNrParams,
        querystring: ReadQuery,
        body: BulkRequestSchema,
        response: { 200: BulkResponseSchema, ...errors },
      },
    },
    async (request) => {
      const action = request.body.action.trim().toUpperCase();
      if (request.body.jobIds.length > REPORT_PAGE_LIMIT) {
        throw new ApiError("too_many_job_ids", `jobIds has ${request.body.jobIds.length} entries; at most ${REPORT_PAGE_LIMIT} are allowed per request`);
      }
      checkReadQuery(request);
      if (action === "GET") return { reports: await getReportsByIds(db, scopeOf(request, { reads: true }), request.body.jobIds) };
      if (action === "DELETE") return { reports: await deleteReportsByIds(db, scopeOf(request), request.body.jobIds) };
      throw new ApiError("bulk_action_invalid", `action is "${request.body.action}"; use GET or DELETE`);
    },
  );
}

/**
 * POST /rest/v1/{custNr}/fax — sendJobRequest. Validates and stores the job, answers
 * `201 {"jobId": …}`. The job belongs to this node's data center.
 *
 * Checks beyond the request's own fields (intake): an overlay must be installed for the customer
 * (400 overlay_unknown), and an office, HTML or PostScript document needs its converter on this
 * node (400 document_type_unavailable).
 *
 * Duplicates: a request carrying an `Idempotency-Key` header (a Faxline extension; at most 255
 * characters) that this login has used before, for a job still stored, is a duplicate job and
 * answers 409 with the original `jobId` in the body, so a client that retried after a timeout
 * learns the id of the job it already created. Requests without the header are never treated
 * as duplicates.
 */
import type { FastifyInstance } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { ApiError } from "../../../errors/api-errors.ts";
import { REGION_NUMBER_CONTEXT } from "../../../numbers/normalize-number.ts";
import { insertJob } from "../../../store/queries/insert-job.ts";
import { intakeFaxJob, type IntakeLimits, type NewFaxJob } from "../../fax-job-intake.ts";
import type { FaxlineConfig } from "../../../config/schema.ts";
import { FaxJobRequestSchema, FaxJobResponseSchema } from "../../schemas/fax-job-request.ts";
import { ApiErrorBodySchema } from "../../schemas/reports.ts";
import type { ApiDeps } from "../../api-deps.ts";

export const CustNrParams = Type.Object({ custNr: Type.String({ description: "Customer number, e.g. 99999TE" }) });

/** The intake limits from config. */
export function intakeLimits(config: FaxlineConfig): IntakeLimits {
  return {
    maxRecipients: config.jobs.maxRecipients,
    maxDocuments: config.jobs.maxDocuments,
    maxDocumentBytes: config.jobs.maxDocumentBytes,
    maxJobBytes: config.jobs.maxJobBytes,
    defaultValidity: config.jobs.defaultValidity,
    maxValidity: config.jobs.maxValidity,
    allowPrivateReferenceTargets: config.documents.fetchAllowPrivateTargets,
    numberContext: REGION_NUMBER_CONTEXT[config.node.region],
  };
}

/** 400 overlay_unknown unless the job's overlay is installed for the customer. */
export async function requireInstalledOverlay(deps: ApiDeps, custNr: string, job: NewFaxJob): Promise<void> {
  const overlay = job.overlay;
  if (overlay === null) return;
  const installed = await deps.store.db
    .selectFrom("customer_templates")
    .select("name")
    .where("cust_nr", "=", custNr)
    .where("kind", "=", "overlay")
    .execute();
  if (installed.some((t) => t.name === overlay.name)) return;
  const names = installed.map((t) => `"${t.name}"`).join(", ");
  throw new ApiError(
    "overlay_unknown",
    `renderingOptions.overlay.name "${overlay.name}" is not installed for customer ${custNr}; ` +
      (names === "" ? "the customer has no overlays" : `installed overlays: ${names}`),
  );
}

export function registerSendFaxRoute(app: FastifyInstance, deps: ApiDeps): void {
  const { config } = deps;
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    "/:custNr/fax",
    {
      schema: {
        summary: "Send a fax job",
        operationId: "sendJobRequest",
        tags: ["fax"],
        params: CustNrParams,
        headers: Type.Object({
          "idempotency-key": Type.Optional(Type.String({ maxLength: 255, description: "Faxline extension: a repeated key answers 409 with the original jobId" })),
        }),
        body: FaxJobRequestSchema,
        response: { 201: FaxJobResponseSchema, 400: ApiErrorBodySchema, 401: ApiErrorBodySchema, 409: Type.Intersect([ApiErrorBodySchema, Type.Object({ jobId: Type.String() })]) },
      },
    },
    async (request, reply) => {
      const account = request.account!;
      const now = deps.clock.now();
      const job = intakeFaxJob(request.body, intakeLimits(config), now, request.bodySha256 ?? null);
      await requireInstalledOverlay(deps, account.custNr, job);
      const key = request.headers["idempotency-key"];
      const idempotencyKey = typeof key === "string" && key.trim() !== "" ? key.trim() : null;
      const store = () =>
        insertJob(
          deps.store,
          job,
          { custNr: account.custNr, login: account.login, isTest: account.isTest, region: config.node.region, datacenter: config.node.datacenter },
          { now, idempotencyKey, deadlineGraceMs: config.jobs.deadlineGrace },
        );
      let result: Awaited<ReturnType<typeof insertJob>>;
      try {
        result = await store();
      } catch (err) {
        // The same Idempotency-Key sent twice at once (to two nodes): the unique index let one
        // insert win; the other now finds it and answers 409 like any later duplicate.
        if (idempotencyKey === null || !deps.store.faults.isUniqueViolation(err)) throw err;
        result = await store();
      }
      if (!result.inserted) {
        throw new ApiError(
          "duplicate_job",
          result.sameRequest
            ? `Duplicate job: Idempotency-Key "${idempotencyKey}" already created job ${result.existingJobId}`
            : `Duplicate job: Idempotency-Key "${idempotencyKey}" was used for job ${result.existingJobId} with a different request`,
          { jobId: result.existingJobId },
        );
      }
      request.log.info({ jobId: result.jobId, recipients: job.recipients.length, documents: job.documents.length }, "job accepted");
      deps.metrics?.jobAccepted(job.recipients.length);
      deps.onJobAccepted?.(result.jobId);
      return reply.status(201).send({ jobId: result.jobId });
    },
  );
}

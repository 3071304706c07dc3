/**
 * Fax images and preview (Faxline extensions of the contract): what a fax looks like, before or
 * after it is sent, scoped like the reports to the calling login and this node's data center.
 *
 *  - GET  /{custNr}/fax/reports/{jobId}/fax-images                      the job's rendered images: which
 *         recipients each is for, and per page its G4 size, estimated line time and preflight warnings
 *  - GET  /{custNr}/fax/reports/{jobId}/fax-images/{imageId}            the image as TIFF-F (image/tiff), or PDF with ?format=pdf
 *  - GET  /{custNr}/fax/reports/{jobId}/fax-images/{imageId}/pages/{n}  page n as PNG (square pixels)
 *  - POST /{custNr}/fax/preview                                          renders a job request without sending
 *         it: the same body as POST /{custNr}/fax, answered with the pages of its first recipient (JSON with a
 *         PNG per page, or the TIFF-F with `Accept: image/tiff`); 422 preview_failed when a document cannot be rendered
 *
 * A job's images exist from the moment it is rendered (before its first call) until its report is
 * purged. Recipients see different images when their cover pages or header lines differ.
 */
import type { Kysely } from "kysely";
import type { Database } from "../../../store/database.ts";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { ApiError } from "../../../errors/api-errors.ts";
import { failureReason } from "../../../errors/failure-reasons.ts";
import { fetchReference } from "../../../documents/fetch-reference.ts";
import { FaxImageWorker, faxImageFailureDetail, pageThreadsFor } from "../../../render/fax-image/fax-image-worker.ts";
/** Page PNGs need sharp: loaded on the first page asked for, not with the API. */
const faxPagePng = async (tiff: Uint8Array, pageIndex: number) => (await import("../../../render/fax-image/fax-page-png.ts")).faxPagePng(tiff, pageIndex);
import type { DocumentInput } from "../../../render/pages/grey-page.ts";
import type { PagePreflight } from "../../../render/preflight/page-preflight.ts";
import { renderSetupFor } from "../../../scheduler/render-setup.ts";
import { readOneSnapshot } from "../../../store/queries/read-snapshot.ts";
import { intakeFaxJob } from "../../fax-job-intake.ts";
import { FaxJobRequestSchema } from "../../schemas/fax-job-request.ts";
import { ApiErrorBodySchema } from "../../schemas/reports.ts";
import { FaxPreviewSchema, JobFaxImagesSchema, type PagePreflightView } from "../../schemas/fax-images.ts";
import { intakeLimits, requireInstalledOverlay } from "./send-fax.ts";
import type { ApiDeps } from "../../api-deps.ts";

/** A binary body (fastify sends Buffers as they are); typed for the route, described for OpenAPI. */
const binary = (contentType: string) => Type.Unsafe<Buffer>({ type: "string", format: "binary", description: contentType });

const JobParams = Type.Object({ custNr: Type.String(), jobId: Type.String() });
const ImageParams = Type.Object({ custNr: Type.String(), jobId: Type.String(), imageId: Type.String() });
const PageParams = Type.Object({ custNr: Type.String(), jobId: Type.String(), imageId: Type.String(), page: Type.String({ pattern: "^[1-9][0-9]{0,4}$", description: "1-based page number" }) });

function pageViews(preflight: PagePreflight[], pageSizes: number[]): PagePreflightView[] {
  return pageSizes.map((encodedBytes, index) => {
    const p = preflight[index];
    return {
      page: index + 1,
      encodedBytes,
      estimatedSeconds: p?.estimatedSeconds ?? 0,
      blackRatio: p?.blackRatio ?? 0,
      blank: p?.blank ?? false,
      tooDark: p?.tooDark ?? false,
      large: p?.large ?? false,
      warnings: p?.warnings ?? [],
    };
  });
}

function totalSeconds(pages: PagePreflightView[]): number {
  return Math.round(pages.reduce((sum, page) => sum + page.estimatedSeconds, 0) * 10) / 10;
}

export function registerFaxImageRoutes(root: FastifyInstance, deps: ApiDeps): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const { db } = deps.store;
  const { config } = deps;
  const errors = { 401: ApiErrorBodySchema, 404: ApiErrorBodySchema };
  // Previews render in a worker of their own, so that they never wait behind the scheduler's jobs.
  const previews = new FaxImageWorker({ timeoutMs: config.render.timeout, memoryLimitMb: config.render.workerMemory, pdfRenderer: config.render.pdfRenderer, pageThreads: pageThreadsFor(config.render.pageThreads, config.render.concurrency + 1) });
  root.addHook("onClose", async () => previews.close());

  async function requireJob(request: FastifyRequest, jobId: string, from: Kysely<Database> = db) {
    const job = await from
      .selectFrom("jobs")
      .select(["id", "paper_format", "resolution"])
      .where("id", "=", jobId)
      .where("login", "=", request.account!.login)
      .where("datacenter", "=", config.node.datacenter)
      .executeTakeFirst();
    if (!job) throw new ApiError("report_not_found", `No job report for ${jobId} in data center ${config.node.datacenter}`);
    return job;
  }

  async function requireImage(jobId: string, imageId: string) {
    const image = await db.selectFrom("fax_images").selectAll().where("id", "=", imageId).where("job_id", "=", jobId).executeTakeFirst();
    if (!image) throw new ApiError("fax_image_not_found", `Job ${jobId} has no fax image ${imageId}`);
    return image;
  }

  app.get(
    "/:custNr/fax/reports/:jobId/fax-images",
    {
      schema: {
        summary: "The rendered fax images of a job, with per-page preflight (Faxline extension)",
        operationId: "getJobFaxImages",
        tags: ["fax images"],
        params: JobParams,
        response: { 200: JobFaxImagesSchema, ...errors },
      },
    },
    async (request) => {
      const { custNr, jobId } = request.params;
      // One snapshot: a report deleted meanwhile takes its job, images and recipients at once.
      const { job, images, recipients } = await readOneSnapshot(db, async (trx) => ({
        job: await requireJob(request, jobId, trx),
        images: await trx.selectFrom("fax_images").select(["id", "page_sizes", "preflight", "size_bytes"]).where("job_id", "=", jobId).orderBy("variant").execute(),
        recipients: await trx.selectFrom("recipients").select(["number", "fax_image_id"]).where("job_id", "=", jobId).orderBy("ordinal").execute(),
      }));
      if (images.length === 0) throw new ApiError("fax_image_not_found", `Job ${jobId} has no fax image yet (it is not rendered, or failed before rendering)`);
      const base = `/rest/v1/${custNr}/fax/reports/${jobId}/fax-images`;
      return {
        jobId,
        images: images.map((image) => {
          const pages = pageViews(JSON.parse(image.preflight) as PagePreflight[], JSON.parse(image.page_sizes) as number[]);
          return {
            imageId: image.id,
            recipients: recipients.filter((r) => r.fax_image_id === image.id).map((r) => r.number),
            paperFormat: job.paper_format,
            resolution: job.resolution,
            sizeBytes: image.size_bytes,
            estimatedSeconds: totalSeconds(pages),
            tiffUrl: `${base}/${image.id}`,
            pages: pages.map((page) => ({ ...page, pngUrl: `${base}/${image.id}/pages/${page.page}` })),
          };
        }),
      };
    },
  );

  app.get(
    "/:custNr/fax/reports/:jobId/fax-images/:imageId",
    {
      schema: {
        summary: "A fax image as TIFF-F (CCITT G4, one image per page), or as PDF with ?format=pdf (Faxline extension)",
        operationId: "getFaxImageTiff",
        tags: ["fax images"],
        params: ImageParams,
        querystring: Type.Object({ format: Type.Optional(Type.String({ description: "tiff (default) or pdf: each page at its true size" })) }),
        response: { 200: binary("image/tiff or application/pdf"), ...errors },
      },
    },
    async (request, reply) => {
      const { jobId, imageId } = request.params;
      const format = (request.query.format ?? "tiff").toLowerCase();
      if (format !== "tiff" && format !== "pdf") throw new ApiError("enum_value_invalid", `format is "${request.query.format}"; use tiff or pdf`);
      await requireJob(request, jobId);
      const image = await requireImage(jobId, imageId);
      if (format === "pdf") {
        const { faxImageToPdf } = await import("../../../notifications/email/fax-image-to-pdf.ts");
        return reply
          .type("application/pdf")
          .header("content-disposition", `attachment; filename="${imageId}.pdf"`)
          .send(await faxImageToPdf(Buffer.from(image.content)));
      }
      return reply
        .type("image/tiff")
        .header("content-disposition", `inline; filename="${imageId}.tif"`)
        .send(Buffer.from(image.content) as Buffer);
    },
  );

  app.get(
    "/:custNr/fax/reports/:jobId/fax-images/:imageId/pages/:page",
    {
      schema: {
        summary: "One page of a fax image as PNG, stretched to square pixels (Faxline extension)",
        operationId: "getFaxImagePagePng",
        tags: ["fax images"],
        params: PageParams,
        response: { 200: binary("image/png"), ...errors },
      },
    },
    async (request, reply) => {
      const { jobId, imageId } = request.params;
      const page = Number(request.params.page);
      await requireJob(request, jobId);
      const image = await requireImage(jobId, imageId);
      if (page > image.pages) throw new ApiError("fax_image_page_not_found", `Fax image ${imageId} has ${image.pages} page(s), not page ${page}`);
      return reply.type("image/png").send(await faxPagePng(image.content, page - 1));
    },
  );

  app.post(
    "/:custNr/fax/preview",
    {
      schema: {
        summary: "Render a job request without sending it: its pages and preflight (Faxline extension)",
        operationId: "previewJobRequest",
        tags: ["fax images"],
        params: Type.Object({ custNr: Type.String() }),
        body: FaxJobRequestSchema,
        response: { 200: Type.Union([FaxPreviewSchema, binary("image/tiff")]), 400: ApiErrorBodySchema, 401: ApiErrorBodySchema, 422: Type.Intersect([ApiErrorBodySchema, Type.Object({ reason: Type.String({ description: "The failure reason code (docs/failure-reasons.md)" }) })]) },
      },
    },
    async (request, reply) => {
      const account = request.account!;
      const now = deps.clock.now();
      const job = intakeFaxJob(request.body, intakeLimits(config), now);
      await requireInstalledOverlay(deps, account.custNr, job);
      const first = job.recipients[0]!;
      const documents: DocumentInput[] = [];
      for (const doc of job.documents) {
        if (doc.content !== null) {
          documents.push({ name: doc.name, charset: doc.charset, bytes: doc.content });
          continue;
        }
        const fetched = await fetchReference(doc.referenceUrl!, {
          timeoutMs: config.documents.fetchTimeout,
          maxBytes: config.jobs.maxDocumentBytes,
          allowPrivateTargets: config.documents.fetchAllowPrivateTargets,
          maxRedirects: config.documents.fetchMaxRedirects,
          userAgent: "Faxline document fetcher",
        });
        if (!fetched.ok) {
          if (fetched.operatorDetail) request.log.warn({ document: doc.name }, `document reference refused: ${fetched.operatorDetail}`);
          const reason = fetched.kind === "too_large" ? "document_too_large" : "document_fetch_failed";
          throw new ApiError("preview_failed", `${doc.name}: ${fetched.message}`, { reason });
        }
        documents.push({ name: doc.name, charset: doc.charset, bytes: fetched.bytes });
      }
      const properties = Object.fromEntries((first.properties ?? []).map((p) => [p.key, p.value ?? ""]));
      const setup = await renderSetupFor(db, config, now, {
        custNr: account.custNr,
        paperFormat: job.paperFormat,
        resolution: job.resolution,
        header: job.header,
        csid: job.csid,
        coverpageTemplate: job.coverpageTemplate,
        overlay: job.overlay,
        toneMode: job.toneMode,
        suppressBlankPages: job.suppressBlankPages,
        recipients: [{ id: "preview", number: first.number, properties }],
      });
      if (!setup.ok) throw new ApiError("preview_failed", setup.message, { reason: setup.reasonCode });
      const outcome = await previews.render({ ...setup.input, documents });
      if (!outcome.ok) {
        if (outcome.kind === "stopped") throw new ApiError("service_unavailable", "The node is shutting down");
        throw new ApiError("preview_failed", `${failureReason("render_failed").description}: ${faxImageFailureDetail(outcome)}`, { reason: "render_failed" });
      }
      const result = outcome.result;
      if (!result.ok) throw new ApiError("preview_failed", result.message, { reason: result.reasonCode });
      const image = result.images[0]!;
      if ((request.headers.accept ?? "").includes("image/tiff")) {
        return reply.type("image/tiff").header("content-disposition", 'inline; filename="preview.tif"').send(image.tiff);
      }
      const pages = pageViews(image.preflight, image.pageSizes);
      const pngs = await Promise.all(pages.map((page) => faxPagePng(image.tiff, page.page - 1)));
      return reply.send({
        recipient: first.number,
        paperFormat: job.paperFormat,
        resolution: job.resolution,
        sizeBytes: image.tiff.length,
        estimatedSeconds: totalSeconds(pages),
        pages: pages.map((page, index) => ({ ...page, png: pngs[index]!.toString("base64") })),
      });
    },
  );
}

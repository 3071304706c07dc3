/**
 * `faxline render FILE... --out OUT.tif`: renders documents offline into a fax image exactly as
 * the scheduler renders a job (same page pipeline, same worker, same limits and render.timeout),
 * so that an operator can look at what a fax will look like. Options give what a job's
 * renderingOptions give: paper, resolution, header line, cover page (a built-in `default`, or an
 * SVG/HTML template file), overlay document and mode, plus one recipient's number and
 * properties for the header's %#/%K and the cover page. A document that a job could not send
 * fails here with the text the job's report would give.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import type { FaxlineConfig } from "../config/schema.ts";
import { failureReason, type FailureReasonCode } from "../errors/failure-reasons.ts";
import { FaxImageWorker, faxImageFailureDetail, pageThreadsFor, helpersWorthStartingEarly, type FaxImageOutcome } from "../render/fax-image/fax-image-worker.ts";
import { parseHeaderTemplate } from "../render/header/header-template.ts";
import { coverKindOf } from "../render/installed-templates.ts";
import type { OverlayMode } from "../render/overlay/overlay-pages.ts";
import type { ToneMode } from "../render/fax-image/tone-mode.ts";
import type { DocumentInput, PaperFormat, Resolution } from "../render/pages/grey-page.ts";
import type { FaxJobRenderInput } from "../render/render-fax-job.ts";
import { renderLimits } from "../scheduler/render-setup.ts";

export interface RenderFilesRequest {
  files: string[];
  out: string;
  paperFormat: PaperFormat;
  resolution: Resolution;
  /** Charset of every text file; null: UTF-8, as for a job document without one. */
  charset: string | null;
  header: string | null;
  /** `default` for the built-in cover page, else the path of an SVG or HTML template; null: none. */
  cover: string | null;
  overlay: { file: string; mode: OverlayMode } | null;
  /** How pages become black and white (renderingOptions.toneMode); AUTO when absent. */
  toneMode?: ToneMode;
  /** Leave blank pages out, as mail-to-fax's suppressBlankPages does (render/preflight/blank-page.ts); false when absent. */
  suppressBlankPages?: boolean;
  /** The recipient the header and cover page are filled for. */
  recipient: { number: string; properties: Record<string, string> };
  csid: string;
}

export class RenderRequestError extends Error {}

/** The report's reason text for a failure (failure-reasons.ts description, then the detail). */
function reportReason(code: FailureReasonCode, detail: string): string {
  return `${failureReason(code).description}: ${detail}`;
}

function readDocument(file: string, charset: string | null): DocumentInput {
  try {
    return { name: basename(file), charset, bytes: readFileSync(file) };
  } catch (err) {
    throw new RenderRequestError(`cannot read ${file}: ${(err as Error).message}`);
  }
}

/** The render input for a request; throws RenderRequestError for a bad option. */
export function renderInputForFiles(config: FaxlineConfig, request: RenderFilesRequest, now: number): FaxJobRenderInput {
  const documents = request.files.map((file) => readDocument(file, request.charset));
  if (request.header !== null) {
    const parsed = parseHeaderTemplate(request.header);
    if (!parsed.ok) throw new RenderRequestError(`--header: ${parsed.message}`);
  }
  let cover: FaxJobRenderInput["cover"] = null;
  if (request.cover !== null) {
    const timeZone = config.render.defaultTimeZone;
    if (request.cover === "default") {
      cover = { kind: "svg", content: null, time: now, timeZone };
    } else {
      const kind = coverKindOf(request.cover);
      if (kind === null) throw new RenderRequestError(`--cover must be "default" or an .svg or .html template file, got ${request.cover}`);
      cover = { kind, content: readDocument(request.cover, null).bytes.toString(), time: now, timeZone };
    }
  }
  if (documents.length === 0 && cover === null) throw new RenderRequestError("nothing to render: give at least one FILE or --cover");
  return {
    documents,
    paperFormat: request.paperFormat,
    resolution: request.resolution,
    header: request.header === null ? null : { template: request.header, csid: request.csid, timeZone: config.render.defaultTimeZone, time: now },
    cover,
    overlay: request.overlay === null ? null : { document: readDocument(request.overlay.file, null), mode: request.overlay.mode },
    recipients: [{ id: "cli", number: request.recipient.number, properties: request.recipient.properties }],
    toneMode: request.toneMode ?? "AUTO",
    suppressBlankPages: request.suppressBlankPages === true,
    limits: renderLimits(config),
    preflight: { lineBitsPerSecond: 14_400, largePageSeconds: config.render.largePageSeconds },
  };
}

/** Renders the files into `out`; returns the exit code (0 written, 1 not). */
export async function renderFiles(config: FaxlineConfig, request: RenderFilesRequest): Promise<number> {
  let input: FaxJobRenderInput;
  try {
    input = renderInputForFiles(config, request, Date.now());
  } catch (err) {
    if (!(err instanceof RenderRequestError)) throw err;
    console.error(`faxline: ${err.message}`);
    return 1;
  }

  const faxImages = new FaxImageWorker({ timeoutMs: config.render.timeout, memoryLimitMb: config.render.workerMemory, pdfRenderer: config.render.pdfRenderer, pageThreads: pageThreadsFor(config.render.pageThreads, 1), startHelpersEarly: helpersWorthStartingEarly(input.documents) });
  const started = performance.now();
  let outcome: FaxImageOutcome;
  try {
    outcome = await faxImages.render(input);
  } finally {
    await faxImages.close();
  }
  if (!outcome.ok) {
    console.error(`faxline: ${reportReason("render_failed", faxImageFailureDetail(outcome))}`);
    return 1;
  }
  if (!outcome.result.ok) {
    console.error(`faxline: ${reportReason(outcome.result.reasonCode, outcome.result.message)}`);
    return 1;
  }
  const image = outcome.result.images[0];
  if (image === undefined) throw new Error("rendering gave no fax image");
  const { tiff, pageSizes, preflight } = image;
  writeFileSync(request.out, tiff);
  const seconds = ((performance.now() - started) / 1000).toFixed(2);
  const pages = `${pageSizes.length} page${pageSizes.length === 1 ? "" : "s"}`;
  console.log(`${request.out}: ${pages}, ${tiff.length} bytes (TIFF-F, G4, ${request.paperFormat} ${request.resolution}), rendered in ${seconds} s`);
  console.log(`G4 bytes per page: ${pageSizes.join(", ")}`);
  if (request.suppressBlankPages === true) console.log(`blank pages left out: ${outcome.result.blankPagesLeftOut}`);
  const lineSeconds = preflight.reduce((sum, page) => sum + page.estimatedSeconds, 0);
  console.log(`estimated line time at 14.4 kbit/s: ${Math.round(lineSeconds)} s`);
  preflight.forEach((page, index) => {
    for (const warning of page.warnings) console.log(`warning: page ${index + 1} ${warning}`);
  });
  return 0;
}

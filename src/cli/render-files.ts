/**
 * `faxline render FILE... --out OUT.tif`: renders documents offline into a fax image exactly as
 * the scheduler renders a job's documents (same layout, same worker, same page limit and
 * render.timeout), so that an operator can look at what a fax will look like. A document that a
 * job could not send fails here with the text the job's report would give.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import type { FaxlineConfig } from "../config/schema.ts";
import { failureReason, type FailureReasonCode } from "../errors/failure-reasons.ts";
import { FaxImageWorker, faxImageFailureDetail, type FaxImageOutcome } from "../render/fax-image/fax-image-worker.ts";
import type { PaperFormat, Resolution } from "../render/layout-text.ts";
import { renderDocuments, type DocumentInput } from "../render/render-documents.ts";

export interface RenderFilesRequest {
  files: string[];
  out: string;
  paperFormat: PaperFormat;
  resolution: Resolution;
  /** Charset of every file; null: UTF-8, as for a job document without one. */
  charset: string | null;
}

/** The report's reason text for a failure (failure-reasons.ts description, then the detail). */
function reportReason(code: FailureReasonCode, detail: string): string {
  return `${failureReason(code).description}: ${detail}`;
}

/** Renders the files into `out`; returns the exit code (0 written, 1 not). */
export async function renderFiles(config: FaxlineConfig, request: RenderFilesRequest): Promise<number> {
  const documents: DocumentInput[] = [];
  for (const file of request.files) {
    try {
      documents.push({ name: basename(file), charset: request.charset, bytes: readFileSync(file) });
    } catch (err) {
      console.error(`faxline: cannot read ${file}: ${(err as Error).message}`);
      return 1;
    }
  }
  const options = { paperFormat: request.paperFormat, resolution: request.resolution };
  const laidOut = renderDocuments(documents, { ...options, maxPages: config.jobs.maxPages });
  if (!laidOut.ok) {
    console.error(`faxline: ${reportReason(laidOut.reasonCode, laidOut.message)}`);
    return 1;
  }

  const faxImages = new FaxImageWorker({ timeoutMs: config.render.timeout });
  const started = performance.now();
  let outcome: FaxImageOutcome;
  try {
    outcome = await faxImages.render({ textPages: laidOut.textPages, coverPageText: null, ...options });
  } finally {
    await faxImages.close();
  }
  if (!outcome.ok) {
    console.error(`faxline: ${reportReason("render_failed", faxImageFailureDetail(outcome))}`);
    return 1;
  }
  const { tiff, pageSizes } = outcome.image;
  writeFileSync(request.out, tiff);
  const seconds = ((performance.now() - started) / 1000).toFixed(2);
  const pages = `${pageSizes.length} page${pageSizes.length === 1 ? "" : "s"}`;
  console.log(`${request.out}: ${pages}, ${tiff.length} bytes (TIFF-F, G4, ${request.paperFormat} ${request.resolution}), rendered in ${seconds} s`);
  console.log(`G4 bytes per page: ${pageSizes.join(", ")}`);
  return 0;
}

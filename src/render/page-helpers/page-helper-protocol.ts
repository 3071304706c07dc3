/**
 * Messages between the render thread and its page helper threads (page-helper-pool.ts,
 * page-helper-thread.ts). A document is opened once per helper, then pages are asked for one by
 * one; each answer carries the prepared page (prepare-page.ts) with its buffers transferred.
 */
import type { PageGeometry, RenderLimits } from "../pages/grey-page.ts";
import type { PdfiumChoice } from "../pdfium/pdfium-engine.ts";
import type { PreparedPage, PreparePageMode } from "../prepare-page.ts";
import type { RenderFailureCode } from "../render-failure.ts";

/** A helper thread's workerData. */
export interface PageHelperData {
  /** Raised (Atomics.store(flag, 0, 1)) to give up native PDFium renders when the threads are ended; null: none. */
  cancelFlag: Int32Array | null;
  /** render.pdfRenderer. */
  pdfRenderer: PdfiumChoice;
}

export type HelperRequest =
  | { type: "open"; documentId: number; name: string; bytes: Uint8Array; geometry: PageGeometry; limits: RenderLimits; mode: PreparePageMode }
  | { type: "page"; documentId: number; index: number }
  | { type: "close"; documentId: number };

export type HelperPageResult =
  | { kind: "page"; page: PreparedPage }
  /** The page cannot be rendered: the document's failure (DocumentRenderError). */
  | { kind: "document_error"; reasonCode: RenderFailureCode; message: string }
  /** Rendering threw for another reason: a fault of Faxline. */
  | { kind: "internal_error"; message: string };

export interface HelperReply {
  documentId: number;
  index: number;
  result: HelperPageResult;
}

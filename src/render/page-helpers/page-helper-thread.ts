/**
 * Entry point of a page helper thread (started by page-helper-pool.ts): renders and prepares the
 * pages of PDF documents it is asked for, one at a time, and answers each with the prepared page,
 * its buffers transferred. A document stays open from its "open" to its "close" message; pages of
 * a document already closed are not answered.
 */
import { parentPort, workerData } from "node:worker_threads";
import { openPdfDocument, preloadPdfium, type PdfDocument } from "../pages/pdf-pages.ts";
import { choosePdfiumEngine, setPdfiumCancelFlag } from "../pdfium/pdfium-engine.ts";
import { DocumentRenderError } from "../pages/grey-page.ts";
import { preparePage, type PreparedPage, type PreparePageMode } from "../prepare-page.ts";
import type { HelperPageResult, HelperReply, HelperRequest, PageHelperData } from "./page-helper-protocol.ts";

const port = parentPort;
if (port === null) throw new Error("page-helper-thread.ts runs only as a worker thread");

interface OpenDocument {
  /** The open PDF, or why it could not be opened. */
  pdf: Promise<PdfDocument>;
  mode: PreparePageMode;
}

// Started without workerData (a test of the bundle): the defaults.
const settings: PageHelperData = (workerData as PageHelperData | undefined) ?? { cancelFlag: null, pdfRenderer: "auto" };
choosePdfiumEngine(settings.pdfRenderer);
setPdfiumCancelFlag(settings.cancelFlag);
// Every request is about a PDF: PDFium loads while the first one is on its way. A failure to load
// it is met again, and answered, when a document is opened.
preloadPdfium().catch(() => {});

const documents = new Map<number, OpenDocument>();
// Messages are handled strictly in order: a page waits for its document to open.
let queue: Promise<void> = Promise.resolve();

port.on("message", (request: HelperRequest) => {
  queue = queue.then(() => handle(request));
});

async function handle(request: HelperRequest): Promise<void> {
  switch (request.type) {
    case "open": {
      const pdf = openPdfDocument({ name: request.name, bytes: request.bytes }, request.geometry, request.limits);
      pdf.catch(() => {}); // answered with each page asked for
      documents.set(request.documentId, { pdf, mode: request.mode });
      return;
    }
    case "close": {
      const open = documents.get(request.documentId);
      documents.delete(request.documentId);
      await open?.pdf.then((pdf) => pdf.close(), () => {});
      return;
    }
    case "page": {
      const open = documents.get(request.documentId);
      if (open === undefined) return;
      const result = await pageResult(open, request.index);
      const reply: HelperReply = { documentId: request.documentId, index: request.index, result };
      port!.postMessage(reply, result.kind === "page" ? transferables(result.page) : []);
      return;
    }
  }
}

async function pageResult(open: OpenDocument, index: number): Promise<HelperPageResult> {
  try {
    const pdf = await open.pdf;
    return { kind: "page", page: pdf.usePage(index, (grey) => preparePage(grey, open.mode)) };
  } catch (err) {
    if (err instanceof DocumentRenderError) return { kind: "document_error", reasonCode: err.reasonCode, message: err.message };
    return { kind: "internal_error", message: err instanceof Error ? err.message : String(err) };
  }
}

/** The page's buffers, each copied to a buffer of its own first where it shares one. */
function transferables(page: PreparedPage): ArrayBuffer[] {
  if (page.kind === "blank") return [];
  if (page.kind === "packed") {
    page.packed.bits = ownBuffer(page.packed.bits);
    return [page.packed.bits.buffer as ArrayBuffer];
  }
  const strips = page.g4.strips.map(ownBuffer);
  page.g4 = { ...page.g4, strips };
  return strips.map((strip) => strip.buffer as ArrayBuffer);
}

function ownBuffer(bytes: Uint8Array): Uint8Array {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
}

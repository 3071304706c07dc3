/**
 * Entry point of the render worker thread (started by fax-image-worker.ts): renders one fax job
 * per request message (the pages of long PDFs shared with its page helper threads, page-helpers/)
 * and answers with the result (the TIFF files' memory transferred, not
 * copied) or with the message of an internal error. Requests come one at a time.
 */
import { parentPort, workerData } from "node:worker_threads";
import { PageHelperPool } from "../page-helpers/page-helper-pool.ts";
import { choosePdfiumEngine, setPdfiumCancelFlag } from "../pdfium/pdfium-engine.ts";
import type { RenderReply, RenderRequest, RenderWorkerData } from "./fax-image-worker.ts";

const port = parentPort;
if (port === null) throw new Error("render-worker.ts runs only as a worker thread");
const settings = workerData as RenderWorkerData;
// The page helpers end with this thread (a terminated worker takes its own workers along).
// The flag FaxImageWorker raises as it ends this thread: a native PDFium render in progress here
// or in a helper stops at its next pause point rather than running on in a thread being ended.
choosePdfiumEngine(settings.pdfRenderer);
setPdfiumCancelFlag(settings.cancelFlag);
const pageHelpers = new PageHelperPool({ threads: settings.pageThreads, memoryLimitMb: settings.memoryLimitMb, cancelFlag: settings.cancelFlag, pdfRenderer: settings.pdfRenderer });
if (settings.startHelpersEarly) pageHelpers.startHelpers();
// The render stage is loaded after the helpers have been started, so that they boot while it
// loads (a command's first document waits for both). Requests that arrive meanwhile wait in the
// port: it delivers nothing before the listener below is added.
const { renderFaxJob } = await import("../render-fax-job.ts");

port.on("message", (request: RenderRequest) => {
  renderFaxJob(request.input, { pageHelpers }).then(
    (result) => {
      const reply: RenderReply = { id: request.id, ok: true, result };
      // writeTiffF allocates each file in an ArrayBuffer of its own, so moving it moves nothing else.
      port.postMessage(reply, result.ok ? result.images.map((image) => image.tiff.buffer as ArrayBuffer) : []);
    },
    (err: unknown) => {
      const reply: RenderReply = { id: request.id, ok: false, message: err instanceof Error ? err.message : String(err) };
      port.postMessage(reply);
    },
  );
});

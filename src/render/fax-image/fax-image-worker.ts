/**
 * Runs fax job rendering (render-fax-job.ts) in a worker thread, so that a large or hostile job
 * never stalls the event loop that serves the API, with a time limit and a heap limit per worker.
 *
 * One long-lived worker renders the requests one at a time; it is started on the first request,
 * because its start costs about 0.3 s under tsx. The pages of a long PDF are shared with page
 * helper threads of the worker (page-helpers/, `pageThreads`), which end with it. A request that
 * exceeds `timeoutMs` (counted from the moment it is handed to the worker, including a worker
 * start) terminates the worker; so does a worker that dies. Either way only that request fails, and the next one
 * gets a fresh worker. A worker whose JavaScript heap outgrows `memoryLimitMb` is stopped by
 * Node (ERR_WORKER_OUT_OF_MEMORY) and counts as a dead worker: its request fails, the node
 * carries on. A document that cannot be rendered is not a worker failure: it is a result
 * (`{ ok: false, reasonCode, ... }`) that fails the job with a document reason. `close()` terminates the worker; a request still running then ends as
 * `stopped`, so that its job can be rendered again after the restart.
 *
 * A worker that rendered a job with large documents (over `recycleAfterBytes` in all) is ended
 * after that job and the next one starts a fresh worker: an idle thread does not collect its heap,
 * so the tens of megabytes such a job made it hold would otherwise stay taken until it renders
 * again. Ordinary jobs keep the warm worker.
 *
 * The worker starts through lib/worker-thread.ts (under tsx and compiled alike).
 */
import { availableParallelism } from "node:os";
import type { Worker } from "node:worker_threads";
import { startWorkerThread } from "../../lib/worker-thread.ts";
import { formatDurationMs } from "../../lib/durations.ts";
import { convertsToPdf, documentTypeFromName } from "../document-types.ts";
import type { DocumentInput } from "../pages/grey-page.ts";
import type { FaxJobRenderInput, FaxJobRenderResult } from "../render-fax-job.ts";
import type { PdfiumChoice } from "../pdfium/pdfium-engine.ts";

/** Documents larger than this in all end the worker after their job (see the module comment). */
export const RECYCLE_AFTER_BYTES = 8 * 1024 * 1024;

/** What the render worker thread is started with. */
export interface RenderWorkerData {
  /** Threads that share one long document's pages, the render thread included (1: no page helpers). */
  pageThreads: number;
  /** Heap limit of each page helper thread, MB. */
  memoryLimitMb: number;
  /** Start the page helpers with the worker rather than on the first long document (see FaxImageWorker). */
  startHelpersEarly: boolean;
  /**
   * On a SharedArrayBuffer: raised to 1 as the worker is ended (a timeout, close, a crash), so that
   * native PDFium renders in it and its helpers stop at their next pause point; a terminated thread
   * stops its JavaScript and WebAssembly at once, but not native code.
   */
  cancelFlag: Int32Array;
  /** render.pdfRenderer. */
  pdfRenderer: PdfiumChoice;
}

/**
 * The page threads of one render worker: render.pageThreads, or for 0 the cores the process may
 * use shared among the `workers` render workers that may render at once (at least 1: no helpers).
 */
export function pageThreadsFor(configured: number, workers: number): number {
  return configured > 0 ? configured : Math.max(1, Math.floor(availableParallelism() / Math.max(1, workers)));
}

/** A job's PDFs, in bytes, from which a command starts its page helpers with the render worker. */
const EARLY_HELPERS_MIN_PDF_BYTES = 32 * 1024;

/**
 * Whether a command that renders `documents` at once should start its page helpers with the
 * render worker (they boot and load PDFium while it does) rather than with the first documents
 * long enough to share. Only PDFs, and documents converted to PDF, are shared: a job of one small
 * PDF (a letter, an invoice: under 32 KiB) or of other documents leaves the second core to the
 * render worker, where early helpers cost a one-page letter about a tenth of its time
 * (docs/benchmarks.md); the helpers still start if the document turns out long.
 */
export function helpersWorthStartingEarly(documents: readonly DocumentInput[]): boolean {
  let pdfs = 0;
  let bytes = 0;
  for (const doc of documents) {
    const type = documentTypeFromName(doc.name);
    if (convertsToPdf(type)) return true;
    if (type === "pdf") {
      pdfs++;
      bytes += doc.bytes.length;
    }
  }
  return pdfs >= 2 || bytes >= EARLY_HELPERS_MIN_PDF_BYTES;
}

export interface RenderRequest {
  id: number;
  input: FaxJobRenderInput;
}

export type RenderReply =
  | { id: number; ok: true; result: FaxJobRenderResult }
  | { id: number; ok: false; message: string };

export type FaxImageOutcome =
  /** Rendered, or a document failed (`result.ok` false): either way the job's answer. */
  | { ok: true; result: FaxJobRenderResult }
  /** The image took longer than the time limit; the worker was terminated. */
  | { ok: false; kind: "timeout"; timeoutMs: number }
  /** Rendering threw, or the worker died. */
  | { ok: false; kind: "failed"; message: string }
  /** `close()` was called before the image was done. */
  | { ok: false; kind: "stopped" };

/**
 * Why an image failed, as the detail of a render_failed report reason (the job's report and the
 * `faxline render` command show the same text).
 */
export function faxImageFailureDetail(outcome: Extract<FaxImageOutcome, { ok: false }>): string {
  switch (outcome.kind) {
    case "timeout":
      return `the fax image took longer to render than render.timeout (${formatDurationMs(outcome.timeoutMs)}) and was given up`;
    case "failed":
      return `the fax image could not be rendered: ${outcome.message}`;
    case "stopped":
      return "rendering was stopped before the fax image was done";
  }
}

/**
 * The cancel flag of each render worker that runs (RenderWorkerData.cancelFlag): raised as it is
 * ended, and all of them as the process exits. Node ends its worker threads at exit and waits for
 * them, and a thread inside a native PDFium render would hold the exit until the page is drawn.
 */
const cancelFlags = new Map<Worker, Int32Array>();
let exitHookInstalled = false;

function raiseCancelFlagsAtExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const flag of cancelFlags.values()) Atomics.store(flag, 0, 1);
  });
}

export class FaxImageWorker {
  readonly #timeoutMs: number;
  readonly #memoryLimitMb: number;
  #worker: Worker | null = null;
  #queue: Promise<unknown> = Promise.resolve();
  readonly #recycleAfterBytes: number;
  readonly #pageThreads: number;
  readonly #startHelpersEarly: boolean;
  readonly #pdfRenderer: PdfiumChoice;
  #nextId = 1;
  #closed = false;

  /**
   * `pageThreads`: threads for one document's pages (pageThreadsFor; 1, the default: no page
   * helpers). `startHelpersEarly`: the helpers start (and load PDFium) with the worker, for a command
   * that renders one job at once and exits (`faxline render`, `fax send`): a helper takes about a
   * quarter of a second to boot, which otherwise comes after the render thread has opened the
   * document. A node starts them on the first long document, so that one that sends short faxes
   * does not hold them.
   */
  constructor(options: { timeoutMs: number; memoryLimitMb: number; recycleAfterBytes?: number; pageThreads?: number; startHelpersEarly?: boolean; pdfRenderer?: PdfiumChoice }) {
    this.#pdfRenderer = options.pdfRenderer ?? "auto";
    this.#pageThreads = Math.max(1, options.pageThreads ?? 1);
    this.#startHelpersEarly = options.startHelpersEarly ?? false;
    this.#timeoutMs = options.timeoutMs;
    this.#memoryLimitMb = options.memoryLimitMb;
    this.#recycleAfterBytes = options.recycleAfterBytes ?? RECYCLE_AFTER_BYTES;
  }

  /** Renders one job's fax images; requests made while one runs wait their turn. Never rejects. */
  render(input: FaxJobRenderInput): Promise<FaxImageOutcome> {
    const outcome = this.#queue.then(() => this.#renderNow(input));
    this.#queue = outcome;
    return outcome;
  }

  /** Terminates the worker; a running request ends as `stopped`, later ones too. */
  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = null;
    if (worker !== null) this.#end(worker);
    await worker?.terminate();
  }

  #renderNow(input: FaxJobRenderInput): Promise<FaxImageOutcome> {
    if (this.#closed) return Promise.resolve({ ok: false, kind: "stopped" });
    let worker: Worker;
    try {
      worker = this.#worker ?? this.#start();
    } catch (err) {
      const message = `the render worker could not be started: ${err instanceof Error ? err.message : String(err)}`;
      return Promise.resolve({ ok: false, kind: "failed", message });
    }
    const id = this.#nextId++;
    const inputBytes = input.documents.reduce((n, d) => n + d.bytes.byteLength, 0) + (input.overlay?.document.bytes.byteLength ?? 0);
    const recycle = inputBytes > this.#recycleAfterBytes;
    return new Promise<FaxImageOutcome>((resolve) => {
      const finish = (outcome: FaxImageOutcome, workerIsDone: boolean): void => {
        if (recycle) workerIsDone = true;
        clearTimeout(timer);
        worker.off("message", onMessage).off("error", onError).off("exit", onExit);
        if (workerIsDone) {
          if (this.#worker === worker) this.#worker = null;
          this.#end(worker);
          // Awaiting termination would only delay the outcome; the thread is stopped either way.
          void worker.terminate();
        }
        resolve(outcome);
      };
      const onMessage = (reply: RenderReply): void => {
        if (reply.id !== id) return;
        if (reply.ok) {
          const result = reply.result;
          if (result.ok) {
            // Transferred buffers arrive as plain Uint8Arrays.
            for (const image of result.images) image.tiff = Buffer.from(image.tiff.buffer, image.tiff.byteOffset, image.tiff.byteLength);
          }
          finish({ ok: true, result }, false);
        } else {
          finish({ ok: false, kind: "failed", message: reply.message }, false);
        }
      };
      const onError = (err: Error & { code?: string }): void =>
        finish(
          {
            ok: false,
            kind: "failed",
            message:
              err.code === "ERR_WORKER_OUT_OF_MEMORY"
                ? `rendering needed more memory than render.workerMemory (${this.#memoryLimitMb} MB) and was stopped`
                : `the render worker crashed: ${err.message}`,
          },
          true,
        );
      const onExit = (code: number): void =>
        finish(this.#closed ? { ok: false, kind: "stopped" } : { ok: false, kind: "failed", message: `the render worker exited with code ${code}` }, true);
      const timer = setTimeout(() => finish({ ok: false, kind: "timeout", timeoutMs: this.#timeoutMs }, true), this.#timeoutMs);

      worker.on("message", onMessage).on("error", onError).on("exit", onExit);
      const request: RenderRequest = { id, input };
      try {
        worker.postMessage(request);
      } catch (err) {
        finish({ ok: false, kind: "failed", message: `the render request could not be sent: ${err instanceof Error ? err.message : String(err)}` }, false);
      }
    });
  }

  /** Raises the worker's cancel flag: native renders in it stop at their next pause point. */
  #end(worker: Worker): void {
    const flag = cancelFlags.get(worker);
    if (flag !== undefined) Atomics.store(flag, 0, 1);
  }

  #start(): Worker {
    const cancelFlag = new Int32Array(new SharedArrayBuffer(4));
    const workerData: RenderWorkerData = { pageThreads: this.#pageThreads, memoryLimitMb: this.#memoryLimitMb, startHelpersEarly: this.#startHelpersEarly, cancelFlag, pdfRenderer: this.#pdfRenderer };
    const worker = startWorkerThread("render/fax-image/render-worker", { resourceLimits: { maxOldGenerationSizeMb: this.#memoryLimitMb }, workerData });
    cancelFlags.set(worker, cancelFlag);
    worker.once("exit", () => cancelFlags.delete(worker));
    raiseCancelFlagsAtExit();
    // An idle worker must not keep the process alive; while a request runs, its timer does.
    worker.unref();
    // A worker that dies between requests is dropped and the next request starts a new one.
    // (This listener also keeps such an 'error' from being thrown in the node as unhandled.)
    const drop = (): void => {
      if (this.#worker === worker) this.#worker = null;
    };
    worker.on("error", drop).on("exit", drop);
    this.#worker = worker;
    return worker;
  }
}

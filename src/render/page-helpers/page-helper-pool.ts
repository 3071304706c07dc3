/**
 * Renders the pages of a job's PDFs on several cores: the render thread (which runs
 * render-fax-job.ts) and `threads − 1` page helper threads (page-helper-thread.ts) render and
 * prepare (prepare-page.ts) pages of the same documents at once, and the pages come out in order.
 * A long PDF is shared page by page; so is a run of PDFs that follow each other in a job (their
 * pages counted as one sequence), so that a job of short documents keeps both cores busy too.
 *
 * Each helper opens a document itself (its own PDFium instance) when first given one of its pages,
 * and is handed page numbers as it finishes them, LOOKAHEAD at a time, so a helper never waits for
 * the render thread. The render thread takes the pages nobody holds: while the page it must hand
 * on next is still with a helper, it renders the next unassigned one itself. No page more than
 * `maxAhead` (a few per thread) past the one to be handed on next is given out or rendered, so few
 * prepared pages ever wait, and helpers do not run far past a page that fails; a page holds no
 * bitmap, only its G4 encoding (final) or its pixels packed at 1 bit per pixel (for a header or
 * overlay), as in the sequential path. A document is closed, here and in the helpers, once its
 * last page is handed on.
 *
 * Helpers start on the first documents long enough to share (PARALLEL_MIN_PAGES in all), or when
 * asked (startHelpers), load PDFium at once, and stay for the next; they hold the event loop only
 * while documents are being shared. A helper that dies (a crash, or its heap outgrowing the limit)
 * leaves its pages to the render thread, and a new one starts with the next documents. A page that
 * cannot be rendered fails the job when its turn comes, as it would sequentially (also when the
 * render thread met it ahead of its turn); a page a helper failed on for another reason is
 * rendered again by the render thread at its turn.
 */
import type { Worker } from "node:worker_threads";
import { startWorkerThread } from "../../lib/worker-thread.ts";
import { DocumentRenderError, type DocumentInput, type PageGeometry, type RenderLimits } from "../pages/grey-page.ts";
import type { PdfDocument } from "../pages/pdf-pages.ts";
import type { PdfiumChoice } from "../pdfium/pdfium-engine.ts";
import { preparePage, type PreparedPage, type PreparePageMode } from "../prepare-page.ts";
import type { HelperPageResult, HelperReply, HelperRequest, PageHelperData } from "./page-helper-protocol.ts";

/** Documents with fewer pages (in all) are rendered by the render thread alone: sharing would not pay. */
export const PARALLEL_MIN_PAGES = 4;
/**
 * Page numbers a helper holds at once. With 2, a helper of the 200-page bench document sat idle
 * about a fifth of the time, its next page waiting for the render thread to finish one of its own;
 * 4 made `faxline render` of it 4–5 % faster (docs/benchmarks.md).
 */
const LOOKAHEAD = 4;

class Helper {
  readonly worker: Worker;
  /** Pages (counted over all the documents being shared) the helper has been asked for and not answered. */
  readonly assigned = new Set<number>();
  /** Documents (their ids) the helper has been told to open and not yet to close. */
  readonly opened = new Set<number>();
  dead = false;
  onReply: ((reply: HelperReply) => void) | null = null;
  onDeath: (() => void) | null = null;

  constructor(memoryLimitMb: number, data: PageHelperData, onGone: (helper: Helper) => void) {
    const workerData: PageHelperData = data;
    this.worker = startWorkerThread("render/page-helpers/page-helper-thread", { resourceLimits: { maxOldGenerationSizeMb: memoryLimitMb }, workerData });
    this.worker.unref();
    this.worker.on("message", (reply: HelperReply) => this.onReply?.(reply));
    const gone = (): void => {
      if (this.dead) return;
      this.dead = true;
      onGone(this);
      this.onDeath?.();
    };
    // 'error' (an uncaught exception, out of memory) is followed by 'exit'; either ends the helper.
    this.worker.on("error", gone).on("exit", gone);
  }

  send(request: HelperRequest): void {
    if (!this.dead) this.worker.postMessage(request);
  }
}

export class PageHelperPool {
  readonly #helperCount: number;
  readonly #memoryLimitMb: number;
  readonly #helperData: PageHelperData;
  readonly #maxAhead: number;
  #helpers: Helper[] = [];
  #nextDocumentId = 1;
  #busy = false;

  /**
   * `threads`: threads that render one document's pages, the render thread included (1: no helpers).
   * `cancelFlag`: raised by whoever ends the render thread, to give up the helpers' native PDFium
   * renders too (pdfium/pdfium-engine.ts: setPdfiumCancelFlag). `pdfRenderer`: render.pdfRenderer.
   */
  constructor(options: { threads: number; memoryLimitMb: number; cancelFlag?: Int32Array | null; pdfRenderer?: PdfiumChoice }) {
    this.#helperCount = Math.max(0, Math.floor(options.threads) - 1);
    this.#memoryLimitMb = options.memoryLimitMb;
    this.#helperData = { cancelFlag: options.cancelFlag ?? null, pdfRenderer: options.pdfRenderer ?? "auto" };
    this.#maxAhead = (this.#helperCount + 1) * LOOKAHEAD + 2;
  }

  /** The number of helper threads the pool runs when it shares a document. */
  get helperCount(): number {
    return this.#helperCount;
  }

  /** The running helper threads (for tests and diagnostics). */
  get helperWorkers(): readonly Worker[] {
    return this.#helpers.map((helper) => helper.worker);
  }

  /**
   * The prepared pages of `pdfs`, PDFs of one job that this thread has opened, in order (the
   * first document's pages, then the next one's); the helpers render pages of the same documents
   * meanwhile, so a job of several short PDFs is shared as one long one would be. Each document is
   * closed here once its last page is handed on (closing again is harmless), and a helper opens a
   * document only when it is first given one of its pages. `onTurn` is told the document whose
   * page is to be handed on next as each document's turn comes (a failure thrown then is its).
   */
  async *preparePages(
    pdfs: readonly SharedPdf[],
    geometry: PageGeometry,
    limits: RenderLimits,
    mode: PreparePageMode,
    onTurn?: (document: number) => void,
  ): AsyncGenerator<PoolPage> {
    const firsts: number[] = [];
    let pageCount = 0;
    for (const pdf of pdfs) {
      firsts.push(pageCount);
      pageCount += pdf.local.pageCount;
    }
    /** The document of page `flat` (counted over all the documents) and its index in it. */
    const locate = (flat: number): [document: number, index: number] => {
      let document = pdfs.length - 1;
      while (firsts[document]! > flat) document--;
      return [document, flat - firsts[document]!];
    };
    const here = (flat: number): PageResult => {
      const [document, index] = locate(flat);
      return prepareHere(pdfs[document]!.local, index, mode);
    };
    const helpers = this.#busy || this.#helperCount === 0 || pageCount < PARALLEL_MIN_PAGES ? [] : this.#running();
    if (helpers.length === 0) {
      try {
        for (const [document, { local }] of pdfs.entries()) {
          onTurn?.(document);
          for (let index = 0; index < local.pageCount; index++) yield { document, page: local.usePage(index, (grey) => preparePage(grey, mode)) };
          local.close();
        }
      } finally {
        for (const { local } of pdfs) local.close();
      }
      return;
    }
    this.#busy = true;
    const documentIds = pdfs.map(() => this.#nextDocumentId++);
    const documentOfId = new Map(documentIds.map((id, document) => [id, document]));
    const results = new Map<number, PageResult>();
    /** Pages of helpers that died before answering: nobody holds them now. */
    const orphans: number[] = [];
    let next = 0; // the first page not yet given to anyone
    let handingOn = 0; // the page to hand on next: no page from MAX_AHEAD past it is given out
    let wake: (() => void) | null = null;
    const notify = (): void => {
      const resume = wake;
      wake = null;
      resume?.();
    };
    const give = (helper: Helper): void => {
      while (!helper.dead && helper.assigned.size < LOOKAHEAD && next < pageCount && next < handingOn + this.#maxAhead) {
        const flat = next++;
        const [document, index] = locate(flat);
        const documentId = documentIds[document]!;
        if (!helper.opened.has(documentId)) {
          const { doc } = pdfs[document]!;
          // The helper is sent a copy of the document's own bytes, not of a larger buffer they may
          // sit in (a Buffer's slice() would be a view of that buffer: new Uint8Array copies).
          const bytes = doc.bytes.byteOffset === 0 && doc.bytes.byteLength === doc.bytes.buffer.byteLength ? doc.bytes : new Uint8Array(doc.bytes);
          helper.send({ type: "open", documentId, name: doc.name, bytes, geometry, limits, mode });
          helper.opened.add(documentId);
        }
        helper.assigned.add(flat);
        helper.send({ type: "page", documentId, index });
      }
    };
    /** Closes a document whose pages have all been handed on, here and in the helpers that opened it. */
    const done = (document: number): void => {
      pdfs[document]!.local.close();
      const documentId = documentIds[document]!;
      for (const helper of helpers) {
        if (helper.opened.delete(documentId)) helper.send({ type: "close", documentId });
      }
    };
    try {
      for (const helper of helpers) {
        helper.onReply = (reply) => {
          const document = documentOfId.get(reply.documentId);
          if (document === undefined) return;
          const flat = firsts[document]! + reply.index;
          if (!helper.assigned.delete(flat)) return;
          results.set(flat, reply.result);
          give(helper);
          notify();
        };
        helper.onDeath = () => {
          orphans.push(...helper.assigned);
          helper.assigned.clear();
          notify();
        };
        helper.worker.ref();
      }
      for (let flat = 0; flat < pageCount; flat++) {
        handingOn = flat;
        if (firsts.includes(flat)) onTurn?.(locate(flat)[0]);
        for (const helper of helpers) give(helper);
        let result = results.get(flat);
        while (result === undefined) {
          const orphan = orphans.indexOf(flat);
          if (orphan >= 0 || flat >= next) {
            // Nobody holds this page: render it here.
            if (orphan >= 0) orphans.splice(orphan, 1);
            else next = flat + 1;
            result = here(flat);
          } else if (results.size < this.#maxAhead && (orphans.length > 0 || (next < pageCount && next < flat + this.#maxAhead))) {
            // The page is with a helper: render one nobody holds meanwhile, then let replies in.
            orphans.sort((a, b) => a - b);
            const ahead = orphans.length > 0 ? orphans.shift()! : next++;
            results.set(ahead, here(ahead));
            await new Promise<void>((resolve) => setImmediate(resolve));
            result = results.get(flat);
          } else {
            await new Promise<void>((resolve) => {
              wake = resolve;
            });
            result = results.get(flat);
          }
        }
        results.delete(flat);
        // A fault of the helper (its own PDFium, say) is not the page's: this thread renders it, and
        // a fault of the page itself then fails the job as it would on one thread.
        if (result.kind === "internal_error") result = here(flat);
        const [document, index] = locate(flat);
        yield { document, page: unwrap(result) };
        if (index === pdfs[document]!.local.pageCount - 1) done(document);
      }
    } finally {
      for (const helper of helpers) {
        helper.onReply = null;
        helper.onDeath = null;
        helper.assigned.clear();
        for (const documentId of helper.opened) helper.send({ type: "close", documentId });
        helper.opened.clear();
        if (!helper.dead) helper.worker.unref();
      }
      for (const { local } of pdfs) local.close();
      this.#busy = false;
    }
  }

  /** Starts the helpers now instead of with the first long document (they load PDFium as they start). */
  startHelpers(): void {
    this.#running();
  }

  /** Stops the helpers. */
  async close(): Promise<void> {
    const helpers = this.#helpers;
    this.#helpers = [];
    await Promise.all(helpers.map((helper) => helper.worker.terminate()));
  }

  /** The helpers, started where missing; those that started, if a start fails (the document then renders with fewer). */
  #running(): Helper[] {
    try {
      while (this.#helpers.length < this.#helperCount) {
        this.#helpers.push(
          new Helper(this.#memoryLimitMb, this.#helperData, (gone) => {
            this.#helpers = this.#helpers.filter((helper) => helper !== gone);
          }),
        );
      }
    } catch {
      // A thread that cannot start (out of memory, a thread limit) leaves the pages to the others.
    }
    return [...this.#helpers];
  }
}

/** A PDF of the job for the pool to prepare: its bytes (for the helpers) and this thread's open copy. */
export interface SharedPdf {
  doc: DocumentInput;
  local: PdfDocument;
}

/** A prepared page and the document (its index in the `pdfs` given) it belongs to. */
export interface PoolPage {
  document: number;
  page: PreparedPage;
}

/** A page's outcome: as a helper answers it, or an error thrown rendering it here (kept for its turn). */
type PageResult = HelperPageResult | { kind: "thrown"; error: unknown };

/**
 * Renders and prepares a page on this thread. Whatever goes wrong is kept as the page's result, to
 * be thrown at its turn: a page rendered ahead must not fail the job before the pages before it.
 */
function prepareHere(local: PdfDocument, index: number, mode: PreparePageMode): PageResult {
  try {
    return { kind: "page", page: local.usePage(index, (grey) => preparePage(grey, mode)) };
  } catch (err) {
    if (err instanceof DocumentRenderError) return { kind: "document_error", reasonCode: err.reasonCode, message: err.message };
    return { kind: "thrown", error: err };
  }
}

function unwrap(result: PageResult): PreparedPage {
  switch (result.kind) {
    case "page":
      return result.page;
    case "document_error":
      throw new DocumentRenderError(result.reasonCode, result.message);
    case "internal_error":
      throw new Error(`a page helper thread failed: ${result.message}`);
    case "thrown":
      throw result.error;
  }
}

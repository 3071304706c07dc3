/**
 * Renders PDF documents into grey fax pages with PDFium, the renderer inside Chrome
 * (BSD-licensed), natively or as WebAssembly: ../pdfium/pdfium-engine.ts chooses, and both draw
 * the same pixels.
 *
 * Each page is rendered straight into a white page-sized bitmap, at the place and size that
 * place-on-page.ts works out, so vector content is drawn once at the final resolution and never
 * resampled. PDFium draws into any pixel rectangle, so the non-square fax pixels (204 dpi across,
 * 196 or 98 lines per inch down) come out right by giving the rectangle its fax-pixel size.
 * Landscape pages (wider than tall once their /Rotate is applied) are drawn turned by 90 degrees
 * counter-clockwise by PDFium itself, when that makes them bigger on the portrait fax page.
 * Annotations and form fields are drawn as they are printed: annotations with appearance streams
 * by the page render (FPDF_ANNOT), then the form layer with its current field values
 * (FPDF_FFLDraw), which also draws fields whose appearance the PDF leaves to the viewer
 * (NeedAppearances).
 *
 * Failures (DocumentRenderError, each naming the document):
 *  - a password is needed to open it, or its security handler is unknown -> document_encrypted
 *    (a PDF with only an owner password, i.e. printing/copying restrictions, opens and renders);
 *  - not a PDF, damaged, truncated, no pages, a page that cannot be loaded -> document_unreadable;
 *  - a page so large that at fax resolution it would be more than `limits.maxSourcePixels`
 *    pixels, or more pages than `limits.maxPages` -> document_too_large, checked from the page
 *    sizes in points before anything is rendered.
 * `tone` is judged from the rendered page content (place-on-page.ts: contentTone).
 */
import { DocumentRenderError, type DocumentInput, type GreyPage, type PageGeometry, type RenderLimits } from "./grey-page.ts";
import { contentTone, planPlacement } from "./place-on-page.ts";
import { pdfiumEngine, RENDER_CANCELLED, type PageBuffer, type PdfiumEngine } from "../pdfium/pdfium-engine.ts";

/** FPDF_GetLastError codes (fpdfview.h). */
const FPDF_ERR_FORMAT = 3;
const FPDF_ERR_PASSWORD = 4;
const FPDF_ERR_SECURITY = 5;
const FPDF_ERR_MESSAGES: Readonly<Record<number, string>> = {
  1: "an unknown error",
  2: "the file cannot be opened",
  [FPDF_ERR_FORMAT]: "it is not a PDF file, or it is damaged or truncated",
  6: "a page cannot be read",
};
/**
 * Render flags (fpdfview.h): draw annotations. FPDF_GRAYSCALE (0x08) is not given: the bitmap is
 * grey already, so colours become grey as they are drawn into it; with the flag PDFium converted
 * every colour image to grey first, which gave the same greys (within one level, rounding) and
 * took 40 % longer on a colour photo page.
 */
const FPDF_ANNOT = 0x01;
/** The `rotate` argument of the render calls: 3 is 90 degrees counter-clockwise. */
const ROTATE_COUNTER_CLOCKWISE = 3;
const POINTS_PER_INCH = 72;
/** Pages smaller than this (points) are taken to be broken rather than rendered as a dot. */
const MIN_PAGE_POINTS = 1;

/** Loads this thread's PDFium now rather than with the first document (a page helper does, as it starts). */
export async function preloadPdfium(): Promise<void> {
  await pdfiumEngine();
}

export async function* pdfPages(doc: DocumentInput, geometry: PageGeometry, limits: RenderLimits): AsyncGenerator<GreyPage> {
  const pdf = await openPdfDocument(doc, geometry, limits);
  try {
    for (let index = 0; index < pdf.pageCount; index++) yield pdf.renderPage(index);
  } finally {
    pdf.close();
  }
}

/** An open PDF whose pages can be rendered in any order (page-helpers.ts renders them on several threads). */
export interface PdfDocument {
  pageCount: number;
  /** Renders page `index` (0-based); throws DocumentRenderError for a page that cannot be rendered. */
  renderPage(index: number): GreyPage;
  /**
   * Renders page `index` into the document's page buffer in PDFium's memory and hands it to `use`,
   * which may change its pixels but must not keep them: the buffer is reused for the next page.
   * Saves allocating (and first touching) a page-sized buffer per page.
   */
  usePage<T>(index: number, use: (page: GreyPage) => T): T;
  close(): void;
}

/** Opens a PDF and checks its page count against the limits. */
export async function openPdfDocument(doc: DocumentInput, geometry: PageGeometry, limits: RenderLimits): Promise<PdfDocument> {
  const engine = await pdfiumEngine();
  const id = openDocument(engine, doc);
  let closed = false;
  /** The page buffer of usePage, allocated on first use. */
  let pageBuffer: PageBuffer | null = null;
  const close = (): void => {
    if (closed) return;
    closed = true;
    pageBuffer?.free();
    engine.closeDocument(id);
  };
  try {
    const pageCount = engine.pageCount(id);
    if (pageCount <= 0) throw new DocumentRenderError("document_unreadable", `${doc.name} has no pages`);
    if (pageCount > limits.maxPages) {
      throw new DocumentRenderError("document_too_large", `${doc.name} has ${pageCount} pages, more than the limit of ${limits.maxPages} pages`);
    }
    const what = (index: number): string => {
      if (closed) throw new Error(`${doc.name} is closed`);
      if (!Number.isInteger(index) || index < 0 || index >= pageCount) throw new RangeError(`${doc.name} has no page ${index}`);
      return pageCount > 1 ? `page ${index + 1} of ${doc.name}` : doc.name;
    };
    return {
      pageCount,
      renderPage(index: number): GreyPage {
        const name = what(index);
        const buffer = engine.allocatePage(geometry.widthPx, geometry.heightPx);
        try {
          const page = renderPage(engine, id, index, name, geometry, limits, buffer);
          // Copied: the buffer is freed (and PDFium ran again, closing the page, after the view was taken).
          return { ...page, data: buffer.view().slice() };
        } finally {
          buffer.free();
        }
      },
      usePage<T>(index: number, use: (page: GreyPage) => T): T {
        const name = what(index);
        pageBuffer ??= engine.allocatePage(geometry.widthPx, geometry.heightPx);
        const page = renderPage(engine, id, index, name, geometry, limits, pageBuffer);
        // A view of the page buffer, taken anew (the WebAssembly PDFium may have grown its memory,
        // which replaces its heap): valid until PDFium runs again, which it does not inside `use`.
        return use({ ...page, data: pageBuffer.view() });
      },
      close,
    };
  } catch (err) {
    close();
    throw err;
  }
}

function openDocument(engine: PdfiumEngine, doc: DocumentInput): number {
  if (doc.bytes.length === 0) throw new DocumentRenderError("document_unreadable", `${doc.name} is empty`);
  const id = engine.openDocument(doc.bytes);
  if (id > 0) return id;
  const error = -id;
  if (error === FPDF_ERR_PASSWORD) {
    throw new DocumentRenderError("document_encrypted", `${doc.name} is password-protected; send it without a password`);
  }
  if (error === FPDF_ERR_SECURITY) {
    throw new DocumentRenderError("document_encrypted", `${doc.name} is encrypted with a security scheme Faxline cannot open; send it without encryption`);
  }
  const why = FPDF_ERR_MESSAGES[error] ?? `PDFium error ${error}`;
  throw new DocumentRenderError("document_unreadable", `${doc.name} cannot be read as a PDF: ${why}`);
}

/** The page's size in points as displayed (its /Rotate applied), checked against the limits. */
function pageSize(engine: PdfiumEngine, id: number, index: number, what: string, geometry: PageGeometry, limits: RenderLimits): { width: number; height: number } {
  const size = engine.pageSize(id, index);
  if (size === null || !Number.isFinite(size.width) || !Number.isFinite(size.height) || size.width < MIN_PAGE_POINTS || size.height < MIN_PAGE_POINTS) {
    throw new DocumentRenderError("document_unreadable", `${what} cannot be read: it has no usable page size`);
  }
  const widthIn = size.width / POINTS_PER_INCH;
  const heightIn = size.height / POINTS_PER_INCH;
  const pixels = Math.ceil(widthIn * geometry.xDpi) * Math.ceil(heightIn * geometry.yDpi);
  if (pixels > limits.maxSourcePixels) {
    throw new DocumentRenderError(
      "document_too_large",
      `${what} is ${inches(widthIn)} x ${inches(heightIn)} inches, ${pixels.toLocaleString("en-US")} pixels at fax resolution, ` +
        `more than the limit of ${limits.maxSourcePixels.toLocaleString("en-US")} pixels per page`,
    );
  }
  return size;
}

/** Renders a page into `buffer` (page-sized); the page's data is a view of it. */
function renderPage(engine: PdfiumEngine, id: number, index: number, what: string, geometry: PageGeometry, limits: RenderLimits, buffer: PageBuffer): GreyPage {
  const size = pageSize(engine, id, index, what, geometry, limits);
  const placement = planPlacement({ width: size.width / POINTS_PER_INCH, height: size.height / POINTS_PER_INCH, enlarge: true }, geometry);
  const { widthPx, heightPx } = geometry;
  const { left, top, width, height } = placement;
  const rendered = engine.renderPage(id, index, buffer, widthPx, heightPx, { left, top, width, height, rotate: placement.rotate ? ROTATE_COUNTER_CLOCKWISE : 0 }, FPDF_ANNOT);
  if (rendered < 0) throw new DocumentRenderError("document_unreadable", `${what} cannot be read: PDFium error ${-rendered}`);
  // Only a thread that is being ended has its render given up: nobody reads this.
  if (rendered === RENDER_CANCELLED) throw new Error(`rendering ${what} was given up: the render was cancelled`);
  const grey = { width: widthPx, height: heightPx, data: buffer.view() };
  return { ...grey, tone: contentTone(grey, placement) };
}

function inches(value: number): string {
  return value.toFixed(value < 10 ? 1 : 0);
}

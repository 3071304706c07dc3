/**
 * Renders PDF documents into grey fax pages with PDFium (@hyzyla/pdfium: PDFium, the renderer
 * inside Chrome, BSD-licensed, compiled to WebAssembly; no subprocess and no system package).
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
 * The package's high-level wrapper is not used: it always renders upright, cannot read a page's
 * size without loading the page, closes pages inside `render()`, and turns PDFium's error codes
 * into English strings. The few C functions needed are called on the WebAssembly module that
 * the package exports (`PDFiumModule`), through the typed subset `PdfiumApi` below. The module is
 * loaded once per thread (each worker thread has its own), on first use.
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
import { PDFiumModule } from "@hyzyla/pdfium";
import { DocumentRenderError, type DocumentInput, type GreyPage, type PageGeometry, type RenderLimits } from "./grey-page.ts";
import { contentTone, planPlacement } from "./place-on-page.ts";

/** The PDFium C functions used here, as the Emscripten module exports them (pointers are numbers). */
interface PdfiumApi {
  _FPDF_InitLibraryWithConfig(config: number): void;
  _FPDF_LoadMemDocument(data: number, size: number, password: number): number;
  _FPDF_GetLastError(): number;
  _FPDF_CloseDocument(document: number): void;
  _FPDF_GetPageCount(document: number): number;
  _FPDF_GetPageSizeByIndexF(document: number, index: number, size: number): number;
  _FPDF_LoadPage(document: number, index: number): number;
  _FPDF_ClosePage(page: number): void;
  _FPDFBitmap_CreateEx(width: number, height: number, format: number, buffer: number, stride: number): number;
  _FPDFBitmap_FillRect(bitmap: number, left: number, top: number, width: number, height: number, color: number): void;
  _FPDFBitmap_Destroy(bitmap: number): void;
  _FPDF_RenderPageBitmap(bitmap: number, page: number, x: number, y: number, width: number, height: number, rotate: number, flags: number): void;
  _FPDFDOC_InitFormFillEnvironment(document: number, formInfo: number): number;
  _FPDFDOC_ExitFormFillEnvironment(form: number): void;
  _FORM_OnAfterLoadPage(page: number, form: number): void;
  _FORM_OnBeforeClosePage(page: number, form: number): void;
  _FPDF_FFLDraw(form: number, bitmap: number, page: number, x: number, y: number, width: number, height: number, rotate: number, flags: number): void;
  wasmExports: { malloc(size: number): number; free(pointer: number): void };
  HEAPU8: Uint8Array;
}

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
const FPDFBITMAP_GRAY = 1;
/**
 * Render flags (fpdfview.h): draw annotations. FPDF_GRAYSCALE (0x08) is not given: the bitmap is
 * grey already, so colours become grey as they are drawn into it; with the flag PDFium converted
 * every colour image to grey first, which gave the same greys (within one level, rounding) and
 * took 40 % longer on a colour photo page.
 */
const FPDF_ANNOT = 0x01;
/** The `rotate` argument of the render calls: 3 is 90 degrees counter-clockwise. */
const ROTATE_COUNTER_CLOCKWISE = 3;
const WHITE = 0xffffffff;
/** FPDF_FORMFILLINFO: version 1 (no XFA), every callback null; 256 bytes covers the struct. */
const FORM_FILL_INFO_BYTES = 256;
const POINTS_PER_INCH = 72;
/** Pages smaller than this (points) are taken to be broken rather than rendered as a dot. */
const MIN_PAGE_POINTS = 1;

let pdfium: Promise<PdfiumApi> | null = null;

/** Loads this thread's PDFium now rather than with the first document (a page helper does, as it starts). */
export async function preloadPdfium(): Promise<void> {
  await loadPdfium();
}

/** The PDFium module of this thread, loaded and initialised on first use. */
function loadPdfium(): Promise<PdfiumApi> {
  pdfium ??= PDFiumModule({}).then((module) => {
    const api = module as unknown as PdfiumApi;
    for (const name of ["_FPDF_GetPageSizeByIndexF", "_FPDF_FFLDraw", "_FPDF_RenderPageBitmap", "_FPDFDOC_InitFormFillEnvironment"] as const) {
      if (typeof api[name] !== "function") throw new Error(`@hyzyla/pdfium does not export ${name}`);
    }
    api._FPDF_InitLibraryWithConfig(0);
    return api;
  });
  return pdfium;
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
  const api = await loadPdfium();
  const pdf = openDocument(api, doc);
  let closed = false;
  /** The page buffer of usePage, allocated on first use. */
  let pageBuffer = 0;
  const close = (): void => {
    if (closed) return;
    closed = true;
    if (pageBuffer !== 0) api.wasmExports.free(pageBuffer);
    closeDocument(api, pdf);
  };
  try {
    const pageCount = api._FPDF_GetPageCount(pdf.document);
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
        const buffer = allocatePage(api, geometry);
        try {
          const page = renderPage(api, pdf, index, name, geometry, limits, buffer);
          // Copied from a view taken anew: PDFium ran again (closing the page) after renderPage took its own.
          return { ...page, data: api.HEAPU8.slice(buffer, buffer + geometry.widthPx * geometry.heightPx) };
        } finally {
          api.wasmExports.free(buffer);
        }
      },
      usePage<T>(index: number, use: (page: GreyPage) => T): T {
        const name = what(index);
        if (pageBuffer === 0) pageBuffer = allocatePage(api, geometry);
        const page = renderPage(api, pdf, index, name, geometry, limits, pageBuffer);
        // A view of PDFium's memory, taken anew (PDFium may have grown its memory, which replaces
        // HEAPU8): valid until PDFium runs again, which it does not inside `use`.
        return use({ ...page, data: api.HEAPU8.subarray(pageBuffer, pageBuffer + geometry.widthPx * geometry.heightPx) });
      },
      close,
    };
  } catch (err) {
    close();
    throw err;
  }
}

/** A page-sized grey buffer in PDFium's memory. */
function allocatePage(api: PdfiumApi, geometry: PageGeometry): number {
  const buffer = api.wasmExports.malloc(geometry.widthPx * geometry.heightPx);
  if (buffer === 0) throw new Error(`PDFium cannot allocate a ${geometry.widthPx}x${geometry.heightPx} page bitmap`);
  return buffer;
}

interface OpenPdf {
  document: number;
  /** The file's bytes in WebAssembly memory: PDFium reads them until the document is closed. */
  bytes: number;
  /** The form-fill environment, made on the first page drawn. */
  form: number;
  formInfo: number;
}

function openDocument(api: PdfiumApi, doc: DocumentInput): OpenPdf {
  if (doc.bytes.length === 0) throw new DocumentRenderError("document_unreadable", `${doc.name} is empty`);
  const bytes = api.wasmExports.malloc(doc.bytes.length);
  if (bytes === 0) throw new Error(`PDFium cannot allocate ${doc.bytes.length} bytes for ${doc.name}`);
  api.HEAPU8.set(doc.bytes, bytes);
  const document = api._FPDF_LoadMemDocument(bytes, doc.bytes.length, 0);
  if (document !== 0) return { document, bytes, form: 0, formInfo: 0 };

  const error = api._FPDF_GetLastError();
  api.wasmExports.free(bytes);
  if (error === FPDF_ERR_PASSWORD) {
    throw new DocumentRenderError("document_encrypted", `${doc.name} is password-protected; send it without a password`);
  }
  if (error === FPDF_ERR_SECURITY) {
    throw new DocumentRenderError("document_encrypted", `${doc.name} is encrypted with a security scheme Faxline cannot open; send it without encryption`);
  }
  const why = FPDF_ERR_MESSAGES[error] ?? `PDFium error ${error}`;
  throw new DocumentRenderError("document_unreadable", `${doc.name} cannot be read as a PDF: ${why}`);
}

function closeDocument(api: PdfiumApi, pdf: OpenPdf): void {
  if (pdf.form !== 0) api._FPDFDOC_ExitFormFillEnvironment(pdf.form);
  if (pdf.formInfo !== 0) api.wasmExports.free(pdf.formInfo);
  api._FPDF_CloseDocument(pdf.document);
  api.wasmExports.free(pdf.bytes);
}

/** The form-fill environment of the document (made once); 0 if PDFium cannot make one. */
function formOf(api: PdfiumApi, pdf: OpenPdf): number {
  if (pdf.form !== 0 || pdf.formInfo !== 0) return pdf.form;
  pdf.formInfo = api.wasmExports.malloc(FORM_FILL_INFO_BYTES);
  if (pdf.formInfo === 0) return 0;
  api.HEAPU8.fill(0, pdf.formInfo, pdf.formInfo + FORM_FILL_INFO_BYTES);
  new DataView(api.HEAPU8.buffer).setUint32(pdf.formInfo, 1, true);
  pdf.form = api._FPDFDOC_InitFormFillEnvironment(pdf.document, pdf.formInfo);
  return pdf.form;
}

/** The page's size in points as displayed (its /Rotate applied), checked against the limits. */
function pageSize(api: PdfiumApi, pdf: OpenPdf, index: number, what: string, geometry: PageGeometry, limits: RenderLimits): { width: number; height: number } {
  const size = api.wasmExports.malloc(8);
  try {
    const ok = api._FPDF_GetPageSizeByIndexF(pdf.document, index, size);
    const view = new DataView(api.HEAPU8.buffer, size, 8);
    const width = view.getFloat32(0, true);
    const height = view.getFloat32(4, true);
    if (ok === 0 || !Number.isFinite(width) || !Number.isFinite(height) || width < MIN_PAGE_POINTS || height < MIN_PAGE_POINTS) {
      throw new DocumentRenderError("document_unreadable", `${what} cannot be read: it has no usable page size`);
    }
    const widthIn = width / POINTS_PER_INCH;
    const heightIn = height / POINTS_PER_INCH;
    const pixels = Math.ceil(widthIn * geometry.xDpi) * Math.ceil(heightIn * geometry.yDpi);
    if (pixels > limits.maxSourcePixels) {
      throw new DocumentRenderError(
        "document_too_large",
        `${what} is ${inches(widthIn)} x ${inches(heightIn)} inches, ${pixels.toLocaleString("en-US")} pixels at fax resolution, ` +
          `more than the limit of ${limits.maxSourcePixels.toLocaleString("en-US")} pixels per page`,
      );
    }
    return { width, height };
  } finally {
    api.wasmExports.free(size);
  }
}

/** Renders a page into `buffer` (page-sized, in PDFium's memory); the page's data is a view of it. */
function renderPage(api: PdfiumApi, pdf: OpenPdf, index: number, what: string, geometry: PageGeometry, limits: RenderLimits, buffer: number): GreyPage {
  const size = pageSize(api, pdf, index, what, geometry, limits);
  const placement = planPlacement({ width: size.width / POINTS_PER_INCH, height: size.height / POINTS_PER_INCH, enlarge: true }, geometry);
  const page = api._FPDF_LoadPage(pdf.document, index);
  if (page === 0) throw new DocumentRenderError("document_unreadable", `${what} cannot be read: PDFium error ${api._FPDF_GetLastError()}`);
  const { widthPx, heightPx } = geometry;
  let bitmap = 0;
  try {
    bitmap = api._FPDFBitmap_CreateEx(widthPx, heightPx, FPDFBITMAP_GRAY, buffer, widthPx);
    if (bitmap === 0) throw new Error(`PDFium cannot make a ${widthPx}x${heightPx} page bitmap`);
    api._FPDFBitmap_FillRect(bitmap, 0, 0, widthPx, heightPx, WHITE);
    const rotate = placement.rotate ? ROTATE_COUNTER_CLOCKWISE : 0;
    const { left, top, width, height } = placement;
    api._FPDF_RenderPageBitmap(bitmap, page, left, top, width, height, rotate, FPDF_ANNOT);
    const form = formOf(api, pdf);
    if (form !== 0) {
      api._FORM_OnAfterLoadPage(page, form);
      api._FPDF_FFLDraw(form, bitmap, page, left, top, width, height, rotate, 0);
      api._FORM_OnBeforeClosePage(page, form);
    }
    // Taken after rendering: PDFium may have grown its memory, which replaces HEAPU8.
    const data = api.HEAPU8.subarray(buffer, buffer + widthPx * heightPx);
    const grey = { width: widthPx, height: heightPx, data };
    return { ...grey, tone: contentTone(grey, placement) };
  } finally {
    if (bitmap !== 0) api._FPDFBitmap_Destroy(bitmap);
    api._FPDF_ClosePage(page);
  }
}

function inches(value: number): string {
  return value.toFixed(value < 10 ? 1 : 0);
}

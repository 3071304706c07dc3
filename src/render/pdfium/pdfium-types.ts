/**
 * What the page code (pages/pdf-pages.ts) asks of a PDFium engine, native or WebAssembly
 * (pdfium-engine.ts chooses; native-pdfium.ts and wasm-pdfium.ts implement it).
 */

/** The rectangle a page is drawn into, in pixels of the page bitmap, and its turn (0-3, 90° steps clockwise). */
export interface DrawBox {
  left: number;
  top: number;
  width: number;
  height: number;
  rotate: number;
}

/** A page-sized 8-bit grey buffer an engine renders into. */
export interface PageBuffer {
  /** The pixels: a view that is valid until the engine runs again (the WebAssembly memory may grow). */
  view(): Uint8Array;
  free(): void;
}

export interface PdfiumEngine {
  readonly kind: "native" | "wasm";
  /** A document id (> 0), or `-error` with PDFium's FPDF_GetLastError code (-1 when unknown). The bytes are copied. */
  openDocument(bytes: Uint8Array): number;
  closeDocument(id: number): void;
  pageCount(id: number): number;
  /** The page's size in points with its /Rotate applied, or null when PDFium cannot tell it. */
  pageSize(id: number, index: number): { width: number; height: number } | null;
  allocatePage(widthPx: number, heightPx: number): PageBuffer;
  /**
   * Renders page `index` into `buffer` (filled white first, then the page, then its form fields as
   * printed): 0 when drawn, 1 when given up through the cancel flag, `-error` when the page cannot
   * be loaded.
   */
  renderPage(id: number, index: number, buffer: PageBuffer, widthPx: number, heightPx: number, box: DrawBox, flags: number): number;
}

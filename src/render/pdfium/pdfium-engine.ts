/**
 * PDFium, the PDF renderer of the render stage (pages/pdf-pages.ts), in one of two builds that
 * draw the same pages (ADR 0014: byte for byte on the bench corpus; being two releases of PDFium,
 * they can differ in a few anti-aliased edge pixels, as on one golden page):
 *
 *  - **native** (native-pdfium.ts): the prebuilt libpdfium.so of the npm package
 *    pdfium-node-linux-x64-gnu (chromium/7934), called through Faxline's addon native/pdfium.
 *    About twice as fast as the WebAssembly build. Linux x86-64 with glibc.
 *  - **wasm** (wasm-pdfium.ts): @hyzyla/pdfium, PDFium compiled to WebAssembly; runs everywhere.
 *
 * The config key render.pdfRenderer chooses (FaxImageWorker hands it to its threads, which call
 * choosePdfiumEngine): `native`, `wasm`, or `auto` (the default: native where it loads, else the
 * WebAssembly, as the raster loops fall back to TypeScript). With `native` where it is not there,
 * a node refuses to start (pdfRendererFor), and a render thread where it still cannot load fails
 * its render with the reason, so an operator who asks for it learns why.
 *
 * Each thread has its own engine (PDFium is not thread-safe; each WebAssembly instance, and each
 * native copy, has its own globals), loaded on first use. The engines' interface is in
 * pdfium-types.ts.
 */
import type { PdfiumEngine } from "./pdfium-types.ts";

export type { DrawBox, PageBuffer, PdfiumEngine } from "./pdfium-types.ts";

/** The render result renderPage gives when its thread's cancel flag was raised. */
export const RENDER_CANCELLED = 1;

/** render.pdfRenderer. */
export const PDF_RENDERERS = ["auto", "native", "wasm"] as const;
export type PdfiumChoice = (typeof PDF_RENDERERS)[number];

let chosen: PdfiumChoice = "auto";

let engine: Promise<PdfiumEngine> | null = null;
let cancelFlag: Int32Array | null = null;

/**
 * The flag another thread raises (Atomics.store(flag, 0, 1)) to give up this thread's render: a
 * native page render stops at PDFium's next pause point. The WebAssembly build needs none (a
 * terminated worker stops inside WebAssembly too). Set before the engine loads or after.
 */
export function setPdfiumCancelFlag(flag: Int32Array | null): void {
  cancelFlag = flag;
  void engine?.then((loaded) => applyCancelFlag(loaded), () => {});
}

function applyCancelFlag(loaded: PdfiumEngine): void {
  if ("setCancelFlag" in loaded && typeof loaded.setCancelFlag === "function") (loaded.setCancelFlag as (flag: Int32Array | null) => void)(cancelFlag);
}

/**
 * What render threads with `choice` draw PDFs with, where the native PDFium is unavailable for
 * `unavailable` (native-pdfium.ts: nativePdfiumUnavailable; null: available); an Error for
 * `native` where it is unavailable, so that a node with that setting refuses to start rather than
 * fail every job that has a PDF.
 */
export function pdfRendererFor(choice: PdfiumChoice, unavailable: string | null): string {
  if (choice === "wasm") return "WebAssembly PDFium (render.pdfRenderer wasm)";
  if (unavailable === null) return "native PDFium";
  if (choice === "native") throw new Error(`render.pdfRenderer is native, but ${unavailable}; set it to auto or wasm`);
  return `WebAssembly PDFium (the native one is unavailable: ${unavailable})`;
}

/**
 * Makes this thread use `choice` from now on (render.pdfRenderer in a render thread; the tests
 * render each case with both engines). Documents already open keep theirs.
 */
export function choosePdfiumEngine(choice: PdfiumChoice): void {
  if (choice === chosen) return;
  chosen = choice;
  engine = null;
}

/** This thread's PDFium, loaded on first use. */
export function pdfiumEngine(): Promise<PdfiumEngine> {
  engine ??= loadEngine().then((loaded) => {
    applyCancelFlag(loaded);
    return loaded;
  });
  return engine;
}

async function loadEngine(): Promise<PdfiumEngine> {
  const choice = chosen;
  if (choice !== "wasm") {
    const { loadNativePdfium } = await import("./native-pdfium.ts");
    const native = loadNativePdfium(choice === "native");
    if (native !== null) return native;
  }
  const { loadWasmPdfium } = await import("./wasm-pdfium.ts");
  return loadWasmPdfium();
}

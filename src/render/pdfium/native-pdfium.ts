/**
 * The native PDFium engine (pdfium-engine.ts): libpdfium.so from the npm package
 * pdfium-node-linux-x64-gnu (only its library is used, not its JavaScript), loaded and called by
 * Faxline's addon native/pdfium (scripts/build-native.sh builds it). The addon gives each thread
 * a PDFium of its own, from a copy of the library when another thread holds the file's
 * (native/pdfium/src/pdfium_native.c explains how), and renders straight into a buffer of this
 * thread's memory: no WebAssembly heap, no copy.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { packageRoot } from "../../lib/code-location.ts";
import type { DrawBox, PageBuffer, PdfiumEngine } from "./pdfium-types.ts";

interface PdfiumAddon {
  load(libraryPath: string, tmpDir: string): "file" | "memfd" | "copy";
  openDocument(bytes: Uint8Array): number;
  closeDocument(id: number): void;
  pageCount(id: number): number;
  pageSize(id: number, index: number): [number, number] | null;
  renderPage(id: number, index: number, out: Uint8Array, widthPx: number, heightPx: number, left: number, top: number, width: number, height: number, rotate: number, flags: number): number;
  setCancelFlag(flag: Int32Array | null): void;
  loadedPdfiums(): LoadedPdfiums;
}

/** How many native PDFiums the process has loaded, by origin, and how many threads hold one now. */
export interface LoadedPdfiums {
  file: number;
  memfd: number;
  copy: number;
  inUse: number;
}

const ADDON_RELATIVE = "native/pdfium/build/Release/pdfium_native.node";
const LIBRARY_PACKAGE = "pdfium-node-linux-x64-gnu";
const LIBRARY_IN_PACKAGE = "prebuilds/linux-x64-gnu/libpdfium.so";

/** Why the native engine is not used here, or null when it can be (for `faxline` diagnostics and the tests). */
export function nativePdfiumUnavailable(): string | null {
  if (process.platform !== "linux" || process.arch !== "x64") return `the prebuilt PDFium is for Linux on x86-64, not ${process.platform} on ${process.arch}`;
  if (!existsSync(join(packageRoot(), ADDON_RELATIVE))) return `the addon ${ADDON_RELATIVE} is not built (scripts/build-native.sh)`;
  if (libraryPath() === null) return `the package ${LIBRARY_PACKAGE} is not installed`;
  return null;
}

function libraryPath(): string | null {
  try {
    const file = join(dirname(createRequire(import.meta.url).resolve(`${LIBRARY_PACKAGE}/package.json`)), LIBRARY_IN_PACKAGE);
    return existsSync(file) ? file : null;
  } catch {
    return null;
  }
}

export interface NativePdfiumEngine extends PdfiumEngine {
  /** Where this thread's PDFium was loaded from: the library file, an in-memory copy, a copy on disk. */
  readonly origin: "file" | "memfd" | "copy";
  loadedPdfiums(): LoadedPdfiums;
  setCancelFlag(flag: Int32Array | null): void;
}

/**
 * This thread's native engine; null when it cannot be used here and `required` is false (the
 * caller uses the WebAssembly build), an Error naming the cause when `required` is true.
 */
export function loadNativePdfium(required: boolean): NativePdfiumEngine | null {
  const unavailable = nativePdfiumUnavailable();
  if (unavailable !== null) {
    if (required) throw new Error(`render.pdfRenderer is native, but ${unavailable}`);
    return null;
  }
  let addon: PdfiumAddon;
  let origin: NativePdfiumEngine["origin"];
  try {
    addon = createRequire(import.meta.url)(join(packageRoot(), ADDON_RELATIVE)) as PdfiumAddon;
    origin = addon.load(libraryPath()!, tmpdir());
  } catch (err) {
    // An addon or library that does not load here (another C library, a copy that cannot be mapped).
    if (required) throw new Error(`render.pdfRenderer is native, but ${(err as Error).message}`);
    return null;
  }
  return {
    kind: "native",
    origin,
    loadedPdfiums: () => addon.loadedPdfiums(),
    openDocument: (bytes) => addon.openDocument(bytes),
    closeDocument: (id) => addon.closeDocument(id),
    pageCount: (id) => addon.pageCount(id),
    pageSize(id, index) {
      const size = addon.pageSize(id, index);
      return size === null ? null : { width: size[0], height: size[1] };
    },
    allocatePage(widthPx, heightPx): PageBuffer {
      const pixels = new Uint8Array(widthPx * heightPx);
      return { view: () => pixels, free: () => {} };
    },
    renderPage(id, index, buffer, widthPx, heightPx, box: DrawBox, flags) {
      return addon.renderPage(id, index, buffer.view(), widthPx, heightPx, box.left, box.top, box.width, box.height, box.rotate, flags);
    },
    setCancelFlag: (flag) => addon.setCancelFlag(flag),
  };
}

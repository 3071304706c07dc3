/**
 * The PDFium engines a test body is looped over (src/render/pdfium/pdfium-engine.ts), as Kysely
 * loops its tests over every dialect: the WebAssembly build everywhere, the native one where it
 * loads (Linux x86-64 with the addon built). Where the native one cannot load, its suite is
 * reported as skipped with the reason, not left out silently.
 */
import { before, describe } from "node:test";
import { choosePdfiumEngine } from "../../src/render/pdfium/pdfium-engine.ts";
import { nativePdfiumUnavailable } from "../../src/render/pdfium/native-pdfium.ts";

export type PdfiumEngineName = "native" | "wasm";

export const PDFIUM_ENGINES: readonly PdfiumEngineName[] = ["native", "wasm"];

/** Runs `body` as a suite once per engine, with this thread's PDFium chosen for it. */
export function describeEachPdfium(name: string, body: (engine: PdfiumEngineName) => void): void {
  for (const engine of PDFIUM_ENGINES) {
    const skip = engine === "native" ? (nativePdfiumUnavailable() ?? false) : false;
    describe(`${name} (${engine} PDFium)`, { skip }, () => {
      before(() => choosePdfiumEngine(engine));
      body(engine);
    });
  }
}

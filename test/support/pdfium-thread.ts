/**
 * A worker thread for test/unit/render-pdfium-engines.test.ts: renders every page of the PDF it
 * is sent with the native PDFium and answers with the pages' digests, where its PDFium came from
 * and the process's count of loaded PDFiums. It stays until terminated, so that several hold a
 * PDFium at once.
 */
import { createHash } from "node:crypto";
import { parentPort } from "node:worker_threads";
import { openPdfDocument } from "../../src/render/pages/pdf-pages.ts";
import { pageGeometry } from "../../src/render/pages/grey-page.ts";
import { choosePdfiumEngine, pdfiumEngine } from "../../src/render/pdfium/pdfium-engine.ts";
import type { NativePdfiumEngine } from "../../src/render/pdfium/native-pdfium.ts";

const port = parentPort!;
choosePdfiumEngine("native");
port.on("message", async (bytes: Uint8Array) => {
  const engine = (await pdfiumEngine()) as NativePdfiumEngine;
  const pdf = await openPdfDocument({ name: "thread.pdf", bytes, charset: null }, pageGeometry("A4", "HIGH"), { maxPages: 100, maxSourcePixels: 200_000_000, converterTimeoutMs: 10_000 });
  const digests: string[] = [];
  for (let index = 0; index < pdf.pageCount; index++) digests.push(pdf.usePage(index, (page) => createHash("sha256").update(page.data).digest("hex")));
  pdf.close();
  port.postMessage({ origin: engine.origin, digests, loaded: engine.loadedPdfiums() });
});

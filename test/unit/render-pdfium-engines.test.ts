/**
 * The two PDFium engines (src/render/pdfium/): the native one gives every thread a PDFium of its
 * own and draws the same pixels as the WebAssembly one; threads that end give theirs back for the
 * next to reuse; a raised cancel flag gives up a native render, also one in a render worker that
 * FaxImageWorker ends at its time limit. The other render tests loop over both engines
 * (test/support/pdfium-engines.ts); these are about the native engine's own machinery, and are
 * skipped, with the reason, where it cannot load.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { PDFDocument, PDFName, StandardFonts, degrees, rgb } from "pdf-lib";
import sharp from "sharp";
import { FaxImageWorker } from "../../src/render/fax-image/fax-image-worker.ts";
import { pageGeometry, type RenderLimits } from "../../src/render/pages/grey-page.ts";
import { openPdfDocument } from "../../src/render/pages/pdf-pages.ts";
import { nativePdfiumUnavailable, type NativePdfiumEngine } from "../../src/render/pdfium/native-pdfium.ts";
import { choosePdfiumEngine, pdfiumEngine, setPdfiumCancelFlag } from "../../src/render/pdfium/pdfium-engine.ts";
import type { FaxJobRenderInput } from "../../src/render/render-fax-job.ts";

const LIMITS: RenderLimits = { maxPages: 100, maxSourcePixels: 200_000_000, converterTimeoutMs: 10_000 };
const HIGH = pageGeometry("A4", "HIGH");

/** Six pages: text, grey boxes, a JPEG photo, a page turned by /Rotate, a landscape page. */
async function mixedPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const width = 320;
  const height = 200;
  const pixels = Buffer.alloc(width * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) pixels[y * width + x] = (x * 255) / width * 0.6 + Math.sin(y / 9) * 40 + 60;
  const photo = await doc.embedJpg(await sharp(pixels, { raw: { width, height, channels: 1 } }).jpeg().toBuffer());
  for (let n = 0; n < 6; n++) {
    const page = doc.addPage(n === 5 ? [842, 595] : [595, 842]);
    if (n === 4) page.setRotation(degrees(90));
    for (let line = 0; line < 30; line++) page.drawText(`Page ${n + 1}, line ${line + 1}: the quick brown fox jumps over the lazy dog 0123456789`, { x: 50, y: 780 - line * 14, size: 9 + (line % 4), font });
    page.drawRectangle({ x: 50, y: 250, width: 200, height: 60, color: rgb(0.8, 0.8, 0.8), borderColor: rgb(0, 0, 0), borderWidth: 1 });
    if (n % 2 === 0) page.drawImage(photo, { x: 280, y: 200, width: 260, height: 160 });
  }
  return doc.save();
}

/** One page of `fills` half-transparent fills of the whole page: slow to draw, many pause points. */
async function heavyPdf(fills: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  page.node.setExtGState(PDFName.of("Half"), doc.context.obj({ Type: "ExtGState", ca: 0.5 }));
  const operators = Array.from({ length: fills }, (_, n) => `/Half gs ${(n % 10) / 10} g 0 0 595 842 re f\n`).join("");
  page.node.set(PDFName.of("Contents"), doc.context.register(doc.context.flateStream(operators)));
  return doc.save();
}

function jobInput(pdf: Uint8Array): FaxJobRenderInput {
  return {
    documents: [{ name: "document.pdf", bytes: pdf }],
    paperFormat: "A4",
    resolution: "HIGH",
    header: null,
    cover: null,
    overlay: null,
    recipients: [{ id: "r1", number: "+4912345", properties: {} }],
    toneMode: "AUTO",
    limits: LIMITS,
    preflight: { lineBitsPerSecond: 14_400, largePageSeconds: 300 },
  };
}

async function digestsWith(engine: "native" | "wasm", bytes: Uint8Array): Promise<string[]> {
  choosePdfiumEngine(engine);
  const pdf = await openPdfDocument({ name: "mixed.pdf", bytes }, HIGH, LIMITS);
  try {
    return Array.from({ length: pdf.pageCount }, (_, index) => pdf.usePage(index, (page) => createHash("sha256").update(page.data).digest("hex")));
  } finally {
    pdf.close();
  }
}

interface ThreadAnswer {
  origin: string;
  digests: string[];
  loaded: { file: number; memfd: number; copy: number; inUse: number };
}

function startThread(): Worker {
  const entry = pathToFileURL(new URL("../support/pdfium-thread.ts", import.meta.url).pathname).href;
  return new Worker(`import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); })`, { eval: true });
}

function ask(worker: Worker, bytes: Uint8Array): Promise<ThreadAnswer> {
  return new Promise((resolve, reject) => {
    worker.once("message", resolve).once("error", reject);
    worker.postMessage(bytes);
  });
}

async function mainEngine(): Promise<NativePdfiumEngine> {
  choosePdfiumEngine("native");
  return (await pdfiumEngine()) as NativePdfiumEngine;
}

const skip = nativePdfiumUnavailable() ?? false;

describe("the native PDFium", { skip }, () => {
  let mixed: Uint8Array;
  before(async () => {
    mixed = await mixedPdf();
  });
  after(() => {
    setPdfiumCancelFlag(null);
    choosePdfiumEngine("auto");
  });

  it("draws the same pixels as the WebAssembly PDFium (text, grey boxes, a photo, turned and landscape pages)", async () => {
    const native = await digestsWith("native", mixed);
    const wasm = await digestsWith("wasm", mixed);
    assert.equal(native.length, 6);
    assert.deepEqual(native, wasm);
    assert.equal(new Set(native).size, 6, "six different pages");
  });

  it("gives each thread a PDFium of its own: three threads render at once, each as this thread does alone", async () => {
    const expected = await digestsWith("native", mixed);
    const workers = [startThread(), startThread(), startThread()];
    try {
      const answers = await Promise.all(workers.map((worker) => ask(worker, mixed)));
      for (const answer of answers) assert.deepEqual(answer.digests, expected);
      const main = await mainEngine();
      // This thread holds the library file's; the others each a copy of their own.
      assert.equal(main.origin, "file");
      assert.deepEqual(answers.map((answer) => answer.origin).sort(), ["memfd", "memfd", "memfd"]);
      assert.equal(main.loadedPdfiums().inUse, 4);
    } finally {
      await Promise.all(workers.map((worker) => worker.terminate()));
    }
  });

  it("threads that end give their PDFium back, and new threads take those rather than load more", async () => {
    const main = await mainEngine();
    const loaded = main.loadedPdfiums();
    assert.equal(loaded.inUse, 1, "only this thread holds one now");
    const total = loaded.file + loaded.memfd + loaded.copy;
    assert.ok(total >= 4, `the three ended threads' PDFiums are still loaded (${total})`);
    const workers = [startThread(), startThread(), startThread()];
    try {
      const answers = await Promise.all(workers.map((worker) => ask(worker, mixed)));
      const now = answers[2]!.loaded;
      assert.equal(now.file + now.memfd + now.copy, total, "no new copy loaded");
      assert.equal(main.loadedPdfiums().inUse, 4);
    } finally {
      await Promise.all(workers.map((worker) => worker.terminate()));
    }
  });

  it("a raised cancel flag gives up a render at PDFium's next pause point; lowered, the page renders", async () => {
    const heavy = await heavyPdf(2000);
    const flag = new Int32Array(new SharedArrayBuffer(4));
    await mainEngine();
    setPdfiumCancelFlag(flag);
    const pdf = await openPdfDocument({ name: "heavy.pdf", bytes: heavy }, HIGH, LIMITS);
    try {
      Atomics.store(flag, 0, 1);
      const started = performance.now();
      assert.throws(() => pdf.renderPage(0), /rendering heavy\.pdf was given up: the render was cancelled/);
      const cancelledMs = performance.now() - started;
      Atomics.store(flag, 0, 0);
      const drawStarted = performance.now();
      const page = pdf.renderPage(0);
      const drawnMs = performance.now() - drawStarted;
      assert.ok(page.data.some((grey) => grey < 255), "the page is drawn");
      assert.ok(cancelledMs * 4 < drawnMs, `given up (${cancelledMs.toFixed(1)} ms) long before a whole render (${drawnMs.toFixed(1)} ms)`);
    } finally {
      pdf.close();
      setPdfiumCancelFlag(null);
    }
  });

  it("render.pdfRenderer reaches the render worker and its page helper: wasm loads no native PDFium, native one each; the same fax image", async () => {
    const main = await mainEngine();
    const images: Buffer[] = [];
    for (const pdfRenderer of ["wasm", "native"] as const) {
      const worker = new FaxImageWorker({ timeoutMs: 60_000, memoryLimitMb: 512, pageThreads: 2, pdfRenderer });
      try {
        const outcome = await worker.render(jobInput(mixed));
        assert.ok(outcome.ok && outcome.result.ok, JSON.stringify(outcome).slice(0, 300));
        images.push(outcome.result.images[0]!.tiff);
        // The worker and its helper keep their PDFium while they live.
        assert.equal(main.loadedPdfiums().inUse, pdfRenderer === "wasm" ? 1 : 3, pdfRenderer);
      } finally {
        await worker.close();
      }
    }
    assert.ok(images[0]!.equals(images[1]!), "the same TIFF");
  });

  it("a render worker ended at its time limit stops its native render and gives its PDFium back at once", async () => {
    const main = await mainEngine();
    const heavy = await heavyPdf(60_000);
    const worker = new FaxImageWorker({ timeoutMs: 500, memoryLimitMb: 512 });
    try {
      const outcome = await worker.render(jobInput(heavy));
      assert.deepEqual(outcome, { ok: false, kind: "timeout", timeoutMs: 500 });
      // The page takes many seconds to draw: its PDFium comes back only if the render stopped.
      const deadline = performance.now() + 3_000;
      while (main.loadedPdfiums().inUse > 1 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(main.loadedPdfiums().inUse, 1, "the render worker's PDFium was given back");
    } finally {
      await worker.close();
    }
  });
});

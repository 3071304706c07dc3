/**
 * PDFs for the native PDFium's tests (test/unit/render-pdfium-engines.test.ts and the process it
 * starts, test/support/pdfium-process.ts), made with pdf-lib and sharp.
 */
import { PDFDocument, PDFName, StandardFonts, degrees, rgb } from "pdf-lib";
import sharp from "sharp";
import type { RenderLimits } from "../../src/render/pages/grey-page.ts";
import type { FaxJobRenderInput } from "../../src/render/render-fax-job.ts";

export const LIMITS: RenderLimits = { maxPages: 100, maxSourcePixels: 200_000_000, converterTimeoutMs: 10_000 };

/** Six pages: text, grey boxes, a JPEG photo, a page turned by /Rotate, a landscape page. */
export async function mixedPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const width = 320;
  const height = 200;
  const pixels = Buffer.alloc(width * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) pixels[y * width + x] = ((x * 255) / width) * 0.6 + Math.sin(y / 9) * 40 + 60;
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
export async function heavyPdf(fills: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  page.node.setExtGState(PDFName.of("Half"), doc.context.obj({ Type: "ExtGState", ca: 0.5 }));
  const operators = Array.from({ length: fills }, (_, n) => `/Half gs ${(n % 10) / 10} g 0 0 595 842 re f\n`).join("");
  page.node.set(PDFName.of("Contents"), doc.context.register(doc.context.flateStream(operators)));
  return doc.save();
}

/** A job of one PDF, A4 HIGH, one recipient, nothing drawn on it. */
export function jobInput(pdf: Uint8Array): FaxJobRenderInput {
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

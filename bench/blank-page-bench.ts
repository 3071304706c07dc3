/**
 * `npm run bench:blank-pages` — what deciding whether a page is blank costs
 * (src/render/preflight/blank-page.ts, used for jobs with suppressBlankPages), per page, on the
 * pages of bench:render's corpus (bench/render-corpus.ts: a letter, an invoice, a scanned letter,
 * a photo, the 20-page report) and on the pages the detector is for: an empty page, a page with
 * only "Page 2" in 10-point Helvetica at the foot, and a 300 dpi JPEG scan of an empty sheet with
 * 60 specks of dust.
 *
 * Each page is rendered and made bilevel once, as a job's first pass does (documentPages, then
 * preparePage with a header to come, so that the pixels are kept), and unpacked. Then
 * `isBlankPage` (which stops at the first mark of content) is timed on it: rounds of as many
 * calls as take at least 20 ms, 5 rounds, the median round's time per call. For scale, the
 * table also gives the time the page took to render and make bilevel (the first pass, once, so
 * only a rough figure) and the detector's share of it.
 *
 * Options: --resolution HIGH|LOW|both (both)  --seed N (corpus seed)
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, release, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { performance } from "node:perf_hooks";
import { PDFDocument, StandardFonts } from "pdf-lib";
import sharp from "sharp";
import { generateCorpus, seededRandom } from "./render-corpus.ts";
import { documentPages } from "../src/render/pages/document-pages.ts";
import { pageGeometry, type DocumentInput, type Resolution } from "../src/render/pages/grey-page.ts";
import { preparePage } from "../src/render/prepare-page.ts";
import { unpackBilevel } from "../src/render/fax-image/packed-bilevel.ts";
import { blankPageRule, inspectBlankPage, isBlankPage } from "../src/render/preflight/blank-page.ts";
import { rasterKernels } from "../src/render/native-raster.ts";

const { values } = parseArgs({ options: { resolution: { type: "string", default: "both" }, seed: { type: "string", default: "20261121" } } });
const resolutions: Resolution[] = values.resolution === "both" ? ["HIGH", "LOW"] : [values.resolution as Resolution];
const LIMITS = { maxPages: 500, maxSourcePixels: 200_000_000, converterTimeoutMs: 120_000 };

/** The pages the detector is for: empty, a page number alone, a scanned empty sheet. */
async function blankishDocuments(seed: number): Promise<{ name: string; doc: DocumentInput }[]> {
  const empty = await PDFDocument.create();
  empty.addPage([595.28, 841.89]);
  const pageNumber = await PDFDocument.create();
  pageNumber.addPage([595.28, 841.89]).drawText("Page 2", { x: 280, y: 40, size: 10, font: await pageNumber.embedFont(StandardFonts.Helvetica) });
  const width = 2480;
  const height = 3508;
  const pixels = new Uint8Array(width * height);
  const next = seededRandom(seed);
  for (let i = 0; i < pixels.length; i++) pixels[i] = Math.min(255, Math.round(244 + (next() + next() + next() - 1.5) * 10));
  for (let s = 0; s < 60; s++) {
    const cx = 100 + Math.floor(next() * (width - 200));
    const cy = 100 + Math.floor(next() * (height - 200));
    for (let y = -2; y <= 2; y++) for (let x = -2; x <= 2; x++) if (x * x + y * y <= 4) pixels[(cy + y) * width + cx + x] = 60;
  }
  const jpeg = await sharp(pixels, { raw: { width, height, channels: 1 } }).jpeg({ quality: 75 }).toBuffer();
  const scan = await PDFDocument.create();
  scan.addPage([595.28, 841.89]).drawImage(await scan.embedJpg(jpeg), { x: 0, y: 0, width: 595.28, height: 841.89 });
  return [
    { name: "empty page", doc: { name: "empty.pdf", bytes: await empty.save() } },
    { name: '"Page 2" alone', doc: { name: "page-number.pdf", bytes: await pageNumber.save() } },
    { name: "scanned empty sheet", doc: { name: "sheet.pdf", bytes: await scan.save() } },
  ];
}

/** Median time per call of `fn`, microseconds: 5 rounds of at least 20 ms each. */
function microsPerCall(fn: () => void): number {
  let calls = 1;
  for (;;) {
    const start = performance.now();
    for (let i = 0; i < calls; i++) fn();
    if (performance.now() - start >= 20) break;
    calls *= 2;
  }
  const rounds: number[] = [];
  for (let r = 0; r < 5; r++) {
    const start = performance.now();
    for (let i = 0; i < calls; i++) fn();
    rounds.push(((performance.now() - start) * 1000) / calls);
  }
  return rounds.sort((a, b) => a - b)[2]!;
}

const dir = mkdtempSync(join(tmpdir(), "faxline-blank-bench-"));
try {
  const corpus = (await generateCorpus(dir, Number(values.seed))).filter((item) => item.name !== "long");
  const documents = [
    ...corpus.map((item) => ({ name: item.name, doc: { name: `${item.name}.pdf`, bytes: readFileSync(item.pdf) } as DocumentInput })),
    ...(await blankishDocuments(Number(values.seed) + 7)),
  ];
  console.log(`bench:blank-pages — ${new Date().toISOString()}`);
  console.log(`machine: ${cpus()[0]?.model ?? "?"}, ${cpus().length} vCPUs, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Linux ${release()}, Node ${process.version}, raster kernels ${rasterKernels()}`);
  console.log(`load average before: ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  for (const resolution of resolutions) {
    const geometry = pageGeometry("A4", resolution);
    const rule = blankPageRule(geometry);
    console.log(`\nA4 ${resolution} (${geometry.widthPx} x ${geometry.heightPx})`);
    console.log("| document | pages | blank | detector µs/page (median, min–max over pages) | first pass ms/page | detector share |");
    console.log("|---|---:|---:|---:|---:|---:|");
    for (const { name, doc } of documents) {
      const pages: { pixels: Uint8Array; width: number; height: number }[] = [];
      const start = performance.now();
      for await (const grey of documentPages(doc, geometry, LIMITS)) {
        const prepared = preparePage(grey, { drawsLater: true, bandRows: geometry.headerBandPx, toneMode: "AUTO", blankPages: null });
        if (prepared.kind !== "packed") throw new Error("expected a packed page");
        pages.push({ pixels: unpackBilevel(prepared.packed), width: prepared.packed.width, height: prepared.packed.height });
      }
      const firstPassMs = (performance.now() - start) / pages.length;
      const times = pages.map((page) => microsPerCall(() => isBlankPage(page.pixels, page, rule))).sort((a, b) => a - b);
      const blank = pages.filter((page) => inspectBlankPage(page.pixels, page, rule).blank).length;
      const median = times[Math.floor(times.length / 2)]!;
      const range = times.length > 1 ? ` (${times[0]!.toFixed(0)}–${times[times.length - 1]!.toFixed(0)})` : "";
      console.log(`| ${name} | ${pages.length} | ${blank} | ${median.toFixed(0)}${range} | ${firstPassMs.toFixed(1)} | ${((median / 1000 / firstPassMs) * 100).toFixed(2)} % |`);
    }
  }
  console.log(`\nload average after: ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * `npm run bench:render` — how fast Faxline renders documents to fax images, how large the pages
 * come out, and how that compares with Ghostscript's tiffg4 device on the same PDFs.
 *
 * The corpus (bench/render-corpus.ts) is generated from a seed: a one-page letter, a two-page
 * invoice with grey boxes, a scanned letter (PDF, and the same pixels as PNG), a photo (PDF, and
 * the same picture as JPEG) and a 20-page report; "corpus" is all five PDFs in one job.
 *
 * For each of them, at A4 HIGH (204 x 196 dpi) and A4 LOW (204 x 98):
 *
 *  - **Faxline**: `renderFaxJob` (src/render/render-fax-job.ts) with the documents, no header,
 *    cover or overlay, one recipient — the whole render stage, called in-process (not through the
 *    node's worker thread). One warm-up run, then `--reps` runs; pages/s from the median run. Each
 *    document is measured in a child process of its own (this script with `--child`), so that its
 *    peak memory is its own: RSS is sampled every 5 ms with `process.memoryUsage.rss()` during
 *    the runs (the maximum is shown), and the kernel's peak (`process.resourceUsage().maxRSS`,
 *    which also sees the moments the event loop is blocked and sampling cannot run) beside it.
 *  - **Ghostscript**: `gs -q -dSAFER -dBATCH -dNOPAUSE -sDEVICE=tiffg4 -r204x196 -g1728x2292
 *    -dPDFFitPage -sOutputFile=out.tif file.pdf…` (LOW: `-r204x98 -g1728x1146`), one process per
 *    run, wall clock from spawn to exit (process start included, as gs is used that way), one
 *    warm-up run, then `--reps` runs; the median is shown. Peak RSS is measured by GNU time
 *    (`/usr/bin/time -f %M`, Debian package `time`); without it, by polling the child's
 *    `/proc/PID/status` VmHWM every 2 ms (a lower bound: the last poll may precede the peak).
 *    `spawnSync` returns no resource usage, and Node has no getrusage(RUSAGE_CHILDREN).
 *
 * Both outputs are then decoded (sharp) and measured the same way: KB per page (G4 data from the
 * TIFF's strip byte counts; the file size is in the details), the share of black pixels, and the
 * time on the line per page from the page preflight (src/render/preflight/page-preflight.ts:
 * the worse of T.4 MH without ECM and MMR with ECM, at 14 400 bit/s).
 *
 * Options: --reps N (5)  --keep DIR (write the corpus, every TIFF, and PNGs of page 1 of each —
 *          a crop at full resolution and the whole page at half size, Faxline and gs side by
 *          side — into DIR)  --seed N (corpus seed)
 *          --resolution HIGH|LOW|both (both)  --only name,name (letter, invoice, scan, scan-png,
 *          photo, photo-jpeg, report, long, corpus)  --page-threads N (threads for one document's pages;
 *          0, the default: one per core)  --whole-process name,name (long: documents also timed as whole
 *          `faxline render` processes, compiled, against gs; "" for none)
 *          --pdf-renderer auto|native|wasm (render.pdfRenderer: which PDFium draws the PDFs; auto)
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, mkdirSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, platform, release, tmpdir, totalmem } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { performance } from "node:perf_hooks";
import sharp from "sharp";
import { PDFDocument } from "pdf-lib";
import { generateCorpus, type CorpusItem } from "./render-corpus.ts";
import { modifiedHuffmanBits, preflightPage } from "../src/render/preflight/page-preflight.ts";
import { readTiffPages } from "../src/render/fax-image/tiff-structure.ts";
import { rasterKernels } from "../src/render/native-raster.ts";
import { choosePdfiumEngine, pdfiumEngine, PDF_RENDERERS, type PdfiumChoice } from "../src/render/pdfium/pdfium-engine.ts";

type Resolution = "HIGH" | "LOW";
const GEOMETRY: Record<Resolution, { height: number; yDpi: number; headerBandPx: number }> = {
  HIGH: { height: 2292, yDpi: 196, headerBandPx: 49 },
  LOW: { height: 1146, yDpi: 98, headerBandPx: 25 },
};
const LINE_BPS = 14_400;
const SELF = fileURLToPath(import.meta.url);
const ROOT = dirname(dirname(SELF));

// ---------------------------------------------------------------------------------------------
// Child: renders one case in-process and reports times and memory as one JSON line.

interface ChildRequest {
  documents: { name: string; path: string }[];
  resolution: Resolution;
  reps: number;
  /** Threads sharing a document's pages (render.pageThreads; 1: none). */
  pageThreads: number;
  /** Where to write the TIFF of the last run. */
  out: string;
  /** render.pdfRenderer. */
  pdfRenderer: PdfiumChoice;
}

interface ChildResult {
  pages: number;
  firstRunSeconds: number;
  seconds: number[];
  tiffBytes: number;
  /** RSS after loading the modules and reading the documents, before the first render, bytes. */
  startRss: number;
  /** Largest RSS sampled during the runs, bytes. */
  sampledPeakRss: number;
  /** The kernel's peak RSS of the child process, bytes. */
  maxRss: number;
  /** Preflight warnings of the last run, "page N …". */
  warnings: string[];
}

async function child(request: ChildRequest): Promise<ChildResult> {
  const { renderFaxJob } = await import("../src/render/render-fax-job.ts");
  const { PageHelperPool } = await import("../src/render/page-helpers/page-helper-pool.ts");
  choosePdfiumEngine(request.pdfRenderer);
  const pageHelpers = new PageHelperPool({ threads: request.pageThreads, memoryLimitMb: 1536, pdfRenderer: request.pdfRenderer });
  const documents = request.documents.map((d) => ({ name: d.name, bytes: readFileSync(d.path) }));
  const render = () =>
    renderFaxJob({
      documents,
      paperFormat: "A4",
      resolution: request.resolution,
      header: null,
      cover: null,
      overlay: null,
      recipients: [{ id: "bench", number: "+4989123456", properties: {} }],
      limits: { maxPages: 500, maxSourcePixels: 200_000_000, converterTimeoutMs: 120_000 },
    }, { pageHelpers });
  const startRss = process.memoryUsage.rss();
  let sampledPeakRss = startRss;
  const sample = () => {
    sampledPeakRss = Math.max(sampledPeakRss, process.memoryUsage.rss());
  };
  const sampler = setInterval(sample, 5);
  try {
    const run = async () => {
      const t0 = performance.now();
      const result = await render();
      const seconds = (performance.now() - t0) / 1000;
      sample();
      if (!result.ok) throw new Error(`renderFaxJob refused ${result.documentName}: ${result.reasonCode}: ${result.message}`);
      const image = result.images[0];
      if (image === undefined) throw new Error("renderFaxJob returned no image");
      return { seconds, image };
    };
    const first = await run();
    const seconds: number[] = [];
    let last = first.image;
    for (let i = 0; i < request.reps; i++) {
      const r = await run();
      seconds.push(r.seconds);
      last = r.image;
    }
    writeFileSync(request.out, last.tiff);
    const warnings = last.preflight.flatMap((p, i) => p.warnings.map((w) => `page ${i + 1} ${w}`));
    return {
      pages: last.pageSizes.length,
      firstRunSeconds: first.seconds,
      seconds,
      tiffBytes: last.tiff.length,
      startRss,
      sampledPeakRss,
      maxRss: process.resourceUsage().maxRSS * 1024,
      warnings,
    };
  } finally {
    clearInterval(sampler);
    await pageHelpers.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Ghostscript

const HAVE_GNU_TIME = existsSync("/usr/bin/time") && spawnSync("/usr/bin/time", ["-f", "%M", "true"], { encoding: "utf8" }).status === 0;

function gsArgs(resolution: Resolution, out: string, files: string[]): string[] {
  const g = GEOMETRY[resolution];
  return ["-q", "-dSAFER", "-dBATCH", "-dNOPAUSE", "-sDEVICE=tiffg4", `-r204x${g.yDpi}`, `-g1728x${g.height}`, "-dPDFFitPage", `-sOutputFile=${out}`, ...files];
}

/** One gs process: wall clock from spawn to exit, and its peak RSS in bytes. */
function runGs(args: string[], work: string): Promise<{ seconds: number; peakRss: number }> {
  return runProcess("gs", args, work);
}

/** The compiled CLI (npm run build), for the whole-process comparison. */
const FAXLINE_BIN = join(ROOT, "bin", "faxline.js");

/** One process: wall clock from spawn to exit, and its peak RSS in bytes. */
function runProcess(program: string, args: string[], work: string, env: NodeJS.ProcessEnv = process.env): Promise<{ seconds: number; peakRss: number }> {
  return new Promise((resolve, reject) => {
    const timeFile = join(work, "process-time.txt");
    const [command, argv] = HAVE_GNU_TIME ? ["/usr/bin/time", ["-f", "%M", "-o", timeFile, program, ...args]] : [program, args];
    let polledPeak = 0;
    let stderr = "";
    const t0 = performance.now();
    const proc = spawn(command as string, argv as string[], { stdio: ["ignore", "ignore", "pipe"], env });
    proc.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const poll = HAVE_GNU_TIME
      ? null
      : setInterval(() => {
          try {
            const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${proc.pid}/status`, "utf8"));
            if (hwm) polledPeak = Math.max(polledPeak, Number(hwm[1]) * 1024);
          } catch {
            // the process has just exited
          }
        }, 2);
    proc.on("error", reject);
    proc.on("exit", (code) => {
      const seconds = (performance.now() - t0) / 1000;
      if (poll) clearInterval(poll);
      if (code !== 0) return reject(new Error(`${program} exited with ${code}: ${stderr.trim()}`));
      const peakRss = HAVE_GNU_TIME ? Number(readFileSync(timeFile, "utf8").trim().split("\n").at(-1)) * 1024 : polledPeak;
      resolve({ seconds, peakRss });
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Output analysis: the same measures for both TIFFs.

interface Analysis {
  pages: number;
  fileBytes: number;
  g4Bytes: number;
  mhBytes: number;
  lineSeconds: number;
  blackRatios: number[];
}

async function analyse(tiff: Buffer, resolution: Resolution): Promise<Analysis> {
  const pages = readTiffPages(tiff);
  let g4Bytes = 0;
  let mhBits = 0;
  let lineSeconds = 0;
  const blackRatios: number[] = [];
  for (const page of pages) {
    const { data, info } = await sharp(tiff, { page: page.index }).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
    const pixels = new Uint8Array(data.buffer, data.byteOffset, data.length);
    const size = { width: info.width, height: info.height };
    const preflight = preflightPage(pixels, size, page.encodedBytes, { headerBandPx: GEOMETRY[resolution].headerBandPx, lineBitsPerSecond: LINE_BPS, largePageSeconds: 90 });
    g4Bytes += page.encodedBytes;
    mhBits += modifiedHuffmanBits(pixels, size);
    lineSeconds += preflight.estimatedSeconds;
    blackRatios.push(preflight.blackRatio);
  }
  return { pages: pages.length, fileBytes: tiff.length, g4Bytes, mhBytes: mhBits / 8, lineSeconds, blackRatios };
}

/** PNG of a crop of page 1 (LOW pages doubled in height, so that letters keep their shape). */
async function cropPng(tiff: Buffer, resolution: Resolution, at: { x: number; y: number }): Promise<Buffer> {
  const g = GEOMETRY[resolution];
  const width = 1000;
  const height = resolution === "HIGH" ? 1000 : 500;
  const left = Math.max(0, Math.min(1728 - width, Math.round(at.x * 1728 - width / 2)));
  const top = Math.max(0, Math.min(g.height - height, Math.round(at.y * g.height - height / 2)));
  let image = sharp(tiff, { page: 0 }).extractChannel(0).extract({ left, top, width, height });
  if (resolution === "LOW") image = sharp(await image.raw().toBuffer(), { raw: { width, height, channels: 1 } }).resize(width, 2 * height, { kernel: "nearest", fit: "fill" });
  return image.png().toBuffer();
}

/** PNG of all of page 1 at half width (scaled with averaging, so dither and halftone show as grey). */
async function overviewPng(tiff: Buffer, resolution: Resolution): Promise<Buffer> {
  const height = resolution === "HIGH" ? GEOMETRY.HIGH.height / 2 : GEOMETRY.LOW.height;
  return sharp(tiff, { page: 0 }).extractChannel(0).resize(864, height, { fit: "fill" }).png().toBuffer();
}

async function sideBySide(left: Buffer, right: Buffer): Promise<Buffer> {
  const l = await sharp(left).metadata();
  const r = await sharp(right).metadata();
  const gap = 24;
  return sharp({ create: { width: (l.width ?? 0) + gap + (r.width ?? 0), height: Math.max(l.height ?? 0, r.height ?? 0), channels: 3, background: "#c03030" } })
    .composite([
      { input: left, left: 0, top: 0 },
      { input: right, left: (l.width ?? 0) + gap, top: 0 },
    ])
    .png()
    .toBuffer();
}

// ---------------------------------------------------------------------------------------------
// Cases and the report

interface Case {
  name: string;
  label: string;
  documents: { name: string; path: string }[];
  /** PDFs for gs; null where gs has no counterpart (image files). */
  gsFiles: string[] | null;
  /** Where on page 1 the crop is centred, as fractions of the page. */
  crop: { x: number; y: number };
}

function casesOf(items: CorpusItem[]): Case[] {
  const topLeft = { x: 0.29, y: 0.22 };
  const cases: Case[] = [];
  for (const item of items) {
    const crop = item.name === "photo" ? { x: 0.4, y: 0.5 } : item.name === "scan" ? { x: 0.29, y: 0.3 } : topLeft;
    cases.push({ name: item.name, label: `${item.name} (PDF, ${item.pages} p)`, documents: [{ name: basename(item.pdf), path: item.pdf }], gsFiles: [item.pdf], crop });
    if (item.image !== null) {
      const ext = item.image.split(".").at(-1)!.toLowerCase();
      const kind = ext === "jpg" ? "jpeg" : ext;
      cases.push({ name: `${item.name}-${kind}`, label: `${item.name} (${kind.toUpperCase()}, 1 p)`, documents: [{ name: basename(item.image), path: item.image }], gsFiles: null, crop });
    }
  }
  const inCorpus = items.filter((i) => i.name !== "long");
  const pages = inCorpus.reduce((s, i) => s + i.pages, 0);
  cases.push({
    name: "corpus",
    label: `corpus (${inCorpus.length} PDFs, ${pages} p)`,
    documents: inCorpus.map((i) => ({ name: basename(i.pdf), path: i.pdf })),
    gsFiles: inCorpus.map((i) => i.pdf),
    crop: topLeft,
  });
  return cases;
}

interface Row {
  c: Case;
  fax: ChildResult;
  faxOut: Analysis;
  gs: { seconds: number[]; peakRss: number; out: Analysis } | null;
  /** The whole `faxline render` process (compiled), where measured. */
  cli: { seconds: number[]; peakRss: number } | null;
}

const median = (values: number[]) => {
  const s = [...values].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const fixed = (v: number, d = 1) => (Number.isFinite(v) ? v.toFixed(d) : "–");
const mib = (bytes: number) => (bytes > 0 ? (bytes / 2 ** 20).toFixed(0) : "–");
const kb = (bytes: number) => (bytes / 1000).toFixed(1);
const pct = (ratio: number) => `${(ratio * 100).toFixed(ratio < 0.1 ? 1 : 0)} %`;

function versionOf(pkg: string): string {
  try {
    return (JSON.parse(readFileSync(join(ROOT, "node_modules", pkg, "package.json"), "utf8")) as { version: string }).version;
  } catch {
    return "?";
  }
}

function cpuModel(): string {
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8").split("\n").find((l) => l.startsWith("model name"));
    if (line) return line.split(":")[1]!.trim();
  } catch {
    // not Linux
  }
  return cpus()[0]?.model.trim() ?? "unknown CPU";
}

async function printHeader(reps: number, seed: number, pageThreads: number, pdfRenderer: PdfiumChoice): Promise<void> {
  const gsVersion = spawnSync("gs", ["--version"], { encoding: "utf8" }).stdout?.trim() || "not found";
  console.log("Faxline bench:render");
  console.log(`date      ${new Date().toISOString()}`);
  console.log(`machine   ${cpuModel()}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${platform()} ${release()}, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  console.log(`runtime   Node ${process.version}; sharp ${versionOf("sharp")} (libvips ${sharp.versions.vips}), pdf-lib ${versionOf("pdf-lib")}; Ghostscript ${gsVersion}`);
  console.log(`settings  A4, 1 warm-up + ${reps} runs per document (median shown), corpus seed ${seed}; Faxline renders a document's pages on ${pageThreads} thread${pageThreads === 1 ? "" : "s"} (render.pageThreads); gs peak RSS by ${HAVE_GNU_TIME ? "/usr/bin/time -f %M" : "polling /proc/PID/status VmHWM (lower bound)"}`);
  console.log(`          raster kernels: ${rasterKernels()} (src/render/native-raster.ts; FAXLINE_RASTER_ADDON=off for the TypeScript)`);
  choosePdfiumEngine(pdfRenderer);
  const engine = await pdfiumEngine();
  const pdfium = engine.kind === "native" ? `native (libpdfium.so of pdfium-node-linux-x64-gnu ${versionOf("pdfium-node-linux-x64-gnu")})` : `WebAssembly (@hyzyla/pdfium ${versionOf("@hyzyla/pdfium")})`;
  console.log(`          PDFium: ${pdfium}, render.pdfRenderer ${pdfRenderer} (--pdf-renderer native|wasm|auto)`);
  console.log(`          line time: preflight estimate per page, worse of MH without ECM and MMR with ECM, at ${LINE_BPS} bit/s`);
  console.log("");
}

function printTables(resolution: Resolution, rows: Row[], gsStart: number): void {
  const g = GEOMETRY[resolution];
  console.log(`## A4 ${resolution} (1728 x ${g.height}, 204 x ${g.yDpi} dpi)`);
  console.log("");
  console.log("| document | pages | Faxline pages/s | gs pages/s | Faxline ÷ gs | Faxline 1st run s | Faxline RSS start / peak sampled / maxRSS MiB | gs peak RSS MiB |");
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|");
  for (const { c, fax, gs } of rows) {
    const faxRate = fax.pages / median(fax.seconds);
    const gsRate = gs ? fax.pages / median(gs.seconds) : NaN;
    console.log(
      `| ${c.label} | ${fax.pages} | ${fixed(faxRate)} | ${gs ? fixed(gsRate) : "–"} | ${gs ? `${fixed(faxRate / gsRate, 2)}x` : "–"} | ${fixed(fax.firstRunSeconds, 2)} | ${mib(fax.startRss)} / ${mib(fax.sampledPeakRss)} / ${mib(fax.maxRss)} | ${gs ? mib(gs.peakRss) : "–"} |`,
    );
  }
  console.log("");
  console.log("| document | Faxline KB/page | gs KB/page | Faxline black | gs black | Faxline MH KB/page | gs MH KB/page | Faxline line s/page | gs line s/page |");
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const { c, faxOut: f, gs } of rows) {
    const o = gs?.out;
    const black = (a: Analysis) => pct(a.blackRatios.reduce((s, r) => s + r, 0) / a.blackRatios.length);
    console.log(
      `| ${c.label} | ${kb(f.g4Bytes / f.pages)} | ${o ? kb(o.g4Bytes / o.pages) : "–"} | ${black(f)} | ${o ? black(o) : "–"} | ${kb(f.mhBytes / f.pages)} | ${o ? kb(o.mhBytes / o.pages) : "–"} | ${fixed(f.lineSeconds / f.pages)} | ${o ? fixed(o.lineSeconds / o.pages) : "–"} |`,
    );
  }
  console.log("");
  const whole = rows.filter((r) => r.cli !== null && r.gs !== null);
  if (whole.length > 0) {
    console.log("Whole processes, start to exit: `faxline render --out OUT.tif FILE` (compiled, its render worker and page helpers included) against `gs`:");
    console.log("");
    console.log("| document | pages | faxline render s | gs s | faxline ÷ gs time | faxline peak RSS MiB | gs peak RSS MiB |");
    console.log("|---|---:|---:|---:|---:|---:|---:|");
    for (const { c, fax, gs, cli } of whole) {
      const faxS = median(cli!.seconds);
      const gsS = median(gs!.seconds);
      console.log(`| ${c.label} | ${fax.pages} | ${fixed(faxS, 2)} | ${fixed(gsS, 2)} | ${fixed(faxS / gsS, 2)}x | ${mib(cli!.peakRss)} | ${mib(gs!.peakRss)} |`);
    }
    console.log("");
  }
  console.log(`gs process start alone (one blank page, median): ${fixed(gsStart * 1000, 0)} ms — included in every gs figure above, as gs is run as a process per job.`);
  console.log("");
  for (const { c, fax, faxOut: f, gs } of rows) {
    const faxRate = fax.pages / median(fax.seconds);
    const faxKb = f.g4Bytes / f.pages / 1000;
    let verdict: string;
    if (gs === null) {
      verdict = `${fixed(faxRate)} pages/s, ${fixed(faxKb)} KB/page, ${fixed(f.lineSeconds / f.pages, 0)} s/page on the line (no gs counterpart: gs reads the PDF only)`;
    } else {
      const gsRate = fax.pages / median(gs.seconds);
      const gsKb = gs.out.g4Bytes / gs.out.pages / 1000;
      const speed = faxRate >= gsRate ? `${fixed(faxRate / gsRate, 1)}x as fast as gs` : `gs ${fixed(gsRate / faxRate, 1)}x faster`;
      const size = faxKb <= gsKb ? `${Math.round((1 - faxKb / gsKb) * 100)} % smaller than gs` : `${Math.round((faxKb / gsKb - 1) * 100)} % larger than gs`;
      verdict = `${fixed(faxRate)} vs ${fixed(gsRate)} pages/s (${speed}); ${fixed(faxKb)} vs ${fixed(gsKb)} KB/page (${size}); line ${fixed(f.lineSeconds / f.pages, 0)} vs ${fixed(gs.out.lineSeconds / gs.out.pages, 0)} s/page`;
    }
    console.log(`- ${c.label}: ${verdict}`);
    if (fax.warnings.length > 0) console.log(`    Faxline preflight: ${fax.warnings.slice(0, 4).join("; ")}${fax.warnings.length > 4 ? `; … (${fax.warnings.length} warnings)` : ""}`);
  }
  console.log("");
}

async function blankPdf(path: string): Promise<void> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  doc.addPage([595.28, 841.89]);
  writeFileSync(path, await doc.save());
}

async function main(): Promise<void> {
  const { values: opts } = parseArgs({
    options: {
      reps: { type: "string", default: "5" },
      keep: { type: "string" },
      seed: { type: "string", default: "20261121" },
      resolution: { type: "string", default: "both" },
      only: { type: "string" },
      "page-threads": { type: "string", default: "0" },
      "whole-process": { type: "string", default: "long" },
      "pdf-renderer": { type: "string", default: "auto" },
      child: { type: "string" },
    },
  });
  if (opts.child !== undefined) {
    const result = await child(JSON.parse(opts.child) as ChildRequest);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const reps = Math.max(1, Number(opts.reps));
  const seed = Number(opts.seed);
  const pageThreads = Number(opts["page-threads"]) > 0 ? Number(opts["page-threads"]) : availableParallelism();
  const pdfRenderer = opts["pdf-renderer"] as PdfiumChoice;
  if (!PDF_RENDERERS.includes(pdfRenderer)) throw new Error(`--pdf-renderer must be one of ${PDF_RENDERERS.join(", ")}`);
  const wholeProcess = opts["whole-process"] === "" ? [] : opts["whole-process"].split(",").map((s) => s.trim());
  const resolutions: Resolution[] = opts.resolution === "both" ? ["HIGH", "LOW"] : [opts.resolution === "LOW" ? "LOW" : "HIGH"];
  // Scratch files (gs's time output, the blank page) always go to a temporary directory; the
  // corpus and the outputs go to --keep DIR when given.
  const scratch = mkdtempSync(join(tmpdir(), "faxline-render-bench-"));
  const work = opts.keep ?? scratch;
  mkdirSync(work, { recursive: true });

  try {
    await printHeader(reps, seed, pageThreads, pdfRenderer);
    console.error("generating the corpus …");
    const items = await generateCorpus(join(work, "corpus"), seed);
    const only = opts.only?.split(",").map((s) => s.trim());
    const cases = casesOf(items).filter((c) => only === undefined || only.includes(c.name));
    const blank = join(scratch, "blank.pdf");
    await blankPdf(blank);

    for (const resolution of resolutions) {
      const gsStartRuns: number[] = [];
      for (let i = 0; i < reps + 1; i++) gsStartRuns.push((await runGs(gsArgs(resolution, join(scratch, "blank.tif"), [blank]), scratch)).seconds);
      const rows: Row[] = [];
      for (const c of cases) {
        console.error(`${resolution} ${c.label}: Faxline …`);
        const faxTiff = join(work, `${c.name}-${resolution}-faxline.tif`);
        const request: ChildRequest = { documents: c.documents, resolution, reps, pageThreads, out: faxTiff, pdfRenderer };
        const proc = spawnSync(process.execPath, [...process.execArgv, SELF, "--child", JSON.stringify(request)], {
          encoding: "utf8",
          stdio: ["ignore", "pipe", "inherit"],
          maxBuffer: 16 * 2 ** 20,
        });
        if (proc.status !== 0) throw new Error(`${c.label}: the Faxline run failed (exit ${proc.status})`);
        const fax = JSON.parse(proc.stdout.trim().split("\n").at(-1)!) as ChildResult;
        const faxBuffer = readFileSync(faxTiff);
        const faxOut = await analyse(faxBuffer, resolution);

        let gs: Row["gs"] = null;
        let gsBuffer: Buffer | null = null;
        if (c.gsFiles !== null) {
          console.error(`${resolution} ${c.label}: gs …`);
          const gsTiff = join(work, `${c.name}-${resolution}-gs.tif`);
          const args = gsArgs(resolution, gsTiff, c.gsFiles);
          await runGs(args, scratch);
          const seconds: number[] = [];
          let peakRss = 0;
          for (let i = 0; i < reps; i++) {
            const r = await runGs(args, scratch);
            seconds.push(r.seconds);
            peakRss = Math.max(peakRss, r.peakRss);
          }
          gsBuffer = readFileSync(gsTiff);
          gs = { seconds, peakRss, out: await analyse(gsBuffer, resolution) };
          if (gs.out.pages !== fax.pages) console.error(`  note: gs wrote ${gs.out.pages} pages, Faxline ${fax.pages}`);
        }
        if (opts.keep !== undefined) {
          const faxCrop = await cropPng(faxBuffer, resolution, c.crop);
          writeFileSync(join(work, `${c.name}-${resolution}-page1-faxline.png`), faxCrop);
          if (gsBuffer !== null) {
            const gsCrop = await cropPng(gsBuffer, resolution, c.crop);
            writeFileSync(join(work, `${c.name}-${resolution}-page1-gs.png`), gsCrop);
            writeFileSync(join(work, `${c.name}-${resolution}-page1-faxline-left-gs-right.png`), await sideBySide(faxCrop, gsCrop));
            writeFileSync(
              join(work, `${c.name}-${resolution}-page1-overview-faxline-left-gs-right.png`),
              await sideBySide(await overviewPng(faxBuffer, resolution), await overviewPng(gsBuffer, resolution)),
            );
          } else {
            writeFileSync(join(work, `${c.name}-${resolution}-page1-overview-faxline.png`), await overviewPng(faxBuffer, resolution));
          }
        }
        let cli: Row["cli"] = null;
        if (gs !== null && c.gsFiles !== null && wholeProcess.includes(c.name)) {
          console.error(`${resolution} ${c.label}: faxline render (whole process) …`);
          const cliTiff = join(scratch, `${c.name}-${resolution}-cli.tif`);
          const args = [FAXLINE_BIN, "render", "--resolution", resolution, "--out", cliTiff, ...c.documents.map((d) => d.path)];
          const env = { ...process.env, FAXLINE_RENDER_PAGE_THREADS: String(pageThreads), FAXLINE_RENDER_PDF_RENDERER: pdfRenderer };
          await runProcess(process.execPath, args, scratch, env);
          const seconds: number[] = [];
          let peakRss = 0;
          for (let i = 0; i < reps; i++) {
            const r = await runProcess(process.execPath, args, scratch, env);
            seconds.push(r.seconds);
            peakRss = Math.max(peakRss, r.peakRss);
          }
          const pages = readTiffPages(readFileSync(cliTiff)).length;
          if (pages !== fax.pages) throw new Error(`faxline render wrote ${pages} pages, renderFaxJob ${fax.pages}`);
          cli = { seconds, peakRss };
        }
        rows.push({ c, fax, faxOut, gs, cli });
      }
      printTables(resolution, rows, median(gsStartRuns.slice(1)));
    }
    if (opts.keep !== undefined) console.log(`kept in ${work}: corpus/, <document>-<resolution>-faxline.tif and -gs.tif, PNG crops of page 1 at full resolution (…-page1-faxline.png, -gs.png, -faxline-left-gs-right.png) and of all of page 1 at half size (…-page1-overview-…)`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();

/**
 * The two PDFium engines (src/render/pdfium/): the native one gives every thread a PDFium of its
 * own (an in-memory copy of the library, or a copy in the temporary directory where the kernel
 * refuses executable memfds) and draws the same pixels as the WebAssembly one; threads that end give theirs back for the
 * next to reuse, also in a process whose main thread never loads the addon (as in a node); a raised
 * cancel flag gives up a native render, also one in a render worker that FaxImageWorker ends at its
 * time limit or as the process exits. The other render tests loop over both engines
 * (test/support/pdfium-engines.ts); these are about the native engine's own machinery, and are
 * skipped, with the reason, where it cannot load.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { FaxImageWorker } from "../../src/render/fax-image/fax-image-worker.ts";
import { pageGeometry } from "../../src/render/pages/grey-page.ts";
import { openPdfDocument } from "../../src/render/pages/pdf-pages.ts";
import { nativePdfiumUnavailable, type NativePdfiumEngine } from "../../src/render/pdfium/native-pdfium.ts";
import { choosePdfiumEngine, pdfiumEngine, pdfRendererFor, setPdfiumCancelFlag } from "../../src/render/pdfium/pdfium-engine.ts";
import { heavyPdf, jobInput, LIMITS, mixedPdf } from "../support/pdfium-test-pdfs.ts";

const HIGH = pageGeometry("A4", "HIGH");

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

/**
 * Where this process's threads get their copies of PDFium from: in-memory copies, unless the
 * kernel refuses executable memfds (vm.memfd_noexec=2, Linux 6.3+), then copies in the temporary
 * directory.
 */
function copyOrigin(): "memfd" | "copy" {
  try {
    return readFileSync("/proc/sys/vm/memfd_noexec", "utf8").trim() === "2" ? "copy" : "memfd";
  } catch {
    return "memfd"; // before Linux 6.3: no such setting, memfds are executable
  }
}

/**
 * Runs test/support/pdfium-process.ts MODE in a process of its own (its main thread loads no
 * PDFium). `noexecMemfd`: in a PID namespace of its own whose vm.memfd_noexec is 2, so that the
 * kernel refuses it executable memfds, as a hardened host does (needs root and Linux 6.3+).
 */
function runProcess(
  mode: string,
  onOutput?: (text: string) => void,
  options: { noexecMemfd?: boolean; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const script = new URL("../support/pdfium-process.ts", import.meta.url).pathname;
  const node = [process.execPath, "--import", "tsx", script, mode];
  const [command, ...args] = options.noexecMemfd
    ? ["unshare", "--pid", "--fork", "--mount-proc", "sh", "-c", 'echo 2 > /proc/sys/vm/memfd_noexec && exec "$0" "$@"', ...node]
    : node;
  const child = spawn(command!, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...options.env } });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    onOutput?.(stdout);
  });
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, stdout, stderr })));
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
      const origin = copyOrigin();
      assert.deepEqual(answers.map((answer) => answer.origin), [origin, origin, origin]);
      assert.equal(main.loadedPdfiums().inUse, 4);
    } finally {
      await Promise.all(workers.map((worker) => worker.terminate()));
    }
  });

  it("threads that end give their PDFium back, and new threads take those rather than load more", async () => {
    const main = await mainEngine();
    // The counts while the round's three threads hold their PDFiums (all have drawn).
    const round = async (): Promise<ThreadAnswer["loaded"]> => {
      const workers = [startThread(), startThread(), startThread()];
      try {
        await Promise.all(workers.map((worker) => ask(worker, mixed)));
        return main.loadedPdfiums();
      } finally {
        await Promise.all(workers.map((worker) => worker.terminate()));
      }
    };
    await round();
    const loaded = main.loadedPdfiums();
    assert.equal(loaded.inUse, 1, "only this thread holds one now");
    const total = loaded.file + loaded.memfd + loaded.copy;
    assert.ok(total >= 4, `the three ended threads' PDFiums are still loaded (${total})`);
    const now = await round();
    assert.equal(now.file + now.memfd + now.copy, total, "no new copy loaded");
    assert.equal(now.inUse, 4);
  });

  it("a node's render threads reuse their PDFiums when workers are recycled, although its main thread never loads the addon", async () => {
    const run = await runProcess("recycle");
    assert.equal(run.code, 0, run.stderr);
    // The render worker holds the library file; its two helpers hold a copy each, the same ones every time.
    assert.deepEqual(JSON.parse(run.stdout.trim().split("\n").at(-1)!), [2, 2, 2, 2]);
  });

  it("where the kernel refuses executable memfds, each thread's PDFium is a copy in the temporary directory, removed once mapped, and reused", async () => {
    if (process.getuid?.() !== 0) assert.fail("this test sets vm.memfd_noexec in a PID namespace of its own (unshare), which needs root: run the tests as root, as scripts/install.sh sets up");
    const expected = await digestsWith("native", mixed);
    const dir = mkdtempSync(join(tmpdir(), "faxline-pdfium-tmp-"));
    try {
      const env = { TMPDIR: dir };
      const threads = await runProcess("threads", undefined, { noexecMemfd: true, env });
      assert.equal(threads.code, 0, threads.stderr);
      const answer = JSON.parse(threads.stdout.trim().split("\n").at(-1)!) as { origins: string[]; digests: string[][]; loaded: ThreadAnswer["loaded"][]; copies: number; left: string[] };
      // The first thread takes the library file; the kernel refuses the others an executable memfd.
      assert.deepEqual([...answer.origins].sort(), ["copy", "copy", "file"]);
      for (const digests of answer.digests) assert.deepEqual(digests, expected, "the same pixels as this process draws");
      for (const loaded of answer.loaded) assert.equal(loaded.memfd, 0, "no in-memory copy");
      assert.equal(answer.copies, 2, "two copies mapped once all three have drawn");
      assert.deepEqual(answer.left, [], "no copy left in the temporary directory");
      const recycle = await runProcess("recycle", undefined, { noexecMemfd: true, env });
      assert.equal(recycle.code, 0, recycle.stderr);
      // The render worker holds the library file; its two helpers a copy each, the same ones every time.
      assert.deepEqual(JSON.parse(recycle.stdout.trim().split("\n").at(-1)!), [2, 2, 2, 2]);
      assert.deepEqual(readdirSync(dir).filter((name) => name.startsWith("faxline-pdfium-")), [], "no copy left in the temporary directory");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a cancel flag raised by another thread during a render gives it up at PDFium's next pause point; lowered, the page renders", async () => {
    const heavy = await heavyPdf(1500);
    const flag = new Int32Array(new SharedArrayBuffer(4));
    await mainEngine();
    setPdfiumCancelFlag(flag);
    const pdf = await openPdfDocument({ name: "heavy.pdf", bytes: heavy }, HIGH, LIMITS);
    try {
      const drawStarted = performance.now();
      const page = pdf.renderPage(0);
      const drawnMs = performance.now() - drawStarted;
      assert.ok(page.data.some((grey) => grey < 255), "the page is drawn");
      // Another thread raises the flag a tenth of a whole render in (this one is busy in PDFium).
      const raiser = new Worker("const { workerData: { flag, ms } } = require('node:worker_threads'); Atomics.wait(flag, 0, 0, ms); Atomics.store(flag, 0, 1);", {
        eval: true,
        workerData: { flag, ms: Math.round(drawnMs / 10) },
      });
      const started = performance.now();
      assert.throws(() => pdf.renderPage(0), /rendering heavy\.pdf was given up: the render was cancelled/);
      const cancelledMs = performance.now() - started;
      await raiser.terminate();
      assert.ok(cancelledMs < drawnMs / 2, `given up after ${cancelledMs.toFixed(0)} ms, a whole render takes ${drawnMs.toFixed(0)} ms`);
      Atomics.store(flag, 0, 0);
      assert.deepEqual(pdf.renderPage(0).data, page.data, "lowered, the page renders as before");
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
    const worker = new FaxImageWorker({ timeoutMs: 1_500, memoryLimitMb: 512 });
    try {
      const rendering = worker.render(jobInput(heavy));
      // The worker takes its PDFium before the time limit: the limit ends a render, not a start.
      let peak = 0;
      const watching = (async () => {
        for (let end = performance.now() + 1_400; performance.now() < end; await new Promise((resolve) => setTimeout(resolve, 10))) peak = Math.max(peak, main.loadedPdfiums().inUse);
      })();
      const outcome = await rendering;
      await watching;
      assert.equal(peak, 2, "the render worker held a PDFium while rendering");
      assert.deepEqual(outcome, { ok: false, kind: "timeout", timeoutMs: 1_500 });
      // The page takes many seconds to draw: its PDFium comes back only if the render stopped.
      const deadline = performance.now() + 3_000;
      while (main.loadedPdfiums().inUse > 1 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(main.loadedPdfiums().inUse, 1, "the render worker's PDFium was given back");
    } finally {
      await worker.close();
    }
  });

  it("a process that exits during a native render exits at once: the render workers' cancel flags are raised at exit", async () => {
    const started = Date.now();
    let renderingAt = 0;
    const run = await runProcess("exit", (text) => {
      if (renderingAt === 0 && text.includes("rendering")) renderingAt = Date.now();
    });
    assert.equal(run.code, 0, run.stderr);
    assert.ok(renderingAt > 0, run.stdout);
    const exitMs = Date.now() - renderingAt;
    // The page takes tens of seconds to draw; without the flag the exit waits for it.
    assert.ok(exitMs < 3_000, `exited ${exitMs} ms after process.exit (started ${Date.now() - started} ms ago)`);
  });
});

describe("render.pdfRenderer at a node's start", () => {
  it("names the PDFium the render threads will use, and refuses native where it cannot load", () => {
    assert.equal(pdfRendererFor("auto", null), "native PDFium");
    assert.equal(pdfRendererFor("native", null), "native PDFium");
    assert.equal(pdfRendererFor("wasm", null), "WebAssembly PDFium (render.pdfRenderer wasm)");
    const why = "the prebuilt PDFium is for Linux on x86-64, not darwin on arm64";
    assert.equal(pdfRendererFor("auto", why), `WebAssembly PDFium (the native one is unavailable: ${why})`);
    assert.equal(pdfRendererFor("wasm", why), "WebAssembly PDFium (render.pdfRenderer wasm)");
    assert.throws(() => pdfRendererFor("native", why), new Error(`render.pdfRenderer is native, but ${why}; set it to auto or wasm`));
  });
});

/**
 * A process for test/unit/render-pdfium-engines.test.ts whose main thread never loads the native
 * PDFium, as in a node: only its render threads do (FaxImageWorker). `node --import tsx
 * pdfium-process.ts MODE`:
 *
 *   recycle  four jobs of a six-page PDF, each in a render worker with two page helpers that is
 *            ended after its job; prints the PDFium copies loaded after each (JSON list): in-memory
 *            copies and copies in the temporary directory alike
 *   threads  three threads render the six-page PDF at once, each with a PDFium of its own; prints
 *            (JSON) each one's origin and page digests, the loaded counts, and the files of ours
 *            left in the temporary directory (os.tmpdir(), TMPDIR)
 *   exit     starts a job of a page that takes many seconds to draw, then calls process.exit(0)
 *            once the render has begun; prints "rendering" first
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { FaxImageWorker } from "../../src/render/fax-image/fax-image-worker.ts";
import { heavyPdf, jobInput, mixedPdf } from "./pdfium-test-pdfs.ts";

/**
 * The copies of the library this process has loaded: in-memory ones by their open descriptors,
 * those in the temporary directory (removed once mapped) by their names in the process's mappings.
 */
function pdfiumCopies(): number {
  const memfds = readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).includes("memfd:faxline-pdfium");
    } catch {
      return false;
    }
  }).length;
  const files = new Set(readFileSync("/proc/self/maps", "utf8").match(/\/faxline-pdfium-\d+-\d+\.so/g) ?? []);
  return memfds + files.size;
}

function startThread(): Worker {
  const entry = pathToFileURL(new URL("./pdfium-thread.ts", import.meta.url).pathname).href;
  return new Worker(`import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); })`, { eval: true });
}

const mode = process.argv[2];
if (mode === "recycle") {
  const pdf = await mixedPdf();
  const counts: number[] = [];
  // Every job's input is over recycleAfterBytes: its worker (and the helpers with it) ends after it.
  const worker = new FaxImageWorker({ timeoutMs: 60_000, memoryLimitMb: 512, pageThreads: 3, recycleAfterBytes: 0 });
  for (let job = 0; job < 4; job++) {
    const outcome = await worker.render(jobInput(pdf));
    if (!outcome.ok || !outcome.result.ok) throw new Error(`job ${job} failed: ${JSON.stringify(outcome).slice(0, 300)}`);
    // The ended threads give their PDFiums back as they end.
    await new Promise((resolve) => setTimeout(resolve, 500));
    counts.push(pdfiumCopies());
  }
  await worker.close();
  console.log(JSON.stringify(counts));
} else if (mode === "threads") {
  const pdf = await mixedPdf();
  const workers = [startThread(), startThread(), startThread()];
  const answers = await Promise.all(
    workers.map(
      (worker) =>
        new Promise<{ origin: string; digests: string[]; loaded: unknown }>((resolve, reject) => {
          worker.once("message", resolve).once("error", reject);
          worker.postMessage(pdf);
        }),
    ),
  );
  const left = readdirSync(tmpdir()).filter((name) => name.startsWith("faxline-pdfium-"));
  console.log(JSON.stringify({ origins: answers.map((a) => a.origin), digests: answers.map((a) => a.digests), loaded: answers.map((a) => a.loaded), copies: pdfiumCopies(), left }));
  await Promise.all(workers.map((worker) => worker.terminate()));
} else if (mode === "exit") {
  const worker = new FaxImageWorker({ timeoutMs: 120_000, memoryLimitMb: 512 });
  void worker.render(jobInput(await heavyPdf(60_000)));
  // The render thread has loaded PDFium and is drawing once it holds the library file.
  for (;;) {
    const maps = (await import("node:fs")).readFileSync("/proc/self/maps", "utf8");
    if (maps.includes("libpdfium.so")) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  console.log("rendering");
  process.exit(0);
} else {
  throw new Error(`unknown mode ${mode}`);
}

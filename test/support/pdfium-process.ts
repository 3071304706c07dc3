/**
 * A process for test/unit/render-pdfium-engines.test.ts whose main thread never loads the native
 * PDFium, as in a node: only its render threads do (FaxImageWorker). `node --import tsx
 * pdfium-process.ts MODE`:
 *
 *   recycle  four jobs of a six-page PDF, each in a render worker with two page helpers that is
 *            ended after its job; prints the in-memory PDFium copies open after each (JSON list)
 *   exit     starts a job of a page that takes many seconds to draw, then calls process.exit(0)
 *            once the render has begun; prints "rendering" first
 */
import { readdirSync, readlinkSync } from "node:fs";
import { FaxImageWorker } from "../../src/render/fax-image/fax-image-worker.ts";
import { heavyPdf, jobInput, mixedPdf } from "./pdfium-test-pdfs.ts";

function memfdCopies(): number {
  return readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).includes("memfd:faxline-pdfium");
    } catch {
      return false;
    }
  }).length;
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
    counts.push(memfdCopies());
  }
  await worker.close();
  console.log(JSON.stringify(counts));
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

/**
 * The compiled Faxline (the esbuild bundle of ADR 0012, as `npm run build` writes it): what the
 * child-process tests do not reach on their own. They run `faxline serve` and the other commands
 * from the bundle (test/support/compiled-faxline.ts), which covers the command entry and the render
 * worker thread; here the other entries are started as the node starts them and made to work:
 * a page helper thread renders a page of a real PDF, and a media process loads the fax engine
 * (found from the bundle through the package root) and says it is ready. Also `faxline --version`.
 */
import assert from "node:assert/strict";
import { fork } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { Worker } from "node:worker_threads";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { BUNDLE_MARKER } from "../../src/lib/code-location.ts";
import type { HelperReply, HelperRequest } from "../../src/render/page-helpers/page-helper-protocol.ts";
import { pageGeometry } from "../../src/render/pages/grey-page.ts";
import { runFaxlineCli, REPO_ROOT } from "../support/child-node.ts";
import { compiledCli } from "../support/compiled-faxline.ts";

async function bundleDir(): Promise<string> {
  return dirname(dirname(await compiledCli()));
}

describe("the compiled bundle", () => {
  it("has every entry its marker names, and faxline --version prints package.json's version", async () => {
    const dir = await bundleDir();
    const marker = JSON.parse(readFileSync(join(dir, BUNDLE_MARKER), "utf8")) as { entries: string[] };
    assert.deepEqual(marker.entries.sort(), ["cli/main.js", "line/media-host/media-host-process.js", "render/fax-image/render-worker.js", "render/page-helpers/page-helper-thread.js"]);
    for (const entry of marker.entries) assert.ok(existsSync(join(dir, entry)), entry);
    const version = (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version: string }).version;
    const run = await runFaxlineCli(["--version"], {});
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, `faxline ${version}\n`);
  });

  it("a page helper thread started from the bundle renders a page of a PDF", { timeout: 30_000 }, async () => {
    const pdf = await PDFDocument.create();
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    pdf.addPage([595.28, 841.89]).drawText("Rendered by a page helper of the compiled bundle", { x: 60, y: 760, size: 18, font });
    const bytes = await pdf.save();
    const worker = new Worker(join(await bundleDir(), "render/page-helpers/page-helper-thread.js"));
    try {
      const geometry = pageGeometry("A4", "HIGH");
      const open: HelperRequest = {
        type: "open",
        documentId: 1,
        name: "form.pdf",
        bytes,
        geometry,
        limits: { maxPages: 10, maxSourcePixels: 50_000_000, converterTimeoutMs: 30_000 },
        mode: { drawsLater: false, bandRows: geometry.headerBandPx, toneMode: "AUTO" },
      };
      worker.postMessage(open);
      worker.postMessage({ type: "page", documentId: 1, index: 0 } satisfies HelperRequest);
      const [reply] = (await Promise.race([once(worker, "message"), once(worker, "error").then(([e]) => Promise.reject(e as Error))])) as [HelperReply];
      assert.equal(reply.index, 0);
      assert.equal(reply.result.kind, "page", JSON.stringify(reply.result));
      if (reply.result.kind !== "page" || reply.result.page.kind !== "final") assert.fail(`a final page was expected: ${JSON.stringify(reply.result).slice(0, 200)}`);
      assert.ok(reply.result.page.counts.blackPixels > 1000, "the page has the text's black pixels");
    } finally {
      await worker.terminate();
    }
  });

  it("a media process started from the bundle loads the fax engine and is ready", { timeout: 30_000 }, async () => {
    const child = fork(join(await bundleDir(), "line/media-host/media-host-process.js"), [], { execArgv: [], serialization: "advanced", stdio: ["ignore", "inherit", "inherit", "ipc"] });
    try {
      const [message] = (await once(child, "message")) as [{ type: string; error: string | null }];
      assert.deepEqual(message, { type: "ready", error: null });
    } finally {
      // The process ends when its node's channel closes.
      const exited = once(child, "exit");
      child.disconnect();
      await exited;
    }
  });
});

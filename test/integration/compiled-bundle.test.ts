/**
 * The compiled Faxline (the esbuild bundle of ADR 0012, as `npm run build` writes it): what the
 * child-process tests do not reach on their own. They run `faxline serve` and the other commands
 * from the bundle (test/support/compiled-faxline.ts), which covers the command entry and the render
 * worker thread; here the other entries are started as the node starts them and made to work:
 * a page helper thread renders a page of a real PDF, and a media process loads the fax engine
 * (found from the bundle through the package root) and says it is ready. Also `faxline --version`,
 * a PostScript document rendered by the compiled command (Ghostscript, then pdf-lib's page count:
 * a CommonJS package loaded on first use), and two checks of the bundle's make-up: no chunk is a
 * CommonJS package reached by a dynamic import (esbuild gives such a chunk only a default export,
 * so named imports from it are undefined), and every entry the source starts is one of the bundle's.
 */
import assert from "node:assert/strict";
import { fork } from "node:child_process";
import { once } from "node:events";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, it } from "node:test";
import { Worker } from "node:worker_threads";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { BUNDLE_MARKER } from "../../src/lib/code-location.ts";
import type { HelperReply, HelperRequest } from "../../src/render/page-helpers/page-helper-protocol.ts";
import { pageGeometry } from "../../src/render/pages/grey-page.ts";
import { BUNDLE_ENTRIES } from "../../scripts/bundle.ts";
import { readTiffPages } from "../../src/render/fax-image/tiff-structure.ts";
import { runFaxlineCli, REPO_ROOT } from "../support/child-node.ts";
import { compiledCli } from "../support/compiled-faxline.ts";
import { tempDir } from "../support/test-node.ts";

/** Every .ts file below `dir`. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []));
}

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

  it("faxline render turns a PostScript document into fax pages", { timeout: 60_000 }, async () => {
    const dir = tempDir("faxline-bundle-ps-");
    try {
      const ps = join(dir.path, "print.ps");
      writeFileSync(ps, "%!PS\n/Helvetica findfont 24 scalefont setfont\n1 1 2 { 72 700 moveto (PostScript page ) show 3 string cvs show showpage } for\n");
      const out = join(dir.path, "print.tif");
      const run = await runFaxlineCli(["render", ps, "--out", out], { FAXLINE_DATA_DIR: dir.path, FAXLINE_LOG_LEVEL: "warn" }, 60_000);
      assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
      assert.equal(readTiffPages(readFileSync(out)).length, 2, "both pages");
    } finally {
      dir.remove();
    }
  });

  it("no chunk is a CommonJS package reached by a dynamic import, and every entry the source starts is in the bundle", async () => {
    const dir = await bundleDir();
    const chunks = readdirSync(join(dir, "chunks")).filter((name) => name.endsWith(".js"));
    const defaultOnly = chunks.filter((name) => /^export default require_/m.test(readFileSync(join(dir, "chunks", name), "utf8")));
    assert.deepEqual(defaultOnly, [], "import such a package statically from a module of its own that is imported lazily (render/convert/count-pdf-pages.ts)");
    const started = new Set<string>();
    for (const file of sourceFiles(join(REPO_ROOT, "src"))) {
      for (const m of readFileSync(file, "utf8").matchAll(/(?:startWorkerThread|entryPath)\(\s*"([^"]+)"/g)) started.add(m[1]!);
    }
    assert.ok(started.size >= 3, `the source's entries were found: ${[...started].join(", ")}`);
    for (const entry of started) assert.ok(BUNDLE_ENTRIES.includes(entry), `${entry} (started in src/) is an entry of scripts/bundle.ts`);
    assert.ok(BUNDLE_ENTRIES.every((entry) => existsSync(join(REPO_ROOT, "src", `${entry}.ts`))), relative(REPO_ROOT, dir));
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
        mode: { drawsLater: false, bandRows: geometry.headerBandPx, toneMode: "AUTO", blankPages: null },
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

/**
 * The render worker thread: it renders exactly what the in-process renderer renders, a time
 * limit ends a render (the worker is terminated), and a failing render fails only its own
 * request.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { layoutText } from "../../src/render/layout-text.ts";
import { FaxImageWorker, faxImageFailureDetail } from "../../src/render/fax-image/fax-image-worker.ts";
import { renderFaxImage, type FaxImageInput } from "../../src/render/fax-image/render-fax-image.ts";

const options = { paperFormat: "A4", resolution: "HIGH" } as const;
const TEXT = Array.from({ length: 100 }, (_, i) => `Zeile ${i + 1}: Grüße aus dem Worker, 5 €.`).join("\n");
const INPUT: FaxImageInput = { textPages: layoutText(TEXT, options).pages, coverPageText: "Cover", ...options };

describe("FaxImageWorker", () => {
  it("renders the same file as renderFaxImage, request after request", async () => {
    const expected = await renderFaxImage(INPUT);
    const worker = new FaxImageWorker({ timeoutMs: 120_000 });
    try {
      for (let i = 0; i < 2; i++) {
        const outcome = await worker.render(INPUT);
        assert.ok(outcome.ok, JSON.stringify(outcome));
        assert.ok(outcome.image.tiff.equals(expected.tiff), "identical TIFF bytes");
        assert.deepEqual(outcome.image.pageSizes, expected.pageSizes);
      }
    } finally {
      await worker.close();
    }
  });

  it("ends a render that exceeds the time limit, and says which limit", async () => {
    const longJob: FaxImageInput = { ...INPUT, textPages: Array.from({ length: 50 }, () => INPUT.textPages[0]!) };
    const worker = new FaxImageWorker({ timeoutMs: 1 });
    try {
      const outcome = await worker.render(longJob);
      assert.deepEqual(outcome, { ok: false, kind: "timeout", timeoutMs: 1 });
      assert.equal(
        faxImageFailureDetail(outcome),
        "the fax image took longer to render than render.timeout (1ms) and was given up",
      );
    } finally {
      await worker.close();
    }
  });

  it("a render that fails does not affect the next one", async () => {
    const worker = new FaxImageWorker({ timeoutMs: 120_000 });
    try {
      const failed = await worker.render({ ...INPUT, textPages: [], coverPageText: null });
      assert.deepEqual(failed, { ok: false, kind: "failed", message: "a fax image needs at least one page" });
      const next = await worker.render(INPUT);
      assert.ok(next.ok, JSON.stringify(next));
      assert.equal(next.image.pageSizes.length, INPUT.textPages.length + 1);
    } finally {
      await worker.close();
    }
  });

  it("requests made at once are rendered one after the other, each with its own answer", async () => {
    const worker = new FaxImageWorker({ timeoutMs: 120_000 });
    try {
      const one = { ...INPUT, textPages: INPUT.textPages.slice(0, 1), coverPageText: null };
      const [a, b, c] = await Promise.all([worker.render(one), worker.render(INPUT), worker.render(one)]);
      assert.deepEqual([a, b, c].map((o) => (o.ok ? o.image.pageSizes.length : o.kind)), [1, INPUT.textPages.length + 1, 1]);
    } finally {
      await worker.close();
    }
  });

  it("close() ends a render in progress as stopped", async () => {
    const worker = new FaxImageWorker({ timeoutMs: 120_000 });
    const warm = await worker.render({ ...INPUT, textPages: INPUT.textPages.slice(0, 1), coverPageText: null });
    assert.ok(warm.ok);
    const outcome = worker.render({ ...INPUT, textPages: Array.from({ length: 50 }, () => INPUT.textPages[0]!) });
    // One turn of the event loop hands the request to the running worker; 50 pages take seconds.
    await new Promise((resolve) => setImmediate(resolve));
    await worker.close();
    assert.deepEqual(await outcome, { ok: false, kind: "stopped" });
  });

  it("after close(), a request ends as stopped", async () => {
    const worker = new FaxImageWorker({ timeoutMs: 120_000 });
    await worker.close();
    assert.deepEqual(await worker.render(INPUT), { ok: false, kind: "stopped" });
  });
});

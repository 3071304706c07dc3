/**
 * The render worker thread (src/render/fax-image/fax-image-worker.ts): it renders exactly what
 * renderFaxJob renders in-process (every variant, with page sizes and preflight), a document
 * failure is an answer and not a worker failure, a time limit ends a render (the worker is
 * terminated), a render that throws or outgrows the heap limit fails only its own request,
 * requests made at once are answered one after the other, and close() stops it.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { FaxImageWorker, faxImageFailureDetail, helpersWorthStartingEarly, type FaxImageOutcome } from "../../src/render/fax-image/fax-image-worker.ts";
import { renderFaxJob, type FaxImageVariant, type FaxJobRenderInput, type FaxJobRenderResult } from "../../src/render/render-fax-job.ts";

const OPTIONS = { timeoutMs: 120_000, memoryLimitMb: 1536 };
const TEXT = Array.from({ length: 100 }, (_, i) => `Zeile ${i + 1}: Grüße aus dem Worker, 5 €.`).join("\n");
const LINE = "A page of text in the worker.";

/** Two text pages, a cover page per recipient, a header line naming the recipient: two variants. */
const INPUT: FaxJobRenderInput = {
  documents: [{ name: "letter.txt", charset: "UTF-8", bytes: Buffer.from(TEXT, "utf8") }],
  paperFormat: "A4",
  resolution: "HIGH",
  header: { template: "%d.%m.%Y %H:%M%cTo %#%rPage %P of %T", csid: "+49 89 0000000", timeZone: "Europe/Berlin", time: Date.UTC(2026, 10, 21, 9, 30) },
  cover: { kind: "svg", content: null, time: Date.UTC(2026, 10, 21, 9, 30), timeZone: "Europe/Berlin" },
  overlay: null,
  recipients: [
    { id: "a", number: "+4989000001001", properties: { ToName: "Anna" } },
    { id: "b", number: "+4989000001002", properties: { ToName: "Bert" } },
  ],
  limits: { maxPages: 100, maxSourcePixels: 200_000_000, converterTimeoutMs: 60_000 },
};

/** A job of `pages` one-line text pages, without cover page and header. */
function textJob(pages: number): FaxJobRenderInput {
  const text = Array.from({ length: pages }, () => LINE).join("\f");
  return { ...INPUT, documents: [{ name: "pages.txt", bytes: Buffer.from(text, "utf8") }], header: null, cover: null, recipients: [INPUT.recipients[0]!] };
}

function images(outcome: FaxImageOutcome): FaxImageVariant[] {
  if (!outcome.ok) assert.fail(`expected the images, got ${outcome.kind}: ${JSON.stringify(outcome)}`);
  if (!outcome.result.ok) assert.fail(`expected the images, got ${outcome.result.reasonCode}: ${outcome.result.message}`);
  return outcome.result.images;
}

function pages(outcome: FaxImageOutcome): number | string {
  if (!outcome.ok) return outcome.kind;
  return outcome.result.ok ? outcome.result.images[0]!.pageSizes.length : outcome.result.reasonCode;
}

describe("FaxImageWorker", () => {
  it("renders the same images as renderFaxJob, request after request", async () => {
    const result = await renderFaxJob(INPUT);
    if (!result.ok) assert.fail(`${result.reasonCode}: ${result.message}`);
    const expected: FaxImageVariant[] = result.images;
    assert.equal(expected.length, 2);
    const worker = new FaxImageWorker(OPTIONS);
    try {
      for (let i = 0; i < 2; i++) {
        const rendered = images(await worker.render(INPUT));
        assert.equal(rendered.length, expected.length);
        for (const [index, image] of rendered.entries()) {
          const want = expected[index]!;
          assert.ok(Buffer.isBuffer(image.tiff), "the TIFF arrives as a Buffer");
          assert.ok(image.tiff.equals(want.tiff), `variant ${index}: identical TIFF bytes`);
          assert.deepEqual(image.recipientIds, want.recipientIds);
          assert.deepEqual(image.pageSizes, want.pageSizes);
          assert.deepEqual(image.preflight, want.preflight);
        }
      }
    } finally {
      await worker.close();
    }
  });

  it("answers a document that cannot be rendered with the document failure, not as a worker failure", async () => {
    const worker = new FaxImageWorker(OPTIONS);
    try {
      const outcome = await worker.render({ ...INPUT, documents: [...INPUT.documents, { name: "bad.txt", charset: "UTF-8", bytes: Uint8Array.of(0x41, 0xff) }] });
      const expected: FaxJobRenderResult = {
        ok: false,
        reasonCode: "document_unreadable",
        documentName: "bad.txt",
        message: "bad.txt: Text is not valid UTF-8: invalid or incomplete byte sequence at byte offset 1 (byte 0xFF). The text was read as UTF-8; set the document's charset field to the encoding it was saved in (US-ASCII, UTF-8, UTF-16, UTF-16BE, UTF-16LE, ISO-8859-1, Windows-1252)",
      };
      assert.deepEqual(outcome, { ok: true, result: expected });
      assert.equal(pages(await worker.render(textJob(1))), 1, "the worker renders on");
    } finally {
      await worker.close();
    }
  });

  it("ends a render that exceeds the time limit, and says which limit", async () => {
    const worker = new FaxImageWorker({ ...OPTIONS, timeoutMs: 1 });
    try {
      const outcome = await worker.render(textJob(50));
      assert.deepEqual(outcome, { ok: false, kind: "timeout", timeoutMs: 1 });
      assert.equal(faxImageFailureDetail(outcome), "the fax image took longer to render than render.timeout (1ms) and was given up");
    } finally {
      await worker.close();
    }
  });

  it("a render that throws fails only its own request", async () => {
    const worker = new FaxImageWorker(OPTIONS);
    try {
      const failed = await worker.render({ ...INPUT, recipients: [] });
      assert.deepEqual(failed, { ok: false, kind: "failed", message: "a fax job needs at least one recipient to render for" });
      assert.equal(faxImageFailureDetail(failed), "the fax image could not be rendered: a fax job needs at least one recipient to render for");
      const next = await worker.render(INPUT);
      assert.deepEqual(images(next).map((image) => image.pageSizes.length), [3, 3]);
    } finally {
      await worker.close();
    }
  });

  it("a render that outgrows the heap limit fails with render.workerMemory, and the next request gets a fresh worker", async () => {
    const worker = new FaxImageWorker({ ...OPTIONS, memoryLimitMb: 64 });
    try {
      // 48 MB of text: decoding and laying it out needs some hundred MB of JavaScript heap.
      const huge: FaxJobRenderInput = { ...textJob(1), documents: [{ name: "huge.txt", bytes: Buffer.alloc(48 * 1024 * 1024, "word ") }] };
      const outcome = await worker.render(huge);
      assert.deepEqual(outcome, { ok: false, kind: "failed", message: "rendering needed more memory than render.workerMemory (64 MB) and was stopped" });
      assert.equal(pages(await worker.render(textJob(2))), 2);
    } finally {
      await worker.close();
    }
  });

  it("requests made at once are rendered one after the other, each with its own answer", async () => {
    const worker = new FaxImageWorker(OPTIONS);
    try {
      const outcomes = await Promise.all([worker.render(textJob(1)), worker.render(INPUT), worker.render({ ...INPUT, recipients: [] }), worker.render(textJob(2))]);
      assert.deepEqual(outcomes.map(pages), [1, 3, "failed", 2]);
    } finally {
      await worker.close();
    }
  });

  it("close() ends a render in progress as stopped", async () => {
    const worker = new FaxImageWorker(OPTIONS);
    assert.equal(pages(await worker.render(textJob(1))), 1, "a warm worker");
    const outcome = worker.render(textJob(50));
    // One turn of the event loop hands the request to the running worker; 50 pages take seconds.
    await new Promise((resolve) => setImmediate(resolve));
    await worker.close();
    assert.deepEqual(await outcome, { ok: false, kind: "stopped" });
    assert.equal(faxImageFailureDetail({ ok: false, kind: "stopped" }), "rendering was stopped before the fax image was done");
  });

  it("after close(), a request ends as stopped", async () => {
    const worker = new FaxImageWorker(OPTIONS);
    await worker.close();
    assert.deepEqual(await worker.render(INPUT), { ok: false, kind: "stopped" });
  });
});

describe("helpersWorthStartingEarly (faxline render and fax send)", () => {
  const doc = (name: string, size: number) => ({ name, bytes: new Uint8Array(size) });
  it("starts the page helpers early only for jobs whose PDFs may be shared", () => {
    // One small PDF (a letter) or documents that are never shared: the render worker keeps the second core.
    assert.equal(helpersWorthStartingEarly([doc("letter.pdf", 3_000)]), false);
    assert.equal(helpersWorthStartingEarly([doc("notes.txt", 500_000), doc("scan.tif", 2_000_000), doc("photo.jpg", 300_000)]), false);
    assert.equal(helpersWorthStartingEarly([doc("letter.pdf", 32 * 1024 - 1), doc("notes.txt", 100)]), false);
    // A larger PDF, two PDFs (shared as one sequence), or a document converted to PDF.
    assert.equal(helpersWorthStartingEarly([doc("report.pdf", 32 * 1024)]), true);
    assert.equal(helpersWorthStartingEarly([doc("letter.pdf", 3_000), doc("invoice.PDF", 10_000)]), true);
    assert.equal(helpersWorthStartingEarly([doc("contract.docx", 20_000)]), true);
    assert.equal(helpersWorthStartingEarly([doc("page.html", 2_000)]), true);
    assert.equal(helpersWorthStartingEarly([doc("drawing.ps", 2_000)]), true);
  });
});

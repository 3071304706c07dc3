/**
 * Page helper threads (src/render/page-helpers/): a long PDF rendered by the render thread and
 * helpers together gives the same fax image and preflight as one thread, page for page, with and
 * without a header drawn later; a page that cannot be rendered fails the job as it would on one
 * thread; a helper that dies mid-document leaves its pages to the render thread; and documents too
 * short to share, and other document types, never start a helper. Short PDFs that follow each
 * other in a job are shared as one sequence, with the same image, and fail where one thread fails.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { PDFDocument, StandardFonts, rgb } from "pdf-lib";
import sharp from "sharp";
import { PageHelperPool, PARALLEL_MIN_PAGES } from "../../src/render/page-helpers/page-helper-pool.ts";
import { openPdfDocument } from "../../src/render/pages/pdf-pages.ts";
import { DocumentRenderError, pageGeometry, type GreyPage, type RenderLimits } from "../../src/render/pages/grey-page.ts";
import { renderFaxJob, type FaxJobRenderInput } from "../../src/render/render-fax-job.ts";

type DocumentInputLike = { name: string; bytes: Buffer };
const LIMITS: RenderLimits = { maxPages: 100, maxSourcePixels: 200_000_000, converterTimeoutMs: 10_000 };
const A4: [number, number] = [595.28, 841.89];

/** `pages` A4 pages, each with its number in large text, a grey box, and on every third a grey photo; `hugeAt`: that page (0-based) is 400 inches wide. */
async function longPdf(pages: number, hugeAt: number | null = null): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const ramp = await sharp(Buffer.from(Array.from({ length: 300 * 200 }, (_, i) => (i % 300) * 0.8 + ((i / 300) | 0) * 0.1)), { raw: { width: 300, height: 200, channels: 1 } })
    .png()
    .toBuffer();
  const photo = await doc.embedPng(ramp);
  for (let n = 0; n < pages; n++) {
    const page = doc.addPage(n === hugeAt ? [400 * 72, 842] : A4);
    page.drawText(`Page ${n + 1}`, { x: 60, y: 700, size: 40, font });
    page.drawRectangle({ x: 60, y: 500, width: 300, height: 80, color: rgb(0.8, 0.8, 0.8) });
    for (let line = 0; line < 20; line++) page.drawText(`Line ${line} of page ${n + 1}: the quick brown fox.`, { x: 60, y: 470 - line * 14, size: 10, font });
    if (n % 3 === 2) page.drawImage(photo, { x: 300, y: 100, width: 250, height: 170 });
  }
  return Buffer.from(await doc.save());
}

function job(bytes: Buffer, header: boolean): FaxJobRenderInput {
  return {
    documents: [{ name: "long.pdf", bytes }],
    paperFormat: "A4",
    resolution: "LOW",
    header: header ? { template: "%d.%m.%Y %H:%M  From %C  Page %p of %P", csid: "+49 30 1234", timeZone: "UTC", time: Date.UTC(2026, 10, 26, 8) } : null,
    cover: null,
    overlay: null,
    recipients: [{ id: "r1", number: "+4930123456", properties: {} }],
    limits: LIMITS,
  };
}

const pools: PageHelperPool[] = [];
function pool(threads: number): PageHelperPool {
  const made = new PageHelperPool({ threads, memoryLimitMb: 512 });
  pools.push(made);
  return made;
}
after(async () => {
  await Promise.all(pools.map((p) => p.close()));
});

describe("page helpers", () => {
  it("render a long PDF to the same fax image and preflight as one thread, with and without a header", async () => {
    const bytes = await longPdf(11);
    const helpers = pool(3);
    for (const header of [false, true]) {
      const alone = await renderFaxJob(job(bytes, header));
      const shared = await renderFaxJob(job(bytes, header), { pageHelpers: helpers });
      assert.ok(alone.ok && shared.ok);
      assert.equal(shared.images[0]!.pageSizes.length, 11);
      assert.ok(shared.images[0]!.tiff.equals(alone.images[0]!.tiff), `header ${header}: the images differ`);
      assert.deepEqual(shared.images[0]!.preflight, alone.images[0]!.preflight);
    }
    assert.equal(helpers.helperWorkers.length, 2, "two helper threads started");
    // The job's tone mode reaches the helpers: PHOTO screens the pages whole, on one thread or three.
    const photoAlone = await renderFaxJob({ ...job(bytes, false), toneMode: "PHOTO" });
    const photoShared = await renderFaxJob({ ...job(bytes, false), toneMode: "PHOTO" }, { pageHelpers: helpers });
    assert.ok(photoAlone.ok && photoShared.ok);
    assert.ok(photoShared.images[0]!.tiff.equals(photoAlone.images[0]!.tiff));
    const auto = await renderFaxJob(job(bytes, false));
    assert.ok(auto.ok && !auto.images[0]!.tiff.equals(photoAlone.images[0]!.tiff), "PHOTO renders differently from AUTO");
  });

  it("fail the job at the page that cannot be rendered, as one thread does", async () => {
    const bytes = await longPdf(9, 6);
    const limited = { ...job(bytes, false), limits: { ...LIMITS, maxSourcePixels: 20_000_000 } };
    const alone = await renderFaxJob(limited);
    const shared = await renderFaxJob(limited, { pageHelpers: pool(2) });
    assert.equal(alone.ok, false);
    assert.deepEqual(shared, alone);
    assert.ok(!shared.ok && shared.reasonCode === "document_too_large" && /page 7 of long\.pdf/.test(shared.message), JSON.stringify(shared));
  });

  it("fail at the earliest failing page even when a later page fails first on the render thread", async () => {
    // Page 3 cannot be rendered (too large); page 5 throws an internal error whenever this thread
    // renders it (ahead of its turn, while it waits for a helper's page). The document must fail
    // with page 3's reason after pages 1 and 2, whichever thread renders what.
    const bytes = await longPdf(10, 2);
    const geometry = pageGeometry("A4", "LOW");
    const limits = { ...LIMITS, maxSourcePixels: 20_000_000 };
    const mode = { drawsLater: false, bandRows: geometry.headerBandPx, toneMode: "AUTO" as const, blankPages: null };
    const local = await openPdfDocument({ name: "long.pdf", bytes }, geometry, limits);
    const faulty = {
      ...local,
      usePage<T>(index: number, use: (page: GreyPage) => T): T {
        if (index === 4) throw new Error("a fault on page 5");
        return local.usePage(index, use);
      },
    };
    let handedOn = 0;
    try {
      await assert.rejects(
        async () => {
          for await (const _ of pool(2).preparePages([{ doc: { name: "long.pdf", bytes }, local: faulty }], geometry, limits, mode)) handedOn++;
        },
        (err: unknown) => err instanceof DocumentRenderError && err.reasonCode === "document_too_large" && /page 3 of long\.pdf/.test(err.message),
      );
    } finally {
      local.close();
    }
    assert.equal(handedOn, 2);
  });

  it("leave a dead helper's pages to the render thread", async () => {
    const bytes = await longPdf(12);
    const geometry = pageGeometry("A4", "LOW");
    const mode = { drawsLater: false, bandRows: geometry.headerBandPx, toneMode: "AUTO" as const, blankPages: null };
    const helpers = pool(2);
    const local = await openPdfDocument({ name: "long.pdf", bytes }, geometry, LIMITS);
    const pages = [];
    try {
      for await (const { page } of helpers.preparePages([{ doc: { name: "long.pdf", bytes }, local }], geometry, LIMITS, mode)) {
        if (pages.length === 0) {
          const [helper] = helpers.helperWorkers;
          assert.ok(helper !== undefined);
          await helper.terminate();
        }
        pages.push(page);
      }
    } finally {
      local.close();
    }
    const alone = await renderFaxJob(job(bytes, false));
    assert.ok(alone.ok);
    assert.deepEqual(
      pages.map((page) => (page.kind === "final" ? page.g4.strips.reduce((n, s) => n + s.length, 0) : -1)),
      alone.images[0]!.pageSizes,
    );
    // The next document gets a new helper.
    const again = await renderFaxJob(job(bytes, false), { pageHelpers: helpers });
    assert.ok(again.ok && again.images[0]!.tiff.equals(alone.images[0]!.tiff));
    assert.equal(helpers.helperWorkers.length, 1);
  });

  it("share a job's short PDFs as one sequence, with the same image as one thread, also across other documents", async () => {
    const sizes = [1, 2, 1, 1, 3];
    const pdfs = await Promise.all(sizes.map((pages) => longPdf(pages)));
    const documents = pdfs.map((bytes, n) => ({ name: `part-${n + 1}.pdf`, bytes }));
    const text = { name: "notes.txt", bytes: Buffer.from("A line of notes.\n".repeat(20)) };
    const cases: Array<[string, FaxJobRenderInput]> = [
      ["five PDFs", { ...job(Buffer.alloc(0), false), documents }],
      ["five PDFs, header", { ...job(Buffer.alloc(0), true), documents }],
      ["PDFs around a text document", { ...job(Buffer.alloc(0), false), documents: [...documents.slice(0, 3), text, ...documents.slice(3)] }],
      // More PDFs than one run takes (MAX_PDF_RUN, 8): two runs.
      ["eleven one-page PDFs", { ...job(Buffer.alloc(0), false), documents: Array.from({ length: 11 }, (_, n) => ({ name: `one-${n}.pdf`, bytes: pdfs[n % 2 === 0 ? 0 : 2]! })) }],
    ];
    const helpers = pool(2);
    for (const [what, input] of cases) {
      const alone = await renderFaxJob(input);
      const shared = await renderFaxJob(input, { pageHelpers: helpers });
      assert.ok(alone.ok && shared.ok, what);
      assert.ok(shared.images[0]!.tiff.equals(alone.images[0]!.tiff), `${what}: the images differ`);
      assert.deepEqual(shared.images[0]!.preflight, alone.images[0]!.preflight, what);
    }
    assert.equal(helpers.helperWorkers.length, 1, "the helper shared the short PDFs");
  });

  it("fail a run of short PDFs at the document that fails, named, as one thread does", async () => {
    const first = await longPdf(2);
    const last = await longPdf(3);
    const limits = { ...LIMITS, maxSourcePixels: 20_000_000 };
    const cases: Array<[string, DocumentInputLike, string]> = [
      ["a first page too large to render", { name: "huge.pdf", bytes: await longPdf(2, 0) }, "document_too_large"],
      ["a later page too large to render", { name: "huge.pdf", bytes: await longPdf(2, 1) }, "document_too_large"],
      ["a file that is not a PDF", { name: "broken.pdf", bytes: Buffer.from("%PDF-1.4 this is not a PDF") }, "document_unreadable"],
    ];
    for (const [what, bad, reasonCode] of cases) {
      for (const documents of [
        [{ name: "first.pdf", bytes: first }, bad, { name: "last.pdf", bytes: last }],
        [bad, { name: "last.pdf", bytes: last }],
      ]) {
        const input = { ...job(Buffer.alloc(0), false), limits, documents };
        const alone = await renderFaxJob(input);
        const shared = await renderFaxJob(input, { pageHelpers: pool(2) });
        assert.ok(!alone.ok && alone.reasonCode === reasonCode && alone.documentName === bad.name, `${what}: ${JSON.stringify(alone)}`);
        assert.deepEqual(shared, alone, `${what}, ${documents.length} documents`);
      }
    }
    // The page limit over the run: the document that passes it is named.
    const capped = { ...job(Buffer.alloc(0), false), limits: { ...LIMITS, maxPages: 4 }, documents: [{ name: "first.pdf", bytes: first }, { name: "last.pdf", bytes: last }] };
    const alone = await renderFaxJob(capped);
    const shared = await renderFaxJob(capped, { pageHelpers: pool(2) });
    assert.ok(!alone.ok && alone.reasonCode === "document_too_large" && alone.documentName === "last.pdf", JSON.stringify(alone));
    assert.deepEqual(shared, alone);
  });

  it("are not started for short PDFs or other documents", async () => {
    const helpers = pool(2);
    const short = await renderFaxJob(job(await longPdf(PARALLEL_MIN_PAGES - 1), false), { pageHelpers: helpers });
    const text = await renderFaxJob({ ...job(Buffer.alloc(0), false), documents: [{ name: "a.txt", bytes: Buffer.from("x\n".repeat(500)) }] }, { pageHelpers: helpers });
    assert.ok(short.ok && text.ok);
    assert.equal(short.images[0]!.pageSizes.length, PARALLEL_MIN_PAGES - 1);
    assert.ok(text.images[0]!.pageSizes.length >= PARALLEL_MIN_PAGES);
    assert.equal(helpers.helperWorkers.length, 0);
  });

  it("started early (as faxline render asks) are the ones the first long PDF uses, with the same image", async () => {
    const helpers = pool(2);
    helpers.startHelpers();
    const [early] = helpers.helperWorkers;
    assert.ok(early !== undefined, "the helper started before any document");
    const bytes = await longPdf(6);
    const alone = await renderFaxJob(job(bytes, false));
    const shared = await renderFaxJob(job(bytes, false), { pageHelpers: helpers });
    assert.ok(alone.ok && shared.ok && shared.images[0]!.tiff.equals(alone.images[0]!.tiff));
    assert.deepEqual(helpers.helperWorkers, [early], "no second helper was started");
  });
});

/**
 * Blank pages (src/render/preflight/blank-page.ts) on pages rendered as a job's pages are: PDFs
 * made with pdf-lib, rendered through PDFium, placed on the fax page and made bilevel by
 * preparePage (prepare-page.ts), at both resolutions.
 *  - An empty page is blank; so is a scan of an empty sheet (a JPEG at 300 dpi with paper noise,
 *    dust specks and a scanner's dark border).
 *  - A page with one short line ("Page 2" in 6 to 12 point, where a footer goes) is not blank,
 *    although it has less ink than the dust share allows: its strokes are longer than dust.
 *  - A scan with a line of text, or with more dust than the share allows, is not blank.
 *  - renderFaxJob with suppressBlankPages: a blank page in the middle is left out (with and
 *    without a header line, on one thread and with page helpers), the header's page numbers and
 *    the cover page count the pages kept, a job of blank pages fails with document_blank, and
 *    nothing changes without the option.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { PDFDocument, StandardFonts, type PDFFont } from "pdf-lib";
import sharp from "sharp";
import { documentPages } from "../../src/render/pages/document-pages.ts";
import { pageGeometry, type DocumentInput, type RenderLimits, type Resolution } from "../../src/render/pages/grey-page.ts";
import { preparePage } from "../../src/render/prepare-page.ts";
import { unpackBilevel } from "../../src/render/fax-image/packed-bilevel.ts";
import { readTiffPages } from "../../src/render/fax-image/tiff-structure.ts";
import { blankPageRule, DUST_MAX_BLACK_RATIO, inspectBlankPage, isBlankPage, type BlankPageInspection } from "../../src/render/preflight/blank-page.ts";
import { renderFaxJob, type FaxJobRenderInput, type FaxJobRenderResult } from "../../src/render/render-fax-job.ts";
import { PageHelperPool } from "../../src/render/page-helpers/page-helper-pool.ts";

const LIMITS: RenderLimits = { maxPages: 50, maxSourcePixels: 200_000_000, converterTimeoutMs: 60_000 };
const RESOLUTIONS: Resolution[] = ["HIGH", "LOW"];
const A4_PT = [595.28, 841.89] as const;

/** The bilevel pixels of every page of `doc` as the first pass of a job makes them (preparePage). */
async function bilevelPages(doc: DocumentInput, resolution: Resolution): Promise<{ pixels: Uint8Array; width: number; height: number }[]> {
  const geometry = pageGeometry("A4", resolution);
  const pages = [];
  for await (const grey of documentPages(doc, geometry, LIMITS)) {
    const prepared = preparePage(grey, { drawsLater: true, bandRows: geometry.headerBandPx, toneMode: "AUTO", blankPages: null });
    assert.equal(prepared.kind, "packed");
    if (prepared.kind !== "packed") continue;
    pages.push({ pixels: unpackBilevel(prepared.packed), width: prepared.packed.width, height: prepared.packed.height });
  }
  return pages;
}

/** The inspection of every page, whole (`complete`); the early-stopping one must decide the same. */
async function inspectPages(doc: DocumentInput, resolution: Resolution): Promise<BlankPageInspection[]> {
  const rule = blankPageRule(pageGeometry("A4", resolution));
  return (await bilevelPages(doc, resolution)).map((page) => {
    const whole = inspectBlankPage(page.pixels, page, rule, true);
    assert.equal(isBlankPage(page.pixels, page, rule), whole.blank, "the early stop decides as the whole page does");
    return whole;
  });
}

/** A PDF of A4 pages, each drawn by its function (nothing: an empty page). */
async function pdf(pages: ((page: ReturnType<PDFDocument["addPage"]>, fonts: Record<string, PDFFont>) => void)[]): Promise<DocumentInput> {
  const doc = await PDFDocument.create();
  const fonts = {
    Helvetica: await doc.embedFont(StandardFonts.Helvetica),
    Times: await doc.embedFont(StandardFonts.TimesRoman),
    Courier: await doc.embedFont(StandardFonts.Courier),
    Bold: await doc.embedFont(StandardFonts.HelveticaBold),
  };
  for (const draw of pages) draw(doc.addPage([...A4_PT]), fonts);
  return { name: "doc.pdf", bytes: await doc.save() };
}

/** A deterministic pseudo-random sequence (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/**
 * A scan of an empty A4 sheet at 300 dpi as a scanner's PDF holds it (JPEG, quality 75): paper of
 * grey `paper` with noise, `specks` specks of dust 3–7 pixels across (0.25–0.6 mm), and a dark
 * border of `border` pixels where the lid shows.
 */
async function scannedSheet(options: { paper: number; specks: number; border: number; seed: number }): Promise<Buffer> {
  const width = 2480;
  const height = 3508;
  const pixels = new Uint8Array(width * height);
  const next = random(options.seed);
  for (let i = 0; i < pixels.length; i++) pixels[i] = Math.max(0, Math.min(255, Math.round(options.paper + (next() + next() + next() - 1.5) * 10)));
  // Each speck in a cell of its own (a jittered grid), so that no two touch.
  const columns = Math.ceil(Math.sqrt((options.specks * (width - 200)) / (height - 200)));
  const cellWidth = (width - 200) / columns;
  const cellHeight = (height - 200) / Math.max(1, Math.ceil(options.specks / columns));
  for (let s = 0; s < options.specks; s++) {
    const cx = 100 + Math.floor(((s % columns) + 0.2 + 0.6 * next()) * cellWidth);
    const cy = 100 + Math.floor((Math.floor(s / columns) + 0.2 + 0.6 * next()) * cellHeight);
    const radius = 1 + next() * 3;
    const grey = 40 + Math.floor(next() * 60);
    for (let y = -4; y <= 4; y++) for (let x = -4; x <= 4; x++) if (x * x + y * y <= radius * radius) pixels[(cy + y) * width + cx + x] = grey;
  }
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (x < options.border || x >= width - options.border || y < options.border || y >= height - options.border) pixels[y * width + x] = 30;
    }
  }
  return sharp(pixels, { raw: { width, height, channels: 1 } }).jpeg({ quality: 75 }).toBuffer();
}

/** The scan as a one-page PDF filling the page, with `text` written on it (as a scanned letter would show it), if any. */
async function scanPdf(jpeg: Buffer, text: string | null = null): Promise<DocumentInput> {
  const doc = await PDFDocument.create();
  const image = await doc.embedJpg(jpeg);
  const page = doc.addPage([...A4_PT]);
  page.drawImage(image, { x: 0, y: 0, width: A4_PT[0], height: A4_PT[1] });
  if (text !== null) page.drawText(text, { x: 280, y: 60, size: 10, font: await doc.embedFont(StandardFonts.Helvetica) });
  return { name: "scan.pdf", bytes: await doc.save() };
}

describe("blank pages: the detector on rendered pages", () => {
  it("an empty page is blank, with no black pixel at all", async () => {
    const doc = await pdf([() => {}]);
    for (const resolution of RESOLUTIONS) {
      const [page] = await inspectPages(doc, resolution);
      assert.deepEqual({ blank: page!.blank, black: page!.blackPixels }, { blank: true, black: 0 }, resolution);
    }
  });

  it("a page with one short line (\"Page 2\", 6–12 pt, where a footer goes) is not blank, though its ink is within the dust share", async () => {
    const fonts = ["Helvetica", "Times", "Courier"] as const;
    const sizes = [6, 8, 10, 12];
    const cases = fonts.flatMap((font) => sizes.map((size) => ({ font, size })));
    const doc = await pdf(cases.map(({ font, size }) => (page, embedded) => page.drawText("Page 2", { x: 280, y: 40, size, font: embedded[font]! })));
    for (const resolution of RESOLUTIONS) {
      const pages = await inspectPages(doc, resolution);
      assert.equal(pages.length, cases.length);
      for (const [i, page] of pages.entries()) {
        const what = `${cases[i]!.font} ${cases[i]!.size} pt at ${resolution}: ${JSON.stringify(page)}`;
        assert.equal(page.blank, false, what);
        assert.ok(page.blackPixels > 0 && page.blackPixels <= page.maxBlackPixels, `the share alone would call it blank: ${what}`);
      }
    }
  });

  it("a dot or a hyphen alone is dust; a single \"i\" or \"1\" is not", async () => {
    const doc = await pdf(
      [".", "-", "i", "1"].map((text) => (page, fonts) => page.drawText(text, { x: 280, y: 400, size: text === "1" ? 6 : 10, font: fonts.Helvetica! })),
    );
    for (const resolution of RESOLUTIONS) {
      const blank = (await inspectPages(doc, resolution)).map((p) => p.blank);
      assert.deepEqual(blank, [true, true, false, false], resolution);
    }
  });

  it("a scan of an empty sheet with dust specks and the scanner's dark border is blank", async () => {
    for (const [paper, seed] of [
      [248, 1],
      [240, 2],
    ] as const) {
      // 24 pixels at 300 dpi: a border 2 mm wide.
      const doc = await scanPdf(await scannedSheet({ paper, specks: 60, border: 24, seed }));
      for (const resolution of RESOLUTIONS) {
        const [page] = await inspectPages(doc, resolution);
        const what = `paper ${paper} at ${resolution}: ${JSON.stringify(page)}`;
        assert.equal(page!.blank, true, what);
        assert.ok(page!.blackPixels > 0, `the dust is seen: ${what}`);
      }
    }
  });

  it("a scan with a short line of text, or with more dust than the share allows, is not blank", async () => {
    const sheet = await scannedSheet({ paper: 240, specks: 60, border: 24, seed: 3 });
    const withText = await scanPdf(sheet, "Page 2");
    const dusty = await scanPdf(await scannedSheet({ paper: 240, specks: 1000, border: 0, seed: 4 }));
    for (const resolution of RESOLUTIONS) {
      const [text] = await inspectPages(withText, resolution);
      assert.equal(text!.blank, false, `with text at ${resolution}`);
      const [dust] = await inspectPages(dusty, resolution);
      assert.equal(dust!.blank, false, `much dust at ${resolution}: ${JSON.stringify(dust)}`);
      assert.ok(dust!.blackPixels > dust!.maxBlackPixels, "too much ink for dust");
      assert.ok(dust!.longestRunX <= blankPageRule(pageGeometry("A4", resolution)).maxRunX, "though every speck is dust-sized");
    }
  });

  it("the rule in pixels: margins, the longest dust and the share, at both resolutions", () => {
    assert.deepEqual(blankPageRule(pageGeometry("A4", "HIGH")), { marginX: 82, marginTop: 98, marginBottom: 49, maxRunX: 8, maxRunY: 7, maxBlackRatio: DUST_MAX_BLACK_RATIO });
    assert.deepEqual(blankPageRule(pageGeometry("A4", "LOW")), { marginX: 82, marginTop: 49, marginBottom: 25, maxRunX: 8, maxRunY: 3, maxBlackRatio: DUST_MAX_BLACK_RATIO });
  });
});

describe("blank pages: renderFaxJob with suppressBlankPages", () => {
  const pools: PageHelperPool[] = [];
  after(async () => {
    await Promise.all(pools.map((p) => p.close()));
  });
  const TIME = Date.UTC(2026, 10, 29, 9);
  const letter = (texts: string[]) => pdf(texts.map((text) => (page, fonts) => (text === "" ? undefined : page.drawText(text, { x: 60, y: 700, size: 28, font: fonts.Bold! }))));
  const input = (documents: DocumentInput[], options: Partial<FaxJobRenderInput> = {}): FaxJobRenderInput => ({
    documents,
    paperFormat: "A4",
    resolution: "LOW",
    header: null,
    cover: null,
    overlay: null,
    recipients: [{ id: "r1", number: "+4930123456", properties: {} }],
    limits: LIMITS,
    ...options,
  });
  const rendered = (result: FaxJobRenderResult) => {
    if (!result.ok) assert.fail(`${result.reasonCode}: ${result.message}`);
    return result;
  };
  const pages = (result: FaxJobRenderResult) => readTiffPages(rendered(result).images[0]!.tiff).length;

  it("leaves a blank middle page out, with and without a header line, and keeps it without the option", async () => {
    const three = await letter(["Order page 1", "", "Order page 3"]);
    const two = await letter(["Order page 1", "Order page 3"]);
    for (const header of [null, { template: "%d.%m.%Y %H:%M  Page %P of %T", csid: "+49 30 1234", timeZone: "UTC", time: TIME }]) {
      const kept = rendered(await renderFaxJob(input([three], { header })));
      assert.equal(pages(kept), 3);
      assert.equal(kept.blankPagesLeftOut, 0);
      const suppressed = rendered(await renderFaxJob(input([three], { header, suppressBlankPages: true })));
      assert.equal(pages(suppressed), 2, `header ${header !== null}`);
      assert.equal(suppressed.blankPagesLeftOut, 1);
      assert.equal(suppressed.images[0]!.preflight.length, 2);
      // The header numbers the pages kept ("Page 2 of 2"): the same image as the letter without the blank page.
      const without = rendered(await renderFaxJob(input([two], { header })));
      assert.ok(suppressed.images[0]!.tiff.equals(without.images[0]!.tiff), `header ${header !== null}: not the image of the two pages`);
    }
  });

  it("counts blank pages toward the page limit: leaving them out lets no job through that the limit refuses", async () => {
    const three = await letter(["Order page 1", "", "Order page 3"]);
    const limited = { ...LIMITS, maxPages: 2 };
    for (const suppressBlankPages of [false, true]) {
      const result = await renderFaxJob(input([three], { limits: limited, suppressBlankPages }));
      assert.equal(result.ok, false, `suppressBlankPages ${suppressBlankPages}`);
      if (!result.ok) assert.equal(result.reasonCode, "document_too_large");
    }
    assert.equal(pages(await renderFaxJob(input([three], { limits: { ...LIMITS, maxPages: 3 }, suppressBlankPages: true }))), 2);
  });

  it("counts only the pages kept on the cover page, and the page helpers leave out the same pages", async () => {
    const three = await letter(["Order page 1", "", "Order page 3"]);
    const two = await letter(["Order page 1", "Order page 3"]);
    const cover = { kind: "svg" as const, content: null, time: TIME, timeZone: "UTC" };
    const suppressed = rendered(await renderFaxJob(input([three], { cover, suppressBlankPages: true })));
    const without = rendered(await renderFaxJob(input([two], { cover })));
    assert.equal(pages(suppressed), 3, "the cover page and two pages");
    assert.ok(suppressed.images[0]!.tiff.equals(without.images[0]!.tiff), "the cover page says 3 pages, as for the letter without the blank page");

    const helpers = new PageHelperPool({ threads: 2, memoryLimitMb: 512 });
    pools.push(helpers);
    const long = await letter(["Page 1", "", "Page 3", "", "", "Page 6", ""]);
    const alone = rendered(await renderFaxJob(input([long, three], { suppressBlankPages: true })));
    const shared = rendered(await renderFaxJob(input([long, three], { suppressBlankPages: true }), { pageHelpers: helpers }));
    assert.equal(alone.blankPagesLeftOut, 5);
    assert.equal(pages(alone), 5);
    assert.deepEqual(shared, alone);
  });

  it("fails a job whose every page is blank with document_blank, and sends the cover page alone when there is one", async () => {
    const empty = await letter(["", ""]);
    const emptyScan = await scanPdf(await scannedSheet({ paper: 245, specks: 30, border: 0, seed: 5 }));
    const result = await renderFaxJob(input([empty, { ...emptyScan, name: "back-side.pdf" }], { suppressBlankPages: true }));
    assert.deepEqual(result, {
      ok: false,
      reasonCode: "document_blank",
      documentName: "",
      message: "Every page is blank (3 pages of doc.pdf, back-side.pdf), and blank pages are left out: there is nothing to fax",
    });
    const alone = await renderFaxJob(input([empty], { suppressBlankPages: true }));
    assert.ok(!alone.ok && alone.reasonCode === "document_blank" && alone.documentName === "doc.pdf", JSON.stringify(alone));
    assert.equal(pages(await renderFaxJob(input([empty]))), 2, "without the option the blank pages are sent");
    const cover = { kind: "svg" as const, content: null, time: TIME, timeZone: "UTC" };
    assert.equal(pages(await renderFaxJob(input([empty], { cover, suppressBlankPages: true }))), 1, "the cover page alone");
  });
});

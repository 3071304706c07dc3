/**
 * renderFaxJob (src/render/render-fax-job.ts): a job's documents, cover page, overlay and header
 * line rendered into one TIFF-F per recipient variant.
 *  - Documents: the pages of every document in order, whatever its type (text, PDF, PNG, G4 fax
 *    TIFF), each text document decoded by its own charset.
 *  - Failures: the reason, the document's name and the message (unknown extension, bad UTF-8,
 *    unsupported charset, blank text, a damaged PDF or overlay, the page limit naming the
 *    document that crosses it); an internal fault (no recipients) throws.
 *  - Variants: recipients who see the same pages share an image; a cover page that differs
 *    (ToName, ToFaxNum) or a header naming the recipient (%#, %K) gives each its own.
 *  - The header line: drawn into the top band of every page (the cover page too), page numbers
 *    differ between pages, rows below the band are those of the page without a header, the same
 *    bytes on every render.
 *  - Overlay modes on a three-page job with a cover page: exactly the pages the mode names get
 *    darker.
 *  - Preflight per page (a blank page is flagged, with and without a header) and the page
 *    geometry of every paper format and resolution.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { PDFDocument, StandardFonts } from "pdf-lib";
import sharp from "sharp";
import { missingConverterMessage } from "../../src/render/convert/converter-availability.ts";
import { unknownTypeMessage } from "../../src/render/document-types.ts";
import { readTiffPages } from "../../src/render/fax-image/tiff-structure.ts";
import { OVERLAY_MODES, overlaidPages, type OverlayMode } from "../../src/render/overlay/overlay-pages.ts";
import { pageGeometry, type DocumentInput, type PaperFormat, type RenderLimits, type Resolution } from "../../src/render/pages/grey-page.ts";
import {
  headerPersonalisation,
  renderFaxJob,
  type CoverSpec,
  type FaxImageVariant,
  type FaxJobRenderInput,
  type FaxJobRenderResult,
  type HeaderSpec,
  type RecipientSpec,
} from "../../src/render/render-fax-job.ts";
import { blackPixels, decodePage, decodePages, renderedImages, renderOneImage, rows, type PagePixels } from "../support/fax-page-pixels.ts";
import { faxTiff } from "../support/fax-tiff.ts";

const LIMITS: RenderLimits = { maxPages: 50, maxSourcePixels: 200_000_000, converterTimeoutMs: 60_000 };
const TIME = Date.UTC(2026, 10, 21, 9, 30);
const RECIPIENT: RecipientSpec = { id: "r1", number: "+4989000001000", properties: {} };
const HIGH_BAND = pageGeometry("A4", "HIGH").headerBandPx;

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const textDoc = (name: string, text: string, charset?: string | null): DocumentInput => ({ name, bytes: utf8(text), charset });
const lines = (count: number, prefix = "line"): string => Array.from({ length: count }, (_, i) => `${prefix} ${i + 1}: the quick brown fox`).join("\n");

function job(documents: DocumentInput[], options: Partial<Omit<FaxJobRenderInput, "documents">> = {}): FaxJobRenderInput {
  return { documents, paperFormat: "A4", resolution: "HIGH", header: null, cover: null, overlay: null, recipients: [RECIPIENT], limits: LIMITS, ...options };
}

function header(template: string): HeaderSpec {
  return { template, csid: "+49 89 0000000", timeZone: "Europe/Berlin", time: TIME };
}

const DEFAULT_COVER: CoverSpec = { kind: "svg", content: null, time: TIME, timeZone: "Europe/Berlin" };

function failure(result: FaxJobRenderResult): Extract<FaxJobRenderResult, { ok: false }> {
  if (result.ok) assert.fail(`expected the job to fail, it rendered ${result.images.length} image(s)`);
  return result;
}

/** The G4 data of page `index` (its strips, joined). */
function pageData(tiff: Buffer, index: number): Buffer {
  const page = readTiffPages(tiff)[index];
  assert.ok(page !== undefined, `no page ${index + 1}`);
  return Buffer.concat(page.stripOffsets.map((offset, i) => tiff.subarray(offset, offset + page.stripByteCounts[i]!)));
}

function pageCount(image: FaxImageVariant): number {
  return readTiffPages(image.tiff).length;
}

/** A PDF of `texts.length` A4 pages, each showing its text large; an empty text leaves the page blank. */
async function pdfOf(texts: string[]): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.HelveticaBold);
  for (const text of texts) {
    const page = pdf.addPage([595.28, 841.89]);
    if (text !== "") page.drawText(text, { x: 60, y: 700, size: 40, font });
  }
  return pdf.save();
}

/** A PNG of `width` x `height` white pixels with a black box in the given place. */
function pngWithBox(width: number, height: number, box: { left: number; top: number; width: number; height: number }): Promise<Buffer> {
  const data = Buffer.alloc(width * height, 255);
  for (let y = box.top; y < box.top + box.height; y++) data.fill(0, y * width + box.left, y * width + box.left + box.width);
  return sharp(data, { raw: { width, height, channels: 1 } }).png().toBuffer();
}

describe("renderFaxJob: documents", () => {
  it("renders the pages of text, PDF, PNG and G4 fax TIFF documents in order, each as it renders alone", async () => {
    const documents: DocumentInput[] = [
      textDoc("letter.txt", lines(70, "letter")),
      { name: "two-pages.pdf", bytes: await pdfOf(["PDF page one", "PDF page two"]) },
      { name: "picture.png", bytes: await pngWithBox(400, 300, { left: 50, top: 40, width: 200, height: 120 }) },
      { name: "scan.tif", bytes: await faxTiff(2, { yDpi: 98 }) },
    ];
    const all = await renderOneImage(job(documents));
    const expected: Buffer[] = [];
    const counts: number[] = [];
    for (const doc of documents) {
      const alone = await renderOneImage(job([doc]));
      counts.push(alone.pageSizes.length);
      for (let page = 0; page < alone.pageSizes.length; page++) expected.push(pageData(alone.tiff, page));
    }
    assert.deepEqual(counts, [2, 2, 1, 2], "pages per document");
    const pages = readTiffPages(all.tiff);
    assert.equal(pages.length, 7);
    assert.deepEqual(all.pageSizes, pages.map((p) => p.encodedBytes));
    assert.deepEqual(pages.map((p) => p.pageNumber), pages.map((_, i) => ({ page: i, of: 7 })));
    for (const [index, data] of expected.entries()) assert.ok(pageData(all.tiff, index).equals(data), `page ${index + 1}`);
    // Every page is a different one (the order test above would not see two equal pages swapped).
    assert.equal(new Set(expected.map((data) => data.toString("base64"))).size, 7);
  });

  it("decodes each text document by its own charset", async () => {
    const decoded = await renderOneImage(
      job([
        { name: "w.txt", charset: "Windows-1252", bytes: Uint8Array.of(0x80, 0x20, 0xe4) },
        { name: "l.txt", charset: "ISO-8859-1", bytes: Uint8Array.of(0x41, 0xe4, 0x80) },
        { name: "u.txt", charset: "UTF-16", bytes: Uint8Array.of(0xff, 0xfe, 0xac, 0x20, 0x21, 0x00) },
        { name: "plain.txt", charset: null, bytes: utf8("Grüße") },
      ]),
    );
    // Latin-1 0x80 is a C1 control, which prints nothing.
    const reference = await renderOneImage(job([textDoc("a.txt", "€ ä"), textDoc("b.txt", "Aä"), textDoc("c.txt", "€!"), textDoc("d.txt", "Grüße")]));
    assert.equal(decoded.pageSizes.length, 4);
    for (let page = 0; page < 4; page++) assert.ok(pageData(decoded.tiff, page).equals(pageData(reference.tiff, page)), `page ${page + 1}`);
    const misread = await renderOneImage(job([{ name: "w.txt", charset: "ISO-8859-1", bytes: Uint8Array.of(0x80, 0x20, 0xe4) }]));
    assert.ok(!pageData(misread.tiff, 0).equals(pageData(reference.tiff, 0)), "the charset makes the difference");
  });

  it("renders a cover page alone when the job has no documents", async () => {
    const image = await renderOneImage(job([], { cover: DEFAULT_COVER }));
    assert.equal(pageCount(image), 1);
    assert.equal(image.preflight.length, 1);
    assert.equal(image.preflight[0]!.blank, false);
  });
});

describe("renderFaxJob: failures name the document", () => {
  it("an unknown extension or none: document_type_unsupported with unknownTypeMessage", async () => {
    for (const name of ["data.csv", "README"]) {
      const result = failure(await renderFaxJob(job([textDoc("letter.txt", "hello"), textDoc(name, "a,b")])));
      assert.deepEqual(result, { ok: false, reasonCode: "document_type_unsupported", documentName: name, message: unknownTypeMessage(name) });
    }
  });

  it("text that is not valid UTF-8: document_unreadable naming the byte offset", async () => {
    const result = failure(await renderFaxJob(job([textDoc("ok.txt", "fine"), { name: "bad.txt", charset: "UTF-8", bytes: Uint8Array.of(0x41, 0x42, 0xff, 0x43) }])));
    assert.equal(result.reasonCode, "document_unreadable");
    assert.equal(result.documentName, "bad.txt");
    assert.equal(result.message, "bad.txt: Text is not valid UTF-8: invalid or incomplete byte sequence at byte offset 2 (byte 0xFF). The text was read as UTF-8; set the document's charset field to the encoding it was saved in (US-ASCII, UTF-8, UTF-16, UTF-16BE, UTF-16LE, ISO-8859-1, Windows-1252)");
  });

  it("an unsupported charset: document_unreadable naming it", async () => {
    const result = failure(await renderFaxJob(job([textDoc("x.txt", "hi", "EBCDIC")])));
    assert.equal(result.reasonCode, "document_unreadable");
    assert.equal(result.documentName, "x.txt");
    assert.match(result.message, /^x\.txt: Charset "EBCDIC" is not supported/);
  });

  it("text without printable content: document_unreadable", async () => {
    const result = failure(await renderFaxJob(job([textDoc("a.txt", "hi"), textDoc("blank.txt", " \n\f\n\t")])));
    assert.deepEqual(result, { ok: false, reasonCode: "document_unreadable", documentName: "blank.txt", message: "blank.txt has no printable content" });
  });

  it("a damaged PDF: document_unreadable", async () => {
    const result = failure(await renderFaxJob(job([textDoc("a.txt", "hi"), { name: "scan.pdf", bytes: utf8("%PDF-1.4\nnot really\n") }])));
    assert.equal(result.reasonCode, "document_unreadable");
    assert.equal(result.documentName, "scan.pdf");
    assert.match(result.message, /^scan\.pdf cannot be read as a PDF: /);
  });

  it("a damaged overlay: document_unreadable naming the overlay", async () => {
    const overlay = { document: { name: "stamp.pdf", bytes: utf8("garbage") }, mode: "ALL_PAGES" as const };
    const result = failure(await renderFaxJob(job([textDoc("a.txt", "hi")], { overlay })));
    assert.equal(result.reasonCode, "document_unreadable");
    assert.equal(result.documentName, "stamp.pdf");
    assert.match(result.message, /stamp\.pdf/);
  });

  it("the page limit: document_too_large naming the document that crosses it, the cover page counted", async () => {
    const docs = [textDoc("a.txt", lines(63)), textDoc("b.txt", "one more page")];
    assert.equal(renderedImages(await renderFaxJob(job(docs, { limits: { ...LIMITS, maxPages: 3 } })))[0]!.pageSizes.length, 3);
    assert.deepEqual(failure(await renderFaxJob(job(docs, { limits: { ...LIMITS, maxPages: 2 } }))), {
      ok: false,
      reasonCode: "document_too_large",
      documentName: "b.txt",
      message: "b.txt brings the fax to more than the limit of 2 pages",
    });
    const first = failure(await renderFaxJob(job(docs, { limits: { ...LIMITS, maxPages: 1 } })));
    assert.equal(first.documentName, "a.txt");
    assert.equal(first.message, "a.txt brings the fax to more than the limit of 1 page");
    const withCover = failure(await renderFaxJob(job(docs, { cover: DEFAULT_COVER, limits: { ...LIMITS, maxPages: 3 } })));
    assert.equal(withCover.reasonCode, "document_too_large");
    assert.equal(withCover.documentName, "b.txt");
  });

  it("the page limit across documents of other types: a PDF that crosses it", async () => {
    const docs = [textDoc("a.txt", "one page"), { name: "three.pdf", bytes: await pdfOf(["1", "2", "3"]) }];
    const result = failure(await renderFaxJob(job(docs, { limits: { ...LIMITS, maxPages: 3 } })));
    assert.deepEqual(result, { ok: false, reasonCode: "document_too_large", documentName: "three.pdf", message: "three.pdf brings the fax to more than the limit of 3 pages" });
  });

  it("an SVG cover template that refers to another file: document_unreadable naming the cover page", async () => {
    const content = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 210 297"><image href="http://example.com/logo.png" width="50" height="20"/></svg>`;
    const result = failure(await renderFaxJob(job([textDoc("a.txt", "hi")], { cover: { ...DEFAULT_COVER, content } })));
    assert.equal(result.reasonCode, "document_unreadable");
    assert.equal(result.documentName, "the cover page");
    assert.match(result.message, /^The cover page template cannot be rendered: .*external resource \(href="http:\/\/example\.com\/logo\.png"\)/);
  });

  it(
    "a cover template that needs a property the recipient lacks: document_unreadable naming the cover page",
    async () => {
      const content = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 210 297"><text x="20" y="40" font-size="12">\${ToName}</text></svg>`;
      const overlay = { document: textDoc("stamp.txt", "COPY"), mode: "ALL_PAGES" as const };
      for (const options of [{}, { overlay }]) {
        const result = failure(await renderFaxJob(job([textDoc("a.txt", "hi")], { ...options, cover: { ...DEFAULT_COVER, content } })));
        assert.equal(result.reasonCode, "document_unreadable");
        assert.match(result.message, /^The cover page cannot be filled for \+4989000001000: The cover page template needs the property ToName, /);
        assert.equal(result.documentName, "the cover page");
      }
    },
  );

  it("a job without recipients is an internal error, not a document failure", async () => {
    await assert.rejects(renderFaxJob(job([textDoc("a.txt", "hi")], { recipients: [] })), RangeError);
  });
});

describe("renderFaxJob: recipient variants", () => {
  const recipients: RecipientSpec[] = [
    { id: "a", number: "+4989000001001", properties: { ToName: "Anna" } },
    { id: "b", number: "+4989000001002", properties: { ToName: "Bert" } },
    { id: "c", number: "+4989000001003", properties: { ToName: "Anna" } },
  ];
  const docs = [textDoc("letter.txt", lines(10))];

  it("without a cover page and with a header that names no recipient, all recipients share one image", async () => {
    for (const spec of [null, header("%d.%m.%Y %H:%M  From %C%rPage %P of %T")]) {
      const images = renderedImages(await renderFaxJob(job(docs, { recipients, header: spec })));
      assert.equal(images.length, 1, spec?.template ?? "no header");
      assert.deepEqual(images[0]!.recipientIds, ["a", "b", "c"]);
    }
  });

  it("the default cover page: one image per distinct cover, recipients with the same cover share", async () => {
    const many: RecipientSpec[] = [
      { id: "a", number: "+4989000001001", properties: { ToName: "Anna" } },
      { id: "b", number: "+4989000001001", properties: { ToName: "Bert" } },
      { id: "c", number: "+4989000001001", properties: { ToName: "Anna" } },
      // The cover page shows ToFaxNum, which defaults to the number...
      { id: "d", number: "+4989000001004", properties: { ToName: "Anna" } },
      // ... unless the recipient has the property.
      { id: "e", number: "+4989000001005", properties: { ToName: "Anna", ToFaxNum: "+4989000001001" } },
    ];
    const images = renderedImages(await renderFaxJob(job(docs, { recipients: many, cover: DEFAULT_COVER })));
    assert.deepEqual(images.map((image) => image.recipientIds), [["a", "c", "e"], ["b"], ["d"]]);
    const covers = await Promise.all(images.map((image) => decodePage(image.tiff, 0)));
    const anna = covers[0]!;
    for (const other of covers.slice(1)) assert.ok(!other.pixels.equals(anna.pixels), "the cover pages differ");
    for (const image of images) {
      assert.equal(pageCount(image), 2);
      assert.ok(pageData(image.tiff, 1).equals(pageData(images[0]!.tiff, 1)), "the document page is the same for all");
    }
  });

  it("an installed SVG cover template: filled per recipient, escaped for XML", async () => {
    const content = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 210 297"><text x="20" y="40" font-size="14">To \${ToName!"whom it may concern"}</text></svg>`;
    const named: RecipientSpec[] = [
      { id: "a", number: "+4989000001001", properties: { ToName: "Anna <& Co>" } },
      { id: "b", number: "+4989000001002", properties: {} },
      { id: "c", number: "+4989000001003", properties: { ToName: "Anna <& Co>" } },
    ];
    const images = renderedImages(await renderFaxJob(job(docs, { recipients: named, cover: { ...DEFAULT_COVER, content } })));
    // The template does not show the number: a and c see the same cover page.
    assert.deepEqual(images.map((image) => image.recipientIds), [["a", "c"], ["b"]]);
    for (const image of images) assert.ok(blackPixels(await decodePage(image.tiff, 0)) > 1000, "the cover page has its text");
  });

  it("an HTML cover template is rendered through LibreOffice, per recipient", { skip: missingConverterMessage("html") ?? false }, async () => {
    const content = `<html><body><h1>Fax for \${ToName!"nobody"}</h1><p>\${Pages} pages</p></body></html>`;
    const named: RecipientSpec[] = [
      { id: "a", number: "+4989000001001", properties: { ToName: "Anna" } },
      { id: "b", number: "+4989000001001", properties: { ToName: "Bert" } },
    ];
    const images = renderedImages(await renderFaxJob(job(docs, { recipients: named, cover: { kind: "html", content, time: TIME, timeZone: "UTC" } })));
    assert.deepEqual(images.map((image) => image.recipientIds), [["a"], ["b"]]);
    const [anna, bert] = await Promise.all(images.map((image) => decodePage(image.tiff, 0)));
    assert.ok(blackPixels(anna!) > 1000 && !anna!.pixels.equals(bert!.pixels));
    assert.ok(pageData(images[0]!.tiff, 1).equals(pageData(images[1]!.tiff, 1)), "the same document page");
  });

  it("a header with %#: one image per number", async () => {
    const byNumber: RecipientSpec[] = [
      { id: "a", number: "+4989000001001", properties: { ToName: "Anna" } },
      { id: "b", number: "+4989000001002", properties: { ToName: "Anna" } },
      { id: "c", number: "+4989000001001", properties: { ToName: "Anna", Ref: "2" } },
      { id: "d", number: "+4989000001003", properties: {} },
    ];
    const images = renderedImages(await renderFaxJob(job(docs, { recipients: byNumber, header: header("To %#%rPage %P") })));
    assert.deepEqual(images.map((image) => image.recipientIds), [["a", "c"], ["b"], ["d"]]);
    const [one, two] = await Promise.all(images.map((image) => decodePage(image.tiff, 0)));
    assert.ok(!rows(one!, 0, HIGH_BAND).equals(rows(two!, 0, HIGH_BAND)), "the header bands differ");
    assert.ok(rows(one!, HIGH_BAND).equals(rows(two!, HIGH_BAND)), "the rows below the band are the same");
  });

  it(
    "a header with %# but not %K: recipients of one number share an image even when their ToName differs",
    async () => {
      const byNumber: RecipientSpec[] = [
        { id: "a", number: "+4989000001001", properties: { ToName: "Anna" } },
        { id: "b", number: "+4989000001001", properties: { ToName: "Carl" } },
      ];
      const images = renderedImages(await renderFaxJob(job(docs, { recipients: byNumber, header: header("To %#%rPage %P") })));
      assert.ok(images[0]!.tiff.equals(images[images.length - 1]!.tiff), "both see the same pages");
      assert.deepEqual(images.map((image) => image.recipientIds), [["a", "b"]]);
    },
  );

  it("a header with %K: one image per personalisation (HeaderPersonalization, else ToName)", async () => {
    const byName: RecipientSpec[] = [
      { id: "a", number: "+4989000001001", properties: { ToName: "Anna", Ref: "1" } },
      { id: "b", number: "+4989000001001", properties: { ToName: "Bert" } },
      { id: "c", number: "+4989000001001", properties: { ToName: "Anna", Ref: "2" } },
      { id: "d", number: "+4989000001001", properties: { ToName: "Dora", headerpersonalization: "Anna" } },
    ];
    const images = renderedImages(await renderFaxJob(job(docs, { recipients: byName, header: header("For %K") })));
    assert.deepEqual(images.map((image) => image.recipientIds), [["a", "c", "d"], ["b"]]);
  });

  it("headerPersonalisation: the HeaderPersonalization property in any case, else ToName, else nothing", () => {
    assert.equal(headerPersonalisation({ ToName: "Anna" }), "Anna");
    assert.equal(headerPersonalisation({ ToName: "Anna", HEADERPERSONALIZATION: "Dr. A." }), "Dr. A.");
    assert.equal(headerPersonalisation({ toname: "anna" }), "anna");
    assert.equal(headerPersonalisation({}), "");
  });
});

describe("renderFaxJob: the header line", () => {
  const docs = [textDoc("letter.txt", lines(70))];
  const spec = header("%d.%m.%Y %H:%M %Z  From %C%cTo %#%rPage %P of %T");

  it("is drawn in the top band of every page; page numbers make the bands differ; below the band the page is unchanged", async () => {
    const plain = await renderOneImage(job(docs));
    const headed = await renderOneImage(job(docs, { header: spec }));
    assert.equal(pageCount(headed), 2);
    const without = await decodePages(plain.tiff, 2);
    const withHeader = await decodePages(headed.tiff, 2);
    for (let page = 0; page < 2; page++) {
      assert.equal(blackPixels(without[page]!, 0, HIGH_BAND), 0, `page ${page + 1} without a header: the band is white`);
      assert.ok(blackPixels(withHeader[page]!, 0, HIGH_BAND) > 500, `page ${page + 1}: the header is drawn in the band`);
      assert.ok(rows(withHeader[page]!, HIGH_BAND).equals(rows(without[page]!, HIGH_BAND)), `page ${page + 1}: rows below the band as without a header`);
    }
    assert.ok(!rows(withHeader[0]!, 0, HIGH_BAND).equals(rows(withHeader[1]!, 0, HIGH_BAND)), "%P differs between page 1 and page 2");
    // Only the page number differs: the left part (date, CSID) is drawn the same on both pages.
    const leftHalf = (page: PagePixels): Buffer => Buffer.concat(Array.from({ length: HIGH_BAND }, (_, y) => page.pixels.subarray(y * page.width, y * page.width + 600)));
    assert.ok(leftHalf(withHeader[0]!).equals(leftHalf(withHeader[1]!)), "the left part is the same on both pages");
  });

  it("gives the same bytes on every render (the header's time is the job's, not the clock's)", async () => {
    const first = await renderOneImage(job(docs, { header: spec }));
    const second = await renderOneImage(job(docs, { header: spec }));
    assert.ok(first.tiff.equals(second.tiff));
    const later = await renderOneImage(job(docs, { header: { ...spec, time: TIME + 60_000 } }));
    assert.ok(!later.tiff.equals(first.tiff), "another minute prints another header");
  });

  it("is drawn on the cover page too, which counts as page 1", async () => {
    const plain = await renderOneImage(job(docs, { cover: DEFAULT_COVER }));
    const headed = await renderOneImage(job(docs, { cover: DEFAULT_COVER, header: spec }));
    assert.equal(pageCount(headed), 3);
    const [coverWithout, coverWith] = [await decodePage(plain.tiff, 0), await decodePage(headed.tiff, 0)];
    assert.ok(blackPixels(coverWith, 0, HIGH_BAND) > blackPixels(coverWithout, 0, HIGH_BAND) + 500);
    // The first document page is page 2 of 3 now: its header differs from the one without a cover page.
    const noCover = await renderOneImage(job(docs, { header: spec }));
    const [pageTwo, pageOne] = [await decodePage(headed.tiff, 1), await decodePage(noCover.tiff, 0)];
    assert.ok(rows(pageTwo, HIGH_BAND).equals(rows(pageOne, HIGH_BAND)));
    assert.ok(!rows(pageTwo, 0, HIGH_BAND).equals(rows(pageOne, 0, HIGH_BAND)));
  });
});

describe("renderFaxJob: overlay modes", () => {
  const EXPECTED: Readonly<Record<OverlayMode, boolean[]>> = {
    ALL_PAGES: [true, true, true],
    NO_OVERLAY: [false, false, false],
    FIRST_PAGE: [true, false, false],
    LAST_PAGE: [false, false, true],
    ALL_BUT_FIRST_PAGE: [false, true, true],
    ALL_BUT_LAST_PAGE: [true, true, false],
    ALL_BUT_FIRST_AND_LAST_PAGE: [false, true, false],
    FIRST_FILE: [false, true, false],
  };

  it("a cover page and two one-page documents: exactly the pages the mode names get darker", async () => {
    // A black box in the lower half of the page, where neither the text pages nor the cover page are black all over.
    const stamp = await pngWithBox(1000, 1400, { left: 200, top: 900, width: 600, height: 250 });
    const docs = [textDoc("first.txt", lines(5, "first")), textDoc("second.txt", lines(5, "second"))];
    const base = await renderOneImage(job(docs, { cover: DEFAULT_COVER }));
    const baseBlack = (await decodePages(base.tiff, 3)).map((page) => blackPixels(page));
    assert.deepEqual(overlaidPages("ALL_PAGES", [{ documentIndex: null }, { documentIndex: 0 }, { documentIndex: 1 }]), EXPECTED.ALL_PAGES);
    for (const mode of OVERLAY_MODES) {
      assert.deepEqual(overlaidPages(mode, [{ documentIndex: null }, { documentIndex: 0 }, { documentIndex: 1 }]), EXPECTED[mode], `overlaidPages ${mode}`);
      const image = await renderOneImage(job(docs, { cover: DEFAULT_COVER, overlay: { document: { name: "stamp.png", bytes: stamp }, mode } }));
      const pages = await decodePages(image.tiff, 3);
      assert.equal(pageCount(image), 3, mode);
      const darker = pages.map((page, i) => blackPixels(page) > baseBlack[i]!);
      assert.deepEqual(darker, EXPECTED[mode], mode);
      pages.forEach((page, i) => {
        if (!EXPECTED[mode][i]) assert.equal(blackPixels(page), baseBlack[i], `${mode}: page ${i + 1} unchanged`);
        else assert.ok(blackPixels(page) - baseBlack[i]! > 50_000, `${mode}: page ${i + 1} got the overlay's box`);
      });
    }
  });
});

describe("renderFaxJob: preflight", () => {
  it("every page has its preflight; a blank page is flagged, with and without a header line", async () => {
    const docs = [textDoc("letter.txt", lines(30)), { name: "blank.pdf", bytes: await pdfOf([""]) }];
    for (const spec of [null, header("%d.%m.%Y%rPage %P of %T")]) {
      const image = await renderOneImage(job(docs, { header: spec }));
      const what = spec === null ? "without a header" : "with a header";
      assert.equal(image.preflight.length, 2, what);
      assert.equal(image.preflight.length, image.pageSizes.length, what);
      const [text, blank] = image.preflight;
      assert.equal(text!.blank, false, what);
      assert.ok(text!.blackRatio > 0.001, what);
      assert.deepEqual(text!.warnings, [], what);
      assert.equal(blank!.blank, true, what);
      assert.equal(blank!.blackRatio, 0, `${what}: the header band is not counted`);
      assert.deepEqual(blank!.warnings, ["is blank"], what);
      for (const page of image.preflight) assert.ok(page.estimatedSeconds > 0 && !page.large && !page.tooDark, what);
    }
  });

  it("the preflight is of the page as sent: a header adds to the line time, not to the black share", async () => {
    const docs = [textDoc("letter.txt", lines(30))];
    const [plain] = (await renderOneImage(job(docs))).preflight;
    const [headed] = (await renderOneImage(job(docs, { header: header("%d.%m.%Y %H:%M%cFrom %C%rPage %P of %T") }))).preflight;
    assert.equal(headed!.blackRatio, plain!.blackRatio);
    assert.ok(headed!.estimatedSeconds > plain!.estimatedSeconds);
  });

  it("the line speed and large-page limit of the input are used", async () => {
    const docs = [textDoc("letter.txt", lines(60))];
    const fast = (await renderOneImage(job(docs))).preflight[0]!;
    const slow = (await renderOneImage(job(docs, { preflight: { lineBitsPerSecond: 2_400, largePageSeconds: 1 } }))).preflight[0]!;
    assert.ok(Math.abs(slow.estimatedSeconds - fast.estimatedSeconds * 6) < 1e-6, `${slow.estimatedSeconds} vs ${fast.estimatedSeconds}`);
    assert.equal(slow.large, true);
    assert.match(slow.warnings.join("; "), /^is large: it will take about \d+ s to send$/);
  });
});

describe("renderFaxJob: page geometry", () => {
  const CASES: { paperFormat: PaperFormat; resolution: Resolution; height: number; yDpi: number }[] = [
    { paperFormat: "A4", resolution: "HIGH", height: 2292, yDpi: 196 },
    { paperFormat: "A4", resolution: "LOW", height: 1146, yDpi: 98 },
    { paperFormat: "LETTER", resolution: "HIGH", height: 2156, yDpi: 196 },
    { paperFormat: "LETTER", resolution: "LOW", height: 1078, yDpi: 98 },
  ];

  for (const { paperFormat, resolution, height, yDpi } of CASES) {
    it(`${paperFormat} ${resolution}: 1728 x ${height} pages at 204 x ${yDpi} dpi, with and without cover page, header and overlay`, async () => {
      const docs = [textDoc("letter.txt", lines(70)), { name: "page.pdf", bytes: await pdfOf(["PDF"]) }];
      const overlay = { document: { name: "stamp.png", bytes: await pngWithBox(100, 100, { left: 10, top: 10, width: 20, height: 20 }) }, mode: "ALL_PAGES" as const };
      const plain = await renderOneImage(job(docs, { paperFormat, resolution }));
      const dressed = await renderOneImage(job(docs, { paperFormat, resolution, cover: DEFAULT_COVER, header: header("Page %P"), overlay }));
      const textPages = 2; // 62 (A4) and 58 (LETTER) lines per page: 70 lines are two pages on both
      for (const [image, count] of [[plain, textPages + 1], [dressed, textPages + 2]] as const) {
        const pages = readTiffPages(image.tiff);
        assert.equal(pages.length, count);
        assert.deepEqual(image.pageSizes, pages.map((p) => p.encodedBytes));
        for (const page of pages) {
          assert.deepEqual(
            [page.width, page.height, page.xResolution, page.yResolution, page.resolutionUnit, page.compression, page.photometric, page.bitsPerSample],
            [1728, height, 204, yDpi, 2, 4, 0, 1],
            `page ${page.index + 1}`,
          );
        }
        const decoded = await decodePage(image.tiff, count - 1);
        assert.deepEqual([decoded.width, decoded.height], [1728, height]);
      }
    });
  }

  it("LOW has half the scan lines of HIGH, and the same page count", async () => {
    const docs = [textDoc("letter.txt", lines(130))];
    const high = await renderOneImage(job(docs, { resolution: "HIGH" }));
    const low = await renderOneImage(job(docs, { resolution: "LOW" }));
    assert.equal(pageCount(high), 3);
    assert.equal(pageCount(low), 3);
    const [highPage] = readTiffPages(high.tiff);
    const [lowPage] = readTiffPages(low.tiff);
    assert.equal(highPage!.height, 2 * lowPage!.height);
    assert.ok(low.pageSizes.every((size, i) => size < high.pageSizes[i]!), "LOW pages take fewer G4 bytes");
  });
});

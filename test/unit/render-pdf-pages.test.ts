/**
 * PDF pages (src/render/pages/pdf-pages.ts), each suite once per PDFium engine (native and
 * WebAssembly, test/support/pdfium-engines.ts): page count and size, where content lands on the
 * fax page at both resolutions, landscape pages turned, form fields and annotations drawn, the
 * tone of text and photo pages, and the failures (password, damaged, empty, too large). The PDFs
 * are made here with pdf-lib; the encrypted ones are tiny fixtures made with qpdf (below).
 */
import { it } from "node:test";
import assert from "node:assert/strict";
import { PDFBool, PDFDocument, PDFName, StandardFonts, degrees, rgb, type PDFPage } from "pdf-lib";
import sharp from "sharp";
import { contentBox, DocumentRenderError, pageGeometry, type GreyPage, type PageGeometry, type RenderLimits } from "../../src/render/pages/grey-page.ts";
import { pdfPages } from "../../src/render/pages/pdf-pages.ts";
import { describeEachPdfium } from "../support/pdfium-engines.ts";

const HIGH = pageGeometry("A4", "HIGH");
const LOW = pageGeometry("A4", "LOW");
const LIMITS: RenderLimits = { maxPages: 50, maxSourcePixels: 200_000_000, converterTimeoutMs: 10_000 };
const A4_POINTS: [number, number] = [595.28, 841.89];

/**
 * A 200 x 200 pt page with a black 100 x 100 pt square in its middle, encrypted by
 * `qpdf --encrypt secret owner 256 -- --object-streams=generate plain.pdf user.pdf`: opening it
 * needs the user password "secret".
 */
const USER_PASSWORD_PDF =
  "JVBERi0xLjcKJb/3ov4KMSAwIG9iago8PCAvRXh0ZW5zaW9ucyA8PCAvQURCRSA8PCAvQmFzZVZlcnNpb24gLzEuNyAvRXh0" +
  "ZW5zaW9uTGV2ZWwgOCA+PiA+PiAvUGFnZXMgMyAwIFIgL1R5cGUgL0NhdGFsb2cgPj4KZW5kb2JqCjIgMCBvYmoKPDwgL1R5" +
  "cGUgL09ialN0bSAvTGVuZ3RoIDE3NiAvRmlsdGVyIC9GbGF0ZURlY29kZSAvTiAyIC9GaXJzdCA5ID4+CnN0cmVhbQrDEoYq" +
  "hQh+GkM1ehxojFzQtYsRpJhqkmtz529gLOIGL/icfTB864W1NIgcB74tw+otNRwO+k+8csVXzLYv9Ix0Tqyi3F0wTfFfY03c" +
  "37jlnGJVse80yPLSkW3xrubCVLbhUKorce9qPAs8in3rSINktPT9sDVI8TXj4M0Ln37IA+iAsFykbqLbYUhu0hZ3HnaHpioz" +
  "ykqHmLBdt2CMsWBjQelizRUqUYmaPpAcqLkP4mVuZHN0cmVhbQplbmRvYmoKNSAwIG9iago8PCAvRmlsdGVyIC9GbGF0ZURl" +
  "Y29kZSAvTGVuZ3RoIDgwID4+CnN0cmVhbQrLiy10DZUwv0Ppu6XcSJdLy1FlcC3v8U2H4DHmfCrORxUWLXyQcpv2WEglhMmh" +
  "X/iM1DNo5KKtpTXUVUcsCzybTj/E1e8xbybHVMVY9dDuL2VuZHN0cmVhbQplbmRvYmoKNiAwIG9iago8PCAvQ0YgPDwgL1N0" +
  "ZENGIDw8IC9BdXRoRXZlbnQgL0RvY09wZW4gL0NGTSAvQUVTVjMgL0xlbmd0aCAzMiA+PiA+PiAvRmlsdGVyIC9TdGFuZGFy" +
  "ZCAvTGVuZ3RoIDI1NiAvTyA8M2E3YjkzNzQ0ZWQyOTRhYmY5OTAwOTUyMWQzM2QxMjRmZjkzNmFmY2RjNDBlNDg2ZDY3MjYx" +
  "YWM4YTQ3MzJkMDgxMDgxZmNhNDBlZTgxMWI0YmE4NWFiNDlhMDI0MDA1PiAvT0UgPDkwNzc5Mjc2YjNiZGIyMGZmZTk0ODNi" +
  "MzFmZDM0MzAyOGMzY2QxYzJjZGEzOTRlZmUzYTJmMTczOTM1NzU5OWM+IC9QIC00IC9QZXJtcyA8YTEwNTZkOTZhNGU0OThm" +
  "MzMyOWIxM2VlMmZkMzc0ODk+IC9SIDYgL1N0bUYgL1N0ZENGIC9TdHJGIC9TdGRDRiAvVSA8ZTRkYmY2Y2YzOTc3ZTU0NDEy" +
  "ODRhNzM2Y2RjMDUyMjYzZTdkMDgxZThhNTAzODc4Mjk2NzNiZGFmYzlmN2FhODRiMjE1MWM1MThiMDdmNzUwYzRjNGI5YmYz" +
  "ZDNlYzI3PiAvVUUgPDRlNTZlNTViYmFlNzRmMTE0ZThlNDhkM2VhNGQ2MDhkYjE2ZjlmNzcxMDY5Mzg0MmNhOTZmNzcxYWQ2" +
  "ZGRhMTI+IC9WIDUgPj4KZW5kb2JqCjcgMCBvYmoKPDwgL1R5cGUgL1hSZWYgL0xlbmd0aCA0MSAvRmlsdGVyIC9GbGF0ZURl" +
  "Y29kZSAvRGVjb2RlUGFybXMgPDwgL0NvbHVtbnMgNCAvUHJlZGljdG9yIDEyID4+IC9XIFsgMSAyIDEgXSAvUm9vdCAxIDAg" +
  "UiAvU2l6ZSA4IC9JRCBbPDYzMjZmYjUxNzc0OGY1M2NhMmU5MWJmMzFlMDcyM2IxPjw2MzI2ZmI1MTc3NDhmNTNjYTJlOTFi" +
  "ZjMxZTA3MjNiMT5dIC9FbmNyeXB0IDYgMCBSID4+CnN0cmVhbQp4nGNiAAImRgZ+BiYGhmIQqwHEYmBk+s84+T8TA+M0IJdJ" +
  "mQEAPyEEZAplbmRzdHJlYW0KZW5kb2JqCnN0YXJ0eHJlZgoxMTAyCiUlRU9GCg==";

/**
 * The same page encrypted with an owner password only (printing not allowed):
 * `qpdf --encrypt "" owner 256 --print=none -- --object-streams=generate plain.pdf owner.pdf`.
 * It opens without a password.
 */
const OWNER_PASSWORD_PDF =
  "JVBERi0xLjcKJb/3ov4KMSAwIG9iago8PCAvRXh0ZW5zaW9ucyA8PCAvQURCRSA8PCAvQmFzZVZlcnNpb24gLzEuNyAvRXh0" +
  "ZW5zaW9uTGV2ZWwgOCA+PiA+PiAvUGFnZXMgMyAwIFIgL1R5cGUgL0NhdGFsb2cgPj4KZW5kb2JqCjIgMCBvYmoKPDwgL1R5" +
  "cGUgL09ialN0bSAvTGVuZ3RoIDE3NiAvRmlsdGVyIC9GbGF0ZURlY29kZSAvTiAyIC9GaXJzdCA5ID4+CnN0cmVhbQpIIm5S" +
  "VVh7oLzSX23XtzWqgkhAY7G4lrbCdL9V8YecRtSUfG7INqCI3LyhwygBiapBcXWC5uW4wY1ZRvlGmCSkPX2BSZml0E9EUgBB" +
  "xb+3GDaxw2m2ocnGVlCVYgXXD8CLgqqVq1VoIlilbOtgm074Qp+dx5o/tH+lTd9BhIRPkakRPGHg30t6spD9qdejfXJSFh6G" +
  "4gpUXL8y3yP2QiUvid4JoQSFrXc2emQtacY+smVuZHN0cmVhbQplbmRvYmoKNSAwIG9iago8PCAvRmlsdGVyIC9GbGF0ZURl" +
  "Y29kZSAvTGVuZ3RoIDgwID4+CnN0cmVhbQrKlUSzCK76x+8olbTjt1p6pU6AEDjyNFthN1wHOp2mp5+SvAohrJf0K1NyUuxM" +
  "hYzITPQmBI98saQfXGVX9/j7HAv/dHbt5azW006hiEIus2VuZHN0cmVhbQplbmRvYmoKNiAwIG9iago8PCAvQ0YgPDwgL1N0" +
  "ZENGIDw8IC9BdXRoRXZlbnQgL0RvY09wZW4gL0NGTSAvQUVTVjMgL0xlbmd0aCAzMiA+PiA+PiAvRmlsdGVyIC9TdGFuZGFy" +
  "ZCAvTGVuZ3RoIDI1NiAvTyA8MmFmOGVkNDZhOGE3MTI5ZWQ1ODQzYzQ2NDQ3ZTlmZTM4MWM2ZmRhMjBiOGU2NzgzNzYxMGZl" +
  "MDYzYmYxMTcwMWQxZmFmMDA5YTkyYjk2MzYzMWZlNDljMmNhMTkyYTQ5PiAvT0UgPDVmNzMyODQxODA5NDQzMjdkMTBjZDNh" +
  "YmUwYjM5ZTEwMmE3MjFjMzQ5YTgzNTQ1OWQ4YzY0N2YzMjIxYzFlZTk+IC9QIC0yMDU2IC9QZXJtcyA8YzQzZDA2MDdhOGNm" +
  "ODg2OGU5NGQ2Y2IwMWJhMzhmOGY+IC9SIDYgL1N0bUYgL1N0ZENGIC9TdHJGIC9TdGRDRiAvVSA8YTFkMDBmZGMxY2JlYjFj" +
  "OGM1MDllZGMzMGMzODA5YWRmN2RjNzg3YmY4YTNmZDVlNWEyNWU0NzdmZmMyZGU4OTYxYTQ1MWYwNmZhNjc1ZTE1ZjEzMzYx" +
  "ZjBkZDdlMzFlPiAvVUUgPDBkMjUyNGE3MmI4M2RiYWY3NTU5NDUwNTllYTNhOThlOTdlZmQ3NTU2NWRiMTZiZDZhMDI2NmM1" +
  "M2EyZGE5MTE+IC9WIDUgPj4KZW5kb2JqCjcgMCBvYmoKPDwgL1R5cGUgL1hSZWYgL0xlbmd0aCA0MSAvRmlsdGVyIC9GbGF0" +
  "ZURlY29kZSAvRGVjb2RlUGFybXMgPDwgL0NvbHVtbnMgNCAvUHJlZGljdG9yIDEyID4+IC9XIFsgMSAyIDEgXSAvUm9vdCAx" +
  "IDAgUiAvU2l6ZSA4IC9JRCBbPGRhZGY1OGNjZjU0ODQwMDQxYjcxNmFlNDhhYTc3Mjk4PjxkYWRmNThjY2Y1NDg0MDA0MWI3" +
  "MTZhZTQ4YWE3NzI5OD5dIC9FbmNyeXB0IDYgMCBSID4+CnN0cmVhbQp4nGNiAAImRgZ+BiYGhmIQqwHEYmBk+s84+T8TA+M0" +
  "IJdJjQEAPycEZwplbmRzdHJlYW0KZW5kb2JqCnN0YXJ0eHJlZgoxMTA1CiUlRU9GCg==";

const toBytes = (base64: string): Uint8Array => new Uint8Array(Buffer.from(base64, "base64"));

async function renderAll(name: string, bytes: Uint8Array, geometry: PageGeometry = HIGH, limits: RenderLimits = LIMITS): Promise<GreyPage[]> {
  const pages: GreyPage[] = [];
  for await (const page of pdfPages({ name, bytes }, geometry, limits)) pages.push(page);
  return pages;
}

async function rejectsWith(reasonCode: string, name: string, bytes: Uint8Array, limits: RenderLimits = LIMITS): Promise<DocumentRenderError> {
  let caught: unknown;
  try {
    await renderAll(name, bytes, HIGH, limits);
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof DocumentRenderError, `expected a DocumentRenderError, got ${String(caught)}`);
  assert.equal(caught.reasonCode, reasonCode, caught.message);
  assert.ok(caught.message.includes(name), `the message names the document: ${caught.message}`);
  return caught;
}

interface Rect {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** The bounding box of pixels darker than 128 inside `within` (the whole page by default); null if none. */
function darkBox(page: GreyPage, within: Rect = { left: 0, top: 0, right: page.width, bottom: page.height }): Rect | null {
  let box: Rect | null = null;
  for (let y = within.top; y < within.bottom; y++) {
    for (let x = within.left; x < within.right; x++) {
      if (page.data[y * page.width + x]! >= 128) continue;
      box ??= { left: x, top: y, right: x + 1, bottom: y + 1 };
      box.left = Math.min(box.left, x);
      box.top = Math.min(box.top, y);
      box.right = Math.max(box.right, x + 1);
      box.bottom = Math.max(box.bottom, y + 1);
    }
  }
  return box;
}

function darkCount(page: GreyPage, rect: Rect): number {
  let count = 0;
  for (let y = rect.top; y < rect.bottom; y++) {
    for (let x = rect.left; x < rect.right; x++) if (page.data[y * page.width + x]! < 128) count++;
  }
  return count;
}

function assertNear(actual: Rect | null, expected: Rect, tolerance: number, what: string): void {
  assert.ok(actual !== null, `${what}: nothing dark found`);
  for (const side of ["left", "top", "right", "bottom"] as const) {
    assert.ok(Math.abs(actual[side] - expected[side]) <= tolerance, `${what}: ${side} is ${actual[side]}, expected ${expected[side]} ± ${tolerance} (${JSON.stringify(actual)})`);
  }
}

/**
 * Where a point (in PDF points from the page's top left, as displayed upright) of a portrait page
 * of `size` lands: the page fills the content box, keeping its aspect ratio, centred.
 */
function pagePixels(size: [number, number], geometry: PageGeometry): { x: (pt: number) => number; y: (pt: number) => number; rect: Rect } {
  const box = contentBox(geometry);
  const [widthIn, heightIn] = [size[0] / 72, size[1] / 72];
  const scale = Math.min(box.width / geometry.xDpi / widthIn, box.height / geometry.yDpi / heightIn);
  const width = Math.round(widthIn * scale * geometry.xDpi);
  const height = Math.round(heightIn * scale * geometry.yDpi);
  const left = box.left + Math.floor((box.width - width) / 2);
  const top = box.top + Math.floor((box.height - height) / 2);
  return {
    x: (pt) => left + Math.round((pt / 72) * scale * geometry.xDpi),
    y: (pt) => top + Math.round((pt / 72) * scale * geometry.yDpi),
    rect: { left, top, right: left + width, bottom: top + height },
  };
}

/** A filled black square, positioned from the page's top left in points. */
function blackSquare(page: PDFPage, left: number, top: number, side: number): void {
  page.drawRectangle({ x: left, y: page.getHeight() - top - side, width: side, height: side, color: rgb(0, 0, 0) });
}

describeEachPdfium("pdfPages: pages and placement", () => {
  it("renders every page as a 1728 x heightPx page with a white header band, at HIGH and LOW", async () => {
    const doc = await PDFDocument.create();
    doc.addPage(A4_POINTS);
    doc.addPage([612, 792]);
    doc.addPage([420, 595]);
    for (const page of doc.getPages()) blackSquare(page, 0, 0, page.getWidth());
    const bytes = await doc.save();
    for (const geometry of [HIGH, LOW]) {
      const pages = await renderAll("three.pdf", bytes, geometry);
      assert.equal(pages.length, 3);
      for (const page of pages) {
        assert.equal(page.width, 1728);
        assert.equal(page.height, geometry.heightPx);
        assert.equal(page.data.length, 1728 * geometry.heightPx);
        assert.equal(page.tone, "text");
        assert.ok(page.data.subarray(0, geometry.headerBandPx * 1728).every((v) => v === 255), "the header band stays white");
        assert.ok(darkBox(page) !== null, "the page content is drawn");
      }
    }
  });

  for (const geometry of [HIGH, LOW]) {
    it(`a black square lands where it is on the page (A4 ${geometry.resolution}, non-square fax pixels)`, async () => {
      const doc = await PDFDocument.create();
      blackSquare(doc.addPage(A4_POINTS), 100, 150, 100);
      const [page] = await renderAll("square.pdf", await doc.save(), geometry);
      const at = pagePixels(A4_POINTS, geometry);
      assertNear(darkBox(page!), { left: at.x(100), top: at.y(150), right: at.x(200), bottom: at.y(250) }, 2, "square");
      const box = darkBox(page!)!;
      const aspect = (box.right - box.left) / geometry.xDpi / ((box.bottom - box.top) / geometry.yDpi);
      assert.ok(Math.abs(aspect - 1) < 0.03, `the square is square on paper (width/height ${aspect.toFixed(3)})`);
    });
  }

  it("a landscape page is turned counter-clockwise: its top left corner ends up bottom left, at full size", async () => {
    const doc = await PDFDocument.create();
    blackSquare(doc.addPage([A4_POINTS[1], A4_POINTS[0]]), 0, 0, 100);
    const [page] = await renderAll("landscape.pdf", await doc.save());
    // Turned, the landscape A4 page takes the place of a portrait A4 page.
    const at = pagePixels(A4_POINTS, HIGH);
    const side = { x: at.x(100) - at.x(0), y: at.y(100) - at.y(0) };
    assertNear(darkBox(page!), { left: at.rect.left, top: at.rect.bottom - side.y, right: at.rect.left + side.x, bottom: at.rect.bottom }, 2, "corner square");
  });

  it("a portrait page with /Rotate 90 is displayed as landscape and turned back the same way", async () => {
    const doc = await PDFDocument.create();
    const rotated = doc.addPage(A4_POINTS);
    rotated.setRotation(degrees(90));
    // Bottom left of the unrotated page: /Rotate 90 shows it top left, then turning puts it bottom left.
    rotated.drawRectangle({ x: 0, y: 0, width: 100, height: 100, color: rgb(0, 0, 0) });
    const [page] = await renderAll("rotated.pdf", await doc.save());
    const at = pagePixels(A4_POINTS, HIGH);
    const side = { x: at.x(100) - at.x(0), y: at.y(100) - at.y(0) };
    assertNear(darkBox(page!), { left: at.rect.left, top: at.rect.bottom - side.y, right: at.rect.left + side.x, bottom: at.rect.bottom }, 2, "corner square");
  });
});

describeEachPdfium("pdfPages: form fields and annotations", () => {
  async function textFieldPdf(withAppearance: boolean): Promise<Uint8Array> {
    const doc = await PDFDocument.create();
    const page = doc.addPage(A4_POINTS);
    const form = doc.getForm();
    const field = form.createTextField("name");
    field.addToPage(page, { x: 100, y: A4_POINTS[1] - 340, width: 300, height: 40, borderWidth: 0 });
    field.setText("ERIKA MUSTERMANN");
    if (!withAppearance) {
      // The field's look is left to the viewer: no appearance stream, NeedAppearances set.
      form.acroForm.dict.set(PDFName.of("NeedAppearances"), PDFBool.True);
      for (const widget of field.acroField.getWidgets()) widget.dict.delete(PDFName.of("AP"));
    }
    return doc.save({ updateFieldAppearances: withAppearance });
  }

  for (const withAppearance of [true, false]) {
    it(`draws a filled-in text field ${withAppearance ? "with its appearance stream" : "without an appearance stream (NeedAppearances)"}`, async () => {
      const [page] = await renderAll("form.pdf", await textFieldPdf(withAppearance));
      const at = pagePixels(A4_POINTS, HIGH);
      const field = { left: at.x(100), top: at.y(300), right: at.x(400), bottom: at.y(340) };
      assert.ok(darkCount(page!, field) > 2000, `the field's text is drawn in its box (${darkCount(page!, field)} dark pixels)`);
      const box = darkBox(page!)!;
      const inField = box.left >= field.left - 2 && box.right <= field.right + 2 && box.top >= field.top - 2 && box.bottom <= field.bottom + 2;
      assert.ok(inField, `and nothing outside it: dark ${JSON.stringify(box)}, field ${JSON.stringify(field)}`);
    });
  }

  it("draws an annotation from its appearance stream", async () => {
    const doc = await PDFDocument.create();
    const page = doc.addPage(A4_POINTS);
    const appearance = doc.context.stream("0 g 0 0 100 100 re f", { Type: "XObject", Subtype: "Form", BBox: [0, 0, 100, 100] });
    const annotation = doc.context.obj({
      Type: "Annot",
      Subtype: "Square",
      Rect: [100, A4_POINTS[1] - 250, 200, A4_POINTS[1] - 150],
      F: 4,
      AP: { N: doc.context.register(appearance) },
    });
    page.node.set(PDFName.of("Annots"), doc.context.obj([doc.context.register(annotation)]));
    const [rendered] = await renderAll("annotated.pdf", await doc.save());
    const at = pagePixels(A4_POINTS, HIGH);
    assertNear(darkBox(rendered!), { left: at.x(100), top: at.y(150), right: at.x(200), bottom: at.y(250) }, 2, "annotation");
  });
});

describeEachPdfium("pdfPages: tone", () => {
  it("a page of text is text, a page with a large photo is a photo", async () => {
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    const text = doc.addPage(A4_POINTS);
    for (let line = 0; line < 60; line++) {
      text.drawText(`Line ${line + 1}: the quick brown fox jumps over the lazy dog, 0123456789.`, { x: 50, y: 800 - line * 12, size: 10, font });
    }
    const gradient = new Uint8Array(256 * 256);
    for (let y = 0; y < 256; y++) for (let x = 0; x < 256; x++) gradient[y * 256 + x] = Math.round((x + y) / 2);
    const png = await sharp(gradient, { raw: { width: 256, height: 256, channels: 1 } }).png().toBuffer();
    const photo = doc.addPage(A4_POINTS);
    photo.drawImage(await doc.embedPng(png), { x: 50, y: 300, width: 495, height: 495 });
    const pages = await renderAll("mixed.pdf", await doc.save());
    assert.deepEqual(pages.map((p) => p.tone), ["text", "photo"]);
  });
});

describeEachPdfium("pdfPages: documents that cannot be rendered", () => {
  it("a PDF that needs a password: document_encrypted", async () => {
    const err = await rejectsWith("document_encrypted", "secret.pdf", toBytes(USER_PASSWORD_PDF));
    assert.match(err.message, /password-protected/);
  });

  it("a PDF with only an owner password (restrictions) renders", async () => {
    const pages = await renderAll("restricted.pdf", toBytes(OWNER_PASSWORD_PDF));
    assert.equal(pages.length, 1);
    assert.ok(darkBox(pages[0]!) !== null, "its content is drawn");
  });

  it("truncated, not a PDF, empty, no pages: document_unreadable", async () => {
    const doc = await PDFDocument.create();
    blackSquare(doc.addPage(A4_POINTS), 100, 100, 100);
    const bytes = await doc.save();
    await rejectsWith("document_unreadable", "truncated.pdf", bytes.subarray(0, Math.floor(bytes.length / 2)));
    await rejectsWith("document_unreadable", "letter.pdf", new TextEncoder().encode("Dear Sir or Madam,\nthis is not a PDF.\n"));
    await rejectsWith("document_unreadable", "empty.pdf", new Uint8Array(0));
    const none = await PDFDocument.create();
    const err = await rejectsWith("document_unreadable", "none.pdf", await none.save({ addDefaultPage: false }));
    assert.match(err.message, /no pages/);
  });

  it("a page too big for the pixel limit, and more pages than the job may have: document_too_large", async () => {
    const huge = await PDFDocument.create();
    huge.addPage([14400, 14400]);
    const err = await rejectsWith("document_too_large", "poster.pdf", await huge.save());
    assert.match(err.message, /200 x 200 inches/);
    assert.match(err.message, /200,000,000/);

    const a4 = await PDFDocument.create();
    a4.addPage(A4_POINTS);
    await rejectsWith("document_too_large", "small-limit.pdf", await a4.save(), { ...LIMITS, maxSourcePixels: 1_000_000 });

    const many = await PDFDocument.create();
    for (let i = 0; i < 3; i++) many.addPage(A4_POINTS);
    await rejectsWith("document_too_large", "many.pdf", await many.save(), { ...LIMITS, maxPages: 2 });
  });

  it("stopping after the first page closes the document; the next document renders", async () => {
    const doc = await PDFDocument.create();
    for (let i = 0; i < 3; i++) blackSquare(doc.addPage(A4_POINTS), 100, 100, 100);
    const bytes = await doc.save();
    for (let round = 0; round < 5; round++) {
      for await (const page of pdfPages({ name: "first-only.pdf", bytes }, HIGH, LIMITS)) {
        assert.ok(darkBox(page) !== null);
        break;
      }
    }
    assert.equal((await renderAll("again.pdf", bytes)).length, 3);
  });
});

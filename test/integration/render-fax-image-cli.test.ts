/**
 * `faxline render`: renders files offline as a job would (text in several charsets, PDFs, a
 * header line, the default cover page for a recipient, an overlay), prints the page count, sizes,
 * line time and preflight warnings, and fails with the reason a job's report gives for a document
 * that cannot be rendered (an unknown extension, a damaged PDF, text that does not decode).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PDFDocument, StandardFonts } from "pdf-lib";
import sharp from "sharp";
import { failureReason } from "../../src/errors/failure-reasons.ts";
import { unknownTypeMessage } from "../../src/render/document-types.ts";
import { layoutText } from "../../src/render/layout-text.ts";
import { readTiffPages } from "../../src/render/fax-image/tiff-structure.ts";
import { pageGeometry } from "../../src/render/pages/grey-page.ts";
import { blackPixels, decodePage, decodePages, rows } from "../support/fax-page-pixels.ts";
import { runFaxlineCli } from "../support/child-node.ts";
import { tempDir } from "../support/test-node.ts";

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe("faxline render", () => {
  const dir = tempDir();
  const file = (name: string): string => join(dir.path, name);
  const letter = Array.from({ length: 70 }, (_, i) => `Line ${i + 1} of the letter`).join("\n");
  const notice = "A short notice in Latin-1: Gr\xFC\xDFe";
  before(async () => {
    writeFileSync(file("letter.txt"), letter);
    writeFileSync(file("notice.txt"), Buffer.from(notice, "latin1"));
    writeFileSync(file("scan.pdf"), "%PDF-1.4\nnot really a PDF\n");
    writeFileSync(file("data.csv"), "a,b\n1,2\n");
    // A PDF of two pages: a form, then a blank page (which the preflight warns about).
    const pdf = await PDFDocument.create();
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    pdf.addPage([595.28, 841.89]).drawText("Order form: please fill in and fax back", { x: 60, y: 760, size: 18, font });
    pdf.addPage([595.28, 841.89]);
    writeFileSync(file("form.pdf"), await pdf.save());
    // An overlay: a black box low on the page, where the letter has no text.
    const width = 800;
    const height = 1100;
    const pixels = Buffer.alloc(width * height, 255);
    for (let y = 800; y < 950; y++) pixels.fill(0, y * width + 100, y * width + 700);
    writeFileSync(file("stamp.png"), await sharp(pixels, { raw: { width, height, channels: 1 } }).png().toBuffer());
  });
  after(() => dir.remove());

  it("writes one TIFF-F of all files' pages and prints the page count and bytes", async () => {
    const out = file("letter.tif");
    const run = await runFaxlineCli(
      ["render", file("letter.txt"), file("notice.txt"), "--charset", "ISO-8859-1", "--paper", "letter", "--resolution", "low", "--out", out],
      {},
    );
    assert.equal(run.code, 0, run.stderr);
    const tiff = readFileSync(out);
    const pages = readTiffPages(tiff);
    const options = { paperFormat: "LETTER", resolution: "LOW" } as const;
    assert.equal(pages.length, layoutText(letter, options).pages.length + 1);
    assert.ok(pages.every((p) => p.height === 1078 && p.yResolution === 98));
    const lines = run.stdout.trimEnd().split("\n");
    assert.match(lines[0]!, new RegExp(`^${escape(out)}: ${pages.length} pages, ${tiff.length} bytes \\(TIFF-F, G4, LETTER LOW\\), rendered in \\d+\\.\\d\\d s$`));
    assert.equal(lines[1], `G4 bytes per page: ${pages.map((p) => p.encodedBytes).join(", ")}`);
    assert.match(lines[2]!, /^estimated line time at 14\.4 kbit\/s: \d+ s$/);
    assert.equal(lines.length, 3, run.stdout);
  });

  it("renders a PDF with a header line, the default cover page for a recipient and an overlay", async () => {
    const out = file("dressed.tif");
    const plainOut = file("undressed.tif");
    const common = [
      "render",
      file("letter.txt"),
      file("form.pdf"),
      "--header",
      "Fax from %C to %#%rPage %P of %T",
      "--cover",
      "default",
      "--to",
      "+4989000002000",
      "--property",
      "ToName=Erika Mustermann",
      "--property",
      "SubjectTitle=Order form",
      "--csid",
      "+49 89 1234567",
    ];
    const run = await runFaxlineCli([...common, "--overlay", file("stamp.png"), "--overlay-mode", "first_file", "--out", out], {});
    assert.equal(run.code, 0, run.stderr);
    const tiff = readFileSync(out);
    const pages = readTiffPages(tiff);
    assert.equal(pages.length, 5, "the cover page, two letter pages and two PDF pages");
    assert.ok(pages.every((p) => p.width === 1728 && p.height === 2292 && p.yResolution === 196 && p.compression === 4));
    const lines = run.stdout.trimEnd().split("\n");
    assert.equal(lines.length, 4, run.stdout);
    assert.match(lines[0]!, new RegExp(`^${escape(out)}: 5 pages, ${tiff.length} bytes \\(TIFF-F, G4, A4 HIGH\\), rendered in \\d+\\.\\d\\d s$`));
    assert.equal(lines[1], `G4 bytes per page: ${pages.map((p) => p.encodedBytes).join(", ")}`);
    assert.match(lines[2]!, /^estimated line time at 14\.4 kbit\/s: \d+ s$/);
    assert.equal(lines[3], "warning: page 5 is blank", "the blank PDF page, its header line not counted");

    // The header line is in the top band of every page, the cover page's included.
    const band = pageGeometry("A4", "HIGH").headerBandPx;
    const decoded = await decodePages(tiff, 5);
    for (const [i, page] of decoded.entries()) assert.ok(blackPixels(page, 0, band) > 300, `page ${i + 1} has a header line`);
    // FIRST_FILE: the overlay is on the letter's pages only.
    const plain = await runFaxlineCli([...common, "--out", plainOut], {});
    assert.equal(plain.code, 0, plain.stderr);
    const without = await decodePages(readFileSync(plainOut), 5);
    for (const i of [1, 2]) assert.ok(blackPixels(decoded[i]!) > blackPixels(without[i]!) + 10_000, `page ${i + 1} has the overlay`);
    for (const i of [3, 4]) assert.ok(rows(decoded[i]!, 0).equals(rows(without[i]!, 0)), `page ${i + 1} has no overlay`);
  });

  it("takes the charset of the files (--charset), and fails with the job's reason when they do not decode", async () => {
    const out = file("notice.tif");
    const latin1 = await runFaxlineCli(["render", file("notice.txt"), "--charset", "ISO-8859-1", "--out", out], {});
    assert.equal(latin1.code, 0, latin1.stderr);
    const utf8 = await runFaxlineCli(["render", file("notice.txt"), "--out", out], {});
    assert.equal(utf8.code, 1);
    assert.equal(
      utf8.stderr.trim(),
      `faxline: ${failureReason("document_unreadable").description}: notice.txt: Text is not valid UTF-8: invalid or incomplete byte sequence at byte offset 29 (byte 0xFC). ` +
        "The text was read as UTF-8, the default when the document names no charset; set the document's charset field to the encoding it was saved in " +
        "(US-ASCII, UTF-8, UTF-16, UTF-16BE, UTF-16LE, ISO-8859-1, Windows-1252)",
    );
  });

  it("leaves the blank PDF page out with --suppress-blank-pages, and fails when nothing else is left", async () => {
    const out = file("no-blank.tif");
    const run = await runFaxlineCli(["render", file("form.pdf"), "--header", "Page %P of %T", "--suppress-blank-pages", "--out", out], {});
    assert.equal(run.code, 0, run.stderr);
    assert.equal(readTiffPages(readFileSync(out)).length, 1, "the form's page, not the blank one");
    assert.match(run.stdout, /: 1 page, /);
    assert.match(run.stdout, /^blank pages left out: 1$/m);
    assert.doesNotMatch(run.stdout, /warning: page \d is blank/);

    const blankPdf = await PDFDocument.create();
    blankPdf.addPage([595.28, 841.89]);
    writeFileSync(file("blank.pdf"), await blankPdf.save());
    const never = file("never-blank.tif");
    const blank = await runFaxlineCli(["render", file("blank.pdf"), "--suppress-blank-pages", "--out", never], {});
    assert.equal(blank.code, 1);
    assert.equal(blank.stderr.trim(), `faxline: ${failureReason("document_blank").description}: Every page is blank (1 page of blank.pdf), and blank pages are left out: there is nothing to fax`);
    assert.throws(() => readFileSync(never), /ENOENT/);
  });

  it("refuses a file of an unknown type with the reason a job's report gives", async () => {
    const out = file("never.tif");
    const run = await runFaxlineCli(["render", file("letter.txt"), file("data.csv"), "--out", out], {});
    assert.equal(run.code, 1);
    assert.equal(run.stderr.trim(), `faxline: ${failureReason("document_type_unsupported").description}: ${unknownTypeMessage("data.csv")}`);
    assert.throws(() => readFileSync(out), /ENOENT/);
  });

  it("fails on a damaged PDF with document_unreadable", async () => {
    const out = file("never.tif");
    const run = await runFaxlineCli(["render", file("letter.txt"), file("scan.pdf"), "--out", out], {});
    assert.equal(run.code, 1);
    assert.match(run.stderr.trim(), new RegExp(`^faxline: ${escape(failureReason("document_unreadable").description)}: scan\\.pdf cannot be read as a PDF: .+$`));
    assert.throws(() => readFileSync(out), /ENOENT/);
  });

  it("renders the default cover page alone, filled with --to and --property", async () => {
    const out = file("cover.tif");
    const run = await runFaxlineCli(["render", "--cover", "default", "--to", "+4989000002001", "--property", "ToName=Max", "--out", out], {});
    assert.equal(run.code, 0, run.stderr);
    const tiff = readFileSync(out);
    assert.equal(readTiffPages(tiff).length, 1);
    assert.ok(blackPixels(await decodePage(tiff, 0)) > 10_000, "the cover page has content");
  });

  it("needs --out, a known paper format, overlay mode, tone mode and header, and KEY=VALUE properties", async () => {
    const noOut = await runFaxlineCli(["render", file("letter.txt")], {});
    assert.equal(noOut.code, 2);
    assert.match(noOut.stderr, /--out is required/);
    const a5 = await runFaxlineCli(["render", file("letter.txt"), "--paper", "A5", "--out", "x.tif"], {});
    assert.equal(a5.code, 2);
    assert.match(a5.stderr, /--paper must be A4 or LETTER/);
    const mode = await runFaxlineCli(["render", file("letter.txt"), "--overlay", file("stamp.png"), "--overlay-mode", "SOMETIMES", "--out", "x.tif"], {});
    assert.equal(mode.code, 2);
    assert.match(mode.stderr, /--overlay-mode must be one of ALL_PAGES, /);
    const tone = await runFaxlineCli(["render", file("letter.txt"), "--tone-mode", "sepia", "--out", "x.tif"], {});
    assert.equal(tone.code, 2);
    assert.match(tone.stderr, /--tone-mode must be one of AUTO, TEXT, PHOTO, THRESHOLD/);
    const property = await runFaxlineCli(["render", file("letter.txt"), "--property", "ToName", "--out", "x.tif"], {});
    assert.equal(property.code, 2);
    assert.match(property.stderr, /--property takes KEY=VALUE, got "ToName"/);
    const header = await runFaxlineCli(["render", file("letter.txt"), "--header", "100% sure", "--out", file("never.tif")], {});
    assert.equal(header.code, 1);
    assert.match(header.stderr, /^faxline: --header: a standalone "%" at position 4/);
    const nothing = await runFaxlineCli(["render", "--out", "x.tif"], {});
    assert.equal(nothing.code, 2);
    assert.match(nothing.stderr, /needs at least one FILE \(or --cover\)/);
  });
});

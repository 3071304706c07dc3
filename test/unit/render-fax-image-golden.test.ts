/**
 * Golden pages: rendered fax pages compared pixel by pixel with the committed 1-bit PNG files
 * in test/fixtures/golden/ (cases in golden-fax-pages.ts: one per input type, text at A4 HIGH
 * and LETTER LOW, a PDF, a PNG, a JPEG photo, a 204 x 98 dpi fax TIFF, a BMP, a DOCX, HTML,
 * PostScript, a header line, the default cover page, an overlay on all pages). A difference
 * means the look of faxes changed; if that is intended, run
 * `node --import tsx scripts/generate-golden-fax-pages.ts`, look at the new pages, and commit
 * them. Cases that need LibreOffice or Ghostscript are skipped on a node without them. Every case
 * runs with both PDFium engines (test/support/pdfium-engines.ts); the goldens come from the
 * native one, and a case says how many pixels the WebAssembly one draws otherwise (ADR 0014).
 */
import { describe, it } from "node:test";
import { describeEachPdfium } from "../support/pdfium-engines.ts";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { missingConverterMessage } from "../../src/render/convert/converter-availability.ts";
import { readTiffPages } from "../../src/render/fax-image/tiff-structure.ts";
import { GOLDEN_CASES, goldenPagePath } from "../fixtures/golden/golden-fax-pages.ts";
import { decodePage, pixelDifference, renderGoldenCase } from "../support/fax-page-pixels.ts";

describe("golden fax pages", () => {
  it("every case has its golden PNG files", () => {
    const missing = GOLDEN_CASES.flatMap((golden) => golden.goldenPages.map((page) => goldenPagePath(golden.name, page))).filter((path) => !existsSync(path));
    assert.deepEqual(missing, [], "run scripts/generate-golden-fax-pages.ts");
  });

});

describeEachPdfium("golden fax pages", (engine) => {
  for (const golden of GOLDEN_CASES) {
    const skip = golden.needs === null ? false : (missingConverterMessage(golden.needs) ?? false);
    const differing = engine === "wasm" ? (golden.wasmPdfiumPixels ?? 0) : 0;
    it(`${golden.name}: ${golden.pageCount} page(s), the golden ones equal their PNG pixel for pixel`, { skip }, async () => {
      const image = await renderGoldenCase(golden);
      assert.equal(image.pageSizes.length, golden.pageCount, "pages");
      assert.equal(readTiffPages(image.tiff).length, golden.pageCount, "TIFF pages");
      for (const page of golden.goldenPages) {
        const path = goldenPagePath(golden.name, page);
        const expected = await decodePage(path);
        const actual = await decodePage(image.tiff, page);
        assert.deepEqual([actual.width, actual.height], [expected.width, expected.height], `${path}: size`);
        const diff = pixelDifference(actual, expected);
        assert.equal(diff.count, differing, `${path}: ${diff.count} pixels differ, the first at ${diff.first}`);
      }
    });
  }
});

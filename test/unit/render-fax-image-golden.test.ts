/**
 * Golden pages: rendered fax pages compared pixel by pixel with the committed 1-bit PNG files
 * in test/fixtures/golden/ (cases in golden-fax-pages.ts). A difference means the look of every
 * fax changed; if that is intended, run `node --import tsx scripts/generate-golden-fax-pages.ts`,
 * look at the new pages, and commit them.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { layoutText } from "../../src/render/layout-text.ts";
import { GOLDEN_CASES, goldenPagePath } from "../fixtures/golden/golden-fax-pages.ts";
import { decodePage, renderGoldenCase, type PagePixels } from "../support/fax-page-pixels.ts";

/** The number of differing pixels and the first one, for a message that helps. */
function difference(actual: PagePixels, golden: PagePixels): { count: number; first: string | null } {
  let count = 0;
  let first: string | null = null;
  for (let i = 0; i < golden.pixels.length; i++) {
    if (actual.pixels[i] !== golden.pixels[i]) {
      count += 1;
      first ??= `x ${i % golden.width}, y ${Math.floor(i / golden.width)}`;
    }
  }
  return { count, first };
}

describe("golden fax pages", () => {
  for (const golden of GOLDEN_CASES) {
    it(`${golden.name}: every page equals its golden PNG, pixel for pixel`, async () => {
      const image = await renderGoldenCase(golden);
      const options = { paperFormat: golden.paperFormat, resolution: golden.resolution };
      const layoutPages = layoutText(golden.text, options).pages.length;
      assert.equal(image.pageSizes.length, layoutPages + (golden.coverPageText === null ? 0 : 1));
      for (let page = 0; page < image.pageSizes.length; page++) {
        const path = goldenPagePath(golden.name, page);
        const expected = await decodePage(path);
        const actual = await decodePage(image.tiff, page);
        assert.deepEqual([actual.width, actual.height], [expected.width, expected.height], `${path}: size`);
        const diff = difference(actual, expected);
        assert.equal(diff.count, 0, `${path}: ${diff.count} pixels differ, the first at ${diff.first}`);
      }
    });
  }
});

/**
 * Writes the golden fax pages (test/fixtures/golden/*.png) from the cases in
 * test/fixtures/golden/golden-fax-pages.ts, rendered as a job renders them.
 *
 *   node --import tsx scripts/generate-golden-fax-pages.ts
 *
 * Run it only after a deliberate change to the rendering (font, margins, threshold) and look at
 * the new pages before committing them: the golden test then holds the new look.
 */
import { writeFileSync } from "node:fs";
import { relative } from "node:path";
import { GOLDEN_CASES, goldenPagePath } from "../test/fixtures/golden/golden-fax-pages.ts";
import { bilevelPng, decodePage, renderGoldenCase } from "../test/support/fax-page-pixels.ts";

for (const golden of GOLDEN_CASES) {
  const image = await renderGoldenCase(golden);
  for (let page = 0; page < image.pageSizes.length; page++) {
    const path = goldenPagePath(golden.name, page);
    const png = await bilevelPng(await decodePage(image.tiff, page));
    writeFileSync(path, png);
    console.log(`${relative(process.cwd(), path)}: ${png.length} bytes`);
  }
}

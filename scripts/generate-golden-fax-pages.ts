/**
 * Writes the golden fax pages (test/fixtures/golden/*.png) from the cases in
 * test/fixtures/golden/golden-fax-pages.ts, rendered as a job renders them (renderFaxJob).
 *
 *   node --import tsx scripts/generate-golden-fax-pages.ts [CASE...]
 *
 * With case names, only those cases are written. Run it only after a deliberate change to the
 * rendering (font, margins, threshold, placement, a converter) and look at the new pages before
 * committing them: the golden test then holds the new look. PNG files of cases that no longer
 * exist are removed.
 *
 * The DOCX case renders test/fixtures/office/letter.docx (scripts/generate-office-fixtures.sh
 * writes it). Cases whose converter (LibreOffice, Ghostscript) is not installed are left as they
 * are, with a message.
 */
import { readdirSync, unlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { missingConverterMessage } from "../src/render/convert/converter-availability.ts";
import { GOLDEN_CASES, goldenPagePath } from "../test/fixtures/golden/golden-fax-pages.ts";
import { bilevelPng, decodePage, renderGoldenCase } from "../test/support/fax-page-pixels.ts";

const wanted = new Set(process.argv.slice(2));
const unknown = [...wanted].filter((name) => !GOLDEN_CASES.some((golden) => golden.name === name));
if (unknown.length > 0) {
  console.error(`unknown golden case(s): ${unknown.join(", ")}; the cases are ${GOLDEN_CASES.map((golden) => golden.name).join(", ")}`);
  process.exit(2);
}

for (const golden of GOLDEN_CASES) {
  if (wanted.size > 0 && !wanted.has(golden.name)) continue;
  const missing = golden.needs === null ? null : missingConverterMessage(golden.needs);
  if (missing !== null) {
    console.log(`${golden.name}: skipped, ${missing}`);
    continue;
  }
  const image = await renderGoldenCase(golden);
  if (image.pageSizes.length !== golden.pageCount) {
    throw new Error(`${golden.name} rendered ${image.pageSizes.length} pages, the case says ${golden.pageCount}: correct the case`);
  }
  for (const page of golden.goldenPages) {
    const path = goldenPagePath(golden.name, page);
    const png = await bilevelPng(await decodePage(image.tiff, page));
    writeFileSync(path, png);
    console.log(`${relative(process.cwd(), path)}: ${png.length} bytes`);
  }
}

if (wanted.size === 0) {
  const directory = dirname(goldenPagePath("x", 0));
  const kept = new Set(GOLDEN_CASES.flatMap((golden) => golden.goldenPages.map((page) => basename(goldenPagePath(golden.name, page)))));
  for (const file of readdirSync(directory)) {
    if (file.endsWith(".png") && !kept.has(file)) {
      unlinkSync(join(directory, file));
      console.log(`${relative(process.cwd(), join(directory, file))}: removed (no such case)`);
    }
  }
}

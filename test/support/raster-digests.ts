/**
 * What the render stage makes of a few pages, as digests, for comparing a process that runs the
 * raster addon (src/render/native-raster.ts) with one that runs the TypeScript loops
 * (FAXLINE_RASTER_ADDON=off): the golden vector PDF at both resolutions and a synthetic page with a
 * photo, a grey box and text, through each tone mode, plus the tone, paper white and picture blocks
 * the AUTO mode decides by.
 */
import { createHash } from "node:crypto";
import { encodeFaxPage, paperWhite, pictureBlocks } from "../../src/render/fax-image/encode-fax-page.ts";
import { TONE_MODES } from "../../src/render/fax-image/tone-mode.ts";
import { contentTone } from "../../src/render/pages/place-on-page.ts";
import { openPdfDocument } from "../../src/render/pages/pdf-pages.ts";
import { rasterKernels } from "../../src/render/native-raster.ts";
import { pageGeometry, type GreyPage } from "../../src/render/pages/grey-page.ts";
import { goldenVectorPdf } from "../fixtures/golden/golden-fax-pages.ts";

const digest = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex").slice(0, 16);

function photoPage(): GreyPage {
  const { widthPx: width, heightPx: height } = pageGeometry("A4", "LOW");
  const data = new Uint8Array(width * height).fill(255);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      if (y >= 200 && y < 700 && x >= 300 && x < 1400) data[i] = Math.round(60 + 120 * Math.sin(x / 90) * Math.cos(y / 70) + 60 + ((x * 7 + y * 13) % 9));
      else if (y >= 800 && y < 900 && x >= 200 && x < 1500) data[i] = x % 120 < 8 && y % 30 < 20 ? 0 : 200;
      else if (y >= 950 && y < 980 && x % 40 < 25) data[i] = x % 40 < 2 ? 140 : 0;
    }
  }
  return { width, height, data, tone: "photo" };
}

export async function rasterDigests(): Promise<Record<string, string>> {
  const pages: Array<[string, GreyPage]> = [["photo page", photoPage()]];
  const bytes = await goldenVectorPdf();
  for (const resolution of ["HIGH", "LOW"] as const) {
    const pdf = await openPdfDocument({ name: "vector.pdf", charset: null, bytes }, pageGeometry("A4", resolution), { maxPages: 10, maxSourcePixels: 1e9 } as never);
    pages.push([`vector PDF ${resolution}`, pdf.renderPage(0)]);
    pdf.close();
  }
  const out: Record<string, string> = { kernels: rasterKernels() };
  for (const [name, page] of pages) {
    out[`${name}: tone`] = contentTone(page);
    out[`${name}: paper white`] = String(paperWhite(page));
    out[`${name}: picture blocks`] = digest(pictureBlocks(page).mask);
    for (const toneMode of TONE_MODES) {
      const encoded = encodeFaxPage({ ...page, data: page.data.slice() }, 40, { overwrite: true, toneMode });
      out[`${name}: ${toneMode}`] = `${encoded.method} ${digest(encoded.g4.strips[0]!)} ${JSON.stringify(encoded.counts)}`;
    }
  }
  return out;
}

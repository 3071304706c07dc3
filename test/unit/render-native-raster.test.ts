/**
 * The raster addon (native/fax-raster, src/render/native-raster.ts) against its TypeScript twins:
 * the same pages through both must give the same bytes and counts. Pages: PDFium renderings of
 * the golden vector PDF (text, rules, a grey box) at both resolutions, a page of random greys (every
 * level, no aligned runs), nearly flat greys (at the flatness limit of the shading test), a photo-like ramp with flat shading and text bars, and odd widths (no
 * aligned words, so the eight-pixel steps meet their tails). The addon is built by
 * scripts/build-native.sh, which the install and CI run: a missing addon fails here.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { nativeRaster, rasterKernels } from "../../src/render/native-raster.ts";
import { greyHistogramsTs, thresholdInPlace, thresholdInPlaceTs } from "../../src/render/fax-image/encode-fax-page.ts";
import { encodeG4Page, encodeG4PageTs } from "../../src/render/fax-image/encode-g4-page.ts";
import { contentTone, smoothGreysTs } from "../../src/render/pages/place-on-page.ts";
import { openPdfDocument } from "../../src/render/pages/pdf-pages.ts";
import { pageGeometry, type GreyPage } from "../../src/render/pages/grey-page.ts";
import { goldenVectorPdf } from "../fixtures/golden/golden-fax-pages.ts";

/** A deterministic pseudo-random sequence (xorshift32). */
function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 0x1_0000_0000;
  };
}

function synthetic(width: number, height: number, fill: (x: number, y: number) => number, name: string): GreyPage & { name: string } {
  const data = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data[y * width + x] = fill(x, y);
  return { name, width, height, data, tone: "text" };
}

async function testPages(): Promise<Array<GreyPage & { name: string }>> {
  const pages: Array<GreyPage & { name: string }> = [];
  const bytes = await goldenVectorPdf();
  for (const resolution of ["HIGH", "LOW"] as const) {
    const pdf = await openPdfDocument({ name: "vector.pdf", charset: null, bytes }, pageGeometry("A4", resolution), { maxPages: 10, maxSourcePixels: 1e9 } as never);
    pages.push({ ...pdf.renderPage(0), name: `vector PDF ${resolution}` });
    pdf.close();
  }
  const next = random(20261126);
  pages.push(synthetic(1728, 300, () => Math.floor(next() * 256), "random greys"));
  // Nearly flat greys: neighbours differ by 0 to 13 levels, across the flatness limit of the shading test.
  pages.push(synthetic(1728, 120, (x, y) => (y < 60 ? 90 + ((x * 3 + y * 5) % 13) : 180 + Math.floor(next() * 14)), "nearly flat greys"));
  for (const width of [1728, 1001, 13]) {
    pages.push(
      synthetic(
        width,
        240,
        (x, y) => {
          if (y >= 40 && y < 80 && x % 97 < 40) return x % 97 < 3 ? 128 : 0; // text bars with grey edges
          if (y >= 100 && y < 160) return x % 200 < 120 ? 77 : 200; // flat shading
          if (y >= 170) return Math.round((255 * x) / Math.max(1, width - 1)); // a ramp
          return 255;
        },
        `shapes ${width} wide`,
      ),
    );
  }
  pages.push(synthetic(1728, 50, () => 0, "all black"));
  pages.push(synthetic(1728, 50, () => 255, "all white"));
  return pages;
}

const same = (a: Uint8Array | Uint32Array, b: Uint8Array | Uint32Array): boolean => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));

describe("native raster kernels", async () => {
  const pages = await testPages();
  const native = nativeRaster();

  it("are built and used", () => {
    assert.notEqual(native, null, "native/fax-raster is not built: run scripts/build-native.sh");
    assert.equal(rasterKernels(), "native");
  });

  it("threshold every page as the TypeScript does", () => {
    for (const page of pages) {
      const ts = thresholdInPlaceTs({ ...page, data: page.data.slice() });
      const c = thresholdInPlace({ ...page, data: page.data.slice() });
      assert.ok(same(ts, c), `threshold differs on ${page.name}`);
    }
  });

  it("encode every page in G4 with the TypeScript's bytes and counts", () => {
    for (const page of pages) {
      // Thresholded pages (0 and 255) and the raw greys (any level: black is below 128).
      for (const pixels of [thresholdInPlaceTs({ ...page, data: page.data.slice() }), page.data]) {
        for (const from of [0, 37]) {
          const ts = encodeG4PageTs(pixels, page, from);
          const c = encodeG4Page(pixels, page, from);
          assert.ok(same(ts.g4.strips[0]!, c.g4.strips[0]!), `G4 differs on ${page.name}`);
          assert.deepEqual(c.counts, ts.counts, `counts differ on ${page.name}`);
        }
      }
    }
  });

  it("count grey histograms as the TypeScript does", () => {
    for (const page of pages) {
      for (const [shift, y0, y1] of [[5, 0, page.height], [31, 0, page.height], [5, 32, Math.min(page.height, 64)]] as const) {
        const ts = new Uint32Array((((page.width - 1) >> shift) + 1) * 256);
        const c = ts.slice();
        greyHistogramsTs(page.data, page.width, y0, y1, shift, ts);
        native!.greyHistograms(page.data, page.width, y0, y1, shift, c);
        assert.ok(same(ts, c), `histograms differ on ${page.name}, shift ${shift}`);
        assert.equal(c[255], 0, "paper is not counted");
      }
    }
  });

  it("find smooth mid-greys as contentTone's TypeScript does", () => {
    for (const page of pages) {
      for (const region of [
        { left: 0, top: 0, width: page.width, height: page.height },
        { left: 3, top: 7, width: Math.max(2, page.width - 10), height: Math.max(2, page.height - 20) },
      ]) {
        const ts = new Uint32Array(256);
        const c = new Uint32Array(256);
        const [, sampled] = smoothGreysTs(page, region, ts);
        assert.equal(native!.smoothGreys(page.data, page.width, region.left, region.top, region.width, region.height, 2, 40, 215, 16, c), sampled, `samples on ${page.name}`);
        assert.ok(same(ts, c), `smooth greys differ on ${page.name}`);
      }
    }
    assert.equal(contentTone(pages.find((p) => p.name === "vector PDF HIGH")!), "text");
  });

  it("refuse bad arguments with a RangeError instead of reading past the pixels", () => {
    const small = new Uint8Array(100);
    assert.throws(() => native!.encodeG4(small, 20, 20, 0, new Uint32Array(220)), RangeError);
    assert.throws(() => native!.encodeG4(small, 10, 10, 0, new Uint32Array(5)), RangeError);
    assert.throws(() => native!.thresholdShaded(small, 20, 20, 48, 232, 160, 6, 6, new Uint8Array(36 * 256)), RangeError);
    assert.throws(() => native!.thresholdShaded(small, 10, 10, 48, 232, 160, 6, 6, new Uint8Array(10)), RangeError);
    assert.throws(() => native!.greyHistograms(small, 10, 0, 11, 5, new Uint32Array(256)), RangeError);
    assert.throws(() => native!.smoothGreys(small, 10, 5, 0, 6, 10, 2, 40, 215, 16, new Uint32Array(256)), RangeError);
  });
});

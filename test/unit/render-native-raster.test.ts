/**
 * The raster addon (native/fax-raster, src/render/native-raster.ts) against its TypeScript twins:
 * the same pages through both must give the same bytes and counts. Pages: PDFium renderings of
 * the golden vector PDF (text, rules, a grey box) at both resolutions, a page of random greys (every
 * level, no aligned runs), nearly flat greys (at the flatness limit of the shading test), a photo-like ramp with flat shading and text bars, and odd widths (no
 * aligned words, so the sixteen- and eight-pixel steps meet tails of 1 to 15 pixels). The addon is built by
 * scripts/build-native.sh, which the install and CI run: a missing addon fails here.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { nativeRaster, rasterKernels } from "../../src/render/native-raster.ts";
import { greyHistogramsTs, halftoneBlocksTs, paperWhite, pictureBlocks, thresholdInPlace, thresholdInPlaceTs } from "../../src/render/fax-image/encode-fax-page.ts";
import { encodeG4Page, encodeG4PageTs } from "../../src/render/fax-image/encode-g4-page.ts";
import { contentTone, smoothGreysTs } from "../../src/render/pages/place-on-page.ts";
import { openPdfDocument } from "../../src/render/pages/pdf-pages.ts";
import { pageGeometry, type GreyPage } from "../../src/render/pages/grey-page.ts";
import { goldenVectorPdf } from "../fixtures/golden/golden-fax-pages.ts";
import { rasterDigests } from "../support/raster-digests.ts";
import { execFile } from "node:child_process";
import { promisify } from "node:util";

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
  for (const width of [1728, 1001, 33, 23, 13]) {
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
  // Tiny pages (fewer than eight pixels a row, one or two rows) and a wide one whose runs need the
  // extended make-up codes and more than one of them (over 2560 pixels).
  for (const [width, height] of [[1, 1], [3, 2], [7, 5], [9, 1], [2, 9]] as const) {
    pages.push(synthetic(width, height, () => [0, 255, 100, 128, 127, 232, 48][Math.floor(next() * 7)]!, `tiny ${width} x ${height}`));
  }
  pages.push(synthetic(6000, 8, (x, y) => (y % 2 === 0 ? (x < 5900 ? 255 : 0) : x < 2000 || x > 5000 ? 0 : 255), "wide, long runs"));
  // Pixels that start inside a larger buffer, as a page in PDFium's memory does (usePage), at an
  // offset that is not a multiple of four or eight.
  for (const page of pages.slice(0, 4)) {
    const backing = new Uint8Array(page.data.length + 11);
    backing.set(page.data, 5);
    pages.push({ ...page, name: `${page.name}, in a larger buffer`, data: backing.subarray(5, 5 + page.data.length) });
  }
  return pages;
}

/** A copy of a page's pixels, at the same odd offset in a larger buffer when the page's are at one. */
function copyOf(page: GreyPage): Uint8Array {
  if (page.data.byteOffset === 0) return page.data.slice();
  const backing = new Uint8Array(page.data.length + 11);
  backing.set(page.data, 5);
  return backing.subarray(5, 5 + page.data.length);
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
      const ts = thresholdInPlaceTs({ ...page, data: copyOf(page) });
      const c = thresholdInPlace({ ...page, data: copyOf(page) });
      assert.ok(same(ts, c), `threshold differs on ${page.name}`);
    }
  });

  it("threshold as a plain per-pixel reference does, with levels, flatness and cells other than the production ones", () => {
    // The production call passes one set of levels; the sixteen-pixel path has its own code for
    // blackBelow 256 (every mid grey black), for flatness 0 and 255, for edge lanes, and for
    // darkest 0 or lightest 255 (no paper/ink skipping). Each is met here against a reference that
    // reads only the original pixels, as the kernel's row copies do.
    const reference = (src: Uint8Array, width: number, height: number, darkest: number, lightest: number, blackBelow: number, flatness: number, cell: number, flatBlack: Uint8Array): Uint8Array => {
      const out = new Uint8Array(width * height);
      for (let y = 0; y < height; y++) {
        for (let x = 0; x < width; x++) {
          const i = y * width + x;
          const v = src[i]!;
          let black: boolean;
          if (v > lightest) black = false;
          else if (v < darkest) black = true;
          else {
            black = v < blackBelow;
            const inner = y > 0 && y < height - 1 && x > 0 && x < width - 1;
            if (inner && [src[i - 1]!, src[i + 1]!, src[i - width]!, src[i + width]!].every((n) => Math.abs(n - v) <= flatness)) {
              black = flatBlack[((y % cell) * cell + (x % cell)) * 256 + v] === 1;
            }
          }
          out[i] = black ? 0 : 255;
        }
      }
      return out;
    };
    const next = random(20261127);
    const levelSets: Array<[darkest: number, lightest: number, blackBelow: number, flatness: number, cell: number]> = [
      [48, 232, 160, 6, 6],
      [0, 255, 256, 0, 1],
      [0, 255, 0, 255, 4],
      [10, 250, 128, 3, 5],
      [100, 100, 101, 1, 7],
      [1, 254, 256, 8, 8],
      [200, 40, 128, 6, 3],
    ];
    let compared = 0;
    for (const [darkest, lightest, blackBelow, flatness, cell] of levelSets) {
      const flatBlack = Uint8Array.from({ length: cell * cell * 256 }, () => (next() < 0.5 ? 1 : 0));
      for (const [width, height] of [[1, 1], [15, 3], [16, 4], [17, 5], [33, 9], [48, 6], [61, 2]] as const) {
        // Flat patches with small noise (the flatness test), paper and ink runs (the skipping), and random greys.
        const src = new Uint8Array(width * height);
        for (let i = 0; i < src.length; i++) {
          const x = i % width;
          const zone = Math.floor(x / 8) % 4;
          src[i] = zone === 0 ? 255 : zone === 1 ? 0 : zone === 2 ? 120 + Math.floor(next() * 5) : Math.floor(next() * 256);
        }
        const expected = reference(src, width, height, darkest, lightest, blackBelow, flatness, cell, flatBlack);
        const actual = src.slice();
        native!.thresholdShaded(actual, width, height, darkest, lightest, blackBelow, flatness, cell, flatBlack);
        assert.ok(same(actual, expected), `levels ${[darkest, lightest, blackBelow, flatness, cell]}, ${width} x ${height}`);
        compared++;
      }
    }
    assert.equal(compared, levelSets.length * 7);
  });

  it("encode every page in G4 with the TypeScript's bytes and counts", () => {
    for (const page of pages) {
      // Thresholded pages (0 and 255) and the raw greys (any level: black is below 128).
      for (const pixels of [thresholdInPlaceTs({ ...page, data: copyOf(page) }), page.data]) {
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
      for (const [shift, y0, y1] of [[5, 0, page.height], [31, 0, page.height], [5, Math.min(page.height, 32), Math.min(page.height, 64)]] as const) {
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
      const regions = [
        { left: 0, top: 0, width: page.width, height: page.height },
        { left: 3, top: 7, width: page.width - 10, height: page.height - 20 },
      ].filter((region) => region.width >= 2 && region.height >= 2); // contentTone looks at no smaller region
      for (const region of regions) {
        const ts = new Uint32Array(256);
        const c = new Uint32Array(256);
        const [, sampled] = smoothGreysTs(page, region, ts);
        assert.equal(native!.smoothGreys(page.data, page.width, region.left, region.top, region.width, region.height, 2, 40, 215, 16, c), sampled, `samples on ${page.name}`);
        assert.ok(same(ts, c), `smooth greys differ on ${page.name}`);
        // Other steps (the addon looks at sixteen pixels at a time where the step divides 16, one
        // at a time otherwise) and levels, against a plain count.
        for (const [step, midMin, midMax, smoothStep] of [[1, 40, 215, 16], [3, 40, 215, 16], [4, 0, 255, 255], [8, 100, 100, 0], [5, 1, 254, 3]] as const) {
          const expected = new Uint32Array(256);
          let samples = 0;
          for (let y = region.top; y < region.top + region.height - 1; y += step) {
            for (let x = region.left; x < region.left + region.width - 1; x += step) {
              samples++;
              const at = y * page.width + x;
              const v = page.data[at]!;
              if (v >= midMin && v <= midMax && Math.abs(page.data[at + 1]! - v) <= smoothStep && Math.abs(page.data[at + page.width]! - v) <= smoothStep) expected[v]!++;
            }
          }
          const got = new Uint32Array(256);
          const counted = native!.smoothGreys(page.data, page.width, region.left, region.top, region.width, region.height, step, midMin, midMax, smoothStep, got);
          assert.equal(counted, samples, `samples on ${page.name}, step ${step}`);
          assert.ok(same(expected, got), `smooth greys differ on ${page.name}, step ${step}`);
        }
      }
    }
    assert.equal(contentTone(pages.find((p) => p.name === "vector PDF HIGH")!), "text");
  });

  it("screen picture blocks with the TypeScript's halftone, leaving the other blocks alone", () => {
    const levels = new Uint8Array(256).map((_, v) => Math.min(255, Math.round(v * 1.1)));
    for (const page of pages) {
      // One-pixel blocks only on the smaller pages (a mask byte per pixel).
      for (const [block, cell] of page.data.length < 1e6 ? ([[32, 6], [7, 5], [1, 1]] as const) : ([[32, 6], [7, 5]] as const)) {
        const columns = Math.ceil(page.width / block);
        const rows = Math.ceil(page.height / block);
        const mask = new Uint8Array(columns * rows).map((_, i) => (i % 3 === 0 || i % 7 === 1 ? 1 : i % 11 === 2 ? 2 : 0)); // 2: not a picture either
        const cellLevels = new Uint8Array(cell * cell).map((_, i) => (i * 97 + 13) % 256);
        const ts = new Uint8Array(page.width * page.height).fill(77);
        const c = ts.slice();
        halftoneBlocksTs(page.data, ts, page.width, page.height, mask, block, levels, cellLevels, cell);
        native!.halftoneBlocks(page.data, c, page.width, page.height, mask, block, levels, cellLevels, cell);
        assert.ok(same(ts, c), `halftone differs on ${page.name}, block ${block}`);
        const untouched = ts.filter((_, i) => mask[Math.floor(Math.floor(i / page.width) / block) * columns + Math.floor((i % page.width) / block)] !== 1);
        assert.ok(untouched.every((v) => v === 77), `pixels outside the picture blocks changed on ${page.name}`);
      }
    }
  });

  it("take the paper tone from the picture finder's histograms as from a pass of its own", () => {
    // Grey paper (a scan of yellowish paper) with a photo-like band and text bars, and every test page.
    const greyPaper = synthetic(1001, 300, (x, y) => (y > 100 && y < 200 ? (x * 7 + y) % 256 : x % 50 < 3 ? 20 : 200 + ((x + y) % 5)), "grey paper");
    for (const page of [...pages, greyPaper]) assert.equal(pictureBlocks(page).white, paperWhite(page), `paper tone differs on ${page.name}`);
    assert.ok(paperWhite(greyPaper) < 224, "the grey paper is found as paper");
  });

  it("render pages as a process without the addon does (FAXLINE_RASTER_ADDON=off: the TypeScript loops)", async () => {
    const script = `import { rasterDigests } from ${JSON.stringify(new URL("../support/raster-digests.ts", import.meta.url).href)}; console.log(JSON.stringify(await rasterDigests()));`;
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      env: { ...process.env, FAXLINE_RASTER_ADDON: "off" },
      maxBuffer: 1 << 20,
    });
    const { kernels: childKernels, ...withoutAddon } = JSON.parse(stdout) as Record<string, string>;
    const { kernels, ...withAddon } = await rasterDigests();
    assert.deepEqual([kernels, childKernels], ["native", "typescript"]);
    assert.ok(Object.keys(withAddon).length >= 21);
    assert.deepEqual(withAddon, withoutAddon);
    // The pages meet the paths that differ: a photo page screened, vector pages thresholded.
    assert.equal(withAddon["photo page: tone"], "photo");
    assert.match(withAddon["photo page: AUTO"]!, /^halftone /);
    assert.equal(withAddon["vector PDF HIGH: tone"], "text");
  });

  it("refuse bad arguments with a RangeError instead of reading past the pixels", () => {
    const small = new Uint8Array(100);
    assert.throws(() => native!.encodeG4(small, 20, 20, 0, new Uint32Array(220)), RangeError);
    assert.throws(() => native!.encodeG4(small, 10, 10, 0, new Uint32Array(5)), RangeError);
    assert.throws(() => native!.thresholdShaded(small, 20, 20, 48, 232, 160, 6, 6, new Uint8Array(36 * 256)), RangeError);
    assert.throws(() => native!.thresholdShaded(small, 10, 10, 48, 232, 160, 6, 6, new Uint8Array(10)), RangeError);
    assert.throws(() => native!.greyHistograms(small, 10, 0, 11, 5, new Uint32Array(256)), RangeError);
    assert.throws(() => native!.smoothGreys(small, 10, 5, 0, 6, 10, 2, 40, 215, 16, new Uint32Array(256)), RangeError);
    const levels = new Uint8Array(256);
    assert.throws(() => native!.halftoneBlocks(small, new Uint8Array(99), 10, 10, new Uint8Array(1), 32, levels, new Uint8Array(36), 6), RangeError);
    assert.throws(() => native!.halftoneBlocks(small, new Uint8Array(100), 10, 10, new Uint8Array(3), 4, levels, new Uint8Array(36), 6), RangeError);
    assert.throws(() => native!.halftoneBlocks(small, new Uint8Array(100), 10, 10, new Uint8Array(1), 32, new Uint8Array(255), new Uint8Array(36), 6), RangeError);
    assert.throws(() => native!.halftoneBlocks(small, new Uint8Array(100), 10, 10, new Uint8Array(1), 32, levels, new Uint8Array(35), 6), RangeError);
  });
});

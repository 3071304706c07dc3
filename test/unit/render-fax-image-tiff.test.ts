/**
 * The fax image file: TIFF-F structure of rendered jobs for every paper format and resolution
 * (pages encoded at once and pages drawn on later, by a cover page, header and overlay, alike),
 * the TIFF structure reader, the TIFF-F writer, the G4 encoder (the same code stream as libtiff's,
 * lossless), and libtiff's own verdict
 * (`tiffinfo -D` decodes every page of every variant without a warning).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { PDFDocument } from "pdf-lib";
import sharp from "sharp";
import { layoutText, textPageGeometry, type TextLayoutOptions } from "../../src/render/layout-text.ts";
import { encodeG4Page } from "../../src/render/fax-image/encode-g4-page.ts";
import { createTextPageRasterizer } from "../../src/render/fax-image/rasterize-text-page.ts";
import { readTiffPages, TiffStructureError } from "../../src/render/fax-image/tiff-structure.ts";
import { writeTiffF, type G4Page } from "../../src/render/fax-image/write-tiff-f.ts";
import type { DocumentInput, RenderLimits } from "../../src/render/pages/grey-page.ts";
import { renderFaxJob, type FaxJobRenderInput } from "../../src/render/render-fax-job.ts";
import { decodePage, renderedImages, renderOneImage } from "../support/fax-page-pixels.ts";
import { requirePeer } from "../support/required-peers.ts";
import { tempDir } from "../support/test-node.ts";

const TWO_PAGES = Array.from({ length: 70 }, (_, i) => `Line ${i + 1}: the quick brown fox jumps over the lazy dog.`).join("\n");
const LIMITS: RenderLimits = { maxPages: 50, maxSourcePixels: 200_000_000, converterTimeoutMs: 60_000 };
const TIME = Date.UTC(2026, 10, 21, 9, 30);

const CASES: { options: TextLayoutOptions; height: number; yDpi: number }[] = [
  { options: { paperFormat: "A4", resolution: "HIGH" }, height: 2292, yDpi: 196 },
  { options: { paperFormat: "A4", resolution: "LOW" }, height: 1146, yDpi: 98 },
  { options: { paperFormat: "LETTER", resolution: "HIGH" }, height: 2156, yDpi: 196 },
  { options: { paperFormat: "LETTER", resolution: "LOW" }, height: 1078, yDpi: 98 },
];

const textDocument = (text = TWO_PAGES): DocumentInput => ({ name: "letter.txt", bytes: Buffer.from(text, "utf8") });

/** A job of the two-page text; `dressed` adds the default cover page, a header naming the recipient, and an overlay, for two recipients. */
function textJob(options: TextLayoutOptions, dressed: boolean, documents: DocumentInput[] = [textDocument()]): FaxJobRenderInput {
  return {
    documents,
    ...options,
    header: dressed ? { template: "%d.%m.%Y %H:%M%cTo %#%rPage %P of %T", csid: "+49 89 0000000", timeZone: "Europe/Berlin", time: TIME } : null,
    cover: dressed ? { kind: "svg", content: null, time: TIME, timeZone: "Europe/Berlin" } : null,
    overlay: dressed ? { document: { name: "stamp.txt", bytes: Buffer.from("\n".repeat(40) + " ".repeat(60) + "COPY") }, mode: "ALL_BUT_FIRST_PAGE" } : null,
    recipients: dressed
      ? [
          { id: "a", number: "+4989000001001", properties: { ToName: "Erika Mustermann" } },
          { id: "b", number: "+4989000001002", properties: { ToName: "Max Mustermann" } },
        ]
      : [{ id: "a", number: "+4989000001001", properties: {} }],
    limits: LIMITS,
  };
}

describe("renderFaxJob: TIFF-F structure", () => {
  for (const { options, height, yDpi } of CASES) {
    const label = `${options.paperFormat} ${options.resolution}`;
    it(`${label}: 1728 x ${height} G4 pages at 204 x ${yDpi} dpi, min-is-white, numbered, in every variant`, async () => {
      const layout = layoutText(TWO_PAGES, options);
      assert.equal(layout.pages.length, 2);
      for (const dressed of [false, true]) {
        const images = renderedImages(await renderFaxJob(textJob(options, dressed)));
        assert.equal(images.length, dressed ? 2 : 1, "variants");
        for (const image of images) {
          const pages = readTiffPages(image.tiff);
          assert.equal(pages.length, layout.pages.length + (dressed ? 1 : 0), "every layout page, and the cover page");
          for (const [i, page] of pages.entries()) {
            const what = `${label}${dressed ? " with cover, header and overlay" : ""}, recipients ${image.recipientIds.join(",")}, page ${i + 1}`;
            assert.equal(page.width, 1728, what);
            assert.equal(page.height, height, what);
            assert.equal(page.xResolution, 204, what);
            assert.equal(page.yResolution, yDpi, what);
            assert.equal(page.resolutionUnit, 2, `${what}: inch`);
            assert.equal(page.compression, 4, `${what}: CCITT T.6 (G4)`);
            assert.equal(page.photometric, 0, `${what}: min-is-white`);
            assert.equal(page.bitsPerSample, 1, what);
            assert.equal(page.newSubfileType, 2, `${what}: a page of a multi-page document`);
            assert.deepEqual(page.pageNumber, { page: i, of: pages.length }, what);
          }
          assert.deepEqual(image.pageSizes, pages.map((p) => p.encodedBytes));
          assert.equal(image.preflight.length, pages.length);
        }
      }
    });
  }

  it("a page with text takes more G4 bytes than a blank page", async () => {
    const blankPdf = await PDFDocument.create();
    blankPdf.addPage([595.28, 841.89]);
    const image = await renderOneImage(textJob({ paperFormat: "A4", resolution: "HIGH" }, false, [textDocument(), { name: "blank.pdf", bytes: await blankPdf.save() }]));
    const [first, , blank] = image.pageSizes;
    assert.ok(blank! > 0 && first! > 10 * blank!, `blank ${blank} bytes, text ${first} bytes`);
  });

  it("G4 encoding is lossless: every decoded page equals the rasterised pixels", async () => {
    for (const { options } of CASES) {
      const layout = layoutText(TWO_PAGES, options);
      const image = await renderOneImage(textJob(options, false));
      const rasterize = createTextPageRasterizer(options);
      for (const [i, page] of layout.pages.entries()) {
        const decoded = await decodePage(image.tiff, i);
        const expected = rasterize(page);
        assert.ok(Buffer.from(expected).equals(decoded.pixels), `${options.paperFormat} ${options.resolution} page ${i + 1}`);
      }
    }
  });

  it("rasterised pages are bilevel: only 0 and 255", () => {
    const options: TextLayoutOptions = { paperFormat: "A4", resolution: "LOW" };
    const pixels = createTextPageRasterizer(options)(layoutText("Grüße, 5 € — mixed text", options).pages[0]!);
    const geometry = textPageGeometry(options);
    assert.equal(pixels.length, geometry.widthPx * geometry.heightPx);
    assert.ok(pixels.every((v) => v === 0 || v === 255));
    assert.ok(pixels.some((v) => v === 0), "some text is black");
  });

  it("tiffinfo -D reads and decodes every page of every variant without a warning", async () => {
    requirePeer("tiffinfo");
    const dir = tempDir();
    try {
      for (const { options } of CASES) {
        for (const dressed of [false, true]) {
          const images = renderedImages(await renderFaxJob(textJob(options, dressed)));
          for (const [variant, image] of images.entries()) {
            const file = join(dir.path, `${options.paperFormat}-${options.resolution}-${dressed ? "dressed" : "plain"}-${variant}.tif`);
            writeFileSync(file, image.tiff);
            const run = spawnSync("tiffinfo", ["-D", file], { encoding: "utf8" });
            const pages = dressed ? 3 : 2;
            assert.equal(run.status, 0, run.stderr);
            assert.equal(run.stderr, "", `${file}: no warnings`);
            assert.equal(run.stdout.match(/TIFF Directory at offset/g)?.length, pages, file);
            assert.match(run.stdout, /Compression Scheme: CCITT Group 4/);
            assert.match(run.stdout, /Photometric Interpretation: min-is-white/);
            assert.match(run.stdout, new RegExp(`Page Number: ${pages - 1}-${pages}`));
          }
        }
      }
    } finally {
      dir.remove();
    }
  });
});

/** libtiff's own G4 encoding of a page (through sharp), strips as it cuts them. */
async function libtiffG4Page(pixels: Uint8Array, size: { width: number; height: number }): Promise<G4Page> {
  const tiff = await sharp(pixels, { raw: { ...size, channels: 1 } })
    .toColourspace("b-w")
    .tiff({ compression: "ccittfax4", bitdepth: 1, miniswhite: true })
    .toBuffer();
  const [page] = readTiffPages(tiff);
  assert.ok(page !== undefined);
  return { ...size, rowsPerStrip: page.rowsPerStrip, strips: page.stripOffsets.map((offset, i) => tiff.subarray(offset, offset + page.stripByteCounts[i]!)) };
}

describe("encodeG4Page", () => {
  // Pseudo-random pages that exercise every coding mode: long runs (make-up and extended make-up
  // codes, runs past 2560), one- to eight-pixel runs, and lines that repeat the one above shifted by
  // up to three pixels (vertical modes) or with runs the line above spans (pass mode).
  let seed = 20261126;
  const random = (): number => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  function randomPage(width: number, height: number, maxRun: number): Uint8Array {
    const pixels = new Uint8Array(width * height).fill(255);
    for (let y = 0; y < height; y++) {
      const row = y * width;
      if (y > 0 && random() < 0.4) {
        const shift = Math.floor(random() * 7) - 3;
        for (let x = 0; x < width; x++) pixels[row + x] = pixels[row - width + Math.min(width - 1, Math.max(0, x + shift))]!;
        continue;
      }
      let black = random() < 0.5;
      for (let x = 0; x < width; black = !black) {
        const run = 1 + Math.floor(random() * maxRun);
        pixels.fill(black ? 0 : 255, row + x, row + Math.min(width, x + run));
        x += run;
      }
    }
    return pixels;
  }

  it("writes the same code stream as libtiff and decodes back to the same pixels", async () => {
    const cases = [
      { width: 1728, height: 40, maxRun: 8 },
      { width: 1728, height: 40, maxRun: 80 },
      { width: 2432, height: 30, maxRun: 3000 },
      { width: 6000, height: 12, maxRun: 6000 }, // runs past 2560: repeated extended make-up codes
      { width: 13, height: 9, maxRun: 5 }, // rows not word-aligned
      { width: 1728, height: 1, maxRun: 1 },
    ];
    for (const size of cases) {
      const pixels = randomPage(size.width, size.height, size.maxRun);
      const { g4 } = encodeG4Page(pixels, size);
      const libtiff = await libtiffG4Page(pixels, size);
      assert.deepEqual(Buffer.from(g4.strips[0]!), Buffer.concat(libtiff.strips), `${size.width} x ${size.height}, runs up to ${size.maxRun}`);
      const decoded = await decodePage(writeTiffF([g4], { xDpi: 204, yDpi: 196 }), 0);
      assert.ok(decoded.pixels.equals(Buffer.from(pixels.map((v) => (v < 128 ? 0 : 255)))));
    }
  });

  it("codes white, black and one-pixel pages, and treats every value below 128 as black", async () => {
    const size = { width: 1728, height: 4 };
    const grey = new Uint8Array(size.width * size.height).map((_, i) => (i % 3 === 0 ? 127 : i % 3 === 1 ? 128 : 0));
    for (const pixels of [new Uint8Array(size.width * size.height).fill(255), new Uint8Array(size.width * size.height), grey]) {
      const decoded = await decodePage(writeTiffF([encodeG4Page(pixels, size).g4], { xDpi: 204, yDpi: 98 }), 0);
      assert.ok(decoded.pixels.equals(Buffer.from(pixels.map((v) => (v < 128 ? 0 : 255)))));
    }
  });

  it("counts the page's Modified Huffman bits and its black pixels from a scan line down", () => {
    const size = { width: 64, height: 3 };
    const pixels = new Uint8Array(64 * 3).fill(255);
    pixels.fill(0, 0, 10); // row 0: black 10, white 54
    pixels.fill(0, 64 + 60, 128); // row 1: white 60, black 4
    const { counts } = encodeG4Page(pixels, size, 1);
    // MH: row 0 white 0 (8) + black 10 (7) + white 54 (8); row 1 white 60 (8) + black 4 (3);
    // row 2 white 64 (make-up 5 + terminating 0: 8); a 12-bit EOL per row and 6 for the RTC.
    assert.equal(counts.mhBits, 8 + 7 + 8 + 8 + 3 + 5 + 8 + 12 * 3 + 12 * 6);
    assert.equal(counts.blackPixels, 4);
    assert.equal(counts.countedFrom, 1);
  });

  it("refuses a size that does not match its pixels", () => {
    assert.throws(() => encodeG4Page(new Uint8Array(10), { width: 1728, height: 2 }), /expected 1728 x 2 bytes/);
    assert.throws(() => encodeG4Page(new Uint8Array(10), { width: 0, height: 2 }), RangeError);
  });
});

describe("writeTiffF", () => {
  it("copies the strips unchanged and points each page at them, several strips per page included", async () => {
    const width = 1728;
    const height = 600; // libtiff (through sharp) writes 256 rows per strip: 3 strips
    const pixels = new Uint8Array(width * height).fill(255);
    for (let y = 100; y < 500; y++) pixels.fill(0, y * width + 200, y * width + 260);
    const page = await libtiffG4Page(pixels, { width, height });
    assert.equal(page.strips.length, 3);
    const tiff = writeTiffF([page, page], { xDpi: 204, yDpi: 98 });
    const pages = readTiffPages(tiff);
    assert.equal(pages.length, 2);
    for (const read of pages) {
      assert.equal(read.rowsPerStrip, page.rowsPerStrip);
      assert.deepEqual(
        read.stripOffsets.map((offset, i) => Buffer.from(tiff.subarray(offset, offset + read.stripByteCounts[i]!))),
        page.strips.map((strip) => Buffer.from(strip)),
      );
    }
    assert.deepEqual(pages.map((p) => p.pageNumber), [{ page: 0, of: 2 }, { page: 1, of: 2 }]);
    assert.ok((await decodePage(tiff, 1)).pixels.equals(Buffer.from(pixels)));
  });

  it("refuses an empty page list", () => {
    assert.throws(() => writeTiffF([], { xDpi: 204, yDpi: 196 }), RangeError);
  });
});

describe("readTiffPages", () => {
  it("reads sharp's own multi-page G4 output", async () => {
    const width = 1728;
    const height = 100;
    const tiff = await sharp(Buffer.alloc(width * height * 3, 255), { raw: { width, height: height * 3, channels: 1, pageHeight: height } })
      .toColourspace("b-w")
      .tiff({ compression: "ccittfax4", bitdepth: 1, miniswhite: true, xres: 204 / 25.4, yres: 98 / 25.4, resolutionUnit: "inch" })
      .toBuffer();
    const pages = readTiffPages(tiff);
    assert.deepEqual(
      pages.map((p) => [p.width, p.height, p.compression, p.photometric, p.pageNumber?.page, p.pageNumber?.of]),
      [
        [1728, 100, 4, 0, 0, 3],
        [1728, 100, 4, 0, 1, 3],
        [1728, 100, 4, 0, 2, 3],
      ],
    );
    assert.ok(Math.abs(pages[0]!.xResolution! - 204) < 0.01 && Math.abs(pages[0]!.yResolution! - 98) < 0.01);
  });

  it("reads a big-endian file", () => {
    // Header "MM", 42, IFD at 8: ImageWidth 16, ImageLength 2, Compression 1, StripOffsets 62,
    // StripByteCounts 4, next IFD 0; then 4 bytes of pixels.
    const entries: [number, number, number][] = [
      [256, 3, 16],
      [257, 3, 2],
      [259, 3, 1],
      [273, 4, 62],
      [279, 4, 4],
    ];
    const file = Buffer.alloc(8 + 2 + entries.length * 12 + 4 + 4);
    file.write("MM", 0, "latin1");
    file.writeUInt16BE(42, 2);
    file.writeUInt32BE(8, 4);
    file.writeUInt16BE(entries.length, 8);
    entries.forEach(([tag, type, value], i) => {
      const at = 10 + i * 12;
      file.writeUInt16BE(tag, at);
      file.writeUInt16BE(type, at + 2);
      file.writeUInt32BE(1, at + 4);
      if (type === 3) file.writeUInt16BE(value, at + 8);
      else file.writeUInt32BE(value, at + 8);
    });
    const [page] = readTiffPages(file);
    assert.equal(page?.width, 16);
    assert.equal(page?.height, 2);
    assert.equal(page?.compression, 1);
    assert.deepEqual(page?.stripOffsets, [62]);
    assert.equal(page?.encodedBytes, 4);
    assert.equal(page?.photometric, null);
    assert.equal(page?.pageNumber, null);
  });

  it("names what is wrong with a file that is not a readable TIFF", async () => {
    const valid = writeTiffF([encodeG4Page(new Uint8Array(1728 * 8).fill(255), { width: 1728, height: 8 }).g4], { xDpi: 204, yDpi: 196 });
    const firstIfd = valid.readUInt32LE(4);
    const stripByteCountsValue = firstIfd + 2 + 10 * 12 + 8; // the 11th entry, tag 279, one strip
    const cases: [string, Buffer, RegExp][] = [
      ["too short", Buffer.from("II*\0"), /shorter than a TIFF header/],
      ["a PNG", Buffer.from("\x89PNG\r\n\x1a\n", "latin1"), /byte order mark/],
      ["BigTIFF", Buffer.from([0x49, 0x49, 43, 0, 8, 0, 0, 0]), /BigTIFF/],
      ["IFD outside the file", Buffer.from([0x49, 0x49, 42, 0, 0xff, 0xff, 0, 0]), /outside/],
      ["a looping IFD chain", withUint32(valid, firstIfd + 2 + 16 * 12, firstIfd), /loops/],
      ["an IFD cut off", valid.subarray(0, firstIfd + 20), /outside/],
      ["a strip past the end", withUint32(valid, stripByteCountsValue, 1_000_000), /strip 0 of IFD 0 runs past the end/],
    ];
    for (const [what, file, message] of cases) {
      assert.throws(() => readTiffPages(file), (err: unknown) => err instanceof TiffStructureError && message.test(err.message), what);
    }
  });
});

function withUint32(buffer: Buffer, at: number, value: number): Buffer {
  const copy = Buffer.from(buffer);
  copy.writeUInt32LE(value, at);
  return copy;
}

/**
 * The fax image file: TIFF-F structure of rendered jobs for every paper format and resolution,
 * the TIFF structure reader, the TIFF-F writer, lossless G4 encoding, and libtiff's own verdict
 * (`tiffinfo -D` decodes every page without a warning).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { layoutText, textPageGeometry, type TextLayoutOptions } from "../../src/render/layout-text.ts";
import { encodeG4Page } from "../../src/render/fax-image/encode-g4-page.ts";
import { createTextPageRasterizer } from "../../src/render/fax-image/rasterize-text-page.ts";
import { renderFaxImage } from "../../src/render/fax-image/render-fax-image.ts";
import { readTiffPages, TiffStructureError } from "../../src/render/fax-image/tiff-structure.ts";
import { writeTiffF } from "../../src/render/fax-image/write-tiff-f.ts";
import { decodePage } from "../support/fax-page-pixels.ts";
import { tempDir } from "../support/test-node.ts";

const TWO_PAGES = Array.from({ length: 70 }, (_, i) => `Line ${i + 1}: the quick brown fox jumps over the lazy dog.`).join("\n");
const COVER = "T E L E F A X\n\nTo: Erika Mustermann";

const CASES: { options: TextLayoutOptions; height: number; yDpi: number }[] = [
  { options: { paperFormat: "A4", resolution: "HIGH" }, height: 2292, yDpi: 196 },
  { options: { paperFormat: "A4", resolution: "LOW" }, height: 1146, yDpi: 98 },
  { options: { paperFormat: "LETTER", resolution: "HIGH" }, height: 2156, yDpi: 196 },
  { options: { paperFormat: "LETTER", resolution: "LOW" }, height: 1078, yDpi: 98 },
];

const tiffinfoMissing = spawnSync("tiffinfo", [], { encoding: "utf8" }).error !== undefined;
const TIFFINFO_SKIP = tiffinfoMissing ? "tiffinfo is not installed (Debian package libtiff-tools; scripts/install.sh installs it)" : false;

describe("renderFaxImage: TIFF-F structure", () => {
  for (const { options, height, yDpi } of CASES) {
    const label = `${options.paperFormat} ${options.resolution}`;
    it(`${label}: 1728 x ${height} G4 pages at 204 x ${yDpi} dpi, min-is-white, numbered, a cover page first`, async () => {
      const layout = layoutText(TWO_PAGES, options);
      const image = await renderFaxImage({ textPages: layout.pages, coverPageText: COVER, ...options });
      const pages = readTiffPages(image.tiff);
      assert.equal(layout.pages.length, 2);
      assert.equal(pages.length, layout.pages.length + 1, "the cover page and every layout page");
      for (const [i, page] of pages.entries()) {
        const what = `${label}, page ${i + 1}`;
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
    });
  }

  it("a page with text takes more G4 bytes than a blank cover page", async () => {
    const options: TextLayoutOptions = { paperFormat: "A4", resolution: "HIGH" };
    const image = await renderFaxImage({ textPages: layoutText(TWO_PAGES, options).pages, coverPageText: "", ...options });
    const [cover, first] = image.pageSizes;
    assert.ok(cover! > 0 && first! > 10 * cover!, `blank ${cover} bytes, text ${first} bytes`);
  });

  it("G4 encoding is lossless: every decoded page equals the rasterised pixels", async () => {
    for (const { options } of CASES) {
      const layout = layoutText(TWO_PAGES, options);
      const image = await renderFaxImage({ textPages: layout.pages, coverPageText: null, ...options });
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

  it("tiffinfo -D reads and decodes every page without a warning", { skip: TIFFINFO_SKIP }, async () => {
    const dir = tempDir();
    try {
      for (const { options } of CASES) {
        const image = await renderFaxImage({ textPages: layoutText(TWO_PAGES, options).pages, coverPageText: COVER, ...options });
        const file = join(dir.path, `${options.paperFormat}-${options.resolution}.tif`);
        writeFileSync(file, image.tiff);
        const run = spawnSync("tiffinfo", ["-D", file], { encoding: "utf8" });
        assert.equal(run.status, 0, run.stderr);
        assert.equal(run.stderr, "", "no warnings");
        assert.equal(run.stdout.match(/TIFF Directory at offset/g)?.length, 3);
        assert.match(run.stdout, /Compression Scheme: CCITT Group 4/);
        assert.match(run.stdout, /Photometric Interpretation: min-is-white/);
        assert.match(run.stdout, /Page Number: 2-3/);
      }
    } finally {
      dir.remove();
    }
  });
});

describe("writeTiffF", () => {
  it("copies the strips unchanged and points each page at them, several strips per page included", async () => {
    const width = 1728;
    const height = 600; // sharp writes 256 rows per strip: 3 strips
    const pixels = new Uint8Array(width * height).fill(255);
    for (let y = 100; y < 500; y++) pixels.fill(0, y * width + 200, y * width + 260);
    const page = await encodeG4Page(pixels, { width, height });
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
    const valid = writeTiffF([await encodeG4Page(new Uint8Array(1728 * 8).fill(255), { width: 1728, height: 8 })], { xDpi: 204, yDpi: 196 });
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

/**
 * Image pages (src/render/pages/image-pages.ts, place-on-page.ts, bmp-decode.ts): where an
 * image lands on the fax page (scaled to fill when it has no resolution, at its size on paper
 * when it has one, turned when landscape), EXIF orientation, transparency, the first GIF frame,
 * BMP in its main variants, multi-page TIFF with pages of different sizes and compressions, fax
 * TIFFs at 204 x 98 and 204 x 196 dpi copied pixel for pixel across, and the failures
 * (decompression bomb, truncated, not an image). Every image is made here with sharp, or by hand
 * where sharp cannot write the format (BMP) or the file must be broken.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { crc32, deflateSync } from "node:zlib";
import sharp, { type Sharp } from "sharp";
import { contentBox, DocumentRenderError, pageGeometry, type GreyPage, type PageGeometry, type RenderLimits } from "../../src/render/pages/grey-page.ts";
import { decodeBmp } from "../../src/render/pages/bmp-decode.ts";
import { imagePages } from "../../src/render/pages/image-pages.ts";

const HIGH = pageGeometry("A4", "HIGH");
const LOW = pageGeometry("A4", "LOW");
const LETTER_HIGH = pageGeometry("LETTER", "HIGH");
const LIMITS: RenderLimits = { maxPages: 50, maxSourcePixels: 200_000_000, converterTimeoutMs: 10_000 };

async function renderAll(name: string, bytes: Uint8Array, geometry: PageGeometry = HIGH, limits: RenderLimits = LIMITS): Promise<GreyPage[]> {
  const pages: GreyPage[] = [];
  for await (const page of imagePages({ name, bytes }, geometry, limits)) pages.push(page);
  return pages;
}

async function rejectsWith(reasonCode: string, name: string, bytes: Uint8Array, limits: RenderLimits = LIMITS): Promise<DocumentRenderError> {
  let caught: unknown;
  try {
    await renderAll(name, bytes, HIGH, limits);
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof DocumentRenderError, `expected a DocumentRenderError, got ${String(caught)}`);
  assert.equal(caught.reasonCode, reasonCode, caught.message);
  assert.ok(caught.message.includes(name), `the message names the document: ${caught.message}`);
  return caught;
}

interface Rect {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** Bounding box of pixels darker than 128; null if none. */
function darkBox(page: { width: number; height: number; data: Uint8Array }): Rect | null {
  let box: Rect | null = null;
  for (let y = 0; y < page.height; y++) {
    for (let x = 0; x < page.width; x++) {
      if (page.data[y * page.width + x]! >= 128) continue;
      box ??= { left: x, top: y, right: x + 1, bottom: y + 1 };
      box.left = Math.min(box.left, x);
      box.top = Math.min(box.top, y);
      box.right = Math.max(box.right, x + 1);
      box.bottom = Math.max(box.bottom, y + 1);
    }
  }
  return box;
}

function assertNear(actual: Rect | null, expected: Rect, tolerance: number, what: string): void {
  assert.ok(actual !== null, `${what}: nothing dark found`);
  for (const side of ["left", "top", "right", "bottom"] as const) {
    assert.ok(Math.abs(actual[side] - expected[side]) <= tolerance, `${what}: ${side} is ${actual[side]}, expected ${expected[side]} ± ${tolerance} (${JSON.stringify(actual)})`);
  }
}

/** A white grey raster with black rectangles. */
function greyRaster(width: number, height: number, blacks: Rect[] = []): Uint8Array {
  const data = new Uint8Array(width * height).fill(255);
  for (const r of blacks) for (let y = r.top; y < r.bottom; y++) data.fill(0, y * width + r.left, y * width + r.right);
  return data;
}

function rawSharp(data: Uint8Array, width: number, height: number, channels: 1 | 2 | 3 | 4 = 1): Sharp {
  return sharp(data, { raw: { width, height, channels } });
}

/** Where an image of `width` x `height` square pixels without a resolution is scaled to (fills the content box, centred). */
function filledPlacement(width: number, height: number, geometry: PageGeometry): { rect: Rect; x: (px: number) => number; y: (px: number) => number } {
  const box = contentBox(geometry);
  const scale = Math.min(box.width / geometry.xDpi / width, box.height / geometry.yDpi / height); // inches per source pixel
  const w = Math.round(width * scale * geometry.xDpi);
  const h = Math.round(height * scale * geometry.yDpi);
  const left = box.left + Math.floor((box.width - w) / 2);
  const top = box.top + Math.floor((box.height - h) / 2);
  return {
    rect: { left, top, right: left + w, bottom: top + h },
    x: (px) => left + Math.round(px * scale * geometry.xDpi),
    y: (px) => top + Math.round(px * scale * geometry.yDpi),
  };
}

/** A BMP file of a grey raster: 24-bit BGR, or 8-bit with a grey colour table; bottom-up rows. */
function bmpFile(width: number, height: number, grey: Uint8Array, bitsPerPixel: 24 | 8, pixelsPerMetre = 0): Uint8Array {
  const stride = Math.floor((width * bitsPerPixel + 31) / 32) * 4;
  const paletteBytes = bitsPerPixel === 8 ? 256 * 4 : 0;
  const offset = 14 + 40 + paletteBytes;
  const file = new Uint8Array(offset + stride * height);
  const view = new DataView(file.buffer);
  file.set([0x42, 0x4d]);
  view.setUint32(2, file.length, true);
  view.setUint32(10, offset, true);
  view.setUint32(14, 40, true);
  view.setInt32(18, width, true);
  view.setInt32(22, height, true);
  view.setUint16(26, 1, true);
  view.setUint16(28, bitsPerPixel, true);
  view.setInt32(38, pixelsPerMetre, true);
  view.setInt32(42, pixelsPerMetre, true);
  for (let i = 0; i < paletteBytes / 4; i++) file.set([i, i, i, 0], 54 + i * 4);
  for (let y = 0; y < height; y++) {
    const row = offset + (height - 1 - y) * stride;
    for (let x = 0; x < width; x++) {
      const v = grey[y * width + x]!;
      if (bitsPerPixel === 8) file[row + x] = v;
      else file.set([v, v, v], row + x * 3);
    }
  }
  return file;
}

/**
 * Joins single-page little-endian TIFF files (as sharp writes them) into one multi-page TIFF:
 * each file's offsets are moved by where it lands, and its IFD is chained after the previous.
 */
function joinTiffs(files: Buffer[]): Uint8Array {
  const TYPE_SIZE: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 16: 8 };
  const parts: Uint8Array[] = [];
  let length = 0;
  let previousNextPointer = -1;
  let out = new Uint8Array(0);
  const ifdLinks: { at: number; target: number }[] = [];
  for (const file of files) {
    const base = length + (length % 2);
    const copy = new Uint8Array(file);
    const view = new DataView(copy.buffer);
    assert.equal(view.getUint16(0, true), 0x4949, "little-endian TIFF");
    const ifd = view.getUint32(4, true);
    assert.notEqual(ifd, 0);
    const count = view.getUint16(ifd, true);
    for (let i = 0; i < count; i++) {
      const entry = ifd + 2 + i * 12;
      const tag = view.getUint16(entry, true);
      const type = view.getUint16(entry + 2, true);
      const n = view.getUint32(entry + 4, true);
      const bytes = (TYPE_SIZE[type] ?? 1) * n;
      const isOffsetList = tag === 273 || tag === 324; // StripOffsets, TileOffsets
      if (bytes > 4) {
        const valueAt = view.getUint32(entry + 8, true);
        view.setUint32(entry + 8, valueAt + base, true);
        if (isOffsetList) {
          for (let k = 0; k < n; k++) {
            if (type === 4) view.setUint32(valueAt + 4 * k, view.getUint32(valueAt + 4 * k, true) + base, true);
            else throw new Error("SHORT strip offset lists are not handled");
          }
        }
      } else if (isOffsetList) {
        assert.equal(n, 1);
        if (type === 4) view.setUint32(entry + 8, view.getUint32(entry + 8, true) + base, true);
        else view.setUint16(entry + 8, view.getUint16(entry + 8, true) + base, true);
      }
    }
    const nextPointer = ifd + 2 + count * 12;
    if (previousNextPointer >= 0) ifdLinks.push({ at: previousNextPointer, target: ifd + base });
    previousNextPointer = nextPointer + base;
    if (base > length) parts.push(new Uint8Array(1));
    parts.push(copy);
    length = base + copy.length;
  }
  out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  const view = new DataView(out.buffer);
  for (const link of ifdLinks) view.setUint32(link.at, link.target, true);
  return out;
}

/** A fax page as a 1-bit CCITT G4 TIFF at 204 x `linesPerInch` dpi. */
function g4Tiff(data: Uint8Array, width: number, height: number, linesPerInch: number): Promise<Buffer> {
  return rawSharp(data, width, height)
    .toColourspace("b-w")
    .tiff({ compression: "ccittfax4", bitdepth: 1, miniswhite: true, xres: 204 / 25.4, yres: linesPerInch / 25.4, resolutionUnit: "inch" })
    .toBuffer();
}

/**
 * A PNG that claims `width` x `height` pixels and holds the first row only (decoders read the
 * header only once an IDAT chunk follows it): a few dozen bytes.
 */
function bombPng(width: number, height: number): Uint8Array {
  const chunk = (type: string, data: Uint8Array): Buffer => {
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body) >>> 0, body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 0, 0, 0, 0], 8); // 8-bit grey, deflate, no filter, no interlace
  const firstRow = deflateSync(new Uint8Array(width + 1));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", header), chunk("IDAT", firstRow), chunk("IEND", new Uint8Array(0))]);
}

describe("imagePages: placement", () => {
  for (const geometry of [HIGH, LOW]) {
    it(`a PNG without a resolution fills the content box; a black square lands in place (${geometry.resolution})`, async () => {
      const png = await rawSharp(greyRaster(300, 400, [{ left: 100, top: 100, right: 200, bottom: 200 }]), 300, 400).png().toBuffer();
      const [page] = await renderAll("square.png", png, geometry);
      assert.equal(page!.width, 1728);
      assert.equal(page!.height, geometry.heightPx);
      const at = filledPlacement(300, 400, geometry);
      assert.ok(at.rect.right - at.rect.left === contentBox(geometry).width, "fills the width of the content box");
      assertNear(darkBox(page!), { left: at.x(100), top: at.y(100), right: at.x(200), bottom: at.y(200) }, 2, "square");
      assert.equal(page!.tone, "text");
    });
  }

  it("an image with a resolution is shown at its size on paper, not enlarged (non-square fax pixels)", async () => {
    // 300 x 300 pixels at 100 dpi: 3 x 3 inches, i.e. 612 pixels across and 588 scan lines at HIGH.
    const png = await rawSharp(greyRaster(300, 300, [{ left: 0, top: 0, right: 300, bottom: 300 }]), 300, 300).withMetadata({ density: 100 }).png().toBuffer();
    const [page] = await renderAll("stamp.png", png);
    const box = darkBox(page!)!;
    assert.ok(Math.abs(box.right - box.left - 612) <= 1, `3 inches across: ${box.right - box.left}`);
    assert.ok(Math.abs(box.bottom - box.top - 588) <= 1, `3 inches down: ${box.bottom - box.top}`);
    const content = contentBox(HIGH);
    assert.ok(Math.abs(box.left - (content.left + (content.width - 612) / 2)) <= 1, "centred across");
    assert.ok(Math.abs(box.top - (content.top + (content.height - 588) / 2)) <= 1, "centred down");
  });

  it("a landscape image is turned counter-clockwise: its top left corner ends up bottom left", async () => {
    const png = await rawSharp(greyRaster(800, 400, [{ left: 0, top: 0, right: 100, bottom: 100 }]), 800, 400).png().toBuffer();
    const [page] = await renderAll("wide.png", png);
    // Turned, it is a 400 x 800 portrait image; the corner square's side is 100 source pixels.
    const at = filledPlacement(400, 800, HIGH);
    assertNear(darkBox(page!), { left: at.rect.left, top: at.y(700), right: at.x(100), bottom: at.rect.bottom }, 2, "corner square");
  });

  it("a JPEG's EXIF orientation is honoured", async () => {
    // Stored 400 x 300 with the square top left; orientation 6 shows it turned clockwise:
    // 300 x 400, the square top right.
    const jpeg = await rawSharp(greyRaster(400, 300, [{ left: 0, top: 0, right: 100, bottom: 100 }]), 400, 300)
      .jpeg({ quality: 95 })
      .withMetadata({ orientation: 6 })
      .toBuffer();
    const [page] = await renderAll("phone.jpg", jpeg);
    const at = filledPlacement(300, 400, HIGH);
    assertNear(darkBox(page!), { left: at.x(200), top: at.rect.top, right: at.rect.right, bottom: at.y(100) }, 3, "square");
  });

  it("transparency is flattened onto white (WebP with alpha)", async () => {
    const rgba = new Uint8Array(200 * 200 * 4); // transparent black everywhere ...
    for (let y = 50; y < 100; y++) for (let x = 50; x < 100; x++) rgba[(y * 200 + x) * 4 + 3] = 255; // ... but an opaque square
    const webp = await rawSharp(rgba, 200, 200, 4).webp({ lossless: true }).toBuffer();
    const [page] = await renderAll("logo.webp", webp);
    const at = filledPlacement(200, 200, HIGH);
    assertNear(darkBox(page!), { left: at.x(50), top: at.y(50), right: at.x(100), bottom: at.y(100) }, 2, "opaque square only");
  });

  it("an animated GIF gives its first frame, once", async () => {
    const frames = new Uint8Array(100 * 200).fill(255);
    frames.fill(0, 0, 100 * 100); // frame 1 black, frame 2 white
    const gif = await sharp(frames, { raw: { width: 100, height: 200, channels: 1, pageHeight: 100 } }).gif().toBuffer();
    assert.equal((await sharp(gif).metadata()).pages, 2);
    const pages = await renderAll("blink.gif", gif);
    assert.equal(pages.length, 1);
    const at = filledPlacement(100, 100, HIGH);
    assertNear(darkBox(pages[0]!), at.rect, 1, "the black first frame");
  });

  for (const bitsPerPixel of [24, 8] as const) {
    it(`a ${bitsPerPixel}-bit BMP renders (sharp cannot read BMP), with its resolution`, async () => {
      const grey = greyRaster(150, 200, [{ left: 50, top: 20, right: 100, bottom: 60 }]);
      const [page] = await renderAll("scan.bmp", bmpFile(150, 200, grey, bitsPerPixel));
      const at = filledPlacement(150, 200, HIGH);
      assertNear(darkBox(page!), { left: at.x(50), top: at.y(20), right: at.x(100), bottom: at.y(60) }, 2, "rectangle");
      // 3937 pixels per metre = 100 dpi: 150 x 200 pixels are 1.5 x 2 inches.
      const [small] = await renderAll("small.bmp", bmpFile(150, 200, greyRaster(150, 200, [{ left: 0, top: 0, right: 150, bottom: 200 }]), bitsPerPixel, 3937));
      const box = darkBox(small!)!;
      assert.ok(Math.abs(box.right - box.left - 306) <= 1 && Math.abs(box.bottom - box.top - 392) <= 1, `1.5 x 2 inches: ${JSON.stringify(box)}`);
    });
  }

  it("a photo is a photo, a drawing is text", async () => {
    const gradient = new Uint8Array(400 * 300);
    for (let y = 0; y < 300; y++) for (let x = 0; x < 400; x++) gradient[y * 400 + x] = 30 + Math.round((x / 400) * 200);
    const [photo] = await renderAll("photo.jpg", await rawSharp(gradient, 400, 300).jpeg().toBuffer());
    assert.equal(photo!.tone, "photo");
    const [drawing] = await renderAll("drawing.png", await rawSharp(greyRaster(300, 400, [{ left: 10, top: 10, right: 290, bottom: 14 }]), 300, 400).png().toBuffer());
    assert.equal(drawing!.tone, "text");
  });
});

describe("decodeBmp: other BMP variants", () => {
  /** A BMP with a 40-byte info header: `bitsPerPixel`, `compression`, colour table, pixel data as given. */
  function rawBmp(width: number, height: number, bitsPerPixel: number, compression: number, palette: number[][], pixels: number[]): Uint8Array {
    const offset = 14 + 40 + palette.length * 4;
    const file = new Uint8Array(offset + pixels.length);
    const view = new DataView(file.buffer);
    file.set([0x42, 0x4d]);
    view.setUint32(2, file.length, true);
    view.setUint32(10, offset, true);
    view.setUint32(14, 40, true);
    view.setInt32(18, width, true);
    view.setInt32(22, height, true);
    view.setUint16(26, 1, true);
    view.setUint16(28, bitsPerPixel, true);
    view.setUint32(30, compression, true);
    view.setUint32(46, palette.length, true);
    palette.forEach(([b, g, r], i) => file.set([b!, g!, r!, 0], 54 + i * 4));
    file.set(pixels, offset);
    return file;
  }
  const BLACK_WHITE = [[0, 0, 0], [255, 255, 255]];

  it("RLE8: runs, end of line, end of bitmap; rows bottom-up", () => {
    // Bottom row: 3 white, 1 black. Top row: 2 black, 2 white.
    const bmp = rawBmp(4, 2, 8, 1, BLACK_WHITE, [3, 1, 1, 0, 0, 0, 2, 0, 2, 1, 0, 0, 0, 1]);
    assert.deepEqual([...decodeBmp(bmp).data], [0, 0, 255, 255, 255, 255, 255, 0]);
  });

  it("1 bit per pixel with a colour table, and 32-bit BGRx", () => {
    // Rows are padded to 4 bytes; bottom row first. 0b1010_0000: white black white black.
    const oneBit = rawBmp(4, 2, 1, 0, BLACK_WHITE, [0b1010_0000, 0, 0, 0, 0b0101_0000, 0, 0, 0]);
    assert.deepEqual([...decodeBmp(oneBit).data], [0, 255, 0, 255, 255, 0, 255, 0]);
    // One row: blue, green, red, white; luma 29, 150, 76, 255.
    const bgrx = rawBmp(4, 1, 32, 0, [], [255, 0, 0, 0, 0, 255, 0, 0, 0, 0, 255, 0, 255, 255, 255, 0]);
    assert.deepEqual([...decodeBmp(bgrx).data], [29, 150, 76, 255]);
  });
});

describe("imagePages: TIFF", () => {
  it("a 204 x 98 dpi G4 fax page keeps its geometry: pixel for pixel across, each scan line twice at HIGH", async () => {
    const fax = greyRaster(1728, 1146, [{ left: 100, top: 100, right: 300, bottom: 200 }, { left: 0, top: 500, right: 1728, bottom: 501 }]);
    const tiff = await g4Tiff(fax, 1728, 1146, 98);
    const [high] = await renderAll("fax.tif", tiff, HIGH);
    const band = HIGH.headerBandPx;
    assertNear(darkBox({ ...high!, data: high!.data.subarray(0, 600 * 1728), height: 600 }), { left: 100, top: band + 200, right: 300, bottom: band + 400 }, 0, "square at HIGH");
    for (const line of [band + 1000, band + 1001]) assert.equal(high!.data[line * 1728 + 864], 0, `the one-line rule is on scan line ${line}`);
    assert.equal(high!.data[(band + 999) * 1728 + 864], 255);
    assert.equal(high!.data[(band + 1002) * 1728 + 864], 255);
    assert.equal(high!.tone, "text");

    const [low] = await renderAll("fax.tif", tiff, LOW);
    const lowBand = LOW.headerBandPx;
    assertNear(darkBox({ ...low!, data: low!.data.subarray(0, 400 * 1728), height: 400 }), { left: 100, top: lowBand + 100, right: 300, bottom: lowBand + 200 }, 0, "square at LOW");
  });

  it("a 204 x 196 dpi fax page at LOW: scan lines merged, a one-line rule on an odd line survives", async () => {
    const fax = greyRaster(1728, 2000, [{ left: 0, top: 801, right: 1728, bottom: 802 }]);
    const [low] = await renderAll("fine.tif", await g4Tiff(fax, 1728, 2000, 196), LOW);
    assert.equal(low!.height, LOW.heightPx);
    assertNear(darkBox(low!), { left: 0, top: LOW.headerBandPx + 400, right: 1728, bottom: LOW.headerBandPx + 401 }, 0, "rule");
  });

  it("an A4 fax page on LETTER paper: blank bottom lines are dropped, but a page with content there is scaled to fit", async () => {
    const blankBottom = await g4Tiff(greyRaster(1728, 2292, [{ left: 10, top: 10, right: 20, bottom: 20 }]), 1728, 2292, 196);
    const [kept] = await renderAll("a4.tif", blankBottom, LETTER_HIGH);
    assertNear(darkBox(kept!), { left: 10, top: LETTER_HIGH.headerBandPx + 10, right: 20, bottom: LETTER_HIGH.headerBandPx + 20 }, 0, "pixel for pixel");

    const inkAtBottom = await g4Tiff(greyRaster(1728, 2292, [{ left: 0, top: 2280, right: 1728, bottom: 2292 }]), 1728, 2292, 196);
    const [scaled] = await renderAll("a4.tif", inkAtBottom, LETTER_HIGH);
    const box = darkBox(scaled!)!;
    const content = contentBox(LETTER_HIGH);
    assert.ok(box.bottom <= content.top + content.height && box.bottom > content.top + content.height - 20, `the bottom bar is kept on the page: ${JSON.stringify(box)}`);
    assert.ok(box.right - box.left < 1728, "scaled to fit");
  });

  it("a multi-page TIFF with pages of different sizes and compressions gives every page", async () => {
    const fax = await g4Tiff(greyRaster(1728, 1146, [{ left: 100, top: 100, right: 300, bottom: 200 }]), 1728, 1146, 98);
    const grey = new Uint8Array(500 * 700);
    for (let i = 0; i < grey.length; i++) grey[i] = i % 500 < 250 ? 0 : 255;
    const lzw = await rawSharp(grey, 500, 700).tiff({ compression: "lzw" }).toBuffer();
    const rgb = await sharp({ create: { width: 640, height: 480, channels: 3, background: { r: 0, g: 0, b: 0 } } }).tiff({ compression: "deflate" }).toBuffer();
    const joined = joinTiffs([fax, lzw, rgb]);
    assert.equal((await sharp(joined).metadata()).pages, 3);
    const pages = await renderAll("bundle.tiff", joined);
    assert.equal(pages.length, 3);
    for (const page of pages) assert.deepEqual([page.width, page.height], [1728, HIGH.heightPx]);
    assertNear(darkBox(pages[0]!), { left: 100, top: HIGH.headerBandPx + 200, right: 300, bottom: HIGH.headerBandPx + 400 }, 0, "the fax page");
    const half = filledPlacement(500, 700, HIGH);
    assertNear(darkBox(pages[1]!), { ...half.rect, right: half.x(250) }, 2, "the LZW page, left half black");
    const landscape = filledPlacement(480, 640, HIGH);
    assertNear(darkBox(pages[2]!), landscape.rect, 2, "the landscape RGB page, turned");
  });

  it("more pages than the job may have: document_too_large", async () => {
    const page = await g4Tiff(greyRaster(1728, 100), 1728, 100, 98);
    await rejectsWith("document_too_large", "long.tif", joinTiffs([page, page, page]), { ...LIMITS, maxPages: 2 });
  });
});

describe("imagePages: images that cannot be rendered", () => {
  it("a decompression bomb (a PNG of a few dozen bytes claiming 30000 x 30000 pixels): document_too_large before decoding", async () => {
    const bomb = bombPng(30000, 30000);
    assert.ok(bomb.length < 200, `${bomb.length} bytes`);
    const err = await rejectsWith("document_too_large", "bomb.png", bomb);
    assert.match(err.message, /30000 x 30000/);
    assert.match(err.message, /900,000,000/);
    assert.match(err.message, /200,000,000/);
  });

  it("an image over a lower pixel limit: document_too_large", async () => {
    const png = await sharp({ create: { width: 1200, height: 1000, channels: 3, background: "#888" } }).png().toBuffer();
    await rejectsWith("document_too_large", "big.png", png, { ...LIMITS, maxSourcePixels: 1_000_000 });
  });

  it("truncated PNG, JPEG, TIFF and BMP files: document_unreadable", async () => {
    const noise = sharp({ create: { width: 600, height: 600, channels: 3, background: "#808080", noise: { type: "gaussian", mean: 128, sigma: 40 } } });
    const files: [string, Uint8Array][] = [
      ["cut.png", await noise.clone().png().toBuffer()],
      ["cut.jpg", await noise.clone().jpeg().toBuffer()],
      ["cut.tif", await noise.clone().tiff({ compression: "lzw" }).toBuffer()],
      ["cut.bmp", bmpFile(300, 300, greyRaster(300, 300), 24)],
    ];
    for (const [name, bytes] of files) await rejectsWith("document_unreadable", name, bytes.subarray(0, Math.floor(bytes.length / 2)));
  });

  it("bytes that are no image, or an image format Faxline does not fax (SVG): document_unreadable", async () => {
    const text = await rejectsWith("document_unreadable", "notes.png", new TextEncoder().encode("just some text, not a picture"));
    assert.match(text.message, /not an image/);
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>';
    const notFaxed = await rejectsWith("document_unreadable", "drawing.png", new TextEncoder().encode(svg));
    assert.match(notFaxed.message, /SVG/);
    await rejectsWith("document_unreadable", "empty.jpg", new Uint8Array(0));
  });

  it("a PNG named .jpg still renders (the bytes decide)", async () => {
    const png = await rawSharp(greyRaster(100, 100, [{ left: 0, top: 0, right: 100, bottom: 100 }]), 100, 100).png().toBuffer();
    const pages = await renderAll("actually-png.jpg", png);
    assert.equal(pages.length, 1);
    assert.ok(darkBox(pages[0]!) !== null);
  });
});

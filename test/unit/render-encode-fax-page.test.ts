/**
 * Bilevel conversion and G4 encoding of grey pages (src/render/fax-image/encode-fax-page.ts):
 * the threshold, Floyd–Steinberg dithering that keeps grey shades as dot densities and paper
 * white, the clustered-dot halftone, the pictures of photo pages screened and their text
 * thresholded, the choice between them by tone and size, and that the G4 data decodes to exactly
 * the bilevel pixels returned.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import sharp from "sharp";
import {
  BLACK_BELOW,
  DITHER_BYTES_PER_SCAN_LINE,
  ditherPage,
  encodeFaxPage,
  g4Bytes,
  halftonePage,
  paperWhite,
  PAPER_WHITE,
  plainThreshold,
  thresholdPage,
} from "../../src/render/fax-image/encode-fax-page.ts";
import { encodeG4Page } from "../../src/render/fax-image/encode-g4-page.ts";
import { writeTiffF } from "../../src/render/fax-image/write-tiff-f.ts";
import { pageGeometry, type GreyPage, type PageTone } from "../../src/render/pages/grey-page.ts";

const HIGH = pageGeometry("A4", "HIGH");
const LOW = pageGeometry("A4", "LOW");

function page(width: number, height: number, fill: (x: number, y: number) => number, tone: PageTone): GreyPage {
  const data = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data[y * width + x] = fill(x, y);
  return { width, height, data, tone };
}

/** Share of black pixels in columns [from, to) of a bilevel page. */
function blackShare(pixels: Uint8Array, width: number, height: number, from: number, to: number): number {
  let black = 0;
  for (let y = 0; y < height; y++) for (let x = from; x < to; x++) if (pixels[y * width + x] === 0) black++;
  return black / ((to - from) * height);
}

/** A horizontal grey ramp from `darkest` (left) to `lightest` (right), below a white header band. */
function rampPage(geometry: typeof HIGH, darkest: number, lightest: number): GreyPage {
  return page(
    geometry.widthPx,
    geometry.heightPx,
    (x, y) => (y < geometry.headerBandPx ? 255 : Math.round(darkest + ((lightest - darkest) * x) / (geometry.widthPx - 1))),
    "photo",
  );
}

describe("thresholdPage", () => {
  it("screens flat shading lighter so that text on a grey box stays readable", () => {
    // A 0.3 grey box (77) with a black bar ("text") in it, on white paper.
    const box = page(600, 300, (x, y) => (x >= 100 && x < 500 && y >= 50 && y < 250 ? (x >= 200 && x < 400 && y >= 130 && y < 170 ? 0 : 77) : 255), "text");
    const out = thresholdPage(box);
    const share = (x0: number, x1: number, y0: number, y1: number) => {
      let black = 0;
      for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) if (out[y * 600 + x] === 0) black++;
      return black / ((x1 - x0) * (y1 - y0));
    };
    const shading = share(110, 190, 60, 240);
    assert.ok(shading > 0.2 && shading < 0.55, `the box is a dot pattern, not solid black: ${shading.toFixed(2)}`);
    assert.equal(share(210, 390, 135, 165), 1, "the text on it is solid black");
    assert.equal(share(0, 90, 0, 300), 0, "the paper stays white");
  });


  it(`darker than ${BLACK_BELOW} is black, the rest white`, () => {
    const grey = page(256, 1, (x) => x, "text");
    const out = thresholdPage(grey);
    for (let v = 0; v < 256; v++) assert.equal(out[v], v < BLACK_BELOW ? 0 : 255, `grey ${v}`);
    assert.notEqual(out, grey.data, "a new buffer");
  });
});

describe("ditherPage", () => {
  it("keeps a photo gradient legible: black density falls steadily from dark to light, where a threshold has two bands", () => {
    const ramp = rampPage(LOW, 30, 220);
    const dithered = ditherPage(ramp);
    const thresholded = thresholdPage(ramp);
    assert.ok(dithered.every((v) => v === 0 || v === 255), "bilevel");
    const bands = 8;
    const bandWidth = ramp.width / bands;
    const ditherShares: number[] = [];
    const thresholdShares: number[] = [];
    for (let b = 0; b < bands; b++) {
      const from = Math.round(b * bandWidth);
      const to = Math.round((b + 1) * bandWidth);
      ditherShares.push(blackShare(dithered, ramp.width, ramp.height, from, to));
      thresholdShares.push(blackShare(thresholded, ramp.width, ramp.height, from, to));
    }
    for (let b = 1; b < bands; b++) assert.ok(ditherShares[b]! < ditherShares[b - 1]!, `darker on the left: ${ditherShares.map((s) => s.toFixed(2)).join(" ")}`);
    // The middle bands are neither black nor white but in between.
    for (const b of [2, 3, 4, 5]) assert.ok(ditherShares[b]! > 0.1 && ditherShares[b]! < 0.9, `band ${b}: ${ditherShares[b]!.toFixed(2)}`);
    const distinct = new Set(ditherShares.map((s) => Math.round(s * 20)));
    assert.ok(distinct.size >= 6, `at least six distinguishable shades: ${ditherShares.map((s) => s.toFixed(2)).join(" ")}`);
    // thresholdPage screens flat grey (shading) lighter, at SHADE_DENSITY of its darkness.
    for (let b = 1; b < bands; b++) assert.ok(thresholdShares[b]! <= thresholdShares[b - 1]!, `shading lighter to the right: ${thresholdShares.map((s) => s.toFixed(2)).join(" ")}`);
    // (Not the lightest band: there the dither's levels step already turns near-paper grey white.)
    for (let b = 0; b < bands - 1; b++) assert.ok(thresholdShares[b]! < ditherShares[b]! + 0.02, `band ${b}: shading is printed lighter than the dither`);
  });

  it("paper stays white: light grey and the page's own grey paper tone get no dots, the header band neither", () => {
    const light = page(400, 300, () => PAPER_WHITE + 3, "photo");
    assert.ok(ditherPage(light).every((v) => v === 255), "near-white paper is white");

    // A scan of grey paper (190) with a dark photo block: the paper becomes white, the block stays.
    const scan = page(400, 300, (x, y) => (x >= 100 && x < 200 && y >= 100 && y < 200 ? 90 + ((x + y) % 7) : 190 + ((x * 7 + y * 13) % 5) - 2), "photo");
    assert.ok(paperWhite(scan) < 190, `white point ${paperWhite(scan)} below the paper tone`);
    const out = ditherPage(scan);
    assert.equal(blackShare(out, 400, 300, 250, 400), 0, "the paper area has no dots");
    const block = blackShare(new Uint8Array(out.filter((_, i) => i % 400 >= 100 && i % 400 < 200 && Math.floor(i / 400) >= 100 && Math.floor(i / 400) < 200)), 100, 100, 0, 100);
    assert.ok(block > 0.3 && block < 0.9, `the photo block is dithered grey: ${block.toFixed(2)}`);

    const ramp = rampPage(HIGH, 30, 220);
    const dithered = ditherPage(ramp);
    assert.ok(dithered.subarray(0, HIGH.headerBandPx * HIGH.widthPx).every((v) => v === 255), "the white header band stays white");
  });
});

describe("encodeFaxPage", () => {
  async function decodeG4(result: ReturnType<typeof encodeFaxPage>, geometry: typeof HIGH): Promise<Uint8Array> {
    const tiff = writeTiffF([result.g4], { xDpi: geometry.xDpi, yDpi: geometry.yDpi });
    const { data, info } = await sharp(tiff).toColourspace("b-w").raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([info.width, info.height, info.channels], [geometry.widthPx, geometry.heightPx, 1]);
    return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  }

  it("a text page is thresholded, and its G4 data decodes to exactly the returned pixels", async () => {
    const text = page(LOW.widthPx, LOW.heightPx, (x, y) => (y > 200 && y < 260 && x % 40 < 12 ? 40 : x % 97 === 0 ? 150 : 255), "text");
    const result = encodeFaxPage(text);
    assert.equal(result.method, "threshold");
    assert.deepEqual(result.pixels, thresholdPage(text));
    assert.deepEqual([result.g4.width, result.g4.height], [LOW.widthPx, LOW.heightPx]);
    assert.deepEqual(await decodeG4(result, LOW), result.pixels);
  });

  /** Whether all pixels of the rectangle are equal in `a` and `b`. */
  function sameIn(a: Uint8Array, b: Uint8Array, width: number, r: { left: number; top: number; width: number; height: number }): boolean {
    for (let y = r.top; y < r.top + r.height; y++) for (let x = r.left; x < r.left + r.width; x++) if (a[y * width + x] !== b[y * width + x]) return false;
    return true;
  }

  it("a photo page's picture gets the clustered-dot halftone, its text and flat shading stay as on a text page", async () => {
    // A 4 x 5 inch textured ramp (the picture), black bars above it (text), and a flat grey box
    // with black bars on it (a shaded table row) below it, on an A4 HIGH page.
    const photo = { left: 448, top: 608, width: 832, height: 960 };
    const inPhoto = (x: number, y: number): boolean => x >= photo.left && x < photo.left + photo.width && y >= photo.top && y < photo.top + photo.height;
    const text = { left: 192, top: 256, width: 1280, height: 224 };
    const box = { left: 192, top: 1760, width: 1280, height: 192 };
    const inside = (r: typeof text, x: number, y: number): boolean => x >= r.left && x < r.left + r.width && y >= r.top && y < r.top + r.height;
    const grey = page(
      HIGH.widthPx,
      HIGH.heightPx,
      (x, y) =>
        inPhoto(x, y)
          ? 30 + Math.round((190 * (x - photo.left)) / photo.width) + ((x * 7 + y * 13) % 9)
          : inside(text, x, y)
            ? (y % 32 < 20 && x % 24 < 14 ? 0 : 255)
            : inside(box, x, y)
              ? (y % 64 > 20 && y % 64 < 44 && x % 24 < 14 ? 0 : 190)
              : 255,
      "photo",
    );
    const result = encodeFaxPage(grey);
    assert.equal(result.method, "halftone");
    const inner = { left: photo.left + 32, top: photo.top + 32, width: photo.width - 64, height: photo.height - 64 };
    assert.ok(sameIn(result.pixels, halftonePage(grey), HIGH.widthPx, inner), "the picture is screened");
    const thresholded = thresholdPage(grey);
    assert.ok(sameIn(result.pixels, thresholded, HIGH.widthPx, text), "the text is thresholded");
    assert.ok(sameIn(result.pixels, thresholded, HIGH.widthPx, box), "the shaded box is screened as on a text page, its bars solid");
    assert.ok(g4Bytes(result.g4) < g4Bytes(encodeG4Page(ditherPage(grey), grey).g4) / 2, "far lighter than error diffusion");
    assert.deepEqual(await decodeG4(result, HIGH), result.pixels);
  });

  it("a small picture is error-diffused, where that costs little more than the halftone", async () => {
    // A 64 x 64 pixel textured ramp beside a page of dense "text" (bars): diffusing the picture costs
    // a few KB on a page of tens.
    const picture = { left: 1408, top: 1408, width: 64, height: 64 };
    const text = { left: 128, top: 192, width: 1216, height: 1920 };
    const inside = (r: typeof text, x: number, y: number): boolean => x >= r.left && x < r.left + r.width && y >= r.top && y < r.top + r.height;
    const grey = page(
      HIGH.widthPx,
      HIGH.heightPx,
      (x, y) =>
        inside(picture, x, y)
          ? 40 + Math.round((170 * (x - picture.left)) / picture.width) + ((x * 7 + y * 13) % 9)
          : inside(text, x, y) && y % 28 < 18 && (x * 5 + (y >> 5) * 3) % 17 < 7
            ? 0
            : 255,
      "photo",
    );
    const result = encodeFaxPage(grey);
    assert.equal(result.method, "dither");
    assert.ok(sameIn(result.pixels, ditherPage(grey), HIGH.widthPx, picture), "the picture is diffused");
    assert.ok(sameIn(result.pixels, thresholdPage(grey), HIGH.widthPx, text), "the text is thresholded");
    assert.deepEqual(await decodeG4(result, HIGH), result.pixels);
  });

  it("renderingOptions.toneMode sets the way for every page: TEXT, PHOTO, THRESHOLD", async () => {
    // A text page with a flat grey box and a grey ramp: AUTO and TEXT threshold it (the box
    // screened lighter), PHOTO screens the whole page, THRESHOLD screens nothing.
    const grey = page(LOW.widthPx, LOW.heightPx, (x, y) => (y > 100 && y < 300 && x > 100 && x < 700 ? 120 : y > 400 && y < 600 ? 40 + Math.round((170 * x) / LOW.widthPx) : 255), "text");
    const auto = encodeFaxPage(grey);
    assert.equal(auto.method, "threshold");
    assert.deepEqual(auto.pixels, thresholdPage(grey));
    assert.deepEqual(encodeFaxPage(grey, 0, { toneMode: "TEXT" }).pixels, auto.pixels);
    const photo = encodeFaxPage(grey, 0, { toneMode: "PHOTO" });
    assert.equal(photo.method, "halftone");
    assert.deepEqual(photo.pixels, halftonePage(grey));
    const plain = encodeFaxPage(grey, 0, { toneMode: "THRESHOLD" });
    assert.equal(plain.method, "threshold");
    assert.deepEqual(plain.pixels, plainThreshold(grey));
    assert.equal(plain.pixels[200 * LOW.widthPx + 400], 0, "the grey box is solid black");
    assert.notDeepEqual(plain.pixels, auto.pixels);
    // TEXT on a photo page: thresholded, no picture screened.
    const asText = encodeFaxPage({ ...grey, tone: "photo" }, 0, { toneMode: "TEXT" });
    assert.deepEqual(asText.pixels, thresholdPage(grey));
    assert.deepEqual(await decodeG4(photo, LOW), photo.pixels);
  });

  it("a photo page whose screen would blow up the G4 size is thresholded after all", async () => {
    // Mid-grey noise everywhere: every block is picture, and its halftone is dots on every scan line, far beyond the budget.
    let seed = 1;
    const random = (): number => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    const noise = page(LOW.widthPx, LOW.heightPx, () => 60 + Math.floor(random() * 140), "photo");
    const halftoneSize = g4Bytes(encodeG4Page(halftonePage(noise), noise).g4);
    assert.ok(halftoneSize > DITHER_BYTES_PER_SCAN_LINE * LOW.heightPx, `the halftone takes ${halftoneSize} bytes`);
    const result = encodeFaxPage(noise);
    assert.equal(result.method, "threshold");
    assert.deepEqual(result.pixels, thresholdPage(noise));
  });

  it("a page-filling photo at HIGH gets the clustered-dot halftone, within the budget where error diffusion is not", async () => {
    // A full-page ramp with a mild texture: Floyd–Steinberg breaks every run, the halftone keeps dots round.
    const photo = page(HIGH.widthPx, HIGH.heightPx, (x, y) => (y < HIGH.headerBandPx ? 255 : 40 + Math.round((170 * x) / HIGH.widthPx) + ((x * 7 + y * 13) % 9)), "photo");
    const budget = DITHER_BYTES_PER_SCAN_LINE * HIGH.heightPx;
    const ditherSize = g4Bytes(encodeG4Page(ditherPage(photo), photo).g4);
    assert.ok(ditherSize > budget, `the dither takes ${ditherSize} bytes, more than the budget of ${budget}`);
    const result = encodeFaxPage(photo);
    assert.equal(result.method, "halftone");
    assert.ok(g4Bytes(result.g4) <= budget);
    assert.deepEqual(result.pixels, halftonePage(photo));
    assert.deepEqual(await decodeG4(result, HIGH), result.pixels);
    // The tones survive: each sixth of the page is lighter than the one before.
    const sixth = Math.floor(HIGH.widthPx / 6);
    const shares = Array.from({ length: 6 }, (_, i) => blackShare(result.pixels, HIGH.widthPx, HIGH.heightPx, i * sixth, (i + 1) * sixth));
    for (let i = 1; i < 6; i++) assert.ok(shares[i]! < shares[i - 1]!, `shares ${shares.map((v) => v.toFixed(2)).join(" ")}`);
    assert.ok(shares[0]! > 0.5 && shares[5]! < 0.2);
  });
});

/**
 * Page preflight: blank and dark pages by their share of black pixels below the header band, the
 * time on the line (the worse of MH without ECM and MMR with ECM), and the warnings a person reads.
 * Synthetic pages, no rendering: pure and fast.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  BLANK_MAX_BLACK_RATIO,
  DARK_MIN_BLACK_RATIO,
  ECM_OVERHEAD,
  modifiedHuffmanBits,
  preflightPage,
  type PreflightOptions,
} from "../../src/render/preflight/page-preflight.ts";

const WIDTH = 1728;
const HEIGHT = 2292; // A4 at 196 lines per inch
const BAND = 49; // round(0.25 in x 196)
const SIZE = { width: WIDTH, height: HEIGHT };
const OPTIONS: PreflightOptions = { headerBandPx: BAND, lineBitsPerSecond: 14_400, largePageSeconds: 60 };
const BELOW_BAND = WIDTH * (HEIGHT - BAND);

function whitePage(width = WIDTH, height = HEIGHT): Uint8Array {
  return new Uint8Array(width * height).fill(255);
}

function fillRect(page: Uint8Array, x: number, y: number, w: number, h: number, width = WIDTH): void {
  for (let row = y; row < y + h; row++) page.fill(0, row * width + x, row * width + x + w);
}

/** A deterministic pseudo-random sequence (mulberry32), for speck and glyph positions. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** A header line in the band: ink that does not count. */
function drawHeader(page: Uint8Array): void {
  for (let x = 20; x < 1400; x += 9) fillRect(page, x, 15, 6, 18);
}

/** About 45 lines of 10-point "text": glyph-sized blocks with word gaps, in a left-aligned column. */
function textPage(): Uint8Array {
  const page = whitePage();
  drawHeader(page);
  const next = random(7);
  for (let line = 0; line < 45; line++) {
    const y = 150 + line * 46;
    let x = 120;
    while (x < 1560) {
      const letters = 2 + Math.floor(next() * 8);
      for (let i = 0; i < letters && x < 1560; i++, x += 15) {
        const tall = next() < 0.3;
        fillRect(page, x, tall ? y - 6 : y, 3, tall ? 26 : 20);
        fillRect(page, x + 3, y, 8, 3);
        fillRect(page, x + 3, y + 17, 8, 3);
      }
      x += 15;
    }
  }
  return page;
}

const blackShare = (page: Uint8Array) => {
  let black = 0;
  for (let i = BAND * WIDTH; i < page.length; i++) if (page[i]! < 128) black++;
  return black / BELOW_BAND;
};

describe("preflightPage: blank pages", () => {
  it("a white page is blank; the header band does not count", () => {
    const page = whitePage();
    drawHeader(page);
    const result = preflightPage(page, SIZE, 300, OPTIONS);
    assert.equal(result.blackRatio, 0);
    assert.equal(result.blank, true);
    assert.equal(result.tooDark, false);
    assert.equal(result.large, false);
    assert.deepEqual(result.warnings, ["is blank"]);
  });

  it("a page with a few specks of dust is still blank, and the warning gives the share", () => {
    const page = whitePage();
    const next = random(1);
    for (let i = 0; i < 40; i++) fillRect(page, Math.floor(next() * (WIDTH - 3)), BAND + Math.floor(next() * (HEIGHT - BAND - 3)), 3, 3);
    const result = preflightPage(page, SIZE, 900, OPTIONS);
    assert.ok(result.blackRatio > 0 && result.blackRatio < BLANK_MAX_BLACK_RATIO, `${result.blackRatio}`);
    assert.equal(result.blackRatio, blackShare(page));
    assert.equal(result.blank, true);
    assert.deepEqual(result.warnings, ["looks blank (0.009 % black)"]);
  });

  it("a page with one short line of text (more than about eight characters) is not blank", () => {
    const page = whitePage();
    for (let i = 0; i < 10; i++) fillRect(page, 800 + i * 15, 2200, 10, 10); // ten glyphs of 100 pixels
    const result = preflightPage(page, SIZE, 1200, OPTIONS);
    assert.ok(result.blackRatio > BLANK_MAX_BLACK_RATIO);
    assert.equal(result.blank, false);
    assert.deepEqual(result.warnings, []);
  });
});

describe("preflightPage: ordinary and dark pages", () => {
  it("a text-like page is neither blank nor dark, and has no warnings", () => {
    const page = textPage();
    const result = preflightPage(page, SIZE, 40_000, OPTIONS);
    assert.ok(result.blackRatio > 0.03 && result.blackRatio < 0.15, `black share ${result.blackRatio}`);
    assert.equal(result.blackRatio, blackShare(page));
    assert.equal(result.blank, false);
    assert.equal(result.tooDark, false);
    assert.equal(result.large, false);
    assert.deepEqual(result.warnings, []);
    // Without ECM the page goes as MH, larger than its G4 size: that is the estimate.
    const mh = modifiedHuffmanBits(page, SIZE);
    assert.ok(mh > 40_000 * 8 * ECM_OVERHEAD, `MH ${mh} bits`);
    assert.equal(result.estimatedSeconds, mh / 14_400);
  });

  it("a 60 % black page is too dark; when it is also slow the warning says how slow", () => {
    const page = whitePage();
    const rows = Math.round((HEIGHT - BAND) * 0.6);
    fillRect(page, 0, BAND, WIDTH, rows);
    const quick = preflightPage(page, SIZE, 5_000, OPTIONS);
    assert.ok(Math.abs(quick.blackRatio - 0.6) < 0.001);
    assert.ok(quick.blackRatio > DARK_MIN_BLACK_RATIO);
    assert.equal(quick.tooDark, true);
    assert.equal(quick.blank, false);
    assert.equal(quick.large, false);
    assert.deepEqual(quick.warnings, ["is very dark (60 % black) and may be unreadable"]);

    const slow = preflightPage(page, SIZE, 160_000, OPTIONS);
    assert.equal(slow.large, true);
    assert.equal(slow.estimatedSeconds, (160_000 * 8 * ECM_OVERHEAD) / 14_400);
    assert.deepEqual(slow.warnings, ["is very dark (60 % black): it will take about 93 s to send and may be unreadable"]);
  });

  it("a 35 % black page (a heavily shaded form) is not too dark", () => {
    const page = whitePage();
    fillRect(page, 0, BAND, WIDTH, Math.round((HEIGHT - BAND) * 0.35));
    const result = preflightPage(page, SIZE, 5_000, OPTIONS);
    assert.equal(result.tooDark, false);
    assert.deepEqual(result.warnings, []);
  });
});

describe("preflightPage: time on the line", () => {
  it("a page whose G4 data takes longer than largePageSeconds is large", () => {
    const page = textPage();
    const result = preflightPage(page, SIZE, 200_000, OPTIONS);
    const ecmSeconds = (200_000 * 8 * ECM_OVERHEAD) / 14_400;
    assert.ok(ecmSeconds * 14_400 > modifiedHuffmanBits(page, SIZE), "the G4 size dominates here");
    assert.equal(result.estimatedSeconds, ecmSeconds);
    assert.equal(result.large, true);
    assert.deepEqual(result.warnings, ["is large: it will take about 117 s to send"]);
    assert.equal(preflightPage(page, SIZE, 200_000, { ...OPTIONS, largePageSeconds: 120 }).large, false);
    assert.ok(preflightPage(page, SIZE, 200_000, { ...OPTIONS, lineBitsPerSecond: 9_600 }).estimatedSeconds > 170);
  });

  it("a blank page still costs its MH scan lines: 29 bits each plus EOLs, far more than its G4 size", () => {
    const result = preflightPage(whitePage(), SIZE, 300, OPTIONS);
    // White run of 1728: make-up 1728 (9 bits) + terminating 0 (8 bits); an EOL per line and the RTC.
    assert.equal(result.estimatedSeconds, (HEIGHT * 17 + (HEIGHT + 6) * 12) / 14_400);
  });

  it("counts T.4 Modified Huffman code lengths run by run", () => {
    const eols = (lines: number) => (lines + 6) * 12;
    const line = (draw: (row: Uint8Array) => void) => {
      const row = new Uint8Array(WIDTH).fill(255);
      draw(row);
      return modifiedHuffmanBits(row, { width: WIDTH, height: 1 }) - eols(1);
    };
    assert.equal(line(() => {}), 9 + 8, "white 1728: make-up 1728 + terminating 0");
    assert.equal(line((r) => r.fill(0, 10, 15)), 5 + 4 + 6 + 8, "white 10, black 5, white 1713 = 1664 + 49");
    assert.equal(line((r) => r.fill(0)), 8 + 13 + 10, "white 0, black 1728 = make-up 1728 + terminating 0");
    assert.equal(line((r) => r.fill(0, 0, 64)), 8 + 10 + 10 + 6 + 8, "white 0, black 64 = 64 + 0, white 1664 = 1664 + 0");
    assert.equal(line((r) => r.fill(0, 1727)), 6 + 8 + 3, "white 1727 = 1664 + 63, black 1");
  });

  it("gives the same answer for pixels that are not word-aligned and for LOW pages", () => {
    const page = textPage();
    const shifted = new Uint8Array(page.length + 1).subarray(1);
    shifted.set(page);
    assert.deepEqual(preflightPage(shifted, SIZE, 40_000, OPTIONS), preflightPage(page, SIZE, 40_000, OPTIONS));

    const low = new Uint8Array(WIDTH * (HEIGHT / 2));
    for (let y = 0; y < HEIGHT / 2; y++) low.set(page.subarray(2 * y * WIDTH, (2 * y + 1) * WIDTH), y * WIDTH);
    const lowResult = preflightPage(low, { width: WIDTH, height: HEIGHT / 2 }, 20_000, { ...OPTIONS, headerBandPx: 25 });
    assert.ok(Math.abs(lowResult.blackRatio - blackShare(page)) < 0.005);
  });

  it("rejects a pixel buffer smaller than the page", () => {
    assert.throws(() => preflightPage(new Uint8Array(100), SIZE, 0, OPTIONS), /expected 1728 x 2292 bytes/);
  });
});

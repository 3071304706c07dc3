/**
 * CCITT T.6 (Group 4, MMR) encoding of one bilevel page, in one pass over its pixels.
 *
 * Each scan line is first reduced to its changing elements: the positions where a pixel differs
 * from the one before it (the line starts on an imaginary white pixel), in order, followed by
 * the line width as sentinel. Paper is skipped four pixels at a time. The line is then coded
 * against the line above it (the reference line; an all-white line for the first) by the
 * two-dimensional coding of T.4 4.2.1.3.4, which T.6 uses without EOLs or one-dimensional lines:
 * pass mode where the reference line has a whole run before the next change (b2 < a1), vertical
 * mode where the next change lies within three pixels of the reference line's (|a1 − b1| ≤ 3),
 * horizontal mode (two Modified Huffman runs) otherwise. The page ends with EOFB and is padded
 * to a whole byte; bits are written most significant first (TIFF FillOrder 1). The choice of mode
 * is the one the recommendations prescribe, so the output is the same code stream libtiff writes.
 *
 * The same pass counts what the preflight needs (preflight/page-preflight.ts): the bits of the
 * page in T.4 one-dimensional Modified Huffman, whose runs are the gaps between the changing
 * elements, and the black pixels from a given scan line down.
 *
 * Input: one byte per pixel, below 128 black (the threshold and dither write 0 and 255).
 *
 * `encodeG4Page` runs the same code in C where the raster addon is built (native-raster.ts);
 * `encodeG4PageTs` is the TypeScript, which gives the same bytes and counts.
 */
import { nativeRaster } from "../native-raster.ts";
import { BLACK_RUN_CODES, EOL, HORIZONTAL, MAX_MAKEUP_RUN, PASS, VERTICAL, WHITE_RUN_CODES, g4CodeTable, runCodeBits, type RunCodes } from "./t4-codes.ts";
import type { G4Page } from "./write-tiff-f.ts";

export interface PageRunCounts {
  /** Bits of the page in T.4 Modified Huffman: the runs, a 12-bit EOL per scan line and the 6-EOL RTC, no fill bits. */
  mhBits: number;
  /** Black pixels in the scan lines from `countedFrom` down. */
  blackPixels: number;
  /** The first scan line whose black pixels are counted. */
  countedFrom: number;
}

export interface EncodedG4 {
  g4: G4Page;
  counts: PageRunCounts;
}

const RTC_EOLS = 6;

/** MH code bits of runs 0 – MAX_MAKEUP_RUN, white then black, so that counting needs no loop. */
const WHITE_RUN_BITS = runBitsTable(WHITE_RUN_CODES);
const BLACK_RUN_BITS = runBitsTable(BLACK_RUN_CODES);

function runBitsTable(codes: RunCodes): Uint8Array {
  const table = new Uint8Array(MAX_MAKEUP_RUN + 1);
  for (let run = 0; run <= MAX_MAKEUP_RUN; run++) table[run] = runCodeBits(run, codes);
  return table;
}

function mhRunBits(run: number, black: boolean): number {
  if (run <= MAX_MAKEUP_RUN) return (black ? BLACK_RUN_BITS : WHITE_RUN_BITS)[run]!;
  return runCodeBits(run, black ? BLACK_RUN_CODES : WHITE_RUN_CODES);
}

/** A growing buffer of bits, most significant first. */
class BitWriter {
  #bytes: Uint8Array;
  #at = 0;
  /** Bits not yet written out, right-aligned; fewer than 8 between calls. */
  #pending = 0;
  #pendingBits = 0;

  constructor(initialBytes: number) {
    this.#bytes = new Uint8Array(Math.max(64, initialBytes));
  }

  put(bits: number, length: number): void {
    this.#pending = (this.#pending << length) | bits;
    this.#pendingBits += length;
    while (this.#pendingBits >= 8) {
      this.#pendingBits -= 8;
      if (this.#at === this.#bytes.length) this.#grow();
      this.#bytes[this.#at++] = (this.#pending >>> this.#pendingBits) & 0xff;
    }
    this.#pending &= (1 << this.#pendingBits) - 1;
  }

  putRun(run: number, codes: RunCodes): void {
    while (run > MAX_MAKEUP_RUN) {
      const makeup = codes.makeup[MAX_MAKEUP_RUN >> 6]!;
      this.put(makeup.bits, makeup.length);
      run -= MAX_MAKEUP_RUN;
    }
    if (run >= 64) {
      const makeup = codes.makeup[run >> 6]!;
      this.put(makeup.bits, makeup.length);
    }
    const terminating = codes.terminating[run & 63]!;
    this.put(terminating.bits, terminating.length);
  }

  /** The bytes written, the last one padded with zero bits, in a buffer of their own (pages are kept until their job's file is written). */
  finish(): Uint8Array {
    if (this.#pendingBits > 0) this.put(0, 8 - this.#pendingBits);
    return this.#bytes.slice(0, this.#at);
  }

  #grow(): void {
    const bigger = new Uint8Array(this.#bytes.length * 2);
    bigger.set(this.#bytes);
    this.#bytes = bigger;
  }
}

/**
 * Writes the changing elements of scan line `y` into `changes` (then the width three times as
 * sentinels), adds the line's MH bits and black pixels to `counts`, and returns how many there are.
 */
function changingElements(
  pixels: Uint8Array,
  words: Uint32Array | null,
  width: number,
  y: number,
  changes: Int32Array,
  counts: PageRunCounts,
  countBlack: boolean,
): number {
  const start = y * width;
  const end = start + width;
  let n = 0;
  let black = false;
  let runStart = start;
  let mhBits = 0;
  let blackPixels = 0;
  let i = start;
  while (i < end) {
    // Runs of paper (and of solid black) are passed over a word of four pixels at a time.
    if (words !== null && (i & 3) === 0) {
      const same = black ? 0 : 0xffffffff;
      let word = i >> 2;
      const endWord = end >> 2;
      while (word < endWord && words[word] === same) word++;
      i = word << 2;
      if (i >= end) break;
    }
    if (pixels[i]! < 128 !== black) {
      const run = i - runStart;
      mhBits += mhRunBits(run, black);
      if (black) blackPixels += run;
      changes[n++] = i - start;
      black = !black;
      runStart = i;
    }
    i++;
  }
  const run = end - runStart;
  mhBits += mhRunBits(run, black);
  if (black) blackPixels += run;
  changes[n] = width;
  changes[n + 1] = width;
  changes[n + 2] = width;
  counts.mhBits += mhBits + EOL.length;
  if (countBlack) counts.blackPixels += blackPixels;
  return n;
}

let codeTable: Uint32Array | undefined;

/**
 * Encodes `pixels` (one byte per pixel, below 128 black, `width` x `height`) as one G4 strip,
 * and counts the page's MH size and its black pixels from scan line `countBlackFrom` (default 0) down.
 */
export function encodeG4Page(pixels: Uint8Array, size: { width: number; height: number }, countBlackFrom = 0): EncodedG4 {
  const native = nativeRaster();
  if (native === null) return encodeG4PageTs(pixels, size, countBlackFrom);
  checkedWords(pixels, size);
  const { width, height } = size;
  codeTable ??= g4CodeTable();
  const { data, mhBits, blackPixels } = native.encodeG4(pixels, width, height, countBlackFrom, codeTable);
  return { g4: { width, height, rowsPerStrip: height, strips: [data] }, counts: { mhBits, blackPixels, countedFrom: countBlackFrom } };
}

/** encodeG4Page in TypeScript. */
export function encodeG4PageTs(pixels: Uint8Array, size: { width: number; height: number }, countBlackFrom = 0): EncodedG4 {
  const { width, height } = size;
  const words = checkedWords(pixels, size);
  // A page of text codes to about 30 bytes per scan line; the writer grows when it needs to.
  const out = new BitWriter(height * 32);
  const counts: PageRunCounts = { mhBits: EOL.length * RTC_EOLS, blackPixels: 0, countedFrom: countBlackFrom };
  let reference = new Int32Array(width + 4);
  let coding = new Int32Array(width + 4);
  reference.fill(width, 0, 3); // the imaginary white line above the first

  for (let y = 0; y < height; y++) {
    changingElements(pixels, words, width, y, coding, counts, y >= countBlackFrom);
    // a0 starts on an imaginary white pixel before the line; `colour` is a0's (0 white, 1 black).
    let a0 = -1;
    let colour = 0;
    let a = 0; // index of a1 in `coding`: the first change right of a0
    let b = 0; // index in `reference` of its first change right of a0
    for (;;) {
      while (coding[a]! <= a0) a++;
      const a1 = coding[a]!;
      // b1: the first change on the reference line right of a0 to the colour opposite a0's,
      // i.e. at an even index (to black) when a0 is white, at an odd one when a0 is black.
      // `b` (the first change right of a0) only moves on; b1 may be the one after it, and the
      // next a0 may still lie before that one, so the parity step is not kept.
      while (reference[b]! <= a0) b++;
      const b1At = (b & 1) === colour ? b : b + 1;
      const b1 = reference[b1At]!;
      const b2 = reference[b1At + 1]!;
      if (b2 < a1) {
        out.put(PASS.bits, PASS.length);
        a0 = b2;
      } else if (a1 - b1 <= 3 && b1 - a1 <= 3) {
        const vertical = VERTICAL[a1 - b1 + 3]!;
        out.put(vertical.bits, vertical.length);
        a0 = a1;
        colour ^= 1;
      } else {
        const a2 = coding[a + 1]!;
        out.put(HORIZONTAL.bits, HORIZONTAL.length);
        out.putRun(a1 - Math.max(a0, 0), colour === 0 ? WHITE_RUN_CODES : BLACK_RUN_CODES);
        out.putRun(a2 - a1, colour === 0 ? BLACK_RUN_CODES : WHITE_RUN_CODES);
        a0 = a2;
      }
      if (a0 >= width) break;
    }
    const done = reference;
    reference = coding;
    coding = done;
  }
  out.put(EOL.bits, EOL.length);
  out.put(EOL.bits, EOL.length);
  const data = out.finish();
  return { g4: { width, height, rowsPerStrip: height, strips: [data] }, counts };
}

/** The counts alone (MH size, black pixels from scan line `countBlackFrom`), without coding the page. */
export function countPageRuns(pixels: Uint8Array, size: { width: number; height: number }, countBlackFrom = 0): PageRunCounts {
  const words = checkedWords(pixels, size);
  const counts: PageRunCounts = { mhBits: EOL.length * RTC_EOLS, blackPixels: 0, countedFrom: countBlackFrom };
  const changes = new Int32Array(size.width + 4);
  for (let y = 0; y < size.height; y++) changingElements(pixels, words, size.width, y, changes, counts, y >= countBlackFrom);
  return counts;
}

/** Checks the page's size; the pixels as 32-bit words where its rows are word-aligned, for skipping paper. */
function checkedWords(pixels: Uint8Array, size: { width: number; height: number }): Uint32Array | null {
  const { width, height } = size;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width <= 0 || height <= 0) {
    throw new RangeError(`a G4 page needs a positive whole size, not ${width} x ${height}`);
  }
  if (pixels.length < width * height) throw new RangeError(`page pixels: expected ${width} x ${height} bytes, got ${pixels.length}`);
  return pixels.byteOffset % 4 === 0 && width % 4 === 0 ? new Uint32Array(pixels.buffer, pixels.byteOffset, (width * height) >> 2) : null;
}

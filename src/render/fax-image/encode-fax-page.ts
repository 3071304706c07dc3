/**
 * Makes a grey fax page bilevel and encodes it as CCITT G4 (encode-g4-page.ts).
 *
 * renderingOptions.toneMode (tone-mode.ts) can set the way for every page of a job: TEXT treats
 * each page as text, PHOTO screens each page whole with the halftone (within the size budget
 * below), THRESHOLD thresholds plainly (`plainThreshold`). AUTO, the default, decides per page:
 *
 * Text and line art (`tone: "text"`) are thresholded: pixels darker than BLACK_BELOW (160, as
 * rasterize-text-page.ts explains: thin strokes at 98 lines per inch stay whole) become black.
 *
 * Photo pages (`tone: "photo"`) have their pictures screened and the rest thresholded like a text
 * page: `pictureBlocks` finds the pictures in blocks of PICTURE_BLOCK pixels (mid-grey, spread over
 * many levels, unlike text and flat shading). First a levels step makes paper pure white
 * (PAPER_WHITE and lighter, or from just below the page's own paper grey where it has one:
 * `paperWhite`) and ink pure black (INK_BLACK and darker), stretching the tones in between. Then
 * the pictures get a clustered-dot halftone (`halftonePage`): an ordered threshold that grows round
 * dots from the centre of each HALFTONE_CELL-pixel cell, like newsprint (about 34 lines per inch).
 * Clustered dots make long runs, which G4 codes compactly: measured at A4 HIGH, a full-page photo
 * 142 KB, where Floyd–Steinberg error diffusion (`ditherPage`, serpentine, pure white and black
 * taking no error) makes 479 KB and Ghostscript's tiffg4 233 KB. Fax transmission time grows with
 * the G4 size (at 14400 bit/s, 100 KiB take about a minute), so error diffusion, which keeps finer
 * tones but breaks every run, is used only where it pays: pictures on at most
 * DITHER_MAX_PICTURE_SHARE of the page, and the diffused page at most DITHER_PAYS times the
 * halftone's bytes (a small photo or logo on a page of text).
 *
 * A screened page may take at most DITHER_BYTES_PER_SCAN_LINE G4 bytes per scan line; otherwise
 * the page is thresholded after all (mid-grey noise everywhere). That budget is
 * DITHER_BUDGET_TEXT_PAGES (8) times a dense page of text (TEXT_PAGE_BYTES_PER_SCAN_LINE: 64 lines
 * of 10 pt text measured 65 KiB at A4 HIGH, 29 bytes per scan line): 519 KiB at A4 HIGH, 260 KiB
 * at A4 LOW, about 4.9 and 2.5 minutes at 14400 bit/s. The budget is absolute, not a multiple of
 * the thresholded page's size, because thresholding a photo leaves a few black and white
 * silhouettes that cost almost nothing (4–28 KiB).
 */
import type { GreyPage } from "../pages/grey-page.ts";
import type { ToneMode } from "./tone-mode.ts";
import { encodeG4Page, type PageRunCounts } from "./encode-g4-page.ts";
import { nativeRaster } from "../native-raster.ts";
import type { G4Page } from "./write-tiff-f.ts";

/** Pixels darker than this are black when thresholding. */
export const BLACK_BELOW = 160;
/** Levels before dithering: this grey and lighter is paper (white), INK_BLACK and darker is ink (black). */
export const PAPER_WHITE = 224;
export const INK_BLACK = 24;
/** G4 bytes per scan line of a dense page of text (64 lines of 10 pt at A4 HIGH: 65 KiB). */
export const TEXT_PAGE_BYTES_PER_SCAN_LINE = 29;
/** A dithered page may take as many G4 bytes as this many dense pages of text. */
export const DITHER_BUDGET_TEXT_PAGES = 8;
/** The most G4 bytes per scan line a dithered page may take (see the module comment). */
export const DITHER_BYTES_PER_SCAN_LINE = DITHER_BUDGET_TEXT_PAGES * TEXT_PAGE_BYTES_PER_SCAN_LINE;

export interface EncodedFaxPage {
  g4: G4Page;
  /** The page's MH size and black pixels, counted while encoding (encode-g4-page.ts). */
  counts: PageRunCounts;
  /** The bilevel page: one byte per pixel, 0 black or 255 white. */
  pixels: Uint8Array;
  method: "threshold" | "dither" | "halftone";
}

/**
 * Text pages are thresholded. On photo pages only the pictures are screened: the page is judged in
 * blocks (`pictureBlocks`), the picture blocks get the clustered-dot halftone, or error diffusion
 * where that costs at most DITHER_PAYS times the halftone's G4 bytes (small pictures, see the
 * module comment), and the rest of the page (its text) is thresholded like a text page. A page
 * whose screened version exceeds the size budget is thresholded. Black pixels are counted from scan
 * line `countBlackFrom` down (the preflight leaves the header band out). With `overwrite`, a
 * thresholded page is written over the grey page's own pixels (for a caller that has no further use
 * for them).
 */
export function encodeFaxPage(page: GreyPage, countBlackFrom = 0, options: { overwrite?: boolean; toneMode?: ToneMode } = {}): EncodedFaxPage {
  const size = { width: page.width, height: page.height };
  const toneMode = options.toneMode ?? "AUTO";
  if (toneMode === "THRESHOLD") {
    const plain = plainThreshold(page, options.overwrite === true);
    return { ...encodeG4Page(plain, size, countBlackFrom), pixels: plain, method: "threshold" };
  }
  if (toneMode === "PHOTO") {
    const screened = halftonePage(page);
    const halftoneG4 = encodeG4Page(screened, size, countBlackFrom);
    if (g4Bytes(halftoneG4.g4) <= DITHER_BYTES_PER_SCAN_LINE * page.height) return { ...halftoneG4, pixels: screened, method: "halftone" };
  }
  if (toneMode === "AUTO" && page.tone === "photo") {
    const budget = DITHER_BYTES_PER_SCAN_LINE * page.height;
    const pictures = pictureBlocks(page);
    if (pictures.count > 0) {
      const text = thresholdPage(page);
      const tryDither = pictures.count <= DITHER_MAX_PICTURE_SHARE * pictures.total;
      // The halftone is written over the thresholded page where only it is needed.
      const screened = halftonePictures(page, tryDither ? text.slice() : text, pictures);
      const halftoneG4 = encodeG4Page(screened, size, countBlackFrom);
      const halftoneBytes = g4Bytes(halftoneG4.g4);
      if (tryDither) {
        const dithered = withPictures(text, ditherPage(page, pictures.white), pictures, page);
        const ditherG4 = encodeG4Page(dithered, size, countBlackFrom);
        const ditherBytes = g4Bytes(ditherG4.g4);
        if (ditherBytes <= DITHER_PAYS * halftoneBytes && ditherBytes <= budget) return { ...ditherG4, pixels: dithered, method: "dither" };
      }
      if (halftoneBytes <= budget) return { ...halftoneG4, pixels: screened, method: "halftone" };
    }
  }
  const thresholded = options.overwrite === true ? thresholdInPlace(page) : thresholdPage(page);
  return { ...encodeG4Page(thresholded, size, countBlackFrom), pixels: thresholded, method: "threshold" };
}

/** Plain threshold (renderingOptions.toneMode THRESHOLD): darker than BLACK_BELOW is black, nothing screened; over the page's own pixels with `overwrite`. */
export function plainThreshold(page: GreyPage, overwrite = false): Uint8Array {
  const { data } = page;
  const out = overwrite ? data : new Uint8Array(data.length);
  for (let i = 0; i < data.length; i++) out[i] = data[i]! < BLACK_BELOW ? 0 : 255;
  return out;
}

/** Error diffusion is used for a page's pictures when its G4 bytes are at most this many times the halftone's. */
export const DITHER_PAYS = 1.25;
/** Above this share of picture blocks, error diffusion cannot pay (it takes 2.5–3.5 times the halftone's bytes per picture area), and is not tried. */
const DITHER_MAX_PICTURE_SHARE = 0.1;
/** Side of the square blocks a photo page is judged in, pixels (about 4 mm across at 204 dpi). */
export const PICTURE_BLOCK = 32;
const PICTURE_BLOCK_SHIFT = 5;
/** A block is a picture when at least this share of its pixels is mid-grey … */
const PICTURE_MID_GREY_SHARE = 0.3;
/** … and they are spread over the greys: less than this share of them lie within ±PEAK_SPREAD of their commonest level (flat shading, with or without text on it, has most of them there). */
const PICTURE_PEAK_SHARE = 0.9;
const PEAK_SPREAD = 2;
/** A block next to a picture block is picture too when this share of its pixels is mid-grey (a picture's edge). */
const PICTURE_EDGE_SHARE = 0.05;
const MID_GREY_MIN = 40;
const MID_GREY_MAX = 215;

export interface PictureBlocks {
  /** One byte per block, row by row: 1 where the block is part of a picture. */
  mask: Uint8Array;
  columns: number;
  rows: number;
  count: number;
  total: number;
  /** The page's paper tone (paperWhite), from the same histograms. */
  white: number;
}

/**
 * The blocks of PICTURE_BLOCK pixels that hold pictures: at least PICTURE_MID_GREY_SHARE of their
 * pixels mid-grey (40–215), spread over the greys (PICTURE_PEAK_SHARE), the blocks beside those with
 * some mid-grey (the picture's edges), and blocks enclosed by picture blocks (its highlights and
 * shadows). Text is black and white with anti-aliased edges (a few percent mid-grey); flat shading
 * is mid-grey on one or two levels (text on it adds a few pixels of others); a photo spreads.
 */
export function pictureBlocks(page: GreyPage): PictureBlocks {
  const { width, height, data } = page;
  const columns = Math.ceil(width / PICTURE_BLOCK);
  const rows = Math.ceil(height / PICTURE_BLOCK);
  const midGrey = new Uint32Array(columns * rows);
  const strong = new Uint8Array(columns * rows);
  // Grey-level histograms of one row of blocks at a time; their sum over the page's light levels
  // (the only ones paperWhite reads) gives the paper tone without another pass over the page.
  const histograms = new Uint32Array(columns * 256);
  const paperLevels = new Uint32Array(256);
  const blockPixels = (block: number): number => {
    const bx = block % columns;
    const by = (block / columns) | 0;
    return (Math.min(width, (bx + 1) * PICTURE_BLOCK) - bx * PICTURE_BLOCK) * (Math.min(height, (by + 1) * PICTURE_BLOCK) - by * PICTURE_BLOCK);
  };
  for (let by = 0; by < rows; by++) {
    histograms.fill(0);
    greyHistograms(data, width, by * PICTURE_BLOCK, Math.min(height, (by + 1) * PICTURE_BLOCK), PICTURE_BLOCK_SHIFT, histograms);
    for (let bx = 0; bx < columns; bx++) {
      const block = by * columns + bx;
      // The block's histogram is histograms[at + grey].
      const at = bx * 256;
      for (let v = PAPER_LEVELS_FROM; v < 255; v++) paperLevels[v]! += histograms[at + v]!;
      let mid = 0;
      for (let v = MID_GREY_MIN; v <= MID_GREY_MAX; v++) mid += histograms[at + v]!;
      midGrey[block] = mid;
      if (mid === 0 || mid < PICTURE_MID_GREY_SHARE * blockPixels(block)) continue;
      let peak = 0;
      let window = 0;
      for (let v = MID_GREY_MIN; v <= MID_GREY_MAX; v++) {
        window += histograms[at + v]! - (v - 2 * PEAK_SPREAD - 1 >= MID_GREY_MIN ? histograms[at + v - 2 * PEAK_SPREAD - 1]! : 0);
        if (window > peak) peak = window;
      }
      if (peak < PICTURE_PEAK_SHARE * mid) strong[block] = 1;
    }
  }
  const mask = new Uint8Array(columns * rows);
  let count = 0;
  for (let by = 0; by < rows; by++) {
    for (let bx = 0; bx < columns; bx++) {
      const block = by * columns + bx;
      const besidePicture =
        (bx > 0 && strong[block - 1] === 1) || (bx < columns - 1 && strong[block + 1] === 1) || (by > 0 && strong[block - columns] === 1) || (by < rows - 1 && strong[block + columns] === 1);
      if (strong[block] === 1 || (besidePicture && midGrey[block]! >= PICTURE_EDGE_SHARE * blockPixels(block))) {
        mask[block] = 1;
        count++;
      }
    }
  }
  // Holes in a picture (its brightest and darkest parts, which have little mid-grey) belong to it:
  // a block with three or four picture neighbours joins, twice over.
  for (let pass = 0; pass < 2; pass++) {
    const joining: number[] = [];
    for (let by = 0; by < rows; by++) {
      for (let bx = 0; bx < columns; bx++) {
        const block = by * columns + bx;
        if (mask[block] === 1) continue;
        const neighbours =
          (bx > 0 ? mask[block - 1]! : 0) + (bx < columns - 1 ? mask[block + 1]! : 0) + (by > 0 ? mask[block - columns]! : 0) + (by < rows - 1 ? mask[block + columns]! : 0);
        if (neighbours >= 3) joining.push(block);
      }
    }
    for (const block of joining) mask[block] = 1;
    count += joining.length;
  }
  return { mask, columns, rows, count, total: columns * rows, white: paperWhiteOf(paperLevels, data.length) };
}

/** Writes the clustered-dot halftone of the picture blocks over `out` (the same as halftonePage there); returns `out`. */
function halftonePictures(page: GreyPage, out: Uint8Array, pictures: PictureBlocks): Uint8Array {
  return halftoneBlocks(page, out, pictures.mask, PICTURE_BLOCK, pictures.white);
}

/** halftoneBlocks in C where the raster addon is built (native-raster.ts), else in TypeScript; returns `out`. */
function halftoneBlocks(page: GreyPage, out: Uint8Array, mask: Uint8Array, block: number, white: number): Uint8Array {
  const { width, height, data } = page;
  const levels = levelsTable(white);
  const native = nativeRaster();
  if (native !== null) native.halftoneBlocks(data, out, width, height, mask, block, levels, HALFTONE_LEVELS, HALFTONE_CELL);
  else halftoneBlocksTs(data, out, width, height, mask, block, levels, HALFTONE_LEVELS, HALFTONE_CELL);
  return out;
}

/**
 * The clustered-dot halftone of the blocks (`block` pixels square) that `mask` marks, written over
 * `out`: white where `levels[grey]` lies above the cell's level at the pixel's place, else black.
 * In C where the raster addon is built (native-raster.ts: halftoneBlocks); this is its twin.
 */
export function halftoneBlocksTs(
  data: Uint8Array,
  out: Uint8Array,
  width: number,
  height: number,
  mask: Uint8Array,
  block: number,
  levels: Uint8Array,
  cellLevels: Uint8Array,
  cell: number,
): void {
  const columns = Math.ceil(width / block);
  const rows = Math.ceil(height / block);
  // Each column's place in a row of the cell, worked out once rather than per pixel.
  const cellColumn = new Uint8Array(width);
  for (let x = 0; x < width; x++) cellColumn[x] = x % cell;
  for (let by = 0; by < rows; by++) {
    const y1 = Math.min(height, (by + 1) * block);
    for (let bx = 0; bx < columns; bx++) {
      if (mask[by * columns + bx] !== 1) continue;
      const x0 = bx * block;
      const x1 = Math.min(width, x0 + block);
      for (let y = by * block; y < y1; y++) {
        const row = y * width;
        const cellRow = (y % cell) * cell;
        for (let x = x0; x < x1; x++) out[row + x] = levels[data[row + x]!]! > cellLevels[cellRow + cellColumn[x]!]! ? 255 : 0;
      }
    }
  }
}

/** `text` with the picture blocks' pixels taken from `screened` (a new page). */
function withPictures(text: Uint8Array, screened: Uint8Array, pictures: PictureBlocks, size: { width: number; height: number }): Uint8Array {
  const out = text.slice();
  const { width, height } = size;
  for (let by = 0; by < pictures.rows; by++) {
    for (let bx = 0; bx < pictures.columns; bx++) {
      if (pictures.mask[by * pictures.columns + bx] !== 1) continue;
      const x0 = bx * PICTURE_BLOCK;
      const x1 = Math.min(width, x0 + PICTURE_BLOCK);
      for (let y = by * PICTURE_BLOCK; y < Math.min(height, (by + 1) * PICTURE_BLOCK); y++) out.set(screened.subarray(y * width + x0, y * width + x1), y * width + x0);
    }
  }
  return out;
}

/** The G4 data size of a page (its strips). */
export function g4Bytes(page: G4Page): number {
  return page.strips.reduce((sum, strip) => sum + strip.length, 0);
}

/** Greys in [SHADE_DARKEST, SHADE_LIGHTEST] that lie in a flat area are shading, not ink or paper. */
export const SHADE_DARKEST = 48;
export const SHADE_LIGHTEST = 232;
/** Neighbours within this many grey levels make a pixel part of a flat area. */
const SHADE_FLATNESS = 6;
/** Shading is printed at this share of its darkness, so that text on it stays legible. */
export const SHADE_DENSITY = 0.55;

/**
 * Bilevel by threshold: darker than BLACK_BELOW is black (0), the rest white (255); except
 * shading. A pixel of mid grey (SHADE_DARKEST to SHADE_LIGHTEST) whose four neighbours have the
 * same grey (within SHADE_FLATNESS) belongs to a flat grey area: a table's shaded row, a
 * highlighted box, a grey bar. A plain threshold would make such an area solid black (and the text
 * on it invisible) or let it vanish; instead it is screened with the clustered-dot halftone at
 * SHADE_DENSITY of its darkness, so it stays visible as a light dot pattern and the text on it
 * (black, and not flat against its edges) stays readable. Anti-aliased edges of text and lines
 * are never flat in all four directions, so text is thresholded as before.
 */
export function thresholdPage(page: GreyPage): Uint8Array {
  return thresholdInPlace({ ...page, data: page.data.slice() });
}

/**
 * thresholdPage, written over the page's own pixels (which are returned): for a page nobody needs
 * grey any more, it saves allocating a page (on the machines measured, allocating and first
 * touching 4 MB costs about as much as thresholding them). The neighbours the flatness test reads
 * come from copies of the row above and of the current row, taken before they are overwritten.
 */
export function thresholdInPlace(page: GreyPage): Uint8Array {
  const native = nativeRaster();
  if (native === null) return thresholdInPlaceTs(page);
  const { data, width, height } = page;
  if (data.length < width * height) throw new RangeError(`page pixels: expected ${width} x ${height} bytes, got ${data.length}`);
  native.thresholdShaded(data, width, height, SHADE_DARKEST, SHADE_LIGHTEST, BLACK_BELOW, SHADE_FLATNESS, HALFTONE_CELL, flatBlackTable());
  return data;
}

let flatBlack: Uint8Array | undefined;

/** For the native threshold: entry (cell position · 256 + grey) is 1 where a flat area of that grey is black at that position of the halftone cell. */
function flatBlackTable(): Uint8Array {
  if (flatBlack !== undefined) return flatBlack;
  const table = new Uint8Array(HALFTONE_CELL * HALFTONE_CELL * 256);
  for (let position = 0; position < HALFTONE_CELL * HALFTONE_CELL; position++) {
    for (let v = 0; v < 256; v++) table[position * 256 + v] = 255 - (255 - v) * SHADE_DENSITY <= HALFTONE_LEVELS[position]! ? 1 : 0;
  }
  return (flatBlack = table);
}

/** thresholdInPlace in TypeScript (the addon's twin, native-raster.ts). */
export function thresholdInPlaceTs(page: GreyPage): Uint8Array {
  const { data, width, height } = page;
  const lastRow = height - 1;
  const lastColumn = width - 1;
  // Most of a page is paper (255): skip it four pixels at a time where the bytes are aligned.
  const words = data.byteOffset % 4 === 0 && width % 4 === 0 ? new Uint32Array(data.buffer, data.byteOffset, data.length >> 2) : null;
  let above = new Uint8Array(width);
  let current = new Uint8Array(width);
  for (let y = 0; y < height; y++) {
    const row = y * width;
    const done = above;
    above = current;
    current = done;
    current.set(data.subarray(row, row + width));
    const cellRow = (y % HALFTONE_CELL) * HALFTONE_CELL;
    const inner = y > 0 && y < lastRow;
    const rowWordsEnd = (row + width) >> 2;
    for (let x = 0; x < width; x++) {
      if (words !== null && (x & 3) === 0) {
        // Paper stays white and solid ink stays black: four pixels at a time.
        let word = (row + x) >> 2;
        for (let w = words[word]; word < rowWordsEnd && (w === 0xffffffff || w === 0); w = words[++word]);
        x = (word << 2) - row;
        if (x >= width) break;
      }
      const i = row + x;
      const v = current[x]!;
      // Paper and ink are decided without looking further.
      if (v > SHADE_LIGHTEST) {
        data[i] = 255;
        continue;
      }
      if (v < SHADE_DARKEST) {
        data[i] = 0;
        continue;
      }
      let black = v < BLACK_BELOW;
      if (inner && x > 0 && x < lastColumn && isFlat(current[x - 1]!, current[x + 1]!, above[x]!, data[i + width]!, v)) {
        const shade = 255 - (255 - v) * SHADE_DENSITY;
        black = shade <= HALFTONE_LEVELS[cellRow + (x % HALFTONE_CELL)]!;
      }
      data[i] = black ? 0 : 255;
    }
  }
  return data;
}

function isFlat(left: number, right: number, up: number, down: number, v: number): boolean {
  return (
    Math.abs(left - v) <= SHADE_FLATNESS &&
    Math.abs(right - v) <= SHADE_FLATNESS &&
    Math.abs(up - v) <= SHADE_FLATNESS &&
    Math.abs(down - v) <= SHADE_FLATNESS
  );
}

/** A grey level that holds at least PAPER_SHARE of a page (within ±PAPER_SPREAD) and is PAPER_MIN or lighter is taken to be its paper. */
const PAPER_MIN = 160;
const PAPER_SPREAD = 6;
const PAPER_SHARE = 0.25;

/**
 * The white point of the levels step: PAPER_WHITE, or lower where the page has a grey paper
 * tone (a scan of greyish or yellowish paper), so that the paper comes out white rather than as
 * dots all over the page. The paper tone is a grey level of PAPER_MIN or lighter around which
 * (±PAPER_SPREAD) at least PAPER_SHARE of the page's pixels lie; the white point then sits just
 * below that band.
 */
export function paperWhite(page: GreyPage): number {
  const histogram = new Uint32Array(256);
  // Paper (255) is left uncounted: only levels up to 254 are read below.
  greyHistograms(page.data, page.width, 0, page.height, 31, histogram);
  return paperWhiteOf(histogram, page.data.length);
}

/** The levels of a page's histogram that paperWhiteOf reads (PAPER_LEVELS_FROM to 254). */
const PAPER_LEVELS_FROM = PAPER_MIN - PAPER_SPREAD;

/** paperWhite from a histogram of the page's `pixels` pixels (only its levels PAPER_LEVELS_FROM..254 are read). */
function paperWhiteOf(histogram: Uint32Array, pixels: number): number {
  let best = -1;
  let bestCount = 0;
  for (let level = PAPER_MIN; level <= PAPER_WHITE; level++) {
    let count = 0;
    for (let v = level - PAPER_SPREAD; v <= Math.min(254, level + PAPER_SPREAD); v++) count += histogram[v]!;
    if (count > bestCount) {
      best = level;
      bestCount = count;
    }
  }
  return best >= 0 && bestCount >= PAPER_SHARE * pixels ? Math.min(PAPER_WHITE, best - PAPER_SPREAD) : PAPER_WHITE;
}

/**
 * Adds each pixel of scan lines yStart..yEnd − 1 to `histograms[(x >> shift) · 256 + grey]` (one
 * histogram per column of 2^shift pixels; shift 31: one for the rows), except paper (255), which is
 * not counted. In C where the raster addon is built (native-raster.ts), else greyHistogramsTs.
 */
function greyHistograms(data: Uint8Array, width: number, yStart: number, yEnd: number, shift: number, histograms: Uint32Array): void {
  const native = nativeRaster();
  if (native !== null) native.greyHistograms(data, width, yStart, yEnd, shift, histograms);
  else greyHistogramsTs(data, width, yStart, yEnd, shift, histograms);
}

/** greyHistograms in TypeScript (the addon's twin). */
export function greyHistogramsTs(data: Uint8Array, width: number, yStart: number, yEnd: number, shift: number, histograms: Uint32Array): void {
  const words = data.byteOffset % 4 === 0 && width % 4 === 0 ? new Uint32Array(data.buffer, data.byteOffset, data.length >> 2) : null;
  for (let y = yStart; y < yEnd; y++) {
    const row = y * width;
    const [first, end] = inkSpan(words, row, width);
    for (let x = first; x < end; x++) {
      const v = data[row + x]!;
      if (v !== 255) histograms[(x >> shift) * 256 + v]!++;
    }
  }
}

/** The levels step before dithering as a table: grey in, stretched grey out (see the module comment). */
function levelsTable(white: number): Uint8Array {
  const table = new Uint8Array(256);
  for (let v = 0; v < 256; v++) {
    table[v] = v >= white ? 255 : v <= INK_BLACK ? 0 : Math.round(((v - INK_BLACK) * 255) / (white - INK_BLACK));
  }
  return table;
}

/**
 * Bilevel by Floyd–Steinberg dithering after levels, serpentine; pure white and pure black
 * pixels (after levels) keep their value and take no diffused error. Errors are kept in 1/16ths,
 * the Floyd–Steinberg weights being 7, 3, 5 and 1 sixteenths. `white` is the page's paper tone
 * (paperWhite), where the caller has it.
 */
export function ditherPage(page: GreyPage, white = paperWhite(page)): Uint8Array {
  const { width, height, data } = page;
  const levels = levelsTable(white);
  const out = new Uint8Array(width * height);
  const words = whiteWords(page);
  // Error rows, indexed x + 1 so that the neighbours of both edges need no bounds checks.
  let current = new Int32Array(width + 2);
  let next = new Int32Array(width + 2);
  for (let y = 0; y < height; y++) {
    next.fill(0);
    const row = y * width;
    // Paper at either end of the row is white and neither takes nor passes on error, so only the
    // span between needs diffusing: the result is the same, and white rows cost next to nothing.
    const [first, end] = inkSpan(words, row, width);
    out.fill(255, row, row + first);
    out.fill(255, row + end, row + width);
    const leftToRight = (y & 1) === 0;
    const step = leftToRight ? 1 : -1;
    for (let n = first, x = leftToRight ? first : end - 1; n < end; n++, x += step) {
      const level = levels[data[row + x]!]!;
      if (level === 255 || level === 0) {
        out[row + x] = level;
        continue;
      }
      const value = level + ((current[x + 1]! + 8) >> 4);
      const white = value >= 128;
      out[row + x] = white ? 255 : 0;
      const error = white ? value - 255 : value;
      current[x + 1 + step]! += error * 7;
      next[x + 1 - step]! += error * 3;
      next[x + 1]! += error * 5;
      next[x + 1 + step]! += error;
    }
    const done = current;
    current = next;
    next = done;
  }
  return out;
}

/** Side of a halftone cell in pixels: 6 pixels at 204 dpi is a screen of 34 lines per inch. */
export const HALFTONE_CELL = 6;

/**
 * Threshold levels of one clustered-dot cell: the cell's pixels ranked by their distance from
 * its centre (ties broken by angle, so the dot grows evenly), rank r getting the level
 * (r + 0.5) / cells x 255. A grey g blackens the pixels whose level lies above g, so a darker grey
 * gives a bigger round dot in the middle of the cell.
 */
function clusteredDotLevels(cell: number): Uint8Array {
  const centre = (cell - 1) / 2;
  const order = Array.from({ length: cell * cell }, (_, i) => {
    const dx = (i % cell) - centre;
    const dy = Math.floor(i / cell) - centre;
    return { i, distance: dx * dx + dy * dy, angle: Math.atan2(dy, dx) };
  }).sort((a, b) => a.distance - b.distance || a.angle - b.angle);
  const levels = new Uint8Array(cell * cell);
  order.forEach(({ i }, rank) => {
    levels[i] = Math.round(255 - ((rank + 0.5) / (cell * cell)) * 255);
  });
  return levels;
}

const HALFTONE_LEVELS = clusteredDotLevels(HALFTONE_CELL);

/**
 * Bilevel by a clustered-dot halftone after the same levels step as ditherPage (see the module
 * comment): the whole page as one picture block. Paper stays white, as every cell level is below
 * 255.
 */
export function halftonePage(page: GreyPage): Uint8Array {
  const { width, height } = page;
  return halftoneBlocks(page, new Uint8Array(width * height), WHOLE_PAGE, Math.max(width, height), paperWhite(page));
}

/** A picture mask of one block, marked. */
const WHOLE_PAGE = Uint8Array.of(1);

/** The page's pixels as 32-bit words, where its rows are word-aligned (for skipping paper). */
function whiteWords(page: GreyPage): Uint32Array | null {
  const { data, width } = page;
  return data.byteOffset % 4 === 0 && width % 4 === 0 ? new Uint32Array(data.buffer, data.byteOffset, data.length >> 2) : null;
}

/**
 * The part of row `row` (its first pixel index) between its leading and trailing paper (255):
 * [first, end) in columns, to a word; [0, 0) for a white row, [0, width) without words.
 */
function inkSpan(words: Uint32Array | null, row: number, width: number): [number, number] {
  if (words === null) return [0, width];
  const firstWord = row >> 2;
  const endWord = (row + width) >> 2;
  let from = firstWord;
  while (from < endWord && words[from] === 0xffffffff) from++;
  if (from === endWord) return [0, 0];
  let to = endWord;
  while (to > from && words[to - 1] === 0xffffffff) to--;
  return [(from - firstWord) << 2, (to - firstWord) << 2];
}

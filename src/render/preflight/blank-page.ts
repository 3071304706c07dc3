/**
 * Is a rendered page blank, so that it may be left out of the fax (mail-to-fax's
 * `fax.suppressBlankPages`, docs/mail-to-fax.md)? Decided on the page's bilevel pixels as they
 * come from the document, before Faxline draws its header line, cover page or overlay: Faxline's
 * own ink never makes a page "not blank".
 *
 * A page is blank when, inside a margin (BLANK_MARGIN_SIDE_IN 0.4 in at the left and right,
 * BLANK_MARGIN_TOP_IN 0.5 in at the top, BLANK_MARGIN_BOTTOM_IN 0.25 in at the bottom),
 *  - it has no black pixel at all, or
 *  - it has only dust: at most DUST_MAX_BLACK_RATIO (0.1 %) of the pixels inside the margin are
 *    black, and no black run, across or down, is longer than DUST_MAX_MARK_IN (1 mm: 8 pixels
 *    across, 7 scan lines down at 196 lines per inch, 3 at 98).
 *
 * Why these values. Measured on pages rendered as a job's are (PDFs drawn with pdf-lib's standard
 * fonts, rendered through PDFium, placed and thresholded by prepare-page.ts), A4, at 196 / 98
 * lines per inch; test/unit/render-blank-page.test.ts renders the same kinds of page:
 *  - The margin keeps out what is no content: the dark border a scanner leaves where the lid or
 *    the feeder shows, and, on a fax page forwarded as a TIFF, the header line of the machine
 *    that sent it. Scaled content lies inside grey-page.ts's content box (0.12 in from the edges,
 *    below the 0.25 in header band) and an A4 page is narrower than the fax line (215 mm), so a
 *    scanned A4 sheet's edges land about 7 mm from the sides and 3 mm from the bottom: with these
 *    margins a border of up to 3 mm in the scan is ignored (4 mm is not). A word processor's page
 *    number (1.25 cm or more from the edge) is well inside.
 *  - The share of ink alone cannot tell a page number from dust: "Page 2" alone on a page is 560
 *    black pixels in 10-point Helvetica (279 at 98 lines per inch), 135 (66) in 6-point Times:
 *    0.004–0.024 % of the page inside the margin, as little as a few dozen specks. The size of
 *    the marks tells them apart: every character but a dot has a stroke longer than 1 mm — the
 *    shortest measured, "Page 2" in 6-point Times, has runs of 7 pixels across but 10 scan lines
 *    down (5 at 98); an "i" in 8 point is 2 pixels wide but 11 scan lines tall — while dust and
 *    the specks a thresholded scan of an empty sheet keeps are smaller: a scan at 300 dpi of a
 *    sheet with 60 specks of 0.25–0.6 mm left runs of at most 5 pixels across and 5 scan lines
 *    down. A dot or a hyphen alone (3 x 3 and 7 x 3 pixels) counts as dust.
 *  - The share caps how much dust a blank page may have. A scanned empty sheet (paper grey 240 –
 *    250 of 255, sensor noise, JPEG, 60 specks) measured 112–681 black pixels, at most 0.02 % of
 *    the page inside the margin; 0.1 % (3 354 pixels at 196 lines per inch, 1 676 at 98) leaves
 *    room for five times that. More dust than that, or a page of scattered dots (a light photo
 *    dithered, a tint), is sent: when in doubt, a page is kept. A scan of grey paper (235 or
 *    darker) is thresholded into a light dot tint of 1–5 % black (encode-fax-page.ts screens flat
 *    grey) and is therefore sent too.
 *
 * This is stricter and looser than the preflight's "looks blank" warning (page-preflight.ts,
 * below 0.02 % black by share alone), on purpose: a page is only left out when every mark on it
 * is dust, and a page that only warns may be left out or not.
 *
 * What is not caught (the page is sent): a blank sheet scanned with a hair, a crease, a punched
 * hole showing dark, or a border wider than about 3 mm (marks longer than 1 mm inside the margin).
 *
 * Cost: one pass over the pixels inside the margin, four pixels at a time through white paper
 * where the pixels are word-aligned; it stops at the first mark that is content, so a page of
 * text is decided within its first line (0.02–0.2 ms); a blank page, read whole, takes about
 * 0.9 ms at 196 lines per inch (docs/benchmarks.md, bench:blank-pages).
 */

/** Margin at the left and right of the page that is not looked at, inches (0.4 in: 10.2 mm). */
export const BLANK_MARGIN_SIDE_IN = 0.4;
/** Margin at the top, inches (0.5 in: 12.7 mm; the header band, grey-page.ts HEADER_BAND_IN, is its first 0.25 in). */
export const BLANK_MARGIN_TOP_IN = 0.5;
/** Margin at the bottom, inches (0.25 in: 6.35 mm). */
export const BLANK_MARGIN_BOTTOM_IN = 0.25;
/** At most this share of the pixels inside the margin may be black on a blank page (0.1 %). */
export const DUST_MAX_BLACK_RATIO = 0.001;
/** A black run (across or down) longer than this is a mark of content, not dust, inches (1 mm). */
export const DUST_MAX_MARK_IN = 1 / 25.4;

/** The rule in pixels for one page geometry (blankPageRule). Plain data: it travels to page helper threads. */
export interface BlankPageRule {
  /** Columns left out on the left and on the right. */
  marginX: number;
  /** Scan lines left out at the top. */
  marginTop: number;
  /** Scan lines left out at the bottom. */
  marginBottom: number;
  /** The longest black run across (pixels) that is still dust. */
  maxRunX: number;
  /** The longest black run down (scan lines) that is still dust. */
  maxRunY: number;
  /** The share of the pixels inside the margin that may be black (DUST_MAX_BLACK_RATIO). */
  maxBlackRatio: number;
}

/** The rule for pages of `xDpi` x `yDpi` (the fax page geometry, pages/grey-page.ts). */
export function blankPageRule(resolution: { xDpi: number; yDpi: number }): BlankPageRule {
  return {
    marginX: Math.round(BLANK_MARGIN_SIDE_IN * resolution.xDpi),
    marginTop: Math.round(BLANK_MARGIN_TOP_IN * resolution.yDpi),
    marginBottom: Math.round(BLANK_MARGIN_BOTTOM_IN * resolution.yDpi),
    maxRunX: Math.max(1, Math.floor(DUST_MAX_MARK_IN * resolution.xDpi)),
    maxRunY: Math.max(1, Math.floor(DUST_MAX_MARK_IN * resolution.yDpi)),
    maxBlackRatio: DUST_MAX_BLACK_RATIO,
  };
}

export interface BlankPageInspection {
  blank: boolean;
  /** Black pixels inside the margin (counted until the decision, unless `complete`). */
  blackPixels: number;
  /** The most black pixels allowed inside the margin. */
  maxBlackPixels: number;
  /** The longest black run across and down seen (until the decision, unless `complete`). */
  longestRunX: number;
  longestRunY: number;
}

/**
 * Inspects a bilevel page (one byte per pixel, below 128 black). Stops as soon as the page is
 * found not blank, unless `complete` (for measurements: then every count covers the whole page).
 */
export function inspectBlankPage(pixels: Uint8Array, size: { width: number; height: number }, rule: BlankPageRule, complete = false): BlankPageInspection {
  const { width, height } = size;
  if (pixels.length < width * height) throw new RangeError(`page pixels: expected ${width} x ${height} bytes, got ${pixels.length}`);
  const left = Math.min(rule.marginX, width);
  const right = Math.max(left, width - rule.marginX);
  const top = Math.min(rule.marginTop, height);
  const bottom = Math.max(top, height - rule.marginBottom);
  const maxBlackPixels = Math.floor(rule.maxBlackRatio * (right - left) * (bottom - top));
  // Four pixels at a time through paper, where the rows are word-aligned.
  const words = pixels.byteOffset % 4 === 0 && width % 4 === 0 ? new Uint32Array(pixels.buffer, pixels.byteOffset, (width * height) >> 2) : null;
  // Per column: the scan line of its last black pixel, and the length of its run down to there.
  const lastBlackRow = new Int32Array(width).fill(-2);
  const runDown = new Int32Array(width);
  let blackPixels = 0;
  let longestRunX = 0;
  let longestRunY = 0;
  let content = false;
  for (let y = top; y < bottom && !content; y++) {
    const rowStart = y * width;
    let runAcross = 0;
    let x = left;
    while (x < right) {
      if (words !== null && (x & 3) === 0) {
        // Skip whole white words (255 x 4); a run across ends at white paper.
        let word = (rowStart + x) >> 2;
        const endWord = (rowStart + right) >> 2;
        if (word < endWord && words[word] === 0xffffffff) {
          runAcross = 0;
          do word++;
          while (word < endWord && words[word] === 0xffffffff);
          x = (word << 2) - rowStart;
          if (x >= right) break;
        }
      }
      if (pixels[rowStart + x]! < 128) {
        blackPixels++;
        runAcross++;
        if (runAcross > longestRunX) longestRunX = runAcross;
        const down = lastBlackRow[x] === y - 1 ? runDown[x]! + 1 : 1;
        runDown[x] = down;
        lastBlackRow[x] = y;
        if (down > longestRunY) longestRunY = down;
        if (!complete && (blackPixels > maxBlackPixels || runAcross > rule.maxRunX || down > rule.maxRunY)) {
          content = true;
          break;
        }
      } else {
        runAcross = 0;
      }
      x++;
    }
  }
  const blank = !content && blackPixels <= maxBlackPixels && longestRunX <= rule.maxRunX && longestRunY <= rule.maxRunY;
  return { blank, blackPixels, maxBlackPixels, longestRunX, longestRunY };
}

/** Whether the page is blank (inspectBlankPage, stopping at the first mark of content). */
export function isBlankPage(pixels: Uint8Array, size: { width: number; height: number }, rule: BlankPageRule): boolean {
  return inspectBlankPage(pixels, size, rule).blank;
}

/**
 * Text layout: lays plain text out on fax pages the way a fax service prints a text document,
 * in a 10-point monospaced (Courier-like) font: 12 characters per inch, 6 lines per inch.
 *
 * Page geometry (`textPageGeometry`):
 *   A fax scan line is 1728 px at 204 dpi, i.e. 1728 / 204 = 8.47 in wide; vertical resolution
 *   is 196 lines/inch (HIGH, "fine") or 98 lines/inch (LOW, "normal"). A page is
 *   round(paper height in inches x yDpi) scan lines high:
 *     A4     (210 x 297 mm = 8.27 x 11.69 in): HIGH 2292 px, LOW 1146 px
 *     LETTER (8.5 x 11 in):                     HIGH 2156 px, LOW 1078 px
 *   (T.4's nominal 7.7 lines/mm would give 2287 for A4; we use 196 lines/inch as specified.)
 *
 * Text area (the same at both resolutions, so resolution never changes the page count):
 *   margins 0.6 in left and right, 0.5 in top and bottom, and above the top margin a 0.25 in band
 *   kept free for the fax header line the sender prints later.
 *   columns = min(80, floor((min(paper width, 8.47 in scan line) - 2 x 0.6 in) x 12 chars/in))
 *     A4:     min(8.27, 8.47) - 1.2 = 7.07 in x 12 = 84.8 -> 84 -> capped to 80
 *     LETTER: min(8.50, 8.47) - 1.2 = 7.27 in x 12 = 87.2 -> 87 -> capped to 80
 *     The cap is the conventional plain-text line width: text written for 80 columns prints
 *     as written, and both papers wrap identically (the spare width widens the right margin).
 *   linesPerPage = floor((paper height - 0.25 in header band - 0.5 in top - 0.5 in bottom) x 6)
 *     A4:     11.69 - 1.25 = 10.44 in x 6 = 62.66 -> 62
 *     LETTER: 11.00 - 1.25 =  9.75 in x 6 = 58.5  -> 58
 *
 * Text rules (`layoutText`):
 *  - text is put in Unicode NFC; CRLF and lone CR become LF (as do U+2028/U+2029);
 *  - tabs expand to 8-column tab stops; a backspace removes the character before it (overstrike
 *    keeps the later character); every other control character (C0, DEL, C1) is removed;
 *  - trailing whitespace of each line is removed;
 *  - a form feed ends the page: text after it starts at the top of the next page. A line break
 *    right after a form feed (a form feed on a line of its own) adds no blank line. Blank pages
 *    between printed pages are kept; blank pages at the start or end of the document (a
 *    trailing form feed, trailing empty lines) are dropped, and so are empty lines at the end of
 *    each page;
 *  - a line longer than `columns` wraps at the last space (or ideographic space, U+3000) within
 *    the limit (the spaces at the break are dropped), or is cut hard at `columns` if it has no
 *    such space;
 *  - widths are counted in columns: one per code point (a non-BMP character, a surrogate pair, is
 *    one), two for an East Asian wide or fullwidth character (Han, Kana, Hangul, fullwidth
 *    forms: `characterColumns`), as terminals print them; a wide character is never split
 *    across a line break, and tab stops count columns.
 *  A document that is empty or only whitespace yields zero pages.
 */

export type PaperFormat = "A4" | "LETTER";
export type Resolution = "HIGH" | "LOW";

export interface TextLayoutOptions {
  paperFormat: PaperFormat;
  resolution: Resolution;
}

/** The printable lines of one page, each at most `columns` columns wide; may be empty (blank page). */
export interface TextPageLayout {
  lines: string[];
}

export interface TextLayout {
  columns: number;
  linesPerPage: number;
  pages: TextPageLayout[];
  /**
   * True when the layout stopped because the text needs more than `maxPages` printed pages;
   * `pages` then holds what was laid out so far (more than maxPages).
   */
  exceeded: boolean;
}

export interface TextPageGeometry {
  columns: number;
  linesPerPage: number;
  widthPx: 1728;
  heightPx: number;
  xDpi: 204;
  yDpi: number;
}

const MM_PER_INCH = 25.4;
const FAX_WIDTH_PX = 1728;
const FAX_X_DPI = 204;
const Y_DPI: Readonly<Record<Resolution, number>> = { HIGH: 196, LOW: 98 };
const PAPER_INCHES: Readonly<Record<PaperFormat, { width: number; height: number }>> = {
  A4: { width: 210 / MM_PER_INCH, height: 297 / MM_PER_INCH },
  LETTER: { width: 8.5, height: 11 },
};
const CHARS_PER_INCH = 12;
const LINES_PER_INCH = 6;
const SIDE_MARGIN_IN = 0.6;
const TOP_MARGIN_IN = 0.5;
const BOTTOM_MARGIN_IN = 0.5;
const HEADER_BAND_IN = 0.25;
const MAX_COLUMNS = 80;
const TAB_WIDTH = 8;
/** Guards floor() against binary floating-point error on exact products. */
const EPSILON = 1e-9;

/** Pixel and character geometry of a text page; see the module comment for the arithmetic. */
export function textPageGeometry(options: TextLayoutOptions): TextPageGeometry {
  const paper = PAPER_INCHES[options.paperFormat];
  const yDpi = Y_DPI[options.resolution];
  const scanLineIn = FAX_WIDTH_PX / FAX_X_DPI;
  const textWidthIn = Math.min(paper.width, scanLineIn) - 2 * SIDE_MARGIN_IN;
  const textHeightIn = paper.height - HEADER_BAND_IN - TOP_MARGIN_IN - BOTTOM_MARGIN_IN;
  return {
    columns: Math.min(MAX_COLUMNS, Math.floor(textWidthIn * CHARS_PER_INCH + EPSILON)),
    linesPerPage: Math.floor(textHeightIn * LINES_PER_INCH + EPSILON),
    widthPx: FAX_WIDTH_PX,
    heightPx: Math.round(paper.height * yDpi),
    xDpi: FAX_X_DPI,
    yDpi,
  };
}

/** Where a page's text lies, in inches from the left end of the fax scan line and the page top. */
export interface TextFrame {
  left: number;
  top: number;
  /** Width of one column (monospaced: a code point takes one, an East Asian wide one two: `characterColumns`). */
  charWidth: number;
  lineHeight: number;
}

/**
 * The text area of a page as the rasteriser (fax-image/) draws it: the paper lies centred on the
 * scan line (A4 leaves 0.1 in of scan line on either side, LETTER overhangs it by 0.015 in), the
 * text starts at the side margin and below the header band and the top margin.
 */
export function textFrame(paperFormat: PaperFormat): TextFrame {
  const scanLineIn = FAX_WIDTH_PX / FAX_X_DPI;
  return {
    left: (scanLineIn - PAPER_INCHES[paperFormat].width) / 2 + SIDE_MARGIN_IN,
    top: HEADER_BAND_IN + TOP_MARGIN_IN,
    charWidth: 1 / CHARS_PER_INCH,
    lineHeight: 1 / LINES_PER_INCH,
  };
}

/** Lays `text` out on pages; see the module comment for the rules. */
export function layoutText(text: string, options: TextLayoutOptions, maxPages = Number.POSITIVE_INFINITY): TextLayout {
  const { columns, linesPerPage } = textPageGeometry(options);
  const normalized = text.normalize("NFC").replace(/\r\n?|[\u2028\u2029]/g, "\n");

  const pages: string[][] = [];
  let current: string[] = [];
  // Printed pages run from the first to the last completed page with a line on it (blank pages
  // between them count); once they pass maxPages, the rest of the text cannot change that.
  let firstPrinted = -1;
  let exceeded = false;
  // A line longer than this fills more than maxPages pages by itself.
  const maxLineLength = (maxPages + 1) * linesPerPage * columns;
  const complete = (page: string[]): void => {
    pages.push(page);
    if (page.some((line) => line !== "")) {
      if (firstPrinted === -1) firstPrinted = pages.length - 1;
      if (pages.length - firstPrinted > maxPages) exceeded = true;
    }
  };
  const pushLine = (line: string): void => {
    if (current.length === linesPerPage) {
      complete(current);
      current = [];
    }
    current.push(line);
  };
  const breakPage = (): void => {
    complete(current);
    current = [];
  };

  // Line by line without splitting the whole text at once: a long text past the page limit stops early.
  for (let start = 0; start <= normalized.length && !exceeded; ) {
    let end = normalized.indexOf("\n", start);
    if (end === -1) end = normalized.length;
    const logicalLine = normalized.slice(start, end);
    start = end + 1;
    const segments = logicalLine.split("\f");
    segments.forEach((segment, index) => {
      if (index > 0) breakPage();
      const cleaned = cleanSegment(segment, maxLineLength);
      // A segment cut short by a form feed prints only if it has content; a newline-terminated
      // line prints even when blank, except the empty rest of a line after a form feed.
      const isLast = index === segments.length - 1;
      if (cleaned.length > 0 || (isLast && segments.length === 1)) {
        for (const piece of wrapLine(cleaned, columns)) pushLine(piece);
      }
    });
  }
  if (!exceeded) complete(current);
  if (exceeded) return { columns, linesPerPage, pages: pages.map((lines) => ({ lines })), exceeded };

  for (const page of pages) {
    while (page.length > 0 && page[page.length - 1] === "") page.pop();
  }
  let first = 0;
  let end = pages.length;
  while (first < end && pages[first]?.length === 0) first++;
  while (end > first && pages[end - 1]?.length === 0) end--;

  return {
    columns,
    linesPerPage,
    pages: pages.slice(first, end).map((lines) => ({ lines })),
    exceeded: false,
  };
}

/**
 * Expands tabs, applies backspaces, drops control characters and trailing whitespace. Stops early
 * once the line certainly holds more than `maxLength` characters other than spaces, even if every
 * backspace of the line removed one of them (a single line of megabytes past the page limit is
 * not kept in full).
 */
function cleanSegment(segment: string, maxLength = Number.POSITIVE_INFINITY): string[] {
  const out: string[] = [];
  let column = 0;
  let backspaces = 0;
  // Counted are the characters that are not spaces: wrapping drops the spaces at its breaks, but
  // each wrapped line holds at most `columns` of the others.
  let printable = 0;
  if (Number.isFinite(maxLength)) for (let i = segment.indexOf("\b"); i !== -1; i = segment.indexOf("\b", i + 1)) backspaces++;
  for (const ch of segment) {
    const cp = ch.codePointAt(0) ?? 0;
    if (printable - backspaces > maxLength) return out;
    if (ch !== "\t" && ch !== "\b" && ch !== " " && !(cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))) printable++;
    if (ch === "\t") {
      const spaces = TAB_WIDTH - (column % TAB_WIDTH);
      for (let i = 0; i < spaces; i++) out.push(" ");
      column += spaces;
    } else if (ch === "\b") {
      const removed = out.pop();
      if (removed !== undefined) column -= characterColumns(removed.codePointAt(0)!);
    } else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) {
      // other control characters print nothing
    } else {
      out.push(ch);
      column += characterColumns(cp);
    }
  }
  while (out.length > 0 && /^\s$/u.test(out[out.length - 1] ?? "")) out.pop();
  return out;
}

/** The wide ranges of `characterColumns`, ascending. */
const WIDE_RANGES: readonly (readonly [number, number])[] = [
  [0x1100, 0x115f], [0x2e80, 0x303e], [0x3041, 0x33ff], [0x3400, 0x4dbf], [0x4e00, 0x9fff],
  [0xa000, 0xa4cf], [0xa960, 0xa97f], [0xac00, 0xd7a3], [0xf900, 0xfaff], [0xfe10, 0xfe19],
  [0xfe30, 0xfe6f], [0xff00, 0xff60], [0xffe0, 0xffe6], [0x20000, 0x2fffd], [0x30000, 0x3fffd],
];

/**
 * Columns a code point takes on the page: 2 for East Asian wide and fullwidth characters (the
 * ranges of Unicode's East_Asian_Width W and F that hold letters and signs: Hangul Jamo leading
 * consonants, CJK radicals, symbols and punctuation, Kana, Bopomofo, Han and its extensions, Yi,
 * Hangul syllables, CJK compatibility forms, fullwidth forms), else 1.
 */
export function characterColumns(codePoint: number): 1 | 2 {
  if (codePoint < 0x1100) return 1;
  for (const [first, last] of WIDE_RANGES) {
    if (codePoint < first) return 1;
    if (codePoint <= last) return 2;
  }
  return 1;
}


/** A space a line may break at (and loses there): the space, and the ideographic space of CJK text. */
function isBreakSpace(ch: string | undefined): boolean {
  return ch === " " || ch === "\u3000";
}

/**
 * Splits one cleaned line (code points, no trailing whitespace) into lines of at most `columns`
 * columns. With one-column characters only, `end` below is `start + columns`.
 */
function wrapLine(cps: string[], columns: number): string[] {
  let total = 0;
  let widths: number[] | null = null;
  for (let i = 0; i < cps.length; i++) {
    const w = characterColumns(cps[i]!.codePointAt(0)!);
    if (w !== 1 && widths === null) widths = cps.map(() => 1);
    if (widths !== null) widths[i] = w;
    total += w;
  }
  if (total <= columns) return [cps.join("")];
  // Most lines have one-column characters only: no array of widths for them.
  const width = widths === null ? (): number => 1 : (i: number): number => widths[i]!;
  const pieces: string[] = [];
  let start = 0;
  let remaining = total;
  const advance = (to: number): void => {
    for (let i = start; i < to; i++) remaining -= width(i);
    start = to;
  };
  while (remaining > columns) {
    // The longest run from `start` that fits: cps[start, end).
    let end = start;
    for (let used = 0; end < cps.length && used + width(end) <= columns; end++) used += width(end);
    let firstNonSpace = start;
    while (isBreakSpace(cps[firstNonSpace])) firstNonSpace++;
    // Break at the last space whose left part fits (index `end` may be that space).
    let breakAt = -1;
    for (let i = end; i > firstNonSpace; i--) {
      if (isBreakSpace(cps[i])) {
        breakAt = i;
        break;
      }
    }
    if (breakAt >= 0) {
      pieces.push(cps.slice(start, breakAt).join("").trimEnd());
      let next = breakAt;
      while (isBreakSpace(cps[next])) next++;
      advance(next);
    } else {
      pieces.push(cps.slice(start, end).join("").trimEnd());
      advance(end);
    }
  }
  if (start < cps.length) pieces.push(cps.slice(start).join(""));
  return pieces;
}

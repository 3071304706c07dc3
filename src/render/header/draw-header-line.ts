/**
 * Draws formatted header lines (format-header.ts) at the top of a grey page.
 *
 * Font and size: DejaVu Sans Mono (the font of text pages) at 16 characters per inch, about
 * 7.5 pt, the same size at both resolutions. Each line gets floor(headerBandPx / 2) scan lines
 * (HIGH 24, LOW 12: 0.122 in, a little more than the font's 0.121 in line box), so two lines
 * fit into the 0.25 in header band; a third line goes just below the band, over the top of the
 * page content. As on text pages the canvas is scaled by (1, yDpi / 204) so the non-square fax
 * pixels come out right, every code point is drawn in its own column cell (1/16 in; two cells for
 * an East Asian wide character, from a fallback font where the fax font lacks it, as on text
 * pages), and each baseline lies on a whole scan line.
 *
 * Placement: the left part starts at the left edge of text pages (textFrame: the paper's 0.6 in
 * side margin), the right part ends at the same distance from the right end of the scan line,
 * the centre part is centred on the scan line. Spaces at the inner ends of the parts (end of the
 * left part, both ends of the centre part, start and end of the right part) are not drawn and
 * do not move a part.
 *
 * Cut rule (text never wraps and no part overlaps another): the right part is placed first,
 * then the centre part, then the left part; each part keeps one empty column to the part placed
 * before it, and a part that does not fit loses its end (whole characters, no ellipsis). So a
 * right part longer than the line keeps its start; a centre part keeps its centred start and is
 * cut before the right part (and dropped when nothing of it fits); the left part gets what is
 * left before the centre part, or before the right part when there is no centre part.
 * A4 lines hold 113 columns, LETTER lines 116; a wide character counts two.
 *
 * Pixels: behind each drawn part a rectangle of its line's scan lines (plus a quarter column
 * on either side) is made white, and the text in it black: the anti-aliased grey is thresholded
 * as on text pages (darker than 160 is black), so the strip is pure 0 / 255. Pixels outside
 * these rectangles are left as they are.
 */
import { createCanvas, GlobalFonts, type SKRSContext2D } from "@napi-rs/canvas";
import { characterColumns, textFrame } from "../layout-text.ts";
import type { GreyPage, PageGeometry } from "../pages/grey-page.ts";
import { FAX_FONT_FILE } from "../fax-image/rasterize-text-page.ts";
import { fillCharacterInCells, installedFallbackFonts } from "../fonts/fallback-fonts.ts";
import { ensureGlyphs } from "../fonts/system-fonts.ts";
import type { HeaderLine } from "./format-header.ts";
import { MAX_HEADER_LINES } from "./header-template.ts";

const FONT_FAMILY = "Faxline Header DejaVu Sans Mono";
/** Columns per inch of header text. */
export const HEADER_CHARS_PER_INCH = 16;
const BLACK_BELOW = 160;
const LEADING_SPACE = /^\s+/u;
const TRAILING_SPACE = /\s+$/u;

interface HeaderDrawer {
  draw(page: GreyPage, lines: HeaderLine[], geometry: PageGeometry): void;
}

const drawers = new Map<string, HeaderDrawer>();

function registerFont(): void {
  if (GlobalFonts.has(FONT_FAMILY)) return;
  if (GlobalFonts.registerFromPath(FAX_FONT_FILE, FONT_FAMILY) === null) {
    throw new Error(`The fax font ${FAX_FONT_FILE} cannot be loaded; install the Debian package fonts-dejavu-core`);
  }
}

/** Scan lines of one header line at a geometry. */
export function headerLinePitch(geometry: PageGeometry): number {
  return Math.floor(geometry.headerBandPx / 2);
}

/** Where each part of one line goes: first pixel column of its first cell and its code points. */
interface PlacedPart {
  x: number;
  chars: string[];
}

/** Columns of `chars` (two for a wide character: layout-text.ts `characterColumns`). */
function columnsOf(chars: readonly string[]): number {
  let columns = 0;
  for (const ch of chars) columns += characterColumns(ch.codePointAt(0)!);
  return columns;
}

/** The longest start of `chars` that fits in `columns` columns. */
function keepColumns(chars: string[], columns: number): string[] {
  let used = 0;
  let n = 0;
  for (; n < chars.length; n++) {
    const w = characterColumns(chars[n]!.codePointAt(0)!);
    if (used + w > columns) break;
    used += w;
  }
  return chars.slice(0, n);
}

/** Applies the cut rule (module comment) to one line; pixel units, cells of `cell` pixels. */
export function placeHeaderLine(
  line: HeaderLine,
  geometry: PageGeometry,
): { left: PlacedPart | null; centre: PlacedPart | null; right: PlacedPart | null } {
  const cell = geometry.xDpi / HEADER_CHARS_PER_INCH;
  const start = Math.round(textFrame(geometry.paperFormat).left * geometry.xDpi);
  const end = geometry.widthPx - start;
  const fits = (from: number, to: number): number => Math.max(0, Math.floor((to - from) / cell + 1e-9));

  const rightChars = Array.from(line.right.replace(LEADING_SPACE, "").replace(TRAILING_SPACE, ""));
  const centreChars = Array.from(line.centre.replace(LEADING_SPACE, "").replace(TRAILING_SPACE, ""));
  const leftChars = Array.from(line.left.replace(TRAILING_SPACE, ""));

  let limit = end;
  let right: PlacedPart | null = null;
  if (rightChars.length > 0) {
    const kept = keepColumns(rightChars, fits(start, end));
    right = { x: end - columnsOf(kept) * cell, chars: kept };
    limit = right.x - cell;
  }
  let centre: PlacedPart | null = null;
  if (centreChars.length > 0) {
    const x = Math.max(start, geometry.widthPx / 2 - (columnsOf(centreChars) * cell) / 2);
    const kept = keepColumns(centreChars, fits(x, limit));
    if (kept.length > 0) {
      centre = { x, chars: kept };
      limit = x - cell;
    }
  }
  let left: PlacedPart | null = null;
  if (leftChars.length > 0) {
    const kept = keepColumns(leftChars, fits(start, limit));
    if (kept.length > 0) left = { x: start, chars: kept };
  }
  return { left, centre, right };
}

function makeDrawer(geometry: PageGeometry): HeaderDrawer {
  registerFont();
  const { widthPx, xDpi, yDpi } = geometry;
  const pitch = headerLinePitch(geometry);
  const heightRows = MAX_HEADER_LINES * pitch;
  const toScanLines = yDpi / xDpi;
  const cell = xDpi / HEADER_CHARS_PER_INCH;

  const canvas = createCanvas(widthPx, heightRows);
  const ctx: SKRSContext2D = canvas.getContext("2d");
  ctx.scale(1, toScanLines);
  ctx.font = `100px "${FONT_FAMILY}"`;
  const advanceRatio = ctx.measureText("M").width / 100;
  const fontPx = cell / advanceRatio;
  ctx.font = `${fontPx}px "${FONT_FAMILY}"`;
  ctx.textBaseline = "alphabetic";
  const metrics = ctx.measureText("M");
  const ascentRows = metrics.fontBoundingBoxAscent * toScanLines;
  const boxRows = (metrics.fontBoundingBoxAscent + metrics.fontBoundingBoxDescent) * toScanLines;
  // The font's line box centred in the line's scan lines, the baseline on a whole scan line.
  const baselineInLine = Math.floor((pitch - boxRows) / 2 + ascentRows);
  const pad = Math.round(cell / 4);

  return {
    draw(page, lines, pageGeometry) {
      if (page.width !== widthPx) throw new Error(`A ${page.width}-pixel page cannot take a ${widthPx}-pixel header`);
      const shown = lines.slice(0, MAX_HEADER_LINES);
      ctx.fillStyle = "#fff";
      ctx.fillRect(0, 0, widthPx, heightRows / toScanLines);
      ctx.fillStyle = "#000";
      const boxes: { x0: number; x1: number; y0: number; y1: number }[] = [];
      shown.forEach((line, index) => {
        const placed = placeHeaderLine(line, pageGeometry);
        const top = index * pitch;
        const y = (top + baselineInLine) / toScanLines;
        for (const part of [placed.left, placed.centre, placed.right]) {
          if (part === null) continue;
          ensureGlyphs(part.chars.join(""), [FAX_FONT_FILE, ...installedFallbackFonts()]);
          let column = 0;
          for (const character of part.chars) {
            const cells = characterColumns(character.codePointAt(0)!);
            fillCharacterInCells(ctx, character, part.x + column * cell, y, cells, cell, fontPx, FAX_FONT_FILE);
            column += cells;
          }
          boxes.push({
            x0: Math.max(0, Math.floor(part.x) - pad),
            x1: Math.min(widthPx, Math.ceil(part.x + column * cell) + pad),
            y0: top,
            y1: Math.min(page.height, top + pitch),
          });
        }
      });
      if (boxes.length === 0) return;
      const rgba = canvas.data();
      for (const box of boxes) {
        for (let row = box.y0; row < box.y1; row++) {
          let out = row * widthPx + box.x0;
          let red = out * 4;
          for (let x = box.x0; x < box.x1; x++, out++, red += 4) {
            page.data[out] = (rgba[red] ?? 255) < BLACK_BELOW ? 0 : 255;
          }
        }
      }
    },
  };
}

/**
 * Draws the header lines at the top of the page (see the module comment). Lines beyond
 * MAX_HEADER_LINES are ignored (the template parser allows no more). One canvas per
 * resolution and band is kept for all pages.
 */
export function drawHeaderLines(page: GreyPage, lines: HeaderLine[], geometry: PageGeometry): void {
  const key = `${geometry.widthPx}:${geometry.xDpi}:${geometry.yDpi}:${geometry.headerBandPx}`;
  let drawer = drawers.get(key);
  if (drawer === undefined) {
    drawer = makeDrawer(geometry);
    drawers.set(key, drawer);
  }
  drawer.draw(page, lines, geometry);
}

/**
 * Rasterises laid-out text pages (layout-text.ts) into fax pixels: 1728 pixels per scan line at
 * 204 dpi, 196 (HIGH) or 98 (LOW) scan lines per inch, one byte per pixel, 0 black, 255 white,
 * nothing in between.
 *
 * Drawing: @napi-rs/canvas with DejaVu Sans Mono (Debian package fonts-dejavu-core) at 10 pt.
 * The canvas is scaled by (1, yDpi / 204), so drawing happens in square 204-dpi units and the
 * non-square fax pixels come out right. Every code point is drawn in its own column cell
 * (textFrame: 1/12 in wide, 1/6 in high) rather than as one string, so that the columns of the
 * layout are the columns on paper even where a glyph would come from a fallback font of another
 * width. A code point DejaVu Sans Mono lacks (Han, Kana, Hangul, Hebrew, …) is drawn with the
 * first fallback font that has it (fonts/fallback-fonts.ts: @napi-rs/canvas 1.0 takes no glyph
 * from another font by itself for a font string naming one family, even with the system fonts
 * loaded; test/unit/system-fonts.test.ts checks it), fitted to its cells: two for a wide
 * character (layout-text.ts `characterColumns`), one otherwise. A code point no font has stays
 * the fax font's missing-glyph box. Each baseline is put on a whole scan line, so every line of
 * text rasterises alike.
 *
 * Bilevel: the anti-aliased grey is thresholded, without dithering (dithering text only adds
 * noise and G4 bytes). Pixels darker than 160 become black: at 98 lines/inch a horizontal stroke
 * is about one scan line high and seldom covers one fully, and the usual mid-grey cut (128)
 * breaks the bowls of letters such as b and s apart.
 */
import { createCanvas, GlobalFonts } from "@napi-rs/canvas";
import { characterColumns, textFrame, textPageGeometry, type TextLayoutOptions, type TextPageLayout } from "../layout-text.ts";
import { fillCharacterInCells, installedFallbackFonts } from "../fonts/fallback-fonts.ts";
import { ensureGlyphs } from "../fonts/system-fonts.ts";

export const FAX_FONT_FILE = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf";
const FONT_FAMILY = "Faxline DejaVu Sans Mono";
const FONT_SIZE_PT = 10;
const POINTS_PER_INCH = 72;
const BLACK_BELOW = 160;

let fontRegistered = false;

function registerFaxFont(): void {
  if (fontRegistered) return;
  if (GlobalFonts.registerFromPath(FAX_FONT_FILE, FONT_FAMILY) === null) {
    throw new Error(`The fax font ${FAX_FONT_FILE} cannot be loaded; install the Debian package fonts-dejavu-core`);
  }
  fontRegistered = true;
}

/**
 * A rasteriser for pages of one paper format and resolution. It reuses one canvas for every
 * page, so a long document does not leave a canvas per page to the garbage collector.
 */
export function createTextPageRasterizer(options: TextLayoutOptions): (page: TextPageLayout) => Uint8Array {
  registerFaxFont();
  const { widthPx, heightPx, xDpi, yDpi } = textPageGeometry(options);
  const frame = textFrame(options.paperFormat);
  const canvas = createCanvas(widthPx, heightPx);
  const ctx = canvas.getContext("2d");
  ctx.scale(1, yDpi / xDpi);
  const fontPx = (FONT_SIZE_PT / POINTS_PER_INCH) * xDpi;
  ctx.font = `${fontPx}px "${FONT_FAMILY}"`;
  ctx.textBaseline = "alphabetic";

  const metrics = ctx.measureText("M");
  const fontHeight = metrics.fontBoundingBoxAscent + metrics.fontBoundingBoxDescent;
  const cellHeight = frame.lineHeight * xDpi;
  // The glyph box is centred in its line cell; the baseline is then snapped to a scan line.
  const baselineInCell = (cellHeight - fontHeight) / 2 + metrics.fontBoundingBoxAscent;
  const left = Math.round(frame.left * xDpi);
  const charWidth = frame.charWidth * xDpi;
  const toScanLines = yDpi / xDpi;

  return (page) => {
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, widthPx, heightPx / toScanLines);
    ctx.fillStyle = "#000";
    for (const line of page.lines) ensureGlyphs(line, [FAX_FONT_FILE, ...installedFallbackFonts()]);
    page.lines.forEach((line, lineIndex) => {
      const baseline = frame.top * xDpi + lineIndex * cellHeight + baselineInCell;
      const y = Math.round(baseline * toScanLines) / toScanLines;
      let column = 0;
      for (const character of line) {
        const cells = characterColumns(character.codePointAt(0)!);
        fillCharacterInCells(ctx, character, left + column * charWidth, y, cells, charWidth, fontPx, FAX_FONT_FILE);
        column += cells;
      }
    });
    const rgba = canvas.data();
    const pixels = new Uint8Array(widthPx * heightPx);
    for (let i = 0, red = 0; i < pixels.length; i++, red += 4) {
      pixels[i] = (rgba[red] ?? 255) < BLACK_BELOW ? 0 : 255;
    }
    return pixels;
  };
}

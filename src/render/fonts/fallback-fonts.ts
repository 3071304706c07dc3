/**
 * Fonts for the characters the fax font (DejaVu Sans Mono) has no glyph for: Han, Kana and
 * Hangul, Hebrew and other scripts. @napi-rs/canvas draws such a character as the fax font's
 * missing-glyph box when the font string names one family (it takes no glyph from another font
 * by itself), so the text rasterisers ask here, per character, for a font that has it and draw
 * that character with it.
 *
 * The candidates, in order: DejaVu Sans (fonts-dejavu-core; the proportional face, with scripts
 * the monospaced one lacks, Hebrew for one), WenQuanYi Micro Hei (fonts-wqy-microhei; CJK: Han,
 * Hiragana, Katakana, Hangul syllables), both installed by scripts/install.sh, and Droid Sans
 * Fallback (fonts-droid-fallback, where installed: Han and Kana). A candidate that is not
 * installed is skipped; a character none of them has stays a box. Each is registered with the canvas the first time a character needs it, and its
 * `cmap` is read once (font-coverage.ts).
 */
import { existsSync } from "node:fs";
import { basename } from "node:path";
import { GlobalFonts, type SKRSContext2D } from "@napi-rs/canvas";
import { FontCoverage } from "./font-coverage.ts";

export const FALLBACK_FONT_FILES: readonly string[] = [
  "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
  "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
  "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
];

interface Candidate {
  file: string;
  family: string;
  coverage: FontCoverage | null;
  registered: boolean;
}

/**
 * Finds, per code point, the first font of a list that has a glyph for it. One finder per list
 * of files; the default one (`fallbackFontFamily`) uses FALLBACK_FONT_FILES.
 */
export class FallbackFonts {
  readonly #candidates: Candidate[];
  readonly #chosen = new Map<number, string | null>();

  constructor(files: readonly string[]) {
    this.#candidates = files.map((file) => ({ file, family: `Faxline fallback ${basename(file).replace(/\.[^.]+$/, "")}`, coverage: null, registered: false }));
  }

  /** The family to draw `codePoint` with, registered with the canvas, or null when no font of the list has it. */
  familyFor(codePoint: number): string | null {
    const known = this.#chosen.get(codePoint);
    if (known !== undefined) return known;
    let family: string | null = null;
    for (const candidate of this.#candidates) {
      if (!this.#covers(candidate, codePoint)) continue;
      if (!candidate.registered) {
        if (GlobalFonts.registerFromPath(candidate.file, candidate.family) === null) {
          // Readable as a font file but refused by the canvas: never ask it again.
          candidate.coverage = FontCoverage.empty();
          continue;
        }
        candidate.registered = true;
      }
      family = candidate.family;
      break;
    }
    this.#chosen.set(codePoint, family);
    return family;
  }

  #covers(candidate: Candidate, codePoint: number): boolean {
    if (candidate.coverage === null) {
      try {
        candidate.coverage = existsSync(candidate.file) ? FontCoverage.ofFile(candidate.file) : FontCoverage.empty();
      } catch {
        candidate.coverage = FontCoverage.empty();
      }
    }
    return candidate.coverage.has(codePoint);
  }
}

let defaultFonts: FallbackFonts | undefined;

/** The family of the first installed fallback font (FALLBACK_FONT_FILES) with a glyph for `codePoint`, or null. */
export function fallbackFontFamily(codePoint: number): string | null {
  defaultFonts ??= new FallbackFonts(FALLBACK_FONT_FILES);
  return defaultFonts.familyFor(codePoint);
}

/**
 * The family to draw `codePoint` with in a text set in the font file `fontFile`: null when that
 * font has the glyph (or no fallback font has it either), else the first fallback's.
 */
export function fallbackFamilyFor(fontFile: string, codePoint: number): string | null {
  return FontCoverage.ofFile(fontFile).has(codePoint) ? null : fallbackFontFamily(codePoint);
}

/**
 * Draws one character of a monospaced text into its `cells` cells of `cellWidth` starting at x:
 * with the context's font (the one of `fontFile`) when that has the glyph, else from a fallback
 * font at `fontPx`, fitted to the cells (skia narrows a wider glyph) and centred when narrower.
 * White space draws nothing. The context's font is as it was afterwards.
 */
export function fillCharacterInCells(ctx: SKRSContext2D, character: string, x: number, y: number, cells: number, cellWidth: number, fontPx: number, fontFile: string): void {
  if (/^\s$/u.test(character)) return;
  const family = fallbackFamilyFor(fontFile, character.codePointAt(0)!);
  if (family === null) {
    ctx.fillText(character, x, y);
    return;
  }
  const font = ctx.font;
  ctx.font = `${fontPx}px "${family}"`;
  const width = Math.min(ctx.measureText(character).width, cells * cellWidth);
  ctx.fillText(character, x + (cells * cellWidth - width) / 2, y, cells * cellWidth);
  ctx.font = font;
}

let installed: string[] | undefined;

/** The fallback font files present on this machine (for ensureGlyphs: what they cover needs no system font). */
export function installedFallbackFonts(): readonly string[] {
  installed ??= FALLBACK_FONT_FILES.filter((file) => existsSync(file));
  return installed;
}

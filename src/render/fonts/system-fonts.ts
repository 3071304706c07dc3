/**
 * The system fonts as fallback for glyphs Faxline's own fonts lack, loaded only when a text needs
 * them.
 *
 * @napi-rs/canvas scans every system font directory when it is first loaded (about 100 ms for
 * 280 font files, a third of a one-page `faxline render`), unless DISABLE_SYSTEM_FONTS_LOAD is
 * set. The `faxline` command sets it (bin/faxline.js), and Faxline draws with fonts it registers
 * by path (DejaVu, and the fallback fonts of fallback-fonts.ts). Where a text holds a code point
 * none of those fonts has, `ensureGlyphs` loads the system fonts first, as the package would have
 * at start, so that whatever the canvas then draws (its missing-glyph box, with @napi-rs/canvas
 * 1.0) is what it would have drawn without the variable. Set by the
 * environment to an empty value, or in any other process (tests, embedders), the package loads
 * them itself and this does nothing.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import { GlobalFonts } from "@napi-rs/canvas";
import { FontCoverage } from "./font-coverage.ts";

let loaded = !process.env.DISABLE_SYSTEM_FONTS_LOAD;

/** Whether the system fonts are loaded (by the package at start, or since by ensureGlyphs). */
export function systemFontsLoaded(): boolean {
  return loaded;
}

/**
 * Loads the system fonts unless every character of `text` (spaces and control characters aside)
 * has a glyph in one of `fontFiles`, the fonts the text is drawn with.
 */
export function ensureGlyphs(text: string, fontFiles: readonly string[]): void {
  if (loaded) return;
  let fonts: FontCoverage[];
  try {
    fonts = fontFiles.map((file) => FontCoverage.ofFile(file));
  } catch {
    // A font whose cmap this cannot read: do what the package would have done at start.
    loadSystemFonts();
    return;
  }
  for (const character of text) {
    const codePoint = character.codePointAt(0)!;
    if (codePoint <= 0x20 || (codePoint >= 0x7f && codePoint <= 0xa0)) continue;
    if (!fonts.some((font) => font.has(codePoint))) {
      loadSystemFonts();
      return;
    }
  }
}

/**
 * What the package does at load when DISABLE_SYSTEM_FONTS_LOAD is not set, on Linux (the
 * directory it means as usr/local/share/fonts is relative there, resolved against the working
 * directory; here it is the absolute one).
 */
function loadSystemFonts(): void {
  loaded = true;
  // Not in the package's type declarations, but what its index.js calls at load.
  (GlobalFonts as unknown as { loadSystemFonts(): void }).loadSystemFonts();
  GlobalFonts.loadFontsFromDir("/usr/local/share/fonts");
  GlobalFonts.loadFontsFromDir(join(homedir(), ".fonts"));
}

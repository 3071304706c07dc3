/**
 * The first pass's work on one document page (render-fax-job.ts): a page that nothing is drawn
 * onto later is made bilevel and G4-encoded at once (its final encoding, with the counts its
 * preflight needs); a page that gets a header line or an overlay is made bilevel and kept packed
 * (1 bit per pixel) for the second pass. With `blankPages`, a page that is blank
 * (preflight/blank-page.ts) comes back as `blank`, without its pixels: it is left out of the fax.
 * The decision is made on the page's bilevel pixels before anything is drawn onto them. Pure and
 * synchronous, so that page helper threads (page-helpers/) do the same work as the render thread.
 */
import { encodeFaxPage, plainThreshold, thresholdInPlace } from "./fax-image/encode-fax-page.ts";
import type { PageRunCounts } from "./fax-image/encode-g4-page.ts";
import { packBilevel, type PackedBilevel } from "./fax-image/packed-bilevel.ts";
import type { G4Page } from "./fax-image/write-tiff-f.ts";
import type { GreyPage } from "./pages/grey-page.ts";
import type { ToneMode } from "./fax-image/tone-mode.ts";
import { isBlankPage, type BlankPageRule } from "./preflight/blank-page.ts";

export interface PreparePageMode {
  /** A header or overlay is drawn onto the pages in the second pass. */
  drawsLater: boolean;
  /** Scan lines of the header band, left out of the preflight's black share. */
  bandRows: number;
  /** renderingOptions.toneMode. */
  toneMode: ToneMode;
  /** Blank pages are left out (jobs.suppress_blank_pages), by this rule; null: every page is kept. */
  blankPages: BlankPageRule | null;
}

export type PreparedPage =
  | { kind: "final"; g4: G4Page; counts: PageRunCounts }
  | { kind: "packed"; packed: PackedBilevel }
  /** A blank page, to be left out (only with `blankPages`). */
  | { kind: "blank" };

/** Prepares `grey`, whose pixels it may overwrite (a thresholded page is made in place). */
export function preparePage(grey: GreyPage, mode: PreparePageMode): PreparedPage {
  if (mode.drawsLater) {
    // Encoded in the second pass, with its header and overlay. A text page needs no trial
    // encoding here; a photo's does, to choose between dither, halftone and threshold.
    const asText = grey.tone === "text" ? mode.toneMode === "AUTO" || mode.toneMode === "TEXT" : mode.toneMode === "TEXT";
    const pixels = asText
      ? thresholdInPlace(grey)
      : mode.toneMode === "THRESHOLD"
        ? plainThreshold(grey, true)
        : encodeFaxPage(grey, 0, { overwrite: true, toneMode: mode.toneMode }).pixels;
    if (mode.blankPages !== null && isBlankPage(pixels, grey, mode.blankPages)) return { kind: "blank" };
    return { kind: "packed", packed: packBilevel(pixels, grey.width, grey.height) };
  }
  const { g4, counts, pixels } = encodeFaxPage(grey, mode.bandRows, { overwrite: true, toneMode: mode.toneMode });
  if (mode.blankPages !== null && isBlankPage(pixels, grey, mode.blankPages)) return { kind: "blank" };
  return { kind: "final", g4, counts };
}

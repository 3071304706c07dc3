/**
 * Overlays: a one-page black-and-white template (a letterhead, a "COPY" stamp) drawn onto pages
 * of a fax, chosen per job by renderingOptions.overlay { name, mode }.
 *
 * Which pages get it (the contract's modes, §Overlay):
 *   ALL_PAGES                    every page
 *   NO_OVERLAY                   none
 *   FIRST_PAGE                   the first page
 *   LAST_PAGE                    the last page
 *   ALL_BUT_FIRST_PAGE           every page but the first
 *   ALL_BUT_LAST_PAGE            every page but the last
 *   ALL_BUT_FIRST_AND_LAST_PAGE  every page but the first and the last (none of 1 or 2 pages)
 *   FIRST_FILE                   every page of the first document
 * A cover page counts as the first page (FIRST_PAGE puts the overlay on the cover page, not on
 * the first document page). In FIRST_FILE the cover page belongs to no file and gets no overlay;
 * "the first document" is the first one that has pages in the fax (documents are rendered in
 * order, so normally documentIndex 0; a document that gave no pages does not pass the overlay on).
 */
import type { GreyPage } from "../pages/grey-page.ts";

export type OverlayMode =
  | "ALL_PAGES"
  | "NO_OVERLAY"
  | "FIRST_PAGE"
  | "LAST_PAGE"
  | "ALL_BUT_FIRST_PAGE"
  | "ALL_BUT_LAST_PAGE"
  | "ALL_BUT_FIRST_AND_LAST_PAGE"
  | "FIRST_FILE";

export const OVERLAY_MODES: readonly OverlayMode[] = [
  "ALL_PAGES",
  "NO_OVERLAY",
  "FIRST_PAGE",
  "LAST_PAGE",
  "ALL_BUT_FIRST_PAGE",
  "ALL_BUT_LAST_PAGE",
  "ALL_BUT_FIRST_AND_LAST_PAGE",
  "FIRST_FILE",
];

/**
 * For each page of a fax, in order, whether it gets the overlay. `documentIndex` is the index of
 * the document a page comes from, null for the cover page.
 */
export function overlaidPages(mode: OverlayMode, pages: ReadonlyArray<{ documentIndex: number | null }>): boolean[] {
  const last = pages.length - 1;
  switch (mode) {
    case "ALL_PAGES":
      return pages.map(() => true);
    case "NO_OVERLAY":
      return pages.map(() => false);
    case "FIRST_PAGE":
      return pages.map((_, i) => i === 0);
    case "LAST_PAGE":
      return pages.map((_, i) => i === last);
    case "ALL_BUT_FIRST_PAGE":
      return pages.map((_, i) => i !== 0);
    case "ALL_BUT_LAST_PAGE":
      return pages.map((_, i) => i !== last);
    case "ALL_BUT_FIRST_AND_LAST_PAGE":
      return pages.map((_, i) => i !== 0 && i !== last);
    case "FIRST_FILE": {
      const first = pages.find((page) => page.documentIndex !== null)?.documentIndex ?? null;
      return pages.map((page) => first !== null && page.documentIndex === first);
    }
    default: {
      const unknown: never = mode;
      throw new RangeError(`unknown overlay mode ${String(unknown)}`);
    }
  }
}

/**
 * Draws `overlay` onto `page` in place, darkening: every pixel becomes the darker of the two
 * (white overlay areas leave the page as it is). The overlay must have been rendered to the
 * page's geometry; pages of another size throw a RangeError.
 */
export function applyOverlay(page: GreyPage, overlay: GreyPage): void {
  if (page.width !== overlay.width || page.height !== overlay.height || overlay.data.length !== page.data.length) {
    throw new RangeError(`the overlay is ${overlay.width}x${overlay.height} pixels, the page ${page.width}x${page.height}; both must be of the job's page geometry`);
  }
  const target = page.data;
  const source = overlay.data;
  for (let i = 0; i < target.length; i++) {
    const o = source[i] as number;
    if (o < (target[i] as number)) target[i] = o;
  }
}

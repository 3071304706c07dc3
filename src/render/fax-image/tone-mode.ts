/**
 * How a job's pages become black and white (renderingOptions.toneMode, a Faxline extension;
 * encode-fax-page.ts does it):
 *  - AUTO (the default): each page by its tone; text thresholded (flat shading screened lighter),
 *    the pictures of photo pages screened;
 *  - TEXT: every page as a text page (for documents whose grey is all shading or anti-aliasing);
 *  - PHOTO: every page screened whole with the clustered-dot halftone (scans of photographs, pencil
 *    drawings);
 *  - THRESHOLD: a plain threshold at BLACK_BELOW, nothing screened (the smallest pages; grey boxes
 *    turn black or vanish).
 */
export const TONE_MODES = ["AUTO", "TEXT", "PHOTO", "THRESHOLD"] as const;
export type ToneMode = (typeof TONE_MODES)[number];

/** A stored tone mode; null (none set) and anything unknown are AUTO. */
export function toneModeOf(stored: string | null): ToneMode {
  return (TONE_MODES as readonly string[]).includes(stored ?? "") ? (stored as ToneMode) : "AUTO";
}

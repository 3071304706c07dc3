/**
 * The common currency of the render stage: a fax page as grey pixels, and the page geometry
 * every input kind renders into.
 *
 * Every input kind (text, PDF, TIFF, images, and office, HTML and PostScript documents through
 * their conversion to PDF) turns a document into `GreyPage`s of exactly the job's geometry:
 * 1728 pixels per scan line at 204 dpi, `heightPx` scan lines at 196 (HIGH) or 98 (LOW) lines
 * per inch. Content is already placed on the page (scaled to fit, landscape pages rotated); the
 * band of `headerBandPx` scan lines at the top is left white for the header line.
 * The fax image stage then draws header lines and overlays onto these pages, makes them bilevel
 * (bilevel.ts: threshold, or dithering for photos) and encodes them as CCITT G4.
 *
 * A document that cannot be rendered throws `DocumentRenderError` with the failure reason and
 * a message a person can act on. Anything else thrown is an internal error.
 */
import type { RenderFailureCode } from "../render-failure.ts";

export type PaperFormat = "A4" | "LETTER";
export type Resolution = "HIGH" | "LOW";

export const FAX_WIDTH_PX = 1728;
export const FAX_X_DPI = 204;
const Y_DPI: Readonly<Record<Resolution, 196 | 98>> = { HIGH: 196, LOW: 98 };
const MM_PER_INCH = 25.4;
/** Paper sizes in inches. */
export const PAPER_INCHES: Readonly<Record<PaperFormat, { width: number; height: number }>> = {
  A4: { width: 210 / MM_PER_INCH, height: 297 / MM_PER_INCH },
  LETTER: { width: 8.5, height: 11 },
};
/** Band at the top of every page kept free for the header line (the same as text pages keep). */
export const HEADER_BAND_IN = 0.25;
/** Margin around content that is scaled onto a page (PDF pages and images), in inches. */
export const CONTENT_MARGIN_IN = 0.12;

export interface PageGeometry {
  paperFormat: PaperFormat;
  resolution: Resolution;
  widthPx: 1728;
  /** Scan lines per page: round(paper height in inches x yDpi). A4: 2292 / 1146, LETTER: 2156 / 1078. */
  heightPx: number;
  xDpi: 204;
  yDpi: 196 | 98;
  /** Scan lines at the top kept white for the header line: round(HEADER_BAND_IN x yDpi). */
  headerBandPx: number;
}

export function pageGeometry(paperFormat: PaperFormat, resolution: Resolution): PageGeometry {
  const yDpi = Y_DPI[resolution];
  return {
    paperFormat,
    resolution,
    widthPx: FAX_WIDTH_PX,
    heightPx: Math.round(PAPER_INCHES[paperFormat].height * yDpi),
    xDpi: FAX_X_DPI,
    yDpi,
    headerBandPx: Math.round(HEADER_BAND_IN * yDpi),
  };
}

/**
 * Where scaled content (a PDF page, an image) goes on a page, in pixels: below the header band,
 * inside CONTENT_MARGIN_IN on every side.
 */
export function contentBox(geometry: PageGeometry): { left: number; top: number; width: number; height: number } {
  const marginX = Math.round(CONTENT_MARGIN_IN * geometry.xDpi);
  const marginY = Math.round(CONTENT_MARGIN_IN * geometry.yDpi);
  const top = geometry.headerBandPx + marginY;
  return { left: marginX, top, width: geometry.widthPx - 2 * marginX, height: geometry.heightPx - top - marginY };
}

/**
 * How a page's grey is best made bilevel: `text` pages (and line art) are thresholded; `photo`
 * pages (scans and pictures with continuous tone) may be dithered where that keeps the page
 * compact (bilevel.ts decides).
 */
export type PageTone = "text" | "photo";

export interface GreyPage {
  width: number;
  height: number;
  /** One byte per pixel, row by row, 0 black to 255 white; length width x height. */
  data: Uint8Array;
  tone: PageTone;
}

/** A blank (white) page of the geometry. */
export function whitePage(geometry: PageGeometry, tone: PageTone = "text"): GreyPage {
  return { width: geometry.widthPx, height: geometry.heightPx, data: new Uint8Array(geometry.widthPx * geometry.heightPx).fill(255), tone };
}

/** A document to render: its name (the type comes from the extension), charset for text, bytes. */
export interface DocumentInput {
  name: string;
  charset?: string | null;
  bytes: Uint8Array;
}

/** Limits that guard rendering against huge and hostile documents (config render.*). */
export interface RenderLimits {
  /** Most output pages of a whole job (jobs.maxPages). */
  maxPages: number;
  /** Most pixels of one decoded source image or rendered source page before scaling (decompression bombs). */
  maxSourcePixels: number;
  /** Time limit of one converter subprocess (LibreOffice, Ghostscript), ms. */
  converterTimeoutMs: number;
}

/** A document that cannot be rendered, with the failure reason and a message a person can act on. */
export class DocumentRenderError extends Error {
  constructor(
    readonly reasonCode: RenderFailureCode,
    message: string,
  ) {
    super(message);
    this.name = "DocumentRenderError";
  }
}

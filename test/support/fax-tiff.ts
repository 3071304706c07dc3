/**
 * TIFF-F test images made with sharp, as the renderer stores them: 1728 px wide, 204 dpi across,
 * bilevel CCITT G4, one page per IFD.
 */
import sharp from "sharp";

/** Pixels across a fax page. */
export const FAX_WIDTH = 1728;

export interface FaxTiffOptions {
  /** Rows per page; by default an A4 page's height at `yDpi` (1146 at 98, 2292 at 196). */
  height?: number;
  /** Lines per inch down the page, 98 (normal) by default. */
  yDpi?: number;
  /** The unit the TIFF states its resolution in; the resolution itself is the same either way. */
  resolutionUnit?: "inch" | "cm";
}

/**
 * The black band on page `page` (0-based) of a `faxTiff` image: `rows` full-width black rows
 * starting at row `top` of that page, a different row on every page so that pages can be told
 * apart. Everything else is white.
 */
export function faxTiffBand(page: number): { top: number; rows: number } {
  return { top: 16 * (page + 1), rows: 8 };
}

/** A TIFF-F image of `pages` pages, each white except for its `faxTiffBand`. */
export async function faxTiff(pages: number, options: FaxTiffOptions = {}): Promise<Buffer> {
  const yDpi = options.yDpi ?? 98;
  const height = options.height ?? Math.round((297 / 25.4) * yDpi);
  const raw = Buffer.alloc(FAX_WIDTH * height * pages, 255);
  for (let page = 0; page < pages; page++) {
    const band = faxTiffBand(page);
    if (band.top + band.rows > height) throw new Error(`faxTiff: page ${page + 1}'s band does not fit in ${height} rows`);
    const top = page * height + band.top;
    raw.fill(0, top * FAX_WIDTH, (top + band.rows) * FAX_WIDTH);
  }
  return sharp(raw, { raw: { width: FAX_WIDTH, height: height * pages, channels: 1, pageHeight: height } })
    .toColourspace("b-w")
    .tiff({ compression: "ccittfax4", bitdepth: 1, miniswhite: true, xres: 204 / 25.4, yres: yDpi / 25.4, resolutionUnit: options.resolutionUnit ?? "inch" })
    .toBuffer();
}

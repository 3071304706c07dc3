/**
 * One page of a fax image (TIFF-F) as a PNG for people to look at: decoded from its G4 strips by
 * sharp (libtiff) and stretched to square pixels, so that a LOW page (204 x 98 dpi) does not look
 * squashed. The PNG has a two-colour palette, which keeps it small.
 */
import sharp from "sharp";
import { readTiffPages } from "./tiff-structure.ts";

/** The PNG of page `pageIndex` (0-based); throws RangeError when the image has no such page. */
export async function faxPagePng(tiff: Uint8Array, pageIndex: number): Promise<Buffer> {
  const page = readTiffPages(tiff)[pageIndex];
  if (page === undefined) throw new RangeError(`the fax image has no page ${pageIndex + 1}`);
  // TIFF-F pages carry both resolutions; sharp's metadata would give only the x resolution.
  const xDpi = page.xResolution ?? 204;
  const yDpi = page.yResolution ?? xDpi;
  return sharp(tiff, { page: pageIndex })
    .resize({ width: page.width, height: Math.round((page.height * xDpi) / yDpi), fit: "fill", kernel: "nearest" })
    .toColourspace("b-w")
    .png({ palette: true, colours: 2, compressionLevel: 9 })
    .toBuffer();
}

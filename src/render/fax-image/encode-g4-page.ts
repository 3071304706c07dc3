/**
 * CCITT T.6 (Group 4) encoding of one bilevel page with sharp (libvips + libtiff).
 *
 * sharp writes a one-page TIFF; only its compressed strips are kept (read with tiff-structure.ts)
 * and assembled into the fax file by write-tiff-f.ts, which writes the resolution and page tags
 * itself. `toColourspace("b-w")` is needed: without it sharp turns one-channel raw input into
 * sRGB and the G4 encoder refuses it ("Bits/sample must be 1").
 */
import sharp from "sharp";
import { readTiffPages } from "./tiff-structure.ts";
import type { G4Page } from "./write-tiff-f.ts";

const CCITT_T6 = 4;

/** Encodes `pixels` (one byte per pixel, 0 black, 255 white, `width` x `height`). */
export async function encodeG4Page(pixels: Uint8Array, size: { width: number; height: number }): Promise<G4Page> {
  const tiff = await sharp(pixels, { raw: { width: size.width, height: size.height, channels: 1 } })
    .toColourspace("b-w")
    .tiff({ compression: "ccittfax4", bitdepth: 1, miniswhite: true })
    .toBuffer();
  const pages = readTiffPages(tiff);
  const page = pages[0];
  if (pages.length !== 1 || page === undefined || page.compression !== CCITT_T6 || page.width !== size.width || page.height !== size.height) {
    throw new Error(`sharp did not write one ${size.width}x${size.height} G4 page (got ${JSON.stringify(pages.map(({ width, height, compression }) => ({ width, height, compression })))})`);
  }
  return {
    width: page.width,
    height: page.height,
    rowsPerStrip: page.rowsPerStrip,
    strips: page.stripOffsets.map((offset, i) => tiff.subarray(offset, offset + (page.stripByteCounts[i] ?? 0))),
  };
}

/**
 * TIFF-F writer: assembles one multi-page fax TIFF (TIFF Class F as profiled by RFC 2306,
 * CCITT T.6 / Group 4) from pages that are already G4-encoded, copying their strips unchanged.
 *
 * Why not take sharp's own multi-page file: sharp writes PageNumber and NewSubfileType only when
 * it has more than one page, so a one-page fax would lack the page tags TIFF-F requires; and
 * encoding many pages in one sharp call needs every page's 8-bit pixels in memory at once
 * (4 MB per A4 page at 196 lines/inch). Encoding page by page and assembling here keeps one
 * page in memory and gives every page the same tags.
 *
 * File layout (little-endian, "II"): the 8-byte header, then for each page its strip data, the
 * out-of-line tag values (strip tables when there is more than one strip, the two resolution
 * rationals) and its IFD, which points to the next page's IFD. Every page IFD carries, in tag
 * order: NewSubfileType 2 (a page of a multi-page document), ImageWidth, ImageLength,
 * BitsPerSample 1, Compression 4 (T.6), PhotometricInterpretation 0 (min-is-white), FillOrder 1,
 * StripOffsets, SamplesPerPixel 1, RowsPerStrip, StripByteCounts, XResolution, YResolution,
 * T6Options 0, ResolutionUnit 2 (inch), PageNumber (0-based page, page count).
 */

/** One G4-encoded page: its strips in order, each `rowsPerStrip` rows (the last may be fewer). */
export interface G4Page {
  width: number;
  height: number;
  rowsPerStrip: number;
  strips: readonly Uint8Array[];
}

const SHORT = 3;
const LONG = 4;
const RATIONAL = 5;
const ENTRIES_PER_IFD = 16;
const IFD_BYTES = 2 + ENTRIES_PER_IFD * 12 + 4;
const HEADER_BYTES = 8;
/** PageNumber holds the page count in a SHORT. */
const MAX_PAGES = 0xffff;
/** Classic TIFF offsets are 32-bit. */
const MAX_FILE_BYTES = 2 ** 32 - 1;

/** Writes the pages as one TIFF-F file at `xDpi` x `yDpi` pixels per inch. */
export function writeTiffF(pages: readonly G4Page[], resolution: { xDpi: number; yDpi: number }): Buffer {
  if (pages.length === 0) throw new RangeError("a TIFF-F file needs at least one page");
  if (pages.length > MAX_PAGES) throw new RangeError(`${pages.length} pages do not fit the PageNumber tag (at most ${MAX_PAGES})`);
  for (const [i, page] of pages.entries()) {
    if (page.strips.length === 0 || page.width <= 0 || page.height <= 0 || page.rowsPerStrip <= 0) {
      throw new RangeError(`page ${i} has no image data (${page.width}x${page.height}, ${page.strips.length} strips)`);
    }
  }

  const blockBytes = pages.map((page) => {
    const data = page.strips.reduce((sum, strip) => sum + strip.byteLength, 0);
    const stripTables = page.strips.length > 1 ? 2 * 4 * page.strips.length : 0;
    return data + (data % 2) + stripTables + 2 * 8 + IFD_BYTES;
  });
  const total = blockBytes.reduce((sum, n) => sum + n, HEADER_BYTES);
  if (total > MAX_FILE_BYTES) throw new RangeError(`${total} bytes is too large for a classic TIFF file`);

  const out = Buffer.alloc(total);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  out.write("II", 0, "latin1");
  view.setUint16(2, 42, true);

  let at = HEADER_BYTES;
  let previousNextIfdField = 4;
  for (const [pageIndex, page] of pages.entries()) {
    const stripOffsets: number[] = [];
    for (const strip of page.strips) {
      stripOffsets.push(at);
      out.set(strip, at);
      at += strip.byteLength;
    }
    at += at % 2;

    const writeLongs = (values: readonly number[]): number => {
      const start = at;
      for (const value of values) {
        view.setUint32(at, value, true);
        at += 4;
      }
      return start;
    };
    const stripByteCounts = page.strips.map((strip) => strip.byteLength);
    const oneStrip = page.strips.length === 1;
    const stripOffsetsField = oneStrip ? stripOffsets[0]! : writeLongs(stripOffsets);
    const stripByteCountsField = oneStrip ? stripByteCounts[0]! : writeLongs(stripByteCounts);
    const xResolutionAt = writeLongs([resolution.xDpi, 1]);
    const yResolutionAt = writeLongs([resolution.yDpi, 1]);

    const ifd = at;
    view.setUint32(previousNextIfdField, ifd, true);
    view.setUint16(at, ENTRIES_PER_IFD, true);
    at += 2;
    const entry = (tag: number, type: number, count: number, value: number): void => {
      view.setUint16(at, tag, true);
      view.setUint16(at + 2, type, true);
      view.setUint32(at + 4, count, true);
      // A single SHORT sits in the first two bytes of the value field (TIFF 6.0, section 2).
      if (type === SHORT && count === 1) view.setUint16(at + 8, value, true);
      else view.setUint32(at + 8, value, true);
      at += 12;
    };
    entry(254, LONG, 1, 2);
    entry(256, LONG, 1, page.width);
    entry(257, LONG, 1, page.height);
    entry(258, SHORT, 1, 1);
    entry(259, SHORT, 1, 4);
    entry(262, SHORT, 1, 0);
    entry(266, SHORT, 1, 1);
    entry(273, LONG, page.strips.length, stripOffsetsField);
    entry(277, SHORT, 1, 1);
    entry(278, LONG, 1, page.rowsPerStrip);
    entry(279, LONG, page.strips.length, stripByteCountsField);
    entry(282, RATIONAL, 1, xResolutionAt);
    entry(283, RATIONAL, 1, yResolutionAt);
    entry(293, LONG, 1, 0);
    entry(296, SHORT, 1, 2);
    // PageNumber: two SHORTs, the 0-based page and the page count, both inside the value field.
    view.setUint16(at, 297, true);
    view.setUint16(at + 2, SHORT, true);
    view.setUint32(at + 4, 2, true);
    view.setUint16(at + 8, pageIndex, true);
    view.setUint16(at + 10, pages.length, true);
    at += 12;
    previousNextIfdField = at;
    at += 4; // next IFD offset: filled in by the next page, 0 after the last
  }
  return out;
}

/**
 * TIFF structure reader: lists the pages (image file directories) of a classic TIFF file with
 * the fields a fax image is judged by, without decoding any pixels. Pure: a buffer in, data out.
 *
 * It reads both byte orders (`II` and `MM`), follows the IFD chain, and takes only the tags
 * below; every other tag is skipped. BigTIFF (version 43) is refused. A malformed file (an
 * offset outside the buffer, an IFD chain that loops, a missing strip tag) throws a
 * `TiffStructureError` naming what is wrong and where.
 *
 * `encodedBytes` is the sum of the page's StripByteCounts: the size of its compressed image
 * data, i.e. what a fax line transmits for that page (TIFF-F stores T.6 data as it is sent).
 */

export interface TiffPage {
  /** 0-based position in the IFD chain. */
  index: number;
  width: number;
  height: number;
  /** Pixels per ResolutionUnit; null when the tag is absent. */
  xResolution: number | null;
  yResolution: number | null;
  /** 1 none, 2 inch (the default), 3 centimetre. */
  resolutionUnit: number;
  /** 1 none (the default), 3 CCITT T.4 (G3), 4 CCITT T.6 (G4), ... */
  compression: number;
  /** 0 min-is-white, 1 min-is-black; null when absent. */
  photometric: number | null;
  bitsPerSample: number;
  /** NewSubfileType; 2 marks one page of a multi-page document. */
  newSubfileType: number;
  /** PageNumber tag: 0-based page number and total page count; null when absent. */
  pageNumber: { page: number; of: number } | null;
  /** RowsPerStrip; the image height when absent (one strip). */
  rowsPerStrip: number;
  stripOffsets: number[];
  stripByteCounts: number[];
  /** Sum of `stripByteCounts`. */
  encodedBytes: number;
}

export class TiffStructureError extends Error {
  constructor(message: string) {
    super(`Not a readable TIFF file: ${message}`);
    this.name = "TiffStructureError";
  }
}

const TAG = {
  NewSubfileType: 254,
  ImageWidth: 256,
  ImageLength: 257,
  BitsPerSample: 258,
  Compression: 259,
  PhotometricInterpretation: 262,
  StripOffsets: 273,
  RowsPerStrip: 278,
  StripByteCounts: 279,
  XResolution: 282,
  YResolution: 283,
  ResolutionUnit: 296,
  PageNumber: 297,
} as const;
const READ_TAGS: ReadonlySet<number> = new Set(Object.values(TAG));

/** Byte size of one value of each TIFF 6.0 field type that the reader interprets. */
const TYPE_SIZE: Readonly<Record<number, number>> = { 1: 1, 3: 2, 4: 4, 5: 8 };
const TYPE_BYTE = 1;
const TYPE_SHORT = 3;
const TYPE_LONG = 4;
const TYPE_RATIONAL = 5;

/** More IFDs than any fax could have pages: beyond this the chain is taken to be corrupt. */
const MAX_PAGES = 100_000;

/** Reads the page list of a TIFF file; see the module comment. */
export function readTiffPages(tiff: Uint8Array): TiffPage[] {
  const view = new DataView(tiff.buffer, tiff.byteOffset, tiff.byteLength);
  if (tiff.byteLength < 8) throw new TiffStructureError(`${tiff.byteLength} bytes is shorter than a TIFF header`);
  const order = String.fromCharCode(tiff[0] ?? 0, tiff[1] ?? 0);
  if (order !== "II" && order !== "MM") throw new TiffStructureError(`byte order mark ${JSON.stringify(order)} is neither "II" nor "MM"`);
  const little = order === "II";
  const version = view.getUint16(2, little);
  if (version === 43) throw new TiffStructureError("BigTIFF (version 43) is not supported");
  if (version !== 42) throw new TiffStructureError(`version ${version} is not 42`);

  const u16 = (at: number): number => {
    if (at + 2 > tiff.byteLength) throw new TiffStructureError(`offset ${at} lies outside the ${tiff.byteLength}-byte file`);
    return view.getUint16(at, little);
  };
  const u32 = (at: number): number => {
    if (at + 4 > tiff.byteLength) throw new TiffStructureError(`offset ${at} lies outside the ${tiff.byteLength}-byte file`);
    return view.getUint32(at, little);
  };

  /** The numeric values of one IFD entry (a RATIONAL becomes numerator / denominator). */
  const entryValues = (entryAt: number, tag: number): number[] => {
    const type = u16(entryAt + 2);
    const count = u32(entryAt + 4);
    const size = TYPE_SIZE[type];
    if (size === undefined) throw new TiffStructureError(`tag ${tag} at offset ${entryAt} has field type ${type}, not a number type`);
    const total = size * count;
    const at = total <= 4 ? entryAt + 8 : u32(entryAt + 8);
    if (at + total > tiff.byteLength) throw new TiffStructureError(`the values of tag ${tag} run past the end of the file`);
    const values: number[] = [];
    for (let i = 0; i < count; i++) {
      const p = at + i * size;
      if (type === TYPE_BYTE) values.push(tiff[p] ?? 0);
      else if (type === TYPE_SHORT) values.push(u16(p));
      else if (type === TYPE_LONG) values.push(u32(p));
      else if (type === TYPE_RATIONAL) {
        const denominator = u32(p + 4);
        values.push(denominator === 0 ? 0 : u32(p) / denominator);
      }
    }
    return values;
  };

  const pages: TiffPage[] = [];
  const seen = new Set<number>();
  for (let ifd = u32(4); ifd !== 0; ) {
    if (seen.has(ifd)) throw new TiffStructureError(`the IFD chain loops back to offset ${ifd}`);
    if (pages.length === MAX_PAGES) throw new TiffStructureError(`more than ${MAX_PAGES} IFDs`);
    seen.add(ifd);
    const count = u16(ifd);
    const tags = new Map<number, number[]>();
    for (let i = 0; i < count; i++) {
      const entryAt = ifd + 2 + i * 12;
      const tag = u16(entryAt);
      if (READ_TAGS.has(tag)) tags.set(tag, entryValues(entryAt, tag));
    }
    const page = pageFromTags(pages.length, ifd, tags);
    page.stripOffsets.forEach((offset, i) => {
      if (offset + (page.stripByteCounts[i] ?? 0) > tiff.byteLength) {
        throw new TiffStructureError(`strip ${i} of IFD ${page.index} runs past the end of the file`);
      }
    });
    pages.push(page);
    ifd = u32(ifd + 2 + count * 12);
  }
  if (pages.length === 0) throw new TiffStructureError("the file has no image directory");
  return pages;
}

function pageFromTags(index: number, ifdOffset: number, tags: ReadonlyMap<number, number[]>): TiffPage {
  const where = `in IFD ${index} at offset ${ifdOffset}`;
  const first = (tag: number): number | null => tags.get(tag)?.[0] ?? null;
  const required = (tag: number, name: string): number => {
    const value = first(tag);
    if (value === null) throw new TiffStructureError(`${name} (tag ${tag}) is missing ${where}`);
    return value;
  };
  const height = required(TAG.ImageLength, "ImageLength");
  const stripOffsets = tags.get(TAG.StripOffsets);
  const stripByteCounts = tags.get(TAG.StripByteCounts);
  if (stripOffsets === undefined || stripByteCounts === undefined) {
    throw new TiffStructureError(`StripOffsets or StripByteCounts is missing ${where} (tiled images are not read)`);
  }
  if (stripOffsets.length !== stripByteCounts.length) {
    throw new TiffStructureError(`${stripOffsets.length} StripOffsets but ${stripByteCounts.length} StripByteCounts ${where}`);
  }
  const pageNumber = tags.get(TAG.PageNumber);
  return {
    index,
    width: required(TAG.ImageWidth, "ImageWidth"),
    height,
    xResolution: first(TAG.XResolution),
    yResolution: first(TAG.YResolution),
    resolutionUnit: first(TAG.ResolutionUnit) ?? 2,
    compression: first(TAG.Compression) ?? 1,
    photometric: first(TAG.PhotometricInterpretation),
    bitsPerSample: first(TAG.BitsPerSample) ?? 1,
    newSubfileType: first(TAG.NewSubfileType) ?? 0,
    pageNumber: pageNumber !== undefined && pageNumber.length >= 2 ? { page: pageNumber[0]!, of: pageNumber[1]! } : null,
    rowsPerStrip: first(TAG.RowsPerStrip) ?? height,
    stripOffsets,
    stripByteCounts,
    encodedBytes: stripByteCounts.reduce((sum, n) => sum + n, 0),
  };
}

/**
 * Converts a job's fax image (TIFF-F: CCITT G4, one IFD per page) into a PDF for status mails.
 *
 * Each TIFF page becomes one PDF page sized by the page's resolution, so that it prints at true
 * size: 1728 px at 204 dpi is 8.47 in (215 mm) wide, 2292 lines at 196 lines/inch are 11.69 in
 * (A4) tall. Fax resolutions are not square (204 x 196 or 204 x 98), and sharp exposes only the
 * x resolution, so the resolutions are read from each page's IFD here. The image stays bilevel:
 * 1 bit per pixel, Flate-compressed; measured on text pages, 0.3 to 1.5 times the size of the
 * G4 data. (Passing the G4 data through as a CCITTFaxDecode stream would save the decoding, but
 * sharp writes G4 in strips of 256 rows, each coded on its own, so each strip would need an image
 * of its own; decoding keeps this simple.)
 */
import { deflateSync } from "node:zlib";
import { PDFDocument, concatTransformationMatrix, drawObject, popGraphicsState, pushGraphicsState } from "pdf-lib";
import sharp from "sharp";

const POINTS_PER_INCH = 72;
/** Used when a page does not state its resolution: fax fine mode (T.4 "fine", 204 x 196 dpi). */
const FALLBACK_DPI = { x: 204, y: 196 } as const;

export async function faxImageToPdf(tiff: Buffer): Promise<Buffer> {
  const resolutions = readTiffPageResolutions(tiff);
  const pdf = await PDFDocument.create();
  pdf.setCreator("Faxline");
  pdf.setProducer("Faxline");
  for (const [index, dpi] of resolutions.entries()) {
    const { data, info } = await sharp(tiff, { page: index })
      .removeAlpha()
      .toColourspace("b-w")
      .raw()
      .toBuffer({ resolveWithObject: true });
    const image = pdf.context.register(
      pdf.context.stream(deflateSync(packBilevelRows(data, info.width, info.height, info.channels)), {
        Type: "XObject",
        Subtype: "Image",
        Width: info.width,
        Height: info.height,
        ColorSpace: "DeviceGray",
        BitsPerComponent: 1,
        Filter: "FlateDecode",
      }),
    );
    const width = (info.width / dpi.x) * POINTS_PER_INCH;
    const height = (info.height / dpi.y) * POINTS_PER_INCH;
    const page = pdf.addPage([width, height]);
    const name = page.node.newXObject("FaxPage", image);
    page.pushOperators(pushGraphicsState(), concatTransformationMatrix(width, 0, 0, height, 0, 0), drawObject(name), popGraphicsState());
  }
  return Buffer.from(await pdf.save());
}

/** Packs 8-bit grey pixels into rows of 1-bit DeviceGray samples (1 = white), each row byte-aligned. */
function packBilevelRows(grey: Buffer, width: number, height: number, channels: number): Buffer {
  const rowBytes = Math.ceil(width / 8);
  const bits = Buffer.alloc(rowBytes * height, 0xff);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (grey[(y * width + x) * channels]! < 128) bits[y * rowBytes + (x >> 3)]! &= ~(0x80 >> (x & 7));
    }
  }
  return bits;
}

const TAG_X_RESOLUTION = 282;
const TAG_Y_RESOLUTION = 283;
const TAG_RESOLUTION_UNIT = 296;
const UNIT_INCH = 2;
const UNIT_CENTIMETRE = 3;

/** The resolution of each page, in pixels per inch, walking the TIFF's chain of IFDs. */
function readTiffPageResolutions(tiff: Buffer): { x: number; y: number }[] {
  const invalid = (why: string): never => {
    throw new Error(`The fax image is not a readable TIFF: ${why}.`);
  };
  if (tiff.length < 8) invalid("it is shorter than a TIFF header");
  const byteOrder = tiff.toString("latin1", 0, 2);
  if (byteOrder !== "II" && byteOrder !== "MM") invalid("it does not start with II or MM");
  const little = byteOrder === "II";
  const u16 = (at: number) => {
    if (at + 2 > tiff.length) invalid(`offset ${at} lies beyond the end of the file`);
    return little ? tiff.readUInt16LE(at) : tiff.readUInt16BE(at);
  };
  const u32 = (at: number) => {
    if (at + 4 > tiff.length) invalid(`offset ${at} lies beyond the end of the file`);
    return little ? tiff.readUInt32LE(at) : tiff.readUInt32BE(at);
  };
  if (u16(2) !== 42) invalid("its version is not 42 (BigTIFF is not a fax format)");

  const pages: { x: number; y: number }[] = [];
  const seen = new Set<number>();
  for (let ifd = u32(4); ifd !== 0; ifd = u32(ifd + 2 + u16(ifd) * 12)) {
    if (seen.has(ifd)) invalid(`its IFDs form a loop at offset ${ifd}`);
    seen.add(ifd);
    // Each 12-byte entry: tag, type, count, then the value or (for RATIONAL) its offset.
    const entries = new Map<number, number>();
    for (let i = 0, count = u16(ifd); i < count; i++) entries.set(u16(ifd + 2 + i * 12), ifd + 2 + i * 12);
    const rational = (tag: number): number | null => {
      const entry = entries.get(tag);
      if (entry === undefined) return null;
      const at = u32(entry + 8);
      const denominator = u32(at + 4);
      return denominator === 0 ? null : u32(at) / denominator;
    };
    const unitEntry = entries.get(TAG_RESOLUTION_UNIT);
    const unit = unitEntry === undefined ? UNIT_INCH : u16(unitEntry + 8);
    const perInch = unit === UNIT_CENTIMETRE ? 2.54 : unit === UNIT_INCH ? 1 : null;
    const x = rational(TAG_X_RESOLUTION);
    const y = rational(TAG_Y_RESOLUTION);
    pages.push({
      x: perInch !== null && x !== null ? x * perInch : FALLBACK_DPI.x,
      y: perInch !== null && y !== null ? y * perInch : FALLBACK_DPI.y,
    });
  }
  if (pages.length === 0) invalid("it has no pages");
  return pages;
}

/**
 * Decodes Windows BMP files to grey pixels. sharp (libvips) reads BMP only through ImageMagick,
 * which the prebuilt sharp binaries do not include (`sharp.format.magick.input` is all false),
 * so BMP is read here, in plain TypeScript. Pure: bytes in, pixels out.
 *
 * Covered: the OS/2 core header (12 bytes) and the Windows info headers (40, 52, 56, 108, 124
 * bytes); 1, 4 and 8 bits per pixel with a colour table, uncompressed or RLE4/RLE8; 16 and 32
 * bits per pixel plain or with bit-field masks; 24 bits per pixel; bottom-up and top-down rows.
 * Not covered: JPEG or PNG inside a BMP (compression 4 and 5), which no one sends; such files
 * fail with a `BmpFormatError`, as do truncated and malformed ones.
 *
 * Colour becomes grey by Rec. 601 luma; alpha (only where the header declares an alpha mask and
 * not every pixel's alpha is 0, the common case of a 32-bit file with an unused fourth byte) is
 * flattened onto white. Pixels that RLE skips are white.
 */

export class BmpFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BmpFormatError";
  }
}

export interface BmpHeader {
  width: number;
  height: number;
  /** Rows stored top row first (negative height in the file). */
  topDown: boolean;
  bitsPerPixel: number;
  /** 0 none, 1 RLE8, 2 RLE4, 3 bit fields, 6 bit fields with alpha. */
  compression: number;
  /** Pixels per inch from the header; null when the file gives none. */
  xDpi: number | null;
  yDpi: number | null;
  pixelOffset: number;
  headerSize: number;
}

export interface BmpImage {
  width: number;
  height: number;
  /** One byte per pixel, 0 black to 255 white, top row first. */
  data: Uint8Array;
  xDpi: number | null;
  yDpi: number | null;
}

const CORE_HEADER = 12;
const INFO_HEADER = 40;
const BI_RGB = 0;
const BI_RLE8 = 1;
const BI_RLE4 = 2;
const BI_BITFIELDS = 3;
const BI_ALPHABITFIELDS = 6;
const INCHES_PER_METRE = 0.0254;
/** More than BMP's own field can sensibly hold; guards the arithmetic below. */
const MAX_SIDE = 1 << 24;

/** Whether `bytes` starts like a BMP file ("BM" and a known header size). */
export function looksLikeBmp(bytes: Uint8Array): boolean {
  if (bytes.length < 18 || bytes[0] !== 0x42 || bytes[1] !== 0x4d) return false;
  const headerSize = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(14, true);
  return [CORE_HEADER, INFO_HEADER, 52, 56, 64, 108, 124].includes(headerSize);
}

/** Reads the header only, so that the pixel count can be checked before any pixel is decoded. */
export function readBmpHeader(bytes: Uint8Array): BmpHeader {
  if (!looksLikeBmp(bytes)) throw new BmpFormatError("not a BMP file");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const pixelOffset = view.getUint32(10, true);
  const headerSize = view.getUint32(14, true);
  if (bytes.length < 14 + headerSize) throw new BmpFormatError("the file ends inside its header");
  let width: number;
  let rawHeight: number;
  let bitsPerPixel: number;
  let compression = BI_RGB;
  let xDpi: number | null = null;
  let yDpi: number | null = null;
  if (headerSize === CORE_HEADER) {
    width = view.getUint16(18, true);
    rawHeight = view.getUint16(20, true);
    bitsPerPixel = view.getUint16(24, true);
  } else {
    width = view.getInt32(18, true);
    rawHeight = view.getInt32(22, true);
    bitsPerPixel = view.getUint16(28, true);
    compression = view.getUint32(30, true);
    xDpi = dpiOf(view.getInt32(38, true));
    yDpi = dpiOf(view.getInt32(42, true));
  }
  const height = Math.abs(rawHeight);
  if (width <= 0 || height <= 0 || width > MAX_SIDE || height > MAX_SIDE) throw new BmpFormatError(`impossible image size ${width} x ${rawHeight}`);
  if (![1, 4, 8, 16, 24, 32].includes(bitsPerPixel)) throw new BmpFormatError(`${bitsPerPixel} bits per pixel is not a BMP pixel format`);
  const allowed =
    (compression === BI_RGB) ||
    (compression === BI_RLE8 && bitsPerPixel === 8) ||
    (compression === BI_RLE4 && bitsPerPixel === 4) ||
    ((compression === BI_BITFIELDS || compression === BI_ALPHABITFIELDS) && (bitsPerPixel === 16 || bitsPerPixel === 32));
  if (!allowed) throw new BmpFormatError(`compression ${compression} with ${bitsPerPixel} bits per pixel is not supported (JPEG or PNG inside BMP is not)`);
  if (pixelOffset >= bytes.length) throw new BmpFormatError("the pixel data starts beyond the end of the file");
  return { width, height, topDown: rawHeight < 0, bitsPerPixel, compression, xDpi, yDpi, pixelOffset, headerSize };
}

/** Decodes a BMP file to grey pixels; see the module comment. */
export function decodeBmp(bytes: Uint8Array): BmpImage {
  const header = readBmpHeader(bytes);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const { width, height, bitsPerPixel, compression } = header;
  const data = new Uint8Array(width * height).fill(255);
  const rowIndex = (fileRow: number): number => (header.topDown ? fileRow : height - 1 - fileRow);

  if (bitsPerPixel <= 8) {
    const palette = readPalette(bytes, view, header);
    if (compression === BI_RLE8 || compression === BI_RLE4) {
      decodeRle(bytes, header, palette, data, rowIndex);
    } else {
      const stride = rowStride(width, bitsPerPixel);
      requireBytes(bytes, header.pixelOffset + stride * (height - 1) + Math.ceil((width * bitsPerPixel) / 8));
      const mask = (1 << bitsPerPixel) - 1;
      for (let fileRow = 0; fileRow < height; fileRow++) {
        const rowStart = header.pixelOffset + fileRow * stride;
        const out = rowIndex(fileRow) * width;
        for (let x = 0; x < width; x++) {
          const bit = x * bitsPerPixel;
          const index = (bytes[rowStart + (bit >> 3)]! >> (8 - bitsPerPixel - (bit & 7))) & mask;
          data[out + x] = palette[index] ?? 0;
        }
      }
    }
  } else {
    const masks = readMasks(view, header);
    const bytesPerPixel = bitsPerPixel / 8;
    const stride = rowStride(width, bitsPerPixel);
    requireBytes(bytes, header.pixelOffset + stride * (height - 1) + width * bytesPerPixel);
    const fields = masks === null ? null : masks.map(maskField);
    const alphaField = fields?.[3] ?? null;
    const useAlpha = alphaField !== null && alphaField.mask !== 0 && anyAlpha(view, header, stride, alphaField);
    for (let fileRow = 0; fileRow < height; fileRow++) {
      const rowStart = header.pixelOffset + fileRow * stride;
      const out = rowIndex(fileRow) * width;
      for (let x = 0; x < width; x++) {
        const at = rowStart + x * bytesPerPixel;
        let r: number, g: number, b: number, a = 255;
        if (fields === null) {
          b = bytes[at]!;
          g = bytes[at + 1]!;
          r = bytes[at + 2]!;
        } else {
          const pixel = bitsPerPixel === 16 ? view.getUint16(at, true) : view.getUint32(at, true);
          r = fieldValue(pixel, fields[0]!);
          g = fieldValue(pixel, fields[1]!);
          b = fieldValue(pixel, fields[2]!);
          if (useAlpha && alphaField !== null) a = fieldValue(pixel, alphaField);
        }
        const luma = (299 * r + 587 * g + 114 * b) / 1000;
        data[out + x] = Math.round((luma * a + 255 * (255 - a)) / 255);
      }
    }
  }
  return { width, height, data, xDpi: header.xDpi, yDpi: header.yDpi };
}

function dpiOf(pixelsPerMetre: number): number | null {
  return pixelsPerMetre > 0 ? pixelsPerMetre * INCHES_PER_METRE : null;
}

function rowStride(width: number, bitsPerPixel: number): number {
  return Math.floor((width * bitsPerPixel + 31) / 32) * 4;
}

function requireBytes(bytes: Uint8Array, end: number): void {
  if (end > bytes.length) throw new BmpFormatError(`the file is truncated: the pixel data needs ${end} bytes, the file has ${bytes.length}`);
}

/** The colour table as grey levels. */
function readPalette(bytes: Uint8Array, view: DataView, header: BmpHeader): Uint8Array {
  const entrySize = header.headerSize === CORE_HEADER ? 3 : 4;
  const colorsUsed = header.headerSize === CORE_HEADER ? 0 : view.getUint32(46, true);
  const count = colorsUsed > 0 && colorsUsed <= 256 ? colorsUsed : 1 << header.bitsPerPixel;
  const start = 14 + header.headerSize;
  const available = Math.max(0, Math.floor((Math.min(header.pixelOffset, bytes.length) - start) / entrySize));
  if (available === 0) throw new BmpFormatError("the colour table is missing");
  const palette = new Uint8Array(1 << header.bitsPerPixel);
  for (let i = 0; i < Math.min(count, available); i++) {
    const at = start + i * entrySize;
    palette[i] = Math.round((299 * bytes[at + 2]! + 587 * bytes[at + 1]! + 114 * bytes[at]!) / 1000);
  }
  return palette;
}

/** The R, G, B, A masks for 16 and 32 bits per pixel; null for plain 24/32-bit BGR(x). */
function readMasks(view: DataView, header: BmpHeader): [number, number, number, number] | null {
  const { compression, bitsPerPixel, headerSize } = header;
  if (compression === BI_RGB) {
    if (bitsPerPixel === 16) return [0x7c00, 0x03e0, 0x001f, 0];
    if (bitsPerPixel === 32 && headerSize >= 56) return [0x00ff0000, 0x0000ff00, 0x000000ff, view.getUint32(14 + 52, true)];
    return null;
  }
  if (bitsPerPixel === 24) return null;
  // Masks sit in the header from the 52-byte version on, and right after a 40-byte header.
  const at = 14 + 40;
  if (at + 12 > view.byteLength) throw new BmpFormatError("the colour masks are missing");
  const hasAlphaMask = headerSize >= 56 || compression === BI_ALPHABITFIELDS;
  if (hasAlphaMask && at + 16 > view.byteLength) throw new BmpFormatError("the alpha mask is missing");
  return [view.getUint32(at, true), view.getUint32(at + 4, true), view.getUint32(at + 8, true), hasAlphaMask ? view.getUint32(at + 12, true) : 0];
}

interface MaskField {
  mask: number;
  shift: number;
  max: number;
}

function maskField(mask: number): MaskField {
  if (mask === 0) return { mask: 0, shift: 0, max: 1 };
  let shift = 0;
  while (((mask >>> shift) & 1) === 0) shift++;
  return { mask, shift, max: mask >>> shift };
}

function fieldValue(pixel: number, field: MaskField): number {
  if (field.mask === 0) return 0;
  return Math.round((((pixel & field.mask) >>> field.shift) * 255) / field.max);
}

/** Whether any pixel has a non-zero alpha (files that never fill the alpha byte mean opaque). */
function anyAlpha(view: DataView, header: BmpHeader, stride: number, alpha: MaskField): boolean {
  const bytesPerPixel = header.bitsPerPixel / 8;
  for (let row = 0; row < header.height; row++) {
    for (let x = 0; x < header.width; x++) {
      const at = header.pixelOffset + row * stride + x * bytesPerPixel;
      const pixel = header.bitsPerPixel === 16 ? view.getUint16(at, true) : view.getUint32(at, true);
      if ((pixel & alpha.mask) !== 0) return true;
    }
  }
  return false;
}

/** RLE8 and RLE4: runs and literal groups per row, with end-of-line, end-of-bitmap and delta escapes. */
function decodeRle(bytes: Uint8Array, header: BmpHeader, palette: Uint8Array, data: Uint8Array, rowIndex: (fileRow: number) => number): void {
  const { width, height } = header;
  const four = header.compression === BI_RLE4;
  let at = header.pixelOffset;
  let x = 0;
  let row = 0;
  const put = (index: number): void => {
    if (x < width && row < height) data[rowIndex(row) * width + x] = palette[index] ?? 0;
    x++;
  };
  const next = (): number => {
    if (at >= bytes.length) throw new BmpFormatError("the RLE pixel data is truncated");
    return bytes[at++]!;
  };
  while (row < height) {
    const count = next();
    const value = next();
    if (count > 0) {
      for (let i = 0; i < count; i++) put(four ? (i % 2 === 0 ? value >> 4 : value & 0x0f) : value);
    } else if (value === 0) {
      x = 0;
      row++;
    } else if (value === 1) {
      return;
    } else if (value === 2) {
      x += next();
      row += next();
    } else {
      const literalBytes = four ? Math.ceil(value / 2) : value;
      for (let i = 0; i < value; i++) {
        const byte = bytes[at + (four ? i >> 1 : i)];
        if (byte === undefined) throw new BmpFormatError("the RLE pixel data is truncated");
        put(four ? (i % 2 === 0 ? byte >> 4 : byte & 0x0f) : byte);
      }
      at += literalBytes + (literalBytes % 2);
    }
  }
}

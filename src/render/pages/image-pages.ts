/**
 * Renders images into grey fax pages: TIFF (every page, any compression, including fax TIFFs in
 * CCITT G3/G4), PNG, JPEG, GIF (the first frame), WebP and BMP.
 *
 * Decoding is sharp's (libvips), except for BMP, which sharp cannot read (bmp-decode.ts). The
 * format is judged by the bytes, not the file name, so a PNG named .jpg still renders; anything
 * that is none of these raster formats (SVG included, which sharp could read but which may refer
 * to other files) fails as unreadable.
 *
 * Each image page becomes one fax page (place-on-page.ts): oriented by its EXIF orientation,
 * transparent areas flattened onto white, made grey, and
 *  - a fax page (a TIFF page exactly 1728 pixels wide) is copied pixel for pixel across, its scan
 *    lines adapted to the job's 98 or 196 lines per inch;
 *  - an image with a resolution is shown at its size on paper, shrunk if it does not fit;
 *  - an image without one is scaled to fill the content box.
 * TIFF resolutions are read from the file's own tags (tiff-structure.ts), since sharp reports
 * the horizontal one only and a 204 x 98 dpi fax page has pixels twice as high as wide.
 *
 * Hostile and broken files:
 *  - more pixels than `limits.maxSourcePixels` (decompression bombs: a few bytes claiming
 *    30000 x 30000 pixels) fail with document_too_large before any pixel is decoded; sharp's
 *    `limitInputPixels` enforces the same limit on the decoder itself;
 *  - truncated or corrupt pixel data fails with document_unreadable: `failOn: "error"` makes
 *    libvips stop at decoder errors and truncation, but not at mere warnings (an odd ICC
 *    profile, a JPEG with extra bytes after its end), which most viewers ignore too;
 *  - more pages than `limits.maxPages` fail with document_too_large up front.
 */
import sharp, { type Metadata, type Sharp } from "sharp";
import { readTiffPages, type TiffPage } from "../fax-image/tiff-structure.ts";
import { BmpFormatError, decodeBmp, looksLikeBmp, readBmpHeader } from "./bmp-decode.ts";
import { DocumentRenderError, FAX_WIDTH_PX, type DocumentInput, type GreyPage, type PageGeometry, type RenderLimits } from "./grey-page.ts";
import { placeFaxWidthPage, placeOnPage, type ContentExtent } from "./place-on-page.ts";

/** Raster formats (sharp's names) that render through sharp. */
const READABLE_FORMATS: ReadonlySet<string> = new Set(["jpeg", "png", "gif", "webp", "tiff"]);

/** Resolutions outside this range (pixels per inch) are taken to be wrong and ignored. */
const MIN_DPI = 10;
const MAX_DPI = 10_000;
const TIFF_UNIT_INCH = 2;
const TIFF_UNIT_CM = 3;
const CM_PER_INCH = 2.54;

export async function* imagePages(doc: DocumentInput, geometry: PageGeometry, limits: RenderLimits): AsyncGenerator<GreyPage> {
  if (doc.bytes.length === 0) throw new DocumentRenderError("document_unreadable", `${doc.name} is empty`);
  if (looksLikeBmp(doc.bytes)) {
    yield await bmpPage(doc, geometry, limits);
    return;
  }
  const first = await readMetadata(doc, 0);
  if (!READABLE_FORMATS.has(first.format)) {
    throw new DocumentRenderError(
      "document_unreadable",
      `${doc.name} is in ${first.format.toUpperCase()} format, which Faxline does not fax as an image (it faxes TIFF, PNG, JPEG, GIF, WebP and BMP)`,
    );
  }
  const isTiff = first.format === "tiff";
  const pageCount = isTiff ? Math.max(1, first.pages ?? 1) : 1;
  if (pageCount > limits.maxPages) {
    throw new DocumentRenderError("document_too_large", `${doc.name} has ${pageCount} pages, more than the limit of ${limits.maxPages} pages`);
  }
  const tiffPages = isTiff ? tiffPageList(doc.bytes, pageCount) : null;

  for (let index = 0; index < pageCount; index++) {
    const metadata = index === 0 ? first : await readMetadata(doc, index);
    const what = pageCount > 1 ? `page ${index + 1} of ${doc.name}` : doc.name;
    checkPixelCount(what, metadata.width, metadata.height, limits);
    const tiffPage = tiffPages?.[index] ?? null;
    const resolution = tiffPage !== null ? tiffResolution(tiffPage) : squareResolution(metadata.density);
    const turnsSideways = (metadata.orientation ?? 1) >= 5;
    const upright = {
      width: metadata.autoOrient.width,
      height: metadata.autoOrient.height,
      xDpi: turnsSideways ? resolution.yDpi : resolution.xDpi,
      yDpi: turnsSideways ? resolution.xDpi : resolution.yDpi,
      onPaper: resolution.onPaper,
    };
    const input = (): Sharp =>
      sharp(doc.bytes, { page: index, pages: 1, failOn: "error", limitInputPixels: limits.maxSourcePixels })
        .autoOrient()
        .flatten({ background: "#ffffff" })
        .toColourspace("b-w");

    const page = await decoding(doc, what, async () => {
      if (isTiff && upright.width === FAX_WIDTH_PX) {
        const faxPage = await faxWidthPage(input(), upright, geometry);
        if (faxPage !== null) return faxPage;
      }
      return placeOnPage(input(), extentOf(upright), geometry);
    });
    yield page;
  }
}

/** Pixels per inch across and down; null when unknown. `onPaper`: the values give a size on paper, not only a pixel shape. */
interface Resolution {
  xDpi: number | null;
  yDpi: number | null;
  onPaper: boolean;
}

const NO_RESOLUTION: Resolution = { xDpi: null, yDpi: null, onPaper: false };

interface PixelSize extends Resolution {
  width: number;
  height: number;
}

/** How big the image is meant to be: its size in inches when it has a resolution, else only its shape. */
function extentOf(size: PixelSize): ContentExtent {
  if (size.xDpi === null || size.yDpi === null) return { width: size.width, height: size.height, enlarge: true };
  return { width: size.width / size.xDpi, height: size.height / size.yDpi, enlarge: !size.onPaper };
}

/** A fax-width TIFF page pixel for pixel across; null when it does not fit that way (see placeFaxWidthPage). */
async function faxWidthPage(input: Sharp, size: PixelSize, geometry: PageGeometry): Promise<GreyPage | null> {
  const { data, info } = await input.raw({ depth: "uchar" }).toBuffer({ resolveWithObject: true });
  if (info.channels !== 1) throw new Error(`expected grey pixels, got ${info.channels} channels`);
  // The page's scan lines per inch, with its x resolution taken to be the fax's 204 dpi (the
  // pixels are copied across one for one); square pixels when the file does not say.
  const linesPerInch = size.xDpi !== null && size.yDpi !== null ? (size.yDpi * geometry.xDpi) / size.xDpi : geometry.xDpi;
  const image = { width: info.width, height: info.height, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
  return placeFaxWidthPage(image, linesPerInch, geometry);
}

async function bmpPage(doc: DocumentInput, geometry: PageGeometry, limits: RenderLimits): Promise<GreyPage> {
  try {
    const header = readBmpHeader(doc.bytes);
    checkPixelCount(doc.name, header.width, header.height, limits);
    const image = decodeBmp(doc.bytes);
    const size: PixelSize = { width: image.width, height: image.height, ...usableResolution(image.xDpi, image.yDpi) };
    return await placeOnPage(image, extentOf(size), geometry);
  } catch (err) {
    if (err instanceof BmpFormatError) throw new DocumentRenderError("document_unreadable", `${doc.name} is not a readable BMP image: ${err.message}`);
    throw err;
  }
}

function checkPixelCount(what: string, width: number, height: number, limits: RenderLimits): void {
  const pixels = width * height;
  if (pixels > limits.maxSourcePixels) {
    throw new DocumentRenderError(
      "document_too_large",
      `${what} is ${width} x ${height} pixels (${formatCount(pixels)} pixels), more than the limit of ${formatCount(limits.maxSourcePixels)} pixels per image`,
    );
  }
}

async function readMetadata(doc: DocumentInput, page: number): Promise<Metadata> {
  return decoding(doc, doc.name, () => sharp(doc.bytes, { page, failOn: "error", limitInputPixels: false }).metadata());
}

/** Runs a sharp step; decoder failures become document_unreadable (or document_too_large) naming the document. */
async function decoding<T>(doc: DocumentInput, what: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof DocumentRenderError) throw err;
    const reason = err instanceof Error ? err.message : String(err);
    if (/exceeds pixel limit/i.test(reason)) {
      throw new DocumentRenderError("document_too_large", `${what} has more pixels than the limit per image (${reason})`);
    }
    if (/unsupported image format/i.test(reason)) {
      throw new DocumentRenderError("document_unreadable", `${doc.name} is not an image Faxline can read (TIFF, PNG, JPEG, GIF, WebP or BMP); it may be damaged or have the wrong file extension`);
    }
    throw new DocumentRenderError("document_unreadable", `${what} is damaged or truncated and cannot be read (${firstLine(reason)})`);
  }
}

/** The TIFF's own page list for resolutions; null when it cannot be read this way (tiled TIFFs, BigTIFF), sharp's density is used then. */
function tiffPageList(bytes: Uint8Array, pageCount: number): TiffPage[] | null {
  try {
    const pages = readTiffPages(bytes);
    return pages.length === pageCount ? pages : null;
  } catch {
    return null;
  }
}

/**
 * A page's pixels per inch from its tags. Without a unit (ResolutionUnit 1) the two values still
 * give the shape of a pixel, though not the size on paper: `onPaper` is false then.
 */
function tiffResolution(page: TiffPage): Resolution {
  if (page.xResolution === null || page.yResolution === null) return NO_RESOLUTION;
  const perInch = page.resolutionUnit === TIFF_UNIT_CM ? CM_PER_INCH : page.resolutionUnit === TIFF_UNIT_INCH ? 1 : null;
  if (perInch === null) {
    const shape = usableResolution(page.xResolution, page.yResolution);
    return { ...shape, onPaper: false };
  }
  return usableResolution(page.xResolution * perInch, page.yResolution * perInch);
}

function squareResolution(density: number | undefined): Resolution {
  return density === undefined ? NO_RESOLUTION : usableResolution(density, density);
}

function usableResolution(xDpi: number | null, yDpi: number | null): Resolution {
  const usable = (dpi: number | null): dpi is number => dpi !== null && Number.isFinite(dpi) && dpi >= MIN_DPI && dpi <= MAX_DPI;
  return usable(xDpi) && usable(yDpi) ? { xDpi, yDpi, onPaper: true } : NO_RESOLUTION;
}

function formatCount(n: number): string {
  return n.toLocaleString("en-US");
}

function firstLine(text: string): string {
  return text.split("\n")[0]?.trim() ?? text;
}

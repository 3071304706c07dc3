/**
 * Puts scaled content (a PDF page, an image) onto a fax page: where it goes, how big, and whether
 * it is turned; then the pixels themselves.
 *
 * Content is fitted into `contentBox(geometry)` keeping its aspect ratio *on paper*, and centred
 * there; everything else stays white (the header band included). Fax pixels are not square
 * (204 dpi across, 196 or 98 lines per inch down), so sizes are worked out in inches and only
 * then turned into pixels of each axis; a source with non-square pixels (a 204 x 98 dpi TIFF)
 * says so through its extent in inches.
 *
 * Landscape content (wider than tall) on a portrait page is turned by 90 degrees when that makes
 * it bigger on paper, so a landscape page fills the sheet instead of being shrunk to half of it.
 * It is turned counter-clockwise: the top of the content lies along the left edge of the fax
 * page, as printers print landscape pages, and the reader turns the sheet clockwise to read it.
 *
 * Content with a known size on paper (an image with a resolution) is never enlarged beyond that
 * size, only shrunk to fit; content whose size is only an aspect ratio (an image without a
 * resolution) and PDF pages are scaled to fill the box.
 *
 * Fax pages (TIFF pages exactly 1728 pixels wide) are not scaled at all across:
 * `placeFaxWidthPage` copies them pixel for pixel and only adapts the scan lines to the job's
 * vertical resolution.
 *
 * `contentTone` tells photo-like content from text and line art (see there).
 */
import type { Sharp } from "sharp";
import { nativeRaster } from "../native-raster.ts";
import { contentBox, type GreyPage, type PageGeometry, type PageTone } from "./grey-page.ts";

/** Where content goes on the page, in page pixels, and whether it is turned first. */
export interface Placement {
  /** Turned by 90 degrees counter-clockwise before scaling. */
  rotate: boolean;
  left: number;
  top: number;
  width: number;
  height: number;
}

/** A grey raster: one byte per pixel, 0 black to 255 white, row by row. */
export interface GreyImage {
  width: number;
  height: number;
  data: Uint8Array;
}

/**
 * The size of content as it is meant to look on paper, upright (after EXIF orientation or the
 * PDF page's /Rotate). With `enlarge: false` the extent is in inches and the content is shown at
 * most at that size; with `enlarge: true` only the ratio of width to height matters and the
 * content fills the box.
 */
export interface ContentExtent {
  width: number;
  height: number;
  enlarge: boolean;
}

/** Ratios closer to 1 than this count as "no bigger" when deciding whether to turn content. */
const TURN_GAIN = 1.001;

/** Works out where and how big content of `extent` goes on a page of `geometry`. */
export function planPlacement(extent: ContentExtent, geometry: PageGeometry): Placement {
  if (!(extent.width > 0 && extent.height > 0 && Number.isFinite(extent.width) && Number.isFinite(extent.height))) {
    throw new RangeError(`content extent must be positive, got ${extent.width} x ${extent.height}`);
  }
  const box = contentBox(geometry);
  const boxWidthIn = box.width / geometry.xDpi;
  const boxHeightIn = box.height / geometry.yDpi;
  const cap = extent.enlarge ? Infinity : 1;
  const uprightScale = Math.min(boxWidthIn / extent.width, boxHeightIn / extent.height, cap);
  const turnedScale = Math.min(boxWidthIn / extent.height, boxHeightIn / extent.width, cap);
  const rotate = extent.width > extent.height && turnedScale > uprightScale * TURN_GAIN;
  const scale = rotate ? turnedScale : uprightScale;
  const widthIn = (rotate ? extent.height : extent.width) * scale;
  const heightIn = (rotate ? extent.width : extent.height) * scale;
  const width = clamp(Math.round(widthIn * geometry.xDpi), 1, box.width);
  const height = clamp(Math.round(heightIn * geometry.yDpi), 1, box.height);
  return {
    rotate,
    left: box.left + Math.floor((box.width - width) / 2),
    top: box.top + Math.floor((box.height - height) / 2),
    width,
    height,
  };
}

/**
 * Scales a grey image onto a white page of `geometry` as `planPlacement` says. `image` is either
 * a grey raster or a sharp pipeline that yields one (already oriented, flattened and grey); sharp
 * turns and resizes it in one pass.
 */
export async function placeOnPage(image: GreyImage | Sharp, extent: ContentExtent, geometry: PageGeometry): Promise<GreyPage> {
  const placement = planPlacement(extent, geometry);
  // sharp loads on first use: a job of PDFs and text never needs it.
  const pipeline = isGreyImage(image) ? (await import("sharp")).default(image.data, { raw: { width: image.width, height: image.height, channels: 1 } }) : image;
  if (placement.rotate) pipeline.rotate(270);
  const { data, info } = await pipeline
    .resize(placement.width, placement.height, { fit: "fill" })
    .toColourspace("b-w")
    .raw({ depth: "uchar" })
    .toBuffer({ resolveWithObject: true });
  if (info.width !== placement.width || info.height !== placement.height || info.channels !== 1) {
    throw new Error(`scaling gave ${info.width}x${info.height}x${info.channels}, expected ${placement.width}x${placement.height}x1`);
  }
  const scaled = { width: info.width, height: info.height, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
  return pasteOnPage(scaled, placement, geometry);
}

/** A white page of `geometry` with `pixels` (exactly `placement`'s size) copied to its place; tone judged from them. */
export function pasteOnPage(pixels: GreyImage, placement: Placement, geometry: PageGeometry): GreyPage {
  if (pixels.width !== placement.width || pixels.height !== placement.height) {
    throw new RangeError(`pixels are ${pixels.width}x${pixels.height}, the placement ${placement.width}x${placement.height}`);
  }
  const page = new Uint8Array(geometry.widthPx * geometry.heightPx).fill(255);
  for (let y = 0; y < pixels.height; y++) {
    const from = y * pixels.width;
    page.set(pixels.data.subarray(from, from + pixels.width), (placement.top + y) * geometry.widthPx + placement.left);
  }
  return { width: geometry.widthPx, height: geometry.heightPx, data: page, tone: contentTone(pixels) };
}

/** A rectangle of a raster, in its pixels. */
export interface Region {
  left: number;
  top: number;
  width: number;
  height: number;
}

/**
 * Places a fax page (a raster exactly 1728 pixels wide) pixel for pixel across, below the header
 * band. Down, each page scan line is taken from the source scan line at the same height on paper:
 * `linesPerInch` of the source against `geometry.yDpi`; going from more lines to fewer, the lines
 * that fall together are merged by keeping the darkest pixel (so a one-line rule does not vanish
 * when 196 lines/inch become 98), going from fewer to more, lines are repeated.
 * Returns null when the page, so placed, would lose non-white scan lines off the bottom of the
 * page; the caller then scales it like any image. Blank scan lines (the bottom margin of a page
 * longer than this geometry's paper) are dropped.
 */
export function placeFaxWidthPage(image: GreyImage, linesPerInch: number, geometry: PageGeometry): GreyPage | null {
  if (image.width !== geometry.widthPx) throw new RangeError(`a fax-width page is ${geometry.widthPx} pixels wide, not ${image.width}`);
  const ratio = linesPerInch / geometry.yDpi; // source lines per page line
  const mappedHeight = Math.max(1, Math.round(image.height / ratio));
  const room = geometry.heightPx - geometry.headerBandPx;
  const width = image.width;
  const lineRange = (line: number): [number, number] => {
    const first = Math.min(image.height - 1, Math.floor(line * ratio));
    const end = Math.max(first + 1, Math.min(image.height, Math.floor((line + 1) * ratio)));
    return [first, end];
  };
  if (mappedHeight > room) {
    const [firstLost] = lineRange(room);
    for (let i = firstLost * width; i < image.data.length; i++) {
      if ((image.data[i] ?? 255) < 128) return null;
    }
  }
  const page = new Uint8Array(geometry.widthPx * geometry.heightPx).fill(255);
  const lines = Math.min(mappedHeight, room);
  for (let line = 0; line < lines; line++) {
    const [first, end] = lineRange(line);
    const target = (geometry.headerBandPx + line) * width;
    page.set(image.data.subarray(first * width, first * width + width), target);
    for (let source = first + 1; source < end; source++) {
      const offset = source * width;
      for (let x = 0; x < width; x++) {
        const value = image.data[offset + x] ?? 255;
        if (value < (page[target + x] ?? 255)) page[target + x] = value;
      }
    }
  }
  const placed = { left: 0, top: geometry.headerBandPx, width, height: lines };
  const grey = { width: geometry.widthPx, height: geometry.heightPx, data: page };
  return { ...grey, tone: contentTone(grey, placed) };
}

/** Grey levels that count as continuous tone: neither ink nor paper. */
const MID_GREY_MIN = 40;
const MID_GREY_MAX = 215;
/** Neighbours closer than this are a smooth tone rather than the edge of a stroke. */
const SMOOTH_STEP = 16;
/** Share of smooth mid-grey pixels from which content counts as a photo. */
export const PHOTO_SHARE = 0.08;
/** Every SAMPLE_STEP-th pixel of every SAMPLE_STEP-th row is looked at: a share needs no more, and a page costs a quarter. */
const SAMPLE_STEP = 2;

/**
 * Whether content is a photo (continuous tone) or text and line art, from one pass over its
 * pixels: the share of pixels that are mid-grey (MID_GREY_MIN..MID_GREY_MAX) *and* about as grey
 * as their right and lower neighbours. Anti-aliased text has plenty of mid-grey pixels, but each
 * sits on the edge of a stroke, between ink and paper, so its neighbours across the edge differ
 * sharply; in a photo or a scan with tonal areas, neighbours are alike. At PHOTO_SHARE (8 % of
 * the content area) or more the content is a photo, unless 90 % of those pixels lie on at most
 * 8 grey levels: that is flat shading of line art (grey boxes, shaded table rows), which the
 * threshold screens (encode-fax-page.ts). Only `region` of the image is looked at (the
 * whole image by default).
 */
export function contentTone(image: GreyImage, region: Region = { left: 0, top: 0, width: image.width, height: image.height }): PageTone {
  const { width: stride, data } = image;
  const { left, top, width, height } = region;
  if (width < 2 || height < 2) return "text";
  const levels = new Uint32Array(256);
  const native = nativeRaster();
  let smooth = 0;
  let sampled = 0;
  if (native !== null) {
    sampled = native.smoothGreys(data, stride, left, top, width, height, SAMPLE_STEP, MID_GREY_MIN, MID_GREY_MAX, SMOOTH_STEP, levels);
    for (const n of levels) smooth += n;
  } else {
    [smooth, sampled] = smoothGreysTs(image, region, levels);
  }
  if (smooth < PHOTO_SHARE * sampled) return "text";
  // Flat shading (grey boxes, shaded table rows) is smooth too, but made of a few grey levels,
  // where a photo or a gradient spreads over many: shaded line art stays "text".
  const onFewLevels = [...levels].sort((a, b) => b - a).slice(0, SHADING_LEVELS).reduce((sum, n) => sum + n, 0);
  return onFewLevels >= SHADING_SHARE * smooth ? "text" : "photo";
}

/** contentTone's pass in TypeScript (the addon's smoothGreys): counts smooth mid-greys into `levels`; returns [smooth, sampled]. */
export function smoothGreysTs(image: GreyImage, region: Region, levels: Uint32Array): [number, number] {
  const { width: stride, data } = image;
  const { left, top, width, height } = region;
  let smooth = 0;
  let sampled = 0;
  // Paper is passed over a word of four pixels (two samples) at a time where the bytes are aligned.
  const words = data.byteOffset % 4 === 0 ? new Uint32Array(data.buffer, data.byteOffset, data.length >> 2) : null;
  const xEnd = left + width - 1;
  for (let y = top; y < top + height - 1; y += SAMPLE_STEP) {
    const row = y * stride;
    for (let x = left; x < xEnd; x += SAMPLE_STEP) {
      if (words !== null) {
        while (((row + x) & 3) === 0 && x + SAMPLE_STEP < xEnd && words[(row + x) >> 2] === 0xffffffff) {
          sampled += 2;
          x += 2 * SAMPLE_STEP;
        }
        if (x >= xEnd) break;
      }
      sampled++;
      const value = data[row + x]!;
      if (value < MID_GREY_MIN || value > MID_GREY_MAX) continue;
      const right = data[row + x + 1]! - value;
      const below = data[row + stride + x]! - value;
      if (right <= SMOOTH_STEP && right >= -SMOOTH_STEP && below <= SMOOTH_STEP && below >= -SMOOTH_STEP) {
        smooth++;
        levels[value]!++;
      }
    }
  }
  return [smooth, sampled];
}

/** Smooth mid-grey pixels of which this share lies on SHADING_LEVELS grey levels are flat shading, not a photo. */
const SHADING_LEVELS = 8;
const SHADING_SHARE = 0.9;

function isGreyImage(image: GreyImage | Sharp): image is GreyImage {
  return "data" in image && image.data instanceof Uint8Array;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

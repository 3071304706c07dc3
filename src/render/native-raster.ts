/**
 * The render stage's hottest per-pixel loops in C (native/fax-raster, an N-API addon without
 * dependencies that scripts/build-native.sh builds): the shaded threshold of text pages
 * (fax-image/encode-fax-page.ts: thresholdInPlace), the G4 encoder (fax-image/encode-g4-page.ts:
 * encodeG4Page), the grey histograms of the picture finder and the paper tone (encode-fax-page.ts:
 * pictureBlocks, paperWhite), the halftone of a photo page's pictures (encode-fax-page.ts:
 * halftonePictures) and the photo test (pages/place-on-page.ts: contentTone). Each has a
 * TypeScript twin that gives the same result; the tests run both on the same pages. The addon is used
 * when it is built, the TypeScript otherwise, so that rendering works on a machine without a C
 * compiler; `FAXLINE_RASTER_ADDON` names another file, or `off` to use the TypeScript (the render
 * bench compares the two). The addon only runs loops: every level, table and code comes from the
 * TypeScript modules.
 *
 * The addon holds no state, so every thread that renders (the render worker, page helpers) loads
 * its own handle to the one shared library. It checks its arguments and throws a RangeError for
 * sizes and regions outside the pixels it is given (the callers never pass such; the TypeScript
 * twins do not check). A built addon that cannot be loaded is an installation fault and throws
 * rather than quietly rendering three times slower.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { packageRoot } from "../lib/code-location.ts";

export interface NativeRaster {
  /** native/fax-raster/src/fax_raster.c explains the arguments. */
  thresholdShaded(
    pixels: Uint8Array,
    width: number,
    height: number,
    darkest: number,
    lightest: number,
    blackBelow: number,
    flatness: number,
    cell: number,
    flatBlack: Uint8Array,
  ): void;
  encodeG4(pixels: Uint8Array, width: number, height: number, countBlackFrom: number, codes: Uint32Array): { data: Uint8Array; mhBits: number; blackPixels: number };
  greyHistograms(pixels: Uint8Array, width: number, yStart: number, yEnd: number, shift: number, histograms: Uint32Array): void;
  halftoneBlocks(
    pixels: Uint8Array,
    out: Uint8Array,
    width: number,
    height: number,
    mask: Uint8Array,
    block: number,
    levels: Uint8Array,
    cellLevels: Uint8Array,
    cell: number,
  ): void;
  smoothGreys(
    pixels: Uint8Array,
    stride: number,
    left: number,
    top: number,
    width: number,
    height: number,
    step: number,
    midMin: number,
    midMax: number,
    smoothStep: number,
    levels: Uint32Array,
  ): number;
}

const ADDON_RELATIVE = "native/fax-raster/build/Release/fax_raster.node";
const NATIVE_FUNCTIONS = ["thresholdShaded", "encodeG4", "greyHistograms", "halftoneBlocks", "smoothGreys"] as const satisfies readonly (keyof NativeRaster)[];

let loaded: NativeRaster | null | undefined;

/** The addon, or null when it is not built or `FAXLINE_RASTER_ADDON=off`. Throws when a built addon cannot be loaded. */
export function nativeRaster(): NativeRaster | null {
  if (loaded !== undefined) return loaded;
  const setting = process.env.FAXLINE_RASTER_ADDON?.trim();
  if (setting?.toLowerCase() === "off") return (loaded = null);
  const file = setting ? resolve(setting) : join(packageRoot(), ADDON_RELATIVE);
  if (!existsSync(file)) {
    if (setting) throw new Error(`FAXLINE_RASTER_ADDON names ${file}, which does not exist`);
    return (loaded = null);
  }
  const addon = createRequire(import.meta.url)(file) as Partial<NativeRaster>;
  // An addon built from older sources lacks the newer functions: a rebuild is needed, not a crash mid-render.
  for (const name of NATIVE_FUNCTIONS) {
    if (typeof addon[name] !== "function") throw new Error(`${file} has no ${name}: it was built from older sources; run scripts/build-native.sh`);
  }
  loaded = addon as NativeRaster;
  return loaded;
}

/** Which loops render pages here: "native" (the addon) or "typescript". */
export function rasterKernels(): "native" | "typescript" {
  return nativeRaster() === null ? "typescript" : "native";
}

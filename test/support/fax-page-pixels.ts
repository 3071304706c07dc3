/**
 * Test support for fax images: renders a golden case, decodes TIFF pages and 1-bit PNG files to
 * one byte per pixel (0 black, 255 white) with sharp, writes pages as 1-bit PNG files, and counts
 * and compares pixels of decoded pages.
 */
import sharp from "sharp";
import { renderFaxJob, type FaxImageVariant, type FaxJobRenderInput, type FaxJobRenderResult } from "../../src/render/render-fax-job.ts";
import type { GoldenCase } from "../fixtures/golden/golden-fax-pages.ts";

export interface PagePixels {
  width: number;
  height: number;
  pixels: Buffer;
}

/** The images of a job that must render; a document failure fails the test with its reason. */
export function renderedImages(result: FaxJobRenderResult): FaxImageVariant[] {
  if (!result.ok) throw new Error(`expected the job to render, got ${result.reasonCode} (${result.documentName}): ${result.message}`);
  return result.images;
}

/** Renders a job of one image (one recipient, or recipients who all see the same pages). */
export async function renderOneImage(input: FaxJobRenderInput): Promise<FaxImageVariant> {
  const images = renderedImages(await renderFaxJob(input));
  if (images.length !== 1) throw new Error(`expected one fax image, got ${images.length}`);
  return images[0]!;
}

export async function renderGoldenCase(golden: GoldenCase): Promise<FaxImageVariant> {
  return renderOneImage(await golden.input());
}

/** Decodes one image (a TIFF page, a PNG file) to grey pixels. */
export async function decodePage(image: Uint8Array | string, page = 0): Promise<PagePixels> {
  const input = typeof image === "string" ? image : Buffer.from(image.buffer, image.byteOffset, image.byteLength);
  const { data, info } = await sharp(input, { page }).toColourspace("b-w").raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, pixels: data };
}

/** Every page of a TIFF, decoded. */
export async function decodePages(tiff: Uint8Array, count: number): Promise<PagePixels[]> {
  const pages: PagePixels[] = [];
  for (let page = 0; page < count; page++) pages.push(await decodePage(tiff, page));
  return pages;
}

/** A 1-bit PNG (two-colour palette, no dithering: the pixels are already black or white). */
export function bilevelPng(page: PagePixels): Promise<Buffer> {
  return sharp(page.pixels, { raw: { width: page.width, height: page.height, channels: 1 } })
    .png({ palette: true, colours: 2, dither: 0, compressionLevel: 9 })
    .toBuffer();
}

/** Black pixels (darker than 128) in rows `fromRow` (inclusive) to `toRow` (exclusive). */
export function blackPixels(page: PagePixels, fromRow = 0, toRow = page.height): number {
  let count = 0;
  for (let i = fromRow * page.width; i < toRow * page.width; i++) if (page.pixels[i]! < 128) count += 1;
  return count;
}

/** The bytes of rows `fromRow` (inclusive) to `toRow` (exclusive). */
export function rows(page: PagePixels, fromRow: number, toRow = page.height): Buffer {
  return page.pixels.subarray(fromRow * page.width, toRow * page.width);
}

/** The number of differing pixels and the first one, for a message that helps. */
export function pixelDifference(actual: PagePixels, expected: PagePixels): { count: number; first: string | null } {
  if (actual.width !== expected.width || actual.height !== expected.height) {
    return { count: Math.max(actual.pixels.length, expected.pixels.length), first: `size ${actual.width}x${actual.height}, expected ${expected.width}x${expected.height}` };
  }
  let count = 0;
  let first: string | null = null;
  for (let i = 0; i < expected.pixels.length; i++) {
    if (actual.pixels[i] !== expected.pixels[i]) {
      count += 1;
      first ??= `x ${i % expected.width}, y ${Math.floor(i / expected.width)}`;
    }
  }
  return { count, first };
}

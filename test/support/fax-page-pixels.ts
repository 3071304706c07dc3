/**
 * Test support for fax images: renders a golden case, decodes TIFF pages and 1-bit PNG files to
 * one byte per pixel (0 black, 255 white) with sharp, and writes pages as 1-bit PNG files.
 */
import sharp from "sharp";
import { layoutText } from "../../src/render/layout-text.ts";
import { renderFaxImage, type FaxImage } from "../../src/render/fax-image/render-fax-image.ts";
import type { GoldenCase } from "../fixtures/golden/golden-fax-pages.ts";

export interface PagePixels {
  width: number;
  height: number;
  pixels: Buffer;
}

export function renderGoldenCase(golden: GoldenCase): Promise<FaxImage> {
  const options = { paperFormat: golden.paperFormat, resolution: golden.resolution };
  return renderFaxImage({ textPages: layoutText(golden.text, options).pages, coverPageText: golden.coverPageText, ...options });
}

/** Decodes one image (a TIFF page, a PNG file) to grey pixels. */
export async function decodePage(image: Buffer | string, page = 0): Promise<PagePixels> {
  const { data, info } = await sharp(image, { page }).toColourspace("b-w").raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, pixels: data };
}

/** A 1-bit PNG (two-colour palette, no dithering: the pixels are already black or white). */
export function bilevelPng(page: PagePixels): Promise<Buffer> {
  return sharp(page.pixels, { raw: { width: page.width, height: page.height, channels: 1 } })
    .png({ palette: true, colours: 2, dither: 0, compressionLevel: 9 })
    .toBuffer();
}

/**
 * Support for the fax engine interop tests: the native parts they need (with a message saying how
 * to build them), a two-page TIFF-F rendered by Faxline itself, and a page-by-page pixel
 * comparison of what was sent with what a receiver wrote.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { CallRequest } from "../../src/line/line.ts";
import { renderFaxJob } from "../../src/render/render-fax-job.ts";
import type { Resolution } from "../../src/render/pages/grey-page.ts";
import { decodePage, type PagePixels } from "../support/fax-page-pixels.ts";

/** The peers the interop suites need fail them, never skip them, when missing (test/support/required-peers.ts). */
export { havePeer, requirePeer } from "../support/required-peers.ts";

export const ADDON_PATH = fileURLToPath(new URL("../../native/spandsp-engine/build/Release/spandsp_engine.node", import.meta.url));
export const RECEIVER_PATH = fileURLToPath(new URL("../peers/spandsp-receiver/build/t38_receiver", import.meta.url));
export const G711_RECEIVER_PATH = fileURLToPath(new URL("../peers/spandsp-receiver/build/g711_receiver", import.meta.url));

/** Fails with a message naming the build script when the addon or a receiver harness is not built. */
export function requireNativeBuild(): void {
  const missing = [ADDON_PATH, RECEIVER_PATH, G711_RECEIVER_PATH].filter((path) => !existsSync(path));
  if (missing.length > 0) {
    throw new Error(
      `not built: ${missing.join(", ")}. Run scripts/build-native.sh (needs the Debian packages libspandsp-dev, libtiff-dev and pkg-config).`,
    );
  }
}

/** A plain-text letter that renders to two A4 pages: a full one and a short one. */
export const LETTER = Array.from({ length: 70 }, (_, i) => `Line ${i + 1}: The quick brown fox jumps over the lazy dog.`).join("\n") + "\n";

/** Faxline's own rendering of a two-page text letter: TIFF-F, G4, 1728 px wide, 204x196 or 204x98 dpi, A4 or US Letter. */
export async function renderTwoPageLetter(resolution: Resolution, paperFormat: "A4" | "LETTER" = "A4"): Promise<Buffer> {
  const image = await renderText(LETTER, resolution, { paperFormat });
  if (image.pageSizes.length !== 2) throw new Error(`the test letter rendered to ${image.pageSizes.length} pages, expected 2`);
  return image.tiff;
}

/** Faxline's rendering of a text letter of `lines` numbered lines (about 60 to an A4 page), with its page count. */
export async function renderLetter(lines: number, resolution: Resolution): Promise<{ tiff: Buffer; pages: number }> {
  const text = Array.from({ length: lines }, (_, i) => `Line ${i + 1}: The quick brown fox jumps over the lazy dog; page after page.`).join("\n") + "\n";
  const image = await renderText(text, resolution, { maxPages: 50 });
  return { tiff: image.tiff, pages: image.pageSizes.length };
}

/** Faxline's rendering of a plain text as one recipient's fax image (no header, no cover). */
export async function renderText(text: string, resolution: Resolution, options: { paperFormat?: "A4" | "LETTER"; maxPages?: number } = {}): Promise<{ tiff: Buffer; pageSizes: number[] }> {
  const result = await renderFaxJob({
    documents: [{ name: "letter.txt", bytes: Buffer.from(text) }],
    paperFormat: options.paperFormat ?? "A4",
    resolution,
    header: null,
    cover: null,
    overlay: null,
    recipients: [{ id: "r1", number: "+4989123456", properties: {} }],
    limits: { maxPages: options.maxPages ?? 20, maxSourcePixels: 50_000_000, converterTimeoutMs: 30_000 },
  });
  if (!result.ok) throw new Error(`the test letter did not render: ${result.reasonCode}: ${result.message}`);
  const image = result.images[0]!;
  return { tiff: Buffer.from(image.tiff), pageSizes: [...image.pageSizes] };
}

/** One attempt of a job to +49 30 123456 with the two-page LOW letter (`renderTwoPageLetter("LOW")`) as its image. */
export function twoPageLowCallRequest(image: Uint8Array): CallRequest {
  return {
    jobId: "job",
    recipientId: "rcp",
    attemptNo: 1,
    e164: "+4930123456",
    dialString: "004930123456",
    csid: "Faxline",
    jobCsid: null,
    resolution: "LOW",
    pages: [{ encodedBytes: 20_000 }, { encodedBytes: 5_000 }],
    loadImage: async () => image,
  };
}

export interface PageComparison {
  page: number;
  sent: { width: number; height: number };
  received: { width: number; height: number };
  /** Pixels that differ in the rows both pages have. */
  differingPixels: number;
  /** Black pixels in rows only one of the pages has (a receiver may pad or trim white rows). */
  blackInExtraRows: number;
}

function blackPixels(page: PagePixels, fromRow: number): number {
  let count = 0;
  for (let i = fromRow * page.width; i < page.pixels.length; i++) if (page.pixels[i]! < 128) count += 1;
  return count;
}

/**
 * Compares every page of what was sent with what was received, pixel by pixel. The receiver
 * writes its own TIFF (SpanDSP: G3 2-D, lsb-to-msb fill order), so both are decoded to pixels.
 */
export async function comparePages(sent: Uint8Array, received: Uint8Array | string, pages: number): Promise<PageComparison[]> {
  const comparisons: PageComparison[] = [];
  for (let page = 0; page < pages; page++) {
    const a = await decodePage(sent, page);
    const b = await decodePage(received, page);
    let differingPixels = 0;
    let blackInExtraRows = 0;
    if (a.width !== b.width) {
      differingPixels = Math.max(a.pixels.length, b.pixels.length);
    } else {
      const common = Math.min(a.pixels.length, b.pixels.length);
      for (let i = 0; i < common; i++) if (a.pixels[i] !== b.pixels[i]) differingPixels += 1;
      const rows = Math.min(a.height, b.height);
      blackInExtraRows = blackPixels(a, rows) + blackPixels(b, rows);
    }
    comparisons.push({ page, sent: { width: a.width, height: a.height }, received: { width: b.width, height: b.height }, differingPixels, blackInExtraRows });
  }
  return comparisons;
}

/** True when every page arrived with exactly the pixels that were sent. */
export function identical(comparisons: readonly PageComparison[]): boolean {
  return comparisons.every((c) => c.differingPixels === 0 && c.blackInExtraRows === 0);
}

/** A small seeded generator (mulberry32): the same loss pattern on every run of a case. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The fax image of a job: its text pages (and an optional cover page first) rasterised and
 * encoded into one TIFF-F file (CCITT G4, 1728 pixels per line, 204 x 196 or 204 x 98 dpi),
 * plus the encoded size of each page, which is what a fax line transmits.
 *
 * CPU-bound (tens of milliseconds per page): the node runs it in a worker thread
 * (fax-image-worker.ts), never on the event loop that serves the API.
 */
import { layoutText, textPageGeometry, type PaperFormat, type Resolution, type TextPageLayout } from "../layout-text.ts";
import { encodeG4Page } from "./encode-g4-page.ts";
import { createTextPageRasterizer } from "./rasterize-text-page.ts";
import { readTiffPages } from "./tiff-structure.ts";
import { writeTiffF, type G4Page } from "./write-tiff-f.ts";

export interface FaxImageInput {
  /** The document pages, as render-documents.ts laid them out. */
  textPages: TextPageLayout[];
  /**
   * Text of a cover page put before the document pages (cover-page-text.ts), or null for none.
   * The cover page is one page: text that does not fit on it is not printed.
   */
  coverPageText: string | null;
  paperFormat: PaperFormat;
  resolution: Resolution;
}

export interface FaxImage {
  /** TIFF-F, one image per page. */
  tiff: Buffer;
  /** G4-encoded bytes of each page (the sum of its strips), in page order. */
  pageSizes: number[];
}

export async function renderFaxImage(input: FaxImageInput): Promise<FaxImage> {
  const options = { paperFormat: input.paperFormat, resolution: input.resolution };
  const pages =
    input.coverPageText === null
      ? input.textPages
      : [layoutText(input.coverPageText, options).pages[0] ?? { lines: [] }, ...input.textPages];
  if (pages.length === 0) throw new RangeError("a fax image needs at least one page");
  const geometry = textPageGeometry(options);
  const rasterize = createTextPageRasterizer(options);
  const encoded: G4Page[] = [];
  for (const page of pages) {
    encoded.push(await encodeG4Page(rasterize(page), { width: geometry.widthPx, height: geometry.heightPx }));
  }
  const tiff = writeTiffF(encoded, { xDpi: geometry.xDpi, yDpi: geometry.yDpi });
  return { tiff, pageSizes: readTiffPages(tiff).map((page) => page.encodedBytes) };
}

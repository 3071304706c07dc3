/**
 * Plain-text documents as fax pages: decoded by their charset (decode-text.ts), laid out in
 * 80 columns (layout-text.ts) and drawn in DejaVu Sans Mono (fax-image/rasterize-text-page.ts).
 * A text longer than `limits.maxPages` pages fails with document_too_large before any page is drawn.
 * Text pages keep the header band free by their own layout, and come out bilevel already.
 */
import { decodeText } from "../decode-text.ts";
import { layoutText } from "../layout-text.ts";
import { createTextPageRasterizer } from "../fax-image/rasterize-text-page.ts";
import { DocumentRenderError, type DocumentInput, type GreyPage, type PageGeometry, type RenderLimits } from "./grey-page.ts";

export async function* textPages(doc: DocumentInput, geometry: PageGeometry, limits: RenderLimits): AsyncGenerator<GreyPage> {
  const decoded = decodeText(doc.bytes, doc.charset);
  if (!decoded.ok) throw new DocumentRenderError("document_unreadable", `${doc.name}: ${decoded.message}`);
  const options = { paperFormat: geometry.paperFormat, resolution: geometry.resolution };
  // The page limit is checked while laying out, before any page is drawn: a text far past it
  // fails in a fraction of a second instead of drawing the pages up to the limit first.
  const layout = layoutText(decoded.text, options, limits.maxPages);
  if (layout.exceeded) {
    throw new DocumentRenderError("document_too_large", `${doc.name} brings the fax to more than the limit of ${limits.maxPages} ${limits.maxPages === 1 ? "page" : "pages"}`);
  }
  if (layout.pages.length === 0) throw new DocumentRenderError("document_unreadable", `${doc.name} has no printable content`);
  const rasterize = createTextPageRasterizer(options);
  for (const page of layout.pages) {
    yield { width: geometry.widthPx, height: geometry.heightPx, data: rasterize(page), tone: "text" };
  }
}

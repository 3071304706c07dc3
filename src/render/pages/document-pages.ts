/**
 * One entry point for every input kind: the pages of a document, by the type its file name
 * names (document-types.ts). Office documents and HTML go through LibreOffice, PostScript through
 * Ghostscript, each to PDF, and then through the PDF renderer like any PDF. The text and image
 * renderers load on first use: they bring the canvas and sharp, which a job of PDFs never needs.
 */
import { convertsToPdf, documentTypeFromName, unknownTypeMessage } from "../document-types.ts";
import { officeToPdf } from "../convert/libreoffice-to-pdf.ts";
import { postscriptToPdf } from "../convert/ghostscript-to-pdf.ts";
import { DocumentRenderError, type DocumentInput, type GreyPage, type PageGeometry, type RenderLimits } from "./grey-page.ts";
import { pdfPages } from "./pdf-pages.ts";

export async function* documentPages(doc: DocumentInput, geometry: PageGeometry, limits: RenderLimits): AsyncGenerator<GreyPage> {
  const type = documentTypeFromName(doc.name);
  switch (type) {
    case "text":
      yield* (await import("./text-pages.ts")).textPages(doc, geometry, limits);
      return;
    case "tiff":
    case "image":
      yield* (await import("./image-pages.ts")).imagePages(doc, geometry, limits);
      return;
    case "pdf":
    case "office":
    case "html":
    case "postscript":
      yield* pdfPages(await pdfOf(doc, type, limits), geometry, limits);
      return;
    case null:
      throw new DocumentRenderError("document_type_unsupported", unknownTypeMessage(doc.name));
  }
}

/**
 * The document as a PDF, converted where it is not one (LibreOffice, Ghostscript); null for the
 * types that are rendered without PDFium (text, images, TIFF) and for unknown ones.
 */
export async function asPdf(doc: DocumentInput, limits: RenderLimits): Promise<DocumentInput | null> {
  const type = documentTypeFromName(doc.name);
  return type === "pdf" || convertsToPdf(type) ? pdfOf(doc, type, limits) : null;
}

async function pdfOf(doc: DocumentInput, type: "pdf" | "office" | "html" | "postscript", limits: RenderLimits): Promise<DocumentInput> {
  switch (type) {
    case "pdf":
      return doc;
    case "office":
    case "html":
      return { name: doc.name, bytes: await officeToPdf(doc, limits) };
    case "postscript":
      return { name: doc.name, bytes: await postscriptToPdf(doc, limits) };
  }
}

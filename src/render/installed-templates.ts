/**
 * Cover page templates and overlays as operators install them per customer
 * (`faxline templates install --kind cover|overlay`), and how the renderer reads them back.
 *
 *  - A cover template is markup: SVG (`image/svg+xml`, rendered by sharp, always available) or
 *    HTML (`text/html`, rendered through LibreOffice, like Retarus' `.ftl.html` templates).
 *  - An overlay is a one-page document of any renderable type (typically a PDF letterhead). Its
 *    bytes are kept base64-encoded in the text column of customer_templates, with the document's
 *    file extension in the content type's `name` parameter (`application/pdf; name=overlay.pdf`).
 */
import type { DocumentInput } from "./pages/grey-page.ts";
import { documentTypeFromName, fileNameExtension } from "./document-types.ts";

export type CoverTemplateKind = "svg" | "html";

/** The cover template kind by its file name or content type; null when it is neither SVG nor HTML. */
export function coverKindOf(nameOrType: string): CoverTemplateKind | null {
  const lower = nameOrType.toLowerCase();
  if (lower.startsWith("image/svg+xml")) return "svg";
  if (lower.startsWith("text/html")) return "html";
  const extension = fileNameExtension(lower);
  if (extension === "svg") return "svg";
  if (extension === "html" || extension === "htm") return "html";
  return null;
}

/** The kind of an installed cover template (stored content types are always one of the two). */
export function coverTemplateKind(contentType: string): CoverTemplateKind {
  return coverKindOf(contentType) ?? "html";
}

export const COVER_CONTENT_TYPES: Readonly<Record<CoverTemplateKind, string>> = {
  svg: "image/svg+xml; charset=utf-8",
  html: "text/html; charset=utf-8",
};

/** The stored form of an overlay document. */
export function storedOverlay(fileName: string, bytes: Uint8Array): { contentType: string; content: string } {
  const extension = fileNameExtension(fileName);
  if (extension === null || documentTypeFromName(fileName) === null) {
    throw new RangeError(`an overlay must be a document Faxline renders (.pdf, .tif, .png, ...), got ${fileName}`);
  }
  return { contentType: `application/octet-stream; name=overlay.${extension}`, content: Buffer.from(bytes).toString("base64") };
}

/** The overlay document of an installed overlay row. */
export function overlayDocument(row: { name: string; content_type: string; content: string }): DocumentInput {
  const fileName = /;\s*name=([^;\s]+)/.exec(row.content_type)?.[1] ?? "overlay.pdf";
  return { name: `${row.name}.${fileNameExtension(fileName) ?? "pdf"}`, bytes: Buffer.from(row.content, "base64") };
}

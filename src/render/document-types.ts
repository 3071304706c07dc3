/**
 * Document types: which kind of document a file is, judged by its file name extension.
 *
 * The extension after the last dot of the name's final path segment is looked up
 * case-insensitively (`INVOICE.PDF` is a PDF). Names without an extension, or with one that
 * names no known document type, give `null`.
 *
 * This Faxline version renders plain text only (`RENDERABLE_TYPES`); every other type is
 * recognised so that the client gets a precise "not supported yet" reason
 * (`unsupportedTypeMessage`) instead of a generic failure. Rasterising PDF, TIFF, images and
 * office documents is a later work item.
 */

export type DocumentType = "text" | "pdf" | "tiff" | "image" | "html" | "postscript" | "office";

const TYPE_BY_EXTENSION: ReadonlyMap<string, DocumentType> = new Map<string, DocumentType>([
  ["txt", "text"],
  ["text", "text"],
  ["pdf", "pdf"],
  ["tif", "tiff"],
  ["tiff", "tiff"],
  ["png", "image"],
  ["jpg", "image"],
  ["jpeg", "image"],
  ["gif", "image"],
  ["bmp", "image"],
  ["webp", "image"],
  ["htm", "html"],
  ["html", "html"],
  ["ps", "postscript"],
  ["eps", "postscript"],
  ["doc", "office"],
  ["docx", "office"],
  ["odt", "office"],
  ["rtf", "office"],
  ["xls", "office"],
  ["xlsx", "office"],
  ["ods", "office"],
  ["ppt", "office"],
  ["pptx", "office"],
]);

/** The document types this Faxline version can render. */
export const RENDERABLE_TYPES: ReadonlySet<DocumentType> = new Set<DocumentType>(["text"]);

/** Person-readable name of each type, as used in messages ("Rendering of PDF documents ..."). */
const TYPE_LABELS: Readonly<Record<DocumentType, string>> = {
  text: "plain text",
  pdf: "PDF",
  tiff: "TIFF",
  image: "image",
  html: "HTML",
  postscript: "PostScript",
  office: "office",
};

/** The extension of a file name (lower case, without the dot), or null if it has none. */
export function fileNameExtension(name: string): string | null {
  const base = name.slice(Math.max(name.lastIndexOf("/"), name.lastIndexOf("\\")) + 1);
  const dot = base.lastIndexOf(".");
  if (dot < 0 || dot === base.length - 1) return null;
  return base.slice(dot + 1).toLowerCase();
}

/** The document type named by the file name's extension; null if it names no known type. */
export function documentTypeFromName(name: string): DocumentType | null {
  const extension = fileNameExtension(name);
  if (extension === null) return null;
  return TYPE_BY_EXTENSION.get(extension) ?? null;
}

/**
 * Why a document cannot be rendered, as one sentence for the client, e.g.
 * "Rendering of PDF documents (invoice.pdf) is not supported yet by this Faxline version;
 * only plain text (.txt) is rendered". `type` null means the extension named no known type.
 */
export function unsupportedTypeMessage(type: DocumentType | null, name: string): string {
  const onlyText = "only plain text (.txt) is rendered";
  if (type === null) {
    const extension = fileNameExtension(name);
    const what =
      extension === null
        ? `The type of document ${name} cannot be determined because its name has no file extension`
        : `The file extension .${extension} of document ${name} names no known document type`;
    return `${what}; this Faxline version needs a known extension and ${onlyText}`;
  }
  return `Rendering of ${TYPE_LABELS[type]} documents (${name}) is not supported yet by this Faxline version; ${onlyText}`;
}

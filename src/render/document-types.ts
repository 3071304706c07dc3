/**
 * Document types: which kind of document a file is, judged by its file name extension.
 *
 * The extension after the last dot of the name's final path segment is looked up
 * case-insensitively (`INVOICE.PDF` is a PDF). Names without an extension, or with one that
 * names no known document type, give `null`; such a document is refused when the job is created.
 *
 * Every known type is rendered (pages/document-pages.ts). Office documents and HTML need
 * LibreOffice and PostScript needs Ghostscript on the node (convert/converter-availability.ts);
 * without them those types fail with document_type_unavailable.
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

/** The types rendered by converting them to a PDF first (LibreOffice, Ghostscript), then as one. */
export function convertsToPdf(type: DocumentType | null): type is "office" | "html" | "postscript" {
  return type === "office" || type === "html" || type === "postscript";
}

/** The extensions Faxline renders, as listed in messages: ".pdf, .tif, ...". */
export const KNOWN_EXTENSIONS: readonly string[] = [...TYPE_BY_EXTENSION.keys()];

/** A person-readable name of a document type ("PDF", "office"). */
export function documentTypeLabel(type: DocumentType): string {
  return TYPE_LABELS[type];
}

/**
 * Why a document's type cannot be determined, as one sentence for the client, e.g.
 * "The file extension .csv of document data.csv names no known document type; Faxline renders
 * .txt, .text, .pdf, ...".
 */
export function unknownTypeMessage(name: string): string {
  const extension = fileNameExtension(name);
  const what =
    extension === null
      ? `The type of document ${name} cannot be determined because its name has no file extension`
      : `The file extension .${extension} of document ${name} names no known document type`;
  return `${what}; Faxline renders ${KNOWN_EXTENSIONS.map((e) => `.${e}`).join(", ")}`;
}

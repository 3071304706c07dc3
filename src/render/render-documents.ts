/**
 * Render stage entry point: turns a fax job's documents into laid-out pages, in document order;
 * fax-image/ then rasterises and encodes those pages.
 *
 * Pure (no I/O). For each document: its type comes from the file name (document-types.ts);
 * plain text is decoded by its charset (decode-text.ts) and laid out (layout-text.ts); every
 * other type fails with `document_type_unsupported`, since this Faxline version rasterises
 * nothing but text. Page counts are those of the real layout. The first failing document ends
 * the stage:
 *  - unknown or not yet renderable type      -> document_type_unsupported
 *  - charset unsupported or bytes invalid     -> document_unreadable
 *  - no printable content (zero pages)        -> document_unreadable
 *  - more than `maxPages` pages in total      -> document_too_large
 */

import { RENDERABLE_TYPES, documentTypeFromName, unsupportedTypeMessage } from "./document-types.ts";
import { decodeText } from "./decode-text.ts";
import { layoutText } from "./layout-text.ts";
import type { TextLayoutOptions, TextPageLayout } from "./layout-text.ts";

export interface DocumentInput {
  name: string;
  charset?: string | null;
  bytes: Uint8Array;
}

export interface RenderedPage {
  /** 0-based index of the document in the input list. */
  documentIndex: number;
  /** 1-based page number within its document. */
  pageInDocument: number;
  /** Printed lines on the page (blank lines between printed ones included). */
  lineCount: number;
}

export type RenderFailureCode = "document_type_unsupported" | "document_unreadable" | "document_too_large";

export type RenderResult =
  | { ok: true; pages: RenderedPage[]; textPages: TextPageLayout[] }
  | { ok: false; reasonCode: RenderFailureCode; documentName: string; message: string };

/**
 * Renders `docs` in order; `textPages[i]` is the layout of `pages[i]`. An empty `docs` list
 * gives zero pages (callers require at least one document before this stage).
 */
export function renderDocuments(
  docs: DocumentInput[],
  options: TextLayoutOptions & { maxPages: number },
): RenderResult {
  const layoutOptions: TextLayoutOptions = { paperFormat: options.paperFormat, resolution: options.resolution };
  const pages: RenderedPage[] = [];
  const textPages: TextPageLayout[] = [];

  for (const [documentIndex, doc] of docs.entries()) {
    const type = documentTypeFromName(doc.name);
    if (type === null || !RENDERABLE_TYPES.has(type)) {
      return {
        ok: false,
        reasonCode: "document_type_unsupported",
        documentName: doc.name,
        message: unsupportedTypeMessage(type, doc.name),
      };
    }

    const decoded = decodeText(doc.bytes, doc.charset);
    if (!decoded.ok) {
      return {
        ok: false,
        reasonCode: "document_unreadable",
        documentName: doc.name,
        message: `${doc.name}: ${decoded.message}`,
      };
    }

    const layout = layoutText(decoded.text, layoutOptions);
    if (layout.pages.length === 0) {
      return {
        ok: false,
        reasonCode: "document_unreadable",
        documentName: doc.name,
        message: `${doc.name} has no printable content`,
      };
    }

    const total = pages.length + layout.pages.length;
    if (total > options.maxPages) {
      return {
        ok: false,
        reasonCode: "document_too_large",
        documentName: doc.name,
        message: `${doc.name} brings the fax to ${total} pages, more than the limit of ${options.maxPages} pages`,
      };
    }

    layout.pages.forEach((page, index) => {
      pages.push({ documentIndex, pageInDocument: index + 1, lineCount: page.lines.length });
      textPages.push(page);
    });
  }

  return { ok: true, pages, textPages };
}

/**
 * Render stage entry point: turns a fax job's documents into its pages, in document order.
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
 *
 * Each page carries `estimatedBytes`, an estimate of its CCITT G4 (T.6) encoded size that the
 * simulated line uses to time the page at 14.4 kbit/s. Model (deliberately simple):
 *   estimatedBytes = round(base + sum over non-empty lines of perLine x max(0.2, chars / columns))
 *   base    = 2048 bytes at HIGH, 1024 at LOW (a blank page: EOLs and white runs only)
 *   perLine =  600 bytes at HIGH,  300 at LOW (a full 80-column line of 10-point text)
 * LOW halves both because it has half the scan lines. Blank lines cost nothing beyond the base.
 */

import { RENDERABLE_TYPES, documentTypeFromName, unsupportedTypeMessage } from "./document-types.ts";
import { decodeText } from "./decode-text.ts";
import { layoutText } from "./layout-text.ts";
import type { Resolution, TextLayoutOptions, TextPageLayout } from "./layout-text.ts";

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
  /** Estimated CCITT G4 encoded size of the page in bytes; see the module comment. */
  estimatedBytes: number;
}

export type RenderFailureCode = "document_type_unsupported" | "document_unreadable" | "document_too_large";

export type RenderResult =
  | { ok: true; pages: RenderedPage[]; textPages: TextPageLayout[] }
  | { ok: false; reasonCode: RenderFailureCode; documentName: string; message: string };

const PAGE_BASE_BYTES: Readonly<Record<Resolution, number>> = { HIGH: 2048, LOW: 1024 };
const FULL_LINE_BYTES: Readonly<Record<Resolution, number>> = { HIGH: 600, LOW: 300 };
const MIN_LINE_FILL = 0.2;

/** Estimated G4 size of one text page; see the module comment for the model. */
export function estimateTextPageBytes(page: TextPageLayout, columns: number, resolution: Resolution): number {
  let bytes = PAGE_BASE_BYTES[resolution];
  for (const line of page.lines) {
    if (line.length === 0) continue;
    const chars = [...line].length;
    const fill = Math.min(1, Math.max(MIN_LINE_FILL, chars / columns));
    bytes += FULL_LINE_BYTES[resolution] * fill;
  }
  return Math.round(bytes);
}

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
      pages.push({
        documentIndex,
        pageInDocument: index + 1,
        lineCount: page.lines.length,
        estimatedBytes: estimateTextPageBytes(page, layout.columns, options.resolution),
      });
      textPages.push(page);
    });
  }

  return { ok: true, pages, textPages };
}

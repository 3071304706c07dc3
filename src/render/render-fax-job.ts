/**
 * Renders a fax job's fax images: the documents, cover page, overlay and header line of a job
 * become one TIFF-F (CCITT G4) per distinct rendering, with the encoded size and a preflight of
 * every page. Pure apart from converter subprocesses (LibreOffice, Ghostscript); the node runs it
 * in a worker thread (fax-image/fax-image-worker.ts), never on the event loop of the API.
 *
 * Two passes:
 *  1. Every document page is rendered (pages/document-pages.ts), made bilevel and G4-encoded
 *     (fax-image/encode-fax-page.ts). The page limit is checked as pages arrive, so a huge
 *     document stops early. When nothing is drawn onto the pages later (no header, no overlay),
 *     these encodings are final; otherwise the bilevel pixels are kept packed (1 bit per pixel,
 *     about 0.5 MB per A4 page at HIGH) for the second pass.
 *  2. Recipients are grouped into variants: recipients whose pages come out identical (same
 *     cover page text, and the same header where it names the recipient with %# or %K) share
 *     one image. For each variant the cover page is rendered first, then every page gets its
 *     overlay (overlay/overlay-pages.ts decides which) and header line, and is encoded.
 *
 * The header's date and time are those of `header.time` (the moment the job is rendered), the
 * same on every page and on every attempt, so a retry sends the same pages.
 *
 * With `suppressBlankPages` (mail-to-fax's setting, jobs.suppress_blank_pages), the first pass
 * leaves out document pages that are blank (preflight/blank-page.ts), judged on their pixels
 * before the header line and overlay are drawn; everything after (page numbers in the header,
 * the cover page's page count, the page limit, the pages reported) counts only the pages kept.
 * A job left with no page at all fails with document_blank: an empty fax is never sent.
 */
import { coverPageProperties, fillCoverTemplate, formatCoverPageDate } from "./cover/cover-template.ts";
import { officeToPdf } from "./convert/libreoffice-to-pdf.ts";
import { encodeG4Page } from "./fax-image/encode-g4-page.ts";
import { encodeFaxPage, g4Bytes } from "./fax-image/encode-fax-page.ts";
import { unpackBilevel, type PackedBilevel } from "./fax-image/packed-bilevel.ts";
import { readTiffPages } from "./fax-image/tiff-structure.ts";
import { writeTiffF, type G4Page } from "./fax-image/write-tiff-f.ts";
import { formatHeader } from "./header/format-header.ts";
import { headerPrints, parseHeaderTemplate, type HeaderTemplate } from "./header/header-template.ts";
import { applyOverlay, overlaidPages, type OverlayMode } from "./overlay/overlay-pages.ts";
import { asPdf, documentPages } from "./pages/document-pages.ts";
import { openPdfDocument, pdfPages } from "./pages/pdf-pages.ts";
import type { PageHelperPool, SharedPdf } from "./page-helpers/page-helper-pool.ts";
import { documentTypeFromName } from "./document-types.ts";
import { preparePage, type PreparedPage, type PreparePageMode } from "./prepare-page.ts";
import {
  DocumentRenderError,
  pageGeometry,
  type DocumentInput,
  type GreyPage,
  type PageGeometry,
  type PaperFormat,
  type RenderLimits,
  type Resolution,
} from "./pages/grey-page.ts";
import { headerBandRows, preflightFromCounts, type PagePreflight } from "./preflight/page-preflight.ts";
import { blankPageRule } from "./preflight/blank-page.ts";
import type { RenderFailureCode } from "./render-failure.ts";
import type { ToneMode } from "./fax-image/tone-mode.ts";

export interface HeaderSpec {
  /** renderingOptions.header (or the account's default header), already checked at intake. */
  template: string;
  csid: string;
  /** Zone for dates and times unless the header names one with %tz=. */
  timeZone: string;
  /** The instant the header shows, epoch ms. */
  time: number;
}

export interface CoverSpec {
  /** The template's markup: an SVG page, or an HTML page (rendered through LibreOffice). */
  kind: "svg" | "html";
  /** Template source; null: the built-in default cover page. */
  content: string | null;
  /** The instant shown as the cover page's date (the renderer-supplied `Date` key), epoch ms. */
  time: number;
  timeZone: string;
}

export interface OverlaySpec {
  /** The overlay document (its first page is the overlay). */
  document: DocumentInput;
  mode: OverlayMode;
}

export interface RecipientSpec {
  id: string;
  /** The recipient's number as the report shows it (%# and the cover's ToFaxNum default). */
  number: string;
  /** The recipient's properties (cover page placeholders, %K). */
  properties: Readonly<Record<string, string>>;
}

export interface PreflightOptions {
  lineBitsPerSecond: number;
  largePageSeconds: number;
}

export interface FaxJobRenderInput {
  documents: DocumentInput[];
  paperFormat: PaperFormat;
  resolution: Resolution;
  header: HeaderSpec | null;
  cover: CoverSpec | null;
  overlay: OverlaySpec | null;
  recipients: RecipientSpec[];
  limits: RenderLimits;
  preflight?: PreflightOptions;
  /** renderingOptions.toneMode; AUTO when absent. */
  toneMode?: ToneMode;
  /** Leave blank document pages out (preflight/blank-page.ts); false when absent. */
  suppressBlankPages?: boolean;
}

export interface FaxImageVariant {
  /** The recipients (RecipientSpec.id) this image is for. */
  recipientIds: string[];
  /** TIFF-F, one image per page. */
  tiff: Buffer;
  /** G4-encoded bytes of each page, in page order. */
  pageSizes: number[];
  preflight: PagePreflight[];
}

export type FaxJobRenderResult =
  /** `blankPagesLeftOut`: document pages left out as blank (always 0 without suppressBlankPages). */
  | { ok: true; images: FaxImageVariant[]; blankPagesLeftOut: number }
  | { ok: false; reasonCode: RenderFailureCode; documentName: string; message: string };

export const DEFAULT_PREFLIGHT: PreflightOptions = { lineBitsPerSecond: 14_400, largePageSeconds: 90 };

/** The property %K prints: the recipient's `HeaderPersonalization` property (any case), else `ToName`. */
export function headerPersonalisation(properties: Readonly<Record<string, string>>): string {
  const byKey = (wanted: string): string | undefined =>
    Object.entries(properties).find(([key]) => key.toLowerCase() === wanted.toLowerCase())?.[1];
  return byKey("HeaderPersonalization") ?? byKey("ToName") ?? "";
}

interface DocumentPage {
  /** Index of the document in the job; null for the cover page. */
  documentIndex: number | null;
  /** The final encoding, when nothing is drawn onto the page later. */
  g4: G4Page | null;
  /** The bilevel pixels, when a header or overlay is drawn later. */
  packed: PackedBilevel | null;
  /** The preflight of the final encoding (null until the second pass encodes the page). */
  preflight: PagePreflight | null;
}

export interface RenderFaxJobOptions {
  /** Threads that share the pages of long PDFs (page-helpers/); without, pages render one after another. */
  pageHelpers?: PageHelperPool;
}

export async function renderFaxJob(input: FaxJobRenderInput, options: RenderFaxJobOptions = {}): Promise<FaxJobRenderResult> {
  if (input.recipients.length === 0) throw new RangeError("a fax job needs at least one recipient to render for");
  const geometry = pageGeometry(input.paperFormat, input.resolution);
  const preflightOptions = { headerBandPx: geometry.headerBandPx, ...(input.preflight ?? DEFAULT_PREFLIGHT) };
  const bandRows = headerBandRows({ height: geometry.heightPx }, preflightOptions);
  const header = input.header === null ? null : parseHeaderOrThrow(input.header.template);
  const drawsLater = header !== null || input.overlay !== null;
  const coverPages = input.cover === null ? 0 : 1;

  let current = "";
  try {
    const pages: DocumentPage[] = [];
    const mode: PreparePageMode = {
      drawsLater,
      bandRows,
      toneMode: input.toneMode ?? "AUTO",
      blankPages: input.suppressBlankPages === true ? blankPageRule(geometry) : null,
    };
    let blankPagesLeftOut = 0;
    const add = (documentIndex: number, prepared: PreparedPage): void => {
      current = input.documents[documentIndex]!.name;
      // Blank pages count toward the limit too: leaving them out never lets a job through that
      // would be refused without it (and a document of endless blank pages is not read to its end).
      if (pages.length + blankPagesLeftOut + coverPages + 1 > input.limits.maxPages) {
        throw new DocumentRenderError(
          "document_too_large",
          `${current} brings the fax to more than the limit of ${input.limits.maxPages} ${input.limits.maxPages === 1 ? "page" : "pages"}${blankPagesLeftOut > 0 ? ` (blank pages count too)` : ""}`,
        );
      }
      if (prepared.kind === "blank") {
        blankPagesLeftOut++;
        return;
      }
      pages.push(
        prepared.kind === "final"
          ? { documentIndex, g4: prepared.g4, packed: null, preflight: preflightFromCounts(prepared.counts, prepared.g4, g4Bytes(prepared.g4), preflightOptions) }
          : { documentIndex, g4: null, packed: prepared.packed, preflight: null },
      );
    };
    for (let documentIndex = 0; documentIndex < input.documents.length; ) {
      const doc = input.documents[documentIndex]!;
      current = doc.name;
      // PDFs that follow each other are shared with the page helpers as one sequence of pages.
      const { run, failure } =
        (options.pageHelpers?.helperCount ?? 0) === 0 ? { run: [], failure: null } : await openPdfRun(input.documents.slice(documentIndex), geometry, input.limits);
      if (run.length > 0) {
        try {
          const first = documentIndex;
          const turn = (document: number): void => {
            current = input.documents[first + document]!.name;
          };
          for await (const { document, page } of options.pageHelpers!.preparePages(run, geometry, input.limits, mode, turn)) add(first + document, page);
        } finally {
          for (const { local } of run) local.close();
        }
        documentIndex += run.length;
      }
      if (failure !== null) {
        // The PDF after the run cannot be opened: it fails now, at its turn, as it would alone.
        current = input.documents[documentIndex]!.name;
        throw failure.error;
      }
      if (run.length > 0) continue;
      for await (const prepared of preparedPages(doc, geometry, input.limits, mode, options.pageHelpers)) add(documentIndex, prepared);
      documentIndex++;
    }

    if (pages.length + coverPages === 0 && blankPagesLeftOut > 0) {
      const names = input.documents.map((d) => d.name).join(", ");
      return {
        ok: false,
        reasonCode: "document_blank",
        documentName: input.documents.length === 1 ? input.documents[0]!.name : "",
        message: `Every page is blank (${blankPagesLeftOut} ${blankPagesLeftOut === 1 ? "page" : "pages"} of ${names}), and blank pages are left out: there is nothing to fax`,
      };
    }

    current = input.overlay?.document.name ?? "";
    const overlay = input.overlay === null ? null : await overlayPage(input.overlay.document, geometry, input.limits);
    const totalPages = pages.length + coverPages;
    const overlaid =
      input.overlay === null ? null : overlaidPages(input.overlay.mode, [...(coverPages ? [{ documentIndex: null }] : []), ...pages]);

    const images: FaxImageVariant[] = [];
    current = "the cover page";
    // The cover page and header line draw with the canvas (and SVG covers with sharp), loaded
    // only for jobs that have them.
    const coverDefaults = input.cover === null ? null : await import("./cover/default-cover-template.ts");
    const headerDrawing = header === null ? null : await import("./header/draw-header-line.ts");
    for (const variant of variantsOf(input, header, totalPages, coverDefaults)) {
      current = "the cover page";
      const encoded: G4Page[] = [];
      const preflight: PagePreflight[] = [];
      const finish = async (pixels: Uint8Array, pageIndex: number): Promise<void> => {
        const page: GreyPage = { width: geometry.widthPx, height: geometry.heightPx, data: pixels, tone: "text" };
        if (overlay !== null && overlaid?.[pageIndex] === true) applyOverlay(page, overlay);
        if (header !== null && input.header !== null) {
          const values = headerValues(input.header, variant.recipient, pageIndex + 1, totalPages);
          headerDrawing!.drawHeaderLines(page, formatHeader(header, values, { defaultTimeZone: input.header.timeZone }), geometry);
        }
        const { g4, counts } = encodeG4Page(page.data, { width: page.width, height: page.height }, bandRows);
        encoded.push(g4);
        preflight.push(preflightFromCounts(counts, page, g4Bytes(g4), preflightOptions));
      };
      if (variant.coverMarkup !== null && input.cover !== null) {
        const cover = await coverPage(input.cover.kind, variant.coverMarkup, geometry, input.limits);
        const bilevel = encodeFaxPage(cover, 0, { toneMode: input.toneMode ?? "AUTO" });
        await finish(bilevel.pixels, 0);
      }
      for (const [index, page] of pages.entries()) {
        current = input.documents[page.documentIndex ?? 0]?.name ?? "";
        if (page.g4 !== null && page.preflight !== null) {
          encoded.push(page.g4);
          preflight.push(page.preflight);
        } else if (page.packed !== null) {
          await finish(unpackBilevel(page.packed), index + coverPages);
        }
      }
      const tiff = writeTiffF(encoded, { xDpi: geometry.xDpi, yDpi: geometry.yDpi });
      images.push({ recipientIds: variant.recipientIds, tiff, pageSizes: readTiffPages(tiff).map((p) => p.encodedBytes), preflight });
    }
    return { ok: true, images, blankPagesLeftOut };
  } catch (err) {
    if (err instanceof DocumentRenderError) return { ok: false, reasonCode: err.reasonCode, documentName: current, message: err.message };
    throw err;
  }
}

/**
 * A run of PDFs shared with the page helpers as one sequence holds at most this many documents,
 * and their bytes (each thread copies them into its PDFium memory, which does not shrink) at most
 * MAX_PDF_RUN_BYTES unless one document alone is larger. Each document open on a thread also
 * holds a page buffer there (about 4 MB at HIGH) once a page of it is rendered, until it is done.
 */
const MAX_PDF_RUN = 8;
const MAX_PDF_RUN_BYTES = 32 * 1024 * 1024;

/**
 * The PDFs at the start of `docs`, opened, up to the first document that is not a PDF (by name:
 * documents that need converting are converted one at a time, at their turn), up to the limits
 * above, or up to one that cannot be opened: `failure` then holds its error, for its turn.
 */
async function openPdfRun(docs: readonly DocumentInput[], geometry: PageGeometry, limits: RenderLimits): Promise<{ run: SharedPdf[]; failure: { error: unknown } | null }> {
  const run: SharedPdf[] = [];
  let bytes = 0;
  for (const doc of docs) {
    if (run.length === MAX_PDF_RUN || documentTypeFromName(doc.name) !== "pdf") break;
    bytes += doc.bytes.length;
    if (run.length > 0 && bytes > MAX_PDF_RUN_BYTES) break;
    try {
      run.push({ doc, local: await openPdfDocument(doc, geometry, limits) });
    } catch (error) {
      return { run, failure: { error } };
    }
  }
  return { run, failure: null };
}

/**
 * The prepared pages of one document (prepare-page.ts), in order. A PDF (or a document converted
 * to one) is rendered page by page into one reused buffer, its pages shared with the page
 * helpers where there are any; other documents page by page here.
 */
async function* preparedPages(
  doc: DocumentInput,
  geometry: PageGeometry,
  limits: RenderLimits,
  mode: PreparePageMode,
  helpers: PageHelperPool | undefined,
): AsyncGenerator<PreparedPage> {
  const pdf = await asPdf(doc, limits);
  if (pdf === null) {
    for await (const grey of documentPages(doc, geometry, limits)) yield preparePage(grey, mode);
    return;
  }
  const local = await openPdfDocument(pdf, geometry, limits);
  try {
    if (helpers !== undefined) for await (const { page } of helpers.preparePages([{ doc: pdf, local }], geometry, limits, mode)) yield page;
    else for (let index = 0; index < local.pageCount; index++) yield local.usePage(index, (grey) => preparePage(grey, mode));
  } finally {
    local.close();
  }
}

function parseHeaderOrThrow(text: string): HeaderTemplate {
  const parsed = parseHeaderTemplate(text);
  // Intake refuses a bad header with 400; one that reaches rendering is a fault of Faxline.
  if (!parsed.ok) throw new Error(`the header line was accepted but does not parse: ${parsed.message}`);
  return parsed.template;
}

function headerValues(spec: HeaderSpec, recipient: RecipientSpec, page: number, totalPages: number) {
  return {
    time: spec.time,
    page,
    totalPages,
    recipientNumber: recipient.number,
    csid: spec.csid,
    personalisation: headerPersonalisation(recipient.properties),
  };
}

interface Variant {
  recipientIds: string[];
  /** A recipient of the variant, whose values fill the header and cover page. */
  recipient: RecipientSpec;
  /** The filled cover page markup, or null without a cover page. */
  coverMarkup: string | null;
}

/** Groups the recipients by what their pages show. */
function variantsOf(input: FaxJobRenderInput, header: HeaderTemplate | null, totalPages: number, coverDefaults: CoverDefaults | null): Variant[] {
  const byKey = new Map<string, Variant>();
  const printsNumber = header !== null && headerPrints(header, "#");
  const printsPersonalisation = header !== null && headerPrints(header, "K");
  for (const recipient of input.recipients) {
    const coverMarkup = input.cover === null || coverDefaults === null ? null : fillCover(input.cover, recipient, input.paperFormat, totalPages, coverDefaults);
    const key = JSON.stringify([
      coverMarkup,
      printsNumber ? recipient.number : null,
      printsPersonalisation ? headerPersonalisation(recipient.properties) : null,
    ]);
    const known = byKey.get(key);
    if (known) known.recipientIds.push(recipient.id);
    else byKey.set(key, { recipientIds: [recipient.id], recipient, coverMarkup });
  }
  return [...byKey.values()];
}

/**
 * The cover page markup for one recipient: the template filled with the recipient's properties
 * and the renderer-supplied keys (cover/cover-template.ts coverPageProperties: `Date`, `Pages`,
 * `ToFaxNum`). The built-in default template gets its values fitted to its boxes first.
 */
type CoverDefaults = typeof import("./cover/default-cover-template.ts");

function fillCover(cover: CoverSpec, recipient: RecipientSpec, paperFormat: PaperFormat, totalPages: number, { defaultCoverProperties, defaultCoverTemplate }: CoverDefaults): string {
  const submitted = Object.entries(recipient.properties).map(([key, value]) => ({ key, value }));
  const properties = coverPageProperties(submitted, {
    recipientNumber: recipient.number,
    pageCount: totalPages,
    date: formatCoverPageDate(new Date(cover.time), cover.timeZone),
  });
  const template = cover.content ?? defaultCoverTemplate(paperFormat);
  const values = cover.content === null ? defaultCoverProperties(properties, paperFormat) : properties;
  const filled = fillCoverTemplate(template, values, cover.kind === "svg" ? "xml" : "html");
  if (!filled.ok) throw new DocumentRenderError("document_unreadable", `The cover page cannot be filled for ${recipient.number}: ${filled.message}`);
  return filled.text;
}

async function coverPage(kind: CoverSpec["kind"], markup: string, geometry: PageGeometry, limits: RenderLimits): Promise<GreyPage> {
  if (kind === "svg") {
    try {
      return await (await import("./cover/render-cover-page.ts")).renderSvgCoverPage(markup, geometry);
    } catch (err) {
      throw new DocumentRenderError("document_unreadable", `The cover page template cannot be rendered: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  const pdf = await officeToPdf({ name: "cover-page.html", bytes: Buffer.from(markup, "utf8") }, limits);
  for await (const page of pdfPages({ name: "cover-page.html", bytes: pdf }, geometry, limits)) return page;
  throw new DocumentRenderError("document_unreadable", "The cover page template rendered to no page");
}

/** The overlay: the first page of its document, bilevel. */
async function overlayPage(doc: DocumentInput, geometry: PageGeometry, limits: RenderLimits): Promise<GreyPage> {
  for await (const page of documentPages(doc, geometry, limits)) {
    const { pixels } = encodeFaxPage({ ...page, tone: "text" });
    return { width: page.width, height: page.height, data: pixels, tone: "text" };
  }
  throw new DocumentRenderError("document_unreadable", `The overlay ${doc.name} has no page`);
}

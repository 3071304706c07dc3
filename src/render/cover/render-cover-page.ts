/**
 * Rasterises SVG cover pages (the built-in default, or an installed SVG template after filling)
 * into a GreyPage of the job's geometry, with sharp (libvips + librsvg/pango, system fonts).
 *
 * Geometry: the SVG is the sheet of paper. It is drawn onto the paper's pixels, round(paper
 * width x 204) wide (A4 1687, LETTER 1734) and geometry.heightPx high, and the paper is centred
 * on the 1728-pixel scan line as text pages are: A4 leaves 21 white pixels left and 20 right,
 * LETTER loses 3 pixels either side. The fax pixel is not square (204 dpi across, 196 or 98
 * lines/inch down), so:
 *   - an SVG with a viewBox gets width/height set to exactly those pixels and
 *     preserveAspectRatio="none" (its own width, height and preserveAspectRatio are replaced):
 *     the viewBox is stretched onto the paper, one render at the final size (~100 ms for A4 HIGH);
 *   - an SVG without a viewBox is rendered at its own size scaled to the paper width (librsvg
 *     counts px and user units as device pixels and mm/in at 72 dpi here) and then resized to the
 *     paper's pixels, so it too fills the paper.
 * Transparent areas are white. The result is grey (anti-aliased) with tone "text": the fax image
 * stage thresholds it.
 *
 * External references: sharp hands librsvg the SVG as a buffer, without a base URL, and
 * librsvg then loads no external resource at all (checked with sharp 0.35.5 / librsvg 2.63:
 * <image> and <use> with http:, file:, absolute and relative paths, XInclude, CSS @import and
 * url() paint servers fetch and read nothing and draw nothing; external XML entities are not
 * loaded — the document fails to parse; only data: URLs are drawn). That is what keeps a
 * template from reading files or reaching the network, so SVGs must only ever be passed to sharp
 * as a buffer, never as a file path (with a path librsvg may load files next to it). On top of
 * that, renderSvgCoverPage refuses SVGs with such references (findExternalSvgReference), so a
 * template author learns that the logo will not appear instead of getting a page without it;
 * pictures must be embedded as data: URLs. The external DTD of a DOCTYPE (Inkscape and
 * Illustrator write the SVG 1.1 one) is harmless and allowed: it is never loaded.
 *
 * An SVG that cannot be used (refused, or one librsvg cannot parse) throws CoverPageRenderError
 * with a message a person can act on; the caller maps it to the job's failure.
 */
import sharp from "sharp";
import { FAX_X_DPI, PAPER_INCHES, whitePage, type GreyPage, type PageGeometry } from "../pages/grey-page.ts";
import { fillCoverTemplate } from "./cover-template.ts";
import { defaultCoverProperties, defaultCoverTemplate } from "./default-cover-template.ts";

/** A cover page that cannot be rendered, with a message a person can act on. */
export class CoverPageRenderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CoverPageRenderError";
  }
}

/** Rasterises an SVG cover page to exactly the geometry; see the module comment. */
export async function renderSvgCoverPage(svg: string, geometry: PageGeometry): Promise<GreyPage> {
  const reference = findExternalSvgReference(svg);
  if (reference !== null) {
    throw new CoverPageRenderError(
      `The cover page SVG refers to an external resource (${reference}); external files and URLs are never loaded: embed pictures as data: URLs`,
    );
  }
  const paperWidthPx = Math.round(PAPER_INCHES[geometry.paperFormat].width * FAX_X_DPI);
  const paperHeightPx = geometry.heightPx;

  const sized = sizeRootElement(svg, paperWidthPx, paperHeightPx);
  try {
    const input = Buffer.from(sized ?? svg, "utf8");
    let density = 72;
    if (sized === null) {
      const intrinsic = await sharp(input, { density: 72 }).metadata();
      if (!intrinsic.width || !intrinsic.height) throw new Error("the SVG has no size");
      density = Math.min(Math.max((72 * paperWidthPx) / intrinsic.width, 1), 100_000);
    }
    const { data, info } = await sharp(input, { density })
      .resize(paperWidthPx, paperHeightPx, { fit: "fill" })
      .flatten({ background: "#ffffff" })
      .toColourspace("b-w")
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.width !== paperWidthPx || info.height !== paperHeightPx || info.channels !== 1) {
      throw new Error(`rendered ${info.width}x${info.height}x${info.channels} instead of ${paperWidthPx}x${paperHeightPx}x1`);
    }
    return placeOnScanLine(data, paperWidthPx, geometry);
  } catch (error) {
    const detail = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new CoverPageRenderError(`The cover page SVG cannot be rendered: ${detail}`);
  }
}

/**
 * Fills the built-in default cover template with `properties` (coverPageProperties in
 * cover-template.ts) and renders it.
 */
export async function renderDefaultCoverPage(properties: Readonly<Record<string, string>>, geometry: PageGeometry): Promise<GreyPage> {
  return renderSvgCoverTemplate(defaultCoverTemplate(geometry.paperFormat), defaultCoverProperties(properties, geometry.paperFormat), geometry);
}

/**
 * Fills an SVG cover template (placeholders escaped for XML) and renders it; a missing required
 * property or a template error throws CoverPageRenderError.
 */
export async function renderSvgCoverTemplate(
  template: string,
  properties: Readonly<Record<string, string>>,
  geometry: PageGeometry,
): Promise<GreyPage> {
  const filled = fillCoverTemplate(template, properties, "xml");
  if (!filled.ok) throw new CoverPageRenderError(filled.message);
  return renderSvgCoverPage(filled.text, geometry);
}

/** Copies the paper's pixels, centred, into a white page of the full scan line width. */
function placeOnScanLine(paper: Uint8Array, paperWidthPx: number, geometry: PageGeometry): GreyPage {
  const page = whitePage(geometry, "text");
  const offset = Math.round((geometry.widthPx - paperWidthPx) / 2); // negative: paper wider than the line
  const from = Math.max(0, -offset);
  const to = Math.min(paperWidthPx, geometry.widthPx - offset);
  for (let y = 0; y < geometry.heightPx; y++) {
    const row = y * paperWidthPx;
    page.data.set(paper.subarray(row + from, row + to), y * geometry.widthPx + offset + from);
  }
  return page;
}

/**
 * The SVG with its root element sized to width x height pixels and preserveAspectRatio="none",
 * or null when it has no viewBox (or no recognisable root <svg> start tag).
 */
function sizeRootElement(svg: string, width: number, height: number): string | null {
  const start = rootStartTag(svg);
  if (start === null) return null;
  const tag = svg.slice(start.from, start.to);
  if (!/\sviewBox\s*=/.test(tag)) return null;
  const body = tag
    .replace(/\s(?:width|height|preserveAspectRatio)\s*=\s*(?:"[^"]*"|'[^']*')/g, "")
    .replace(/^<svg/, `<svg width="${width}" height="${height}" preserveAspectRatio="none"`);
  return svg.slice(0, start.from) + body + svg.slice(start.to);
}

/** The root <svg ...> start tag's position, after the prolog (XML declaration, comments, PIs, DOCTYPE). */
function rootStartTag(svg: string): { from: number; to: number } | null {
  let i = 0;
  const text = svg;
  while (i < text.length) {
    const lt = text.indexOf("<", i);
    if (lt < 0) return null;
    if (text.startsWith("<?", lt)) {
      const end = text.indexOf("?>", lt + 2);
      if (end < 0) return null;
      i = end + 2;
    } else if (text.startsWith("<!--", lt)) {
      const end = text.indexOf("-->", lt + 4);
      if (end < 0) return null;
      i = end + 3;
    } else if (text.startsWith("<!DOCTYPE", lt) || text.startsWith("<!doctype", lt)) {
      const subset = text.indexOf("[", lt);
      const close = text.indexOf(">", lt);
      if (close < 0) return null;
      if (subset >= 0 && subset < close) {
        const end = text.indexOf("]", subset);
        if (end < 0) return null;
        const after = text.indexOf(">", end);
        if (after < 0) return null;
        i = after + 1;
      } else {
        i = close + 1;
      }
    } else if (/^<svg[\s>/]/.test(text.slice(lt, lt + 5))) {
      const end = tagEnd(text, lt + 4);
      return end < 0 ? null : { from: lt, to: end };
    } else {
      return null;
    }
  }
  return null;
}

/** Index just past the `>` of a start tag, skipping quoted attribute values; -1 if none. */
function tagEnd(text: string, from: number): number {
  let quote: string | null = null;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (quote !== null) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === ">") {
      return i + 1;
    }
  }
  return -1;
}

const XINCLUDE_NAMESPACE = "http://www.w3.org/2001/XInclude";

/**
 * The first reference of the SVG to something outside it, described for a message, or null:
 * href / xlink:href attributes other than "#fragment" and data: URLs, url(...) in attributes
 * and style sheets other than url(#fragment) and data:, CSS @import, XInclude, and entity
 * declarations (external entities are refused by librsvg anyway; internal ones could hide a
 * reference from this check). Character references in attribute values are decoded first.
 */
export function findExternalSvgReference(svg: string): string | null {
  if (/<!ENTITY/i.test(svg)) return "an <!ENTITY> declaration";
  if (svg.includes(XINCLUDE_NAMESPACE)) return "XInclude";
  for (const match of svg.matchAll(/[\s"'](?:[\w.-]+:)?href\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
    const value = decodeCharacterReferences(match[1] ?? match[2] ?? "").trim();
    if (!isLocalReference(value)) return `href="${shorten(value)}"`;
  }
  const decoded = decodeCharacterReferences(svg);
  if (/@import/i.test(decoded)) return "CSS @import";
  for (const match of decoded.matchAll(/url\s*\(\s*(?:"([^"]*)"|'([^']*)'|([^)]*))\)/gi)) {
    const value = (match[1] ?? match[2] ?? match[3] ?? "").trim();
    if (!isLocalReference(value)) return `url(${shorten(value)})`;
  }
  return null;
}

function isLocalReference(value: string): boolean {
  return value === "" || value.startsWith("#") || /^data:/i.test(value);
}

function shorten(value: string): string {
  return value.length > 80 ? `${value.slice(0, 77)}...` : value;
}

const NAMED_REFERENCES: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function decodeCharacterReferences(text: string): string {
  return text.replace(/&(#[0-9]+|#x[0-9a-fA-F]+|[A-Za-z]+);/g, (whole, ref: string) => {
    if (ref.startsWith("#x") || ref.startsWith("#X")) return safeCodePoint(Number.parseInt(ref.slice(2), 16)) ?? whole;
    if (ref.startsWith("#")) return safeCodePoint(Number.parseInt(ref.slice(1), 10)) ?? whole;
    return NAMED_REFERENCES[ref] ?? whole;
  });
}

function safeCodePoint(code: number): string | null {
  return Number.isFinite(code) && code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : null;
}

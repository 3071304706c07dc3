/**
 * The built-in default cover page: an SVG template (cover-template.ts placeholders, xml escape)
 * laid out like a classic "Telefax" cover sheet, in black lines and text only (fax is bilevel,
 * grey fills would come out as dither noise), with large type that survives 98 lines/inch.
 *
 *   Telefax                                   heading
 *   ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━
 *   To:        ToName (bold)
 *   Company:   ToCompanyName
 *   Fax:       ToFaxNum
 *   ────────────────────────────────────────
 *   From:      FromName (bold)
 *   Company:   FromCompanyName
 *   Phone:     FromTelNum
 *   ────────────────────────────────────────
 *   Date:      Date              Pages:  Pages (incl. cover page)
 *   ────────────────────────────────────────
 *   Subject:   SubjectTitle (bold, up to 2 lines)
 *   ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━
 *   SubjectText (the message, wrapped; 20 lines on A4, 17 on LETTER)
 *   ────────────────────────────────────────
 *   footer: "If you did not receive all pages, please contact the sender."
 *
 * Keys: the contract's FromName, FromCompanyName, FromTelNum, ToName, ToCompanyName, ToFaxNum,
 * SubjectTitle, SubjectText, and the renderer-supplied Date and Pages (coverPageProperties in
 * cover-template.ts also supplies ToFaxNum from the recipient number). Every placeholder is
 * optional (`${Key!}`): a recipient without properties gets a cover page with empty fields.
 *
 * SVG text does not wrap, and line breaks in a value are shown as spaces; so the values are
 * fitted before filling (defaultCoverProperties): one-line fields have their whitespace (line
 * breaks included) collapsed to single spaces and are cut with an ellipsis where they would
 * leave their box; SubjectTitle is wrapped at word boundaries into up to 2 lines and SubjectText
 * into the message area, its line breaks kept (an empty line stays empty), words longer than a
 * line broken between characters, tabs as four spaces; what does not fit is cut after the last
 * line with an ellipsis. The template therefore has one placeholder per line, SubjectTitleLine1
 * and 2 and SubjectTextLine1 to N, each inside its own <text>. Widths are measured with the
 * same font (DejaVu Sans, through @napi-rs/canvas) that librsvg/pango renders with, with a few
 * percent to spare for hinting differences.
 *
 * The template is in millimetres (viewBox = the paper) with preserveAspectRatio="none", so one
 * template serves 196 and 98 lines/inch; render-cover-page.ts rasterises it.
 */
import { createCanvas, GlobalFonts, type SKRSContext2D } from "@napi-rs/canvas";
import type { PaperFormat } from "../pages/grey-page.ts";
import { ensureGlyphs } from "../fonts/system-fonts.ts";

const MM_PER_INCH = 25.4;
const PAPER_MM: Readonly<Record<PaperFormat, { width: number; height: number }>> = {
  A4: { width: 210, height: 297 },
  LETTER: { width: 8.5 * MM_PER_INCH, height: 11 * MM_PER_INCH },
};

const FONT_FAMILY = "DejaVu Sans";
const FONT_FILES = {
  regular: "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
  bold: "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
} as const;
/** Fraction of a box's width that fitted text may take (pango's and skia's widths differ slightly). */
const WIDTH_SLACK = 0.96;
const ELLIPSIS = "\u2026";

/** Sizes in mm. */
const MARGIN_X = 18;
const HEADING_SIZE = 14;
const HEADING_BASELINE = 27;
const HEAVY_RULE = 1.5;
const THIN_RULE = 0.5;
const LABEL_SIZE = 4.2;
const VALUE_SIZE = 5.2;
const LABEL_WIDTH = 30;
const ROW_PITCH = 8;
const MESSAGE_SIZE = 4.6;
const MESSAGE_PITCH = 6.6;
const FOOTER_SIZE = 3.4;
const BOTTOM_MARGIN = 12;
const SUBJECT_TITLE_LINES = 2;
/** The Pages field: label 74 mm left of the right margin, value after it, then PAGES_SUFFIX. */
const PAGES_LABEL_FROM_RIGHT = 74;
const PAGES_LABEL_WIDTH = 20;
const PAGES_SUFFIX = " (incl. cover page)";
const PAGES_SUFFIX_WIDTH = 38;

export interface TextBox {
  /** Left edge and width, mm. */
  x: number;
  width: number;
  /** Baseline of the first line, mm; further lines follow every `pitch` mm. */
  baseline: number;
  pitch: number;
  fontSize: number;
  bold: boolean;
  lines: number;
}

/** Where the default cover page puts each field, in mm from the paper's top left corner. */
export interface DefaultCoverLayout {
  paper: { width: number; height: number };
  heading: { baseline: number; fontSize: number };
  fields: Readonly<Record<OneLineField, TextBox>>;
  subjectTitle: TextBox;
  message: TextBox;
  /** The thin rule above the footer; the message area ends above it. */
  footerRule: number;
  footerBaseline: number;
}

type OneLineField = "ToName" | "ToCompanyName" | "ToFaxNum" | "FromName" | "FromCompanyName" | "FromTelNum" | "Date" | "Pages";

/** The layout of the default cover page on a paper format. */
export function defaultCoverLayout(paperFormat: PaperFormat): DefaultCoverLayout {
  const paper = PAPER_MM[paperFormat];
  const right = paper.width - MARGIN_X;
  const valueX = MARGIN_X + LABEL_WIDTH;
  const valueWidth = right - valueX;
  const pagesLabelX = right - PAGES_LABEL_FROM_RIGHT;
  const oneLine = (baseline: number, bold = false, x = valueX, width = valueWidth): TextBox => ({
    x,
    width,
    baseline,
    pitch: ROW_PITCH,
    fontSize: VALUE_SIZE,
    bold,
    lines: 1,
  });
  const toTop = HEADING_BASELINE + 17; // first To row
  const fromTop = toTop + 3 * ROW_PITCH + 7;
  const dateRow = fromTop + 3 * ROW_PITCH + 7;
  const subjectRow = dateRow + ROW_PITCH + 7;
  const messageTop = subjectRow + SUBJECT_TITLE_LINES * ROW_PITCH + 9;
  const footerBaseline = paper.height - BOTTOM_MARGIN;
  const footerRule = footerBaseline - 6;
  const messageLines = Math.floor((footerRule - 4 - messageTop) / MESSAGE_PITCH) + 1;
  return {
    paper,
    heading: { baseline: HEADING_BASELINE, fontSize: HEADING_SIZE },
    fields: {
      ToName: oneLine(toTop, true),
      ToCompanyName: oneLine(toTop + ROW_PITCH),
      ToFaxNum: oneLine(toTop + 2 * ROW_PITCH),
      FromName: oneLine(fromTop, true),
      FromCompanyName: oneLine(fromTop + ROW_PITCH),
      FromTelNum: oneLine(fromTop + 2 * ROW_PITCH),
      Date: oneLine(dateRow, false, valueX, pagesLabelX - 4 - valueX),
      Pages: oneLine(dateRow, false, pagesLabelX + PAGES_LABEL_WIDTH, right - pagesLabelX - PAGES_LABEL_WIDTH - PAGES_SUFFIX_WIDTH),
    },
    subjectTitle: { ...oneLine(subjectRow, true), lines: SUBJECT_TITLE_LINES, pitch: ROW_PITCH - 1 },
    message: {
      x: MARGIN_X,
      width: right - MARGIN_X,
      baseline: messageTop,
      pitch: MESSAGE_PITCH,
      fontSize: MESSAGE_SIZE,
      bold: false,
      lines: messageLines,
    },
    footerRule,
    footerBaseline,
  };
}

/**
 * The default cover page template for a paper format. Fill it (fillCoverTemplate, escape "xml")
 * with defaultCoverProperties(...), not with the raw properties: its message and subject areas
 * have one placeholder per line.
 */
export function defaultCoverTemplate(paperFormat: PaperFormat): string {
  const layout = defaultCoverLayout(paperFormat);
  const { width, height } = layout.paper;
  const left = MARGIN_X;
  const right = width - MARGIN_X;
  const f = layout.fields;
  const n = (value: number) => String(Math.round(value * 100) / 100);
  const rule = (y: number, thickness: number) =>
    `<rect x="${n(left)}" y="${n(y - thickness / 2)}" width="${n(right - left)}" height="${n(thickness)}"/>`;
  const label = (text: string, baseline: number, x = left) =>
    `<text x="${n(x)}" y="${n(baseline)}" class="label">${text}</text>`;
  const value = (box: TextBox, key: string, baseline = box.baseline) =>
    `<text x="${n(box.x)}" y="${n(baseline)}" class="${box.bold ? "strong" : "value"}" font-size="${n(box.fontSize)}">\${${key}!}</text>`;
  const lines = (box: TextBox, keyPrefix: string) =>
    Array.from({ length: box.lines }, (_, i) => value(box, `${keyPrefix}${i + 1}`, box.baseline + i * box.pitch));
  const between = (a: number, b: number) => (a + b) / 2;
  const toTop = f.ToName.baseline;
  const fromTop = f.FromName.baseline;
  const dateRow = f.Date.baseline;
  const subjectRow = layout.subjectTitle.baseline;
  const pagesLabelX = f.Pages.x - PAGES_LABEL_WIDTH;

  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg" width="${n(width)}mm" height="${n(height)}mm" viewBox="0 0 ${n(width)} ${n(height)}" preserveAspectRatio="none">`,
    `<title>Telefax cover page</title>`,
    `<style>`,
    `text { font-family: "${FONT_FAMILY}", sans-serif; fill: #000; }`,
    `.label { font-size: ${LABEL_SIZE}px; font-weight: bold; }`,
    `.value { font-weight: normal; }`,
    `.strong { font-weight: bold; }`,
    `.message { font-size: ${MESSAGE_SIZE}px; font-weight: normal; }`,
    `.footer { font-size: ${FOOTER_SIZE}px; font-weight: normal; }`,
    `</style>`,
    `<rect x="0" y="0" width="${n(width)}" height="${n(height)}" fill="#fff"/>`,
    `<text x="${n(left)}" y="${n(HEADING_BASELINE)}" font-size="${HEADING_SIZE}" font-weight="bold" letter-spacing="0.6">Telefax</text>`,
    rule(HEADING_BASELINE + 6, HEAVY_RULE),
    label("To:", toTop),
    value(f.ToName, "ToName"),
    label("Company:", toTop + ROW_PITCH),
    value(f.ToCompanyName, "ToCompanyName"),
    label("Fax:", toTop + 2 * ROW_PITCH),
    value(f.ToFaxNum, "ToFaxNum"),
    rule(between(toTop + 2 * ROW_PITCH, fromTop) - 1.5, THIN_RULE),
    label("From:", fromTop),
    value(f.FromName, "FromName"),
    label("Company:", fromTop + ROW_PITCH),
    value(f.FromCompanyName, "FromCompanyName"),
    label("Phone:", fromTop + 2 * ROW_PITCH),
    value(f.FromTelNum, "FromTelNum"),
    rule(between(fromTop + 2 * ROW_PITCH, dateRow) - 1.5, THIN_RULE),
    label("Date:", dateRow),
    value(f.Date, "Date"),
    label("Pages:", dateRow, pagesLabelX),
    `<text x="${n(f.Pages.x)}" y="${n(dateRow)}" class="value" font-size="${n(VALUE_SIZE)}" xml:space="preserve">\${Pages!}<tspan font-size="${n(LABEL_SIZE)}">${PAGES_SUFFIX}</tspan></text>`,
    rule(between(dateRow, subjectRow) - 1.5, THIN_RULE),
    label("Subject:", subjectRow),
    ...lines(layout.subjectTitle, "SubjectTitleLine"),
    rule(layout.message.baseline - 9.5, HEAVY_RULE),
    ...Array.from(
      { length: layout.message.lines },
      (_, i) =>
        `<text x="${n(layout.message.x)}" y="${n(layout.message.baseline + i * layout.message.pitch)}" class="message" xml:space="preserve">\${SubjectTextLine${i + 1}!}</text>`,
    ),
    rule(layout.footerRule, THIN_RULE),
    `<text x="${n(left)}" y="${n(layout.footerBaseline)}" class="footer">If you did not receive all pages or cannot read them, please contact the sender.</text>`,
    `</svg>`,
    ``,
  ].join("\n");
}

/**
 * The properties the default template is filled with: `properties` (coverPageProperties in
 * cover-template.ts: the recipient's properties and the renderer-supplied Date, Pages, ToFaxNum)
 * with every shown value fitted into its box, and SubjectTitle and SubjectText wrapped into the
 * line keys SubjectTitleLine1..2 and SubjectTextLine1..N.
 */
export function defaultCoverProperties(properties: Readonly<Record<string, string>>, paperFormat: PaperFormat): Record<string, string> {
  const layout = defaultCoverLayout(paperFormat);
  const get = (key: string): string => (Object.hasOwn(properties, key) ? (properties[key] ?? "") : "");
  const fitted: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [key, box] of Object.entries(layout.fields)) {
    fitted[key] = fitOneLine(collapseWhitespace(get(key)), box);
  }
  wrapText(collapseWhitespace(get("SubjectTitle")), layout.subjectTitle).forEach((line, i) => {
    fitted[`SubjectTitleLine${i + 1}`] = line;
  });
  wrapText(get("SubjectText"), layout.message).forEach((line, i) => {
    fitted[`SubjectTextLine${i + 1}`] = line;
  });
  return fitted;
}

function collapseWhitespace(text: string): string {
  return text.replace(/\s+/gu, " ").trim();
}

let measureContext: SKRSContext2D | null = null;
const MEASURE_PX = 100;

function measurer(): SKRSContext2D {
  if (measureContext !== null) return measureContext;
  for (const [weight, file] of Object.entries(FONT_FILES)) {
    if (GlobalFonts.registerFromPath(file, `Faxline Cover ${weight}`) === null) {
      throw new Error(`The cover page font ${file} cannot be loaded; install the Debian package fonts-dejavu-core`);
    }
  }
  measureContext = createCanvas(1, 1).getContext("2d");
  return measureContext;
}

/** Width of `text` in mm at the box's font. */
function textWidth(text: string, box: Pick<TextBox, "fontSize" | "bold">): number {
  const ctx = measurer();
  ensureGlyphs(text, [box.bold ? FONT_FILES.bold : FONT_FILES.regular]);
  ctx.font = `${MEASURE_PX}px "Faxline Cover ${box.bold ? "bold" : "regular"}"`;
  return (ctx.measureText(text).width / MEASURE_PX) * box.fontSize;
}

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

function splitGraphemes(text: string): string[] {
  return Array.from(graphemes.segment(text), (s) => s.segment);
}

/** The longest prefix of `text` (whole graphemes) that fits `width` with `suffix` after it. */
function fittingPrefix(text: string, width: number, box: TextBox, suffix = ""): string {
  const parts = splitGraphemes(text);
  let low = 0;
  let high = parts.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (textWidth(parts.slice(0, mid).join("") + suffix, box) <= width) low = mid;
    else high = mid - 1;
  }
  return parts.slice(0, low).join("");
}

function fitOneLine(text: string, box: TextBox): string {
  const width = box.width * WIDTH_SLACK;
  if (textWidth(text, box) <= width) return text;
  return fittingPrefix(text, width, box, ELLIPSIS).trimEnd() + ELLIPSIS;
}

/**
 * Wraps `text` into at most box.lines lines of box.width: line breaks kept, words broken only
 * when longer than a line, an ellipsis at the end of the last line when text is left over.
 */
export function wrapText(text: string, box: TextBox): string[] {
  const width = box.width * WIDTH_SLACK;
  const paragraphs = text
    .replace(/\r\n?|[\u2028\u2029\u0085]/g, "\n")
    .replace(/\t/g, "    ")
    .replace(/\s+$/u, "")
    .split("\n");
  const lines: string[] = [];
  let overflow = false;
  for (const paragraph of paragraphs) {
    if (lines.length >= box.lines) {
      overflow = true;
      break;
    }
    const wrapped = wrapParagraph(paragraph.trimEnd(), width, box);
    for (const line of wrapped) {
      if (lines.length >= box.lines) {
        overflow = true;
        break;
      }
      lines.push(line);
    }
    if (overflow) break;
  }
  if (overflow && lines.length > 0) {
    const last = lines.length - 1;
    lines[last] = fittingPrefix(lines[last] ?? "", width, box, ELLIPSIS).trimEnd() + ELLIPSIS;
  }
  return lines;
}

function wrapParagraph(paragraph: string, width: number, box: TextBox): string[] {
  if (paragraph === "") return [""];
  const lines: string[] = [];
  // Words with the spaces before them: leading indentation stays with the first word.
  const words = paragraph.match(/\s*\S+/gu) ?? [];
  let line = "";
  for (const word of words) {
    const candidate = line + word;
    if (textWidth(candidate, box) <= width) {
      line = candidate;
      continue;
    }
    if (line !== "") {
      lines.push(line);
      line = "";
    }
    // A wrapped word loses the spaces before it; the paragraph's first word keeps its indentation.
    let rest = lines.length > 0 ? word.trimStart() : word;
    // A word longer than a line is broken between characters.
    while (textWidth(rest, box) > width) {
      let head = fittingPrefix(rest, width, box);
      if (head === "") head = splitGraphemes(rest)[0] ?? rest;
      lines.push(head);
      rest = rest.slice(head.length);
    }
    line = rest;
  }
  if (line !== "") lines.push(line);
  return lines;
}

/**
 * The corpus of `npm run bench:render` (bench/render-bench.ts): five documents of the kinds a fax
 * service gets, generated deterministically from a seed (the same seed gives byte-identical files
 * on the same versions of pdf-lib, sharp and its libvips), so no binary test data lives in the
 * repository.
 *
 *  1. `letter`  — a business letter, one page, vector text (PDF): letterhead, address block,
 *                 four paragraphs of 10.5-point Helvetica, a drawn signature, a footer.
 *  2. `invoice` — an invoice, two pages (PDF): grey boxes behind the address and totals, a table
 *                 with a dark grey header row (white bold text) and light grey zebra rows.
 *  3. `scan`    — a scanned letter: a grey raster at 200 dpi of a text page (serif text of ink
 *                 grey, not black), on paper with uneven tone and noise, a scanner-lid shadow at one
 *                 edge and a skew of 0.8 degrees; as PNG, and the same pixels wrapped in an A4 PDF.
 *  4. `photo`   — a continuous-tone picture (sky gradient, sun, hills, a lake with reflection, a
 *                 house, trees, grain): as JPEG (2000 x 1500), and wrapped in an A4 PDF.
 *  5. `report`  — a 20-page report (PDF): headings and text on every page, a table every four
 *                 pages, a vector bar-and-line chart every four pages, a grey photo every four pages.
 *  6. `long`    — the same report made 200 pages long (issue 15's long document); not part of the
 *                 25-page `corpus` job of the bench.
 *
 * Run alone to write the corpus: `node --import tsx bench/render-corpus.ts DIR [--seed N]`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { PDFDocument, StandardFonts, rgb, grayscale, type PDFFont, type PDFPage, type PDFImage } from "pdf-lib";
import sharp from "sharp";

export interface CorpusItem {
  /** Short name: letter, invoice, scan, photo, report, long. */
  name: string;
  /** What the document is, for the bench's table. */
  title: string;
  /** Pages of the PDF. */
  pages: number;
  /** The PDF (every item has one; Ghostscript reads these). */
  pdf: string;
  /** The same content as an image file (scan: PNG, photo: JPEG), or null. */
  image: string | null;
}

const A4: [number, number] = [595.28, 841.89];
const MM = 72 / 25.4;

/** mulberry32: a small seeded PRNG, uniform in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

type Random = () => number;

const WORDS = (
  "the of and to in for on with as by at from that this which our your we you will be are is has have not can all " +
  "delivery order invoice payment account contract agreement customer supplier service quarter review report period " +
  "please kindly confirm attached following regarding request receipt due date amount total balance reference number " +
  "meeting schedule proposal budget forecast revenue costs margin growth market region team project phase milestone " +
  "approval signature document copy original transmission office department management board decision change update " +
  "shipment warehouse stock goods quality inspection certificate insurance claim terms conditions notice period " +
  "renewal extension price discount rate interest transfer bank statement transaction settlement overdue reminder " +
  "further information questions contact telephone available monday tuesday wednesday thursday friday morning week " +
  "month year annual result figure table chart summary analysis recommendation measure risk compliance audit"
).split(" ");

function sentence(next: Random): string {
  const n = 7 + Math.floor(next() * 12);
  const words = Array.from({ length: n }, () => WORDS[Math.floor(next() * WORDS.length)]!);
  if (next() < 0.25) words.splice(Math.floor(next() * n), 0, String(Math.floor(next() * 9000) + 100));
  const text = words.join(" ");
  return `${text[0]!.toUpperCase()}${text.slice(1)}${next() < 0.1 ? "?" : "."}`;
}

function paragraph(next: Random, sentences: number): string {
  return Array.from({ length: sentences }, () => sentence(next)).join(" ");
}

function wrap(text: string, font: PDFFont, size: number, maxWidth: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    const candidate = line === "" ? word : `${line} ${word}`;
    if (line !== "" && font.widthOfTextAtSize(candidate, size) > maxWidth) {
      lines.push(line);
      line = word;
    } else line = candidate;
  }
  if (line !== "") lines.push(line);
  return lines;
}

/** Draws wrapped text from `y` downwards; returns the y below the last line. */
function drawParagraph(page: PDFPage, text: string, x: number, y: number, width: number, font: PDFFont, size: number, leading = size * 1.35): number {
  for (const line of wrap(text, font, size, width)) {
    page.drawText(line, { x, y, size, font, color: rgb(0, 0, 0) });
    y -= leading;
  }
  return y;
}

const euro = (value: number) => `${value.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })} EUR`;

async function newPdf(title: string): Promise<PDFDocument> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  doc.setTitle(title);
  doc.setProducer("Faxline bench corpus");
  return doc;
}

const savePdf = async (doc: PDFDocument) => Buffer.from(await doc.save({ useObjectStreams: true }));

// ---------------------------------------------------------------------------------------------
// 1. Letter

async function letterPdf(next: Random): Promise<Buffer> {
  const doc = await newPdf("Letter");
  const regular = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  const page = doc.addPage(A4);
  const left = 25 * MM;
  const width = A4[0] - left - 20 * MM;
  // Letterhead: a vector logo and the company name.
  page.drawCircle({ x: left + 14, y: A4[1] - 48, size: 14, color: grayscale(0.2) });
  page.drawRectangle({ x: left + 8, y: A4[1] - 54, width: 12, height: 12, color: grayscale(1) });
  page.drawText("Nordwind Logistik GmbH", { x: left + 36, y: A4[1] - 54, size: 18, font: bold });
  page.drawLine({ start: { x: left, y: A4[1] - 72 }, end: { x: left + width, y: A4[1] - 72 }, thickness: 0.8 });
  page.drawText("Nordwind Logistik GmbH · Hafenstraße 12 · 20457 Hamburg", { x: left, y: A4[1] - 140, size: 7, font: regular });
  let y = A4[1] - 160;
  for (const line of ["Müller & Söhne KG", "Einkauf / Frau Erika Mustermann", "Industrieweg 7", "80939 München"]) {
    page.drawText(line, { x: left, y, size: 10.5, font: regular });
    y -= 14;
  }
  page.drawText("Hamburg, 21 November 2026", { x: left + width - regular.widthOfTextAtSize("Hamburg, 21 November 2026", 10.5), y: A4[1] - 260, size: 10.5, font: regular });
  page.drawText("Your order 4711-2026 of 14 November: delivery schedule", { x: left, y: A4[1] - 290, size: 11, font: bold });
  y = A4[1] - 320;
  page.drawText("Dear Ms Mustermann,", { x: left, y, size: 10.5, font: regular });
  y -= 24;
  for (let p = 0; p < 4; p++) y = drawParagraph(page, paragraph(next, 2 + Math.floor(next() * 3)), left, y, width, regular, 10.5) - 10;
  page.drawText("Kind regards,", { x: left, y: y - 6, size: 10.5, font: regular });
  // A signature: one stroke of Bézier curves.
  page.drawSvgPath("M 0 0 C 10 -30 20 25 30 -5 S 45 -25 55 0 C 60 10 70 -20 80 -2 S 100 8 115 -6 L 130 -4", {
    x: left + 4,
    y: y - 40,
    borderWidth: 1.2,
    borderColor: rgb(0.05, 0.05, 0.3),
  });
  page.drawText("Jan Petersen, Head of Dispatch", { x: left, y: y - 74, size: 10.5, font: regular });
  page.drawLine({ start: { x: left, y: 22 * MM }, end: { x: left + width, y: 22 * MM }, thickness: 0.5, color: grayscale(0.4) });
  page.drawText("Registered office Hamburg · HRB 123456 · VAT DE123456789 · IBAN DE89 3704 0044 0532 0130 00 · Tel. +49 40 123456-0", {
    x: left,
    y: 17 * MM,
    size: 7,
    font: regular,
    color: grayscale(0.3),
  });
  return savePdf(doc);
}

// ---------------------------------------------------------------------------------------------
// 2. Invoice

async function invoicePdf(next: Random): Promise<Buffer> {
  const doc = await newPdf("Invoice");
  const regular = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  const left = 20 * MM;
  const width = A4[0] - 2 * left;
  const columns = [
    { title: "Pos.", x: 0, w: 30 },
    { title: "Article", x: 30, w: 70 },
    { title: "Description", x: 100, w: 215 },
    { title: "Qty", x: 315, w: 40 },
    { title: "Unit price", x: 355, w: 60 },
    { title: "Amount", x: 415, w: width - 415 },
  ];
  const rows = Array.from({ length: 42 }, (_, i) => {
    const qty = 1 + Math.floor(next() * 40);
    const price = Math.round((2 + next() * 400) * 100) / 100;
    const words = 3 + Math.floor(next() * 4);
    const description = Array.from({ length: words }, () => WORDS[Math.floor(next() * WORDS.length)]!).join(" ");
    return { pos: String(i + 1), article: `A-${String(10000 + Math.floor(next() * 89999))}`, description, qty, price, amount: qty * price };
  });
  const rowHeight = 15;
  const header = (page: PDFPage, pageNo: number) => {
    page.drawRectangle({ x: left, y: A4[1] - 70, width: 60, height: 30, color: grayscale(0.25) });
    page.drawText("NW", { x: left + 12, y: A4[1] - 62, size: 18, font: bold, color: grayscale(1) });
    page.drawText("Nordwind Logistik GmbH", { x: left + 70, y: A4[1] - 58, size: 14, font: bold });
    page.drawText(`Invoice 2026-11-0815 · page ${pageNo} of 2`, { x: left + 70, y: A4[1] - 72, size: 9, font: regular });
  };
  const tableHead = (page: PDFPage, y: number) => {
    page.drawRectangle({ x: left, y: y - 4, width, height: rowHeight + 2, color: grayscale(0.35) });
    for (const c of columns) page.drawText(c.title, { x: left + c.x + 4, y, size: 9, font: bold, color: grayscale(1) });
  };
  const tableRow = (page: PDFPage, y: number, r: (typeof rows)[number], index: number) => {
    if (index % 2 === 1) page.drawRectangle({ x: left, y: y - 4, width, height: rowHeight, color: grayscale(0.9) });
    const right = (text: string, c: (typeof columns)[number]) =>
      page.drawText(text, { x: left + c.x + c.w - 4 - regular.widthOfTextAtSize(text, 9), y, size: 9, font: regular });
    page.drawText(r.pos, { x: left + 4, y, size: 9, font: regular });
    page.drawText(r.article, { x: left + columns[1]!.x + 4, y, size: 9, font: regular });
    page.drawText(r.description, { x: left + columns[2]!.x + 4, y, size: 9, font: regular });
    right(String(r.qty), columns[3]!);
    right(euro(r.price), columns[4]!);
    right(euro(r.amount), columns[5]!);
  };

  const first = doc.addPage(A4);
  header(first, 1);
  // Address and invoice data in grey boxes.
  first.drawRectangle({ x: left, y: A4[1] - 200, width: 230, height: 90, color: grayscale(0.92) });
  let y = A4[1] - 128;
  for (const line of ["Müller & Söhne KG", "Accounts payable", "Industrieweg 7", "80939 München", "Germany"]) {
    first.drawText(line, { x: left + 10, y, size: 10, font: regular });
    y -= 14;
  }
  first.drawRectangle({ x: left + width - 200, y: A4[1] - 200, width: 200, height: 90, color: grayscale(0.8) });
  y = A4[1] - 128;
  for (const [k, v] of [["Invoice no.", "2026-11-0815"], ["Date", "21 Nov 2026"], ["Customer no.", "K-20931"], ["Order", "4711-2026"], ["Due", "21 Dec 2026"]]) {
    first.drawText(k!, { x: left + width - 190, y, size: 10, font: bold });
    first.drawText(v!, { x: left + width - 100, y, size: 10, font: regular });
    y -= 14;
  }
  first.drawText("Invoice", { x: left, y: A4[1] - 240, size: 16, font: bold });
  y = drawParagraph(first, paragraph(next, 2), left, A4[1] - 262, width, regular, 10);
  y -= 10;
  tableHead(first, y);
  y -= rowHeight + 2;
  let index = 0;
  for (; index < 28; index++) {
    tableRow(first, y, rows[index]!, index);
    y -= rowHeight;
  }
  first.drawText("Continued on page 2", { x: left + width - regular.widthOfTextAtSize("Continued on page 2", 9), y: y - 8, size: 9, font: regular });

  const second = doc.addPage(A4);
  header(second, 2);
  y = A4[1] - 120;
  tableHead(second, y);
  y -= rowHeight + 2;
  for (; index < rows.length; index++) {
    tableRow(second, y, rows[index]!, index);
    y -= rowHeight;
  }
  const net = rows.reduce((s, r) => s + r.amount, 0);
  const totals: [string, string][] = [
    ["Net amount", euro(net)],
    ["VAT 19 %", euro(net * 0.19)],
    ["Total due", euro(net * 1.19)],
  ];
  y -= 20;
  second.drawRectangle({ x: left + width - 220, y: y - 40, width: 220, height: 58, color: grayscale(0.85) });
  for (const [i, [k, v]] of totals.entries()) {
    const font = i === 2 ? bold : regular;
    second.drawText(k, { x: left + width - 210, y, size: 10, font });
    second.drawText(v, { x: left + width - 10 - font.widthOfTextAtSize(v, 10), y, size: 10, font });
    y -= 18;
  }
  y -= 30;
  second.drawText("Payment", { x: left, y, size: 11, font: bold });
  y = drawParagraph(second, `${paragraph(next, 3)} IBAN DE89 3704 0044 0532 0130 00, BIC COBADEFFXXX.`, left, y - 16, width, regular, 10);
  second.drawRectangle({ x: left, y: 30 * MM, width, height: 14 * MM, borderColor: grayscale(0.3), borderWidth: 0.8, color: grayscale(0.95) });
  second.drawText("Please quote the invoice number with your payment. Thank you for your order.", { x: left + 8, y: 36 * MM, size: 9, font: bold });
  return savePdf(doc);
}

// ---------------------------------------------------------------------------------------------
// 3. Scanned letter (raster)

const SCAN_DPI = 200;
const SCAN_W = Math.round((210 / 25.4) * SCAN_DPI); // 1654
const SCAN_H = Math.round((297 / 25.4) * SCAN_DPI); // 2339

const xmlEscape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** Smooth noise: bilinear interpolation of a coarse random grid (paper tone, uneven lighting). */
function smoothField(next: Random, width: number, height: number, cell: number): Float32Array {
  const gw = Math.ceil(width / cell) + 2;
  const gh = Math.ceil(height / cell) + 2;
  const grid = Float32Array.from({ length: gw * gh }, () => next() * 2 - 1);
  const out = new Float32Array(width * height);
  for (let y = 0; y < height; y++) {
    const gy = y / cell;
    const y0 = Math.floor(gy);
    const fy = gy - y0;
    for (let x = 0; x < width; x++) {
      const gx = x / cell;
      const x0 = Math.floor(gx);
      const fx = gx - x0;
      const a = grid[y0 * gw + x0]!;
      const b = grid[y0 * gw + x0 + 1]!;
      const c = grid[(y0 + 1) * gw + x0]!;
      const d = grid[(y0 + 1) * gw + x0 + 1]!;
      out[y * width + x] = (a * (1 - fx) + b * fx) * (1 - fy) + (c * (1 - fx) + d * fx) * fy;
    }
  }
  return out;
}

/** Approximately normal noise from three uniforms (Irwin–Hall), mean 0, deviation about 1. */
const gauss = (next: Random) => (next() + next() + next() - 1.5) * 2;

async function scanPng(next: Random): Promise<Buffer> {
  const px = (mm: number) => Math.round((mm / 25.4) * SCAN_DPI);
  const size = 30; // about 11 pt at 200 dpi
  const lines: string[] = [];
  let y = px(30);
  const text = (x: number, t: string, extra = "") => lines.push(`<text x="${x}" y="${y}" ${extra}>${xmlEscape(t)}</text>`);
  text(px(25), "STADTWERKE MUSTERHAUSEN", `font-size="52" font-weight="bold"`);
  y += 44;
  text(px(25), "Kundenservice · Postfach 1120 · 12345 Musterhausen", `font-size="22"`);
  y += px(28);
  for (const l of ["Herrn", "Max Mustermann", "Lindenallee 23", "12345 Musterhausen"]) {
    text(px(25), l);
    y += 38;
  }
  y += 30;
  text(px(25), "Ihre Jahresabrechnung 2026, Vertragskonto 4100 2233 01", `font-weight="bold"`);
  y += 60;
  text(px(25), "Sehr geehrter Herr Mustermann,");
  y += 56;
  const maxChars = 84;
  for (let p = 0; p < 6 && y < SCAN_H - px(40); p++) {
    const words = paragraph(next, 3 + Math.floor(next() * 3)).split(" ");
    let line = "";
    for (const w of words) {
      if ((line + " " + w).length > maxChars) {
        text(px(25), line);
        y += 40;
        line = w;
      } else line = line === "" ? w : `${line} ${w}`;
    }
    text(px(25), line);
    y += 64;
  }
  text(px(25), "Mit freundlichen Grüßen");
  y += 120;
  text(px(25), "Ihr Kundenservice");
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${SCAN_W}" height="${SCAN_H}">
<rect width="100%" height="100%" fill="#fff"/>
<g font-family="DejaVu Serif, Liberation Serif, serif" font-size="${size}" fill="#000" xml:space="preserve">${lines.join("\n")}</g>
</svg>`;
  const ink = await sharp(Buffer.from(svg)).greyscale().blur(0.7).raw().toBuffer();
  // Paper: a light grey tone that drifts over the sheet, grain noise; ink is dark grey, not black.
  const tone = smoothField(next, SCAN_W, SCAN_H, 300);
  const pixels = Buffer.alloc(SCAN_W * SCAN_H);
  for (let i = 0; i < pixels.length; i++) {
    const paper = 233 + 7 * tone[i]! + 4 * gauss(next);
    const coverage = 1 - ink[i]! / 255;
    const inkTone = 55 + 6 * gauss(next);
    const x = i % SCAN_W;
    const shadow = x < 26 ? (26 - x) * 5 : 0; // the scanner lid's shadow along the left edge
    pixels[i] = Math.max(0, Math.min(255, Math.round(paper * (1 - coverage) + inkTone * coverage - shadow)));
  }
  // Dust: a few dark specks.
  for (let k = 0; k < 60; k++) {
    const cx = Math.floor(next() * SCAN_W);
    const cy = Math.floor(next() * SCAN_H);
    const r = 1 + Math.floor(next() * 2);
    for (let dy = -r; dy <= r; dy++) for (let dx = -r; dx <= r; dx++) if (cy + dy >= 0 && cy + dy < SCAN_H && cx + dx >= 0 && cx + dx < SCAN_W) pixels[(cy + dy) * SCAN_W + cx + dx] = 90;
  }
  // Skew of the sheet on the glass; the uncovered corners are the lid's grey.
  return sharp(pixels, { raw: { width: SCAN_W, height: SCAN_H, channels: 1 } })
    .rotate(0.8, { background: { r: 205, g: 205, b: 205 } })
    .extract({ left: 17, top: 12, width: SCAN_W, height: SCAN_H })
    .greyscale()
    .withMetadata({ density: SCAN_DPI })
    .png({ compressionLevel: 9 })
    .toBuffer();
}

// ---------------------------------------------------------------------------------------------
// 4. Photo (continuous tone)

async function photoRaw(next: Random, width: number, height: number): Promise<{ data: Buffer; width: number; height: number }> {
  const hills = (base: number, amp: number, phase: number, freq: number) => {
    const pts: string[] = [`M 0 ${height}`];
    for (let x = 0; x <= width; x += width / 40) pts.push(`L ${x.toFixed(1)} ${(base + amp * Math.sin(x * freq + phase) + amp * 0.4 * Math.sin(x * freq * 3.1 + phase * 2)).toFixed(1)}`);
    pts.push(`L ${width} ${height} Z`);
    return pts.join(" ");
  };
  const trees = Array.from({ length: 14 }, () => {
    const x = next() * width;
    const h = height * (0.08 + next() * 0.08);
    const base = height * (0.62 + next() * 0.04);
    return `<path d="M ${x} ${base - h} L ${x - h * 0.3} ${base} L ${x + h * 0.3} ${base} Z" fill="#1f4a2a"/><rect x="${x - 4}" y="${base}" width="8" height="${h * 0.15}" fill="#3b2a1a"/>`;
  }).join("");
  const w = width;
  const h = height;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">
<defs>
  <linearGradient id="sky" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#2a5fa8"/><stop offset="0.55" stop-color="#a9c8e8"/><stop offset="1" stop-color="#f3e2c0"/></linearGradient>
  <radialGradient id="sun"><stop offset="0" stop-color="#fffbe8"/><stop offset="0.4" stop-color="#ffe9a0"/><stop offset="1" stop-color="#ffe9a0" stop-opacity="0"/></radialGradient>
  <linearGradient id="lake" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#6f93b8"/><stop offset="1" stop-color="#20324a"/></linearGradient>
  <linearGradient id="wall" x1="0" y1="0" x2="1" y2="0"><stop offset="0" stop-color="#d9d2c5"/><stop offset="1" stop-color="#8c8478"/></linearGradient>
</defs>
<rect width="${w}" height="${h}" fill="url(#sky)"/>
<circle cx="${w * 0.72}" cy="${h * 0.22}" r="${h * 0.2}" fill="url(#sun)"/>
<path d="${hills(h * 0.45, h * 0.06, 0.3, 0.004)}" fill="#7b8ea3"/>
<path d="${hills(h * 0.55, h * 0.05, 1.7, 0.006)}" fill="#4f6b4a"/>
<path d="${hills(h * 0.62, h * 0.025, 2.9, 0.01)}" fill="#355c33"/>
${trees}
<rect x="0" y="${h * 0.7}" width="${w}" height="${h * 0.3}" fill="url(#lake)"/>
<ellipse cx="${w * 0.72}" cy="${h * 0.78}" rx="${h * 0.06}" ry="${h * 0.012}" fill="#fff6d0" opacity="0.6"/>
<g transform="translate(${w * 0.18} ${h * 0.5})">
  <rect x="0" y="0" width="${w * 0.16}" height="${h * 0.18}" fill="url(#wall)"/>
  <path d="M -20 0 L ${w * 0.08} ${-h * 0.1} L ${w * 0.16 + 20} 0 Z" fill="#7a2e22"/>
  <rect x="${w * 0.02}" y="${h * 0.04}" width="${w * 0.03}" height="${h * 0.04}" fill="#2b2b30"/>
  <rect x="${w * 0.1}" y="${h * 0.04}" width="${w * 0.03}" height="${h * 0.04}" fill="#2b2b30"/>
  <rect x="${w * 0.065}" y="${h * 0.1}" width="${w * 0.03}" height="${h * 0.08}" fill="#4a3020"/>
</g>
</svg>`;
  const { data, info } = await sharp(Buffer.from(svg)).removeAlpha().blur(1.2).raw().toBuffer({ resolveWithObject: true });
  // Grain, and a vignette towards the corners.
  const light = smoothField(next, info.width, info.height, 250);
  for (let y = 0; y < info.height; y++) {
    for (let x = 0; x < info.width; x++) {
      const dx = x / info.width - 0.5;
      const dy = y / info.height - 0.5;
      const vignette = 1 - 0.35 * (dx * dx + dy * dy) * 2;
      const shift = 8 * light[y * info.width + x]!;
      for (let c = 0; c < 3; c++) {
        const i = (y * info.width + x) * 3 + c;
        data[i] = Math.max(0, Math.min(255, Math.round(data[i]! * vignette + shift + 5 * gauss(next))));
      }
    }
  }
  return { data, width: info.width, height: info.height };
}

async function photoJpeg(next: Random): Promise<Buffer> {
  const { data, width, height } = await photoRaw(next, 2000, 1500);
  return sharp(data, { raw: { width, height, channels: 3 } }).jpeg({ quality: 85, mozjpeg: false }).withMetadata({ density: 300 }).toBuffer();
}

/** One A4 page with the image centred inside 12 mm margins. */
async function imagePdf(title: string, embed: (doc: PDFDocument) => Promise<PDFImage>): Promise<Buffer> {
  const doc = await newPdf(title);
  const image = await embed(doc);
  const page = doc.addPage(A4);
  const margin = 12 * MM;
  const scale = Math.min((A4[0] - 2 * margin) / image.width, (A4[1] - 2 * margin) / image.height);
  const w = image.width * scale;
  const h = image.height * scale;
  page.drawImage(image, { x: (A4[0] - w) / 2, y: (A4[1] - h) / 2, width: w, height: h });
  return savePdf(doc);
}

// ---------------------------------------------------------------------------------------------
// 5. 20-page report (6. the same, 200 pages)

async function reportPdf(next: Random, PAGES = 20): Promise<Buffer> {
  const doc = await newPdf("Quarterly report");
  const regular = await doc.embedFont(StandardFonts.TimesRoman);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  const sans = await doc.embedFont(StandardFonts.Helvetica);
  const greyPhoto = await photoRaw(next, 900, 600);
  const greyJpeg = await sharp(greyPhoto.data, { raw: { width: greyPhoto.width, height: greyPhoto.height, channels: 3 } })
    .greyscale()
    .jpeg({ quality: 80 })
    .toBuffer();
  const photo = await doc.embedJpg(greyJpeg);
  const left = 25 * MM;
  const width = A4[0] - 2 * left;

  for (let n = 1; n <= PAGES; n++) {
    const page = doc.addPage(A4);
    page.drawText("Nordwind Logistik GmbH · Quarterly report Q3 2026", { x: left, y: A4[1] - 18 * MM, size: 8, font: sans, color: grayscale(0.35) });
    page.drawLine({ start: { x: left, y: A4[1] - 20 * MM }, end: { x: left + width, y: A4[1] - 20 * MM }, thickness: 0.5, color: grayscale(0.5) });
    const footer = `Page ${n} of ${PAGES}`;
    page.drawText(footer, { x: left + width - sans.widthOfTextAtSize(footer, 8), y: 12 * MM, size: 8, font: sans });
    let y = A4[1] - 32 * MM;
    page.drawText(`${n}. ${sentence(next).replace(/[.?]$/, "").split(" ").slice(0, 5).join(" ")}`, { x: left, y, size: 15, font: bold });
    y -= 26;
    const figure = n % 4; // 1: table, 2: chart, 0: photo, 3: text only
    const textParagraphs = figure === 3 ? 7 : 3;
    for (let p = 0; p < textParagraphs && y > 80 * MM; p++) y = drawParagraph(page, paragraph(next, 3 + Math.floor(next() * 3)), left, y, width, regular, 11) - 8;
    y -= 10;
    if (figure === 1) {
      // A table with grid lines and a shaded header.
      const cols = ["Region", "Q1", "Q2", "Q3", "Q4", "Change"];
      const colW = width / cols.length;
      const rowH = 16;
      page.drawRectangle({ x: left, y: y - rowH + 4, width, height: rowH, color: grayscale(0.85) });
      cols.forEach((c, i) => page.drawText(c, { x: left + i * colW + 4, y: y - 8, size: 9, font: bold }));
      const regions = ["North", "South", "East", "West", "Central", "Benelux", "Nordics", "Alps", "Iberia", "Baltics", "Total"];
      for (const [r, region] of regions.entries()) {
        const ry = y - (r + 1) * rowH;
        page.drawText(region, { x: left + 4, y: ry - 8, size: 9, font: r === regions.length - 1 ? bold : sans });
        for (let c = 1; c < cols.length; c++) {
          const v = c === cols.length - 1 ? `${(next() * 20 - 6).toFixed(1)} %` : (100 + next() * 900).toFixed(0);
          page.drawText(v, { x: left + (c + 1) * colW - 6 - sans.widthOfTextAtSize(v, 9), y: ry - 8, size: 9, font: sans });
        }
      }
      for (let r = 0; r <= regions.length + 1; r++) page.drawLine({ start: { x: left, y: y + 4 - r * rowH }, end: { x: left + width, y: y + 4 - r * rowH }, thickness: 0.5 });
      for (let c = 0; c <= cols.length; c++) page.drawLine({ start: { x: left + c * colW, y: y + 4 }, end: { x: left + c * colW, y: y + 4 - (regions.length + 1) * rowH }, thickness: 0.5 });
      y -= (regions.length + 2) * rowH + 10;
    } else if (figure === 2) {
      // A bar chart with a line series, axes, grid lines and a legend, all vectors.
      const chartH = 220;
      const x0 = left + 30;
      const y0 = y - chartH;
      const cw = width - 40;
      for (let g = 0; g <= 5; g++) {
        const gy = y0 + (g * chartH) / 5;
        page.drawLine({ start: { x: x0, y: gy }, end: { x: x0 + cw, y: gy }, thickness: 0.3, color: grayscale(0.6), dashArray: [2, 2] });
        page.drawText(String(g * 20), { x: left + 4, y: gy - 3, size: 7, font: sans });
      }
      page.drawLine({ start: { x: x0, y: y0 }, end: { x: x0, y: y0 + chartH }, thickness: 1 });
      page.drawLine({ start: { x: x0, y: y0 }, end: { x: x0 + cw, y: y0 }, thickness: 1 });
      const months = 12;
      const slot = cw / months;
      const points: string[] = [];
      for (let m = 0; m < months; m++) {
        const a = 20 + next() * 70;
        const b = 10 + next() * 60;
        page.drawRectangle({ x: x0 + m * slot + 4, y: y0, width: slot / 2 - 4, height: (a / 100) * chartH, color: grayscale(0.3) });
        page.drawRectangle({ x: x0 + m * slot + slot / 2, y: y0, width: slot / 2 - 4, height: (b / 100) * chartH, color: grayscale(0.7) });
        page.drawText(["J", "F", "M", "A", "M", "J", "J", "A", "S", "O", "N", "D"][m]!, { x: x0 + m * slot + slot / 2 - 3, y: y0 - 12, size: 8, font: sans });
        points.push(`${m === 0 ? "M" : "L"} ${(m * slot + slot / 2).toFixed(1)} ${(-(30 + next() * 60) / 100 * chartH).toFixed(1)}`);
      }
      page.drawSvgPath(points.join(" "), { x: x0, y: y0, borderWidth: 1.5, borderColor: rgb(0, 0, 0) });
      page.drawRectangle({ x: x0 + cw - 150, y: y0 + chartH + 6, width: 8, height: 8, color: grayscale(0.3) });
      page.drawText("Shipments", { x: x0 + cw - 138, y: y0 + chartH + 6, size: 8, font: sans });
      page.drawRectangle({ x: x0 + cw - 80, y: y0 + chartH + 6, width: 8, height: 8, color: grayscale(0.7) });
      page.drawText("Returns", { x: x0 + cw - 68, y: y0 + chartH + 6, size: 8, font: sans });
      y = y0 - 30;
    } else if (figure === 0) {
      // A grey photo with a caption.
      const w = width * 0.8;
      const h = (w * photo.height) / photo.width;
      page.drawImage(photo, { x: left + (width - w) / 2, y: y - h, width: w, height: h });
      page.drawText(`Figure ${n / 4}: ${sentence(next)}`.slice(0, 90), { x: left + (width - w) / 2, y: y - h - 14, size: 8, font: sans });
      y -= h + 30;
    }
    for (let p = 0; p < 3 && y > 30 * MM; p++) y = drawParagraph(page, paragraph(next, 2 + Math.floor(next() * 2)), left, y, width, regular, 11) - 8;
  }
  return savePdf(doc);
}

// ---------------------------------------------------------------------------------------------

/** Writes the corpus into `dir` (created if missing) and lists its items. */
export async function generateCorpus(dir: string, seed = 20261121): Promise<CorpusItem[]> {
  mkdirSync(dir, { recursive: true });
  const write = (name: string, bytes: Uint8Array) => {
    const path = join(dir, name);
    writeFileSync(path, bytes);
    return path;
  };
  // Each item has its own sequence, so changing one item leaves the others as they were.
  const items: CorpusItem[] = [];
  items.push({ name: "letter", title: "letter, 1 page, vector text", pages: 1, pdf: write("letter.pdf", await letterPdf(seededRandom(seed + 1))), image: null });
  items.push({ name: "invoice", title: "invoice, 2 pages, grey boxes and shaded table", pages: 2, pdf: write("invoice.pdf", await invoicePdf(seededRandom(seed + 2))), image: null });
  const scan = await scanPng(seededRandom(seed + 3));
  items.push({
    name: "scan",
    title: "scanned letter, 200 dpi grey raster, noise and skew",
    pages: 1,
    pdf: write("scan.pdf", await imagePdf("Scanned letter", (doc) => doc.embedPng(scan))),
    image: write("scan.png", scan),
  });
  const photo = await photoJpeg(seededRandom(seed + 4));
  items.push({
    name: "photo",
    title: "photo, continuous tone, 2000 x 1500 JPEG",
    pages: 1,
    pdf: write("photo.pdf", await imagePdf("Photo", (doc) => doc.embedJpg(photo))),
    image: write("photo.jpg", photo),
  });
  items.push({ name: "report", title: "report, 20 pages: text, tables, vector charts, grey photos", pages: 20, pdf: write("report.pdf", await reportPdf(seededRandom(seed + 5))), image: null });
  items.push({ name: "long", title: "the report at 200 pages", pages: 200, pdf: write("long.pdf", await reportPdf(seededRandom(seed + 6), 200)), image: null });
  return items;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const { values, positionals } = parseArgs({ options: { seed: { type: "string", default: "20261121" } }, allowPositionals: true });
  const dir = positionals[0];
  if (dir === undefined) {
    console.error("usage: node --import tsx bench/render-corpus.ts DIR [--seed N]");
    process.exit(2);
  }
  for (const item of await generateCorpus(dir, Number(values.seed))) console.log(`${item.name.padEnd(8)} ${item.pages} p  ${item.pdf}${item.image ? `  ${item.image}` : ""}  (${item.title})`);
}

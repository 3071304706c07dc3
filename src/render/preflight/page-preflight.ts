/**
 * Preflight of one finished fax page: is it blank, is it so dark that it is probably a bad scan,
 * and how long will it take on the line? The answers become warnings a person can act on before
 * the fax is sent; nothing here stops a job.
 *
 * Input is the page as it will be sent: bilevel, one byte per pixel (0 black, 255 white; any
 * value below 128 counts as black), 1728 pixels per scan line, with the header band at the top,
 * and the size of its CCITT G4 encoding.
 *
 * ## Blank and dark: the share of black pixels below the header band
 *
 * `blackRatio` is the share of black pixels in the scan lines below the header band (the header
 * line is Faxline's own ink and says nothing about the document).
 *
 * - **Blank: `blackRatio` < 0.02 % (`BLANK_MAX_BLACK_RATIO`).** An A4 page at 204 x 196 dpi has
 *   about 3.9 million pixels below the header band; 0.02 % of it is about 780 pixels (390 at
 *   98 lines per inch: the ratio is the same at both resolutions). That is more than the dust
 *   and paper fibres a thresholded scan of an empty sheet keeps (tens of specks of a few pixels
 *   each: 80 specks of 3 x 3 pixels are still blank), and less than any real content: 10-point
 *   Helvetica has about 100 black pixels per character at 196 lines per inch (50 at 98; "Page 2 of
 *   3" rendered by Ghostscript is 804 pixels, 0.021 %), so the limit is about eight characters. A
 *   page holding only a page number (the typical empty last page of a word-processor document) is
 *   reported too, which is what the sender wants to hear about; a signature, a stamp or a line
 *   of text is not. The warning says "looks blank" and gives the share, not that the page is
 *   empty ("is blank" only when there is no black pixel at all).
 * - **Too dark: `blackRatio` > 40 % (`DARK_MIN_BLACK_RATIO`).** Typed and printed pages are 3–12 %
 *   black, and forms or invoices with shaded tables stay below about 25 % after thresholding. Above
 *   40 % the page is a scan of a dark or coloured sheet, an inverted (white-on-black) image, or a
 *   dithered photo darker than mid-grey: all of them are hard to read on the receiving machine and
 *   usually slow to send.
 *
 * ## Time on the line: the worse of the two ways a fax machine can receive the page
 *
 * What the page costs depends on what the far end negotiates in T.30:
 *
 * - **With ECM (T.30 Annex A) and MMR (T.6),** the data sent is the G4 encoding itself in HDLC
 *   frames of 256 bytes: about `encodedBytes x 1.05` (`ECM_OVERHEAD`: 6–7 bytes of address,
 *   control, frame number, checksum and flag per 256-byte frame, 2.7 %, plus HDLC bit stuffing,
 *   about 1.6 % for compressed data).
 * - **Without ECM,** the page goes as T.4 one-dimensional Modified Huffman (MH) — the coding every
 *   fax machine supports, and the largest of MH, MR and MMR. It is typically 2–3 times the G4 size
 *   for text and far more for nearly empty pages (a white scan line costs 29 bits in MH but about
 *   1 bit in G4). Rather than apply a guessed factor to the G4 size, the MH size is counted exactly
 *   from the pixels in the same pass that counts black pixels and codes the page in G4
 *   (fax-image/encode-g4-page.ts): the T.4 code length of every run of every scan line, plus a
 *   12-bit EOL per line and the 6-EOL RTC at the end (`modifiedHuffmanBits`).
 *
 * `estimatedSeconds = max(MH bits, G4 bits x 1.05) / lineBitsPerSecond` — conservative: it assumes
 * the far end may refuse ECM, which many do, and never estimates below what MMR would take. Not
 * counted: fill bits for a minimum scan-line time (0 ms on current machines and with ECM, but 10 or
 * 20 ms per line on old ones, which would add up to 20 s to a nearly blank page at 14 400 bit/s),
 * the per-page T.30 handshake (MPS/MCF, about 1–2 s), ECM retransmissions and a fallback to a lower
 * speed; `lineBitsPerSecond` is the speed the caller assumes (14 400 for V.17).
 *
 * `large` is `estimatedSeconds > largePageSeconds`.
 *
 * ## Warnings
 *
 * Each warning is a sentence without its subject, so that the caller, who knows the page number,
 * prefixes it: `page 3 ${warning}` reads "page 3 looks blank (0.01 % black)", "page 5 is very dark
 * (62 % black): it will take about 95 s to send and may be unreadable", "page 7 is large: it will
 * take about 80 s to send".
 */
import { countPageRuns, type PageRunCounts } from "../fax-image/encode-g4-page.ts";

export interface PagePreflight {
  /** Share of black pixels below the header band, 0–1. */
  blackRatio: number;
  /** Almost no ink below the header band (`blackRatio` < `BLANK_MAX_BLACK_RATIO`). */
  blank: boolean;
  /** So much black that the page is probably a dark or inverted scan (`blackRatio` > `DARK_MIN_BLACK_RATIO`). */
  tooDark: boolean;
  /** Seconds the page's image data takes on the line at `lineBitsPerSecond`, the worse of MH without ECM and MMR with ECM. */
  estimatedSeconds: number;
  /** `estimatedSeconds` > `largePageSeconds`. */
  large: boolean;
  /** Sentences for a person, each to be prefixed with "page N " by the caller; empty for an ordinary page. */
  warnings: string[];
}

export interface PreflightOptions {
  /** Scan lines at the top that hold the header line, left out of the black share. */
  headerBandPx: number;
  /** Line speed the estimate assumes, bit/s (14 400 for V.17). */
  lineBitsPerSecond: number;
  /** Pages estimated to take longer than this many seconds are `large`. */
  largePageSeconds: number;
}

/** At most this share of black pixels below the header band, and the page looks blank (0.02 %). */
export const BLANK_MAX_BLACK_RATIO = 0.0002;
/** More than this share of black pixels below the header band, and the page is too dark (40 %). */
export const DARK_MIN_BLACK_RATIO = 0.4;
/** Data sent with ECM and MMR per byte of G4: HDLC framing of 256-byte frames and bit stuffing. */
export const ECM_OVERHEAD = 1.05;

/**
 * Bits of a bilevel page coded as T.4 one-dimensional Modified Huffman, the coding every fax
 * machine receives without ECM: the code of every run, a 12-bit EOL per scan line and the RTC.
 * Fill bits for a minimum scan-line time are not counted.
 */
export function modifiedHuffmanBits(pixels: Uint8Array, size: { width: number; height: number }): number {
  return countPageRuns(pixels, size, size.height).mhBits;
}

function percent(ratio: number): string {
  const p = ratio * 100;
  if (p > 0 && p < 1) return `${Number(p.toPrecision(1))} %`;
  return `${Math.round(p)} %`;
}

function seconds(value: number): string {
  return `${Math.max(1, Math.round(value))} s`;
}

/** The preflight of a page from its pixels (one scan of its runs, as the G4 encoder makes). */
export function preflightPage(pixels: Uint8Array, size: { width: number; height: number }, encodedBytes: number, options: PreflightOptions): PagePreflight {
  const bandRows = headerBandRows(size, options);
  return preflightFromCounts(countPageRuns(pixels, size, bandRows), size, encodedBytes, options);
}

/**
 * The preflight of a page from the counts its G4 encoding made (encode-g4-page.ts), which must
 * have counted black pixels from the header band's end (`countBlackFrom` = `headerBandPx`).
 */
export function preflightFromCounts(counts: PageRunCounts, size: { width: number; height: number }, encodedBytes: number, options: PreflightOptions): PagePreflight {
  const bandRows = headerBandRows(size, options);
  if (counts.countedFrom !== bandRows) throw new Error(`the page's black pixels were counted from scan line ${counts.countedFrom}, the preflight needs them from ${bandRows}`);
  const { blackPixels: blackBelow, mhBits } = counts;
  const countedPixels = size.width * (size.height - bandRows);
  const blackRatio = countedPixels > 0 ? blackBelow / countedPixels : 0;
  const blank = blackRatio < BLANK_MAX_BLACK_RATIO;
  const tooDark = blackRatio > DARK_MIN_BLACK_RATIO;
  const estimatedSeconds = Math.max(mhBits, encodedBytes * 8 * ECM_OVERHEAD) / options.lineBitsPerSecond;
  const large = estimatedSeconds > options.largePageSeconds;

  const warnings: string[] = [];
  if (blank) warnings.push(blackBelow === 0 ? "is blank" : `looks blank (${percent(blackRatio)} black)`);
  if (tooDark && large) warnings.push(`is very dark (${percent(blackRatio)} black): it will take about ${seconds(estimatedSeconds)} to send and may be unreadable`);
  else if (tooDark) warnings.push(`is very dark (${percent(blackRatio)} black) and may be unreadable`);
  else if (large) warnings.push(`is large: it will take about ${seconds(estimatedSeconds)} to send`);
  return { blackRatio, blank, tooDark, estimatedSeconds, large, warnings };
}

/** The header band's scan lines, within the page. */
export function headerBandRows(size: { height: number }, options: Pick<PreflightOptions, "headerBandPx">): number {
  return Math.min(size.height, Math.max(0, Math.floor(options.headerBandPx)));
}

/**
 * Text decoding: turns the bytes of a plain-text document into a string, by its declared charset.
 *
 * Supported charsets (`SUPPORTED_CHARSETS`, matched case-insensitively, UTF-8 when none is given):
 *  - US-ASCII: bytes 0x00-0x7F only; any higher byte is an error naming its offset.
 *  - UTF-8: strict (`TextDecoder` with `fatal: true`); an invalid sequence is an error naming
 *    the byte offset where it starts. A leading byte order mark is dropped.
 *  - UTF-16: the byte order mark decides the endianness; without one the text is big-endian,
 *    as RFC 2781 section 4.3 prescribes. UTF-16BE / UTF-16LE: fixed endianness, a leading BOM
 *    is dropped. Odd byte counts and unpaired surrogates are errors.
 *  - ISO-8859-1: true Latin-1 (every byte is the code point of the same value, Buffer "latin1"),
 *    not the WHATWG alias that maps this label to windows-1252.
 *  - Windows-1252: Latin-1 except 0x80-0x9F, which map to the WHATWG index-windows-1252 table
 *    below (0x80 is the euro sign). The table is built in because Node's own
 *    `TextDecoder("windows-1252")` decodes that range as Latin-1 in Node 20.18.3+ and 22.13+
 *    (nodejs/node#56542, #60888).
 *
 * A byte order mark decides the encoding whatever the charset says or defaults to (as the WHATWG
 * Encoding standard's decode does): EF BB BF is UTF-8, FF FE UTF-16LE, FE FF UTF-16BE. So a
 * UTF-16 file saved by Windows Notepad decodes although the request names no charset.
 *
 * Failures are returned (`ok: false` with a person-readable message that names the `charset`
 * field and the values it takes), never thrown.
 */

import { Buffer } from "node:buffer";

export const SUPPORTED_CHARSETS = [
  "US-ASCII",
  "UTF-8",
  "UTF-16",
  "UTF-16BE",
  "UTF-16LE",
  "ISO-8859-1",
  "Windows-1252",
] as const;
export type SupportedCharset = (typeof SUPPORTED_CHARSETS)[number];

export type DecodeTextResult = { ok: true; text: string } | { ok: false; message: string };

const CANONICAL_BY_UPPER: ReadonlyMap<string, SupportedCharset> = new Map(
  SUPPORTED_CHARSETS.map((name) => [name.toUpperCase(), name] as const),
);

/**
 * The canonical spelling of a supported charset name given in any letter case
 * ("utf-16le" → "UTF-16LE"), or null when the name is not one of `SUPPORTED_CHARSETS`.
 * Aliases ("utf8", "latin1", "ascii") are deliberately not accepted.
 */
export function normalizeCharset(name: string): SupportedCharset | null {
  return CANONICAL_BY_UPPER.get(name.toUpperCase()) ?? null;
}

/** Decodes `bytes` in `charset` (UTF-8 when null, undefined or empty). */
export function decodeText(bytes: Uint8Array, charset: string | null | undefined): DecodeTextResult {
  const requested = charset === null || charset === undefined || charset === "" ? "UTF-8" : charset;
  const canonical = normalizeCharset(requested);
  if (canonical === null) {
    return {
      ok: false,
      message: `Charset "${requested}" is not supported; supported charsets are ${SUPPORTED_CHARSETS.join(", ")}`,
    };
  }
  const sniffed = decodeBySniffedBom(bytes);
  const result = sniffed ?? decodeAs(bytes, canonical);
  if (result.ok) return result;
  const assumed =
    sniffed !== null
      ? "UTF-8 or UTF-16 as its byte order mark says"
      : charset === null || charset === undefined || charset === ""
        ? `${canonical}, the default when the document names no charset`
        : canonical;
  return {
    ok: false,
    message: `${result.message}. The text was read as ${assumed}; set the document's charset field to the encoding it was saved in (${SUPPORTED_CHARSETS.join(", ")})`,
  };
}

/** Decodes by a leading byte order mark, or null when the bytes start with none. */
function decodeBySniffedBom(bytes: Uint8Array): DecodeTextResult | null {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return decodeUtf8(bytes);
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) return decodeUtf16(bytes, "UTF-16");
  return null;
}

function decodeAs(bytes: Uint8Array, canonical: SupportedCharset): DecodeTextResult {
  switch (canonical) {
    case "US-ASCII":
      return decodeUsAscii(bytes);
    case "UTF-8":
      return decodeUtf8(bytes);
    case "UTF-16":
    case "UTF-16BE":
    case "UTF-16LE":
      return decodeUtf16(bytes, canonical);
    case "ISO-8859-1":
      return { ok: true, text: latin1(bytes) };
    case "Windows-1252":
      return { ok: true, text: decodeWindows1252(bytes) };
  }
}

function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
}

function hexByte(value: number): string {
  return `0x${value.toString(16).toUpperCase().padStart(2, "0")}`;
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function decodeUsAscii(bytes: Uint8Array): DecodeTextResult {
  const offset = bytes.findIndex((b) => b > 0x7f);
  if (offset >= 0) {
    return {
      ok: false,
      message: `Text is not valid US-ASCII: byte ${hexByte(bytes[offset] ?? 0)} at byte offset ${offset} is outside 0x00-0x7F`,
    };
  }
  return { ok: true, text: latin1(bytes) };
}

function decodeUtf8(bytes: Uint8Array): DecodeTextResult {
  try {
    const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
    return { ok: true, text: stripBom(text) };
  } catch {
    const offset = firstInvalidUtf8Offset(bytes);
    const where = offset === null ? "" : ` at byte offset ${offset} (byte ${hexByte(bytes[offset] ?? 0)})`;
    return { ok: false, message: `Text is not valid UTF-8: invalid or incomplete byte sequence${where}` };
  }
}

/**
 * Offset of the first byte that starts an ill-formed UTF-8 sequence (Unicode 15, table 3-7:
 * no overlong forms, no surrogates, nothing above U+10FFFF), or null if the bytes are well-formed.
 */
export function firstInvalidUtf8Offset(bytes: Uint8Array): number | null {
  let i = 0;
  const n = bytes.length;
  const inRange = (at: number, lo: number, hi: number): boolean => {
    const b = bytes[at];
    return b !== undefined && b >= lo && b <= hi;
  };
  while (i < n) {
    const b = bytes[i] ?? 0;
    let length: number;
    let secondLo = 0x80;
    let secondHi = 0xbf;
    if (b <= 0x7f) length = 1;
    else if (b >= 0xc2 && b <= 0xdf) length = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      length = 3;
      if (b === 0xe0) secondLo = 0xa0;
      if (b === 0xed) secondHi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      length = 4;
      if (b === 0xf0) secondLo = 0x90;
      if (b === 0xf4) secondHi = 0x8f;
    } else return i;
    if (length > 1) {
      if (!inRange(i + 1, secondLo, secondHi)) return i;
      for (let k = 2; k < length; k++) if (!inRange(i + k, 0x80, 0xbf)) return i;
    }
    i += length;
  }
  return null;
}

function decodeUtf16(bytes: Uint8Array, charset: "UTF-16" | "UTF-16BE" | "UTF-16LE"): DecodeTextResult {
  if (bytes.length % 2 !== 0) {
    return {
      ok: false,
      message: `Text is not valid ${charset}: its length of ${bytes.length} bytes is odd, but ${charset} uses 2-byte code units`,
    };
  }
  let littleEndian = charset === "UTF-16LE";
  let start = 0;
  if (charset === "UTF-16") {
    // RFC 2781 4.3: the BOM decides; without a BOM the text SHOULD be taken as big-endian.
    if (bytes[0] === 0xff && bytes[1] === 0xfe) {
      littleEndian = true;
      start = 2;
    } else if (bytes[0] === 0xfe && bytes[1] === 0xff) {
      start = 2;
    }
  }
  const body = bytes.subarray(start);
  const label = littleEndian ? "utf-16le" : "utf-16be";
  try {
    const text = new TextDecoder(label, { fatal: true, ignoreBOM: true }).decode(body);
    return { ok: true, text: stripBom(text) };
  } catch {
    const unit = firstUnpairedSurrogate(body, littleEndian);
    const where = unit === null ? "" : ` at byte offset ${start + unit * 2}`;
    return { ok: false, message: `Text is not valid ${charset}: unpaired surrogate code unit${where}` };
  }
}

/** Index of the first code unit that is a surrogate without its partner, or null. */
function firstUnpairedSurrogate(bytes: Uint8Array, littleEndian: boolean): number | null {
  const units = bytes.length >> 1;
  const unitAt = (i: number): number => {
    const a = bytes[2 * i] ?? 0;
    const b = bytes[2 * i + 1] ?? 0;
    return littleEndian ? a | (b << 8) : (a << 8) | b;
  };
  for (let i = 0; i < units; i++) {
    const u = unitAt(i);
    if (u >= 0xd800 && u <= 0xdbff) {
      const next = i + 1 < units ? unitAt(i + 1) : -1;
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return i;
    }
    if (u >= 0xdc00 && u <= 0xdfff) return i;
  }
  return null;
}

/** WHATWG index-windows-1252 for bytes 0x80-0x9F; all other bytes equal their code point. */
const WINDOWS_1252_HIGH: readonly number[] = [
  0x20ac, 0x0081, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, // 0x80-0x87
  0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008d, 0x017d, 0x008f, // 0x88-0x8F
  0x0090, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, // 0x90-0x97
  0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0x009d, 0x017e, 0x0178, // 0x98-0x9F
];

function decodeWindows1252(bytes: Uint8Array): string {
  const units = new Uint16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] ?? 0;
    units[i] = b >= 0x80 && b <= 0x9f ? (WINDOWS_1252_HIGH[b - 0x80] ?? b) : b;
  }
  const chunks: string[] = [];
  const CHUNK = 8192;
  for (let i = 0; i < units.length; i += CHUNK) {
    chunks.push(String.fromCharCode(...units.subarray(i, i + CHUNK)));
  }
  return chunks.join("");
}

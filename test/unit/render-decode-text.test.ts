import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { SUPPORTED_CHARSETS, decodeText, normalizeCharset } from "../../src/render/decode-text.ts";

const bytes = (...values: number[]): Uint8Array => Uint8Array.from(values);
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

function decodedText(input: Uint8Array, charset: string | null | undefined): string {
  const result = decodeText(input, charset);
  assert.ok(result.ok, `expected success, got ${result.ok ? "" : result.message}`);
  return result.text;
}

function decodeFailure(input: Uint8Array, charset: string | null | undefined): string {
  const result = decodeText(input, charset);
  assert.equal(result.ok, false, "expected a decode failure");
  return result.ok ? "" : result.message;
}

describe("normalizeCharset", () => {
  it("returns the canonical spelling for every supported name in any letter case", () => {
    assert.deepEqual(
      [...SUPPORTED_CHARSETS],
      ["US-ASCII", "UTF-8", "UTF-16", "UTF-16BE", "UTF-16LE", "ISO-8859-1", "Windows-1252"],
    );
    for (const name of SUPPORTED_CHARSETS) {
      assert.equal(normalizeCharset(name), name);
      assert.equal(normalizeCharset(name.toLowerCase()), name);
      assert.equal(normalizeCharset(name.toUpperCase()), name);
    }
    assert.equal(normalizeCharset("utf-16le"), "UTF-16LE");
    assert.equal(normalizeCharset("WINDOWS-1252"), "Windows-1252");
  });

  it("rejects aliases and unknown names", () => {
    for (const name of ["utf8", "UTF8", "latin1", "ascii", "cp1252", "ISO-8859-15", "", " UTF-8"]) {
      assert.equal(normalizeCharset(name), null, name);
    }
  });
});

describe("decodeText", () => {
  it("defaults to UTF-8 when the charset is null, undefined or empty", () => {
    for (const charset of [null, undefined, ""]) {
      assert.equal(decodedText(utf8("Grüße €5 😀"), charset), "Grüße €5 😀");
    }
    // Proof it is not Latin-1: the two bytes of "ü" become one character.
    assert.equal(decodedText(bytes(0xc3, 0xbc), null), "ü");
  });

  it("matches charset names case-insensitively", () => {
    assert.equal(decodedText(bytes(0xe4), "iso-8859-1"), "ä");
    assert.equal(decodedText(bytes(0x80), "WINDOWS-1252"), "€");
    assert.equal(decodedText(bytes(0xc3, 0xa4), "utf-8"), "ä");
    assert.equal(decodedText(bytes(0x41), "us-ascii"), "A");
  });

  it("rejects an unsupported charset, naming it", () => {
    const message = decodeFailure(utf8("x"), "KOI8-R");
    assert.match(message, /KOI8-R/);
    assert.match(message, /not supported/);
  });

  describe("UTF-8", () => {
    it("strips a leading byte order mark only", () => {
      assert.equal(decodedText(bytes(0xef, 0xbb, 0xbf, 0x61, 0x62), "UTF-8"), "ab");
      assert.equal(decodedText(bytes(0x61, 0xef, 0xbb, 0xbf), "UTF-8"), "a\ufeff");
    });

    it("rejects invalid bytes, naming the charset and the byte offset", () => {
      const message = decodeFailure(bytes(0x61, 0x62, 0xc3, 0x28), "UTF-8");
      assert.match(message, /UTF-8/);
      assert.match(message, /byte offset 2\b/);
      assert.match(message, /0xC3/);
    });

    it("rejects a truncated sequence at the end, overlong forms and encoded surrogates", () => {
      assert.match(decodeFailure(bytes(0x61, 0x62, 0x63, 0xe2, 0x82), "UTF-8"), /byte offset 3\b/);
      assert.match(decodeFailure(bytes(0xc0, 0xaf), "UTF-8"), /byte offset 0\b/);
      assert.match(decodeFailure(bytes(0x41, 0xed, 0xa0, 0x80), "UTF-8"), /byte offset 1\b/);
      assert.match(decodeFailure(bytes(0xf4, 0x90, 0x80, 0x80), "UTF-8"), /byte offset 0\b/);
      // Latin-1 text sent as UTF-8: "Grüße" with ü = 0xFC.
      assert.match(decodeFailure(bytes(0x47, 0x72, 0xfc, 0xdf, 0x65), "UTF-8"), /byte offset 2\b/);
    });
  });

  describe("US-ASCII", () => {
    it("decodes 7-bit text", () => {
      assert.equal(decodedText(utf8("Hello, fax!\n"), "US-ASCII"), "Hello, fax!\n");
    });

    it("rejects a byte above 0x7F with its value and offset", () => {
      const message = decodeFailure(bytes(0x48, 0x61, 0x6c, 0x6c, 0xe4), "US-ASCII");
      assert.match(message, /US-ASCII/);
      assert.match(message, /0xE4/);
      assert.match(message, /byte offset 4\b/);
    });
  });

  describe("ISO-8859-1 and Windows-1252", () => {
    const sample = bytes(0x80, 0x20, 0xe4, 0xf6, 0xfc, 0xc4, 0xd6, 0xdc, 0xdf);

    it("ISO-8859-1 is true Latin-1: byte 0x80 is U+0080, not the euro sign", () => {
      assert.equal(decodedText(sample, "ISO-8859-1"), "\u0080 äöüÄÖÜß");
    });

    it("Windows-1252 maps 0x80 to the euro sign and decodes umlauts", () => {
      assert.equal(decodedText(sample, "Windows-1252"), "€ äöüÄÖÜß");
    });

    it("Windows-1252 decodes the 0x80-0x9F block per the WHATWG table", () => {
      assert.equal(
        decodedText(bytes(0x82, 0x84, 0x85, 0x8a, 0x8c, 0x91, 0x92, 0x93, 0x94, 0x96, 0x97, 0x99, 0x9f), "Windows-1252"),
        "‚„…ŠŒ‘’“”–—™Ÿ",
      );
      // The five bytes WHATWG leaves as C1 controls.
      assert.equal(decodedText(bytes(0x81, 0x8d, 0x8f, 0x90, 0x9d), "Windows-1252"), "\u0081\u008d\u008f\u0090\u009d");
    });

    it("both equal the code point of the byte outside 0x80-0x9F", () => {
      const all = Uint8Array.from({ length: 256 }, (_, i) => i);
      const latin = decodedText(all, "ISO-8859-1");
      const windows = decodedText(all, "Windows-1252");
      assert.equal(latin.length, 256);
      assert.equal(windows.length, 256);
      for (let i = 0; i < 256; i++) {
        assert.equal(latin.charCodeAt(i), i);
        if (i < 0x80 || i > 0x9f) assert.equal(windows.charCodeAt(i), i);
        else if (![0x81, 0x8d, 0x8f, 0x90, 0x9d].includes(i)) assert.notEqual(windows.charCodeAt(i), i);
      }
    });
  });

  describe("UTF-16", () => {
    // "Aä€😀" as code units: 0041 00E4 20AC D83D DE00
    const be = bytes(0x00, 0x41, 0x00, 0xe4, 0x20, 0xac, 0xd8, 0x3d, 0xde, 0x00);
    const le = bytes(0x41, 0x00, 0xe4, 0x00, 0xac, 0x20, 0x3d, 0xd8, 0x00, 0xde);
    const expected = "Aä€😀";

    it("UTF-16 with a little-endian BOM", () => {
      assert.equal(decodedText(bytes(0xff, 0xfe, ...le), "UTF-16"), expected);
    });

    it("UTF-16 with a big-endian BOM", () => {
      assert.equal(decodedText(bytes(0xfe, 0xff, ...be), "UTF-16"), expected);
    });

    it("UTF-16 without a BOM is big-endian (RFC 2781)", () => {
      assert.equal(decodedText(be, "UTF-16"), expected);
      assert.equal(decodedText(bytes(0x00, 0x48, 0x00, 0x69), "UTF-16"), "Hi");
    });

    it("UTF-16BE and UTF-16LE use their fixed order and drop a matching BOM", () => {
      assert.equal(decodedText(be, "UTF-16BE"), expected);
      assert.equal(decodedText(le, "UTF-16LE"), expected);
      assert.equal(decodedText(bytes(0xfe, 0xff, ...be), "UTF-16BE"), expected);
      assert.equal(decodedText(bytes(0xff, 0xfe, ...le), "UTF-16LE"), expected);
      assert.equal(decodedText(bytes(0x00, 0x41), "UTF-16LE"), "\u4100");
    });

    it("rejects an odd number of bytes", () => {
      for (const charset of ["UTF-16", "UTF-16BE", "UTF-16LE"]) {
        const message = decodeFailure(bytes(0x00, 0x41, 0x00), charset);
        assert.match(message, /odd/);
        assert.match(message, new RegExp(charset));
      }
    });

    it("a byte order mark decides the encoding when no charset is given (Windows Notepad's UTF-16 files)", () => {
      assert.equal(decodedText(bytes(0xff, 0xfe, ...le), undefined), expected);
      assert.equal(decodedText(bytes(0xfe, 0xff, ...be), null), expected);
      assert.equal(decodedText(bytes(0xef, 0xbb, 0xbf, 0x41, 0xc3, 0xa4), ""), "Aä");
    });

    it("a byte order mark decides the encoding whatever charset the document names", () => {
      assert.equal(decodedText(bytes(0xff, 0xfe, ...le), "ISO-8859-1"), expected);
      assert.equal(decodedText(bytes(0xff, 0xfe, ...le), "UTF-16BE"), expected);
      assert.equal(decodedText(bytes(0xfe, 0xff, ...be), "US-ASCII"), expected);
      assert.equal(decodedText(bytes(0xef, 0xbb, 0xbf, 0xe2, 0x82, 0xac), "Windows-1252"), "€");
    });

    it("without a BOM, text that is not valid in the assumed charset fails naming the charset field and its values", () => {
      const message = decodeFailure(le, undefined);
      assert.match(message, /not valid UTF-8/);
      assert.match(message, /read as UTF-8, the default when the document names no charset/);
      assert.match(message, /charset field/);
      assert.match(message, /US-ASCII, UTF-8, UTF-16, UTF-16BE, UTF-16LE, ISO-8859-1, Windows-1252/);
      assert.match(decodeFailure(bytes(0x41, 0xe4), "US-ASCII"), /read as US-ASCII; set the document's charset field/);
    });

    it("rejects an unpaired surrogate with its offset", () => {
      const message = decodeFailure(bytes(0xfe, 0xff, 0x00, 0x41, 0xd8, 0x3d, 0x00, 0x42), "UTF-16");
      assert.match(message, /surrogate/);
      assert.match(message, /byte offset 4\b/);
    });
  });
});

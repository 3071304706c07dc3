/**
 * Which code points a TrueType/OpenType font (or the first font of a collection, TTC) has glyphs
 * for, read from its `cmap` table: the
 * Unicode subtable of format 12 (full repertoire) if there is one, else of format 4 (the Basic
 * Multilingual Plane). Used to tell whether a text needs a fallback font (system-fonts.ts) and
 * which fallback font has a character (fallback-fonts.ts).
 * `parse` does no I/O; `fromFile` reads the file for it.
 */
import { readFileSync } from "node:fs";

/** [first, last] code points, sorted, not overlapping. */
type Ranges = Array<[number, number]>;

const read = new Map<string, FontCoverage>();

export class FontCoverage {
  readonly #ranges: Ranges;

  private constructor(ranges: Ranges) {
    this.#ranges = ranges;
  }

  /** Reads the font file `path`. Throws on a file that is not a font with a Unicode cmap. */
  static fromFile(path: string): FontCoverage {
    return FontCoverage.parse(readFileSync(path));
  }

  /** `fromFile`, read once per file and process (a file that fails is read again when asked again). */
  static ofFile(path: string): FontCoverage {
    let known = read.get(path);
    if (known === undefined) {
      known = FontCoverage.fromFile(path);
      read.set(path, known);
    }
    return known;
  }

  /** A font with no glyph (one that is not installed, or cannot be read). */
  static empty(): FontCoverage {
    return new FontCoverage([]);
  }

  static parse(bytes: Uint8Array): FontCoverage {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const u16 = (at: number): number => view.getUint16(at);
    const u32 = (at: number): number => view.getUint32(at);
    // A collection (TTC) holds several fonts: the first one's table directory. Table offsets
    // count from the start of the file either way.
    const tag = (at: number): string => String.fromCharCode(bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!);
    const directory = tag(0) === "ttcf" ? u32(12) : 0;
    const tables = u16(directory + 4);
    let cmap = -1;
    for (let i = 0; i < tables; i++) {
      const entry = directory + 12 + 16 * i;
      if (tag(entry) === "cmap") cmap = u32(entry + 8);
    }
    if (cmap < 0) throw new Error("the font has no cmap table");
    let format4 = -1;
    let format12 = -1;
    const subtables = u16(cmap + 2);
    for (let i = 0; i < subtables; i++) {
      const record = cmap + 4 + 8 * i;
      const platform = u16(record);
      const encoding = u16(record + 2);
      const at = cmap + u32(record + 4);
      const unicode = platform === 0 || (platform === 3 && (encoding === 1 || encoding === 10));
      if (!unicode) continue;
      const format = u16(at);
      if (format === 12 && format12 < 0) format12 = at;
      if (format === 4 && format4 < 0) format4 = at;
    }
    const ranges: Ranges = [];
    if (format12 >= 0) {
      const groups = u32(format12 + 12);
      for (let g = 0; g < groups; g++) ranges.push([u32(format12 + 16 + 12 * g), u32(format12 + 20 + 12 * g)]);
    } else if (format4 >= 0) {
      const segments = u16(format4 + 6) / 2;
      const ends = format4 + 14;
      const starts = ends + 2 * segments + 2;
      const deltas = starts + 2 * segments;
      const offsets = deltas + 2 * segments;
      for (let s = 0; s < segments; s++) {
        const start = u16(starts + 2 * s);
        const end = u16(ends + 2 * s);
        if (start === 0xffff) continue;
        const offset = u16(offsets + 2 * s);
        if (offset === 0) {
          ranges.push([start, end]); // every code point maps (by delta); glyph 0 only by accident
          continue;
        }
        // Glyph ids from the glyph array: a code point whose id is 0 has no glyph.
        for (let c = start; c <= end; c++) {
          const glyph = u16(offsets + 2 * s + offset + 2 * (c - start));
          if (glyph !== 0) ranges.push([c, c]);
        }
      }
    } else {
      throw new Error("the font has no Unicode cmap subtable of format 4 or 12");
    }
    ranges.sort((a, b) => a[0] - b[0]);
    return new FontCoverage(ranges);
  }

  /** Whether the font has a glyph for `codePoint`. */
  has(codePoint: number): boolean {
    let lo = 0;
    let hi = this.#ranges.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const [first, last] = this.#ranges[mid]!;
      if (codePoint < first) hi = mid - 1;
      else if (codePoint > last) lo = mid + 1;
      else return true;
    }
    return false;
  }
}

/**
 * Faxline's fonts and the system fonts as fallback (src/render/fonts): the cmap reader, and the
 * lazy loading of the system fonts that the `faxline` command turns on (DISABLE_SYSTEM_FONTS_LOAD):
 * a text page drawn that way must be the same pixels as with the system fonts loaded at start,
 * for plain text (no system font loaded) and for a character only a system font has (loaded on
 * demand). With @napi-rs/canvas 1.0 and one named family, skia draws such a character as the
 * font's missing-glyph box even with the system fonts loaded (checked here too), so the text
 * rasterisers draw it from a fallback font of their own (fallback-fonts.ts, checked here too). Each variant runs in a process of its own, since the package reads the variable once.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { FontCoverage } from "../../src/render/fonts/font-coverage.ts";
import { createCanvas, GlobalFonts } from "@napi-rs/canvas";
import { createTextPageRasterizer, FAX_FONT_FILE } from "../../src/render/fax-image/rasterize-text-page.ts";
import { fallbackFamilyFor, installedFallbackFonts } from "../../src/render/fonts/fallback-fonts.ts";
import { textFrame } from "../../src/render/layout-text.ts";

const RASTERIZE = fileURLToPath(new URL("../support/rasterize-text-line.ts", import.meta.url));

/** Draws `text` as one text page in a new process; its pixels' hash and whether system fonts got loaded. */
function drawInProcess(text: string, lazy: boolean): { hash: string; loadedBefore: boolean; loadedAfter: boolean; families: number } {
  const env = { ...process.env };
  delete env.DISABLE_SYSTEM_FONTS_LOAD;
  if (lazy) env.DISABLE_SYSTEM_FONTS_LOAD = "1";
  const run = spawnSync(process.execPath, ["--import", "tsx", RASTERIZE, text], { env, encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout.trim().split("\n").pop()!) as { hash: string; loadedBefore: boolean; loadedAfter: boolean; families: number };
}

function fontFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const file = join(dir, name);
    if (statSync(file).isDirectory()) out.push(...fontFiles(file));
    else if (/\.(ttf|otf)$/i.test(name)) out.push(file);
  }
  return out;
}

/** A minimal font: a table directory with only a cmap holding one format 4 subtable (3,1). */
function format4Font(segments: { start: number; end: number; delta: number; glyphs?: number[] }[]): Uint8Array {
  const all = [...segments, { start: 0xffff, end: 0xffff, delta: 1 }];
  const n = all.length;
  const glyphArray: number[] = [];
  const rangeOffsets = all.map((s, i) => {
    if (s.glyphs === undefined) return 0;
    // From this idRangeOffset entry to the segment's first glyph in the glyph array.
    const offset = 2 * (n - i) + 2 * glyphArray.length;
    glyphArray.push(...s.glyphs);
    return offset;
  });
  const words = [4, 0, 0, 2 * n, 0, 0, 0, ...all.map((s) => s.end), 0, ...all.map((s) => s.start), ...all.map((s) => s.delta & 0xffff), ...rangeOffsets, ...glyphArray];
  words[1] = words.length * 2;
  const subtable = Buffer.alloc(words.length * 2);
  words.forEach((w, i) => subtable.writeUInt16BE(w, 2 * i));
  const cmap = Buffer.concat([Buffer.from([0, 0, 0, 1, 0, 3, 0, 1, 0, 0, 0, 12]), subtable]);
  const head = Buffer.alloc(12 + 16);
  head.writeUInt32BE(0x00010000, 0);
  head.writeUInt16BE(1, 4);
  head.write("cmap", 12, "latin1");
  head.writeUInt32BE(head.length, 20);
  head.writeUInt32BE(cmap.length, 24);
  return new Uint8Array(Buffer.concat([head, cmap]));
}

describe("fonts: what Faxline's own fonts cover, and the system fonts as fallback", () => {
  it("reads a font's cmap (format 12): DejaVu Sans Mono has Latin, Greek and Cyrillic, not Han", () => {
    const mono = FontCoverage.fromFile(FAX_FONT_FILE);
    for (const c of "Aé€ΩЖ~") assert.ok(mono.has(c.codePointAt(0)!), `has ${c}`);
    for (const c of ["中", "ℓ", "😀"]) assert.equal(mono.has(c.codePointAt(0)!), false, `has no ${c}`);
  });

  it("reads a format 4 cmap: ranges by delta, glyphs from the glyph array (0: none)", () => {
    const font = FontCoverage.parse(format4Font([{ start: 0x41, end: 0x43, delta: -29 }, { start: 0x100, end: 0x103, delta: 0, glyphs: [7, 0, 9, 0] }]));
    assert.deepEqual([0x40, 0x41, 0x43, 0x44].map((c) => font.has(c)), [false, true, true, false]);
    assert.deepEqual([0x100, 0x101, 0x102, 0x103].map((c) => font.has(c)), [true, false, true, false]);
    assert.equal(font.has(0xffff), false);
  });

  it("refuses bytes that are not a font with a Unicode cmap", () => {
    assert.throws(() => FontCoverage.parse(new Uint8Array(64)), /no cmap/);
  });

  it("plain text: loaded lazily, the system fonts stay unloaded and the page is the same", () => {
    const text = "Invoice 4711: 3 × 12,50 € = 37,50 € — Grüße, Ωμέγα, Жук";
    const eager = drawInProcess(text, false);
    const lazy = drawInProcess(text, true);
    assert.equal(eager.loadedBefore, true, "without the variable the package loads them at start");
    assert.equal(lazy.loadedBefore, false);
    assert.equal(lazy.loadedAfter, false, "every character is in DejaVu Sans Mono: nothing loaded");
    assert.ok(lazy.families < eager.families, `the canvas knows only Faxline's own font (${lazy.families} families), not the system's (${eager.families} loaded at start)`);
    assert.equal(lazy.hash, eager.hash);
  });

  it("a character only a system font has: loaded on demand, the same pixels as loaded at start", (t) => {
    const mono = FontCoverage.fromFile(FAX_FONT_FILE);
    const systemFonts = fontFiles("/usr/share/fonts").filter((f) => !/dejavu/i.test(f));
    const candidates = ["ℓ", "ẞ", "\u{f8ff}", "ꝏ", "ℵ"];
    // Not in the fax font nor in Faxline's fallback fonts (those need no system font).
    const ours = installedFallbackFonts().map((f) => FontCoverage.fromFile(f));
    const fallback = candidates.find((c) => !mono.has(c.codePointAt(0)!) && !ours.some((f) => f.has(c.codePointAt(0)!)) && systemFonts.some((f) => {
      try {
        return FontCoverage.fromFile(f).has(c.codePointAt(0)!);
      } catch {
        return false;
      }
    }));
    if (fallback === undefined) {
      t.skip(`no system font here has any of ${candidates.join(" ")} (the fallback cannot be shown on this machine)`);
      return;
    }
    const text = `1 ${fallback} = 1000 ml`;
    const eager = drawInProcess(text, false);
    const lazy = drawInProcess(text, true);
    assert.equal(lazy.loadedBefore, false);
    assert.equal(lazy.loadedAfter, true, `${fallback} is not in DejaVu Sans Mono: the system fonts are loaded`);
    assert.equal(lazy.families, eager.families, "the canvas now knows the same families as when they load at start");
    assert.equal(lazy.hash, eager.hash, "the same pixels as with the system fonts loaded at start");
  });

  it("the canvas takes no glyph from another font by itself (why fallback-fonts.ts exists)", () => {
    // What docs/rendering.md says: with one family named, skia draws a character that family
    // lacks as its missing-glyph box, system fonts loaded or not (this process loaded them at
    // start). Should a version of the package fall back, this fails and the docs need saying so.
    const canvas = createCanvas(200, 60);
    const ctx = canvas.getContext("2d");
    GlobalFonts.registerFromPath(FAX_FONT_FILE, "Fonts test DejaVu Sans Mono");
    const draw = (text: string): Buffer => {
      ctx.fillStyle = "#fff";
      ctx.fillRect(0, 0, 200, 60);
      ctx.fillStyle = "#000";
      ctx.font = '40px "Fonts test DejaVu Sans Mono"';
      ctx.fillText(text, 10, 45);
      return Buffer.from(canvas.data());
    };
    assert.deepEqual(draw("中"), draw("\u{10ffff}"), "中 comes out as the box of a code point no font has");
  });

  it("text pages draw what the fax font lacks from a fallback font, wide characters in two cells", () => {
    const rasterize = createTextPageRasterizer({ paperFormat: "A4", resolution: "HIGH" });
    const left = Math.round(textFrame("A4").left * 204);
    const cell = textFrame("A4").charWidth * 204;
    const columnsInked = (line: string): number[] => {
      const pixels = rasterize({ lines: [line] });
      const inked = new Set<number>();
      for (let i = 0; i < pixels.length; i++) if (pixels[i] === 0) inked.add(Math.floor(((i % 1728) - left) / cell));
      return [...inked].sort((a, b) => a - b);
    };
    assert.notDeepEqual(rasterize({ lines: ["a字b"] }), rasterize({ lines: ["a\u{10ffff}b"] }), "字 is not the missing-glyph box");
    assert.deepEqual(columnsInked("a字b"), [0, 1, 2, 3], "a in column 0, 字 across 1 and 2, b in 3");
    assert.deepEqual(columnsInked("a\u{10ffff}b"), [0, 1, 2], "a box takes one cell");
    for (const [text, font] of [["한", "WenQuanYi Micro Hei"], ["あ", "WenQuanYi Micro Hei"], ["ש", "DejaVu Sans"]] as const) {
      assert.notDeepEqual(rasterize({ lines: [text] }), rasterize({ lines: ["\u{10ffff}"] }), `${text} is drawn (${font})`);
    }
    assert.ok(fallbackFamilyFor(FAX_FONT_FILE, "中".codePointAt(0)!)?.includes("wqy-microhei"), "fonts-wqy-microhei is installed (scripts/install.sh)");
    assert.equal(fallbackFamilyFor(FAX_FONT_FILE, "A".codePointAt(0)!), null, "the fax font's own characters need none");
    assert.equal(fallbackFamilyFor(FAX_FONT_FILE, 0x10ffff), null, "nor do those no font has");
  });

  it("reads the first font of a collection (TTC)", () => {
    const font = Buffer.from(format4Font([{ start: 0x41, end: 0x43, delta: -29 }]));
    const header = Buffer.alloc(16);
    header.write("ttcf", 0, "latin1");
    header.writeUInt32BE(0x00010000, 4);
    header.writeUInt32BE(1, 8);
    header.writeUInt32BE(16, 12);
    // Table offsets count from the start of the collection.
    font.writeUInt32BE(font.readUInt32BE(20) + 16, 20);
    const ttc = FontCoverage.parse(new Uint8Array(Buffer.concat([header, font])));
    assert.deepEqual([0x40, 0x41, 0x43, 0x44].map((c) => ttc.has(c)), [false, true, true, false]);
    const wqy = FontCoverage.fromFile("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc");
    assert.ok(wqy.has("한".codePointAt(0)!) && wqy.has("字".codePointAt(0)!));
  });
});

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { characterColumns, layoutText, textPageGeometry } from "../../src/render/layout-text.ts";
import type { TextLayoutOptions } from "../../src/render/layout-text.ts";

const A4: TextLayoutOptions = { paperFormat: "A4", resolution: "HIGH" };
const LETTER: TextLayoutOptions = { paperFormat: "LETTER", resolution: "HIGH" };

/** The lines of every page, for compact assertions. */
function pagesOf(text: string, options: TextLayoutOptions = A4): string[][] {
  return layoutText(text, options).pages.map((page) => page.lines);
}

function numberedLines(count: number): string {
  return Array.from({ length: count }, (_, i) => `line ${i + 1}`).join("\n");
}

describe("textPageGeometry", () => {
  it("gives the documented numbers for A4 and LETTER at HIGH and LOW", () => {
    assert.deepEqual(textPageGeometry({ paperFormat: "A4", resolution: "HIGH" }), {
      columns: 80,
      linesPerPage: 62,
      widthPx: 1728,
      heightPx: 2292,
      xDpi: 204,
      yDpi: 196,
    });
    assert.deepEqual(textPageGeometry({ paperFormat: "A4", resolution: "LOW" }), {
      columns: 80,
      linesPerPage: 62,
      widthPx: 1728,
      heightPx: 1146,
      xDpi: 204,
      yDpi: 98,
    });
    assert.deepEqual(textPageGeometry({ paperFormat: "LETTER", resolution: "HIGH" }), {
      columns: 80,
      linesPerPage: 58,
      widthPx: 1728,
      heightPx: 2156,
      xDpi: 204,
      yDpi: 196,
    });
    assert.deepEqual(textPageGeometry({ paperFormat: "LETTER", resolution: "LOW" }), {
      columns: 80,
      linesPerPage: 58,
      widthPx: 1728,
      heightPx: 1078,
      xDpi: 204,
      yDpi: 98,
    });
  });

  it("reports its geometry in the layout", () => {
    const layout = layoutText("x", LETTER);
    assert.equal(layout.columns, 80);
    assert.equal(layout.linesPerPage, 58);
  });
});

describe("layoutText", () => {
  it("lays a short text out on one page", () => {
    assert.deepEqual(pagesOf("Hello\nWorld"), [["Hello", "World"]]);
  });

  it("yields zero pages for an empty or whitespace-only document", () => {
    assert.deepEqual(pagesOf(""), []);
    assert.deepEqual(pagesOf("   \n\t\n\r\n \f \f\n"), []);
    assert.deepEqual(pagesOf("\u0000\u0007\n"), []);
  });

  it("normalises CRLF and lone CR to line breaks", () => {
    assert.deepEqual(pagesOf("one\r\ntwo\rthree\nfour\r\n"), [["one", "two", "three", "four"]]);
    assert.deepEqual(pagesOf("a\r\n\r\nb"), [["a", "", "b"]]);
  });

  it("expands tabs to 8-column tab stops", () => {
    assert.deepEqual(pagesOf("a\tb\n\tx\n12345678\ty\n1234567\tz\nab\tcd\tef"), [
      [
        "a       b",
        "        x",
        "12345678        y",
        "1234567 z",
        "ab      cd      ef",
      ],
    ]);
  });

  it("removes trailing whitespace and control characters", () => {
    assert.deepEqual(pagesOf("abc   \t\nd\u0000e\u0007f\u001bg\u007fh\u0085i  "), [["abc", "defghi"]]);
  });

  it("applies a backspace as overstrike, keeping the later character", () => {
    assert.deepEqual(pagesOf("N\bNA\bAM\bME\bE\n_\bx"), [["NAME", "x"]]);
  });

  it("drops empty lines at the end but keeps blank lines between text", () => {
    assert.deepEqual(pagesOf("a\n\nb\n\n\n\n"), [["a", "", "b"]]);
    assert.deepEqual(pagesOf("\n\na"), [["", "", "a"]]);
  });

  describe("form feeds", () => {
    it("start a new page", () => {
      assert.deepEqual(pagesOf("page one\fpage two"), [["page one"], ["page two"]]);
      assert.deepEqual(pagesOf("one\ntwo\n\fthree\nfour"), [["one", "two"], ["three", "four"]]);
    });

    it("on a line of their own add no blank line at the top of the next page", () => {
      assert.deepEqual(pagesOf("one\n\f\ntwo"), [["one"], ["two"]]);
      assert.deepEqual(pagesOf("one\f\n\ntwo"), [["one"], ["", "two"]]);
    });

    it("add no empty page at the end or the start of the text", () => {
      assert.deepEqual(pagesOf("only page\f"), [["only page"]]);
      assert.deepEqual(pagesOf("only page\n\f\n"), [["only page"]]);
      assert.deepEqual(pagesOf("only page\f\f\n\n"), [["only page"]]);
      assert.deepEqual(pagesOf("\fonly page"), [["only page"]]);
    });

    it("in a row leave a blank page between printed pages", () => {
      assert.deepEqual(pagesOf("a\f\fb"), [["a"], [], ["b"]]);
    });

    it("after an exactly full page add no blank page", () => {
      const layout = layoutText(`${numberedLines(62)}\fnext`, A4);
      assert.equal(layout.pages.length, 2);
      assert.equal(layout.pages[0]?.lines.length, 62);
      assert.deepEqual(layout.pages[1]?.lines, ["next"]);
    });
  });

  describe("page breaks", () => {
    it("fill exactly linesPerPage lines before breaking (A4: 62)", () => {
      assert.equal(layoutText(numberedLines(62), A4).pages.length, 1);
      const layout = layoutText(numberedLines(63), A4);
      assert.equal(layout.pages.length, 2);
      assert.equal(layout.pages[0]?.lines.length, 62);
      assert.equal(layout.pages[0]?.lines[61], "line 62");
      assert.deepEqual(layout.pages[1]?.lines, ["line 63"]);
    });

    it("fill exactly linesPerPage lines before breaking (LETTER: 58)", () => {
      assert.equal(layoutText(numberedLines(58), LETTER).pages.length, 1);
      const layout = layoutText(numberedLines(59), LETTER);
      assert.equal(layout.pages.length, 2);
      assert.deepEqual(layout.pages[1]?.lines, ["line 59"]);
    });

    it("count wrapped lines towards the page", () => {
      // 61 short lines + one line wrapping into 2 = 63 printed lines.
      const layout = layoutText(`${numberedLines(61)}\n${"x".repeat(100)}`, A4);
      assert.equal(layout.pages.length, 2);
      assert.equal(layout.pages[0]?.lines[61], "x".repeat(80));
      assert.deepEqual(layout.pages[1]?.lines, ["x".repeat(20)]);
    });

    it("give the same page count at HIGH and LOW resolution", () => {
      const text = numberedLines(1000);
      const high = layoutText(text, { paperFormat: "A4", resolution: "HIGH" });
      const low = layoutText(text, { paperFormat: "A4", resolution: "LOW" });
      assert.equal(high.pages.length, Math.ceil(1000 / 62));
      assert.deepEqual(low, high);
      assert.equal(layoutText(text, { paperFormat: "LETTER", resolution: "LOW" }).pages.length, Math.ceil(1000 / 58));
    });

    it("keep every page within linesPerPage and every line within columns", () => {
      const words = Array.from({ length: 3000 }, (_, i) => "w".repeat((i % 13) + 1)).join(" ");
      const layout = layoutText(`${words}\n${"z".repeat(1000)}\n\t\ttabbed ${words}`, LETTER);
      assert.ok(layout.pages.length > 1);
      for (const page of layout.pages) {
        assert.ok(page.lines.length <= layout.linesPerPage);
        for (const line of page.lines) assert.ok([...line].length <= layout.columns, line);
      }
    });
  });

  describe("wrapping", () => {
    it("word-wraps at the last space within the line width", () => {
      const line = `${"a".repeat(75)} ${"b".repeat(10)}`;
      assert.deepEqual(pagesOf(line), [["a".repeat(75), "b".repeat(10)]]);
    });

    it("breaks at a space directly after column 80", () => {
      assert.deepEqual(pagesOf(`${"a".repeat(80)} b`), [["a".repeat(80), "b"]]);
      assert.deepEqual(pagesOf("a".repeat(80)), [["a".repeat(80)]]);
    });

    it("wraps a paragraph of words without losing or splitting any", () => {
      const words = Array.from({ length: 60 }, (_, i) => `word${i}`);
      const lines = pagesOf(words.join(" "))[0] ?? [];
      assert.ok(lines.length > 1);
      for (const line of lines) {
        assert.ok(line.length <= 80);
        assert.equal(line, line.trim());
      }
      assert.deepEqual(lines.join(" ").split(" "), words);
      // Each line is as full as possible: the next word would not have fitted.
      for (let i = 0; i + 1 < lines.length; i++) {
        const nextWord = (lines[i + 1] ?? "").split(" ")[0] ?? "";
        assert.ok((lines[i] ?? "").length + 1 + nextWord.length > 80);
      }
    });

    it("drops all spaces at a word-wrap break", () => {
      assert.deepEqual(pagesOf(`${"a".repeat(78)}     ${"b".repeat(5)}`), [["a".repeat(78), "b".repeat(5)]]);
    });

    it("hard-breaks a line without spaces at the line width", () => {
      assert.deepEqual(pagesOf("x".repeat(200)), [["x".repeat(80), "x".repeat(80), "x".repeat(40)]]);
    });

    it("hard-breaks when the only spaces are leading indentation", () => {
      assert.deepEqual(pagesOf(`    ${"x".repeat(100)}`), [[`    ${"x".repeat(76)}`, "x".repeat(24)]]);
    });

    it("counts a non-BMP character as one column", () => {
      assert.deepEqual(pagesOf("😀".repeat(80)), [["😀".repeat(80)]]);
      assert.deepEqual(pagesOf("😀".repeat(81)), [["😀".repeat(80), "😀"]]);
    });

    it("counts a letter with a combining accent as one column", () => {
      assert.deepEqual(pagesOf("e\u0301".repeat(80)), [["é".repeat(80)]]);
    });

    it("counts an East Asian wide character as two columns", () => {
      assert.deepEqual(
        [..."aé€Жש😀"].map((c) => characterColumns(c.codePointAt(0)!)),
        [1, 1, 1, 1, 1, 1],
      );
      assert.deepEqual(
        [..."字あアㄅ한\u3000\uff21\uffe5\u{20000}"].map((c) => characterColumns(c.codePointAt(0)!)),
        [2, 2, 2, 2, 2, 2, 2, 2, 2],
      );
      assert.deepEqual(pagesOf("字".repeat(40)), [["字".repeat(40)]]);
      assert.deepEqual(pagesOf("字".repeat(41)), [["字".repeat(40), "字"]]);
      assert.deepEqual(pagesOf("한국어".repeat(14)), [["한국어".repeat(13) + "한", "국어"]]);
    });

    it("never splits a wide character across a line break", () => {
      assert.deepEqual(pagesOf(`${"x".repeat(79)}字`), [["x".repeat(79), "字"]]);
      assert.deepEqual(pagesOf(`${"x".repeat(78)}字`), [[`${"x".repeat(78)}字`]]);
      // A space right after a wide character that ends at column 80 is the break.
      assert.deepEqual(pagesOf(`${"字".repeat(40)} next`), [["字".repeat(40), "next"]]);
      assert.deepEqual(pagesOf(`価格 ${"字".repeat(39)}`), [["価格", "字".repeat(39)]]);
      // The ideographic space is a break too, and is dropped there.
      assert.deepEqual(pagesOf(`${"字".repeat(39)}\u3000字字`), [["字".repeat(39), "字字"]]);
      assert.deepEqual(pagesOf(`価格\u3000${"字".repeat(39)}`), [["価格", "字".repeat(39)]]);
    });

    it("sets tab stops by columns after wide characters and backspaces", () => {
      assert.deepEqual(pagesOf("字\tb"), [[`字${" ".repeat(6)}b`]]);
      assert.deepEqual(pagesOf("字字字字\tb"), [[`字字字字${" ".repeat(8)}b`]]);
      assert.deepEqual(pagesOf("字\bx\ty"), [[`x${" ".repeat(7)}y`]]);
    });
  });
});

describe("layoutText with a page limit (stops as soon as the limit is passed)", () => {
  const A4: TextLayoutOptions = { paperFormat: "A4", resolution: "HIGH" };
  const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n");

  it("is not exceeded at exactly the limit, and is one line later", () => {
    const exact = layoutText(lines(62 * 3), A4, 3);
    assert.equal(exact.exceeded, false);
    assert.equal(exact.pages.length, 3);
    assert.equal(layoutText(lines(62 * 3 + 1), A4, 3).exceeded, true);
  });

  it("does not count blank pages before the first printed page, but counts those between", () => {
    assert.equal(layoutText("\f\f\f" + lines(62 * 2), A4, 2).exceeded, false);
    assert.equal(layoutText(`${lines(1)}\f\f${lines(1)}`, A4, 2).exceeded, true);
    assert.equal(layoutText(`${lines(1)}\f\f${lines(1)}`, A4, 3).exceeded, false);
  });

  it("stops on one enormous line without keeping it whole, and counts backspaces", () => {
    const huge = "x".repeat(5_000_000);
    const result = layoutText(huge, A4, 10);
    assert.equal(result.exceeded, true);
    assert.ok(result.pages.length <= 12, `${result.pages.length} pages laid out`);
    // 10 pages of 80 columns, written with a backspace after every character: nothing prints.
    assert.equal(layoutText("ab\b".repeat(62 * 80 * 10), A4, 10).exceeded, false);
  });

  it("gives the same pages as without a limit when the text fits", () => {
    const text = `${lines(100)}\f\n${"word ".repeat(500)}\n\n\n`;
    const limited = layoutText(text, A4, 10);
    const unlimited = layoutText(text, A4);
    assert.deepEqual(limited, unlimited);
  });
});

describe("layoutText with a page limit: a long line of spaces", () => {
  it("does not cut a line whose spaces (dropped at the breaks) run past the limit, and keeps its end", () => {
    const line = `A${" ".repeat(2_000_000)}IMPORTANT`;
    const result = layoutText(line, { paperFormat: "A4", resolution: "HIGH" }, 10);
    assert.equal(result.exceeded, false);
    assert.deepEqual(result.pages.flatMap((p) => p.lines), ["A", "IMPORTANT"]);
  });
});

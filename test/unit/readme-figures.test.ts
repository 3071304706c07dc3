/**
 * Every measured figure that README.md quotes (a ratio like 1.74×, a time like 0.1 s or 60 ms,
 * a size in MiB, a rate in jobs/s or pages/s, a share in %) appears in docs/benchmarks.md, where
 * it stands beside its date, machine and reference. A README figure that is not a measurement
 * (a protocol constant) is named below with the words around it, so that it cannot hide a
 * measured one. When this fails, quote the bench's latest figure in the README, or record the
 * run that measured the README's figure in docs/benchmarks.md.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

/** Figures in README prose that are not measurements, each with the words that must surround it. */
const NOT_MEASURED: ReadonlyArray<{ context: string; why: string }> = [
  { context: "a call's 20 ms ticks", why: "the packet interval of RTP and UDPTL, a protocol constant" },
];

export interface Figure {
  /** As written, e.g. "1.74×", "0.1 s", "1.4–1.7×". */
  text: string;
  line: number;
  /** The numbers of the figure (two for a range) with its unit, e.g. ["1.4×", "1.7×"]. */
  values: string[];
  unit: string;
}

// A number, or a range of two, right before a unit. "×" must touch the number (so that
// "204 × 196" is not a figure); seconds and hours need a space before them (so that "400s",
// HTTP statuses in the plural, are not).
const FIGURE =
  /(?<![\w.,])(\d+(?:\.\d+)?)(?:\s?[–-]\s?(\d+(?:\.\d+)?))?(×|\s(?:s|h)\b|\s?(?:ms|µs|min|MiB|KiB|GiB|MB|KB|jobs\/s|pages\/s|calls\/s|%))(?![\w/])/g;

/** The figures of a Markdown text, outside fenced code blocks (which show commands and output). */
export function quotedFigures(markdown: string): Figure[] {
  const figures: Figure[] = [];
  let fenced = false;
  markdown.split("\n").forEach((text, index) => {
    if (/^\s*```/.test(text)) {
      fenced = !fenced;
      return;
    }
    if (fenced) return;
    for (const m of text.matchAll(FIGURE)) {
      const unit = m[3]!.trim();
      const join = (n: string): string => (unit === "×" || unit === "%" ? `${n}${unit}` : `${n} ${unit}`);
      figures.push({ text: m[0], line: index + 1, values: m[2] === undefined ? [join(m[1]!)] : [join(m[1]!), join(m[2])], unit });
    }
  });
  return figures;
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** Whether `value` ("1.74×", "0.1 s") stands in `text` as a figure of its own (not 11.74×, not 1.745×). */
export function mentions(text: string, value: string): boolean {
  const [, number, unit] = /^(\d+(?:\.\d+)?) ?(.+)$/.exec(value)!;
  return new RegExp(`(?<![\\d.])${escape(number!)}(?!\\d)\\s?${escape(unit!)}(?![\\w/])`).test(text);
}

function normalised(text: string): string {
  return text.replace(/[\u00a0\u2009\u202f]/g, " ");
}

describe("README figures", () => {
  it("finds ratios, times and sizes, and leaves out code blocks, multiplications and HTTP statuses", () => {
    const sample = [
      "Faxline renders 1.76× the pages at HIGH and 1.4–1.7× on a job; 204 × 196 dpi.",
      "201s again 0.1 s after the promotion, 60 ms p50, 191 MiB, 889 jobs/s, 92 %.",
      "```",
      "#   +4900000020: OK; 17 s on the line",
      "```",
    ].join("\n");
    assert.deepEqual(
      quotedFigures(sample).map((f) => [f.line, f.values]),
      [
        [1, ["1.76×"]],
        [1, ["1.4×", "1.7×"]],
        [2, ["0.1 s"]],
        [2, ["60 ms"]],
        [2, ["191 MiB"]],
        [2, ["889 jobs/s"]],
        [2, ["92%"]],
      ],
    );
  });

  it("matches a figure only as a figure of its own", () => {
    assert.ok(mentions("| long | 1.76× (168.9 vs 95.8) |", "1.76×"));
    assert.ok(mentions("201s again 0.1 s after", "0.1 s"));
    assert.ok(mentions("(92 % here)", "92%"));
    assert.ok(!mentions("| 11.76× |", "1.76×"));
    assert.ok(!mentions("1.765×", "1.76×"));
    assert.ok(!mentions("0.1 ms", "0.1 s"));
    assert.ok(!mentions("60 ms/page", "60 ms"));
  });

  it("every measured figure README.md quotes appears in docs/benchmarks.md", () => {
    const readme = normalised(readFileSync("README.md", "utf8"));
    const benchmarks = normalised(readFileSync("docs/benchmarks.md", "utf8"));
    const lines = readme.split("\n");
    for (const { context } of NOT_MEASURED) assert.ok(readme.includes(context), `README no longer says "${context}": drop it from NOT_MEASURED`);
    const figures = quotedFigures(readme).filter(
      (f) => !NOT_MEASURED.some(({ context }) => lines[f.line - 1]!.includes(context) && context.includes(f.text.trim())),
    );
    // An extractor that finds nothing in the README proves nothing.
    assert.ok(figures.length > 0, "no figures found in README.md");
    const missing = figures.flatMap((f) =>
      f.values.filter((v) => !mentions(benchmarks, v)).map((v) => `README.md:${f.line}: ${v} (in "${f.text.trim()}")`),
    );
    assert.deepEqual(missing, [], "figures the README quotes that docs/benchmarks.md does not record");
  });
});

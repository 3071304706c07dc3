import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  checkCoverTemplate,
  coverPageProperties,
  fillCoverTemplate,
  formatCoverPageDate,
} from "../../src/render/cover/cover-template.ts";
import { defaultCoverLayout, defaultCoverProperties, defaultCoverTemplate, wrapText } from "../../src/render/cover/default-cover-template.ts";
import {
  CoverPageRenderError,
  findExternalSvgReference,
  renderDefaultCoverPage,
  renderSvgCoverPage,
  renderSvgCoverTemplate,
} from "../../src/render/cover/render-cover-page.ts";
import { applyOverlay, overlaidPages, OVERLAY_MODES, type OverlayMode } from "../../src/render/overlay/overlay-pages.ts";
import { FAX_X_DPI, pageGeometry, whitePage, type GreyPage, type PageGeometry, type PaperFormat, type Resolution } from "../../src/render/pages/grey-page.ts";

const MM_PER_INCH = 25.4;

function fill(template: string, properties: Record<string, string>, escape: "html" | "xml" = "xml"): string {
  const result = fillCoverTemplate(template, properties, escape);
  assert.ok(result.ok, result.ok ? "" : result.message);
  return result.text;
}

describe("fillCoverTemplate", () => {
  it("fills required, optional and defaulted placeholders", () => {
    const template = `[\${A}] [\${B!}] [\${C!"fallback"}] [\${D!'single'}] [\${ E ! "spaced" }] [\${A!"unused"}]`;
    assert.equal(fill(template, { A: "a" }), "[a] [] [fallback] [single] [spaced] [a]");
    assert.equal(fill(template, { A: "a", B: "b", C: "c", D: "d", E: "e" }), "[a] [b] [c] [d] [e] [a]");
  });

  it("keeps an empty value (present) apart from a missing one", () => {
    assert.equal(fill(`\${A!"x"}|\${A}`, { A: "" }), "|");
  });

  it("understands escapes in default texts", () => {
    assert.equal(fill(`\${A!"say \\"hi\\" \\\\ it's"} \${B!'it\\'s'} \${C!"a\\nb"}`, {}), "say &quot;hi&quot; \\ it&apos;s it&apos;s a\nb");
  });

  it("escapes values and default texts for html and xml", () => {
    const value = `<b class="x">Tom & Jerry's</b>`;
    assert.equal(fill("${V}", { V: value }, "html"), "&lt;b class=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/b&gt;");
    assert.equal(fill("${V}", { V: value }, "xml"), "&lt;b class=&quot;x&quot;&gt;Tom &amp; Jerry&apos;s&lt;/b&gt;");
    assert.equal(fill(`\${V!"<&>"}`, {}, "html"), "&lt;&amp;&gt;");
  });

  it("drops control characters XML cannot carry, keeps tabs and line breaks", () => {
    assert.equal(fill("${V}", { V: "a\u0000b\u0007c\td\ne\rf\u001Fg\uFFFFh\uD800i" }), "abc\td\ne\rfghi");
    assert.equal(fill("${V}", { V: "emoji \u{1F600}" }), "emoji \u{1F600}");
  });

  it("treats keys case-sensitively", () => {
    assert.equal(fill("${toname!}|${ToName}", { ToName: "x" }), "|x");
    const result = fillCoverTemplate("${toname}", { ToName: "x" }, "xml");
    assert.equal(result.ok, false);
  });

  it("names every missing required key once", () => {
    const result = fillCoverTemplate("${ToName} ${FromName} ${ToName} ${SubjectTitle!}", { Other: "x" }, "html");
    assert.equal(result.ok, false);
    assert.ok(!result.ok);
    assert.match(result.message, /ToName, FromName/);
    assert.doesNotMatch(result.message, /SubjectTitle/);
    assert.equal(result.message.match(/ToName/g)?.length, 1);
  });

  it("does not take keys from the object prototype", () => {
    const result = fillCoverTemplate("${constructor}", {}, "xml");
    assert.equal(result.ok, false);
  });

  it("removes FreeMarker directives and comments, as in the provider's default template", () => {
    const template = [
      `<#escape x as x?html>`,
      `<#setting time_zone="Europe/Berlin"/>`,
      `<#-- a comment with \${NotAKey} -->`,
      `<html><body><h1>Telefax</h1><p>\${ToName!}</p><p>\${SubjectText!}</p></body></html>`,
      `</#escape>`,
    ].join("\n");
    assert.equal(
      fill(template, { ToName: "Müller & Söhne", SubjectText: "<script>" }, "html"),
      "\n\n\n<html><body><h1>Telefax</h1><p>Müller &amp; Söhne</p><p>&lt;script&gt;</p></body></html>\n",
    );
  });

  it("leaves text that only looks a bit like markup alone", () => {
    assert.equal(fill("a < b, $ {x}, $x, <# >, {}", {}), "a < b, $ {x}, $x, <# >, {}");
  });

  it("fails on a template error", () => {
    const result = fillCoverTemplate("x ${A", { A: "a" }, "xml");
    assert.equal(result.ok, false);
    assert.ok(!result.ok);
    assert.match(result.message, /line 1, column 3/);
  });
});

describe("checkCoverTemplate", () => {
  it("gives the keys in order of first use", () => {
    assert.deepEqual(checkCoverTemplate(`<#escape x as x?html>\${B!} \${A} \${B!"x"} \${Ä_1!}</#escape>`), { ok: true, keys: ["B", "A", "Ä_1"] });
    assert.deepEqual(checkCoverTemplate("no placeholders"), { ok: true, keys: [] });
  });

  const cases: Array<[string, string, number, number, RegExp]> = [
    ["unterminated ${", "line one\n  ${ToName\nmore", 2, 3, /unterminated/],
    ["unterminated at the end", "abc\r\n\r\nx${", 3, 2, /unterminated/],
    ["empty ${}", "a${}", 1, 4, /empty/],
    ["expression", "${a.b}", 1, 4, /unsupported expression/],
    ["built-in", "\n${Name?html}", 2, 7, /unsupported expression/],
    ["unquoted default", '${Name!default}', 1, 8, /quoted/],
    ["unterminated default", '${Name!"abc}', 1, 8, /unterminated default/],
    ["junk after default", '${Name!"abc" x}', 1, 14, /expected "}"/],
    ["bad escape", '${Name!"a\\qb"}', 1, 10, /unsupported escape/],
    ["unterminated comment", "ok\n<#-- never closed", 2, 1, /comment/],
    ["control directive", "x\n  <#if ToName??>a</#if>", 2, 3, /<#if> is not supported/],
    ["unterminated directive", '<#setting locale="de"', 1, 1, /without its closing/],
  ];
  for (const [name, template, line, column, message] of cases) {
    it(`reports ${name} with its position`, () => {
      const result = checkCoverTemplate(template);
      assert.equal(result.ok, false);
      assert.ok(!result.ok);
      assert.deepEqual([result.line, result.column], [line, column], result.message);
      assert.match(result.message, message);
    });
  }

  it("accepts the provider's default template shape", () => {
    const template = `<#escape x as x?html>\n<#setting time_zone="Europe/Berlin"/>\n<html><head><title>Retarus Faxolution for Applications Default Cover Page</title></head>\n<body><h1>Telefax</h1>\${FromName!} \${FromCompanyName!} \${FromTelNum!} \${ToName!} \${ToCompanyName!} \${ToFaxNum!} \${SubjectTitle!} \${SubjectText!}</body></html>\n</#escape>`;
    const result = checkCoverTemplate(template);
    assert.ok(result.ok);
    assert.deepEqual(result.keys, ["FromName", "FromCompanyName", "FromTelNum", "ToName", "ToCompanyName", "ToFaxNum", "SubjectTitle", "SubjectText"]);
  });

  it("accepts the built-in default template", () => {
    for (const paper of ["A4", "LETTER"] as const) {
      const result = checkCoverTemplate(defaultCoverTemplate(paper));
      assert.ok(result.ok);
      for (const key of ["ToName", "ToCompanyName", "ToFaxNum", "FromName", "FromCompanyName", "FromTelNum", "Date", "Pages", "SubjectTitleLine1", "SubjectTextLine1"]) {
        assert.ok(result.keys.includes(key), key);
      }
    }
  });
});

describe("coverPageProperties", () => {
  it("adds the renderer-supplied Date, Pages and ToFaxNum; submitted properties win", () => {
    const context = { recipientNumber: "+49 30 1234", pageCount: 4, date: "2025-03-14 09:30 CET" };
    assert.deepEqual({ ...coverPageProperties(null, context) }, { Date: "2025-03-14 09:30 CET", Pages: "4", ToFaxNum: "+49 30 1234" });
    const properties = coverPageProperties(
      [
        { key: "ToFaxNum", value: "030 1234" },
        { key: "ToName", value: "A" },
        { key: "ToName", value: "B" },
        { key: "SubjectText", value: null },
        { key: "toname", value: "lower" },
      ],
      context,
    );
    assert.equal(properties.ToFaxNum, "030 1234");
    assert.equal(properties.ToName, "A");
    assert.equal(properties.toname, "lower");
    assert.equal(Object.hasOwn(properties, "SubjectText"), false);
  });

  it("formats the date in the time zone", () => {
    assert.equal(formatCoverPageDate(new Date("2025-03-14T08:30:00Z")), "2025-03-14 09:30 CET");
    assert.equal(formatCoverPageDate(new Date("2025-07-01T22:05:00Z"), "UTC"), "2025-07-01 22:05 UTC");
  });
});

/** Dark pixels (< 160, as the fax image stage thresholds) in rows [top, bottom) and columns [left, right). */
function darkPixels(page: GreyPage, top: number, bottom: number, left = 0, right = page.width): number {
  let count = 0;
  for (let y = Math.max(0, top); y < Math.min(bottom, page.height); y++) {
    for (let x = Math.max(0, left); x < Math.min(right, page.width); x++) if ((page.data[y * page.width + x] as number) < 160) count++;
  }
  return count;
}

/** Converts mm on the paper to pixels of the page (the paper is centred on the scan line). */
function toPixels(geometry: PageGeometry, paperFormat: PaperFormat) {
  const paperWidthMm = paperFormat === "A4" ? 210 : 8.5 * MM_PER_INCH;
  const paperLeft = (geometry.widthPx - paperWidthMm * (FAX_X_DPI / MM_PER_INCH)) / 2;
  return {
    x: (mm: number) => Math.round(paperLeft + mm * (FAX_X_DPI / MM_PER_INCH)),
    y: (mm: number) => Math.round(mm * (geometry.yDpi / MM_PER_INCH)),
  };
}

const baseProperties = (extra: Array<{ key: string; value: string }> = []) =>
  coverPageProperties([{ key: "FromName", value: "Anna Schmidt" }, { key: "SubjectTitle", value: "Order 42" }, ...extra], {
    recipientNumber: "+49 89 1234567",
    pageCount: 3,
    date: "2025-03-14 09:30 CET",
  });

describe("default cover page", () => {
  const formats: Array<[PaperFormat, Resolution]> = [
    ["A4", "HIGH"],
    ["A4", "LOW"],
    ["LETTER", "HIGH"],
  ];
  for (const [paperFormat, resolution] of formats) {
    it(`renders ${paperFormat} ${resolution} at the page size, with the heading and the To name`, async () => {
      const geometry = pageGeometry(paperFormat, resolution);
      const layout = defaultCoverLayout(paperFormat);
      const px = toPixels(geometry, paperFormat);
      const without = await renderDefaultCoverPage(baseProperties(), geometry);
      const withName = await renderDefaultCoverPage(baseProperties([{ key: "ToName", value: "John Smith" }]), geometry);
      for (const page of [without, withName]) {
        assert.equal(page.width, 1728);
        assert.equal(page.height, geometry.heightPx);
        assert.equal(page.data.length, 1728 * geometry.heightPx);
        assert.equal(page.tone, "text");
      }
      // The header band stays white.
      assert.equal(darkPixels(without, 0, geometry.headerBandPx), 0);
      // "Telefax": black text in the heading area.
      const heading = darkPixels(without, px.y(layout.heading.baseline - layout.heading.fontSize), px.y(layout.heading.baseline + 1));
      assert.ok(heading > 2000 * (geometry.yDpi / 196), `heading dark pixels ${heading}`);
      // The rows of the To name get darker when ToName is set, and nothing else changes much.
      const box = layout.fields.ToName;
      const rows = [px.y(box.baseline - box.fontSize), px.y(box.baseline + 1.5)] as const;
      const cols = [px.x(box.x), px.x(box.x + box.width)] as const;
      assert.equal(darkPixels(without, ...rows, ...cols), 0);
      assert.ok(darkPixels(withName, ...rows, ...cols) > 500 * (geometry.yDpi / 196));
      assert.equal(darkPixels(withName, rows[1], geometry.heightPx), darkPixels(without, rows[1], geometry.heightPx));
      // Bilevel-friendly: no mid-grey areas, only anti-aliased edges.
      const grey = without.data.filter((v) => v > 64 && v < 192).length;
      assert.ok(grey < darkPixels(without, 0, geometry.heightPx), `grey ${grey}`);
    });
  }

  it("shows the To name (the text differs per recipient)", async () => {
    const geometry = pageGeometry("A4", "LOW");
    const a = await renderDefaultCoverPage(baseProperties([{ key: "ToName", value: "John Smith" }]), geometry);
    const b = await renderDefaultCoverPage(baseProperties([{ key: "ToName", value: "Jane Doe" }]), geometry);
    assert.notDeepEqual(a.data, b.data);
  });

  for (const paperFormat of ["A4", "LETTER"] as const) {
    it(`keeps a 2000-character SubjectText and overlong fields inside the page margins (${paperFormat})`, async () => {
      const geometry = pageGeometry(paperFormat, "HIGH");
      const layout = defaultCoverLayout(paperFormat);
      const px = toPixels(geometry, paperFormat);
      const words = ["fax", "transmission", "Überweisung", "a", "WWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWW", "line\nbreak"];
      let text = "";
      for (let i = 0; text.length < 2000; i++) text += `${words[i % words.length]} `;
      assert.ok(text.length >= 2000);
      const long = "W".repeat(120);
      const extra = [
        { key: "SubjectText", value: text },
        { key: "ToName", value: long },
        { key: "ToCompanyName", value: long },
        { key: "FromCompanyName", value: long },
        { key: "SubjectTitle", value: `${long} ${long}` },
        { key: "Date", value: long },
      ];
      const empty = await renderDefaultCoverPage(baseProperties(), geometry);
      const full = await renderDefaultCoverPage(baseProperties(extra), geometry);
      // Below the message area (footer rule, footer text, bottom margin) nothing changes.
      const belowMessage = px.y(layout.footerRule - 2);
      assert.equal(darkPixels(full, belowMessage, geometry.heightPx), darkPixels(empty, belowMessage, geometry.heightPx));
      assert.ok(darkPixels(full, px.y(layout.message.baseline), belowMessage) > 20000, "the message area is filled");
      // The right margin stays white (the rules end at it).
      assert.equal(darkPixels(full, 0, geometry.heightPx, px.x(layout.paper.width - 18) + 1), 0);
      // The message is cut with an ellipsis.
      const lines = wrapText(text, layout.message);
      assert.equal(lines.length, layout.message.lines);
      assert.ok(lines.at(-1)?.endsWith("\u2026"));
    });
  }

  it("wraps at word boundaries, keeps line breaks and blank lines", () => {
    const box = { ...defaultCoverLayout("A4").message, lines: 10 };
    assert.deepEqual(wrapText("Dear Sir,\n\nfine.\r\n  indented\n\n\n", box), ["Dear Sir,", "", "fine.", "  indented"]);
    const words = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
    const lines = wrapText(words, box);
    assert.ok(lines.length > 1);
    assert.equal(lines.join(" "), words);
    assert.deepEqual(wrapText("", box), [""]);
  });

  it("fits one-line fields with an ellipsis and collapses line breaks", () => {
    const properties = defaultCoverProperties({ ToName: "John\nSmith", ToCompanyName: "x".repeat(500), SubjectText: "a\nb" }, "A4");
    assert.equal(properties.ToName, "John Smith");
    assert.ok(properties.ToCompanyName?.endsWith("\u2026"));
    assert.ok((properties.ToCompanyName?.length ?? 0) < 100);
    assert.equal(properties.SubjectTextLine1, "a");
    assert.equal(properties.SubjectTextLine2, "b");
    assert.equal(properties.FromName, "");
  });

  it("escapes values into the SVG (markup in a value is text)", async () => {
    const geometry = pageGeometry("A4", "LOW");
    const page = await renderDefaultCoverPage(baseProperties([{ key: "ToName", value: `</text><rect width="999" height="999"/><text>` }]), geometry);
    // A 999 mm black rectangle would blacken the page.
    assert.ok(darkPixels(page, 0, geometry.heightPx) < page.data.length / 10);
  });
});

describe("renderSvgCoverPage", () => {
  const fullBlack = (attributes: string) =>
    `<?xml version="1.0"?>\n<!-- a page -->\n<svg xmlns="http://www.w3.org/2000/svg" ${attributes}><rect x="0" y="0" width="100%" height="100%" fill="#000"/></svg>`;

  it("stretches the viewBox onto the paper, centred on the scan line (A4)", async () => {
    for (const resolution of ["HIGH", "LOW"] as const) {
      const geometry = pageGeometry("A4", resolution);
      const page = await renderSvgCoverPage(fullBlack(`width="10cm" height="10cm" viewBox="0 0 10 10" preserveAspectRatio="xMidYMid meet"`), geometry);
      assert.equal(page.width, 1728);
      assert.equal(page.height, geometry.heightPx);
      // 1687 paper pixels on 1728: 20.5 columns either side, rounded to 21 white columns left, 20 right.
      const paperLeft = Math.round((1728 - Math.round((210 / MM_PER_INCH) * FAX_X_DPI)) / 2);
      assert.equal(paperLeft, 21);
      assert.equal(darkPixels(page, 0, page.height, 0, paperLeft), 0);
      assert.equal(darkPixels(page, 0, page.height, paperLeft + 1687), 0);
      assert.equal(darkPixels(page, 0, page.height, paperLeft, paperLeft + 1687), 1687 * page.height);
    }
  });

  it("lets LETTER paper overhang the scan line", async () => {
    const geometry = pageGeometry("LETTER", "HIGH");
    const page = await renderSvgCoverPage(fullBlack(`viewBox="0 0 215.9 279.4"`), geometry);
    assert.equal(page.height, 2156);
    assert.equal(darkPixels(page, 0, page.height), 1728 * 2156);
  });

  it("fills the paper with an SVG without a viewBox", async () => {
    const geometry = pageGeometry("A4", "LOW");
    const page = await renderSvgCoverPage(
      `<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><rect width="50" height="100" fill="#000"/></svg>`,
      geometry,
    );
    assert.equal(page.height, 1146);
    // The left half of the paper is black.
    assert.equal(darkPixels(page, 0, page.height, 0, 21), 0);
    assert.equal(darkPixels(page, 0, page.height, 21, 21 + 840), 840 * 1146);
    assert.equal(darkPixels(page, 0, page.height, 21 + 846), 0);
  });

  it("makes transparent areas white and gives grey pixels", async () => {
    const geometry = pageGeometry("A4", "LOW");
    const page = await renderSvgCoverPage(
      `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 210 297"><rect x="10" y="10" width="50" height="50" fill="#808080"/></svg>`,
      geometry,
    );
    assert.equal(page.data[0], 255);
    const inside = page.data[Math.round(35 * (98 / MM_PER_INCH)) * 1728 + 21 + Math.round(35 * (204 / MM_PER_INCH))] as number;
    assert.ok(inside > 100 && inside < 160, `grey ${inside}`);
  });

  it("throws CoverPageRenderError for SVG that cannot be parsed", async () => {
    const geometry = pageGeometry("A4", "LOW");
    for (const svg of ["<svg", "not svg at all", `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"><rect></svg>`]) {
      await assert.rejects(renderSvgCoverPage(svg, geometry), (error: unknown) => {
        assert.ok(error instanceof CoverPageRenderError);
        assert.match(error.message, /cover page SVG cannot be rendered/);
        return true;
      });
    }
  });

  it("refuses external references and allows fragments and data: URLs", async () => {
    const svg = (inner: string, head = "") =>
      `${head}<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 10 10">${inner}</svg>`;
    const refused = [
      svg(`<image width="10" height="10" xlink:href="http://example.com/logo.png"/>`),
      svg(`<image width="10" height="10" href="file:///etc/passwd"/>`),
      svg(`<image width="10" height="10" href="logo.png"/>`),
      svg(`<image width="10" height="10" href="&#104;ttp://example.com/x.png"/>`),
      svg(`<use xlink:href='other.svg#a'/>`),
      svg(`<rect width="1" height="1" fill="url(http://example.com/p.svg#g)"/>`),
      svg(`<rect width="1" height="1" style="fill: url( 'file:///x.svg#g' )"/>`),
      svg(`<style>@import url("https://example.com/a.css");</style>`),
      svg(`<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="#x" parse="text"/>`),
      svg(`<text>&e;</text>`, `<!DOCTYPE svg [<!ENTITY e SYSTEM "file:///etc/passwd">]>`),
    ];
    for (const text of refused) {
      assert.notEqual(findExternalSvgReference(text), null, text);
      await assert.rejects(renderSvgCoverPage(text, pageGeometry("A4", "LOW")), CoverPageRenderError);
    }
    const allowed = [
      svg(`<defs><linearGradient id="g"/></defs><rect width="1" height="1" fill="url(#g)"/><use href="#g"/>`),
      svg(`<image width="10" height="10" href="data:image/png;base64,iVBORw0KGgo="/>`),
      svg(`<rect width="1" height="1"/>`, `<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">`),
      defaultCoverTemplate("A4"),
    ];
    for (const text of allowed) assert.equal(findExternalSvgReference(text), null, text);
    const page = await renderSvgCoverPage(allowed[2] as string, pageGeometry("A4", "LOW"));
    assert.equal(page.height, 1146);
  });

  it("fills and renders an SVG template, refusing a missing required property", async () => {
    const template = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 210 297"><text x="20" y="40" font-size="10">\${ToName}</text></svg>`;
    const geometry = pageGeometry("A4", "LOW");
    const page = await renderSvgCoverTemplate(template, { ToName: "A & B <C>" }, geometry);
    assert.ok(darkPixels(page, 0, page.height) > 100);
    await assert.rejects(renderSvgCoverTemplate(template, {}, geometry), (error: unknown) => {
      assert.ok(error instanceof CoverPageRenderError);
      assert.match(error.message, /ToName/);
      return true;
    });
  });
});

describe("overlaidPages", () => {
  const lists: Record<string, Array<number | null>> = {
    "1 doc, 1 page": [0],
    "1 doc, 3 pages": [0, 0, 0],
    "2 docs": [0, 0, 1],
    "3 docs": [0, 1, 1, 2],
    "cover only": [null],
    "cover + 1 doc": [null, 0, 0],
    "cover + 2 docs": [null, 0, 1, 1],
    "cover + 3 docs": [null, 0, 0, 1, 2],
  };
  // One string per list above, in order: X = overlay.
  const expected: Record<OverlayMode, string[]> = {
    ALL_PAGES: ["X", "XXX", "XXX", "XXXX", "X", "XXX", "XXXX", "XXXXX"],
    NO_OVERLAY: [".", "...", "...", "....", ".", "...", "....", "....."],
    FIRST_PAGE: ["X", "X..", "X..", "X...", "X", "X..", "X...", "X...."],
    LAST_PAGE: ["X", "..X", "..X", "...X", "X", "..X", "...X", "....X"],
    ALL_BUT_FIRST_PAGE: [".", ".XX", ".XX", ".XXX", ".", ".XX", ".XXX", ".XXXX"],
    ALL_BUT_LAST_PAGE: [".", "XX.", "XX.", "XXX.", ".", "XX.", "XXX.", "XXXX."],
    ALL_BUT_FIRST_AND_LAST_PAGE: [".", ".X.", ".X.", ".XX.", ".", ".X.", ".XX.", ".XXX."],
    FIRST_FILE: ["X", "XXX", "XX.", "X...", ".", ".XX", ".X..", ".XX.."],
  };

  it("covers every mode", () => {
    assert.deepEqual([...OVERLAY_MODES].sort(), Object.keys(expected).sort());
  });

  for (const mode of OVERLAY_MODES) {
    it(`chooses the pages for ${mode}`, () => {
      Object.entries(lists).forEach(([name, indexes], i) => {
        const pages = indexes.map((documentIndex) => ({ documentIndex }));
        const got = overlaidPages(mode, pages)
          .map((on) => (on ? "X" : "."))
          .join("");
        assert.equal(got, expected[mode][i], `${mode}, ${name}`);
      });
      assert.deepEqual(overlaidPages(mode, []), []);
    });
  }

  it("gives FIRST_FILE to the first document that has pages", () => {
    assert.deepEqual(overlaidPages("FIRST_FILE", [{ documentIndex: null }, { documentIndex: 1 }, { documentIndex: 2 }]), [false, true, false]);
  });
});

describe("applyOverlay", () => {
  it("darkens: each pixel becomes the darker of page and overlay", () => {
    const geometry = pageGeometry("A4", "LOW");
    const page = whitePage(geometry, "photo");
    const overlay = whitePage(geometry);
    page.data.set([0, 100, 200, 255, 255]);
    overlay.data.set([255, 50, 220, 0, 128]);
    applyOverlay(page, overlay);
    assert.deepEqual([...page.data.subarray(0, 6)], [0, 50, 200, 0, 128, 255]);
    assert.equal(page.tone, "photo");
    assert.equal(overlay.data[0], 255, "the overlay is not changed");
  });

  it("refuses an overlay of another size", () => {
    assert.throws(() => applyOverlay(whitePage(pageGeometry("A4", "LOW")), whitePage(pageGeometry("A4", "HIGH"))), RangeError);
  });
});

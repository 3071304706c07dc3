import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  headerDependsOnRecipient,
  parseHeaderTemplate,
  resolveTimeZone,
  type HeaderTemplate,
} from "../../src/render/header/header-template.ts";
import { formatHeader, type HeaderLine, type HeaderValues } from "../../src/render/header/format-header.ts";
import { drawHeaderLines, headerLinePitch, placeHeaderLine } from "../../src/render/header/draw-header-line.ts";
import { pageGeometry, whitePage, type GreyPage, type PageGeometry } from "../../src/render/pages/grey-page.ts";

/** Thursday 2016-08-04 16:03:17.250 UTC: 18:03:17 CEST in Berlin, 12:03:17 EDT in New York. */
const SUMMER = Date.UTC(2016, 7, 4, 16, 3, 17, 250);
/** Monday 2016-02-01 17:03:17 UTC: 18:03:17 CET in Berlin (the contract's example), 12:03:17 EST in New York. */
const WINTER = Date.UTC(2016, 1, 1, 17, 3, 17);

function values(time: number, more: Partial<HeaderValues> = {}): HeaderValues {
  return { time, page: 1, totalPages: 12, recipientNumber: "+4989123456", csid: "FAXLINE", personalisation: "Frau Muster", ...more };
}

function parse(text: string): HeaderTemplate {
  const result = parseHeaderTemplate(text);
  if (!result.ok) assert.fail(`"${text}" should parse, got: ${result.message}`);
  return result.template;
}

function parseError(text: string): string {
  const result = parseHeaderTemplate(text);
  if (result.ok) assert.fail(`"${text}" should be rejected`);
  return result.message;
}

/** The left part of the first line. */
function format(text: string, time: number, defaultTimeZone = "Europe/Berlin", more: Partial<HeaderValues> = {}): string {
  return formatHeader(parse(text), values(time, more), { defaultTimeZone })[0]?.left ?? "";
}

describe("parseHeaderTemplate: errors", () => {
  it("rejects a standalone % with its position and how to write a percent sign", () => {
    const message = parseError("Rabatt 10% heute");
    assert.match(message, /standalone "%" at position 10/);
    assert.match(message, /followed by a space/);
    assert.match(message, /write "%%" for a percent sign/);
    assert.match(parseError("%d.%m %x"), /standalone "%" at position 7 \(followed by "x"/);
    assert.match(parseError("%tz"), /standalone "%" at position 1 \(followed by "t"/);
  });

  it("rejects a % at the end", () => {
    const message = parseError("100%");
    assert.match(message, /standalone "%" at position 4 ends the header/);
    assert.match(message, /write "%%" for a percent sign/);
  });

  it("counts positions in characters, not UTF-16 units", () => {
    assert.match(parseError("€😀 5%"), /position 5 /);
  });

  it("rejects an unknown or empty time zone and says how to write one", () => {
    const message = parseError("%tz=Mars/Olympus %H");
    assert.match(message, /unknown time zone "Mars\/Olympus" in "%tz=Mars\/Olympus" at position 1/);
    assert.match(message, /%tz=Europe\/Berlin;/);
    assert.match(message, /CEST/);
    assert.match(parseError("%H %tz=;"), /"%tz=" at position 4 names no time zone/);
    assert.match(parseError("%tz=IST"), /unknown time zone "IST"/);
    assert.match(parseError("%tz=UTC+15"), /unknown time zone "UTC\+15"/);
  });

  it("rejects an unknown language", () => {
    assert.match(parseError("%l=qqq %B"), /unknown language "qqq" in "%l=qqq" at position 1; write a language tag such as %l=de;/);
    assert.match(parseError("%l= %B"), /"%l=" names no language/);
  });

  it("rejects %c after %r on the same line, but not on the next line", () => {
    const message = parseError("left%rright%ccentre");
    assert.match(message, /"%c" at position 12 follows "%r" on the same line/);
    assert.match(message, /must come before right-aligned text \(%r\), not right of it/);
    assert.equal(parseHeaderTemplate("a%rb%nc%cd").ok, true);
  });

  it("allows at most 3 lines", () => {
    assert.equal(parseHeaderTemplate("a%nb%nc").ok, true);
    const message = parseError("a%nb%nc%nd");
    assert.match(message, /"%n" at position 8 starts header line 4; a header has at most 3 lines \(at most 2 "%n"\)/);
  });
});

describe("parseHeaderTemplate: structure", () => {
  it("accepts every control sequence of the contract", () => {
    assert.equal(
      parseHeaderTemplate("%Y %y %m %b %B %d %a %A %H %M %S %P %R %T %K %% %I %p %# %tz=CET %z %Z %C %l=de %c x %r y %n z").ok,
      true,
    );
  });

  it("splits lines into left, centre and right parts", () => {
    const template = parse("L %P%cC%rR%nsecond");
    assert.equal(template.lines.length, 2);
    assert.deepEqual(template.lines[0], {
      left: [{ kind: "text", text: "L " }, { kind: "field", field: "P", timeZone: null, language: null }],
      centre: [{ kind: "text", text: "C" }],
      right: [{ kind: "text", text: "R" }],
    });
    assert.deepEqual(template.lines[1], { left: [{ kind: "text", text: "second" }], centre: [], right: [] });
  });

  it("ends a zone at ';' or a space (dropped) or at any other character that is not part of a zone name (kept)", () => {
    assert.equal(format("%tz=Europe/Berlin;%H", SUMMER, "UTC"), "18");
    assert.equal(format("%tz=CEST Testfax", SUMMER, "UTC"), "Testfax");
    assert.equal(format("%tz=CET%H", SUMMER, "UTC"), "18");
    assert.equal(format("%tz=CET,%H", SUMMER, "UTC"), ",18");
    assert.equal(format("%tz=CET; %H", SUMMER, "UTC"), " 18");
    assert.equal(format("%tz=CET  %H", SUMMER, "UTC"), " 18");
  });

  it("resolves zone names case-insensitively, abbreviations to their region, UTC±h to fixed offsets", () => {
    assert.equal(resolveTimeZone("europe/berlin"), "Europe/Berlin");
    assert.equal(resolveTimeZone("MESZ"), "Europe/Berlin");
    assert.equal(resolveTimeZone("mest"), "Europe/Berlin");
    assert.equal(resolveTimeZone("PDT"), "America/Los_Angeles");
    assert.equal(resolveTimeZone("UTC+2"), "Etc/GMT-2");
    assert.equal(resolveTimeZone("GMT-5"), "Etc/GMT+5");
    assert.equal(resolveTimeZone("Nowhere/City"), null);
    assert.equal(format("%tz=UTC+2 %H %z", SUMMER), "18 +0200");
  });

  it("applies %tz= and %l= from where they stand", () => {
    assert.equal(format("%H %tz=America/New_York;%H %B %l=de;%B", SUMMER), "18 12 August August");
    assert.equal(format("%a %l=de %a %l=fr %a", SUMMER), "Thu Do jeu.");
    const lines = formatHeader(parse("%tz=EST %H%n%H"), values(SUMMER), { defaultTimeZone: "UTC" });
    assert.deepEqual(lines.map((line) => line.left), ["12", "12"]);
  });

  it("tells whether the header differs between recipients", () => {
    assert.equal(headerDependsOnRecipient(parse("%d.%m.%Y %C Page %P of %T%n%rmore")), false);
    assert.equal(headerDependsOnRecipient(parse("To: %#")), true);
    assert.equal(headerDependsOnRecipient(parse("a%nb%r%K")), true);
    assert.equal(headerDependsOnRecipient(parse("100%% %%K %%#")), false);
  });
});

describe("formatHeader", () => {
  const ALL = "%Y|%y|%m|%b|%B|%d|%a|%A|%H|%M|%S|%I|%p|%P|%R|%T|%z|%Z|%#|%C|%K|%%";

  it("fills every placeholder in Europe/Berlin in summer", () => {
    assert.equal(
      format(ALL, SUMMER),
      "2016|16|08|Aug|August|04|Thu|Thursday|18|03|17|06|PM|01|001|12|+0200|CEST|+4989123456|FAXLINE|Frau Muster|%",
    );
  });

  it("fills every placeholder in Europe/Berlin in winter", () => {
    assert.equal(
      format(ALL, WINTER, "Europe/Berlin", { page: 7, totalPages: 9 }),
      "2016|16|02|Feb|February|01|Mon|Monday|18|03|17|06|PM|07|007|9|+0100|CET|+4989123456|FAXLINE|Frau Muster|%",
    );
  });

  it("fills every placeholder in America/New_York", () => {
    assert.equal(
      format(ALL, SUMMER, "America/New_York", { page: 25, totalPages: 99 }),
      "2016|16|08|Aug|August|04|Thu|Thursday|12|03|17|12|PM|25|025|99|-0400|EDT|+4989123456|FAXLINE|Frau Muster|%",
    );
    assert.equal(format("%H %I %p %z %Z", WINTER, "America/New_York"), "12 12 PM -0500 EST");
    assert.equal(format("%d.%m.%Y %H:%M %I %p", Date.UTC(2016, 0, 1, 5, 7, 8), "America/New_York"), "01.01.2016 00:07 12 AM");
  });

  it("takes the date in the zone, not in UTC", () => {
    const newYearInBerlin = Date.UTC(2015, 11, 31, 23, 30, 0);
    assert.equal(format("%d.%m.%Y %y %H:%M %A", newYearInBerlin), "01.01.2016 16 00:30 Friday");
    assert.equal(format("%d.%m.%Y %H:%M %A", newYearInBerlin, "UTC"), "31.12.2015 23:30 Thursday");
  });

  it("prints month and weekday names in the language of %l=", () => {
    assert.equal(format("%l=de %a %A %d. %b / %B %Y", SUMMER), "Do Donnerstag 04. Aug. / August 2016");
    assert.equal(format("%l=de %A %d. %B %Y", WINTER), "Montag 01. Februar 2016");
    assert.equal(format("%l=fr;%A %d %B", SUMMER), "jeudi 04 août");
    assert.equal(format("%l=it;%B %l=es;%B %l=nl;%B", SUMMER), "agosto agosto augustus");
    assert.equal(format("%l=de %I %p", SUMMER), "06 PM");
    assert.equal(formatHeader(parse("%B"), values(SUMMER), { defaultTimeZone: "UTC", defaultLanguage: "de" })[0]?.left, "August");
  });

  it("writes zone abbreviations, and GMT offsets where a zone has none", () => {
    assert.equal(format("%Z %z", SUMMER, "Europe/London"), "BST +0100");
    assert.equal(format("%Z %z", WINTER, "Europe/London"), "GMT +0000");
    assert.equal(format("%Z %z", SUMMER, "Europe/Lisbon"), "WEST +0100");
    assert.equal(format("%Z %z", SUMMER, "Europe/Athens"), "EEST +0300");
    assert.equal(format("%Z %z", WINTER, "Europe/Helsinki"), "EET +0200");
    assert.equal(format("%Z %z", SUMMER, "Europe/Moscow"), "MSK +0300");
    assert.equal(format("%Z %z", WINTER, "America/Chicago"), "CST -0600");
    assert.equal(format("%Z %z", SUMMER, "America/Denver"), "MDT -0600");
    assert.equal(format("%Z %z", SUMMER, "America/Phoenix"), "MST -0700");
    assert.equal(format("%Z %z", SUMMER, "America/Los_Angeles"), "PDT -0700");
    assert.equal(format("%Z %z", WINTER, "America/St_Johns"), "NST -0330");
    assert.equal(format("%Z %z", WINTER, "Asia/Kolkata"), "IST +0530");
    assert.equal(format("%Z %z", WINTER, "UTC"), "UTC +0000");
    assert.equal(format("%Z %z", WINTER, "GMT"), "GMT +0000");
    assert.equal(format("%Z %z", SUMMER, "Europe/Istanbul"), "GMT+3 +0300");
    assert.equal(format("%Z %z", WINTER, "Asia/Kathmandu"), "GMT+5:45 +0545");
    assert.equal(format("%Z %z", SUMMER, "UTC-3"), "GMT-3 -0300");
  });

  it("gives the abbreviation a zone has on the day, whichever abbreviation chose it", () => {
    assert.equal(format("%tz=CEST %H %Z %z", WINTER, "UTC"), "18 CET +0100");
    assert.equal(format("%tz=MEZ %H %Z %z", SUMMER, "UTC"), "18 CEST +0200");
  });

  it("fills centre and right parts and further lines", () => {
    const lines = formatHeader(parse("%d.%m.%Y%c%C%rPage %P/%T%nTo: %#"), values(SUMMER), { defaultTimeZone: "Europe/Berlin" });
    assert.deepEqual(lines, [
      { left: "04.08.2016", centre: "FAXLINE", right: "Page 01/12" },
      { left: "To: +4989123456", centre: "", right: "" },
    ]);
  });

  it("prints no control characters from values", () => {
    assert.equal(format("To: %K.", SUMMER, "UTC", { personalisation: "a\nb\tc\u0085" }), "To: abc.");
  });

  it("rejects an unknown default zone", () => {
    assert.throws(() => formatHeader(parse("%H"), values(SUMMER), { defaultTimeZone: "Nowhere" }), /"Nowhere" is not a known time zone/);
    assert.equal(formatHeader(parse("%H %Z"), values(SUMMER))[0]?.left, "16 UTC");
  });

  it("formats the contract's examples", () => {
    // The contract shows "Page: 1 of 12"; %P is defined as 2 digits, so it prints 01.
    assert.equal(
      format("%d.%m.%Y %H:%M:%S Page: %P of %T Sender: Sample Inc. – Service Dept.", WINTER),
      "01.02.2016 18:03:17 Page: 01 of 12 Sender: Sample Inc. – Service Dept.",
    );
    assert.equal(
      format("%tz=CEST Testfax: CSID: %C Empfaengernummer: %# Datum: %d.%m.%Y %H:%M %z", SUMMER, "UTC"),
      "Testfax: CSID: FAXLINE Empfaengernummer: +4989123456 Datum: 04.08.2016 18:03 +0200",
    );
  });
});

const HIGH = pageGeometry("A4", "HIGH");
const LOW = pageGeometry("A4", "LOW");

function line(left: string, centre = "", right = ""): HeaderLine {
  return { left, centre, right };
}

/** Rows and columns of black pixels. */
function ink(page: GreyPage): { rows: Set<number>; minX: number; maxX: number; count: number } {
  const rows = new Set<number>();
  let minX = Infinity;
  let maxX = -Infinity;
  let count = 0;
  for (let y = 0; y < page.height; y++) {
    for (let x = 0; x < page.width; x++) {
      if (page.data[y * page.width + x] === 0) {
        rows.add(y);
        minX = Math.min(minX, x);
        maxX = Math.max(maxX, x);
        count++;
      }
    }
  }
  return { rows, minX, maxX, count };
}

function drawn(lines: HeaderLine[], geometry: PageGeometry, grey = 255): GreyPage {
  const page = whitePage(geometry);
  page.data.fill(grey);
  drawHeaderLines(page, lines, geometry);
  return page;
}

describe("drawHeaderLines", () => {
  for (const geometry of [HIGH, LOW]) {
    const pitch = headerLinePitch(geometry);

    it(`${geometry.resolution}: draws a one-line header only in the band, in the first line's rows`, () => {
      const found = ink(drawn([line("01.02.2016 18:03:17 Page: 01 of 12 gjpqy ÄÖÜ", "Mitte", "Seite 01/12")], geometry));
      assert.ok(found.count > 500, `some ink (${found.count})`);
      assert.ok(Math.max(...found.rows) < geometry.headerBandPx);
      assert.ok(Math.max(...found.rows) < pitch);
    });

    it(`${geometry.resolution}: fits two lines into the band, each in its own rows; a third goes below`, () => {
      assert.ok(2 * pitch <= geometry.headerBandPx);
      const both = ink(drawn([line("Ägypten gjpqy"), line("Éclair gjpqy")], geometry));
      assert.ok(Math.max(...both.rows) < geometry.headerBandPx);
      const second = ink(drawn([line(""), line("Éclair gjpqy ÄÖÜ")], geometry));
      assert.ok(second.count > 0);
      assert.ok(Math.min(...second.rows) >= pitch && Math.max(...second.rows) < 2 * pitch, [...second.rows].join(","));
      const third = ink(drawn([line(""), line(""), line("Drei gjpqy")], geometry));
      assert.ok(Math.min(...third.rows) >= 2 * pitch && Math.max(...third.rows) < 3 * pitch);
    });

    it(`${geometry.resolution}: puts left, centre and right parts into the left, middle and right thirds`, () => {
      const third = geometry.widthPx / 3;
      const left = ink(drawn([line("Left part")], geometry));
      const centre = ink(drawn([line("", "Centre part")], geometry));
      const right = ink(drawn([line("", "", "Right part")], geometry));
      assert.ok(left.maxX < third, "left");
      assert.ok(centre.minX > third && centre.maxX < 2 * third, "centre");
      assert.ok(right.minX > 2 * third, "right");
      // The centre part is centred on the scan line, within a column.
      assert.ok(Math.abs((centre.minX + centre.maxX) / 2 - geometry.widthPx / 2) < 13);
      // The left part starts at the text pages' left edge (0.7 in on A4), the right part ends as far from the right end.
      assert.ok(left.minX >= 143 && left.minX < 150, `left edge ${left.minX}`);
      assert.ok(right.maxX < geometry.widthPx - 143 && right.maxX > geometry.widthPx - 150, `right edge ${right.maxX}`);
    });

    it(`${geometry.resolution}: leaves the drawn strip pure black and white and the rest of the page alone`, () => {
      const page = drawn([line("Left", "Centre", "Right"), line("second")], geometry, 200);
      const values = new Set<number>();
      for (let y = 0; y < 2 * pitch; y++) for (let x = 143; x < 180; x++) values.add(page.data[y * page.width + x] ?? -1);
      assert.deepEqual([...values].sort((a, b) => a - b), [0, 255]);
      // Beside the second line's text, and below the header, the page is as it was.
      assert.equal(page.data[(pitch + 3) * page.width + 1000], 200);
      assert.equal(page.data[(3 * pitch + 1) * page.width + 150], 200);
      const white = drawn([line("Left", "Centre", "Right")], geometry);
      assert.ok(white.data.every((v) => v === 0 || v === 255));
    });
  }

  it("reuses its canvas without carrying drawings over from one page to the next", () => {
    const first = drawn([line("AAAAAAAAAA", "BBBB", "CCCC")], HIGH);
    assert.ok(ink(first).count > 0);
    assert.equal(ink(drawn([line("")], HIGH)).count, 0);
    assert.deepEqual(drawn([line("AAAAAAAAAA", "BBBB", "CCCC")], HIGH).data, first.data);
  });

  it("draws nothing for an empty header", () => {
    assert.equal(ink(drawn([], LOW)).count, 0);
  });
});

describe("placeHeaderLine: cut rule", () => {
  const cell = 204 / 16;
  const long = "x".repeat(200);

  it("holds 113 columns on A4 and 116 on LETTER", () => {
    assert.equal(placeHeaderLine(line(long), HIGH).left?.chars.length, 113);
    assert.equal(placeHeaderLine(line(long), pageGeometry("LETTER", "LOW")).left?.chars.length, 116);
  });

  it("cuts the left part one column before the right part", () => {
    const placed = placeHeaderLine(line(long, "", "Page 01/12"), HIGH);
    assert.deepEqual(placed.right?.chars.join(""), "Page 01/12");
    const left = placed.left;
    assert.ok(left && placed.right);
    assert.equal(left.chars.length, 113 - 10 - 1);
    assert.ok(left.x + left.chars.length * cell <= placed.right.x - cell + 1e-9);
  });

  it("cuts the centre part before the right part and the left part before the centre part", () => {
    const placed = placeHeaderLine(line(long, long, "Page 01/12"), HIGH);
    assert.ok(placed.centre && placed.right);
    assert.equal(placed.centre.x, Math.round((0.1 + 0.6) * 204));
    assert.ok(placed.centre.x + placed.centre.chars.length * cell <= placed.right.x - cell + 1e-9);
    assert.equal(placed.left, null);
    const short = placeHeaderLine(line(long, "Mitte"), HIGH);
    assert.ok(short.left && short.centre);
    assert.equal(short.centre.chars.join(""), "Mitte");
    assert.ok(short.left.x + short.left.chars.length * cell <= short.centre.x - cell + 1e-9);
  });

  it("keeps the start of a right part longer than the line", () => {
    const placed = placeHeaderLine(line("left", "centre", `R${long}`), HIGH);
    assert.equal(placed.right?.chars.length, 113);
    assert.equal(placed.right?.chars[0], "R");
    assert.equal(placed.centre, null);
    assert.equal(placed.left, null);
  });

  it("counts a wide (CJK) character as two columns", () => {
    const placed = placeHeaderLine(line("株式会社テスト", "", "東京 01/12"), HIGH);
    assert.equal(placed.right?.x, 1728 - 143 - 10 * cell, "東京 01/12: 2 + 2 + 6 columns");
    const cut = placeHeaderLine(line("字".repeat(100)), HIGH);
    assert.equal(cut.left?.chars.length, 56, "113 columns hold 56 wide characters, not half of one more");
    assert.ok(ink(drawn([line("", "", "東京 01/12")], HIGH)).minX >= placed.right!.x - 1);
  });

  it("draws a character the fax font lacks from a fallback font, not as a box", () => {
    const han = drawn([line("字")], HIGH);
    const box = drawn([line("\u{10ffff}")], HIGH);
    assert.notDeepEqual(han.data, box.data, "字 is drawn by WenQuanYi Micro Hei (fonts-wqy-microhei), not as the missing-glyph box");
    const found = ink(han);
    assert.ok(found.maxX - found.minX > cell, `wider than one cell (${found.maxX - found.minX} px)`);
    assert.ok(found.maxX - found.minX <= 2 * cell, `within its two cells (${found.maxX - found.minX} px)`);
  });

  it("ignores spaces at the inner ends of the parts", () => {
    const placed = placeHeaderLine(line("  left  ", "  centre  ", "  right  "), HIGH);
    assert.equal(placed.left?.chars.join(""), "  left");
    assert.equal(placed.centre?.chars.join(""), "centre");
    assert.equal(placed.right?.chars.join(""), "right");
    assert.equal(placed.right?.x, 1728 - 143 - 5 * cell);
  });
});

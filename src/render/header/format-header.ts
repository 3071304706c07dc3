/**
 * Fills a parsed header template (header-template.ts) with the values of one page.
 *
 * Values:
 *  - Dates and times come from Intl.DateTimeFormat in the placeholder's zone: the zone of the
 *    last %tz= before it, else `options.defaultTimeZone` (an IANA name or an abbreviation that
 *    %tz= accepts, e.g. from config), else UTC. Digits are always 0-9.
 *    %Y 2016, %y 16, %m 08, %d 04, %H 18 (00-23), %I 06 (01-12), %p AM/PM (always these two,
 *    whatever the language), %M 03, %S 17.
 *  - Names (%b %B %a %A) come from Intl in the language of the last %l= before the placeholder,
 *    else `options.defaultLanguage`, else en: Aug / August / Thu / Thursday; with %l=de
 *    Aug. / August / Do / Donnerstag. Month names are the forms Intl uses next to a day number
 *    (Russian "августа", Polish "sierpnia"), since a header nearly always prints the day too.
 *  - %P page number with at least 2 digits (01), %R with at least 3 (001); %T total pages as is
 *    (12). (The contract's example prints "Page: 1 of 12" for "%P of %T", against its own
 *    definition of %P as 2 digits; we follow the definition.)
 *  - %z the zone's offset from GMT on that instant, sign and 4 digits: +0100, -0500, +0530.
 *  - %Z the zone's abbreviation on that instant. Intl's short names are only real abbreviations
 *    for some zones and locales (en-US gets EST/EDT, but Europe/Berlin is "GMT+1"), so
 *    ZONE_NAMES below gives the abbreviations of the European zones and other common ones;
 *    for a zone not in it, Intl's en-US short name is used when it is letters only (the US and
 *    Canadian zones: EST, CDT, MST, AKDT, HST, ...; UTC), and otherwise a GMT offset as Intl
 *    writes it: GMT+3, GMT-3:30, GMT+0.
 *  - %# recipient number, %C CSID, %K personalisation: the given strings.
 * Control characters (C0, DEL, C1) in values and template text print nothing.
 */
import { resolveTimeZone, type HeaderField, type HeaderSegment, type HeaderTemplate } from "./header-template.ts";

export interface HeaderValues {
  /** The instant the header shows, epoch ms. */
  time: number;
  /** 1-based page number within the fax. */
  page: number;
  totalPages: number;
  /** The recipient's fax number (normalised) for %#. */
  recipientNumber: string;
  /** The sender's fax ID for %C. */
  csid: string;
  /** The recipient's header personalisation for %K. */
  personalisation: string;
}

export interface FormatHeaderOptions {
  /** Zone for date/time placeholders not preceded by %tz=; default UTC. Throws if unknown. */
  defaultTimeZone?: string;
  /** Language for names not preceded by %l=; default en. */
  defaultLanguage?: string;
}

/** One header line: the text of its left, centred and right-aligned parts (each may be empty). */
export interface HeaderLine {
  left: string;
  centre: string;
  right: string;
}

/** Standard-time and summer-time abbreviations of zones, under every spelling Intl may resolve them to. */
const ZONE_NAMES: Readonly<Record<string, readonly [standard: string, summer: string]>> = (() => {
  const groups: [string, string, string[]][] = [
    ["UTC", "UTC", ["UTC", "Etc/UTC", "Etc/UCT", "Etc/Universal", "Etc/Zulu"]],
    ["GMT", "GMT", ["Etc/GMT", "Etc/GMT0", "Etc/GMT+0", "Etc/GMT-0", "Etc/Greenwich", "GMT"]],
    ["GMT", "BST", ["Europe/London", "Europe/Jersey", "Europe/Guernsey", "Europe/Isle_of_Man"]],
    ["GMT", "IST", ["Europe/Dublin"]],
    ["GMT", "GMT", ["Atlantic/Reykjavik"]],
    ["WET", "WEST", ["Europe/Lisbon", "Atlantic/Madeira", "Atlantic/Canary", "Atlantic/Faroe", "Atlantic/Faeroe", "WET"]],
    [
      "CET",
      "CEST",
      [
        "Europe/Berlin", "Europe/Busingen", "Europe/Paris", "Europe/Monaco", "Europe/Brussels", "Europe/Amsterdam",
        "Europe/Luxembourg", "Europe/Zurich", "Europe/Vaduz", "Europe/Vienna", "Europe/Rome", "Europe/Vatican",
        "Europe/San_Marino", "Europe/Malta", "Europe/Madrid", "Africa/Ceuta", "Europe/Andorra", "Europe/Gibraltar",
        "Europe/Prague", "Europe/Bratislava", "Europe/Budapest", "Europe/Warsaw", "Europe/Ljubljana", "Europe/Zagreb",
        "Europe/Belgrade", "Europe/Sarajevo", "Europe/Skopje", "Europe/Podgorica", "Europe/Tirane", "Europe/Copenhagen",
        "Europe/Oslo", "Arctic/Longyearbyen", "Europe/Stockholm", "CET", "MET", "Africa/Tunis", "Africa/Algiers",
      ],
    ],
    [
      "EET",
      "EEST",
      [
        "Europe/Athens", "Europe/Bucharest", "Europe/Sofia", "Europe/Helsinki", "Europe/Mariehamn", "Europe/Tallinn",
        "Europe/Riga", "Europe/Vilnius", "Europe/Kyiv", "Europe/Kiev", "Europe/Uzhgorod", "Europe/Zaporozhye",
        "Europe/Chisinau", "Asia/Nicosia", "Europe/Nicosia", "Asia/Famagusta", "Europe/Kaliningrad", "Africa/Cairo",
        "Africa/Tripoli", "Asia/Beirut", "EET",
      ],
    ],
    ["MSK", "MSD", ["Europe/Moscow", "Europe/Simferopol", "Europe/Kirov", "Europe/Volgograd"]],
    ["AST", "ADT", ["America/Halifax", "America/Glace_Bay", "America/Moncton", "America/Goose_Bay", "Atlantic/Bermuda"]],
    ["NST", "NDT", ["America/St_Johns"]],
    ["EST", "EDT", ["America/New_York", "America/Detroit", "America/Toronto", "America/Montreal", "America/Nassau"]],
    ["CST", "CDT", ["America/Chicago", "America/Winnipeg"]],
    ["MST", "MDT", ["America/Denver", "America/Boise", "America/Edmonton"]],
    ["MST", "MST", ["America/Phoenix"]],
    ["PST", "PDT", ["America/Los_Angeles", "America/Vancouver", "America/Tijuana"]],
    ["AKST", "AKDT", ["America/Anchorage", "America/Juneau", "America/Nome", "America/Sitka", "America/Yakutat"]],
    ["HST", "HST", ["Pacific/Honolulu"]],
    ["IST", "IST", ["Asia/Kolkata", "Asia/Calcutta"]],
    ["JST", "JST", ["Asia/Tokyo"]],
    ["KST", "KST", ["Asia/Seoul"]],
    ["HKT", "HKT", ["Asia/Hong_Kong"]],
    ["SGT", "SGT", ["Asia/Singapore"]],
    ["AWST", "AWST", ["Australia/Perth"]],
    ["ACST", "ACDT", ["Australia/Adelaide", "Australia/Broken_Hill"]],
    ["ACST", "ACST", ["Australia/Darwin"]],
    ["AEST", "AEDT", ["Australia/Sydney", "Australia/Melbourne", "Australia/Hobart", "Australia/Canberra", "Australia/ACT", "Australia/NSW"]],
    ["AEST", "AEST", ["Australia/Brisbane"]],
    ["NZST", "NZDT", ["Pacific/Auckland"]],
  ];
  const table: Record<string, readonly [string, string]> = {};
  for (const [standard, summer, zones] of groups) for (const zone of zones) table[zone] = [standard, summer];
  return table;
})();

const DEFAULT_LANGUAGE = "en";
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g;

/** Formatters are costly to make and this runs for every page: keep them (a bounded number). */
const formatters = new Map<string, Intl.DateTimeFormat>();
const MAX_FORMATTERS = 1000;
/** Configured default zones as resolved (resolveTimeZone makes a formatter to check a name). */
const defaultZones = new Map<string, string | null>();

function formatter(locale: string, timeZone: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `${locale}|${timeZone}|${JSON.stringify(options)}`;
  let made = formatters.get(key);
  if (made === undefined) {
    made = new Intl.DateTimeFormat(locale, { ...options, timeZone });
    if (formatters.size >= MAX_FORMATTERS) formatters.clear();
    formatters.set(key, made);
  }
  return made;
}

function part(format: Intl.DateTimeFormat, time: number, type: Intl.DateTimeFormatPartTypes): string {
  return format.formatToParts(time).find((p) => p.type === type)?.value ?? "";
}

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function wallClock(time: number, timeZone: string): WallClock {
  const parts = formatter("en-US", timeZone, {
    numberingSystem: "latn",
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    second: "numeric",
  }).formatToParts(time);
  const get = (type: Intl.DateTimeFormatPartTypes): number => Number(parts.find((p) => p.type === type)?.value ?? NaN);
  return { year: get("year"), month: get("month"), day: get("day"), hour: get("hour"), minute: get("minute"), second: get("second") };
}

/** Offset of the zone from UTC at `time`, in minutes (east positive). */
function offsetMinutes(time: number, timeZone: string): number {
  const wall = wallClock(time, timeZone);
  const asUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);
  return Math.round((asUtc - Math.floor(time / 1000) * 1000) / 60000);
}

function zoneAbbreviation(time: number, timeZone: string): string {
  const names = ZONE_NAMES[timeZone];
  if (names !== undefined) {
    const year = wallClock(time, timeZone).year;
    const standardOffset = Math.min(
      offsetMinutes(Date.UTC(year, 0, 1), timeZone),
      offsetMinutes(Date.UTC(year, 6, 1), timeZone),
    );
    return offsetMinutes(time, timeZone) > standardOffset ? names[1] : names[0];
  }
  const short = part(formatter("en-US", timeZone, { timeZoneName: "short" }), time, "timeZoneName");
  if (/^[A-Z]{2,5}$/.test(short)) return short;
  if (/^GMT[+-]\d/.test(short)) return short;
  const minutes = offsetMinutes(time, timeZone);
  const sign = minutes < 0 ? "-" : "+";
  const h = Math.floor(Math.abs(minutes) / 60);
  const m = Math.abs(minutes) % 60;
  return `GMT${sign}${h}${m === 0 ? "" : `:${String(m).padStart(2, "0")}`}`;
}

function formatOffset(minutes: number): string {
  const sign = minutes < 0 ? "-" : "+";
  const abs = Math.abs(minutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}${String(abs % 60).padStart(2, "0")}`;
}

function pad(n: number, digits: number): string {
  return String(n).padStart(digits, "0");
}

/** A name (%b %B %a %A) in a language. */
function dateName(field: "b" | "B" | "a" | "A", time: number, timeZone: string, language: string): string {
  switch (field) {
    case "b":
    case "B": {
      const month = field === "b" ? "short" : "long";
      return part(formatter(language, timeZone, { day: "numeric", month }), time, "month");
    }
    case "a":
    case "A":
      return part(formatter(language, timeZone, { weekday: field === "a" ? "short" : "long" }), time, "weekday");
  }
}

function fieldText(
  field: HeaderField,
  values: HeaderValues,
  timeZone: string,
  language: string,
  clock: () => WallClock,
): string {
  switch (field) {
    case "Y":
      return pad(clock().year, 4);
    case "y":
      return pad(clock().year % 100, 2);
    case "m":
      return pad(clock().month, 2);
    case "d":
      return pad(clock().day, 2);
    case "H":
      return pad(clock().hour, 2);
    case "I":
      return pad(((clock().hour + 11) % 12) + 1, 2);
    case "p":
      return clock().hour < 12 ? "AM" : "PM";
    case "M":
      return pad(clock().minute, 2);
    case "S":
      return pad(clock().second, 2);
    case "b":
    case "B":
    case "a":
    case "A":
      return dateName(field, values.time, timeZone, language);
    case "z":
      return formatOffset(offsetMinutes(values.time, timeZone));
    case "Z":
      return zoneAbbreviation(values.time, timeZone);
    case "P":
      return pad(values.page, 2);
    case "R":
      return pad(values.page, 3);
    case "T":
      return String(values.totalPages);
    case "#":
      return values.recipientNumber;
    case "C":
      return values.csid;
    case "K":
      return values.personalisation;
  }
}

/** The header lines of one page; see the module comment for the values. */
export function formatHeader(template: HeaderTemplate, values: HeaderValues, options: FormatHeaderOptions = {}): HeaderLine[] {
  const configuredZone = options.defaultTimeZone ?? "UTC";
  let defaultZone = defaultZones.get(configuredZone);
  if (defaultZone === undefined) {
    defaultZone = resolveTimeZone(configuredZone);
    if (defaultZones.size >= MAX_FORMATTERS) defaultZones.clear();
    defaultZones.set(configuredZone, defaultZone);
  }
  if (defaultZone === null) throw new Error(`The default header time zone "${configuredZone}" is not a known time zone`);
  const defaultLanguage = options.defaultLanguage ?? DEFAULT_LANGUAGE;
  const clocks = new Map<string, WallClock>();

  const render = (segments: readonly HeaderSegment[]): string => {
    let text = "";
    for (const segment of segments) {
      if (segment.kind === "text") {
        text += segment.text;
        continue;
      }
      const timeZone = segment.timeZone ?? defaultZone;
      const clock = (): WallClock => {
        let wall = clocks.get(timeZone);
        if (wall === undefined) {
          wall = wallClock(values.time, timeZone);
          clocks.set(timeZone, wall);
        }
        return wall;
      };
      text += fieldText(segment.field, values, timeZone, segment.language ?? defaultLanguage, clock);
    }
    return text.replace(CONTROL_CHARACTERS, "");
  };

  return template.lines.map((line) => ({ left: render(line.left), centre: render(line.centre), right: render(line.right) }));
}

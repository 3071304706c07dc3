/**
 * The fax header line template (renderingOptions.header): parsing and checking.
 *
 * Control sequences (contract §10, docs.retarus.com/fax/headers):
 *   %Y year, 4 digits       %y year, 2 digits        %m month 01-12        %d day 01-31
 *   %b month, abbreviated   %B month, full name      %a weekday, abbr.     %A weekday, full name
 *   %H hour 00-23           %I hour 01-12            %p AM/PM              %M minute 00-59   %S second 00-59
 *   %P page number, 2 digits (01)    %R page number, 3 digits (001)        %T total pages
 *   %# recipient's fax number        %C sender's fax ID (CSID)             %K personalisation of the header
 *   %z offset from GMT (+0100)       %Z zone abbreviation (CET)            %% a percent sign
 *   %c the following text is centred          %r the following text is right-aligned
 *   %n line break                             %tz=<zone> time zone       %l=<lang> language of names
 *
 * Rules (everything else is rejected with a message a person can act on; it becomes a 400 when
 * the job is created):
 *  - A "%" that does not start one of the sequences above, or a "%" at the end, is a standalone
 *    percent sign: "Standalone percent signs are not allowed". The message names its 1-based
 *    position (counted in characters, i.e. code points) and says to write "%%".
 *  - %tz=<zone> and %l=<lang>: the value is the run of characters that can belong to a zone name
 *    (letters, digits, "/", "_", "+", "-") or a language tag (letters, digits, "-", "_"). It ends
 *    at the first other character. If that character is ";" or a space, it ends the value and is
 *    dropped (so "%tz=Europe/Berlin;%H" and "%tz=CEST Testfax" both print no separator); any
 *    other character (e.g. "%", ",", ".") stays part of the header text. An empty value is
 *    rejected.
 *  - %tz= and %l= apply from where they stand to the end of the header (across %n); date and
 *    time placeholders before them use the default zone and language (format-header.ts options:
 *    from config, else UTC and English).
 *    A later %tz= / %l= replaces an earlier one from its position on.
 *  - The zone is an IANA zone name (Europe/Berlin, America/New_York, UTC; any that Intl knows,
 *    case-insensitive), an abbreviation from ZONE_ABBREVIATIONS below, or UTC+h / GMT-h with a
 *    whole number of hours. An abbreviation stands for a representative zone of its region with
 *    that zone's summer-time rules: %tz=CEST and %tz=CET both mean Europe/Berlin, so a header
 *    dated in January with %tz=CEST prints CET and +0100. Other abbreviations, and any name of
 *    up to five letters not in the table, are not accepted (IST: India, Ireland or Israel?; Intl
 *    itself would take ICU's old IDs such as BST = Asia/Dhaka): write the IANA name.
 *  - The language is a BCP 47 tag Intl supports for dates (de, en, fr, it, es, nl, de-CH, ...);
 *    it changes the month and weekday names (%b %B %a %A) only: digits stay 0-9 and %p stays
 *    AM/PM.
 *  - Each line has up to three parts: text before %c / %r is left-aligned, text after %c
 *    centred, text after %r right-aligned. "%c not right of %r": %c after %r on the same line is
 *    rejected. A repeated %c (or %r) in the same part changes nothing.
 *  - %n starts a new line; a header has at most MAX_HEADER_LINES (3) lines, so at most two %n.
 *    Only the first two lines lie in the header band; a third one is drawn over the top of the
 *    page content (the contract recommends at most two %n; we make that the limit).
 */

export const MAX_HEADER_LINES = 3;

/** Placeholders that print a value; the letter after "%". */
export type HeaderField =
  | "Y" | "y" | "m" | "b" | "B" | "d" | "a" | "A" | "H" | "M" | "S" | "I" | "p"
  | "P" | "R" | "T" | "K" | "#" | "C" | "z" | "Z";

const FIELDS: ReadonlySet<string> = new Set<HeaderField>([
  "Y", "y", "m", "b", "B", "d", "a", "A", "H", "M", "S", "I", "p", "P", "R", "T", "K", "#", "C", "z", "Z",
]);

export type HeaderSegment =
  | { readonly kind: "text"; readonly text: string }
  | {
      readonly kind: "field";
      readonly field: HeaderField;
      /** IANA zone chosen by %tz= before this placeholder; null: the default zone. */
      readonly timeZone: string | null;
      /** Language chosen by %l= before this placeholder; null: the default (en). */
      readonly language: string | null;
    };

export interface HeaderTemplateLine {
  readonly left: readonly HeaderSegment[];
  readonly centre: readonly HeaderSegment[];
  readonly right: readonly HeaderSegment[];
}

export interface HeaderTemplate {
  /** The header as written. */
  readonly source: string;
  /** 1 to MAX_HEADER_LINES lines. */
  readonly lines: readonly HeaderTemplateLine[];
}

/**
 * Time zone abbreviations accepted by %tz= and the zone each stands for. Where one region has a
 * winter and a summer abbreviation, both name the same zone (its rules decide the offset on the
 * day). German and other local spellings are included where they are in use on fax headers.
 */
export const ZONE_ABBREVIATIONS: Readonly<Record<string, string>> = {
  // Universal
  UTC: "UTC",
  UT: "UTC",
  Z: "UTC",
  GMT: "Etc/GMT",
  // Western Europe
  WET: "Europe/Lisbon",
  WEST: "Europe/Lisbon",
  WEZ: "Europe/Lisbon",
  WESZ: "Europe/Lisbon",
  BST: "Europe/London",
  // Central Europe
  CET: "Europe/Berlin",
  CEST: "Europe/Berlin",
  MET: "Europe/Berlin",
  MEST: "Europe/Berlin",
  MEZ: "Europe/Berlin",
  MESZ: "Europe/Berlin",
  // Eastern Europe
  EET: "Europe/Athens",
  EEST: "Europe/Athens",
  OEZ: "Europe/Athens",
  OESZ: "Europe/Athens",
  MSK: "Europe/Moscow",
  // North America
  NST: "America/St_Johns",
  NDT: "America/St_Johns",
  AST: "America/Halifax",
  ADT: "America/Halifax",
  EST: "America/New_York",
  EDT: "America/New_York",
  CST: "America/Chicago",
  CDT: "America/Chicago",
  MST: "America/Denver",
  MDT: "America/Denver",
  PST: "America/Los_Angeles",
  PDT: "America/Los_Angeles",
  AKST: "America/Anchorage",
  AKDT: "America/Anchorage",
  HST: "Pacific/Honolulu",
  // Asia and Pacific
  JST: "Asia/Tokyo",
  KST: "Asia/Seoul",
  HKT: "Asia/Hong_Kong",
  SGT: "Asia/Singapore",
  AWST: "Australia/Perth",
  ACST: "Australia/Adelaide",
  ACDT: "Australia/Adelaide",
  AEST: "Australia/Sydney",
  AEDT: "Australia/Sydney",
  NZST: "Pacific/Auckland",
  NZDT: "Pacific/Auckland",
};

const HOW_TO_WRITE_A_ZONE =
  `write an IANA zone name such as %tz=Europe/Berlin; or %tz=America/New_York;, ` +
  `UTC+h / GMT-h with whole hours, or one of the abbreviations ${Object.keys(ZONE_ABBREVIATIONS).join(", ")}`;

/**
 * The IANA zone (Intl's spelling) a %tz= value or a configured default zone stands for, or null
 * if there is none. See the module comment for what is accepted.
 */
export function resolveTimeZone(name: string): string | null {
  const abbreviated = ZONE_ABBREVIATIONS[name.toUpperCase()];
  if (abbreviated !== undefined) return abbreviated;
  const offset = /^(?:UTC|GMT)([+-])(\d{1,2})$/i.exec(name);
  if (offset) {
    const hours = Number(offset[2]);
    if (hours === 0) return "UTC";
    // Etc/GMT zones count the other way round: UTC+1 is Etc/GMT-1.
    const sign = offset[1] === "+" ? "-" : "+";
    if ((sign === "-" && hours > 14) || (sign === "+" && hours > 12)) return null;
    return `Etc/GMT${sign}${hours}`;
  }
  // Intl also takes ICU's old three-letter IDs, some of them misleading (BST is Asia/Dhaka, ART
  // Africa/Cairo, IST Asia/Kolkata): a short name is an abbreviation, and only those listed count.
  if (!/^[A-Za-z]/.test(name) || /^[A-Za-z]{1,5}$/.test(name)) return null;
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/** The canonical language tag for %l=, or null when Intl has no date names for it. */
export function resolveLanguage(tag: string): string | null {
  try {
    const [canonical] = Intl.getCanonicalLocales(tag.replace(/_/g, "-"));
    if (canonical === undefined) return null;
    return Intl.DateTimeFormat.supportedLocalesOf([canonical]).length > 0 ? canonical : null;
  } catch {
    return null;
  }
}

type Part = "left" | "centre" | "right";

const ZONE_CHAR = /[A-Za-z0-9/_+-]/;
const LANGUAGE_CHAR = /[A-Za-z0-9_-]/;

/** Parses a header; see the module comment for the rules. */
export function parseHeaderTemplate(text: string): { ok: true; template: HeaderTemplate } | { ok: false; message: string } {
  const chars = Array.from(text);
  const lines: { left: HeaderSegment[]; centre: HeaderSegment[]; right: HeaderSegment[] }[] = [];
  let line = { left: [] as HeaderSegment[], centre: [] as HeaderSegment[], right: [] as HeaderSegment[] };
  lines.push(line);
  let part: Part = "left";
  let timeZone: string | null = null;
  let language: string | null = null;
  let literal = "";

  const flush = (): void => {
    if (literal === "") return;
    const segments = line[part];
    const last = segments[segments.length - 1];
    if (last?.kind === "text") segments[segments.length - 1] = { kind: "text", text: last.text + literal };
    else segments.push({ kind: "text", text: literal });
    literal = "";
  };
  const fail = (message: string): { ok: false; message: string } => ({ ok: false, message });

  /** Reads a %tz= / %l= value starting at index `from`; returns it and the index after it (and after a ";" or space ending it). */
  const readValue = (from: number, allowed: RegExp): { value: string; next: number } => {
    let end = from;
    while (end < chars.length && allowed.test(chars[end] ?? "")) end++;
    const value = chars.slice(from, end).join("");
    const stop = chars[end];
    return { value, next: stop === ";" || stop === " " ? end + 1 : end };
  };

  let i = 0;
  while (i < chars.length) {
    const ch = chars[i] as string;
    if (ch !== "%") {
      literal += ch;
      i++;
      continue;
    }
    const position = i + 1;
    const next = chars[i + 1];
    if (next === undefined) {
      return fail(
        `a standalone "%" at position ${position} ends the header; standalone percent signs are not allowed: write "%%" for a percent sign`,
      );
    }
    if (next === "%") {
      literal += "%";
      i += 2;
      continue;
    }
    if (next === "t" && chars[i + 2] === "z" && chars[i + 3] === "=") {
      const { value, next: after } = readValue(i + 4, ZONE_CHAR);
      if (value === "") {
        return fail(`"%tz=" at position ${position} names no time zone; ${HOW_TO_WRITE_A_ZONE}`);
      }
      const zone = resolveTimeZone(value);
      if (zone === null) {
        return fail(`unknown time zone "${value}" in "%tz=${value}" at position ${position}; ${HOW_TO_WRITE_A_ZONE}`);
      }
      timeZone = zone;
      i = after;
      continue;
    }
    if (next === "l" && chars[i + 2] === "=") {
      const { value, next: after } = readValue(i + 3, LANGUAGE_CHAR);
      const resolved = value === "" ? null : resolveLanguage(value);
      if (resolved === null) {
        return fail(
          `${value === "" ? `"%l=" names no language` : `unknown language "${value}" in "%l=${value}"`} at position ${position}; ` +
            `write a language tag such as %l=de; %l=en; %l=fr; %l=it; %l=es; or %l=nl;`,
        );
      }
      language = resolved;
      i = after;
      continue;
    }
    if (next === "n") {
      flush();
      if (lines.length === MAX_HEADER_LINES) {
        return fail(
          `"%n" at position ${position} starts header line ${MAX_HEADER_LINES + 1}; a header has at most ${MAX_HEADER_LINES} lines (at most ${MAX_HEADER_LINES - 1} "%n")`,
        );
      }
      line = { left: [], centre: [], right: [] };
      lines.push(line);
      part = "left";
      i += 2;
      continue;
    }
    if (next === "c") {
      if (part === "right") {
        return fail(
          `"%c" at position ${position} follows "%r" on the same line; centred text (%c) must come before right-aligned text (%r), not right of it`,
        );
      }
      flush();
      part = "centre";
      i += 2;
      continue;
    }
    if (next === "r") {
      flush();
      part = "right";
      i += 2;
      continue;
    }
    if (FIELDS.has(next)) {
      flush();
      line[part].push({ kind: "field", field: next as HeaderField, timeZone, language });
      i += 2;
      continue;
    }
    const shown = /^\s$/u.test(next) ? "a space" : `"${next}"`;
    return fail(
      `a standalone "%" at position ${position} (followed by ${shown}, which starts no header control sequence); standalone percent signs are not allowed: write "%%" for a percent sign`,
    );
  }
  flush();
  return { ok: true, template: { source: text, lines } };
}

/** True when the header prints something that differs between recipients (%# or %K). */
export function headerDependsOnRecipient(template: HeaderTemplate): boolean {
  return headerPrints(template, "#") || headerPrints(template, "K");
}

/** Whether the header prints the recipient's number (`#`) or personalisation (`K`) anywhere. */
export function headerPrints(template: HeaderTemplate, field: "#" | "K"): boolean {
  return template.lines.some((line) =>
    [line.left, line.centre, line.right].some((segments) => segments.some((segment) => segment.kind === "field" && segment.field === field)),
  );
}

/**
 * Placeholder filling for cover page templates, in the FreeMarker dialect the provider's cover
 * templates (`coverpage-default.ftl.html`) use, as far as cover pages need it:
 *
 *   ${Key}              the property's value; a property the recipient does not have is an error
 *   ${Key!}             the value, or nothing when the property is missing
 *   ${Key!"default"}    the value, or the default text when the property is missing
 *   ${Key!'default'}    the same with single quotes; in the default text \" \' \\ \n \r \t
 *                       are escapes, any other backslash is an error
 *
 * Whitespace is allowed inside the braces (`${ Key ! "x" }`), as in FreeMarker. Keys are
 * case-sensitive, as in FreeMarker: `${toname}` does not find the property `ToName`. A key is
 * a letter or `_` followed by letters, digits and `_`; anything else inside `${...}` (built-ins
 * such as `?html`, expressions, method calls) is not supported and is a template error.
 *
 * Values and default texts are escaped for the template's markup, `html` (.ftl.html templates)
 * or `xml` (SVG templates): both escape & < > " ' (the apostrophe as &#39; for html, &apos; for
 * xml), so a value can never add markup. Control characters that XML 1.0 does not allow (all
 * C0 controls but tab, line feed and carriage return, and U+FFFE, U+FFFF, lone surrogates) are
 * dropped, so a value cannot make an SVG unparsable. Line breaks in values are left as they are:
 * what they do depends on the markup (HTML and SVG text show them as spaces); the built-in
 * SVG template wraps its text before filling (default-cover-template.ts).
 *
 * FreeMarker directives are removed, so that the provider's .ftl.html templates work: the tags
 * `<#escape x as x?html>`, `</#escape>`, `<#setting time_zone="Europe/Berlin"/>` and every
 * other `<#...>` / `</#...>` tag, and `<#-- comments -->` with their content. Only the tags go:
 * the text between `<#if ...>` and `</#if>` stays. Because that silently changes what such a
 * template shows, checkCoverTemplate (used when a template is installed) refuses templates
 * with directives other than the presentational ones (escape, noescape, setting, ftl,
 * compress, t, lt, rt, nt, comments); fillCoverTemplate just removes them.
 */

export type CoverTemplateEscape = "html" | "xml";

type Token =
  | { kind: "text"; text: string }
  | { kind: "placeholder"; key: string; fallback: string | null }; // fallback null: required

interface TemplateError {
  message: string;
  line: number;
  column: number;
}

/** Directives that only shape output (escaping, settings, whitespace); removing them is harmless. */
const PRESENTATIONAL_DIRECTIVES = new Set(["escape", "noescape", "setting", "ftl", "compress", "t", "lt", "rt", "nt", "noautoesc", "autoesc", "outputformat"]);

const KEY_START = /[\p{L}_]/u;
const KEY_PART = /[\p{L}\p{N}_]/u;

/**
 * Fills `template` with `properties`. A template error (see checkCoverTemplate) or required keys
 * the properties lack give `ok: false` with a message a person can act on.
 */
export function fillCoverTemplate(
  template: string,
  properties: Readonly<Record<string, string>>,
  escape: CoverTemplateEscape,
): { ok: true; text: string } | { ok: false; message: string } {
  const parsed = parseTemplate(template, false);
  if (!parsed.ok) return { ok: false, message: describeError(parsed.error) };
  const missing: string[] = [];
  let text = "";
  for (const token of parsed.tokens) {
    if (token.kind === "text") {
      text += token.text;
      continue;
    }
    const value = Object.hasOwn(properties, token.key) ? properties[token.key] : undefined;
    if (value === undefined || value === null) {
      if (token.fallback === null) {
        if (!missing.includes(token.key)) missing.push(token.key);
      } else {
        text += escapeValue(token.fallback, escape);
      }
    } else {
      text += escapeValue(String(value), escape);
    }
  }
  if (missing.length > 0) {
    const list = missing.join(", ");
    return {
      ok: false,
      message:
        `The cover page template needs the ${missing.length === 1 ? "property" : "properties"} ${list}, ` +
        `which the recipient does not have (keys are case-sensitive; write \${Key!} in the template for an optional property)`,
    };
  }
  return { ok: true, text };
}

/**
 * Checks a template for installation: every `${...}` well formed, every FreeMarker comment
 * closed, no directive that would change what the template shows. Gives the keys used (in order
 * of first use) or the first error with its line and column (1-based; columns count UTF-16 code
 * units, as editors mostly do).
 */
export function checkCoverTemplate(
  template: string,
): { ok: true; keys: string[] } | { ok: false; message: string; line: number; column: number } {
  const parsed = parseTemplate(template, true);
  if (!parsed.ok) return { ok: false, message: describeError(parsed.error), line: parsed.error.line, column: parsed.error.column };
  const keys: string[] = [];
  for (const token of parsed.tokens) {
    if (token.kind === "placeholder" && !keys.includes(token.key)) keys.push(token.key);
  }
  return { ok: true, keys };
}

/** Escapes a value for the markup and drops characters XML cannot carry. */
export function escapeValue(value: string, escape: CoverTemplateEscape): string {
  const apostrophe = escape === "html" ? "&#39;" : "&apos;";
  return value
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "")
    .replace(/[&<>"']/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : apostrophe));
}

function describeError(error: TemplateError): string {
  return `Cover page template error at line ${error.line}, column ${error.column}: ${error.message}`;
}

function parseTemplate(template: string, strict: boolean): { ok: true; tokens: Token[] } | { ok: false; error: TemplateError } {
  const tokens: Token[] = [];
  let text = "";
  let i = 0;
  const fail = (at: number, message: string) => ({ ok: false as const, error: { message, ...position(template, at) } });

  while (i < template.length) {
    const c = template[i];
    if (c === "$" && template[i + 1] === "{") {
      const placeholder = parsePlaceholder(template, i);
      if (!placeholder.ok) return fail(placeholder.at, placeholder.message);
      if (text) tokens.push({ kind: "text", text });
      text = "";
      tokens.push({ kind: "placeholder", key: placeholder.key, fallback: placeholder.fallback });
      i = placeholder.end;
      continue;
    }
    if (c === "<" && template.startsWith("<#--", i)) {
      const close = template.indexOf("-->", i + 4);
      if (close < 0) return fail(i, 'FreeMarker comment "<#--" without its closing "-->"');
      i = close + 3;
      continue;
    }
    if (c === "<" && (template.startsWith("<#", i) || template.startsWith("</#", i))) {
      const nameStart = i + (template[i + 1] === "/" ? 3 : 2);
      const name = /^[A-Za-z_]\w*/.exec(template.slice(nameStart, nameStart + 64))?.[0];
      if (name !== undefined) {
        const end = directiveEnd(template, nameStart + name.length);
        if (end < 0) return fail(i, `FreeMarker directive "<#${name}" without its closing ">"`);
        if (strict && !PRESENTATIONAL_DIRECTIVES.has(name)) {
          return fail(
            i,
            `the FreeMarker directive <#${name}> is not supported (cover templates support only \${Key}, \${Key!} and \${Key!"default"}; directives are removed, which would change what this template shows)`,
          );
        }
        i = end;
        continue;
      }
    }
    text += c;
    i += 1;
  }
  if (text) tokens.push({ kind: "text", text });
  return { ok: true, tokens };
}

/** Index just past the `>` that ends a directive tag, skipping quoted strings; -1 if none. */
function directiveEnd(template: string, from: number): number {
  let quote: string | null = null;
  for (let i = from; i < template.length; i++) {
    const c = template[i];
    if (quote !== null) {
      if (c === "\\") i += 1;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === ">") {
      return i + 1;
    }
  }
  return -1;
}

type PlaceholderResult =
  | { ok: true; key: string; fallback: string | null; end: number }
  | { ok: false; at: number; message: string };

const SUPPORTED = 'supported are ${Key}, ${Key!} and ${Key!"default"}';

function parsePlaceholder(template: string, start: number): PlaceholderResult {
  const close = template.indexOf("}", start + 2);
  // A "}" inside a quoted default does not end the placeholder; the real end is found below.
  if (close < 0) return { ok: false, at: start, message: 'unterminated "${": no closing "}"' };
  let i = start + 2;
  const skipSpace = () => {
    while (i < template.length && /\s/.test(template[i] ?? "")) i += 1;
  };
  skipSpace();
  const keyStart = i;
  if (!KEY_START.test(template[i] ?? "")) {
    return { ok: false, at: i, message: template[i] === "}" ? 'empty "${}"' : `"\${" must be followed by a property key; ${SUPPORTED}` };
  }
  while (i < template.length && KEY_PART.test(template[i] ?? "")) i += 1;
  const key = template.slice(keyStart, i);
  skipSpace();
  if (template[i] === "}") return { ok: true, key, fallback: null, end: i + 1 };
  if (template[i] !== "!") {
    if (i >= template.length) return { ok: false, at: start, message: 'unterminated "${": no closing "}"' };
    return { ok: false, at: i, message: `unsupported expression after \${${key}: ${SUPPORTED}` };
  }
  i += 1;
  skipSpace();
  if (template[i] === "}") return { ok: true, key, fallback: "", end: i + 1 };
  const quote = template[i];
  if (quote !== '"' && quote !== "'") {
    if (i >= template.length) return { ok: false, at: start, message: 'unterminated "${": no closing "}"' };
    return { ok: false, at: i, message: `the default after "${key}!" must be a quoted text ("..." or '...'); ${SUPPORTED}` };
  }
  const stringStart = i;
  i += 1;
  let fallback = "";
  for (;;) {
    if (i >= template.length) return { ok: false, at: stringStart, message: `unterminated default text for ${key}: no closing ${quote}` };
    const c = template[i] as string;
    if (c === quote) break;
    if (c === "\\") {
      const next = template[i + 1];
      const escaped = next === undefined ? undefined : ({ '"': '"', "'": "'", "\\": "\\", n: "\n", r: "\r", t: "\t" } as Record<string, string>)[next];
      if (escaped === undefined) return { ok: false, at: i, message: `unsupported escape "\\${next ?? ""}" in the default text for ${key} (supported: \\" \\' \\\\ \\n \\r \\t)` };
      fallback += escaped;
      i += 2;
      continue;
    }
    fallback += c;
    i += 1;
  }
  i += 1;
  skipSpace();
  if (template[i] !== "}") {
    if (i >= template.length) return { ok: false, at: start, message: 'unterminated "${": no closing "}"' };
    return { ok: false, at: i, message: `expected "}" after the default text for ${key}; ${SUPPORTED}` };
  }
  return { ok: true, key, fallback, end: i + 1 };
}

/** 1-based line and column of an index (line breaks: \n, \r\n, \r). */
function position(text: string, index: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < index; i++) {
    const c = text[i];
    if (c === "\n" || (c === "\r" && text[i + 1] !== "\n")) {
      line += 1;
      lineStart = i + 1;
    }
  }
  return { line, column: index - lineStart + 1 };
}

/** Input of coverPageProperties: what the renderer knows about the page beyond the recipient's properties. */
export interface CoverPageContext {
  /** The recipient's fax number as dialled; the default of ToFaxNum. */
  recipientNumber: string;
  /** Pages of the recipient's fax, this cover page included. */
  pageCount: number;
  /** The date shown on the cover page, already formatted (see formatCoverPageDate). */
  date: string;
}

/**
 * The properties a cover template is filled with: the recipient's properties (keys exactly as
 * submitted; a property whose value is null counts as missing, as a FreeMarker null does) plus
 * the renderer-supplied keys, which a submitted property of the same key overrides:
 *
 *   Date      the date of the fax (context.date)
 *   Pages     the number of pages of the fax, this cover page included, e.g. "3"
 *   ToFaxNum  the recipient's fax number, when the recipient has no ToFaxNum property
 *
 * When a key occurs twice in the submitted properties, the first one counts.
 */
export function coverPageProperties(
  submitted: ReadonlyArray<{ key: string; value: string | null }> | null | undefined,
  context: CoverPageContext,
): Record<string, string> {
  const properties: Record<string, string> = Object.create(null) as Record<string, string>;
  properties.Date = context.date;
  properties.Pages = String(context.pageCount);
  properties.ToFaxNum = context.recipientNumber;
  const seen = new Set<string>();
  for (const { key, value } of submitted ?? []) {
    if (seen.has(key)) continue;
    seen.add(key);
    if (value !== null && value !== undefined) properties[key] = value;
  }
  return properties;
}

/**
 * A cover page date: "2025-03-14 09:30 CET" in the time zone (default Europe/Berlin, the zone
 * the provider's default template sets).
 */
export function formatCoverPageDate(at: Date, timeZone = "Europe/Berlin"): string {
  const parts = new Intl.DateTimeFormat("en-GB", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
    timeZoneName: "short",
  }).formatToParts(at);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? "";
  return `${part("year")}-${part("month")}-${part("day")} ${part("hour")}:${part("minute")} ${part("timeZoneName")}`.trim();
}

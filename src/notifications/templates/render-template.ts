/**
 * The template language of per-customer mail templates and push layouts: a safe subset of
 * Mustache. Templates are data, installed by operators; rendering runs no code and reads only
 * the data's own properties.
 *
 *   {{path.to.value}}   the value, escaped for the output (see TemplateEscape); `{{.}}` is the
 *                       current item of a section. Strings as they are, numbers and booleans as
 *                       text; missing values, null, objects and arrays render as nothing.
 *   {{#name}}…{{/name}} an array: the block once per item; inside, names resolve against the
 *                       item first, then outward. Any other truthy value: the block once, with
 *                       the value as the current item. Falsy (missing, null, false, "", 0, an
 *                       empty array): nothing.
 *   {{^name}}…{{/name}} the block once when the value is falsy as above, else nothing.
 *   {{! comment }}      nothing.
 *
 * A section or comment tag alone on its line takes that whole line with it (Mustache's
 * "standalone" rule), so plain-text templates can put each tag on a line of its own without
 * leaving blank lines behind. Names are letters, digits and `_`, joined by dots (`a.b.0.c`).
 * `__proto__`, `constructor` and `prototype` never resolve, nor does anything inherited.
 */

/**
 * How inserted values are escaped:
 *  - html: `& < > " '` as entities; for HTML text and attribute values.
 *  - xml:  `& < > " '` as entities, and characters XML 1.0 forbids (control characters other
 *          than tab, line feed and carriage return; lone surrogates; U+FFFE, U+FFFF) removed.
 *  - json: the body of a JSON string, without the quotes: write `"name": "{{name}}"`. Numbers
 *          and booleans come out as their JSON text, so `"pages": {{pages}}` is a number; a
 *          missing value renders as nothing, so guard bare values that may be missing with a
 *          section.
 *  - none: as is (plain text).
 */
export type TemplateEscape = "html" | "xml" | "json" | "none";

export type TemplateCheck = { ok: true } | { ok: false; message: string; line: number; column: number };

/** Thrown by renderTemplate for a template that parseTemplate would refuse. */
export class TemplateSyntaxError extends Error {
  readonly line: number;
  readonly column: number;
  constructor(message: string, line: number, column: number) {
    super(message);
    this.name = "TemplateSyntaxError";
    this.line = line;
    this.column = column;
  }
}

/** Checks a template before it is installed; the message names the line and column at fault. */
export function parseTemplate(source: string): TemplateCheck {
  try {
    parse(source);
    return { ok: true };
  } catch (error) {
    if (error instanceof TemplateSyntaxError) return { ok: false, message: error.message, line: error.line, column: error.column };
    throw error;
  }
}

/** Renders `source` with `data`; throws TemplateSyntaxError when the template is not valid. */
export function renderTemplate(source: string, data: unknown, escape: TemplateEscape): string {
  return renderNodes(parse(source), [data], ESCAPERS[escape]);
}

/** A path of property names; an empty path is the current item (`{{.}}`). */
type Path = readonly string[];

type TemplateNode =
  | { type: "text"; text: string }
  | { type: "value"; path: Path }
  | { type: "section"; inverted: boolean; path: Path; children: TemplateNode[] };

interface OpenSection {
  name: string;
  line: number;
  column: number;
  node: Extract<TemplateNode, { type: "section" }>;
}

const NAME = /^(?:\.|[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)$/;
const FORBIDDEN_NAMES = new Set(["__proto__", "constructor", "prototype"]);

function parse(source: string): TemplateNode[] {
  const root: TemplateNode[] = [];
  const open: OpenSection[] = [];
  const current = () => open.at(-1)?.node.children ?? root;
  const position = (offset: number) => {
    const before = source.slice(0, offset);
    const lineStart = before.lastIndexOf("\n") + 1;
    return { line: before.split("\n").length, column: offset - lineStart + 1 };
  };
  const fail = (offset: number, what: string): never => {
    const { line, column } = position(offset);
    throw new TemplateSyntaxError(`line ${line}, column ${column}: ${what}`, line, column);
  };
  const addText = (text: string) => {
    if (text !== "") current().push({ type: "text", text });
  };

  let textStart = 0;
  let cursor = 0;
  for (;;) {
    const tagStart = source.indexOf("{{", cursor);
    if (tagStart === -1) break;
    const closeAt = source.indexOf("}}", tagStart + 2);
    if (closeAt === -1) fail(tagStart, "this {{ is never closed with }}");
    const tagEnd = closeAt + 2;
    const inner = source.slice(tagStart + 2, closeAt);
    const sigil = inner[0] === "#" || inner[0] === "^" || inner[0] === "/" || inner[0] === "!" ? inner[0] : "";
    const name = inner.slice(sigil.length).trim();

    // Section and comment tags alone on their line consume the line; value tags never do.
    const lineStart = source.lastIndexOf("\n", tagStart - 1) + 1;
    const newlineAt = source.indexOf("\n", tagEnd);
    const lineEnd = newlineAt === -1 ? source.length : newlineAt;
    const standalone =
      sigil !== "" && /^[ \t]*$/.test(source.slice(lineStart, tagStart)) && /^[ \t]*\r?$/.test(source.slice(tagEnd, lineEnd));
    addText(source.slice(textStart, standalone ? lineStart : tagStart));
    textStart = standalone ? (newlineAt === -1 ? source.length : newlineAt + 1) : tagEnd;
    cursor = tagEnd;

    if (sigil === "!") continue;
    if (!NAME.test(name)) fail(tagStart, `{{${inner}}} does not name a value (names are letters, digits and _, joined by dots)`);
    const path = name === "." ? [] : name.split(".");
    if (sigil === "") {
      current().push({ type: "value", path });
    } else if (sigil === "#" || sigil === "^") {
      const node = { type: "section" as const, inverted: sigil === "^", path, children: [] };
      current().push(node);
      open.push({ name, ...position(tagStart), node });
    } else {
      const section = open.pop();
      if (section === undefined) fail(tagStart, `{{/${name}}} closes no open section`);
      else if (section.name !== name) {
        fail(tagStart, `{{/${name}}} does not close {{#${section.name}}} opened at line ${section.line}, column ${section.column}`);
      }
    }
  }
  addText(source.slice(textStart));
  const unclosed = open.pop();
  if (unclosed !== undefined) {
    throw new TemplateSyntaxError(
      `line ${unclosed.line}, column ${unclosed.column}: {{#${unclosed.name}}} is never closed (add {{/${unclosed.name}}})`,
      unclosed.line,
      unclosed.column,
    );
  }
  return root;
}

/** Renders nodes; `stack` holds the data and the items of the enclosing sections, innermost last. */
function renderNodes(nodes: readonly TemplateNode[], stack: readonly unknown[], escape: (text: string) => string): string {
  let out = "";
  for (const node of nodes) {
    if (node.type === "text") {
      out += node.text;
    } else if (node.type === "value") {
      const value = lookup(stack, node.path);
      if (typeof value === "string") out += escape(value);
      else if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") out += escape(String(value));
    } else {
      const value = lookup(stack, node.path);
      if (node.inverted) {
        if (isFalsy(value)) out += renderNodes(node.children, stack, escape);
      } else if (Array.isArray(value)) {
        for (const item of value) out += renderNodes(node.children, [...stack, item], escape);
      } else if (!isFalsy(value)) {
        out += renderNodes(node.children, [...stack, value], escape);
      }
    }
  }
  return out;
}

function isFalsy(value: unknown): boolean {
  return !value || (Array.isArray(value) && value.length === 0);
}

/** The first name resolves in the innermost frame that has it; the rest only within that value. */
function lookup(stack: readonly unknown[], path: Path): unknown {
  const [first, ...rest] = path;
  if (first === undefined) return stack.at(-1);
  for (let i = stack.length - 1; i >= 0; i--) {
    const frame = stack[i];
    if (hasOwnValue(frame, first)) {
      let value = (frame as Record<string, unknown>)[first];
      for (const key of rest) {
        if (!hasOwnValue(value, key)) return undefined;
        value = (value as Record<string, unknown>)[key];
      }
      return typeof value === "function" ? undefined : value;
    }
  }
  return undefined;
}

function hasOwnValue(target: unknown, key: string): boolean {
  return typeof target === "object" && target !== null && !FORBIDDEN_NAMES.has(key) && Object.hasOwn(target, key);
}

const HTML_ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const XML_ENTITIES: Record<string, string> = { ...HTML_ENTITIES, "'": "&apos;" };
// Characters XML 1.0 does not allow anywhere in a document, not even as character references.
const XML_FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

const ESCAPERS: Record<TemplateEscape, (text: string) => string> = {
  html: (text) => text.replace(/[&<>"']/g, (c) => HTML_ENTITIES[c]!),
  xml: (text) => text.replace(XML_FORBIDDEN, "").replace(/[&<>"']/g, (c) => XML_ENTITIES[c]!),
  json: (text) => JSON.stringify(text).slice(1, -1),
  none: (text) => text,
};

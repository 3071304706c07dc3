import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseTemplate, renderTemplate, TemplateSyntaxError } from "../../src/notifications/templates/render-template.ts";

const render = (source: string, data: unknown) => renderTemplate(source, data, "none");

describe("template values", () => {
  it("inserts values by dotted path, array items by index, and the current item as {{.}}", () => {
    const data = { job: { id: "FJ1", pages: 3 }, list: ["a", "b"] };
    assert.equal(render("{{job.id}} has {{ job.pages }} pages; first {{list.0}}; {{#list}}[{{.}}]{{/list}}", data), "FJ1 has 3 pages; first a; [a][b]");
  });

  it("renders numbers and booleans as text, and missing values, null, objects and arrays as nothing", () => {
    const data = { n: 0, f: 1.5, t: true, no: false, nil: null, obj: { a: 1 }, arr: [1] };
    assert.equal(render("{{n}}|{{f}}|{{t}}|{{no}}|{{nil}}|{{obj}}|{{arr}}|{{missing}}|{{obj.missing.deeper}}", data), "0|1.5|true|false|||||");
  });

  it("escapes for HTML", () => {
    assert.equal(renderTemplate("<td>{{v}}</td>", { v: `<b>"Tom" & 'Jerry'</b>` }, "html"), "<td>&lt;b&gt;&quot;Tom&quot; &amp; &#39;Jerry&#39;&lt;/b&gt;</td>");
  });

  it("escapes for XML and drops characters XML 1.0 forbids", () => {
    const v = `a<b>&"c"'d'\u0000\u0007\u000B\tx\ny\uFFFE\uD800z\uD83D\uDE00`;
    assert.equal(renderTemplate("<r>{{v}}</r>", { v }, "xml"), "<r>a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;\tx\nyz\uD83D\uDE00</r>");
  });

  it("escapes the body of a JSON string, and leaves numbers and booleans bare", () => {
    const out = renderTemplate(`{"id": "{{id}}", "pages": {{pages}}, "express": {{express}}}`, { id: 'a"b\\c\n\u0001', pages: 2, express: false }, "json");
    assert.equal(out, `{"id": "a\\"b\\\\c\\n\\u0001", "pages": 2, "express": false}`);
    assert.deepEqual(JSON.parse(out), { id: 'a"b\\c\n\u0001', pages: 2, express: false });
  });

  it("inserts values unchanged with escape none", () => {
    assert.equal(renderTemplate("{{v}}", { v: `<&>"'` }, "none"), `<&>"'`);
  });
});

describe("template sections", () => {
  it("repeats over arrays, resolving names against the item first, then outward", () => {
    const data = { jobId: "FJ1", number: "outer", recipients: [{ number: "+491" }, { status: "BUSY" }] };
    assert.equal(render("{{#recipients}}{{jobId}}:{{number}}:{{status}};{{/recipients}}", data), "FJ1:+491:;FJ1:outer:BUSY;");
  });

  it("resolves the rest of a dotted path only inside the frame that has its first name", () => {
    const data = { a: { b: "outer" }, items: [{ a: {} }] };
    assert.equal(render("{{#items}}[{{a.b}}]{{/items}}", data), "[]");
  });

  it("nests sections", () => {
    const data = { recipients: [{ number: "1", properties: [{ key: "k1", value: "v1" }, { key: "k2", value: "v2" }] }, { number: "2", properties: [] }] };
    assert.equal(render("{{#recipients}}{{number}}({{#properties}}{{key}}={{value}},{{/properties}}){{/recipients}}", data), "1(k1=v1,k2=v2,)2()");
  });

  it("shows a block once for a truthy value, with that value as the current item", () => {
    assert.equal(render("{{#ref}}ref {{.}}{{/ref}}{{#obj}} {{name}}{{/obj}}", { ref: "X-1", obj: { name: "n" } }), "ref X-1 n");
  });

  it("hides a block for missing, null, false, empty string, zero and empty arrays", () => {
    const data = { nil: null, no: false, empty: "", zero: 0, none: [] };
    for (const name of ["missing", "nil", "no", "empty", "zero", "none"]) {
      assert.equal(render(`{{#${name}}}shown{{/${name}}}`, data), "", name);
      assert.equal(render(`{{^${name}}}shown{{/${name}}}`, data), "shown", name);
    }
  });

  it("inverted sections render nothing for truthy values", () => {
    assert.equal(render("{{^list}}empty{{/list}}{{^yes}}no{{/yes}}", { list: [1], yes: true }), "");
  });

  it("drops comments", () => {
    assert.equal(render("a{{! a comment with {braces} }}b", {}), "ab");
  });

  it("removes lines that hold only a section or comment tag, but keeps lines with value tags", () => {
    const source = "Start\n  {{#items}}\n- {{.}}\n  {{/items}}\n{{! note }}\r\n{{^items}}\nnone\n{{/items}}\n{{missing}}\nEnd";
    assert.equal(render(source, { items: ["a", "b"] }), "Start\n- a\n- b\n\nEnd");
    assert.equal(render(source, { items: [] }), "Start\nnone\n\nEnd");
  });
});

describe("template safety", () => {
  it("never resolves __proto__, constructor, prototype or inherited properties", () => {
    const data = JSON.parse(`{"__proto__": {"polluted": "yes"}, "obj": {}, "fn": "x"}`) as unknown;
    const source = "[{{__proto__.polluted}}][{{constructor}}][{{constructor.name}}][{{obj.constructor.name}}][{{obj.toString}}][{{fn.length}}][{{#constructor}}x{{/constructor}}]";
    assert.equal(render(source, data), "[][][][][][][]");
    class WithPrototype {
      inherited = "own";
    }
    (WithPrototype.prototype as unknown as Record<string, string>).fromPrototype = "inherited";
    assert.equal(render("{{inherited}}{{fromPrototype}}{{prototype}}", new WithPrototype()), "own");
  });

  it("does not call functions found in the data", () => {
    let called = false;
    const data = { f: () => ((called = true), "result"), obj: { g: () => "x" } };
    assert.equal(render("[{{f}}][{{obj.g}}][{{#f}}shown{{/f}}]", data), "[][][]");
    assert.equal(called, false);
  });
});

describe("parseTemplate", () => {
  it("accepts a valid template", () => {
    assert.deepEqual(parseTemplate("Hello {{name}}\n{{#list}}{{.}}{{/list}}{{^list}}none{{/list}}{{! c }}"), { ok: true });
  });

  const cases: [string, string, number, number, RegExp][] = [
    ["unclosed section", "a\n  {{#items}}\n{{name}}", 2, 3, /\{\{#items\}\} is never closed \(add \{\{\/items\}\}\)/],
    ["mismatched close", "{{#a}}\n{{#b}}x{{/a}}{{/b}}", 2, 8, /\{\{\/a\}\} does not close \{\{#b\}\} opened at line 2, column 1/],
    ["close without open", "x {{/a}}", 1, 3, /\{\{\/a\}\} closes no open section/],
    ["unterminated tag", "ok\nthen {{name", 2, 6, /never closed with \}\}/],
    ["invalid name", "{{first name}}", 1, 1, /does not name a value/],
    ["empty tag", "ab{{ }}", 1, 3, /does not name a value/],
    ["triple braces", "{{{raw}}}", 1, 1, /does not name a value/],
  ];
  for (const [what, source, line, column, message] of cases) {
    it(`names the line and column of a fault: ${what}`, () => {
      const result = parseTemplate(source);
      assert.equal(result.ok, false);
      if (result.ok) return;
      assert.equal(result.line, line);
      assert.equal(result.column, column);
      assert.match(result.message, new RegExp(`^line ${line}, column ${column}: `));
      assert.match(result.message, message);
    });
  }

  it("makes renderTemplate throw a TemplateSyntaxError for the same faults", () => {
    assert.throws(() => render("{{#a}}", {}), (error: unknown) => error instanceof TemplateSyntaxError && error.line === 1 && error.column === 1);
  });
});

/**
 * The catalogues and their docs stay in step (house style: every catalogue is documented, and a
 * test checks it), and no catalogue entry is dead code.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { ApiErrors } from "../../src/errors/api-errors.ts";
import { FailureReasons } from "../../src/errors/failure-reasons.ts";
import { CONFIG_KEYS } from "../../src/config/schema.ts";
import { staleReferenceDocs } from "../../scripts/generate-reference-docs.ts";

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

const sources = sourceFiles("src").filter((f) => !f.endsWith("api-errors.ts") && !f.endsWith("failure-reasons.ts"));
const allSource = sources.map((f) => readFileSync(f, "utf8")).join("\n");

describe("catalogues", () => {
  it("the generated reference docs match the code (run scripts/generate-reference-docs.ts when this fails)", () => {
    assert.deepEqual(staleReferenceDocs(), []);
  });

  it("every API error code is raised somewhere in src", () => {
    const unused = Object.keys(ApiErrors).filter((code) => !allSource.includes(`"${code}"`));
    assert.deepEqual(unused, []);
  });

  it("every failure reason is produced somewhere in src", () => {
    const unused = Object.keys(FailureReasons).filter((code) => !allSource.includes(`"${code}"`));
    assert.deepEqual(unused, []);
  });

  it("API error codes are unique lower_snake identifiers with a 4xx/5xx status", () => {
    for (const [key, def] of Object.entries(ApiErrors)) {
      assert.equal(key, def.code);
      assert.match(def.code, /^[a-z][a-z0-9_]*$/);
      assert.ok(def.status >= 400 && def.status < 600, `${key} status ${def.status}`);
    }
  });

  it("failure reasons carry a status in upper case and a sentence", () => {
    for (const [key, r] of Object.entries(FailureReasons)) {
      assert.equal(key, r.code);
      assert.match(r.status, /^[A-Z_]+$/);
      assert.ok(r.description.length > 10);
    }
  });

  it("config keys have unique paths and FAXLINE_ environment names", () => {
    const paths = CONFIG_KEYS.map((k) => k.path);
    assert.equal(new Set(paths).size, paths.length);
    for (const k of CONFIG_KEYS) assert.match(k.env, /^FAXLINE_[A-Z0-9_]+$/);
  });

  it("docs/api.md documents every operation of the contract", () => {
    const doc = readFileSync("docs/api.md", "utf8");
    for (const op of ["sendJobRequest", "getStatusReport", "deleteStatusReport", "getAllStatusReports", "deleteOldestStatusReports", "bulkStatusReports"]) {
      assert.ok(doc.includes(op), `docs/api.md does not mention ${op}`);
    }
  });
});

/**
 * `faxline render`: renders text files offline as a job would, and refuses other document types
 * with the reason a job's report gives.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { failureReason } from "../../src/errors/failure-reasons.ts";
import { unsupportedTypeMessage } from "../../src/render/document-types.ts";
import { layoutText } from "../../src/render/layout-text.ts";
import { readTiffPages } from "../../src/render/fax-image/tiff-structure.ts";
import { runFaxlineCli } from "../support/child-node.ts";
import { tempDir } from "../support/test-node.ts";

describe("faxline render", () => {
  const dir = tempDir();
  const letter = Array.from({ length: 70 }, (_, i) => `Line ${i + 1} of the letter`).join("\n");
  const notice = "A short notice in Latin-1: Gr\xFC\xDFe";
  before(() => {
    writeFileSync(join(dir.path, "letter.txt"), letter);
    writeFileSync(join(dir.path, "notice.txt"), Buffer.from(notice, "latin1"));
    writeFileSync(join(dir.path, "scan.pdf"), "%PDF-1.4\n");
  });
  after(() => dir.remove());

  it("writes one TIFF-F of all files' pages and prints the page count and bytes", async () => {
    const out = join(dir.path, "letter.tif");
    const run = await runFaxlineCli(
      ["render", join(dir.path, "letter.txt"), join(dir.path, "notice.txt"), "--charset", "ISO-8859-1", "--paper", "letter", "--resolution", "low", "--out", out],
      {},
    );
    assert.equal(run.code, 0, run.stderr);
    const tiff = readFileSync(out);
    const pages = readTiffPages(tiff);
    const options = { paperFormat: "LETTER", resolution: "LOW" } as const;
    assert.equal(pages.length, layoutText(letter, options).pages.length + 1);
    assert.ok(pages.every((p) => p.height === 1078 && p.yResolution === 98));
    assert.match(run.stdout, new RegExp(`: ${pages.length} pages, ${tiff.length} bytes`));
    assert.match(run.stdout, new RegExp(`G4 bytes per page: ${pages.map((p) => p.encodedBytes).join(", ")}`));
  });

  it("takes the charset of the files (--charset), and fails with the job's reason when they do not decode", async () => {
    const out = join(dir.path, "notice.tif");
    const latin1 = await runFaxlineCli(["render", join(dir.path, "notice.txt"), "--charset", "ISO-8859-1", "--out", out], {});
    assert.equal(latin1.code, 0, latin1.stderr);
    const utf8 = await runFaxlineCli(["render", join(dir.path, "notice.txt"), "--out", out], {});
    assert.equal(utf8.code, 1);
    assert.match(utf8.stderr, new RegExp(`^faxline: ${failureReason("document_unreadable").description.replace(/[()]/g, "\\$&")}: notice\\.txt: Text is not valid UTF-8`));
  });

  it("refuses a PDF with the reason a job's report gives", async () => {
    const out = join(dir.path, "never.tif");
    const run = await runFaxlineCli(["render", join(dir.path, "letter.txt"), join(dir.path, "scan.pdf"), "--out", out], {});
    assert.equal(run.code, 1);
    assert.equal(run.stderr.trim(), `faxline: ${failureReason("document_type_unsupported").description}: ${unsupportedTypeMessage("pdf", "scan.pdf")}`);
    assert.throws(() => readFileSync(out), /ENOENT/);
  });

  it("needs --out and a known paper format", async () => {
    const noOut = await runFaxlineCli(["render", join(dir.path, "letter.txt")], {});
    assert.equal(noOut.code, 2);
    assert.match(noOut.stderr, /--out is required/);
    const a5 = await runFaxlineCli(["render", join(dir.path, "letter.txt"), "--paper", "A5", "--out", "x.tif"], {});
    assert.equal(a5.code, 2);
    assert.match(a5.stderr, /--paper must be A4 or LETTER/);
  });
});

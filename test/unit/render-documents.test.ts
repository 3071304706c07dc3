import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  RENDERABLE_TYPES,
  documentTypeFromName,
  unsupportedTypeMessage,
} from "../../src/render/document-types.ts";
import { renderDocuments } from "../../src/render/render-documents.ts";
import type { DocumentInput, RenderResult } from "../../src/render/render-documents.ts";

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const textDoc = (name: string, text: string, charset?: string | null): DocumentInput => ({
  name,
  bytes: utf8(text),
  charset,
});
const lines = (count: number, prefix = "line"): string =>
  Array.from({ length: count }, (_, i) => `${prefix} ${i + 1}`).join("\n");
const A4_HIGH = { paperFormat: "A4", resolution: "HIGH", maxPages: 100 } as const;

function failure(result: RenderResult): Extract<RenderResult, { ok: false }> {
  assert.equal(result.ok, false, "expected the render to fail");
  if (result.ok) throw new Error("unreachable");
  return result;
}

function success(result: RenderResult): Extract<RenderResult, { ok: true }> {
  if (!result.ok) assert.fail(`expected success, got ${result.reasonCode}: ${result.message}`);
  return result;
}

describe("documentTypeFromName", () => {
  it("maps every known extension", () => {
    const expected: Record<string, string> = {
      txt: "text",
      text: "text",
      pdf: "pdf",
      tif: "tiff",
      tiff: "tiff",
      png: "image",
      jpg: "image",
      jpeg: "image",
      gif: "image",
      bmp: "image",
      webp: "image",
      htm: "html",
      html: "html",
      ps: "postscript",
      eps: "postscript",
      doc: "office",
      docx: "office",
      odt: "office",
      rtf: "office",
      xls: "office",
      xlsx: "office",
      ods: "office",
      ppt: "office",
      pptx: "office",
    };
    for (const [extension, type] of Object.entries(expected)) {
      assert.equal(documentTypeFromName(`file.${extension}`), type, extension);
    }
  });

  it("ignores letter case", () => {
    assert.equal(documentTypeFromName("INVOICE.PDF"), "pdf");
    assert.equal(documentTypeFromName("Notes.TxT"), "text");
    assert.equal(documentTypeFromName("Scan.Tiff"), "tiff");
  });

  it("uses the last extension of the final path segment", () => {
    assert.equal(documentTypeFromName("report.pdf.txt"), "text");
    assert.equal(documentTypeFromName("dir.pdf/letter.docx"), "office");
    assert.equal(documentTypeFromName("C:\\faxes\\cover.html"), "html");
  });

  it("returns null when no known type is named", () => {
    for (const name of ["archive.tar.gz", "README", "trailing.", "dir.txt/noext", "data.csv", ""]) {
      assert.equal(documentTypeFromName(name), null, name);
    }
  });
});

describe("RENDERABLE_TYPES and unsupportedTypeMessage", () => {
  it("renders only plain text in this version", () => {
    assert.deepEqual([...RENDERABLE_TYPES], ["text"]);
  });

  it("explains an unsupported type in a sentence", () => {
    assert.equal(
      unsupportedTypeMessage("pdf", "invoice.pdf"),
      "Rendering of PDF documents (invoice.pdf) is not supported yet by this Faxline version; only plain text (.txt) is rendered",
    );
    assert.match(unsupportedTypeMessage("office", "budget.xlsx"), /^Rendering of office documents \(budget\.xlsx\)/);
  });

  it("explains an unknown extension and a missing one", () => {
    assert.match(unsupportedTypeMessage(null, "data.csv"), /\.csv of document data\.csv names no known document type/);
    assert.match(unsupportedTypeMessage(null, "README"), /README .*no file extension/);
  });
});

describe("renderDocuments", () => {
  it("concatenates the pages of all documents in order", () => {
    const result = success(
      renderDocuments([textDoc("a.txt", lines(70, "a")), textDoc("b.TXT", "just one line")], A4_HIGH),
    );
    assert.deepEqual(
      result.pages.map((p) => [p.documentIndex, p.pageInDocument, p.lineCount]),
      [
        [0, 1, 62],
        [0, 2, 8],
        [1, 1, 1],
      ],
    );
    assert.equal(result.textPages.length, 3);
    assert.equal(result.textPages[0]?.lines[0], "a 1");
    assert.equal(result.textPages[1]?.lines[7], "a 70");
    assert.deepEqual(result.textPages[2]?.lines, ["just one line"]);
  });

  it("decodes each document by its own charset", () => {
    const result = success(
      renderDocuments(
        [
          { name: "w.txt", charset: "Windows-1252", bytes: Uint8Array.of(0x80, 0x20, 0xe4) },
          { name: "l.txt", charset: "ISO-8859-1", bytes: Uint8Array.of(0x80, 0x20, 0xe4) },
          { name: "u.txt", charset: "UTF-16", bytes: Uint8Array.of(0xff, 0xfe, 0xac, 0x20) },
        ],
        A4_HIGH,
      ),
    );
    // Latin-1 0x80 is a C1 control, which prints nothing.
    assert.deepEqual(
      result.textPages.map((p) => p.lines),
      [["€ ä"], [" ä"], ["€"]],
    );
  });

  it("counts the printed lines of each page, blank lines between them included", () => {
    const docs = [textDoc("a.txt", `${"x".repeat(80)}\n\n${"y".repeat(40)}\n${"z".repeat(4)}\n\n`)];
    assert.equal(success(renderDocuments(docs, A4_HIGH)).pages[0]?.lineCount, 4);
  });

  it("gives an empty list of documents zero pages", () => {
    assert.deepEqual(renderDocuments([], A4_HIGH), { ok: true, pages: [], textPages: [] });
  });

  it("fails with document_type_unsupported for a known but unrenderable type", () => {
    const result = failure(
      renderDocuments([textDoc("cover.txt", "hi"), { name: "INVOICE.PDF", bytes: utf8("%PDF-1.7") }], A4_HIGH),
    );
    assert.equal(result.reasonCode, "document_type_unsupported");
    assert.equal(result.documentName, "INVOICE.PDF");
    assert.equal(
      result.message,
      "Rendering of PDF documents (INVOICE.PDF) is not supported yet by this Faxline version; only plain text (.txt) is rendered",
    );
  });

  it("fails with document_type_unsupported for an unknown extension", () => {
    const result = failure(renderDocuments([textDoc("data.csv", "a,b")], A4_HIGH));
    assert.equal(result.reasonCode, "document_type_unsupported");
    assert.equal(result.documentName, "data.csv");
    assert.match(result.message, /data\.csv/);
  });

  it("fails with document_unreadable for invalid bytes, passing on the decoder's reason", () => {
    const result = failure(
      renderDocuments([{ name: "bad.txt", charset: "UTF-8", bytes: Uint8Array.of(0x41, 0xff) }], A4_HIGH),
    );
    assert.equal(result.reasonCode, "document_unreadable");
    assert.equal(result.documentName, "bad.txt");
    assert.match(result.message, /^bad\.txt: .*UTF-8.*byte offset 1\b/);
  });

  it("fails with document_unreadable for an unsupported charset", () => {
    const result = failure(renderDocuments([textDoc("x.txt", "hi", "EBCDIC")], A4_HIGH));
    assert.equal(result.reasonCode, "document_unreadable");
    assert.match(result.message, /EBCDIC/);
  });

  it("fails with document_unreadable when a document has no printable content", () => {
    const result = failure(renderDocuments([textDoc("a.txt", "hi"), textDoc("blank.txt", " \n\f\n")], A4_HIGH));
    assert.equal(result.reasonCode, "document_unreadable");
    assert.equal(result.documentName, "blank.txt");
    assert.equal(result.message, "blank.txt has no printable content");
  });

  it("fails with document_too_large only when the total exceeds maxPages", () => {
    const docs = [textDoc("a.txt", lines(63)), textDoc("b.txt", "one more page")];
    assert.equal(success(renderDocuments(docs, { ...A4_HIGH, maxPages: 3 })).pages.length, 3);
    const result = failure(renderDocuments(docs, { ...A4_HIGH, maxPages: 2 }));
    assert.equal(result.reasonCode, "document_too_large");
    assert.equal(result.documentName, "b.txt");
    assert.match(result.message, /3 pages.*limit of 2 pages/);
    const first = failure(renderDocuments(docs, { ...A4_HIGH, maxPages: 1 }));
    assert.equal(first.documentName, "a.txt");
  });
});

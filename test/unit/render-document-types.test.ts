/**
 * Document types (src/render/document-types.ts): the type a file name's extension names, the
 * extension itself, the person-readable labels, and the sentence that explains an unknown or
 * missing extension.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  KNOWN_EXTENSIONS,
  documentTypeFromName,
  documentTypeLabel,
  fileNameExtension,
  unknownTypeMessage,
  type DocumentType,
} from "../../src/render/document-types.ts";

const EXPECTED_TYPES: Readonly<Record<string, DocumentType>> = {
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

describe("documentTypeFromName", () => {
  it("maps every known extension", () => {
    for (const [extension, type] of Object.entries(EXPECTED_TYPES)) {
      assert.equal(documentTypeFromName(`file.${extension}`), type, extension);
    }
  });

  it("ignores letter case", () => {
    assert.equal(documentTypeFromName("INVOICE.PDF"), "pdf");
    assert.equal(documentTypeFromName("Notes.TxT"), "text");
    assert.equal(documentTypeFromName("Scan.Tiff"), "tiff");
    assert.equal(documentTypeFromName("Letter.DOCX"), "office");
  });

  it("uses the last extension of the final path segment", () => {
    assert.equal(documentTypeFromName("report.pdf.txt"), "text");
    assert.equal(documentTypeFromName("dir.pdf/letter.docx"), "office");
    assert.equal(documentTypeFromName("C:\\faxes\\cover.html"), "html");
  });

  it("returns null when no known type is named", () => {
    for (const name of ["archive.tar.gz", "README", "trailing.", "dir.txt/noext", "data.csv", "picture.svg", ""]) {
      assert.equal(documentTypeFromName(name), null, name);
    }
  });
});

describe("fileNameExtension", () => {
  it("is the lower-case text after the last dot of the final path segment", () => {
    assert.equal(fileNameExtension("INVOICE.PDF"), "pdf");
    assert.equal(fileNameExtension("archive.tar.gz"), "gz");
    assert.equal(fileNameExtension("dir.pdf/letter.DocX"), "docx");
    assert.equal(fileNameExtension("C:\\faxes.txt\\cover.Html"), "html");
    assert.equal(fileNameExtension(".profile"), "profile");
  });

  it("is null without an extension", () => {
    for (const name of ["README", "trailing.", "dir.txt/noext", "dir.txt\\noext", ""]) {
      assert.equal(fileNameExtension(name), null, name);
    }
  });
});

describe("KNOWN_EXTENSIONS and documentTypeLabel", () => {
  it("lists exactly the extensions that name a type, each once, without dots", () => {
    assert.deepEqual([...KNOWN_EXTENSIONS].sort(), Object.keys(EXPECTED_TYPES).sort());
    assert.equal(new Set(KNOWN_EXTENSIONS).size, KNOWN_EXTENSIONS.length);
    for (const extension of KNOWN_EXTENSIONS) {
      assert.match(extension, /^[a-z]+$/);
      assert.notEqual(documentTypeFromName(`x.${extension}`), null, extension);
    }
  });

  it("names every type for a person", () => {
    const labels = Object.fromEntries([...new Set(Object.values(EXPECTED_TYPES))].map((type) => [type, documentTypeLabel(type)]));
    assert.deepEqual(labels, {
      text: "plain text",
      pdf: "PDF",
      tiff: "TIFF",
      image: "image",
      html: "HTML",
      postscript: "PostScript",
      office: "office",
    });
  });
});

describe("unknownTypeMessage", () => {
  const renders = `Faxline renders ${KNOWN_EXTENSIONS.map((e) => `.${e}`).join(", ")}`;

  it("explains an unknown extension and lists what is rendered", () => {
    assert.equal(unknownTypeMessage("data.csv"), `The file extension .csv of document data.csv names no known document type; ${renders}`);
    assert.match(unknownTypeMessage("data.csv"), /; Faxline renders \.txt, \.text, \.pdf, \.tif, .*\.pptx$/);
  });

  it("gives the extension in lower case and the name as written", () => {
    assert.match(unknownTypeMessage("Archive.TAR.GZ"), /^The file extension \.gz of document Archive\.TAR\.GZ names no known document type; /);
  });

  it("explains a missing extension", () => {
    assert.equal(
      unknownTypeMessage("README"),
      `The type of document README cannot be determined because its name has no file extension; ${renders}`,
    );
    assert.match(unknownTypeMessage("trailing."), /^The type of document trailing\. cannot be determined because its name has no file extension;/);
  });
});

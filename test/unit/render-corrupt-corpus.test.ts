/**
 * The corpus of bad documents: corrupt, truncated, encrypted, huge and mislabelled files of every
 * input kind, rendered as a job would render them (renderFaxJob, and once through the worker).
 * Each must fail cleanly: the right document reason, the document's name, a message a person can
 * act on, and no throw. A good document after them still renders.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { deflateSync } from "node:zlib";
import { PDFDocument } from "pdf-lib";
import sharp from "sharp";
import { FaxImageWorker } from "../../src/render/fax-image/fax-image-worker.ts";
import { renderFaxJob, type FaxJobRenderInput } from "../../src/render/render-fax-job.ts";
import type { DocumentInput } from "../../src/render/pages/grey-page.ts";

const fixture = (path: string) => readFileSync(new URL(`../fixtures/${path}`, import.meta.url));

function input(documents: DocumentInput[], limits: Partial<FaxJobRenderInput["limits"]> = {}): FaxJobRenderInput {
  return {
    documents,
    paperFormat: "A4",
    resolution: "LOW",
    header: null,
    cover: null,
    overlay: null,
    recipients: [{ id: "r1", number: "+4989123456", properties: {} }],
    limits: { maxPages: 20, maxSourcePixels: 50_000_000, converterTimeoutMs: 30_000, ...limits },
  };
}

/** A PNG that claims width x height but holds only one compressed row: a decompression bomb. */
function pngBomb(width: number, height: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const byte of buf) c = crcTable[(c ^ byte) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), 8 + data.length);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 0; // grey
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(Buffer.alloc(width + 1))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

interface BadCase {
  what: string;
  doc: () => Promise<DocumentInput>;
  reason: string;
  message: RegExp;
  limits?: Partial<FaxJobRenderInput["limits"]>;
}

const CASES: BadCase[] = [
  { what: "a truncated PDF", doc: async () => ({ name: "invoice.pdf", bytes: (await PDFDocument.create().then(async (d) => (d.addPage(), d.save()))).subarray(0, 200) }), reason: "document_unreadable", message: /invoice\.pdf/ },
  { what: "a password-protected PDF", doc: async () => ({ name: "secret.pdf", bytes: fixture("corrupt/encrypted-user-password.pdf") }), reason: "document_encrypted", message: /secret\.pdf.*password/ },
  { what: "a PNG named .pdf", doc: async () => ({ name: "scan.pdf", bytes: await sharp({ create: { width: 10, height: 10, channels: 3, background: "black" } }).png().toBuffer() }), reason: "document_unreadable", message: /scan\.pdf/ },
  { what: "an empty PDF file", doc: async () => ({ name: "empty.pdf", bytes: new Uint8Array(0) }), reason: "document_unreadable", message: /empty\.pdf/ },
  { what: "a truncated JPEG", doc: async () => ({ name: "photo.jpg", bytes: (await sharp({ create: { width: 300, height: 300, channels: 3, background: "red" } }).jpeg().toBuffer()).subarray(0, 120) }), reason: "document_unreadable", message: /photo\.jpg/ },
  { what: "text named .png", doc: async () => ({ name: "logo.png", bytes: Buffer.from("not an image at all") }), reason: "document_unreadable", message: /logo\.png/ },
  { what: "a TIFF header followed by garbage", doc: async () => ({ name: "fax.tif", bytes: Buffer.from("II*\u0000\u0008\u0000\u0000\u0000garbage") }), reason: "document_unreadable", message: /fax\.tif/ },
  { what: "a 30000 x 30000 PNG bomb", doc: async () => ({ name: "bomb.png", bytes: pngBomb(30_000, 30_000) }), reason: "document_too_large", message: /bomb\.png.*(pixel|limit)/i },
  { what: "a PDF with more pages than allowed", doc: async () => ({ name: "long.pdf", bytes: await PDFDocument.create().then(async (d) => { for (let i = 0; i < 25; i++) d.addPage(); return d.save(); }) }), reason: "document_too_large", message: /long\.pdf/ },
  { what: "text longer than the page limit", doc: async () => ({ name: "log.txt", bytes: Buffer.from("line\n".repeat(62 * 21)) }), reason: "document_too_large", message: /log\.txt.*20 pages/ },
  { what: "invalid UTF-8", doc: async () => ({ name: "note.txt", charset: "UTF-8", bytes: Uint8Array.of(0x48, 0xc3, 0x28) }), reason: "document_unreadable", message: /note\.txt.*UTF-8/ },
  { what: "garbage named .docx", doc: async () => ({ name: "offer.docx", bytes: Buffer.from("PK\u0003\u0004 this is no zip archive") }), reason: "document_unreadable", message: /offer\.docx/ },
  { what: "a password-protected ODT", doc: async () => ({ name: "contract.odt", bytes: fixture("office/encrypted.odt") }), reason: "document_encrypted", message: /contract\.odt/ },
  { what: "PostScript that is garbage", doc: async () => ({ name: "print.ps", bytes: Buffer.from("%!PS\n this is (not valid postscript\n") }), reason: "document_unreadable", message: /print\.ps/ },
  { what: "PostScript that never ends", doc: async () => ({ name: "loop.ps", bytes: Buffer.from("%!PS\n{ } loop\n") }), reason: "document_unreadable", message: /loop\.ps.*(did not finish|stopped|killed)/, limits: { converterTimeoutMs: 2_000 } },
  { what: "an unknown extension", doc: async () => ({ name: "data.csv", bytes: Buffer.from("a,b\n") }), reason: "document_type_unsupported", message: /\.csv/ },
];

describe("bad documents fail cleanly with a document reason", () => {
  for (const bad of CASES) {
    it(bad.what, async () => {
      const doc = await bad.doc();
      const good: DocumentInput = { name: "cover-letter.txt", bytes: Buffer.from("Dear Sir or Madam,\n") };
      const result = await renderFaxJob(input([good, doc], bad.limits));
      assert.equal(result.ok, false, "the job must fail");
      if (result.ok) return;
      assert.equal(result.reasonCode, bad.reason, result.message);
      assert.equal(result.documentName, doc.name);
      assert.match(result.message, bad.message);
    });
  }

  it("the render worker carries on after bad documents", async () => {
    const worker = new FaxImageWorker({ timeoutMs: 60_000, memoryLimitMb: 512 });
    try {
      const bomb = await worker.render(input([{ name: "bomb.png", bytes: pngBomb(30_000, 30_000) }]));
      assert.ok(bomb.ok && !bomb.result.ok && bomb.result.reasonCode === "document_too_large");
      const secret = await worker.render(input([{ name: "secret.pdf", bytes: fixture("corrupt/encrypted-user-password.pdf") }]));
      assert.ok(secret.ok && !secret.result.ok && secret.result.reasonCode === "document_encrypted");
      const fine = await worker.render(input([{ name: "ok.txt", bytes: Buffer.from("still rendering\n") }]));
      assert.ok(fine.ok && fine.result.ok, "a good document renders after the bad ones");
      assert.equal(fine.result.images[0]?.pageSizes.length, 1);
    } finally {
      await worker.close();
    }
  });
});

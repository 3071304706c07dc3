import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { inflateSync } from "node:zlib";
import { PDFDict, PDFDocument, PDFName, PDFNumber, PDFRawStream, type PDFPage } from "pdf-lib";
import { faxImageToPdf } from "../../src/notifications/email/fax-image-to-pdf.ts";
import { FAX_WIDTH as WIDTH, faxTiff, faxTiffBand } from "../support/fax-tiff.ts";

/** The page's one image XObject. */
function pageImage(page: PDFPage): PDFRawStream {
  const xObjects = page.node.Resources()!.lookup(PDFName.of("XObject"), PDFDict);
  const names = xObjects.keys();
  assert.equal(names.length, 1);
  const image = xObjects.lookup(names[0]!);
  assert.ok(image instanceof PDFRawStream);
  return image;
}

const dictNumber = (stream: PDFRawStream, key: string) => stream.dict.lookup(PDFName.of(key), PDFNumber).asNumber();

function isBlack(bits: Buffer, x: number, y: number): boolean {
  return (bits[y * (WIDTH / 8) + (x >> 3)]! & (0x80 >> (x & 7))) === 0;
}

describe("faxImageToPdf", () => {
  it("makes one page per fax page, sized for 204 x 196 dpi so that it prints at true size", async () => {
    const pdf = await PDFDocument.load(await faxImageToPdf(await faxTiff(3, { height: 2292, yDpi: 196 })));
    assert.equal(pdf.getPageCount(), 3);
    for (const page of pdf.getPages()) {
      const { width, height } = page.getSize();
      assert.ok(Math.abs(width - (WIDTH / 204) * 72) < 0.01, `width ${width}`); // 215 mm
      assert.ok(Math.abs(height - (2292 / 196) * 72) < 0.01, `height ${height}`); // 297 mm, A4
    }
  });

  it("sizes 98 lines/inch pages by their own resolution, also when the TIFF states it per centimetre", async () => {
    for (const unit of ["inch", "cm"] as const) {
      const pdf = await PDFDocument.load(await faxImageToPdf(await faxTiff(1, { height: 1146, yDpi: 98, resolutionUnit: unit })));
      const { width, height } = pdf.getPage(0).getSize();
      assert.ok(Math.abs(width - (WIDTH / 204) * 72) < 0.05, `${unit}: width ${width}`);
      assert.ok(Math.abs(height - (1146 / 98) * 72) < 0.05, `${unit}: height ${height}`);
    }
  });

  it("keeps the image bilevel, at full resolution and in page order", async () => {
    const height = 1146;
    const pdf = await PDFDocument.load(await faxImageToPdf(await faxTiff(2, { height, yDpi: 98 })));
    for (const [index, page] of pdf.getPages().entries()) {
      const image = pageImage(page);
      assert.equal(dictNumber(image, "BitsPerComponent"), 1);
      assert.equal(dictNumber(image, "Width"), WIDTH);
      assert.equal(dictNumber(image, "Height"), height);
      assert.equal(image.dict.lookup(PDFName.of("ColorSpace")), PDFName.of("DeviceGray"));
      const bits = inflateSync(image.contents);
      const band = faxTiffBand(index);
      assert.deepEqual(band, { top: 16 * (index + 1), rows: 8 });
      for (const y of [band.top - 1, band.top, band.top + band.rows - 1, band.top + band.rows]) {
        const expected = y >= band.top && y < band.top + band.rows;
        for (const x of [0, 7, 8, 864, WIDTH - 1]) assert.equal(isBlack(bits, x, y), expected, `page ${index + 1}, pixel ${x},${y}`);
      }
    }
  });

  it("stays compact: a mostly white page takes a small fraction of its uncompressed bits", async () => {
    const pdf = await faxImageToPdf(await faxTiff(4, { height: 2292, yDpi: 196 }));
    const uncompressedBits = (WIDTH / 8) * 2292 * 4;
    assert.ok(pdf.length < uncompressedBits / 20, `${pdf.length} bytes`);
  });

  it("rejects what is not a TIFF with a clear message", async () => {
    await assert.rejects(faxImageToPdf(Buffer.from("%PDF-1.7 not a fax image")), /The fax image is not a readable TIFF: it does not start with II or MM\./);
    await assert.rejects(faxImageToPdf(Buffer.from("II*\u0000")), /shorter than a TIFF header/);
  });
});

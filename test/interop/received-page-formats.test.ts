/**
 * Page sizes and resolutions real fax machines send, received by a node and shown right
 * everywhere a person or a program sees them. The caller is SpanDSP's T.38 terminal
 * (test/peers/spandsp-receiver in its -t mode, sending a TIFF-F of the case's size as it is),
 * SIPp plays the carrier, the node answers on its SIP line; then, for each page:
 *  - the pull API's TIFF holds the page as sent, pixel for pixel, with its width and resolution;
 *  - the pull API's PDF and the topic's mail attachment (the same PDF) have a page of the paper's
 *    size, and the page drawn at the fax's own resolution is the page as sent;
 *  - the console's page preview is the page with square pixels: a one-inch square on the page is
 *    square in the preview, and nothing of the page is cut.
 * Letter length at fine (196 lpi; A4 fine is what every other reception test sends), A4 at
 * superfine (391 lpi) and at 400 dpi (R16 x superfine), B4 width (2048 pixels) and length, A3
 * width (2432) and length at normal (98 lpi); and an A4 fine page from efax (MH, no ECM, through
 * the T.31 modem of test/peers/t31-modem), the independent sender reaching a node.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it, type TestContext } from "node:test";
import { inflateSync } from "node:zlib";
import { PDFDict, PDFDocument, PDFName, PDFNumber, PDFRawStream } from "pdf-lib";
import sharp from "sharp";
import { addTopicNumber, createTopic, issueInboundCredential, setTopicDeliveries } from "../../src/inbound/topics.ts";
import { SipFaxLine } from "../../src/line/sip-fax-line/sip-fax-line.ts";
import { REGION_NUMBER_CONTEXT } from "../../src/numbers/normalize-number.ts";
import { readTiffPages } from "../../src/render/fax-image/tiff-structure.ts";
import { decodePage, pixelDifference, type PagePixels } from "../support/fax-page-pixels.ts";
import { attachments, SmtpSink } from "../support/smtp-sink.ts";
import { createTestLogin, eventually, startTestNode, tempDir, type TestNode } from "../support/test-node.ts";
import { renderTwoPageLetter, requireNativeBuild } from "./interop-support.ts";
import { cleanupPeers, startSipp, startT38Sender } from "./peer-processes.ts";
import { cleanupT31Peers, EFAX_HEADER_ROWS, efaxSentPage, rawBilevelTiff, requireEfaxPeers, startEfaxSender, startT31Modem } from "./t31-modem-peer.ts";

/** The node's clock and its callers' (efax's modem wants 10: see efax-reception.test.ts). */
const SPEED = 10;
const NUMBER = "+4930123456";

interface Format {
  name: string;
  width: number;
  /** Rows: the paper's length at the resolution. */
  height: number;
  xDpi: number;
  yDpi: number;
  /** Paper in millimetres, as a PDF page must be (± 0.5 mm). */
  paperMm: { width: number; height: number };
}

const rows = (mm: number, dpi: number) => Math.round((mm / 25.4) * dpi);
const FORMATS: Format[] = [
  { name: "US Letter length, fine", width: 1728, height: rows(279.4, 196), xDpi: 204, yDpi: 196, paperMm: { width: 215.1, height: 279.4 } },
  { name: "A4, superfine (204 x 391)", width: 1728, height: rows(297, 391), xDpi: 204, yDpi: 391, paperMm: { width: 215.1, height: 297 } },
  { name: "A4, 400 dpi (408 x 391)", width: 3456, height: rows(297, 391), xDpi: 408, yDpi: 391, paperMm: { width: 215.1, height: 297 } },
  { name: "B4 width (2048 pixels), B4 length, fine", width: 2048, height: rows(364, 196), xDpi: 204, yDpi: 196, paperMm: { width: 255, height: 364 } },
  { name: "A3 width (2432 pixels), A3 length, normal (98 lpi)", width: 2432, height: rows(420, 98), xDpi: 204, yDpi: 98, paperMm: { width: 302.8, height: 420 } },
];

/** The one-inch squares on a format's page: one near the top left, one near the bottom right. */
function squares(f: Format): { x: number; y: number; w: number; h: number }[] {
  return [
    { x: Math.round(f.xDpi / 2), y: Math.round(f.yDpi / 2), w: f.xDpi, h: f.yDpi },
    { x: f.width - Math.round(f.xDpi / 2) - f.xDpi, y: f.height - Math.round(f.yDpi / 2) - f.yDpi, w: f.xDpi, h: f.yDpi },
  ];
}

/** Draws the format's two black one-inch squares on the page, each in a white margin of 8 pixels. */
function drawSquares(page: PagePixels, f: Format): PagePixels {
  const pixels = Buffer.from(page.pixels);
  for (const sq of squares(f)) {
    for (let y = sq.y - 8; y < sq.y + sq.h + 8; y++) pixels.fill(255, y * f.width + sq.x - 8, y * f.width + sq.x + sq.w + 8);
    for (let y = sq.y; y < sq.y + sq.h; y++) pixels.fill(0, y * f.width + sq.x, y * f.width + sq.x + sq.w);
  }
  return { ...page, pixels };
}

/** A white page of the format with a row of narrow bars across the middle and its two squares. */
function formatPage(f: Format): PagePixels {
  const pixels = Buffer.alloc(f.width * f.height, 255);
  // Every column position matters to the coder.
  const mid = Math.round(f.height / 2);
  for (let y = mid; y < mid + 16; y++) for (let x = 0; x < f.width; x += 7) pixels[y * f.width + x] = 0;
  return drawSquares({ width: f.width, height: f.height, pixels }, f);
}

function tiffF(page: PagePixels, f: Format): Promise<Buffer> {
  return sharp(page.pixels, { raw: { width: page.width, height: page.height, channels: 1 } })
    .toColourspace("b-w")
    .tiff({ compression: "ccittfax4", bitdepth: 1, miniswhite: true, xres: f.xDpi / 25.4, yres: f.yDpi / 25.4, resolutionUnit: "inch" })
    .toBuffer();
}

/** The pixels of a page from (left, top) to (right, bottom), exclusive. */
function window(page: PagePixels, left: number, top: number, right: number, bottom: number): PagePixels {
  const [width, height] = [right - left, bottom - top];
  const pixels = Buffer.alloc(width * height);
  for (let y = 0; y < height; y++) page.pixels.copy(pixels, y * width, (top + y) * page.width + left, (top + y) * page.width + right);
  return { width, height, pixels };
}

/** The bounding box of the black pixels of a decoded page. */
function inkBox(page: PagePixels): { left: number; top: number; right: number; bottom: number } {
  let left = page.width, top = page.height, right = -1, bottom = -1;
  for (let y = 0; y < page.height; y++) {
    for (let x = 0; x < page.width; x++) {
      if (page.pixels[y * page.width + x]! < 128) {
        if (x < left) left = x;
        if (x > right) right = x;
        if (y < top) top = y;
        if (y > bottom) bottom = y;
      }
    }
  }
  return { left, top, right, bottom };
}

describe("received page formats: stored, downloaded, mailed and previewed as the sender's paper", () => {
  const dir = tempDir("faxline-formats-");
  const smtp = new SmtpSink();
  let node: TestNode;
  let pullAuth = "";
  let consoleCookie = "";
  const acme = { custNr: "91002", login: "acme-formats", password: "acme-formats-password" };

  before(async () => {
    requireNativeBuild();
    requireEfaxPeers();
    await smtp.start();
    const trunksFile = path.join(dir.path, "trunks.yaml");
    writeFileSync(
      trunksFile,
      ["trunks:", "  - name: carrier", "    proxy: 127.0.0.1:9", '    callerNumber: "+4930555000"', '    csid: "ACME FAX"', '    routes: ["+1"]', "    inbound: true", '    inboundFrom: ["127.0.0.1"]', ""].join("\n"),
    );
    node = await startTestNode({
      "lines.trunksFile": trunksFile,
      "lines.clockSpeed": SPEED,
      "lines.localAddress": "127.0.0.1",
      "lines.sipPort": 0,
      "lines.mediaPorts": "47600-47649",
      "mail.host": "127.0.0.1",
      "mail.port": smtp.port,
      "mail.security": "none",
      "mail.from": "Faxline <fax@example.test>",
    });
    await createTestLogin(node, acme);
    const db = node.node.context.store.db;
    const now = Date.now();
    await createTopic(db, { custNr: acme.custNr, name: "main" }, now);
    await addTopicNumber(db, { custNr: acme.custNr, topic: "main", number: NUMBER }, REGION_NUMBER_CONTEXT.DE, now);
    await setTopicDeliveries(db, acme.custNr, "main", { mailTo: ["inbox@example.com"], mailAttachment: "pdf" });
    const password = (await issueInboundCredential(db, { custNr: acme.custNr }, now)).password;
    pullAuth = `Basic ${Buffer.from(`${acme.custNr}:${password}`).toString("base64")}`;
    const session = await fetch(`${node.url}/console/api/session`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ login: acme.login, password: acme.password }) });
    assert.equal(session.status, 200);
    consoleCookie = `faxline_session=${/faxline_session=([^;]*)/.exec(session.headers.get("set-cookie") ?? "")?.[1]}`;
  });
  after(async () => {
    cleanupPeers();
    cleanupT31Peers();
    await node?.stop();
    await smtp.stop();
    dir.remove();
  });

  function sipPort(): number {
    const line = node.node.context.lines.production;
    assert.ok(line instanceof SipFaxLine, "the node runs its SIP line");
    return line.sipLocal!.port;
  }

  /** A PDF's one page: its size in points and its one image (1 bit per pixel, 1 = white). */
  async function pdfPage(pdf: Buffer, what: string): Promise<{ width: number; height: number; image: { width: number; height: number; bits: Buffer } }> {
    const document = await PDFDocument.load(pdf);
    assert.equal(document.getPageCount(), 1, `${what}: one page`);
    const page = document.getPage(0);
    const xObjects = page.node.Resources()!.lookup(PDFName.of("XObject"), PDFDict);
    const images = xObjects.keys().map((key) => xObjects.lookup(key));
    assert.equal(images.length, 1, `${what}: one image`);
    const image = images[0];
    assert.ok(image instanceof PDFRawStream, `${what}: the image is a stream`);
    const number = (key: string) => (image.dict.lookup(PDFName.of(key), PDFNumber) as PDFNumber).asNumber();
    assert.equal(number("BitsPerComponent"), 1, `${what}: a bilevel image`);
    return { ...page.getSize(), image: { width: number("Width"), height: number("Height"), bits: inflateSync(image.contents) } };
  }

  /**
   * Checks the PDF's one page: the paper's size; its one image is the page as sent, pixel for
   * pixel; and drawn at the fax's resolution (pdftoppm) the ink sits where it sits on the paper
   * (within the rasterizer's rounding of a pixel).
   */
  async function checkPdf(pdf: Buffer, f: Format, sent: PagePixels, what: string): Promise<void> {
    const page = await pdfPage(pdf, what);
    const mm = (points: number) => (points / 72) * 25.4;
    assert.ok(Math.abs(mm(page.width) - f.paperMm.width) < 0.5 && Math.abs(mm(page.height) - f.paperMm.height) < 0.5, `${what}: page of ${mm(page.width).toFixed(1)} x ${mm(page.height).toFixed(1)} mm, expected ${f.paperMm.width} x ${f.paperMm.height}`);
    assert.deepEqual([page.image.width, page.image.height], [f.width, f.height], `${what}: the image's size`);
    const rowBytes = Math.ceil(f.width / 8);
    const pixels = Buffer.alloc(f.width * f.height);
    for (let y = 0; y < f.height; y++) for (let x = 0; x < f.width; x++) pixels[y * f.width + x] = page.image.bits[y * rowBytes + (x >> 3)]! & (0x80 >> (x & 7)) ? 255 : 0;
    const difference = pixelDifference({ width: f.width, height: f.height, pixels }, sent);
    assert.equal(difference.count, 0, `${what}'s image: ${difference.count} pixels differ (${difference.first})`);
    const work = mkdtempSync(path.join(tmpdir(), "faxline-pdf-"));
    try {
      writeFileSync(path.join(work, "fax.pdf"), pdf);
      execFileSync("pdftoppm", ["-rx", String(f.xDpi), "-ry", String(f.yDpi), "-mono", "-png", path.join(work, "fax.pdf"), path.join(work, "page")]);
      const drawn = await decodePage(readFileSync(path.join(work, "page-1.png")));
      // pdftoppm rounds the page's pixel size up, and the image's edges by a pixel.
      assert.ok(Math.abs(drawn.width - sent.width) <= 1 && Math.abs(drawn.height - sent.height) <= 1, `${what} drawn is ${drawn.width} x ${drawn.height} px, expected ${sent.width} x ${sent.height}`);
      const [drawnBox, sentBox] = [inkBox(drawn), inkBox(sent)];
      for (const side of ["left", "top", "right", "bottom"] as const) {
        assert.ok(Math.abs(drawnBox[side] - sentBox[side]) <= 1, `${what} drawn: its ink ends at ${side} ${drawnBox[side]}, on the page at ${sentBox[side]}`);
      }
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }

  /**
   * The received fax's one page `sent` (a page of format `f`), through the pull API (TIFF, PDF),
   * the topic's mail (PDF) and the console's preview; `square` is a one-inch square on the page.
   * The fax is acknowledged at the end, so that the next case's fax is the next one handed out.
   */
  async function checkReceived(
    t: TestContext,
    format: Format,
    sentPage: PagePixels,
    square: { x: number; y: number; w: number; h: number },
    mailsBefore: number,
    lostTrailingRows = 0,
  ): Promise<void> {
    // The pull API: the fax, its TIFF as received, its PDF.
    const fax = await eventually(async () => {
      const res = await fetch(`${node.url}/faxin/rest/v1/topics/main?fetch=1`, { method: "POST", headers: { authorization: pullAuth, "content-type": "application/json" }, body: "{}" });
      return ((await res.json()) as any).results?.[0];
    }, 10_000, "the received fax");
    assert.equal(fax.pages, 1);
    assert.equal(fax.status, "OK");
    assert.equal(fax.resolution, format.yDpi >= 150 ? "HIGH" : "LOW");
    const tif = Buffer.from(await (await fetch(fax.documents.find((d: any) => d.name.endsWith(".tif")).url, { headers: { authorization: pullAuth } })).arrayBuffer());
    const [stored] = readTiffPages(tif);
    // Without ECM nothing is sent again: the last white rows of efax's page sometimes do not make it
    // through the T.31 modem (seen once in two quiet runs: 2 311 of 2 312 rows). Allowed only for
    // white rows, and only as many as the caller says; everything that arrived must be as sent.
    let [f, sent] = [format, sentPage];
    const lost = format.height - stored!.height;
    if (lost > 0 && lost <= lostTrailingRows) {
      assert.ok(sentPage.pixels.subarray(stored!.height * sentPage.width).every((p) => p >= 128), `the ${lost} rows lost at the page's end held ink`);
      t.diagnostic(`the page's last ${lost} white row(s) did not arrive (no ECM)`);
      f = { ...format, height: stored!.height, paperMm: { ...format.paperMm, height: (format.paperMm.height * stored!.height) / format.height } };
      sent = { width: sentPage.width, height: stored!.height, pixels: sentPage.pixels.subarray(0, stored!.height * sentPage.width) };
    }
    assert.deepEqual({ width: stored!.width, height: stored!.height, x: Math.round(stored!.xResolution!), y: Math.round(stored!.yResolution!), unit: stored!.resolutionUnit }, { width: f.width, height: f.height, x: f.xDpi, y: f.yDpi, unit: 2 });
    const difference = pixelDifference(await decodePage(tif, 0), sent);
    assert.equal(difference.count, 0, `the stored page: ${difference.count} pixels differ (${difference.first})`);
    const pdf = Buffer.from(await (await fetch(fax.documents.find((d: any) => d.name.endsWith(".pdf")).url, { headers: { authorization: pullAuth } })).arrayBuffer());
    await checkPdf(pdf, f, sent, "the pull API's PDF");

    // The topic's mail, with the PDF attached.
    const mail = await eventually(async () => smtp.mails[mailsBefore], 15_000, "the topic's mail");
    const [attachment] = attachments(mail.raw);
    assert.equal(attachment?.contentType, "application/pdf");
    // The same PDF as the pull API's (made again, so only its dates differ): its page and image.
    const [mailed, pulled] = [await pdfPage(attachment!.content, "the mail's PDF"), await pdfPage(pdf, "the pull API's PDF")];
    assert.deepEqual([mailed.width, mailed.height, mailed.image.width, mailed.image.height], [pulled.width, pulled.height, pulled.image.width, pulled.image.height], "the mail's PDF page");
    assert.ok(mailed.image.bits.equals(pulled.image.bits), "the mail's PDF shows the same image");

    // The console's preview: square pixels, nothing cut.
    const res = await fetch(`${node.url}/console/api/received/${fax.id}/pages/1`, { headers: { cookie: consoleCookie } });
    assert.equal(res.status, 200);
    const preview = await decodePage(Buffer.from(await res.arrayBuffer()));
    const [pxPerMmX, pxPerMmY] = [preview.width / f.paperMm.width, preview.height / f.paperMm.height];
    assert.ok(Math.abs(pxPerMmX / pxPerMmY - 1) < 0.01, `the preview is ${preview.width} x ${preview.height} px for ${f.paperMm.width} x ${f.paperMm.height} mm: pixels not square`);
    const [box, onPage] = [inkBox(preview), inkBox(sent)];
    const [scaleX, scaleY] = [preview.width / f.width, preview.height / f.height];
    const expected = { left: onPage.left * scaleX, top: onPage.top * scaleY, right: (onPage.right + 1) * scaleX - 1, bottom: (onPage.bottom + 1) * scaleY - 1 };
    t.diagnostic(JSON.stringify({ preview: [preview.width, preview.height], box, expected }));
    for (const side of ["left", "top", "right", "bottom"] as const) {
      assert.ok(Math.abs(box[side] - expected[side]) <= 2, `the preview's ink ends at ${side} ${box[side]}, expected ${expected[side].toFixed(1)} (the page cut or stretched)`);
    }
    // The first square, one inch each way on paper, is as tall as it is wide.
    const around = { left: Math.round((square.x - 4) * scaleX), top: Math.round((square.y - 4) * scaleY), right: Math.round((square.x + square.w + 4) * scaleX), bottom: Math.round((square.y + square.h + 4) * scaleY) };
    const shown = inkBox(window(preview, around.left, around.top, around.right, around.bottom));
    const [squareWidth, squareHeight] = [shown.right - shown.left + 1, shown.bottom - shown.top + 1];
    assert.ok(Math.abs(squareWidth - squareHeight) <= 2, `the one-inch square shows as ${squareWidth} x ${squareHeight} px`);

    await fetch(`${node.url}/faxin/rest/v1/topics/main?fetch=0&ids=${fax.id}`, { method: "POST", headers: { authorization: pullAuth, "content-type": "application/json" }, body: "{}" });
  }

  for (const f of FORMATS) {
    it(`${f.name}: the page arrives as sent and shows as the sender's paper`, { timeout: 90_000 }, async (t) => {
      const sent = formatPage(f);
      const txFile = path.join(dir.path, "page.tif");
      writeFileSync(txFile, await tiffF(sent, f));
      const mailsBefore = smtp.mails.length;
      const sender = await startT38Sender({ speed: SPEED, ecm: true, ident: "FORMAT SENDER", txFile });
      const sipp = await startSipp("uac-fax-t38-offer.xml", {
        call: { remote: `127.0.0.1:${sipPort()}`, service: NUMBER },
        keys: { rx_host: "127.0.0.1", rx_port: String(sender.port) },
      });
      const [exit, peer] = await Promise.all([sipp.exit, sender.result]);
      t.diagnostic(JSON.stringify(peer.result));
      assert.equal(peer.result?.code, 0, `the sender: ${peer.result?.text}\n${peer.log.slice(-1500)}`);
      assert.equal(exit.code, 0, `${exit.output}\n${sipp.errors()}`);

      await checkReceived(t, f, sent, squares(f)[0]!, mailsBefore);
    });
  }

  it("efax's A4 page (MH, no ECM, over T.38, through the T.31 modem) reaches the node and shows as its paper", { timeout: 90_000 }, async (t) => {
    // A4 fine, the letter's first page (efax dies of a page sent in under a wall second) with the
    // squares; efax sends it below 20 white rows of its own, so the paper it arrives on is 20
    // rows (2.6 mm) longer than A4.
    const a4: Format = { name: "A4, fine", width: 1728, height: rows(297, 196), xDpi: 204, yDpi: 196, paperMm: { width: 215.1, height: 297 } };
    const page = drawSquares(await decodePage(await renderTwoPageLetter("HIGH"), 0), a4);
    const sent = efaxSentPage(page, 196);
    const arrived: Format = { ...a4, height: sent.height, paperMm: { width: 215.1, height: (sent.height / 196) * 25.4 } };
    const mailsBefore = smtp.mails.length;
    const modem = await startT31Modem({ line: "t38", speed: SPEED });
    const efax = startEfaxSender({ device: modem.device, number: NUMBER, pages: [rawBilevelTiff(page, 204, 196)], ident: "+49 40 123456", capabilities: "1,5,0,2,0,0,0,0" });
    try {
      await modem.dialed;
      const sipp = await startSipp("uac-fax-t38-offer.xml", { call: { remote: `127.0.0.1:${sipPort()}`, service: NUMBER }, keys: { rx_host: "127.0.0.1", rx_port: String(modem.port) } });
      const [exit, efaxExit, peer] = await Promise.all([sipp.exit, efax.exit, modem.result]);
      t.diagnostic(JSON.stringify(peer.result));
      assert.equal(efaxExit.code, 0, `efax ended with ${efaxExit.code}: ${efaxExit.log.slice(-3000)}`);
      assert.equal(exit.code, 0, `${exit.output}\n${sipp.errors()}`);
      const [first] = squares(a4);
      await checkReceived(t, arrived, sent, { ...first!, y: first!.y + EFAX_HEADER_ROWS }, mailsBefore, 2);
    } finally {
      efax.kill();
      modem.kill();
    }
  });
});

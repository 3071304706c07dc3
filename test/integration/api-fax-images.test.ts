/**
 * The fax image extension through the API: a job with a PDF, an image, a header line, a cover
 * page per recipient and an installed overlay renders into one image per distinct recipient;
 * the images, their pages as PNG and their preflight are served while and after the job runs;
 * POST /fax/preview renders a request without storing or sending it. Intake refuses a header
 * with a standalone % and an overlay that is not installed.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { PDFDocument, StandardFonts, rgb } from "pdf-lib";
import sharp from "sharp";
import { installOverlay } from "../../src/accounts/rendering-settings.ts";
import { readTiffPages } from "../../src/render/fax-image/tiff-structure.ts";
import { api, createTestLogin, startTestNode, waitForFinalReport, type TestNode } from "../support/test-node.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";

const b64 = (bytes: Uint8Array | string) => Buffer.from(bytes).toString("base64");

async function invoicePdf(): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (let n = 1; n <= 2; n++) {
    const page = pdf.addPage([595, 842]);
    page.drawText(`Invoice 4711, page ${n}`, { x: 60, y: 760, size: 24, font });
    page.drawRectangle({ x: 60, y: 600, width: 470, height: 80, color: rgb(0.85, 0.85, 0.85) });
    page.drawText("Total: 1.234,56 EUR", { x: 70, y: 630, size: 18, font });
  }
  return pdf.save();
}

async function fetchBytes(url: string, creds: { login: string; password: string }) {
  const res = await fetch(url, { headers: { authorization: `Basic ${b64(`${creds.login}:${creds.password}`)}` } });
  return { status: res.status, type: res.headers.get("content-type"), bytes: Buffer.from(await res.arrayBuffer()) };
}

for (const dialect of DIALECTS) describe(`${dialect}: fax images and preview (API extension)`, () => {
  const store = withDialect(dialect);
  let node: TestNode;
  let client: ReturnType<typeof api>;
  let creds: Awaited<ReturnType<typeof createTestLogin>>;
  let custNr: string;
  let pdf: Uint8Array;
  let logo: Buffer;

  before(async () => {
    node = await startTestNode(store.overrides());
    creds = await createTestLogin(node);
    custNr = creds.custNr;
    client = api(node.url, creds);
    pdf = await invoicePdf();
    logo = await sharp({ create: { width: 400, height: 200, channels: 3, background: "white" } })
      .composite([{ input: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="400" height="200"><circle cx="100" cy="100" r="80" fill="black"/></svg>') }])
      .png()
      .toBuffer();
    // A letterhead: a frame around the page.
    const letterhead = await sharp({ create: { width: 850, height: 1100, channels: 3, background: "white" } })
      .composite([{ input: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="850" height="1100"><rect x="10" y="10" width="830" height="1080" fill="none" stroke="black" stroke-width="6"/></svg>') }])
      .png()
      .toBuffer();
    await installOverlay(node.node.context.store.db, { custNr, name: "letterhead", fileName: "letterhead.png", bytes: letterhead }, Date.now());
  });
  after(async () => {
    await node.stop();
  });

  const job = (overrides: Record<string, unknown> = {}) => ({
    recipients: [
      { number: "+4989000002000", properties: [{ key: "ToName", value: "Dr. Anna Berg" }] },
      { number: "+4989000002001", properties: [{ key: "ToName", value: "Max Meier" }] },
    ],
    documents: [
      { name: "invoice.PDF", data: b64(pdf) },
      { name: "logo.png", data: b64(logo) },
    ],
    renderingOptions: {
      resolution: "LOW",
      coverpageTemplate: "coverpage-default.ftl.html",
      overlay: { name: "letterhead", mode: "ALL_BUT_FIRST_PAGE" },
      header: "%tz=Europe/Berlin;%d.%m.%Y %H:%M  To: %#%rPage %P/%T",
    },
    ...overrides,
  });

  it("renders one image per recipient and serves the TIFF, each page as PNG and the preflight", async () => {
    const sent = await client.post(`/${custNr}/fax`, job());
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const jobId = sent.body.jobId as string;
    const report = await waitForFinalReport(client, custNr, jobId, 60_000);
    assert.equal(report.pages, 4, "a cover page, two PDF pages and the image");
    assert.ok(report.recipientStatus.every((r: { status: string }) => r.status === "OK"));

    const listed = await client.get(`/${custNr}/fax/reports/${jobId}/fax-images`);
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    assert.equal(listed.body.images.length, 2, "the cover pages and headers differ per recipient");
    assert.deepEqual(listed.body.images.map((i: { recipients: string[] }) => i.recipients), [["+4989000002000"], ["+4989000002001"]]);
    for (const image of listed.body.images) {
      assert.equal(image.pages.length, 4);
      assert.equal(image.resolution, "LOW");
      assert.ok(image.pages.every((p: { encodedBytes: number; estimatedSeconds: number; blank: boolean }) => p.encodedBytes > 0 && p.estimatedSeconds > 0 && !p.blank));
      const tiff = await fetchBytes(`${node.url}${image.tiffUrl}`, creds);
      assert.equal(tiff.status, 200, tiff.bytes.toString());
      assert.equal(tiff.type, "image/tiff");
      const pages = readTiffPages(tiff.bytes);
      assert.equal(pages.length, 4);
      assert.ok(pages.every((p) => p.width === 1728 && p.height === 1146 && p.yResolution === 98 && p.compression === 4));
      assert.equal(tiff.bytes.length, image.sizeBytes);
      assert.deepEqual(pages.map((p) => p.encodedBytes), image.pages.map((p: { encodedBytes: number }) => p.encodedBytes));

      const png = await fetchBytes(`${node.url}${image.pages[1].pngUrl}`, creds);
      assert.equal(png.status, 200, png.bytes.toString());
      assert.equal(png.type, "image/png");
      const meta = await sharp(png.bytes).metadata();
      assert.equal(meta.width, 1728);
      assert.equal(meta.height, Math.round((1146 * 204) / 98), "a LOW page is stretched to square pixels (204 dpi both ways)");
    }
    // The recipients' images differ only where their cover page and header line differ.
    const [a, b] = listed.body.images;
    assert.notEqual(a.pages[0].encodedBytes === b.pages[0].encodedBytes && a.pages[1].encodedBytes === b.pages[1].encodedBytes, true);

    const missing = await client.get(`/${custNr}/fax/reports/${jobId}/fax-images/img_nope`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error, "fax_image_not_found");
    const noPage = await client.get(`/${custNr}/fax/reports/${jobId}/fax-images/${a.imageId}/pages/5`);
    assert.equal(noPage.status, 404);
    assert.equal(noPage.body.error, "fax_image_page_not_found");
  });

  it("draws the overlay on every page but the first (the cover page counts as the first)", async () => {
    // The same header without the overlay. Its date and time are the preview's: two previews in
    // different minutes would differ on every page, so both use a header without them.
    const header = "%tz=Europe/Berlin;To: %#%rPage %P/%T";
    // The cover page shows the date to the minute: both previews must fall in one minute, so a
    // pair that straddles a minute's end is taken again.
    const previews = async () => {
      const started = Date.now();
      const withOverlay = await client.post(`/${custNr}/fax/preview`, job({ recipients: [{ number: "+4989000002000" }], renderingOptions: { ...job().renderingOptions, header } }));
      const without = await client.post(`/${custNr}/fax/preview`, job({
        recipients: [{ number: "+4989000002000" }],
        renderingOptions: { resolution: "LOW", coverpageTemplate: "coverpage-default.ftl.html", header },
      }));
      return { withOverlay, without, oneMinute: Math.floor(started / 60_000) === Math.floor(Date.now() / 60_000) };
    };
    let pair = await previews();
    if (!pair.oneMinute) pair = await previews();
    assert.ok(pair.oneMinute, "two tries, each across a minute's end: the previews take far too long");
    const { withOverlay, without } = pair;
    assert.equal(withOverlay.status, 200, JSON.stringify(withOverlay.body));
    assert.equal(without.status, 200, JSON.stringify(without.body));
    const ratios = (body: { pages: { blackRatio: number }[] }) => body.pages.map((p) => p.blackRatio);
    const [coverWith, ...restWith] = ratios(withOverlay.body);
    const [coverWithout, ...restWithout] = ratios(without.body);
    assert.ok(Math.abs(coverWith! - coverWithout!) < 1e-9, "the cover page gets no overlay in ALL_BUT_FIRST_PAGE");
    restWith.forEach((ratio, i) => assert.ok(ratio > restWithout[i]!, `page ${i + 2} is darker with the frame`));
  });

  it("previews a request without storing a job: JSON with a PNG per page, or the TIFF", async () => {
    const before = await node.node.context.store.db.selectFrom("jobs").select("id").execute();
    const preview = await client.post(`/${custNr}/fax/preview`, {
      recipients: [{ number: "+4989000002000" }],
      documents: [{ name: "note.txt", data: b64("Hello\fSecond page\n") }],
    });
    assert.equal(preview.status, 200, JSON.stringify(preview.body));
    assert.equal(preview.body.recipient, "+4989000002000");
    assert.equal(preview.body.pages.length, 2);
    const png = Buffer.from(preview.body.pages[0].png, "base64");
    assert.equal((await sharp(png).metadata()).width, 1728);
    assert.ok(preview.body.estimatedSeconds > 0);

    const tiff = await fetch(`${node.url}/rest/v1/${custNr}/fax/preview`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "image/tiff", authorization: `Basic ${b64(`${creds.login}:${creds.password}`)}` },
      body: JSON.stringify({ recipients: [{ number: "+4989000002000" }], documents: [{ name: "note.txt", data: b64("Hello\n") }] }),
    });
    assert.equal(tiff.status, 200);
    assert.equal(tiff.headers.get("content-type"), "image/tiff");
    assert.equal(readTiffPages(Buffer.from(await tiff.arrayBuffer())).length, 1);
    const after = await node.node.context.store.db.selectFrom("jobs").select("id").execute();
    assert.equal(after.length, before.length, "a preview stores no job");
  });

  it("answers 422 preview_failed with the failure reason for a document that cannot be rendered", async () => {
    const res = await client.post(`/${custNr}/fax/preview`, {
      recipients: [{ number: "+4989000002000" }],
      documents: [{ name: "broken.pdf", data: b64("%PDF-1.7 this is not really a PDF") }],
    });
    assert.equal(res.status, 422);
    assert.equal(res.body.error, "preview_failed");
    assert.equal(res.body.reason, "document_unreadable");
    assert.match(res.body.message, /broken\.pdf/);
  });

  it("refuses a standalone % in the header and an overlay that is not installed, with 400", async () => {
    const header = await client.post(`/${custNr}/fax`, job({ renderingOptions: { header: "Rabatt 50% heute" } }));
    assert.equal(header.status, 400);
    assert.equal(header.body.error, "header_invalid");
    assert.match(header.body.message, /renderingOptions\.header: .*position 10.*%%/);
    const overlay = await client.post(`/${custNr}/fax`, job({ renderingOptions: { overlay: { name: "nope", mode: "ALL_PAGES" } } }));
    assert.equal(overlay.status, 400);
    assert.equal(overlay.body.error, "overlay_unknown");
    assert.match(overlay.body.message, /"nope" is not installed .* installed overlays: "letterhead"/);
  });

  it("fails a job whose document is corrupt with a document reason, and the node keeps serving", async () => {
    const sent = await client.post(`/${custNr}/fax`, {
      recipients: [{ number: "+4989000002000" }],
      documents: [{ name: "scan.tif", data: b64(Buffer.from("II*\u0000garbage that is no TIFF")) }],
    });
    assert.equal(sent.status, 201);
    const report = await waitForFinalReport(client, custNr, sent.body.jobId, 30_000);
    assert.equal(report.recipientStatus[0].status, "DOC_ERROR");
    assert.match(report.recipientStatus[0].reason, /scan\.tif/);
    const next = await client.post(`/${custNr}/fax/preview`, { recipients: [{ number: "+4989000002000" }], documents: [{ name: "ok.txt", data: b64("still here\n") }] });
    assert.equal(next.status, 200);
  });
});

/**
 * A job's fax images: a job sent through the API is rendered into one TIFF-F per rendering
 * variant, stored in fax_images (page count = the report's `pages`, page sizes and preflight per
 * page), and each recipient points at its image (recipients.fax_image_id); recipients whose cover
 * pages differ get images of their own. A document that cannot be rendered fails the job with
 * its document reason and leaves no image; render.timeout fails the job with render_failed; a
 * job rendered again replaces the images left behind.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { failureReason } from "../../src/errors/failure-reasons.ts";
import { readTiffPages } from "../../src/render/fax-image/tiff-structure.ts";
import type { PagePreflight } from "../../src/render/preflight/page-preflight.ts";
import { api, createTestLogin, eventually, startTestNode, tempDir, waitForFinalReport, type TestNode } from "../support/test-node.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";

const b64 = (text: string) => Buffer.from(text).toString("base64");
/** 70 lines: two A4 pages. */
const TWO_PAGE_DOC = {
  name: "letter.txt",
  data: b64(Array.from({ length: 70 }, (_, i) => `Zeile ${i + 1}: Sehr geehrte Damen und Herren, Grüße und 5 €.`).join("\n")),
};

async function completedJob(node: TestNode, jobId: string) {
  const db = node.node.context.store.db;
  return eventually(
    async () => {
      const job = await db.selectFrom("jobs").selectAll().where("id", "=", jobId).executeTakeFirstOrThrow();
      return job.state === "completed" ? job : undefined;
    },
    10_000,
    "the job to complete",
  );
}

function imagesOf(node: TestNode, jobId: string) {
  return node.node.context.store.db.selectFrom("fax_images").selectAll().where("job_id", "=", jobId).orderBy("variant").execute();
}

function recipientsOf(node: TestNode, jobId: string) {
  return node.node.context.store.db.selectFrom("recipients").select(["number", "fax_image_id"]).where("job_id", "=", jobId).orderBy("ordinal").execute();
}

for (const dialect of DIALECTS) describe(`${dialect}: a job's fax images`, () => {
  const store = withDialect(dialect);
  let node: TestNode;
  let client: ReturnType<typeof api>;
  let custNr: string;
  before(async () => {
    node = await startTestNode(store.overrides());
    const creds = await createTestLogin(node);
    custNr = creds.custNr;
    client = api(node.url, creds);
  });
  after(async () => {
    await node.stop();
  });

  it("are stored as a TIFF whose page count is the report's pages, with the page sizes and preflight of every page", async () => {
    const sent = await client.post(`/${custNr}/fax`, {
      recipients: [{ number: "+4989000002000" }],
      documents: [TWO_PAGE_DOC],
      renderingOptions: { coverpageTemplate: "coverpage-default.ftl.html", resolution: "LOW" },
    });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const jobId = sent.body.jobId as string;
    const report = await waitForFinalReport(client, custNr, jobId);
    assert.equal(report.recipientStatus[0].status, "OK");
    const job = await completedJob(node, jobId);

    const images = await imagesOf(node, jobId);
    assert.equal(images.length, 1);
    const image = images[0]!;
    const pages = readTiffPages(image.content);
    assert.equal(report.pages, 3, "a cover page and two text pages");
    assert.equal(pages.length, report.pages);
    assert.equal(job.pages, report.pages);
    assert.equal(image.pages, report.pages);
    assert.equal(image.id, `img_${jobId}_0`);
    assert.equal(image.variant, 0);
    assert.equal(image.format, "TIFF");
    assert.equal(image.size_bytes, image.content.byteLength);
    assert.deepEqual(JSON.parse(image.page_sizes), pages.map((p) => p.encodedBytes));
    assert.deepEqual(JSON.parse(job.page_sizes!), pages.map((p) => p.encodedBytes));
    const preflight = JSON.parse(image.preflight) as PagePreflight[];
    assert.equal(preflight.length, 3);
    assert.ok(preflight.every((page) => !page.blank && page.estimatedSeconds > 0 && Array.isArray(page.warnings)), image.preflight);
    assert.ok(pages.every((p) => p.width === 1728 && p.height === 1146 && p.yResolution === 98 && p.compression === 4));
    assert.deepEqual(await recipientsOf(node, jobId), [{ number: "+4989000002000", fax_image_id: image.id }]);
  });

  it("recipients with different cover pages get an image each; recipients that see the same pages share one", async () => {
    const sent = await client.post(`/${custNr}/fax`, {
      recipients: [
        { number: "+4989000002010", properties: [{ key: "ToName", value: "Anna" }] },
        { number: "+4989000002011", properties: [{ key: "ToName", value: "Bert" }] },
        { number: "+4989000002012", properties: [{ key: "ToName", value: "Anna" }, { key: "ToFaxNum", value: "+4989000002010" }] },
      ],
      documents: [TWO_PAGE_DOC],
      renderingOptions: { coverpageTemplate: "coverpage-default.ftl.html" },
    });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const jobId = sent.body.jobId as string;
    const report = await waitForFinalReport(client, custNr, jobId);
    assert.deepEqual(report.recipientStatus.map((r: { status: string }) => r.status), ["OK", "OK", "OK"]);
    await completedJob(node, jobId);

    const images = await imagesOf(node, jobId);
    assert.deepEqual(images.map((image) => [image.id, image.variant, image.pages]), [
      [`img_${jobId}_0`, 0, 3],
      [`img_${jobId}_1`, 1, 3],
    ]);
    assert.ok(!Buffer.from(images[0]!.content).equals(Buffer.from(images[1]!.content)), "the images differ");
    // The third recipient's cover page shows ToName Anna and the first recipient's number: the same pages as the first.
    assert.deepEqual((await recipientsOf(node, jobId)).map((r) => r.fax_image_id), [images[0]!.id, images[1]!.id, images[0]!.id]);
  });

  it("a document that cannot be rendered fails the job with its reason and leaves no image", async () => {
    const sent = await client.post(`/${custNr}/fax`, { recipients: [{ number: "+4989000002001" }], documents: [TWO_PAGE_DOC, { name: "scan.pdf", data: b64("%PDF-1.4\n") }] });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const jobId = sent.body.jobId as string;
    const report = await waitForFinalReport(client, custNr, jobId);
    const status = report.recipientStatus[0];
    assert.equal(status.status, "DOC_ERROR");
    assert.match(status.reason, new RegExp(`^${failureReason("document_unreadable").description.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: scan\\.pdf cannot be read as a PDF`));
    const job = await completedJob(node, jobId);
    assert.equal(job.failure_code, "document_unreadable");
    assert.deepEqual(await imagesOf(node, jobId), []);
    assert.deepEqual(await recipientsOf(node, jobId), [{ number: "+4989000002001", fax_image_id: null }]);
  });
});

for (const dialect of DIALECTS) describe(`${dialect}: render.timeout`, () => {
  const store = withDialect(dialect);
  let node: TestNode;
  before(async () => {
    node = await startTestNode({ ...store.overrides(), "render.timeout": "1ms" });
  });
  after(async () => {
    await node.stop();
  });

  it("a job whose images take longer fails with render_failed, a reason naming the limit, and no call", async () => {
    const creds = await createTestLogin(node);
    const client = api(node.url, creds);
    const sent = await client.post(`/${creds.custNr}/fax`, { recipients: [{ number: "+4989000002002" }], documents: [TWO_PAGE_DOC] });
    assert.equal(sent.status, 201);
    const jobId = sent.body.jobId as string;
    const report = await waitForFinalReport(client, creds.custNr, jobId);
    const status = report.recipientStatus[0];
    assert.equal(status.status, "DOC_ERROR");
    assert.equal(status.reason, `${failureReason("render_failed").description}: the fax image took longer to render than render.timeout (1ms) and was given up`);
    const job = await completedJob(node, jobId);
    assert.equal(job.failure_code, "render_failed");
    const db = node.node.context.store.db;
    assert.equal((await db.selectFrom("attempts").select("id").where("job_id", "=", jobId).execute()).length, 0);
    assert.deepEqual(await imagesOf(node, jobId), []);
  });
});

for (const dialect of DIALECTS) describe(`${dialect}: rendering a job again`, () => {
  const store = withDialect(dialect);
  it("replaces the images left behind instead of failing on them", async () => {
    const dir = tempDir();
    try {
      // An api-only node accepts the job and renders nothing.
      const intake = await startTestNode({ ...store.overrides(), "node.roles": "api", "node.id": "intake" }, dir.path);
      const creds = await createTestLogin(intake);
      const sent = await api(intake.url, creds).post(`/${creds.custNr}/fax`, { recipients: [{ number: "+4989000002003" }], documents: [TWO_PAGE_DOC] });
      assert.equal(sent.status, 201);
      const jobId = sent.body.jobId as string;
      // Two images of an earlier render, the second of a variant the new render does not have.
      for (const variant of [0, 1]) {
        await intake.node.context.store.db
          .insertInto("fax_images")
          .values({
            id: `img_${jobId}_${variant}`,
            job_id: jobId,
            variant,
            format: "TIFF",
            content: Buffer.from("left behind"),
            pages: 99,
            page_sizes: "[]",
            preflight: "[]",
            size_bytes: 11,
            created_at: 0,
          })
          .execute();
      }
      await intake.stop();

      const full = await startTestNode({ ...store.overrides(), "node.id": "full" }, dir.path);
      try {
        const client = api(full.url, creds);
        const report = await waitForFinalReport(client, creds.custNr, jobId);
        assert.equal(report.recipientStatus[0].status, "OK");
        const images = await imagesOf(full, jobId);
        assert.equal(images.length, 1, "the left-behind variant 1 is gone");
        const image = images[0]!;
        assert.equal(image.id, `img_${jobId}_0`);
        assert.equal(image.pages, 2);
        assert.equal(readTiffPages(image.content).length, report.pages);
        assert.equal(JSON.parse(image.page_sizes).length, 2);
        assert.equal(JSON.parse(image.preflight).length, 2);
        assert.ok(image.created_at > 0);
        assert.deepEqual((await recipientsOf(full, jobId)).map((r) => r.fax_image_id), [image.id]);
      } finally {
        await full.stop();
      }
    } finally {
      dir.remove();
    }
  });
});

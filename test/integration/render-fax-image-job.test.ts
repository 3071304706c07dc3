/**
 * A job's fax image: a job sent through the API is rendered into a TIFF-F stored in
 * job_fax_images, whose page count is the report's `pages` and whose page sizes are the job's
 * page_sizes; render.timeout fails the job with render_failed; a job rendered again replaces an
 * image row left behind.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { failureReason } from "../../src/errors/failure-reasons.ts";
import { readTiffPages } from "../../src/render/fax-image/tiff-structure.ts";
import { api, createTestLogin, eventually, startTestNode, tempDir, waitForFinalReport, type TestNode } from "../support/test-node.ts";

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
    5_000,
    "the job to complete",
  );
}

describe("a job's fax image", () => {
  let node: TestNode;
  let client: ReturnType<typeof api>;
  let custNr: string;
  before(async () => {
    node = await startTestNode();
    const creds = await createTestLogin(node);
    custNr = creds.custNr;
    client = api(node.url, creds);
  });
  after(async () => {
    await node.stop();
  });

  it("is stored as a TIFF whose page count is the report's pages and whose page sizes are the job's", async () => {
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

    const image = await node.node.context.store.db.selectFrom("job_fax_images").selectAll().where("job_id", "=", jobId).executeTakeFirstOrThrow();
    const pages = readTiffPages(image.content);
    assert.equal(report.pages, 3, "a cover page and two text pages");
    assert.equal(pages.length, report.pages);
    assert.equal(job.pages, report.pages);
    assert.equal(image.pages, report.pages);
    assert.equal(image.format, "TIFF");
    assert.equal(image.size_bytes, image.content.byteLength);
    assert.deepEqual(JSON.parse(job.page_sizes!), pages.map((p) => p.encodedBytes));
    assert.ok(pages.every((p) => p.width === 1728 && p.height === 1146 && p.yResolution === 98 && p.compression === 4));
  });

  it("a document that cannot be rendered leaves no image", async () => {
    const sent = await client.post(`/${custNr}/fax`, { recipients: [{ number: "+4989000002001" }], documents: [{ name: "scan.pdf", data: b64("%PDF-1.4\n") }] });
    assert.equal(sent.status, 201);
    const jobId = sent.body.jobId as string;
    await waitForFinalReport(client, custNr, jobId);
    await completedJob(node, jobId);
    assert.equal(await node.node.context.store.db.selectFrom("job_fax_images").select("job_id").where("job_id", "=", jobId).executeTakeFirst(), undefined);
  });
});

describe("render.timeout", () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({ "render.timeout": "1ms" });
  });
  after(async () => {
    await node.stop();
  });

  it("a job whose image takes longer fails with render_failed, a reason naming the limit, and no call", async () => {
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
    assert.equal(await db.selectFrom("job_fax_images").select("job_id").where("job_id", "=", jobId).executeTakeFirst(), undefined);
  });
});

describe("rendering a job again", () => {
  it("replaces an image row left behind instead of failing on it", async () => {
    const dir = tempDir();
    try {
      // An api-only node accepts the job and renders nothing.
      const intake = await startTestNode({ "node.roles": "api", "node.id": "intake" }, dir.path);
      const creds = await createTestLogin(intake);
      const sent = await api(intake.url, creds).post(`/${creds.custNr}/fax`, { recipients: [{ number: "+4989000002003" }], documents: [TWO_PAGE_DOC] });
      assert.equal(sent.status, 201);
      const jobId = sent.body.jobId as string;
      await intake.node.context.store.db
        .insertInto("job_fax_images")
        .values({ job_id: jobId, format: "TIFF", content: Buffer.from("left behind"), pages: 99, size_bytes: 11, created_at: 0 })
        .execute();
      await intake.stop();

      const full = await startTestNode({ "node.id": "full" }, dir.path);
      try {
        const client = api(full.url, creds);
        const report = await waitForFinalReport(client, creds.custNr, jobId);
        assert.equal(report.recipientStatus[0].status, "OK");
        const image = await full.node.context.store.db.selectFrom("job_fax_images").selectAll().where("job_id", "=", jobId).executeTakeFirstOrThrow();
        assert.equal(image.pages, 2);
        assert.equal(readTiffPages(image.content).length, report.pages);
        assert.ok(image.created_at > 0);
      } finally {
        await full.stop();
      }
    } finally {
      dir.remove();
    }
  });
});

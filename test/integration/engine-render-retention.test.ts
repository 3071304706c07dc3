/**
 * Render failures end a job's recipients with DOC_ERROR; retention purges documents right
 * after completion and reports after their customer's retention period.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { failureReason } from "../../src/errors/failure-reasons.ts";
import { purgeOnce } from "../../src/roles/retention-role.ts";
import { api, createTestLogin, eventually, startTestNode, TEXT_DOC, waitForFinalReport, type TestNode } from "../support/test-node.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";

const DAY_MS = 86_400_000;
const b64 = (bytes: Buffer | string) => Buffer.from(bytes).toString("base64");

for (const dialect of DIALECTS) describe(`${dialect}: engine: render failures`, () => {
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

  async function failedJob(documents: unknown[], recipients = [{ number: "+4989000001000" }, { number: "+4989000001001" }]) {
    const sent = await client.post(`/${custNr}/fax`, { recipients, documents });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const jobId = sent.body.jobId as string;
    const report = await waitForFinalReport(client, custNr, jobId);
    const db = node.node.context.store.db;
    const job = await eventually(
      async () => {
        const j = await db.selectFrom("jobs").selectAll().where("id", "=", jobId).executeTakeFirstOrThrow();
        return j.state === "completed" ? j : undefined;
      },
      5_000,
      "the job to complete",
    );
    const attempts = await db.selectFrom("attempts").select("id").where("job_id", "=", jobId).execute();
    const recipients_ = await db.selectFrom("recipients").selectAll().where("job_id", "=", jobId).execute();
    return { report, job, attempts, recipients: recipients_ };
  }

  it("a truncated PDF: every recipient ends with DOC_ERROR and a reason that names the document; nothing is dialled", async () => {
    const { report, job, attempts, recipients } = await failedJob([{ name: "invoice.pdf", data: b64("%PDF-1.4\n%\xE2\xE3\xCF\xD3\n1 0 obj\n") }]);
    assert.equal(report.pages, 0);
    assert.equal(report.recipientStatus.length, 2);
    for (const status of report.recipientStatus) {
      assert.equal(status.status, "DOC_ERROR");
      assert.match(status.reason, /invoice\.pdf cannot be read as a PDF/);
      assert.ok(status.reason.startsWith(failureReason("document_unreadable").description));
      assert.equal(status.sentTs, undefined);
      assert.equal(status.sentToNumber, undefined);
      assert.equal(status.durationInSecs, 0);
    }
    assert.equal(attempts.length, 0);
    assert.ok(recipients.every((r) => r.state === "failed" && r.reason_code === "document_unreadable" && r.attempt_count === 0));
    assert.equal(job.failure_code, "document_unreadable");
    assert.match(job.failure_detail ?? "", /PDF/);
    assert.equal(job.pages, null);
  });

  it("text that is not UTF-8 although declared UTF-8: DOC_ERROR (document_unreadable)", async () => {
    const bad = Buffer.from([0x48, 0x61, 0x6c, 0x6c, 0x6f, 0x20, 0xff, 0xfe, 0x41, 0x0a]);
    const { report, job, attempts } = await failedJob([{ name: "letter.txt", charset: "UTF-8", data: b64(bad) }], [{ number: "+4989000001002" }]);
    const status = report.recipientStatus[0];
    assert.equal(status.status, "DOC_ERROR");
    assert.ok(status.reason.startsWith(failureReason("document_unreadable").description), status.reason);
    assert.match(status.reason, /letter\.txt/);
    assert.equal(job.failure_code, "document_unreadable");
    assert.equal(attempts.length, 0);
  });

  it("one bad document fails the whole job even after a good one", async () => {
    const { report, job } = await failedJob([TEXT_DOC, { name: "scan.tif", data: b64("II*\0") }], [{ number: "+4989000001003" }]);
    assert.equal(report.recipientStatus[0].status, "DOC_ERROR");
    assert.match(report.recipientStatus[0].reason, /scan\.tif/);
    assert.equal(job.failure_code, "document_unreadable");
  });
});

for (const dialect of DIALECTS) describe(`${dialect}: engine: retention`, () => {
  const store = withDialect(dialect);
  let node: TestNode;
  before(async () => {
    // No retention role: purgeOnce is driven by the test. batchSize 1 makes it loop over batches.
    node = await startTestNode({ ...store.overrides(), "node.roles": "api,scheduler,sender", "retention.defaultDays": 1, "retention.batchSize": 1 });
  });
  after(async () => {
    await node.stop();
  });

  it("purges completed jobs' documents, then reports past their customer's retention period", async () => {
    const ctx = node.node.context;
    const db = ctx.store.db;
    const plain = await createTestLogin(node, { custNr: "11111AA", login: "plain" });
    const keeper = await createTestLogin(node, { custNr: "22222BB", login: "keeper", retentionDays: 2 });
    const jobs: Record<string, string> = {};
    for (const [name, creds] of [
      ["plainOld", plain],
      ["plainNew", plain],
      ["keeperMid", keeper],
      ["keeperOld", keeper],
    ] as const) {
      const client = api(node.url, creds);
      const sent = await client.post(`/${creds.custNr}/fax`, { recipients: [{ number: "+4900000008" }], documents: [TEXT_DOC] });
      assert.equal(sent.status, 201);
      jobs[name] = sent.body.jobId;
      await waitForFinalReport(client, creds.custNr, sent.body.jobId);
    }
    const ids = Object.values(jobs);
    await eventually(
      async () => {
        const open = await db.selectFrom("jobs").select("id").where("id", "in", ids).where("state", "!=", "completed").execute();
        return open.length === 0 ? true : undefined;
      },
      5_000,
      "all jobs to complete",
    );
    assert.equal((await db.selectFrom("job_documents").select("job_id").where("job_id", "in", ids).execute()).length, 4);

    // 1. Documents go as soon as the job is complete; the reports stay.
    const first = await purgeOnce(ctx);
    assert.deepEqual(first, { documents: 4, reports: 0, notifications: 0, receivedFaxes: 0 });
    assert.equal((await db.selectFrom("job_documents").select("job_id").where("job_id", "in", ids).execute()).length, 0);
    const purgedAt = await db.selectFrom("jobs").select(["id", "documents_purged_at"]).where("id", "in", ids).execute();
    assert.ok(purgedAt.every((j) => j.documents_purged_at !== null && j.documents_purged_at <= Date.now()));
    assert.deepEqual(await purgeOnce(ctx), { documents: 0, reports: 0, notifications: 0, receivedFaxes: 0 }, "nothing twice");

    // 2. Reports: the default period (1 day) and the customer's own (2 days).
    const now = Date.now();
    const completedAt: Record<string, number> = {
      plainOld: now - 1.5 * DAY_MS, // past 1 day: deleted
      plainNew: now - 0.5 * DAY_MS, // within 1 day: kept
      keeperMid: now - 1.5 * DAY_MS, // within the customer's 2 days: kept
      keeperOld: now - 2.5 * DAY_MS, // past 2 days: deleted
    };
    for (const [name, at] of Object.entries(completedAt)) {
      await db.updateTable("jobs").set({ completed_at: at }).where("id", "=", jobs[name]!).execute();
    }
    const second = await purgeOnce(ctx);
    assert.deepEqual(second, { documents: 0, reports: 2, notifications: 0, receivedFaxes: 0 });
    const left = await db.selectFrom("jobs").select("id").where("id", "in", ids).execute();
    assert.deepEqual(left.map((j) => j.id).sort(), [jobs.plainNew!, jobs.keeperMid!].sort());
    for (const gone of [jobs.plainOld!, jobs.keeperOld!]) {
      assert.equal((await db.selectFrom("recipients").select("id").where("job_id", "=", gone).execute()).length, 0, "recipients go with the job");
      assert.equal((await db.selectFrom("attempts").select("id").where("job_id", "=", gone).execute()).length, 0, "attempts go with the job");
    }
    assert.equal((await db.selectFrom("attempts").select("id").where("job_id", "=", jobs.plainNew!).execute()).length, 3, "kept jobs keep their attempts");
    const plainClient = api(node.url, plain);
    assert.equal((await plainClient.get(`/${plain.custNr}/fax/reports/${jobs.plainOld}`)).status, 404);
    assert.equal((await plainClient.get(`/${plain.custNr}/fax/reports/${jobs.plainNew}`)).status, 200);
    assert.deepEqual(await purgeOnce(ctx), { documents: 0, reports: 0, notifications: 0, receivedFaxes: 0 });
  });

  it("never purges an unfinished job", async () => {
    const ctx = node.node.context;
    const db = ctx.store.db;
    const creds = await createTestLogin(node, { custNr: "33333CC", login: "waiter" });
    const client = api(node.url, creds);
    const sent = await client.post(`/${creds.custNr}/fax`, {
      recipients: [{ number: "+4989000001100" }],
      documents: [TEXT_DOC],
      meta: { jobValid: { start: new Date(Date.now() + 3_600_000).toISOString() } },
    });
    assert.equal(sent.status, 201);
    // Old enough by creation, but not completed.
    await db.updateTable("jobs").set({ created_at: Date.now() - 10 * DAY_MS }).where("id", "=", sent.body.jobId).execute();
    await purgeOnce(ctx);
    const job = await db.selectFrom("jobs").selectAll().where("id", "=", sent.body.jobId).executeTakeFirstOrThrow();
    assert.notEqual(job.state, "completed");
    assert.equal(job.documents_purged_at, null);
    assert.equal((await db.selectFrom("job_documents").select("job_id").where("job_id", "=", sent.body.jobId).execute()).length, 1);
  });
});

for (const dialect of DIALECTS) describe(`${dialect}: engine: the retention role`, () => {
  const store = withDialect(dialect);
  let node: TestNode;
  before(async () => {
    node = await startTestNode(store.overrides());
  });
  after(async () => {
    await node.stop();
  });

  it("deletes a completed job's documents by itself, shortly after completion", async () => {
    const creds = await createTestLogin(node);
    const client = api(node.url, creds);
    const sent = await client.post(`/${creds.custNr}/fax`, { recipients: [{ number: "+4989000001200" }], documents: [TEXT_DOC] });
    assert.equal(sent.status, 201);
    await waitForFinalReport(client, creds.custNr, sent.body.jobId);
    const db = node.node.context.store.db;
    const job = await eventually(
      async () => {
        const j = await db.selectFrom("jobs").selectAll().where("id", "=", sent.body.jobId).executeTakeFirstOrThrow();
        return j.documents_purged_at !== null ? j : undefined;
      },
      5_000,
      "documents_purged_at to be set",
    );
    assert.ok(job.documents_purged_at! >= job.completed_at!);
    assert.equal((await db.selectFrom("job_documents").select("job_id").where("job_id", "=", sent.body.jobId).execute()).length, 0);
    // The report itself stays readable.
    const report = await client.get(`/${creds.custNr}/fax/reports/${sent.body.jobId}`);
    assert.equal(report.status, 200);
    assert.equal(report.body.recipientStatus[0].status, "OK");
  });
});

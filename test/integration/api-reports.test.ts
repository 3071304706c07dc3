/**
 * The report operations over HTTP against a real in-process node: single GET (also of an
 * unfinished job), the list of completed reports (oldest first, capped at 1000), bulk GET and
 * DELETE, single DELETE, delete-oldest, and the echoed fields of a report.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { seedCompletedJobs } from "../support/seed-completed-jobs.ts";
import { api, createTestLogin, startTestNode, TEXT_DOC, waitForFinalReport, type TestNode } from "../support/test-node.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";

const NUMBER = "+4989000000000";
const UNKNOWN_ID = "FJ0000000000UNKNOWN000";

type Client = ReturnType<typeof api>;

for (const dialect of DIALECTS) describe(`${dialect}: api: reports`, () => {
  const store = withDialect(dialect);
  let node: TestNode;
  let loginNo = 0;

  const newAccount = async () => {
    loginNo += 1;
    const creds = await createTestLogin(node, { custNr: "99999TE", login: `reports-${loginNo}`, password: `secret-pass-${loginNo}` });
    return { creds, client: api(node.url, creds), custNr: creds.custNr };
  };

  const sendJob = async (client: Client, custNr: string, body: Record<string, unknown> = {}) => {
    const res = await client.post(`/${custNr}/fax`, { recipients: [{ number: NUMBER }], documents: [TEXT_DOC], ...body });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.jobId as string;
  };

  /** Sends a job and waits until it is completed (so completion order = call order). */
  const sendAndFinish = async (client: Client, custNr: string, body: Record<string, unknown> = {}) => {
    const jobId = await sendJob(client, custNr, body);
    return waitForFinalReport(client, custNr, jobId);
  };

  /** A job that stays pending for an hour: it becomes valid only then. */
  const sendPending = (client: Client, custNr: string) =>
    sendJob(client, custNr, { meta: { jobValid: { start: new Date(Date.now() + 3_600_000).toISOString() } } });

  /**
   * Inserts `count` completed jobs of `login` straight into the store, completed in the past
   * (1 ms apart, the first the oldest); returns their ids in completion order.
   */
  const insertCompletedJobs = (login: string, custNr: string, count: number, firstCompletedAt: number, datacenter = "DE1"): Promise<string[]> =>
    seedCompletedJobs(node.node.context.store.db, { custNr, login, datacenter, count, firstCompletedAt, customerDefinedId: (i) => `bulk-${i}` });

  /** One account for tests that create no state. */
  let sharedAccount: Awaited<ReturnType<typeof newAccount>> | undefined;
  const shared = async () => (sharedAccount ??= await newAccount());

  before(async () => {
    node = await startTestNode(store.overrides());
  });
  after(async () => {
    await node.stop();
  });

  describe("GET /{custNr}/fax/reports/{jobId}", () => {
    it("an unfinished job answers 200 with status PENDING and no sentTs, before and after rendering", async () => {
      const { client, custNr } = await newAccount();
      const jobId = await sendPending(client, custNr);
      const first = await client.get(`/${custNr}/fax/reports/${jobId}`);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.equal(first.body.recipientStatus[0].status, "PENDING");
      assert.ok(first.body.pages === 0 || first.body.pages === 1, "pages is 0 until rendered, then the page count");
      // Whether or not the job renders before it becomes valid, it stays PENDING for an hour.
      await new Promise((r) => setTimeout(r, 300));
      const res = await client.get(`/${custNr}/fax/reports/${jobId}`);
      assert.ok(res.body.pages === 0 || res.body.pages === 1);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.jobId, jobId);
      assert.equal(res.body.recipientStatus.length, 1);
      const r = res.body.recipientStatus[0];
      assert.equal(r.status, "PENDING");
      assert.equal(typeof r.reason, "string");
      assert.ok(r.reason.length > 0);
      assert.equal(r.number, NUMBER);
      assert.equal(r.durationInSecs, 0);
      assert.equal("sentTs" in r, false, "no sentTs before a call");
      assert.equal("sentToNumber" in r, false);
      assert.equal("remoteCsid" in r, false);
      assert.equal(r.alternativeNumbers, null);
      assert.equal(r.properties, null);
      assert.equal("reference" in res.body, false, "no reference when the job has none");
    });

    it("a completed job has the full §4.1 shape", async () => {
      const { client, custNr } = await newAccount();
      const report = await sendAndFinish(client, custNr);
      assert.deepEqual(Object.keys(report).sort(), ["jobId", "pages", "recipientStatus"]);
      const r = report.recipientStatus[0];
      assert.deepEqual(Object.keys(r).sort(), [
        "alternativeNumbers",
        "durationInSecs",
        "number",
        "properties",
        "reason",
        "remoteCsid",
        "sentToNumber",
        "sentTs",
        "status",
      ]);
      assert.equal(r.status, "OK");
      assert.equal(r.reason, "OK");
      assert.match(r.sentTs, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
      assert.ok(Number.isInteger(r.durationInSecs) && r.durationInSecs > 0);
      assert.equal(r.sentToNumber, "004989000000000");
      assert.equal(typeof r.remoteCsid, "string");
    });

    it("an unknown job id answers 404 report_not_found", async () => {
      const { client, custNr } = await newAccount();
      const res = await client.get(`/${custNr}/fax/reports/${UNKNOWN_ID}`);
      assert.equal(res.status, 404);
      assert.equal(res.body.code, 404);
      assert.equal(res.body.error, "report_not_found");
      assert.match(res.body.message, new RegExp(UNKNOWN_ID));
    });
  });

  describe("echoed fields and page counts", () => {
    it("echoes reference, alternativeNumbers and properties (null when absent)", async () => {
      const { client, custNr } = await newAccount();
      const properties = [
        { key: "ToName", value: "Jane" },
        { key: "FromName", value: "Sales" },
      ];
      const report = await sendAndFinish(client, custNr, {
        reference: { customerDefinedId: "cdi-1", billingCode: "bc-1", billingInfo: "bi-1" },
        recipients: [
          { number: NUMBER, alternativeNumbers: ["+4989000000001", "0049 89 000000002"], properties },
          { number: "+4989000000003" },
          { number: "+4989000000004", alternativeNumbers: null, properties: [] },
        ],
      });
      assert.deepEqual(report.reference, { customerDefinedId: "cdi-1", billingCode: "bc-1", billingInfo: "bi-1" });
      assert.equal(report.recipientStatus.length, 3);
      const [a, b, c] = report.recipientStatus;
      assert.equal(a.number, NUMBER);
      assert.deepEqual(a.alternativeNumbers, ["+4989000000001", "0049 89 000000002"]);
      assert.deepEqual(a.properties, properties);
      assert.equal(b.number, "+4989000000003");
      assert.equal(b.alternativeNumbers, null);
      assert.equal(b.properties, null);
      assert.equal(c.alternativeNumbers, null);
      assert.deepEqual(c.properties, []);
      for (const r of report.recipientStatus) assert.equal(r.status, "OK");
    });

    it("echoes a partial reference with only the fields given", async () => {
      const { client, custNr } = await newAccount();
      const report = await sendAndFinish(client, custNr, { reference: { customerDefinedId: "only-this", billingCode: null } });
      assert.deepEqual(report.reference, { customerDefinedId: "only-this" });
    });

    it("pages is the real page count: 70 lines are 2 pages on A4, 62 lines 1, 60 lines on LETTER 2", async () => {
      const { client, custNr } = await newAccount();
      const text = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => `Line ${i + 1}`).join("\n") + "\n").toString("base64");
      const seventy = await sendAndFinish(client, custNr, { documents: [{ name: "seventy.txt", data: text(70) }] });
      assert.equal(seventy.pages, 2);
      const sixtyTwo = await sendAndFinish(client, custNr, { documents: [{ name: "sixty-two.txt", data: text(62) }] });
      assert.equal(sixtyTwo.pages, 1);
      const letter = await sendAndFinish(client, custNr, {
        documents: [{ name: "sixty.txt", data: text(60) }],
        renderingOptions: { paperFormat: "LETTER" },
      });
      assert.equal(letter.pages, 2);
      const two = await sendAndFinish(client, custNr, { documents: [{ name: "a.txt", data: text(70) }, { name: "b.txt", data: text(1) }] });
      assert.equal(two.pages, 3);
      const withCover = await sendAndFinish(client, custNr, {
        documents: [{ name: "a.txt", data: text(70) }],
        renderingOptions: { coverpageTemplate: "coverpage-default.ftl.html" },
      });
      assert.equal(withCover.pages, 3, "the cover page counts");
    });
  });

  describe("GET /{custNr}/fax/reports", () => {
    it("holds completed jobs only, oldest first", async () => {
      const { client, custNr } = await newAccount();
      const empty = await client.get(`/${custNr}/fax/reports`);
      assert.equal(empty.status, 200);
      assert.deepEqual(empty.body, { reports: [] });

      const pending = await sendPending(client, custNr);
      const first = await sendAndFinish(client, custNr, { reference: { customerDefinedId: "first" } });
      const second = await sendAndFinish(client, custNr, { reference: { customerDefinedId: "second" } });
      const third = await sendAndFinish(client, custNr, { reference: { customerDefinedId: "third" } });
      const list = await client.get(`/${custNr}/fax/reports`);
      assert.equal(list.status, 200);
      assert.deepEqual(Object.keys(list.body), ["reports"]);
      assert.deepEqual(
        list.body.reports.map((r: { jobId: string }) => r.jobId),
        [first.jobId, second.jobId, third.jobId],
      );
      assert.ok(!list.body.reports.some((r: { jobId: string }) => r.jobId === pending));
      assert.deepEqual(list.body.reports[1], second, "list entries equal the single report");
    });

    it("is capped at the oldest 1000; DELETE oldest removes exactly those and leaves newer ones", async () => {
      const { creds, client, custNr } = await newAccount();
      const bulkIds = await insertCompletedJobs(creds.login, custNr, 1003, Date.now() - 3_600_000);
      const pending = await sendPending(client, custNr);
      const newest = await sendAndFinish(client, custNr);

      const list = await client.get(`/${custNr}/fax/reports`);
      assert.equal(list.status, 200);
      assert.equal(list.body.reports.length, 1000);
      assert.deepEqual(
        list.body.reports.map((r: { jobId: string }) => r.jobId),
        bulkIds.slice(0, 1000),
      );
      assert.equal(list.body.reports[0].reference.customerDefinedId, "bulk-0");

      const deleted = await client.delete(`/${custNr}/fax/reports`);
      assert.equal(deleted.status, 200);
      assert.deepEqual(Object.keys(deleted.body), ["reports"]);
      assert.equal(deleted.body.reports.length, 1000);
      assert.deepEqual(
        deleted.body.reports,
        bulkIds.slice(0, 1000).map((jobId) => ({ jobId, deleted: true })),
      );

      const rest = await client.get(`/${custNr}/fax/reports`);
      assert.deepEqual(
        rest.body.reports.map((r: { jobId: string }) => r.jobId),
        [...bulkIds.slice(1000), newest.jobId],
      );
      const gone = await client.get(`/${custNr}/fax/reports/${bulkIds[0]}`);
      assert.equal(gone.status, 404);
      const stillPending = await client.get(`/${custNr}/fax/reports/${pending}`);
      assert.equal(stillPending.status, 200, "unfinished jobs are never deleted");
      assert.equal(stillPending.body.recipientStatus[0].status, "PENDING");

      const second = await client.delete(`/${custNr}/fax/reports`);
      assert.deepEqual(
        second.body.reports,
        [...bulkIds.slice(1000), newest.jobId].map((jobId) => ({ jobId, deleted: true })),
      );
      const third = await client.delete(`/${custNr}/fax/reports`);
      assert.deepEqual(third.body, { reports: [] });
      assert.deepEqual((await client.get(`/${custNr}/fax/reports`)).body, { reports: [] });
    });
  });

  describe("data-center scope", () => {
    it("jobs of another data center (DE2) are invisible on this DE1 node, as SDKs that query each DC expect", async () => {
      const { creds, client, custNr } = await newAccount();
      const [de2Job] = await insertCompletedJobs(creds.login, custNr, 1, Date.now() - 60_000, "DE2");
      const own = await sendAndFinish(client, custNr);
      assert.equal((await client.get(`/${custNr}/fax/reports/${de2Job}`)).status, 404);
      assert.deepEqual((await client.get(`/${custNr}/fax/reports`)).body.reports.map((r: { jobId: string }) => r.jobId), [own.jobId]);
      const bulk = await client.post(`/${custNr}/fax/reports`, { action: "GET", jobIds: [de2Job, own.jobId] });
      assert.deepEqual(bulk.body.reports.map((r: { jobId: string }) => r.jobId), [own.jobId]);
      const del = await client.post(`/${custNr}/fax/reports`, { action: "DELETE", jobIds: [de2Job] });
      assert.deepEqual(del.body, { reports: [{ jobId: de2Job, deleted: false, reason: "NOT_FOUND" }] });
      assert.equal((await client.delete(`/${custNr}/fax/reports/${de2Job}`)).status, 404);
      const oldest = await client.delete(`/${custNr}/fax/reports`);
      assert.deepEqual(oldest.body, { reports: [{ jobId: own.jobId, deleted: true }] });
      const stillThere = await node.node.context.store.db.selectFrom("jobs").select("id").where("id", "=", de2Job!).execute();
      assert.equal(stillThere.length, 1, "the DE2 job was not touched");
    });
  });

  describe("DELETE /{custNr}/fax/reports/{jobId}", () => {
    it("deletes a completed report: {jobId, deleted: true}, then GET answers 404", async () => {
      const { client, custNr } = await newAccount();
      const report = await sendAndFinish(client, custNr);
      const del = await client.delete(`/${custNr}/fax/reports/${report.jobId}`);
      assert.equal(del.status, 200);
      assert.deepEqual(del.body, { jobId: report.jobId, deleted: true });
      const get = await client.get(`/${custNr}/fax/reports/${report.jobId}`);
      assert.equal(get.status, 404);
      assert.equal(get.body.error, "report_not_found");
      const again = await client.delete(`/${custNr}/fax/reports/${report.jobId}`);
      assert.equal(again.status, 404);
      assert.deepEqual((await client.get(`/${custNr}/fax/reports`)).body, { reports: [] });
    });

    it("an unknown job answers 404 with the error and the JobDeleteReport fields", async () => {
      const { client, custNr } = await newAccount();
      const res = await client.delete(`/${custNr}/fax/reports/${UNKNOWN_ID}`);
      assert.equal(res.status, 404);
      assert.equal(res.body.code, 404);
      assert.equal(res.body.error, "report_not_found");
      assert.match(res.body.message, new RegExp(UNKNOWN_ID));
      assert.equal(res.body.jobId, UNKNOWN_ID);
      assert.equal(res.body.deleted, false);
      assert.equal(res.body.reason, "NOT_FOUND");
    });

    it("an unfinished job cannot be deleted (404) and stays readable", async () => {
      const { client, custNr } = await newAccount();
      const jobId = await sendPending(client, custNr);
      const res = await client.delete(`/${custNr}/fax/reports/${jobId}`);
      assert.equal(res.status, 404);
      assert.equal(res.body.deleted, false);
      const get = await client.get(`/${custNr}/fax/reports/${jobId}`);
      assert.equal(get.status, 200);
    });
  });

  describe("POST /{custNr}/fax/reports (bulk)", () => {
    it("GET returns the known ids only, in request order; lowercase action works", async () => {
      const { client, custNr } = await newAccount();
      const a = await sendAndFinish(client, custNr, { reference: { customerDefinedId: "a" } });
      const b = await sendAndFinish(client, custNr, { reference: { customerDefinedId: "b" } });
      const pending = await sendPending(client, custNr);
      for (const action of ["GET", "get", "Get"]) {
        const res = await client.post(`/${custNr}/fax/reports`, { action, jobIds: [b.jobId, UNKNOWN_ID, pending, a.jobId] });
        assert.equal(res.status, 200, `${action}: ${JSON.stringify(res.body)}`);
        assert.deepEqual(Object.keys(res.body), ["reports"]);
        assert.deepEqual(
          res.body.reports.map((r: { jobId: string }) => r.jobId),
          [b.jobId, pending, a.jobId],
        );
        assert.deepEqual(res.body.reports[0], b, "bulk GET items equal the single report");
        assert.equal(res.body.reports[1].recipientStatus[0].status, "PENDING");
      }
      const none = await client.post(`/${custNr}/fax/reports`, { action: "GET", jobIds: [UNKNOWN_ID] });
      assert.equal(none.status, 200);
      assert.deepEqual(none.body, { reports: [] });
      const emptyList = await client.post(`/${custNr}/fax/reports`, { action: "GET", jobIds: [] });
      assert.deepEqual(emptyList.body, { reports: [] });
    });

    it("DELETE returns one entry per requested id (NOT_FOUND for unknown and unfinished), in request order", async () => {
      const { client, custNr } = await newAccount();
      const a = await sendAndFinish(client, custNr);
      const b = await sendAndFinish(client, custNr);
      const c = await sendAndFinish(client, custNr);
      const pending = await sendPending(client, custNr);
      const res = await client.post(`/${custNr}/fax/reports`, { action: "delete", jobIds: [c.jobId, UNKNOWN_ID, a.jobId, pending] });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body, {
        reports: [
          { jobId: c.jobId, deleted: true },
          { jobId: UNKNOWN_ID, deleted: false, reason: "NOT_FOUND" },
          { jobId: a.jobId, deleted: true },
          { jobId: pending, deleted: false, reason: "NOT_FOUND" },
        ],
      });
      const list = await client.get(`/${custNr}/fax/reports`);
      assert.deepEqual(list.body.reports.map((r: { jobId: string }) => r.jobId), [b.jobId]);
      const again = await client.post(`/${custNr}/fax/reports`, { action: "DELETE", jobIds: [a.jobId] });
      assert.deepEqual(again.body, { reports: [{ jobId: a.jobId, deleted: false, reason: "NOT_FOUND" }] });
    });

    it('action "PATCH" → 400 bulk_action_invalid', async () => {
      const { client, custNr } = await shared();
      const res = await client.post(`/${custNr}/fax/reports`, { action: "PATCH", jobIds: [UNKNOWN_ID] });
      assert.equal(res.status, 400);
      assert.equal(res.body.code, 400);
      assert.equal(res.body.error, "bulk_action_invalid");
      assert.match(res.body.message, /PATCH/);
      assert.match(res.body.message, /GET/);
      assert.match(res.body.message, /DELETE/);
    });

    it("1001 jobIds → 400 too_many_job_ids; 1000 are fine", async () => {
      const { client, custNr } = await shared();
      const ids = (n: number) => Array.from({ length: n }, (_, i) => `FJ${String(i).padStart(20, "0")}`);
      const res = await client.post(`/${custNr}/fax/reports`, { action: "GET", jobIds: ids(1001) });
      assert.equal(res.status, 400);
      assert.equal(res.body.error, "too_many_job_ids");
      assert.match(res.body.message, /jobIds/);
      assert.match(res.body.message, /1000/);
      const del = await client.post(`/${custNr}/fax/reports`, { action: "DELETE", jobIds: ids(1001) });
      assert.equal(del.status, 400);
      assert.equal(del.body.error, "too_many_job_ids");
      const ok = await client.post(`/${custNr}/fax/reports`, { action: "DELETE", jobIds: ids(1000) });
      assert.equal(ok.status, 200);
      assert.equal(ok.body.reports.length, 1000);
      assert.ok(ok.body.reports.every((r: { deleted: boolean; reason: string }) => !r.deleted && r.reason === "NOT_FOUND"));
    });

    it("a malformed bulk body → 400 naming the field", async () => {
      const { client, custNr } = await shared();
      const noIds = await client.post(`/${custNr}/fax/reports`, { action: "GET" });
      assert.equal(noIds.status, 400);
      assert.equal(noIds.body.error, "invalid_request");
      assert.match(noIds.body.message, /jobIds/);
      const noAction = await client.post(`/${custNr}/fax/reports`, { jobIds: [] });
      assert.equal(noAction.status, 400);
      assert.match(noAction.body.message, /action/);
      const badJson = await client.post(`/${custNr}/fax/reports`, "{");
      assert.equal(badJson.status, 400);
      assert.equal(badJson.body.error, "invalid_json");
    });
  });
});

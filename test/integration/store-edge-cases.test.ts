/**
 * Inputs that the two store dialects would take differently, through the whole node:
 *  - a NUL character in a request (PostgreSQL's text cannot hold it; SQLite's can): 400 on
 *    both, nothing stored;
 *  - a job of more recipients than PostgreSQL's one intake statement takes: stored and sent
 *    (test/integration/store-large-intake.test.ts stores one beyond the parameter limit);
 *  - a push receiver whose answer carries a NUL: the try is recorded, the push delivered once.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { api, createTestLogin, eventually, startTestNode, TEXT_DOC, waitForFinalReport, type TestNode } from "../support/test-node.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";
import { PushReceiver } from "../support/push-receiver.ts";

for (const dialect of DIALECTS) describe(`${dialect}: store edge cases through the API`, () => {
  const store = withDialect(dialect);
  let node: TestNode;
  let creds: { custNr: string; login: string; password: string };
  const receiver = new PushReceiver();
  before(async () => {
    await receiver.start();
    node = await startTestNode({ ...store.overrides(), "jobs.maxRecipients": 1500, "push.allowTargets": "127.0.0.1", "push.retrySchedule": "50ms,50ms" });
    creds = await createTestLogin(node);
  });
  after(async () => {
    await node.stop();
    await receiver.stop();
  });

  it("refuses a NUL character in any string of a request with 400, and stores nothing", async () => {
    const client = api(node.url, creds);
    const body = JSON.stringify({ recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC], reference: { customerDefinedId: "order\u0000 4711" } });
    assert.match(body, /\\u0000/);
    const res = await client.post(`/${creds.custNr}/fax`, body);
    assert.equal(res.status, 400);
    assert.equal(res.body.error, "invalid_request");
    assert.match(res.body.message, /U\+0000 \(NUL/);
    // A literal backslash before "u0000" is not a NUL.
    const escaped = await client.post(`/${creds.custNr}/fax`, { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC], reference: { customerDefinedId: "C:\\u0000" } });
    assert.equal(escaped.status, 201, JSON.stringify(escaped.body));
    const jobs = await node.node.context.store.db.selectFrom("jobs").select("customer_defined_id").execute();
    assert.deepEqual(jobs.map((j) => j.customer_defined_id), ["C:\\u0000"]);
  });

  it("stores and sends a job of 1 050 recipients (more than PostgreSQL's one intake statement takes)", { timeout: 120_000 }, async () => {
    const client = api(node.url, creds);
    const recipients = Array.from({ length: 1050 }, (_, i) => ({ number: `+4940${String(i).padStart(7, "0")}` }));
    const res = await client.post(`/${creds.custNr}/fax`, { recipients, documents: [TEXT_DOC] });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const rows = await node.node.context.store.db.selectFrom("recipients").select((eb) => eb.fn.countAll().as("n")).where("job_id", "=", res.body.jobId).executeTakeFirstOrThrow();
    assert.equal(Number(rows.n), 1050);
    const report = await waitForFinalReport(client, creds.custNr, res.body.jobId, 90_000);
    assert.equal(report.recipientStatus.length, 1050);
    assert.deepEqual([...new Set(report.recipientStatus.map((r: any) => r.status))], ["OK"]);
  });

  it("records the try of a receiver that answers with a NUL, and delivers the push once", async () => {
    receiver.on("/nul", () => ({ status: 200, body: "ok\u0000then more" }));
    const client = api(node.url, creds);
    const res = await client.post(`/${creds.custNr}/fax`, {
      recipients: [{ number: "+4900000020" }],
      documents: [TEXT_DOC],
      statusReportOptions: { httpStatusPush: { targetUrl: receiver.url("/nul") } },
    });
    assert.equal(res.status, 201);
    const log = await eventually(
      async () => {
        const r = await client.get(`/${creds.custNr}/fax/reports/${res.body.jobId}/notifications`);
        return r.body.notifications?.[0]?.state === "delivered" ? r.body : undefined;
      },
      15_000,
      "the push to be delivered",
    );
    assert.equal(log.notifications[0].tries.length, 1);
    assert.equal(receiver.received("/nul").length, 1);
  });
});

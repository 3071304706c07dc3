import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { api, createTestLogin, startTestNode, TEXT_DOC, waitForFinalReport, type TestNode } from "../support/test-node.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";

for (const dialect of DIALECTS) describe(`${dialect}: smoke: a test account sends a text fax`, () => {
  const store = withDialect(dialect);
  let node: TestNode;
  before(async () => {
    node = await startTestNode(store.overrides());
  });
  after(async () => {
    await node.stop();
  });

  it("delivers to an unlisted number and lists the completed report once", async () => {
    const creds = await createTestLogin(node);
    const client = api(node.url, creds);
    const sent = await client.post(`/${creds.custNr}/fax`, { recipients: [{ number: "+4989000000000" }], documents: [TEXT_DOC] });
    assert.equal(sent.status, 201);
    assert.match(sent.body.jobId, /^FJ[A-Z0-9]{20}$/);
    const report = await waitForFinalReport(client, creds.custNr, sent.body.jobId);
    assert.equal(report.recipientStatus[0].status, "OK");
    assert.equal(report.recipientStatus[0].sentToNumber, "004989000000000");
    assert.equal(report.pages, 1);
    const list = await client.get(`/${creds.custNr}/fax/reports`);
    assert.deepEqual(list.body.reports.map((r: any) => r.jobId), [sent.body.jobId]);
  });
});

/**
 * The rollups are written as jobs and receptions end, not by the sweep: a node whose retention
 * round (and so its rollup sweep) does not come around again sends faxes through the engine on
 * the test line (delivered, busy until given up, delivered after two busy calls, an unallocated
 * number) and a test account faxes its own inbound number (a loopback reception). As soon as a
 * job's report is final, every call and fax is counted (rolled_up = 1) and the aggregates equal
 * the raw rows, on both dialects.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { DIALECTS, testStore, type TestStore } from "../support/dialects.ts";
import { api, createTestLogin, eventually, startTestNode, TEXT_DOC, waitForFinalReport, type TestNode } from "../support/test-node.ts";
import { addTopicNumber, createTopic } from "../../src/inbound/topics.ts";
import { REGION_NUMBER_CONTEXT } from "../../src/numbers/normalize-number.ts";

const DAY = 86_400_000;

for (const dialect of DIALECTS) {
  describe(`${dialect}: rollups kept as faxes end`, () => {
    let store: TestStore;
    let node: TestNode;
    const creds = { custNr: "LIVE1", login: "live", password: "live-password" };

    before(async () => {
      store = await testStore(dialect);
      node = await startTestNode({ ...store.overrides, "retention.interval": "1h" });
      await createTestLogin(node, creds);
      const db = node.node.context.store.db;
      await createTopic(db, { custNr: creds.custNr, name: "self" }, Date.now());
      await addTopicNumber(db, { custNr: creds.custNr, topic: "self", number: "+49 40 555 0199" }, REGION_NUMBER_CONTEXT.DE, Date.now());
    });
    after(async () => {
      await node.stop();
      await store.drop();
    });

    it("counts each call and fax in the transaction that ends it", async () => {
      const client = api(node.url, creds);
      const numbers = ["+4900000020", "+4900000001", "+4900000008", "+4900000009", "+33142000000", "+49405550199"];
      const sent = await client.post(`/${creds.custNr}/fax`, { recipients: numbers.map((number) => ({ number })), documents: [TEXT_DOC] });
      assert.equal(sent.status, 201, JSON.stringify(sent.body));
      await waitForFinalReport(client, creds.custNr, sent.body.jobId, 30_000);
      const db = node.node.context.store.db;
      const recipients = await db.selectFrom("recipients").selectAll().where("job_id", "=", sent.body.jobId).execute();
      const attempts = await db.selectFrom("attempts").selectAll().where("job_id", "=", sent.body.jobId).execute();
      assert.ok(recipients.every((r) => r.rolled_up === 1), "every fax counted when it ended");
      assert.ok(attempts.every((a) => a.rolled_up === 1), "every call counted when it ended");
      assert.ok(attempts.length > recipients.length, "retries made calls of their own");

      const today = Math.floor(Date.now() / DAY) * DAY;
      const res = await fetch(`${node.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Basic ${Buffer.from(`${creds.login}:${creds.password}`).toString("base64")}` },
        body: JSON.stringify({
          query: `query($p: DatePeriod!) {
            faxOutSummary(datePeriod: $p, groupBy: [STATUS, COUNTRY]) { totals { faxes delivered attempts lineSeconds } rows { status country faxes } }
            faxOutCallSummary(datePeriod: $p, groupBy: [RESULT]) { rows { result calls } }
          }`,
          variables: { p: { fromIncluded: new Date(today - DAY).toISOString(), toExcluded: new Date(today + DAY).toISOString() } },
        }),
      });
      const body = (await res.json()) as any;
      assert.equal(res.status, 200, JSON.stringify(body.errors));
      const out = body.data.faxOutSummary;
      assert.equal(out.totals.faxes, recipients.length);
      assert.equal(out.totals.delivered, recipients.filter((r) => r.status === "OK").length);
      assert.equal(out.totals.attempts, attempts.length);
      assert.equal(out.totals.lineSeconds, attempts.reduce((s, a) => s + a.duration_secs, 0));
      const byStatus = Object.fromEntries(out.rows.map((r: any) => [`${r.status} ${r.country}`, r.faxes]));
      assert.deepEqual(byStatus, { "OK DEU": 3, "OK FRA": 1, "BUSY DEU": 1, "WRONG_NUMBER DEU": 1 });
      // The failed faxes per number (migration 0043), the customer's and every customer's, written with them.
      const failedNumbers = recipients.filter((r) => r.state === "failed").map((r) => [r.current_e164, 1]).sort();
      assert.equal(failedNumbers.length, 2);
      for (const custNr of [creds.custNr, ""]) {
        const failing = await db.selectFrom("report_out_failing_numbers").select(["number", "faxes"]).where("cust_nr", "=", custNr).orderBy("number").execute();
        assert.deepEqual(failing.map((f) => [f.number, Number(f.faxes)]), failedNumbers, `report_out_failing_numbers of "${custNr}"`);
      }
      const calls = Object.fromEntries(body.data.faxOutCallSummary.rows.map((r: any) => [r.result, r.calls]));
      assert.deepEqual(calls, { delivered: attempts.filter((a) => a.result === "delivered").length, failed: attempts.filter((a) => a.result === "failed").length });
      // The fax to the account's own number arrived as a reception, counted as it was stored.
      // (It is stored just after the call's outcome.)
      const received = await eventually(async () => {
        const rows = await db.selectFrom("received_faxes").selectAll().where("cust_nr", "=", creds.custNr).execute();
        return rows.length > 0 ? rows : undefined;
      });
      assert.equal(received.length, 1);
      assert.equal(received[0]!.rolled_up, 1);
      assert.equal(received[0]!.accounting_service, "F2WSPull");
      const inbound = await fetch(`${node.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Basic ${Buffer.from(`${creds.login}:${creds.password}`).toString("base64")}` },
        body: JSON.stringify({ query: `query($p: DatePeriod!) { faxInSummary(datePeriod: $p) { totals { faxes ok pages } } }`, variables: { p: { fromIncluded: new Date(today - DAY).toISOString(), toExcluded: new Date(today + DAY).toISOString() } } }),
      });
      assert.deepEqual(((await inbound.json()) as any).data.faxInSummary.totals, { faxes: 1, ok: received[0]!.status === "OK" ? 1 : 0, pages: received[0]!.pages });
    });
  });
}

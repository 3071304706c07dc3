/**
 * Cancelling a job while it runs (scheduler/cancel-job.ts), on both dialects: recipients not in a
 * call end at once with CANCELLED; a call already running is not cut off and ends with its own
 * outcome, and a failure of it is final (not retried) because the job is cancelled.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { DIALECTS, withDialect } from "../support/dialects.ts";
import { api, createTestLogin, eventually, startTestNode, TEXT_DOC, waitForFinalReport, type TestNode } from "../support/test-node.ts";

for (const dialect of DIALECTS) {
  describe(`${dialect}: engine: cancel with a call running`, () => {
    const store = withDialect(dialect);
    let node: TestNode;
    let client: ReturnType<typeof api>;
    let custNr: string;

    before(async () => {
      // A one-page test call takes about 2 s at this scale: long enough to cancel during it.
      node = await startTestNode({ ...store.overrides(), "testLine.timeScale": "0.05", "retry.protocol": "30s,30s", "retry.busy": "30s,30s" });
      const creds = await createTestLogin(node);
      custNr = creds.custNr;
      client = api(node.url, creds);
    });
    after(async () => {
      await node.stop();
      await store.store().drop();
    });

    const sendingNow = (jobId: string, number: string) =>
      eventually(
        async () => {
          const r = await node.node.context.store.db.selectFrom("recipients").select(["state", "attempt_count"]).where("job_id", "=", jobId).where("number", "=", number).executeTakeFirstOrThrow();
          return r.state === "sending" ? true : undefined;
        },
        15_000,
        `${number} to be in a call`,
      );

    it("lets the running call deliver and cancels the recipient waiting for a retry", async () => {
      const sent = await client.post(`/${custNr}/fax`, { recipients: [{ number: "+4900000020" }, { number: "+4900000001" }], documents: [TEXT_DOC] });
      assert.equal(sent.status, 201);
      const { jobId } = sent.body;
      // The busy number fails fast and waits 30 s for its retry; the other is in its call.
      await eventually(async () => {
        const r = await node.node.context.store.db.selectFrom("recipients").select(["state", "attempt_count"]).where("job_id", "=", jobId).where("number", "=", "+4900000001").executeTakeFirstOrThrow();
        return r.state === "ready" && r.attempt_count === 1 ? true : undefined;
      }, 15_000, "the busy number to wait for its retry");
      await sendingNow(jobId, "+4900000020");
      // While the call runs: the by-trunk gauge and the node's heartbeat count it.
      const metrics = await (await fetch(`${node.url}/metrics`)).text();
      assert.match(metrics, /faxline_calls_active_by_trunk\{trunk="test",transport="test"[^}]*\} [12]/);
      await eventually(async () => {
        const row = await node.node.context.store.db.selectFrom("nodes").select("calls_by_trunk").executeTakeFirst();
        return row?.calls_by_trunk?.includes('"trunk":"test"') ? true : undefined;
      }, 5000, "the heartbeat to carry the call");
      const cancelled = await client.post(`/${custNr}/fax/reports/${jobId}/cancel`, undefined);
      assert.equal(cancelled.status, 200);
      assert.deepEqual(cancelled.body.recipientStatus.map((r: any) => r.status), ["PENDING", "CANCELLED"]);
      const report = await waitForFinalReport(client, custNr, jobId, 20_000);
      assert.deepEqual(report.recipientStatus.map((r: any) => r.status), ["OK", "CANCELLED"], "the call in progress was not cut off");
    });

    it("does not retry a running call that fails after the cancel", async () => {
      // +4900000000: remote disconnect on every attempt (a protocol failure, normally retried).
      const sent = await client.post(`/${custNr}/fax`, { recipients: [{ number: "+4900000000" }], documents: [TEXT_DOC] });
      const { jobId } = sent.body;
      await sendingNow(jobId, "+4900000000");
      const cancelled = await client.post(`/${custNr}/fax/reports/${jobId}/cancel`, undefined);
      assert.equal(cancelled.status, 200);
      const report = await waitForFinalReport(client, custNr, jobId, 20_000);
      assert.equal(report.recipientStatus[0].status, "REM_DIS", "the call's own outcome, final");
      // Its reason names the cancel, not the validity window the cancel closed.
      assert.match(report.recipientStatus[0].reason, /\(1 attempt; not retried: the job was cancelled by login \S+\)$/);
      assert.doesNotMatch(report.recipientStatus[0].reason, /validity/);
      const attempts = await node.node.context.store.db.selectFrom("attempts").select("attempt_no").where("job_id", "=", jobId).execute();
      assert.equal(attempts.length, 1, "no second attempt");
    });
  });
}

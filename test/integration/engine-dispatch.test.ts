/**
 * Dispatch order and concurrency of the sender: the per-destination call limit and express
 * jobs first.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { AttemptRow } from "../../src/store/database.ts";
import { api, createTestLogin, eventually, startTestNode, tempDir, TEXT_DOC, waitForFinalReport, type TestNode } from "../support/test-node.ts";
import { DIALECTS, testStore, withDialect } from "../support/dialects.ts";

type Interval = Pick<AttemptRow, "started_at" | "ended_at">;

/** Most intervals open at one instant; an interval is [started_at, ended_at). */
function maxOverlap(intervals: Interval[]): number {
  const events: [number, number][] = [];
  for (const i of intervals) {
    events.push([i.started_at, +1], [i.ended_at!, -1]);
  }
  // At equal times, an end comes before a start: back-to-back calls do not overlap.
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let most = 0;
  for (const [, d] of events) {
    open += d;
    most = Math.max(most, open);
  }
  return most;
}

for (const dialect of DIALECTS) describe(`${dialect}: engine: per-destination call limit`, () => {
  const store = withDialect(dialect);
  let node: TestNode;
  before(async () => {
    // 0.01: a one-page call lasts about 180 ms, long enough for parallel calls to overlap.
    node = await startTestNode({ ...store.overrides(), "sender.channels": 10, "sender.callsPerNumber": 1, "testLine.timeScale": "0.01" });
  });
  after(async () => {
    await node.stop();
  });

  it("never runs two calls to one number at once, while different numbers run in parallel", async () => {
    const creds = await createTestLogin(node);
    const client = api(node.url, creds);
    const same = "+4989000000100";
    const different = Array.from({ length: 5 }, (_, i) => `+49890000002${String(i).padStart(2, "0")}`);
    const res = await client.post(`/${creds.custNr}/fax`, {
      recipients: [...Array(5).fill(same), ...different].map((number) => ({ number })),
      documents: [TEXT_DOC],
    });
    assert.equal(res.status, 201);
    const report = await waitForFinalReport(client, creds.custNr, res.body.jobId);
    assert.ok(report.recipientStatus.every((r: any) => r.status === "OK"));

    const attempts = await node.node.context.store.db.selectFrom("attempts").selectAll().where("job_id", "=", res.body.jobId).execute();
    assert.equal(attempts.length, 10);
    const toSame = attempts.filter((a) => a.e164 === same).sort((a, b) => a.started_at - b.started_at);
    assert.equal(toSame.length, 5);
    assert.equal(maxOverlap(toSame), 1, "calls to one number never overlap");
    for (let i = 1; i < toSame.length; i++) {
      assert.ok(toSame[i]!.started_at >= toSame[i - 1]!.ended_at!, `call ${i + 1} starts after call ${i} ended`);
    }
    const toDifferent = attempts.filter((a) => a.e164 !== same);
    assert.equal(toDifferent.length, 5);
    assert.ok(maxOverlap(toDifferent) >= 3, `different numbers run in parallel (max overlap ${maxOverlap(toDifferent)})`);
    // The same-number calls ran one after another: their span is at least the sum of their durations.
    const span = toSame.at(-1)!.ended_at! - toSame[0]!.started_at;
    const busy = toSame.reduce((s, a) => s + (a.ended_at! - a.started_at), 0);
    assert.ok(span >= busy, `span ${span} ms >= summed call time ${busy} ms`);
  });

  it("callsPerNumber 2 allows two calls to one number, never three", async () => {
    // A store of its own: on a shared store the first node (callsPerNumber 1) would take calls too.
    const own = await testStore(dialect);
    const second = await startTestNode({ ...own.overrides, "sender.channels": 10, "sender.callsPerNumber": 2, "testLine.timeScale": "0.01" });
    try {
      const creds = await createTestLogin(second);
      const client = api(second.url, creds);
      const res = await client.post(`/${creds.custNr}/fax`, {
        recipients: Array(6).fill({ number: "+4989000000300" }),
        documents: [TEXT_DOC],
      });
      assert.equal(res.status, 201);
      await waitForFinalReport(client, creds.custNr, res.body.jobId);
      const attempts = await second.node.context.store.db.selectFrom("attempts").selectAll().where("job_id", "=", res.body.jobId).execute();
      assert.equal(attempts.length, 6);
      assert.equal(maxOverlap(attempts), 2);
    } finally {
      await second.stop();
    }
  });
});

for (const dialect of DIALECTS) describe(`${dialect}: engine: express jobs are dialled first`, () => {
  const store = withDialect(dialect);
  const dir = tempDir();
  let intake: TestNode;
  let sender: TestNode | undefined;

  before(async () => {
    // Jobs are accepted and rendered by a node without the sender role; a sender node on the
    // same store starts only when every recipient is ready, so the choice is the claim order.
    intake = await startTestNode({ ...store.overrides(), "node.roles": "api,scheduler", "node.id": "intake-node" }, dir.path);
  });
  after(async () => {
    await sender?.stop();
    await intake.stop();
    dir.remove();
  });

  it("a sender with one channel takes the express job before older normal jobs", async () => {
    const creds = await createTestLogin(intake);
    const client = api(intake.url, creds);
    const db = intake.node.context.store.db;
    // Each job is rendered before the next is sent, so that the express job, sent last, is also
    // due last (the scheduler renders express jobs first when several wait).
    const sendRendered = async (body: Record<string, unknown>): Promise<string> => {
      const res = await client.post(`/${creds.custNr}/fax`, body);
      assert.equal(res.status, 201);
      const jobId = res.body.jobId as string;
      await eventually(
        async () => {
          const ready = await db.selectFrom("recipients").select("id").where("job_id", "=", jobId).where("state", "=", "ready").executeTakeFirst();
          return ready ? true : undefined;
        },
        5_000,
        "the recipient to be ready",
      );
      return jobId;
    };
    const normal: string[] = [];
    for (let i = 0; i < 3; i++) {
      normal.push(await sendRendered({ recipients: [{ number: `+49890000004${i}0` }], documents: [TEXT_DOC] }));
    }
    const expressJobId = await sendRendered({ recipients: [{ number: "+4989000000499" }], documents: [TEXT_DOC], transportOptions: { isExpress: true } });
    const all = [...normal, expressJobId];
    const runAts = await db.selectFrom("recipients").select(["job_id", "run_at"]).where("job_id", "in", all).execute();
    const expressRunAt = runAts.find((r) => r.job_id === expressJobId)!.run_at;
    assert.ok(runAts.every((r) => r.run_at <= expressRunAt), "the express job is not due earlier than the others");

    sender = await startTestNode({ ...store.overrides(), "node.roles": "sender", "node.id": "sender-node", "sender.channels": 1 }, dir.path);
    for (const jobId of all) await waitForFinalReport(client, creds.custNr, jobId);

    const attempts = await db.selectFrom("attempts").select(["job_id", "started_at", "ended_at", "node"]).where("job_id", "in", all).orderBy("started_at").execute();
    assert.equal(attempts.length, 4);
    assert.equal(attempts[0]!.job_id, expressJobId, "the express job is dialled first");
    assert.deepEqual(
      attempts.slice(1).map((a) => a.job_id),
      normal,
      "then the normal jobs, oldest first",
    );
    assert.ok(attempts.every((a) => a.node.startsWith("sender-node:")));
    assert.equal(maxOverlap(attempts), 1, "one channel: one call at a time");
  });
});

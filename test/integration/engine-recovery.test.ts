/**
 * Recovery of calls whose sender died or lost its lease: the lease sweep, a node's restart,
 * and the races between a late outcome, the sweep and a new claim.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Kysely } from "kysely";
import { retrySchedule, type NodeContext } from "../../src/roles/node-context.ts";
import { releasePreviousLives, sweepOnce } from "../../src/roles/scheduler-role.ts";
import { recordAttemptOutcome, startAttempt } from "../../src/scheduler/recipient-outcomes.ts";
import type { AttemptOutcome } from "../../src/line/line.ts";
import type { Database } from "../../src/store/database.ts";
import { api, createTestLogin, eventually, startTestNode, tempDir, TEXT_DOC, waitForFinalReport, type TestNode } from "../support/test-node.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const DELIVERED: AttemptOutcome = { result: "delivered", pagesSent: 1, durationSecs: 17, remoteCsid: "+4989000000900", bitRate: 14_400 };
const BUSY: AttemptOutcome = { result: "failed", reasonCode: "line_busy", pagesSent: 0, durationSecs: 0, remoteCsid: null, rawCause: "SIP 486" };

for (const dialect of DIALECTS) describe(`${dialect}: engine: lease recovery by the sweep`, () => {
  const store = withDialect(dialect);
  const dir = tempDir();
  let scheduler: TestNode;
  let sender: TestNode | undefined;
  before(async () => {
    scheduler = await startTestNode({ ...store.overrides(), "node.roles": "api,scheduler", "node.id": "sched-node" }, dir.path);
  });
  after(async () => {
    await sender?.stop();
    await scheduler.stop();
    dir.remove();
  });

  it("abandons the attempt of an expired lease, retries the recipient and delivers it", async () => {
    const creds = await createTestLogin(scheduler);
    const client = api(scheduler.url, creds);
    const db = scheduler.node.context.store.db;
    const sent = await client.post(`/${creds.custNr}/fax`, { recipients: [{ number: "+4989000000900" }], documents: [TEXT_DOC] });
    assert.equal(sent.status, 201);
    const jobId = sent.body.jobId as string;
    const ready = await eventually(
      async () => db.selectFrom("recipients").selectAll().where("job_id", "=", jobId).where("state", "=", "ready").executeTakeFirst(),
      5_000,
      "the recipient to be ready",
    );
    // A sender claimed it and died mid-call: its lease ran out a moment ago.
    const now = Date.now();
    await db.transaction().execute(async (trx) => {
      await trx
        .updateTable("recipients")
        .set({ state: "sending", locked_by: "dead-node:tok", lease_until: now - 1, attempt_count: 1 })
        .where("id", "=", ready.id)
        .execute();
      await trx
        .insertInto("attempts")
        .values({
          id: "att_dead_sender",
          recipient_id: ready.id,
          job_id: jobId,
          attempt_no: 1,
          e164: "+4989000000900",
          dial_string: "004989000000900",
          node: "dead-node:tok",
          started_at: now - 5_000,
          result: "in_progress",
          pages_sent: 0,
          duration_secs: 0,
        })
        .execute();
    });
    const requeued = await eventually(
      async () => db.selectFrom("recipients").selectAll().where("id", "=", ready.id).where("state", "=", "ready").executeTakeFirst(),
      5_000,
      "the sweep to requeue the recipient",
    );
    assert.equal(requeued.locked_by, null);
    assert.equal(requeued.reason_code, "sender_lost");
    assert.deepEqual(JSON.parse(requeued.retries_used), { internal: 1 });
    assert.equal(requeued.sent_at, null, "an abandoned call is not a sent fax");

    sender = await startTestNode({ ...store.overrides(), "node.roles": "sender", "node.id": "sender-node" }, dir.path);
    const report = await waitForFinalReport(client, creds.custNr, jobId);
    assert.equal(report.recipientStatus[0].status, "OK");
    const attempts = await db.selectFrom("attempts").selectAll().where("recipient_id", "=", ready.id).orderBy("attempt_no").execute();
    assert.deepEqual(
      attempts.map((a) => [a.attempt_no, a.result, a.reason_code]),
      [
        [1, "abandoned", "sender_lost"],
        [2, "delivered", null],
      ],
    );
    assert.equal(attempts[0]!.raw_cause, "lease of dead-node:tok expired");
    assert.ok(attempts[0]!.ended_at! >= now);
    assert.match(attempts[1]!.node, /^sender-node:/);
  });
});

for (const dialect of DIALECTS) describe(`${dialect}: engine: a restarted node takes its old calls back at once`, () => {
  const store = withDialect(dialect);
  const dir = tempDir();
  after(() => dir.remove());

  it("releases the leases of its previous life, abandons the cut call and delivers on retry", async () => {
    // A one-page call takes ~3.5 s at 0.2; the node stops in the middle of it.
    const first = await startTestNode({ ...store.overrides(), "node.id": "restart-node", "testLine.timeScale": "0.2" }, dir.path);
    const creds = await createTestLogin(first);
    let jobId: string;
    let recipientId: string;
    try {
      const client = api(first.url, creds);
      const sent = await client.post(`/${creds.custNr}/fax`, { recipients: [{ number: "+4989000000901" }], documents: [TEXT_DOC] });
      assert.equal(sent.status, 201);
      jobId = sent.body.jobId;
      const db = first.node.context.store.db;
      const sending = await eventually(
        async () => db.selectFrom("recipients").selectAll().where("job_id", "=", jobId).where("state", "=", "sending").executeTakeFirst(),
        5_000,
        "the call to start",
      );
      recipientId = sending.id;
    } finally {
      await first.stop();
    }

    const second = await startTestNode({ ...store.overrides(), "node.id": "restart-node" }, dir.path);
    try {
      const client = api(second.url, creds);
      const report = await waitForFinalReport(client, creds.custNr, jobId);
      assert.equal(report.recipientStatus[0].status, "OK");
      const db = second.node.context.store.db;
      const attempts = await db.selectFrom("attempts").selectAll().where("recipient_id", "=", recipientId).orderBy("attempt_no").execute();
      assert.deepEqual(
        attempts.map((a) => [a.attempt_no, a.result, a.reason_code]),
        [
          [1, "abandoned", "sender_lost"],
          [2, "delivered", null],
        ],
      );
      assert.match(attempts[0]!.node, /^restart-node:/);
      assert.match(attempts[1]!.node, /^restart-node:/);
      assert.notEqual(attempts[0]!.node, attempts[1]!.node, "a new lease holder after the restart");
      // The old lease had two minutes to run: it was released, not waited for.
      assert.ok(attempts[1]!.started_at - attempts[0]!.started_at < 60_000);
    } finally {
      await second.stop();
    }
  });
});

for (const dialect of DIALECTS) describe(`${dialect}: engine: races around an expired lease`, () => {
  const store = withDialect(dialect);
  let node: TestNode;
  let ctx: NodeContext;
  let db: Kysely<Database>;
  let custNr: string;
  let client: ReturnType<typeof api>;
  before(async () => {
    // Only the API runs: the test drives claims, outcomes and sweeps itself.
    node = await startTestNode({ ...store.overrides(), "node.roles": "api" });
    ctx = node.node.context;
    db = ctx.store.db;
    const creds = await createTestLogin(node);
    custNr = creds.custNr;
    client = api(node.url, creds);
  });
  after(async () => {
    await node.stop();
  });

  /** A job whose only recipient is ready to be claimed (rendering done by hand). */
  async function readyRecipient(number: string): Promise<{ jobId: string; recipientId: string }> {
    const sent = await client.post(`/${custNr}/fax`, { recipients: [{ number }], documents: [TEXT_DOC] });
    assert.equal(sent.status, 201);
    const jobId = sent.body.jobId as string;
    await db.updateTable("jobs").set({ state: "active", pages: 1, page_sizes: "[2168]" }).where("id", "=", jobId).execute();
    await db.updateTable("recipients").set({ state: "ready", run_at: Date.now() }).where("job_id", "=", jobId).execute();
    const r = await db.selectFrom("recipients").select("id").where("job_id", "=", jobId).executeTakeFirstOrThrow();
    return { jobId, recipientId: r.id };
  }

  /** Claims the recipient as the sender does (claim + attempt row in one transaction). */
  async function claim(holder: string, leaseUntil: number): Promise<string> {
    return db.transaction().execute(async (trx) => {
      const now = Date.now();
      const recipient = await ctx.store.claims.claimDueRecipient(trx, {
        datacenter: ctx.config.node.datacenter,
        node: holder,
        now,
        leaseUntil,
        callsPerNumber: ctx.config.sender.callsPerNumber,
      });
      assert.ok(recipient, `${holder} claims the recipient`);
      return startAttempt(trx, recipient, holder, now);
    });
  }

  /**
   * Waits until the sweep may judge send leases: only after the store has answered this node's
   * heartbeats for two intervals (cluster/store-health.ts). On a fast machine these tests reach
   * their sweep sooner than that after the node starts, and the sweep then rightly leaves the
   * stale row alone.
   */
  const steadyStore = (): Promise<true> =>
    eventually(async () => (ctx.health.steadyFor(ctx.clock.now()) >= 2 * ctx.config.cluster.heartbeatInterval ? true : undefined), 5_000, "a steady store connection");

  const record = (recipientId: string, attemptId: string, holder: string, outcome: AttemptOutcome) =>
    recordAttemptOutcome(db, { recipientId, attemptId, node: holder, outcome, now: Date.now(), schedule: retrySchedule(ctx.config) });

  it("a late outcome of an abandoned attempt does not touch the next attempt of the same holder", async () => {
    const { jobId, recipientId } = await readyRecipient("+4989000000902");
    const holder = "slow-node:tok";
    const first = await claim(holder, Date.now() + 60_000);
    // The call hangs past its lease; the sweep abandons it and requeues the recipient.
    await db.updateTable("recipients").set({ lease_until: Date.now() - 1 }).where("id", "=", recipientId).execute();
    await steadyStore();
    await sweepOnce(ctx);
    const abandoned = await db.selectFrom("attempts").selectAll().where("id", "=", first).executeTakeFirstOrThrow();
    assert.equal(abandoned.result, "abandoned");
    // The same node claims the retry under the same holder name.
    await sleep(ctx.config.retry.internal[0]! + 5);
    const second = await claim(holder, Date.now() + 60_000);

    // Now the first call's outcome arrives: it must be recognised as lost.
    assert.equal(await record(recipientId, first, holder, DELIVERED), "lost");
    const recipient = await db.selectFrom("recipients").selectAll().where("id", "=", recipientId).executeTakeFirstOrThrow();
    assert.equal(recipient.state, "sending", "the second call still runs");
    assert.equal(recipient.attempt_count, 2);
    const attempts = await db.selectFrom("attempts").selectAll().where("recipient_id", "=", recipientId).orderBy("attempt_no").execute();
    assert.deepEqual(
      attempts.map((a) => [a.attempt_no, a.result, a.reason_code]),
      [
        [1, "abandoned", "sender_lost"],
        [2, "in_progress", null],
      ],
    );
    assert.equal((await db.selectFrom("jobs").select("state").where("id", "=", jobId).executeTakeFirstOrThrow()).state, "active");

    // The second call's own outcome is recorded normally.
    assert.equal(await record(recipientId, second, holder, DELIVERED), "succeeded");
    assert.equal((await db.selectFrom("jobs").select("state").where("id", "=", jobId).executeTakeFirstOrThrow()).state, "completed");
  });

  it("the sweep does not abandon a call that was claimed again after it picked the stale row", async () => {
    const { recipientId } = await readyRecipient("+4989000000903");
    const first = await claim("late-node:tok", Date.now() - 1);
    let second: string | undefined;
    // Between the sweep's select of stale rows and its transaction, the late sender records a
    // busy outcome and another node claims the retry under a live lease.
    let raced = false;
    const racingDb = new Proxy(db, {
      get(target, prop) {
        if (prop === "transaction") {
          return () => ({
            execute: async (fn: (trx: Kysely<Database>) => Promise<unknown>) => {
              if (!raced) {
                raced = true;
                assert.equal(await record(recipientId, first, "late-node:tok", BUSY), "retry");
                await sleep(ctx.config.retry.busy[0]! + 5);
                second = await claim("other-node:tok", Date.now() + 60_000);
              }
              return target.transaction().execute(fn);
            },
          });
        }
        const value = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    await steadyStore();
    await sweepOnce({ ...ctx, store: { ...ctx.store, db: racingDb } });
    assert.ok(raced, "the sweep saw the stale row");

    const recipient = await db.selectFrom("recipients").selectAll().where("id", "=", recipientId).executeTakeFirstOrThrow();
    assert.equal(recipient.state, "sending");
    assert.equal(recipient.locked_by, "other-node:tok");
    const attempts = await db.selectFrom("attempts").selectAll().where("recipient_id", "=", recipientId).orderBy("attempt_no").execute();
    assert.deepEqual(
      attempts.map((a) => [a.attempt_no, a.result, a.reason_code]),
      [
        [1, "failed", "line_busy"],
        [2, "in_progress", null],
      ],
    );
    assert.equal(await record(recipientId, second!, "other-node:tok", DELIVERED), "succeeded");
  });

  it("a restarting node releases only its own old leases, not those of a node with a similar id", async () => {
    const far = Date.now() + 600_000;
    const own = await readyRecipient("+4989000000904");
    await claim("peer_b:old-life", far);
    const similar = await readyRecipient("+4989000000905");
    await claim("peer-b:live", far);
    const upper = await readyRecipient("+4989000000906");
    await claim("PEER_B:live", far);
    const leaseOf = async (recipientId: string) =>
      (await db.selectFrom("recipients").select("lease_until").where("id", "=", recipientId).executeTakeFirstOrThrow()).lease_until;

    // "_" is a LIKE wildcard and SQLite's LIKE ignores case: neither may widen the match.
    const released = await releasePreviousLives({ ...ctx, nodeId: "peer_b", holder: "peer_b:new-life" });
    assert.deepEqual(released, { jobs: 0, recipients: 1, duties: 0 });
    assert.equal(await leaseOf(own.recipientId), 0, "its own previous life is released");
    assert.equal(await leaseOf(similar.recipientId), far, "peer-b is another, live node");
    assert.equal(await leaseOf(upper.recipientId), far, "PEER_B is another, live node");
    for (const r of [own, similar, upper]) {
      await db.updateTable("recipients").set({ state: "failed", locked_by: null, lease_until: null }).where("id", "=", r.recipientId).execute();
    }
  });
});

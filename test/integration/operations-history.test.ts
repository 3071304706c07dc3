/**
 * The console's live charts on the server, over SQLite and PostgreSQL: the open work of each
 * data center (jobs to render, calls due, calls waiting for a later try, calls running,
 * notifications undelivered), the calls of the region's running nodes from their heartbeats,
 * and the node's sampler (metrics-history.ts) fed by a real node: a call shows while it runs, its
 * render and its end in the interval they happened, and the route serves operators only.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readRegionActivity } from "../../src/cluster/region-activity.ts";
import { openStore } from "../../src/store/dialects/open-store.ts";
import { openWork } from "../../src/store/queries/queue-depths.ts";
import { upsertNodeLife } from "../../src/store/queries/nodes.ts";
import type { Store } from "../../src/store/store.ts";
import type { HistorySample } from "../../src/metrics/metrics-history.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";
import { seedCompletedJobs } from "../support/seed-completed-jobs.ts";
import { api, createTestLogin, eventually, startTestNode, tempDir, testConfig, TEXT_DOC, waitForFinalReport, type TestNode } from "../support/test-node.ts";

const NOW = Date.UTC(2026, 10, 29, 12, 0, 0);

for (const dialect of DIALECTS) {
  describe(`${dialect}: open work and the region's calls`, () => {
    const ts = withDialect(dialect);
    const dir = tempDir("faxline-open-work-");
    let store: Store;
    before(async () => {
      store = await openStore(testConfig(dir.path, ts.overrides()));
    });
    after(async () => {
      await store?.close();
      dir.remove();
    });

    it("counts each data center's open jobs, recipients and notifications by what they wait for", async () => {
      const db = store.db;
      const de1 = await seedCompletedJobs(db, { custNr: "10001", login: "open", datacenter: "DE1", count: 9, firstCompletedAt: NOW - 3_600_000 });
      const de2 = await seedCompletedJobs(db, { custNr: "10001", login: "open", datacenter: "DE2", count: 2, firstCompletedAt: NOW - 3_600_000 });
      const setJob = (id: string, state: string) => db.updateTable("jobs").set({ state, completed_at: null }).where("id", "=", id).execute();
      const setRecipient = (jobId: string, state: string, runAt: number) => db.updateTable("recipients").set({ state, run_at: runAt, status: null, finished_at: null }).where("job_id", "=", jobId).execute();
      // DE1: two jobs to render, one being rendered; two calls due, one waiting for a retry, two in a call.
      await setJob(de1[0]!, "pending");
      await setJob(de1[1]!, "pending");
      await setJob(de1[2]!, "rendering");
      for (const id of de1.slice(3, 8)) await setJob(id, "active");
      await setRecipient(de1[3]!, "ready", NOW - 1000);
      await setRecipient(de1[4]!, "ready", NOW);
      await setRecipient(de1[5]!, "ready", NOW + 60_000);
      await setRecipient(de1[6]!, "sending", NOW - 5000);
      await setRecipient(de1[7]!, "sending", NOW - 5000);
      // DE2: one job waiting for its retry.
      await setJob(de2[0]!, "active");
      await setRecipient(de2[0]!, "ready", NOW + 1);
      // Notifications: two undelivered (one being delivered) in DE1, a delivered and a failed one.
      const note = (i: number, state: string, datacenter = "DE1") => ({
        id: `msg_open_${i}`,
        job_id: de1[8]!,
        cust_nr: "10001",
        datacenter,
        channel: "http",
        event: "job.completed",
        target: "https://erp.example.com/fax",
        receiver: "https://erp.example.com",
        auth: null,
        payload: "{}",
        state,
        attempts: 0,
        schedule_step: 0,
        next_attempt_at: NOW,
        locked_by: null,
        lease_until: null,
        last_error: null,
        created_at: NOW,
        finished_at: null,
      });
      await db.insertInto("notifications").values([note(1, "pending"), note(2, "delivering"), note(3, "delivered"), note(4, "failed"), note(5, "pending", "DE2")]).execute();

      const work = await openWork(db, ["DE1", "DE2"], NOW);
      assert.deepEqual(work, {
        DE1: { toRender: 3, due: 2, later: 1, inCall: 2, notifications: 2 },
        DE2: { toRender: 0, due: 0, later: 1, inCall: 0, notifications: 1 },
      });
      assert.deepEqual(await openWork(db, ["US1"], NOW), { US1: { toRender: 0, due: 0, later: 0, inCall: 0, notifications: 0 } }, "a data center without work");
    });

    it("takes the calls of the region's running nodes from their heartbeats", async () => {
      const life = (id: string, region: string, datacenter: string, lastSeen: number, calls: number) =>
        upsertNodeLife(store.db, { id, instance: `${id}:x`, region, datacenter, roles: '["sender"]', version: "0", hostname: "h", pid: 1, api_url: null, started_at: NOW - 60_000, last_seen_at: lastSeen, active_calls: calls });
      await life("de1-a", "DE", "DE1", NOW - 2000, 4);
      await life("de2-a", "DE", "DE2", NOW - 4000, 1);
      await life("de1-silent", "DE", "DE1", NOW - 60_000, 7);
      await life("us1-a", "US", "US1", NOW - 1000, 9);
      await life("de1-stopped", "DE", "DE1", NOW - 1000, 3);
      await store.db.updateTable("nodes").set({ stopped_at: NOW - 500 }).where("id", "=", "de1-stopped").execute();
      const reading = await readRegionActivity(store.db, { region: "DE", datacenters: ["DE1", "DE2"], heartbeatMs: 5000, now: NOW });
      assert.deepEqual(reading.calls, { "de1-a": 4, "de2-a": 1 });
      assert.deepEqual(Object.keys(reading.queues), ["DE1", "DE2"]);
    });
  });

  describe(`${dialect}: a node's live-chart samples`, () => {
    const ts = withDialect(dialect);
    let node: TestNode;
    const user = { custNr: "70301", login: "charts", password: "charts-password" };
    const ops = { custNr: "70309", login: "charts-ops", password: "charts-ops-password" };
    before(async () => {
      // A one-page test call takes about 3 s at this scale; samples every 200 ms see it run.
      node = await startTestNode({ ...ts.overrides(), "testLine.timeScale": "0.1", "console.chartInterval": "200ms", "console.chartWindow": "1m" });
      await createTestLogin(node, user);
      await createTestLogin(node, { ...ops, isAdmin: true });
    });
    after(async () => {
      await node?.stop();
    });

    async function signIn(account: { login: string; password: string }): Promise<(path: string) => Promise<{ status: number; body: any }>> {
      const res = await fetch(`${node.url}/console/api/session`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ login: account.login, password: account.password }) });
      const cookie = /faxline_session=[^;]*/.exec(res.headers.get("set-cookie") ?? "")![0];
      return async (path) => {
        const r = await fetch(`${node.url}${path}`, { headers: { cookie } });
        return { status: r.status, body: await r.json() };
      };
    }

    it("records a call while it runs, its render and its end, and serves them to operators only", async () => {
      const asUser = await signIn(user);
      const refused = await asUser("/console/api/operations/history");
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error, "operator_only");

      const get = await signIn(ops);
      const first = await get("/console/api/operations/history");
      assert.equal(first.status, 200);
      const nodeId = node.node.context.nodeId;
      assert.equal(first.body.node, nodeId);
      assert.equal(first.body.intervalMs, 200);
      assert.equal(first.body.windowMs, 60_000);
      assert.ok(first.body.samples.length >= 1, "sampled from the start");
      const datacenter = node.config.node.datacenter;

      const client = api(node.url, user);
      const job = await client.post(`/${user.custNr}/fax`, { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC] });
      assert.equal(job.status, 201);
      const during = await eventually(
        async () => {
          const samples: HistorySample[] = (await get("/console/api/operations/history")).body.samples;
          return samples.find((s) => s.calls?.[nodeId] === 1 && s.queues?.[datacenter]?.inCall === 1);
        },
        15_000,
        "a sample taken during the call",
      );
      await waitForFinalReport(client, user.custNr, job.body.jobId, 30_000);
      const later = await eventually(
        async () => {
          const samples: HistorySample[] = (await get(`/console/api/operations/history?after=${during.t}`)).body.samples;
          return samples.some((s) => s.callsDelivered === 1) && samples.at(-1)!.calls?.[nodeId] === 0 ? samples : undefined;
        },
        10_000,
        "the call's end in a later sample",
      );
      assert.ok(later.every((s) => s.t > during.t), "only samples after the one given");
      const all: HistorySample[] = (await get("/console/api/operations/history")).body.samples;
      const rendered = all.filter((s) => s.renders > 0);
      assert.equal(rendered.reduce((n, s) => n + s.renders, 0), 1, "one render, in the interval it ended in");
      assert.ok(rendered[0]!.renderMeanSeconds! > 0 && rendered[0]!.renderMaxSeconds === rendered[0]!.renderMeanSeconds);
      assert.equal(all.reduce((n, s) => n + s.callsDelivered + s.callsFailed, 0), 1, "one call ended");
      assert.ok(all.length <= 300, "the window holds chartWindow / chartInterval samples");
      for (let i = 1; i < all.length; i++) assert.ok(all[i]!.t > all[i - 1]!.t, "oldest first");

      const bad = await get("/console/api/operations/history?after=yesterday");
      assert.equal(bad.status, 400);
      assert.match(bad.body.message, /milliseconds since 1970/);
    });
  });
}

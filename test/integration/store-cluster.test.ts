/**
 * The store as several nodes share it, on each dialect: concurrent claims from several
 * connections ("nodes") never hand one row to two claimers and keep sender.callsPerNumber
 * over all of them; singleton duty leases; the node registry and its guard on node ids.
 * Each "node" here is a store opened separately (its own pool or SQLite connection), as a
 * real node opens it.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Kysely } from "kysely";
import { ManualClock } from "../../src/lib/clock.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import { NodeIdInUseError, NodeRegistry, nodeStatus } from "../../src/cluster/node-registry.ts";
import { SingletonDuty } from "../../src/cluster/singleton-duty.ts";
import { StoreHealth } from "../../src/cluster/store-health.ts";
import { adoptionSummary, adoptNow, judgeDatacenter } from "../../src/cluster/datacenter-adoption.ts";
import { ADOPTION_BATCH, adoptDatacenter } from "../../src/store/queries/adoptions.ts";
import { seedCompletedJobs } from "../support/seed-completed-jobs.ts";
import { startAttempt } from "../../src/scheduler/recipient-outcomes.ts";
import type { Database } from "../../src/store/database.ts";
import { acquireClusterLease, releaseClusterLease } from "../../src/store/queries/cluster-leases.ts";
import { listNodes } from "../../src/store/queries/nodes.ts";
import type { Store } from "../../src/store/store.ts";
import { DIALECTS, openTestStore, suiteStore, testStore, type TestStore } from "../support/dialects.ts";
import { tempDir } from "../support/test-node.ts";

const T0 = Date.UTC(2026, 10, 1);

async function seedJob(db: Kysely<Database>, jobId: string, recipients: { id: string; e164: string }[]): Promise<void> {
  await db
    .insertInto("jobs")
    .values({
      id: jobId,
      cust_nr: "99999TE",
      login: "tester",
      region: "DE",
      datacenter: "DE1",
      state: "active",
      is_test: 1,
      is_express: 0,
      blacklist_check: 0,
      csid: null,
      paper_format: "A4",
      resolution: "HIGH",
      header: null,
      coverpage_template: null,
      overlay_name: null,
      overlay_mode: null,
      customer_defined_id: null,
      billing_code: null,
      billing_info: null,
      customer_reference: null,
      status_report_options: null,
      idempotency_key: null,
      request_hash: null,
      valid_from: T0,
      valid_until: T0 + 86_400_000,
      deadline_at: T0 + 90_000_000,
      pages: 1,
      page_sizes: "[1000]",
      render_attempts: 1,
      created_at: T0,
    })
    .execute();
  for (let i = 0; i < recipients.length; i += 200) {
    await db
      .insertInto("recipients")
      .values(
        recipients.slice(i, i + 200).map((r, k) => ({
          id: r.id,
          job_id: jobId,
          ordinal: i + k,
          datacenter: "DE1",
          is_express: 0,
          number: r.e164,
          alternative_numbers: null,
          properties: null,
          dial_targets: JSON.stringify([{ e164: r.e164, dialString: `00${r.e164.slice(1)}` }]),
          target_index: 0,
          dead_targets: "[]",
          current_e164: r.e164,
          state: "ready",
          run_at: T0,
          attempt_count: 0,
          retries_used: "{}",
          duration_secs: 0,
          pages_sent: 0,
        })),
      )
      .execute();
  }
}

for (const dialect of DIALECTS) {
  describe(`${dialect}: claims from several nodes at once`, () => {
    const dir = tempDir();
    let ts: TestStore;
    const nodes: Store[] = [];
    before(async () => {
      ts = await testStore(dialect);
      // SQLite's nodes are processes that take turns on the file's one write lock; in one
      // process (one thread) they share a connection, which Kysely takes in turns.
      const first = await openTestStore(ts, dir.path);
      nodes.push(first);
      for (let i = 1; i < 4; i++) nodes.push(dialect === "sqlite" ? first : await openTestStore(ts, dir.path));
    });
    after(async () => {
      for (const n of new Set(nodes)) await n.close();
      await ts.drop();
      dir.remove();
    });

    it("hands every recipient to one claimer once and keeps callsPerNumber over all nodes", async () => {
      const LIMIT = 2;
      const DESTINATIONS = 12;
      const recipients = Array.from({ length: 240 }, (_, i) => ({ id: `FNCLAIM${String(i).padStart(5, "0")}`, e164: `+49301000${String(i % DESTINATIONS).padStart(3, "0")}` }));
      await seedJob(nodes[0]!.db, "FJCLAIMTEST000000000001", recipients);

      const claimedBy = new Map<string, string>();
      const holding = new Map<string, number>();
      let maxSeen = 0;
      const violations: string[] = [];
      const claimer = async (store: Store, name: string) => {
        for (;;) {
          const claimed = await store.db.transaction().execute(async (trx) => {
            const r = await store.claims.claimDueRecipient(trx, { datacenter: "DE1", node: name, now: T0 + 1, leaseUntil: T0 + 60_000, callsPerNumber: LIMIT });
            if (r) await startAttempt(trx, r, name, T0 + 1);
            return r;
          });
          if (!claimed) {
            const left = await store.db.selectFrom("recipients").select("id").where("state", "in", ["ready", "sending"]).limit(1).execute();
            if (left.length === 0) return;
            await new Promise((r) => setTimeout(r, 2));
            continue;
          }
          const e164 = claimed.current_e164!;
          if (claimedBy.has(claimed.id)) violations.push(`${claimed.id} claimed by ${claimedBy.get(claimed.id)} and ${name}`);
          claimedBy.set(claimed.id, name);
          const now = (holding.get(e164) ?? 0) + 1;
          holding.set(e164, now);
          maxSeen = Math.max(maxSeen, now);
          const running = await store.db
            .selectFrom("recipients")
            .select((eb) => eb.fn.countAll().as("n"))
            .where("current_e164", "=", e164)
            .where("state", "=", "sending")
            .executeTakeFirstOrThrow();
          if (Number(running.n) > LIMIT) violations.push(`${Number(running.n)} calls to ${e164}`);
          await new Promise((r) => setTimeout(r, Math.random() * 4));
          holding.set(e164, holding.get(e164)! - 1);
          await store.db.updateTable("recipients").set({ state: "succeeded", locked_by: null, lease_until: null }).where("id", "=", claimed.id).execute();
        }
      };
      await Promise.all(nodes.flatMap((store, n) => [0, 1, 2].map((c) => claimer(store, `node${n}:c${c}`))));

      assert.deepEqual(violations, []);
      assert.equal(claimedBy.size, recipients.length, "every recipient was claimed");
      assert.ok(maxSeen <= LIMIT, `at most ${LIMIT} calls at once to one number (saw ${maxSeen})`);
      const attempts = await nodes[0]!.db.selectFrom("attempts").select(["recipient_id", "attempt_no"]).execute();
      assert.equal(attempts.length, recipients.length, "one attempt per recipient");
      assert.equal(new Set(attempts.map((a) => a.recipient_id)).size, recipients.length);
    });

    it("claims each pending job for rendering once", async () => {
      const ids = Array.from({ length: 40 }, (_, i) => `FJRENDER${String(i).padStart(14, "0")}`);
      for (const id of ids) {
        await seedJob(nodes[0]!.db, id, []);
        await nodes[0]!.db.updateTable("jobs").set({ state: "pending" }).where("id", "=", id).execute();
      }
      const won: string[] = [];
      await Promise.all(
        nodes.flatMap((store, n) =>
          [0, 1].map(async (c) => {
            for (;;) {
              const job = await store.claims.claimJobToRender(store.db, { datacenter: "DE1", node: `n${n}c${c}`, now: T0, leaseUntil: T0 + 1000 });
              if (!job) return;
              won.push(job.id);
            }
          }),
        ),
      );
      assert.equal(won.length, ids.length);
      assert.deepEqual([...won].sort(), [...ids].sort());
    });

    it("gives a free render slot to a customer with nothing rendering before another job of a busy one", async () => {
      const db = nodes[0]!.db;
      await db.deleteFrom("jobs").execute();
      const pending = async (id: string, custNr: string, createdAt: number, express = 0) => {
        await seedJob(db, id, []);
        await db.updateTable("jobs").set({ state: "pending", cust_nr: custNr, created_at: createdAt, is_express: express }).where("id", "=", id).execute();
      };
      // Customer A sent four jobs, then B one and C one (express), in that order.
      for (let i = 1; i <= 4; i++) await pending(`FJFAIRA${i}00000000000000`, "A-BIG", T0 + i);
      await pending("FJFAIRB100000000000000", "B-SMALL", T0 + 10);
      await pending("FJFAIRC100000000000000", "C-EXPRESS", T0 + 11, 1);
      const claim = async () => (await nodes[0]!.claims.claimJobToRender(db, { datacenter: "DE1", node: "n0", now: T0, leaseUntil: T0 + 1000 }))?.id;
      // Express first; then A's oldest; then B, although A's second job is older, because A is rendering.
      assert.equal(await claim(), "FJFAIRC100000000000000");
      assert.equal(await claim(), "FJFAIRA100000000000000");
      assert.equal(await claim(), "FJFAIRB100000000000000");
      // Only A has jobs left: its next jobs get the free slots.
      assert.equal(await claim(), "FJFAIRA200000000000000");
      // When B's job is done, a new job of B comes before A's older ones again.
      await db.updateTable("jobs").set({ state: "active" }).where("id", "=", "FJFAIRB100000000000000").execute();
      await pending("FJFAIRB200000000000000", "B-SMALL", T0 + 20);
      assert.equal(await claim(), "FJFAIRB200000000000000");
      assert.equal(await claim(), "FJFAIRA300000000000000");
    });
  });

  describe(`${dialect}: singleton duties`, () => {
    const dir = tempDir();
    let ts: TestStore;
    let a: Store;
    let b: Store;
    before(async () => {
      ts = await testStore(dialect);
      a = await openTestStore(ts, dir.path);
      b = await openTestStore(ts, dir.path);
    });
    after(async () => {
      await a.close();
      await b.close();
      await ts.drop();
      dir.remove();
    });

    it("is created, renewed, held elsewhere, taken over after the lease, and released", async () => {
      const lease = { name: "sweep:DE1", leaseMs: 1000 };
      assert.equal((await acquireClusterLease(a.db, { ...lease, holder: "a:1", now: T0 })).outcome, "created");
      assert.equal((await acquireClusterLease(b.db, { ...lease, holder: "b:1", now: T0 + 10 })).outcome, "held_elsewhere");
      assert.equal((await acquireClusterLease(a.db, { ...lease, holder: "a:1", now: T0 + 500 })).outcome, "renewed");
      assert.equal((await acquireClusterLease(b.db, { ...lease, holder: "b:1", now: T0 + 1400 })).outcome, "held_elsewhere", "renewed until T0 + 1500");
      const taken = await acquireClusterLease(b.db, { ...lease, holder: "b:1", now: T0 + 1501 });
      assert.equal(taken.outcome, "taken_over");
      assert.equal(taken.leaseUntil, T0 + 2501);
      assert.equal((await acquireClusterLease(a.db, { ...lease, holder: "a:1", now: T0 + 1600 })).outcome, "held_elsewhere");
      assert.equal(await releaseClusterLease(a.db, lease.name, "a:1"), false, "a cannot release what it no longer holds");
      assert.equal(await releaseClusterLease(b.db, lease.name, "b:1"), true);
      assert.equal((await acquireClusterLease(a.db, { ...lease, holder: "a:1", now: T0 + 1700 })).outcome, "created");
    });

    it("goes to exactly one of many nodes asking at once", async () => {
      const outcomes = await Promise.all(
        Array.from({ length: 12 }, (_, i) => acquireClusterLease((i % 2 === 0 ? a : b).db, { name: "retention:DE2", holder: `n${i}:x`, now: T0, leaseMs: 5000 })),
      );
      assert.equal(outcomes.filter((o) => o.outcome !== "held_elsewhere").length, 1);
    });

    it("SingletonDuty writes only when a third of the lease is used, and hands over when released", async () => {
      const clock = new ManualClock(T0);
      const first = new SingletonDuty({ db: a.db, name: "notification-sweep:DE1", holder: "first:1", leaseMs: 3000, clock, logger: silentLogger() });
      const second = new SingletonDuty({ db: b.db, name: "notification-sweep:DE1", holder: "second:1", leaseMs: 3000, clock, logger: silentLogger() });
      assert.equal(await first.tryHold(), true);
      assert.equal(await second.tryHold(), false);
      await clock.advance(500);
      const row = () => a.db.selectFrom("cluster_leases").selectAll().where("name", "=", "notification-sweep:DE1").executeTakeFirstOrThrow();
      assert.equal(await first.tryHold(), true);
      assert.equal(Number((await row()).renewed_at), T0, "no write within the first third");
      await clock.advance(600);
      assert.equal(await first.tryHold(), true);
      assert.equal(Number((await row()).renewed_at), T0 + 1100);
      await first.release();
      assert.equal(first.held, false);
      assert.equal(await second.tryHold(), true, "released: the other node takes it at once");
      // The holder stops renewing (it died): after the lease, the first one takes it back.
      await clock.advance(3001);
      assert.equal(await first.tryHold(), true);
      assert.equal(await second.tryHold(), false);
    });
  });

  describe(`${dialect}: the node registry`, () => {
    const suite = suiteStore(dialect);

    const registry = (clock: ManualClock, host: string, instance: string, calls = 0) =>
      new NodeRegistry({
        db: suite.store.db,
        clock,
        logger: silentLogger(),
        id: "de1-node-a",
        instance,
        region: "DE",
        datacenter: "DE1",
        roles: ["api", "sender"],
        version: "9.9.9",
        apiUrl: () => "http://127.0.0.1:1",
        heartbeatMs: 1000,
        activeCalls: () => calls,
        health: new StoreHealth(clock.now()),
        hostname: host,
      });

    it("registers, beats, stops, and refuses a second live host with the same id", async () => {
      const clock = new ManualClock(T0);
      const first = registry(clock, "host-1", "de1-node-a:aaa", 3);
      await first.register();
      await clock.advance(1000);
      await first.beat();
      let [row] = await listNodes(suite.store.db);
      assert.equal(row!.instance, "de1-node-a:aaa");
      assert.equal(Number(row!.last_seen_at), T0 + 1000);
      assert.equal(row!.active_calls, 3);
      assert.equal(nodeStatus(row!, clock.now(), 1000), "running");
      assert.equal(nodeStatus(row!, clock.now() + 3001, 1000), "not responding");

      await assert.rejects(registry(clock, "host-2", "de1-node-a:bbb").register(), (err: unknown) => err instanceof NodeIdInUseError && /host-1/.test(err.message));
      // The same host: the local lock has proven the old life dead, so its row is taken over
      // and its leases may be released at once.
      assert.deepEqual(await registry(clock, "host-1", "de1-node-a:ccc").register(), { previousLifeOver: true });
      [row] = await listNodes(suite.store.db);
      assert.equal(row!.instance, "de1-node-a:ccc");
      // The displaced life's heartbeats no longer count as this node's.
      await first.beat();
      [row] = await listNodes(suite.store.db);
      assert.equal(row!.instance, "de1-node-a:ccc");

      // Silent for more than three heartbeats: another host may take the id, but that life may
      // only be cut off (still calling), so its leases must run out, not be released.
      await clock.advance(3500);
      const third = registry(clock, "host-2", "de1-node-a:ddd");
      assert.deepEqual(await third.register(), { previousLifeOver: false });
      await third.stop();
      [row] = await listNodes(suite.store.db);
      assert.equal(nodeStatus(row!, clock.now(), 1000), "stopped");
      // A life that stopped cleanly is over, wherever the next one starts.
      assert.deepEqual(await registry(clock, "host-3", "de1-node-a:eee").register(), { previousLifeOver: true });
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`${dialect}: adopting a data center's jobs`, () => {
    const suite = suiteStore(dialect);

    it("judges a data center dead by its last heartbeat, or when it never had a node", () => {
      assert.deepEqual(judgeDatacenter({ nodes: 0, lastSeenAt: null }, T0, 120_000), { dead: true, lastSeenAt: null });
      assert.deepEqual(judgeDatacenter({ nodes: 2, lastSeenAt: T0 - 119_999 }, T0, 120_000), { dead: false, lastSeenAt: T0 - 119_999 });
      assert.deepEqual(judgeDatacenter({ nodes: 2, lastSeenAt: T0 - 120_000 }, T0, 120_000), { dead: true, lastSeenAt: T0 - 120_000 });
    });

    it("moves every job of the dead data center with its recipients and notifications, once, and records it", async () => {
      const { db } = suite.store;
      await seedJob(db, "FJADOPT000000000000001", [{ id: "FNADOPT000000000000001", e164: "+4930111" }]);
      await seedJob(db, "FJADOPT000000000000002", [{ id: "FNADOPT000000000000002", e164: "+4930222" }]);
      await db.updateTable("jobs").set({ state: "completed", completed_at: T0 }).where("id", "=", "FJADOPT000000000000002").execute();
      await db.updateTable("recipients").set({ state: "sending", locked_by: "de1-x:dead", lease_until: T0 + 5 }).where("id", "=", "FNADOPT000000000000001").execute();
      await db
        .insertInto("notifications")
        .values({ id: "msg_adopt", job_id: "FJADOPT000000000000002", cust_nr: "99999TE", datacenter: "DE1", channel: "http", event: "job.completed", target: "http://x", receiver: "http://x", auth: null, payload: "{}", state: "pending", attempts: 0, schedule_step: 0, next_attempt_at: T0, created_at: T0 })
        .execute();
      const row = await adoptDatacenter(db, { region: "DE", from: "DE1", to: "DE2", mode: "failover", node: "de2-a:tok", now: T0 + 10, lastSeenAt: T0 - 200_000 });
      assert.ok(row);
      assert.deepEqual([row.jobs, row.open_jobs, row.recipients, row.notifications], [2, 1, 2, 1]);
      assert.match(adoptionSummary(row), /^adopted by DE2 from DE1 at 2026-11-01T00:00:00\.010Z: 2 jobs \(1 unfinished\), 2 recipients, 1 notifications$/);
      const jobs = await db.selectFrom("jobs").select(["id", "datacenter"]).where("id", "like", "FJADOPT%").orderBy("id").execute();
      assert.deepEqual(jobs.map((j) => j.datacenter), ["DE2", "DE2"]);
      const sending = await db.selectFrom("recipients").selectAll().where("id", "=", "FNADOPT000000000000001").executeTakeFirstOrThrow();
      assert.deepEqual([sending.datacenter, sending.state, sending.locked_by], ["DE2", "sending", "de1-x:dead"], "a running call keeps its lease: the new owner's sweep waits for it");
      assert.equal((await db.selectFrom("notifications").select("datacenter").where("id", "=", "msg_adopt").executeTakeFirstOrThrow()).datacenter, "DE2");
      const perJob = await db.selectFrom("job_adoptions").selectAll().orderBy("job_id").execute();
      assert.deepEqual(perJob.map((a) => [a.job_id, a.from_datacenter, a.to_datacenter, Number(a.adopted_at), a.adoption_id === row.id]), [
        ["FJADOPT000000000000001", "DE1", "DE2", T0 + 10, true],
        ["FJADOPT000000000000002", "DE1", "DE2", T0 + 10, true],
      ]);
      // Nothing is left to move: a second run (another node, the CLI) does nothing.
      assert.equal(await adoptDatacenter(db, { region: "DE", from: "DE1", to: "DE2", mode: "failover", node: "de2-b:tok", now: T0 + 11, lastSeenAt: null }), null);
      assert.equal((await db.selectFrom("datacenter_adoptions").selectAll().execute()).length, 1);
      // Many jobs move in batches, unfinished first; each job with all its rows.
      await seedCompletedJobs(db, { custNr: "99999TE", login: "tester", datacenter: "DE1", count: ADOPTION_BATCH * 2 + 17, firstCompletedAt: T0 - 86_400_000 });
      await seedJob(db, "FJADOPT000000000000003", [{ id: "FNADOPT000000000000003", e164: "+4930333" }]);
      const many = await adoptDatacenter(db, { region: "DE", from: "DE1", to: "DE2", mode: "failover", node: "de2-a:tok", now: T0 + 15, lastSeenAt: null });
      assert.deepEqual([many?.jobs, many?.open_jobs, many?.recipients], [ADOPTION_BATCH * 2 + 18, 1, ADOPTION_BATCH * 2 + 18]);
      const left = await db.selectFrom("recipients").select("id").where("datacenter", "=", "DE1").execute();
      assert.deepEqual(left, [], "no recipient left behind its job");
      // And back, by hand.
      const back = await adoptNow(db, { from: "DE2", to: "DE1", node: "cli", now: T0 + 20 });
      assert.equal(back?.mode, "manual");
      assert.equal((await db.selectFrom("job_adoptions").selectAll().where("job_id", "=", "FJADOPT000000000000002").execute()).length, 2);
      // A node of the dead data center that comes back while the adoption runs keeps what it
      // accepts after the verdict: the client got its 201 there and reads the report there.
      await seedJob(db, "FJADOPT000000000000004", [{ id: "FNADOPT000000000000004", e164: "+4930444" }]);
      await db.updateTable("jobs").set({ created_at: T0 + 31 }).where("id", "=", "FJADOPT000000000000004").execute();
      const received = (id: string, at: number) => ({ id, cust_nr: "99999TE", topic: "default", datacenter: "DE1", to_number: "+4930999", from_number: null, remote_csid: null, pages: 1, pages_announced: 1, resolution: "HIGH", transport: "t38", bit_rate: 14400, duration_secs: 30, status: "OK", reason_code: null, raw_cause: null, received_at: at, image: null, image_bytes: 0, locked_until: null, acknowledged_at: null, purged_at: null, source_job_id: null });
      await db.insertInto("received_faxes").values([received("FRADOPT_BEFORE", T0 + 29), received("FRADOPT_AFTER", T0 + 31)]).execute();
      const delivery = (id: string, jobId: string, at: number) => ({ id, job_id: jobId, cust_nr: "99999TE", datacenter: "DE1", channel: "http", event: "fax.received", target: "http://x", receiver: "http://x", auth: null, payload: "{}", state: "pending", attempts: 0, schedule_step: 0, next_attempt_at: at, created_at: at });
      await db.insertInto("notifications").values([delivery("msg_rx_before", "FRADOPT_BEFORE", T0 + 29), delivery("msg_rx_after", "FRADOPT_AFTER", T0 + 31)]).execute();
      const again = await adoptDatacenter(db, { region: "DE", from: "DE1", to: "DE2", mode: "failover", node: "de2-a:tok", now: T0 + 30, lastSeenAt: null });
      assert.equal(again?.jobs, ADOPTION_BATCH * 2 + 20, "all but the late one");
      const late = await db.selectFrom("jobs").select("datacenter").where("id", "=", "FJADOPT000000000000004").executeTakeFirstOrThrow();
      assert.equal(late.datacenter, "DE1");
      assert.equal((await db.selectFrom("recipients").select("datacenter").where("id", "=", "FNADOPT000000000000004").executeTakeFirstOrThrow()).datacenter, "DE1");
      // So do the faxes it receives then, with their deliveries; those received before move.
      const rx = await db.selectFrom("received_faxes").select(["id", "datacenter"]).where("id", "like", "FRADOPT%").orderBy("id").execute();
      assert.deepEqual(rx.map((r) => [r.id, r.datacenter]), [["FRADOPT_AFTER", "DE1"], ["FRADOPT_BEFORE", "DE2"]]);
      const rxDeliveries = await db.selectFrom("notifications").select(["id", "datacenter"]).where("id", "like", "msg_rx_%").orderBy("id").execute();
      assert.deepEqual(rxDeliveries.map((n) => [n.id, n.datacenter]), [["msg_rx_after", "DE1"], ["msg_rx_before", "DE2"]]);
    });
  });
}

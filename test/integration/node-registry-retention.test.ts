/**
 * The node registry's rows do not pile up: on each dialect, the retention role of a running node
 * forgets the nodes that stopped, or wrote their last heartbeat, cluster.forgetNodesAfter ago
 * (whatever their data center), and keeps the others; a node whose heartbeats could not reach the
 * store for that long writes its row again when they do, so that its data center is not judged
 * dead while it runs.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ManualClock } from "../../src/lib/clock.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import { NodeRegistry } from "../../src/cluster/node-registry.ts";
import { StoreHealth } from "../../src/cluster/store-health.ts";
import { datacenterHeartbeat } from "../../src/store/queries/adoptions.ts";
import { forgetNodes, listNodes, markNodeStopped, upsertNodeLife } from "../../src/store/queries/nodes.ts";
import type { Kysely } from "kysely";
import type { Database } from "../../src/store/database.ts";
import { DIALECTS, suiteStore, withDialect } from "../support/dialects.ts";
import { eventually, startTestNode, type TestNode } from "../support/test-node.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A row of a node that started at `startedAt`, last beat at `lastSeenAt`, and maybe stopped then. */
async function pastNode(db: Kysely<Database>, id: string, datacenter: "DE1" | "DE2", lastSeenAt: number, stopped: boolean): Promise<void> {
  await upsertNodeLife(db, {
    id,
    instance: `${id}:1`,
    region: "DE",
    datacenter,
    roles: JSON.stringify(["sender"]),
    version: "0.0.1",
    hostname: `host-${id}`,
    pid: 1,
    api_url: null,
    started_at: lastSeenAt - HOUR,
    last_seen_at: lastSeenAt,
    active_calls: 0,
  });
  if (stopped) await markNodeStopped(db, id, `${id}:1`, lastSeenAt);
}

for (const dialect of DIALECTS) {
  describe(`${dialect}: the retention role forgets old nodes`, () => {
    const store = withDialect(dialect);
    let node: TestNode;
    before(async () => {
      node = await startTestNode({ ...store.overrides(), "node.roles": "api,retention", "retention.interval": "200ms", "cluster.forgetNodesAfter": "2d" });
    });
    after(async () => {
      await node.stop();
    });

    it("removes nodes stopped or silent for cluster.forgetNodesAfter, of either data center, and keeps the rest", async () => {
      const db = node.node.context.store.db;
      const now = Date.now();
      await pastNode(db, "stopped-long-ago", "DE1", now - 3 * DAY, true);
      await pastNode(db, "silent-long-ago", "DE2", now - 3 * DAY, false);
      await pastNode(db, "stopped-yesterday", "DE1", now - DAY, true);
      await pastNode(db, "silent-an-hour", "DE2", now - HOUR, false);
      const ids = await eventually(
        async () => {
          const left = (await listNodes(db)).map((n) => n.id).sort();
          return left.includes("stopped-long-ago") || left.includes("silent-long-ago") ? undefined : left;
        },
        10_000,
        "the retention role to forget the old nodes",
      );
      assert.deepEqual(ids, [node.node.context.nodeId, "silent-an-hour", "stopped-yesterday"].sort());
    });
  });

  describe(`${dialect}: a forgotten node that beats again`, () => {
    const suite = suiteStore(dialect);

    it("writes its row again, with its life's start, so that its data center is alive again", async () => {
      const t0 = Date.UTC(2026, 10, 1);
      const clock = new ManualClock(t0);
      const registry = new NodeRegistry({
        db: suite.store.db,
        clock,
        logger: silentLogger(),
        id: "de2-node-a",
        instance: "de2-node-a:aaa",
        region: "DE",
        datacenter: "DE2",
        roles: ["sender"],
        version: "9.9.9",
        apiUrl: () => null,
        heartbeatMs: 1000,
        activeCalls: () => 2,
        health: new StoreHealth(clock.now()),
        hostname: "host-1",
      });
      await registry.register();
      // Cut off from the suite.store for three days: another data center's retention forgets it.
      await clock.advance(3 * DAY);
      assert.equal(await forgetNodes(suite.store.db, clock.now() - 2 * DAY), 1);
      assert.deepEqual(await datacenterHeartbeat(suite.store.db, "DE2"), { nodes: 0, lastSeenAt: null });
      await registry.beat();
      const rows = await listNodes(suite.store.db);
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.instance, "de2-node-a:aaa");
      assert.equal(Number(rows[0]!.started_at), t0);
      assert.equal(Number(rows[0]!.last_seen_at), clock.now());
      assert.equal(rows[0]!.active_calls, 2);
      assert.equal(rows[0]!.stopped_at, null);
      assert.deepEqual(await datacenterHeartbeat(suite.store.db, "DE2"), { nodes: 1, lastSeenAt: clock.now() });
      // And beats on as before.
      await clock.advance(1000);
      await registry.beat();
      assert.equal(Number((await listNodes(suite.store.db))[0]!.last_seen_at), clock.now());
      await registry.stop();
    });
  });
}

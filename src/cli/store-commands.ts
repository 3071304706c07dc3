/**
 * The store and cluster commands of the CLI:
 *   faxline migrate [--check]        runs pending migrations (or, with --check, lists them and
 *                                    exits 1 when there are any, changing nothing)
 *   faxline nodes [--json]           the node registry: every node of the store, its status
 *   faxline store copy --to URL      copies this node's store (stopped) into an empty PostgreSQL
 *                                    database and verifies the row counts
 *   faxline datacenter adopt --from DC --to DC
 *                                    moves everything one data center owns to the other of its
 *                                    region (planned maintenance; the failover does it by itself)
 */
import { resolve } from "node:path";
import { ConfigError } from "../config/config-error.ts";
import type { FaxlineConfig } from "../config/schema.ts";
import { nodeStatus } from "../cluster/node-registry.ts";
import { liveNodeLocks } from "../roles/data-dir-lock.ts";
import { copyStore, StoreNotEmptyError } from "../store/copy-store.ts";
import { openStore } from "../store/dialects/open-store.ts";
import { isPostgresUrl } from "../store/dialects/postgres/postgres-url.ts";
import { listClusterLeases } from "../store/queries/cluster-leases.ts";
import { listNodes } from "../store/queries/nodes.ts";
import { listAdoptions } from "../store/queries/adoptions.ts";
import { adoptionSummary, adoptNow } from "../cluster/datacenter-adoption.ts";
import { DATACENTER_REGION, DATACENTERS, type Datacenter } from "../config/schema.ts";
import { randomToken } from "../lib/ids.ts";
import { hostname } from "node:os";

export async function migrateCommand(config: FaxlineConfig, options: { check: boolean }): Promise<number> {
  const store = await openStore(config, { migrate: false });
  try {
    const before = await store.migrations();
    const pending = before.filter((m) => m.executedAt === null);
    if (options.check) {
      if (pending.length === 0) {
        console.log(`The store ${store.location} is up to date (${before.length} migrations).`);
        return 0;
      }
      console.log(`The store ${store.location} has ${pending.length} pending migration(s):`);
      for (const m of pending) console.log(`  ${m.name}`);
      return 1;
    }
    await store.migrate();
    if (pending.length === 0) console.log(`The store ${store.location} was up to date (${before.length} migrations).`);
    else {
      console.log(`Migrated the store ${store.location}:`);
      for (const m of pending) console.log(`  ${m.name}`);
    }
    return 0;
  } finally {
    await store.close();
  }
}

const ago = (ms: number) => (ms < 120_000 ? `${Math.round(ms / 1000)} s ago` : ms < 7_200_000 ? `${Math.round(ms / 60_000)} min ago` : `${Math.round(ms / 3_600_000)} h ago`);

export async function nodesCommand(config: FaxlineConfig, options: { json: boolean }): Promise<number> {
  const store = await openStore(config);
  try {
    const now = Date.now();
    const rows = await listNodes(store.db);
    const leases = await listClusterLeases(store.db);
    const nodes = rows.map((n) => ({
      id: n.id,
      status: nodeStatus(n, now, config.cluster.heartbeatInterval),
      region: n.region,
      datacenter: n.datacenter,
      roles: JSON.parse(n.roles) as string[],
      version: n.version,
      host: n.hostname,
      pid: n.pid,
      apiUrl: n.api_url,
      startedAt: new Date(Number(n.started_at)).toISOString(),
      lastSeenAt: new Date(Number(n.last_seen_at)).toISOString(),
      stoppedAt: n.stopped_at === null ? null : new Date(Number(n.stopped_at)).toISOString(),
      activeCalls: n.active_calls,
      duties: leases.filter((l) => l.holder.startsWith(`${n.id}:`) && Number(l.lease_until) >= now).map((l) => l.name),
    }));
    const adoptions = (await listAdoptions(store.db, 10)).map((a) => ({
      id: a.id,
      mode: a.mode,
      from: a.from_datacenter,
      to: a.to_datacenter,
      at: new Date(Number(a.adopted_at)).toISOString(),
      node: a.node.split(":")[0],
      jobs: a.jobs,
      openJobs: a.open_jobs,
      recipients: a.recipients,
      notifications: a.notifications,
    }));
    if (options.json) {
      console.log(JSON.stringify({ store: store.location, nodes, adoptions }, null, 2));
      return 0;
    }
    console.log(`Store ${store.location}`);
    if (nodes.length === 0) {
      console.log("No node has run on this store yet.");
      return 0;
    }
    for (const n of nodes) {
      const seen = n.status === "stopped" ? `stopped ${ago(now - Date.parse(n.stoppedAt!))}` : `last seen ${ago(now - Date.parse(n.lastSeenAt))}`;
      console.log(
        `${n.id.padEnd(28)} ${n.datacenter.padEnd(4)} ${n.status.padEnd(15)} ${seen.padEnd(20)} calls ${String(n.activeCalls).padStart(3)}  ${n.roles.join(",")}  v${n.version}  ${n.host}${n.apiUrl ? `  ${n.apiUrl}` : ""}${n.duties.length > 0 ? `  duties: ${n.duties.join(", ")}` : ""}`,
      );
    }
    if (adoptions.length > 0) {
      console.log("Adoptions (newest first):");
      for (const a of adoptions) console.log(`  ${a.at}  ${a.from} → ${a.to}  ${a.mode.padEnd(8)} ${a.jobs} jobs (${a.openJobs} unfinished) by ${a.node}`);
    }
    return 0;
  } finally {
    await store.close();
  }
}

export async function storeCopyCommand(config: FaxlineConfig, options: { to: string }): Promise<number> {
  if (!isPostgresUrl(options.to)) throw new ConfigError("faxline store copy --to needs a postgres:// URL of an empty database");
  if (config.store.url.trim() !== "" && config.store.url.trim() === options.to.trim()) throw new ConfigError("faxline store copy: --to names the store it would copy from");
  const live = config.store.url.trim() === "" ? liveNodeLocks(resolve(config.store.dataDir)) : [];
  if (live.length > 0) {
    throw new ConfigError(
      `A node is running on ${resolve(config.store.dataDir)} (${live.map((l) => `${l.nodeId}, ${l.holder}`).join("; ")}); stop it before copying its store, so that nothing changes during the copy`,
    );
  }
  const source = await openStore(config);
  try {
    const target = await openStore({ ...config, store: { ...config.store, url: options.to } });
    try {
      console.log(`Copying ${source.location} to ${target.location} …`);
      let result;
      try {
        result = await copyStore(source, target, {
          onProgress: (table, rows) => {
            if (rows % 5000 === 0) console.log(`  ${table}: ${rows} rows`);
          },
        });
      } catch (err) {
        if (err instanceof StoreNotEmptyError) throw new ConfigError(err.message);
        throw err;
      }
      for (const t of result.tables) console.log(`  ${t.table.padEnd(24)} ${String(t.source).padStart(9)} → ${String(t.target).padStart(9)}${t.source === t.target ? "" : "  MISMATCH"}`);
      if (!result.verified) {
        console.error("faxline: the row counts of the copy differ from the source; do not use the copy");
        return 1;
      }
      console.log(`Copied and verified. Point every node at it with store.url (FAXLINE_STORE_URL=${target.location}).`);
      return 0;
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

export async function datacenterAdoptCommand(config: FaxlineConfig, options: { from: string; to: string }): Promise<number> {
  const pick = (value: string, flag: string): Datacenter => {
    const dc = DATACENTERS.find((d) => d === value.trim().toUpperCase());
    if (!dc) throw new ConfigError(`faxline datacenter adopt: --${flag} must be one of ${DATACENTERS.join(", ")}, not "${value}"`);
    return dc;
  };
  const from = pick(options.from, "from");
  const to = pick(options.to, "to");
  if (from === to) throw new ConfigError("faxline datacenter adopt: --from and --to name the same data center");
  if (DATACENTER_REGION[from] !== DATACENTER_REGION[to]) {
    throw new ConfigError(`faxline datacenter adopt: ${from} lies in region ${DATACENTER_REGION[from]} and ${to} in ${DATACENTER_REGION[to]}; jobs move only within a region`);
  }
  const store = await openStore(config);
  try {
    const now = Date.now();
    const running = (await listNodes(store.db)).filter((n) => n.datacenter === from && nodeStatus(n, now, config.cluster.heartbeatInterval) === "running");
    const row = await adoptNow(store.db, { from, to, node: `cli@${hostname()}:${randomToken(6)}`, now });
    if (row === null) {
      console.log(`${from} owns no jobs; nothing to adopt.`);
      return 0;
    }
    console.log(`Jobs ${adoptionSummary(row)}.`);
    if (running.length > 0) {
      console.log(
        `${running.length} node(s) of ${from} still run (${running.map((n) => n.id).join(", ")}): they finish the calls they are placing and record them, and own only the jobs they accept from now on.`,
      );
    }
    return 0;
  } finally {
    await store.close();
  }
}

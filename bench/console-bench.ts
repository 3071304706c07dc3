/**
 * `npm run bench:console` — does the console's job list stay fast with 100 000 jobs? A node (api
 * role) on a fresh store gets one login with `--jobs` completed jobs (written straight into the
 * store, as bench:api does; every fifth one failed) and the same login's job list is read through
 * HTTP with a console session, as the browser reads it:
 *
 *  - the first page (25 newest), the page 50 000 jobs deep (by cursor), the last page;
 *  - filters: failed only, a date range of one hour, a number, a reference, free search by job id;
 *  - one live-update poll with 100 open jobs (what each open console tab costs per second);
 *  - one live-chart sample of the store (the region's calls from the heartbeats and each data
 *    center's open work: what each console node reads every console.chartInterval).
 *
 * Each is run --reps times after one warm-up; the median and the 95th percentile are shown, and
 * each as a ratio to the first page in the same run (the paging goal: deep pages cost what the
 * first one costs). With `--store postgres` the same runs on a throwaway PostgreSQL cluster too.
 *
 * Options: --jobs N (100000), --reps N (50), --store sqlite|postgres (sqlite)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import { createLogin } from "../src/accounts/accounts.ts";
import { loadConfig } from "../src/config/load.ts";
import { silentLogger } from "../src/lib/logger.ts";
import { startNode } from "../src/roles/start-node.ts";
import { startPostgresCluster } from "../test/support/postgres-cluster.ts";
import { seedCompletedJobs } from "../test/support/seed-completed-jobs.ts";

const { values: opts } = parseArgs({
  options: { jobs: { type: "string", default: "100000" }, reps: { type: "string", default: "50" }, store: { type: "string", default: "sqlite" } },
});
const JOBS = Number(opts.jobs);
const REPS = Number(opts.reps);
const ACCOUNT = { custNr: "88888CB", login: "bench", password: "bench-password" };

interface Row {
  name: string;
  p50: number;
  p95: number;
  rows: number;
}

async function timed(run: () => Promise<number>): Promise<{ p50: number; p95: number; rows: number }> {
  let rows = await run();
  const times: number[] = [];
  for (let i = 0; i < REPS; i++) {
    const t0 = performance.now();
    rows = await run();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length / 2)]!, p95: times[Math.min(times.length - 1, Math.floor(times.length * 0.95))]!, rows };
}

async function benchStore(kind: "sqlite" | "postgres", pgUrl: string | null): Promise<{ rows: Row[]; seedSeconds: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), "faxline-console-bench-"));
  const config = loadConfig({
    env: {},
    overrides: { "store.dataDir": dataDir, "store.url": pgUrl ?? "", "http.host": "127.0.0.1", "http.port": 0, "node.roles": "api", "log.level": "silent" },
  });
  const node = await startNode(config, silentLogger());
  try {
    const db = node.context.store.db;
    await createLogin(db, { ...ACCOUNT, isTest: true }, Date.now());
    const t0 = performance.now();
    const first = Date.now() - JOBS * 60_000;
    const ids = await seedCompletedJobs(db, {
      custNr: ACCOUNT.custNr,
      login: ACCOUNT.login,
      datacenter: config.node.datacenter,
      count: JOBS,
      firstCompletedAt: first,
      spacingMs: 60_000,
      customerDefinedId: (i) => `INV-${i}`,
    });
    // Every fifth job failed, as a mixed history has them.
    for (let i = 0; i < ids.length; i += 5000) {
      const batch = ids.slice(i, i + 5000).filter((_, k) => (i + k) % 5 === 0);
      await db.updateTable("recipients").set({ state: "failed", status: "BUSY", reason_code: "line_busy" }).where("job_id", "in", batch).execute();
    }
    // The newest 100 are still open (the node runs no sender): what live updates compare each second.
    const open = ids.slice(-100);
    await db.updateTable("jobs").set({ state: "active", completed_at: null }).where("id", "in", open).execute();
    await db.updateTable("recipients").set({ state: "ready", status: null, finished_at: null }).where("job_id", "in", open).execute();
    if (kind === "postgres") await sql`analyze`.execute(db);
    const seedSeconds = (performance.now() - t0) / 1000;

    const signIn = await fetch(`${node.url}/console/api/session`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ login: ACCOUNT.login, password: ACCOUNT.password }) });
    const cookie = /faxline_session=[^;]+/.exec(signIn.headers.get("set-cookie") ?? "")?.[0];
    if (!cookie) throw new Error(`sign-in failed: ${signIn.status}`);
    const list = async (query: string) => {
      const res = await fetch(`${node.url}/console/api/jobs?${query}`, { headers: { cookie } });
      if (res.status !== 200) throw new Error(`${query}: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { jobs: unknown[]; next: string | null });
    };
    // Cursors 50 000 jobs deep and at the end: the (created_at, id) of those jobs.
    const cursorAt = async (index: number) => {
      const job = await db.selectFrom("jobs").select(["id", "created_at"]).where("id", "=", ids[index]!).executeTakeFirstOrThrow();
      return encodeURIComponent(`${Number(job.created_at)}~${job.id}`);
    };
    const deep = await cursorAt(Math.floor(JOBS / 2));
    const end = await cursorAt(20);
    const hourFrom = new Date(first + Math.floor(JOBS / 3) * 60_000).toISOString();
    const hourTo = new Date(first + Math.floor(JOBS / 3) * 60_000 + 3_600_000).toISOString();
    const measurements: [string, () => Promise<number>][] = [
      ["first page (25 newest)", async () => (await list("limit=25")).jobs.length],
      [`page ${Math.floor(JOBS / 2).toLocaleString("en")} jobs deep (cursor)`, async () => (await list(`limit=25&before=${deep}`)).jobs.length],
      ["last page (cursor)", async () => (await list(`limit=25&before=${end}`)).jobs.length],
      ["failed only", async () => (await list("limit=25&status=failed")).jobs.length],
      ["one hour (from/to)", async () => (await list(`limit=25&from=${encodeURIComponent(hourFrom)}&to=${encodeURIComponent(hourTo)}`)).jobs.length],
      ["number (digits)", async () => (await list(`limit=25&number=${encodeURIComponent("555 012345")}`)).jobs.length],
      ["reference", async () => (await list(`limit=25&reference=INV-4242`)).jobs.length],
      ["search by job id", async () => (await list(`limit=25&q=${ids[777]}`)).jobs.length],
      [
        "live-update poll (100 open jobs; per tab and second)",
        async () => {
          const { consoleJobChanges } = await import("../src/store/queries/console-jobs.ts");
          return (await consoleJobChanges(db, { login: ACCOUNT.login, datacenters: [config.node.datacenter] }, Date.now() - 1000)).open.size;
        },
      ],
      [
        "live-chart sample: calls and open work (per console node and chartInterval)",
        async () => {
          const { readRegionActivity } = await import("../src/cluster/region-activity.ts");
          const reading = await readRegionActivity(db, { region: config.node.region, datacenters: ["DE1", "DE2"], heartbeatMs: config.cluster.heartbeatInterval, now: Date.now() });
          return Object.values(reading.queues).reduce((n, w) => n + w.due + w.later + w.inCall + w.toRender, 0);
        },
      ],
    ];
    const rows: Row[] = [];
    for (const [name, run] of measurements) rows.push({ name, ...(await timed(run)) });
    return { rows, seedSeconds };
  } finally {
    await node.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function print(kind: string, result: { rows: Row[]; seedSeconds: number }) {
  console.log(`### ${kind}: ${JOBS.toLocaleString("en")} jobs of one login (seeded in ${result.seedSeconds.toFixed(1)} s), ${REPS} reads each after a warm-up`);
  console.log("");
  console.log("| read | rows | p50 ms | p95 ms | p50 / first page |");
  console.log("|---|---:|---:|---:|---:|");
  const base = result.rows[0]!.p50;
  for (const r of result.rows) console.log(`| ${r.name} | ${r.rows} | ${r.p50.toFixed(2)} | ${r.p95.toFixed(2)} | ${(r.p50 / base).toFixed(2)} |`);
  console.log("");
}

console.log(`bench:console on ${cpus()[0]?.model ?? "?"} (${cpus().length} cores), Node ${process.version}, ${new Date().toISOString().slice(0, 10)}`);
console.log("");
print("SQLite", await benchStore("sqlite", null));
if (opts.store === "postgres") {
  const cluster = await startPostgresCluster({ name: "console-bench", settings: { fsync: "on", synchronous_commit: "on", shared_buffers: "256MB" } });
  try {
    await cluster.query("create database faxline_console_bench");
    print("PostgreSQL", await benchStore("postgres", cluster.url("faxline_console_bench")));
  } finally {
    cluster.stop();
    cluster.remove();
  }
}

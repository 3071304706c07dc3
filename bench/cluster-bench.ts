/**
 * `npm run bench:cluster` — several nodes on one PostgreSQL database, on this machine.
 *
 * Every node is a real `faxline serve` process (the api role only, so the figures are those of
 * the HTTP layer and the shared store). Against a throwaway PostgreSQL cluster with durable
 * settings (fsync and synchronous_commit on; or `--pg-url`):
 *
 *  1. intake: `--jobs` POST /fax per node count, spread round-robin over 1, 2 and 4 nodes with
 *     `--concurrency` requests in flight, after a warm-up; jobs/s, p50/p99 latency, and the CPU
 *     each node and the database used (from /proc, in % of one core over the load);
 *  2. reads: with `--reports` completed reports stored, GET one report by random id and GET the
 *     list (oldest 1000), spread over the nodes;
 *  3. the same intake and reads against one node on the embedded SQLite store, as the reference
 *     of the same run;
 *  4. claim latency: node A runs only the api role, node R only the scheduler, node S only the
 *     sender, all polling once a minute, so that only the store's wake-ups (LISTEN/NOTIFY) move
 *     the work: for `--claims` jobs sent one after another, the time from the 201 at the client
 *     to the job's render on R, from that render's commit to the start of its first call on S
 *     (the cross-node claim latency proper), and in all.
 *
 * Options: --jobs N (2000) --concurrency N (16) --reports N (100000) --gets N (2000)
 *          --lists N (20) --claims N (200) --nodes LIST (1,2,4) --pg-url URL
 */
import { readFileSync, readdirSync } from "node:fs";
import { cpus, platform, release, totalmem } from "node:os";
import { parseArgs } from "node:util";
import { execFileSync } from "node:child_process";
import { openStore } from "../src/store/dialects/open-store.ts";
import { testConfig, tempDir } from "../test/support/test-node.ts";
import { createAccountWithCli, startChildNode, stopAllChildNodes, type ChildNode } from "../test/support/child-node.ts";
import { pgQuery, startPostgresCluster, withDatabase, type PostgresCluster } from "../test/support/postgres-cluster.ts";
import { seedCompletedJobs } from "../test/support/seed-completed-jobs.ts";
import { load as timedLoad, percentile, type LoadResult } from "./http-load.ts";

const load = (count: number, concurrency: number, expect: number, request: (i: number) => Promise<Response>) => timedLoad("load", count, concurrency, expect, request);

const { values: opts } = parseArgs({
  options: {
    jobs: { type: "string", default: "2000" },
    concurrency: { type: "string", default: "16" },
    reports: { type: "string", default: "100000" },
    gets: { type: "string", default: "2000" },
    lists: { type: "string", default: "20" },
    claims: { type: "string", default: "200" },
    nodes: { type: "string", default: "1,2,4" },
    "pg-url": { type: "string" },
  },
});
const JOBS = Number(opts.jobs);
const CONCURRENCY = Number(opts.concurrency);
const REPORTS = Number(opts.reports);
const GETS = Number(opts.gets);
const LISTS = Number(opts.lists);
const CLAIMS = Number(opts.claims);
const NODE_COUNTS = opts.nodes.split(",").map(Number);

const ACCOUNT = { custNr: "99999TE", login: "bench", password: "bench-pass-1" };
const HEADERS = { "content-type": "application/json", authorization: `Basic ${Buffer.from(`${ACCOUNT.login}:${ACCOUNT.password}`).toString("base64")}` };
const TEXT = Buffer.from("Benchmark fax.\nA short letter of two lines.\n").toString("base64");
const jobBody = (i: number) => JSON.stringify({ recipients: [{ number: `+4930555${String(i % 100_000).padStart(5, "0")}` }], documents: [{ name: "letter.txt", data: TEXT }] });
const CLK_TCK = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** CPU seconds (user + system) a process has used so far. */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return 0;
  }
}

/** CPU seconds of a PostgreSQL cluster: the postmaster and all its children. */
function clusterCpuSeconds(cluster: PostgresCluster | null): number {
  const root = cluster?.pid();
  if (!root) return 0;
  let total = cpuSeconds(root);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.split(") ")[1]!.split(" ")[1]);
      if (ppid === root) total += cpuSeconds(Number(entry));
    } catch {
      /* gone */
    }
  }
  return total;
}

const ms = (v: number) => v.toFixed(2);
const rate = (v: number) => Math.round(v).toLocaleString("en-US");
const pct = (v: number) => `${Math.round(v * 100)} %`;

type Load = LoadResult;

interface SetupRun {
  label: string;
  nodes: number;
  intake: Load;
  nodeCpu: number[];
  dbCpu: number | null;
  get: Load;
  list: Load;
}

/** Intake and reads over `count` api nodes on the store `env` names. */
async function runSetup(label: string, count: number, env: Record<string, string>, cluster: PostgresCluster | null, database: string | null): Promise<SetupRun> {
  const dirs = Array.from({ length: count }, (_, i) => tempDir(`faxline-bench-node-${i}-`));
  const nodes: ChildNode[] = [];
  try {
    await createAccountWithCli(dirs[0]!.path, ACCOUNT, { env });
    for (const [i, dir] of dirs.entries()) {
      nodes.push(
        await startChildNode({
          name: `node-${i + 1}`,
          dataDir: dir.path,
          env: { ...env, FAXLINE_ROLES: "api", FAXLINE_AUTH_CACHE_TTL: "1h", FAXLINE_LOG_LEVEL: "warn", FAXLINE_NODE_ID: `bench-${i + 1}` },
        }),
      );
    }
    const urls = nodes.map((n) => `${n.url}/rest/v1/${ACCOUNT.custNr}`);
    const post = (i: number) => fetch(`${urls[i % urls.length]}/fax`, { method: "POST", headers: HEADERS, body: jobBody(i) });
    await load(Math.min(400, JOBS), CONCURRENCY, 201, post);
    const cpu0 = nodes.map((n) => cpuSeconds(n.pid));
    const db0 = clusterCpuSeconds(cluster);
    const intake = await load(JOBS, CONCURRENCY, 201, post);
    const nodeCpu = nodes.map((n, i) => (cpuSeconds(n.pid) - cpu0[i]!) / intake.seconds);
    const dbCpu = cluster ? (clusterCpuSeconds(cluster) - db0) / intake.seconds : null;

    // Reports, written straight into the shared store.
    const store = await openStore(testConfig(dirs[0]!.path, env.FAXLINE_STORE_URL ? { "store.url": env.FAXLINE_STORE_URL } : {}));
    let ids: string[];
    try {
      ids = await seedCompletedJobs(store.db, { custNr: ACCOUNT.custNr, login: ACCOUNT.login, datacenter: "DE1", count: REPORTS, firstCompletedAt: Date.now() - 7 * 86_400_000, spacingMs: 5 });
      if (database !== null && cluster !== null) await pgQuery(withDatabase(cluster.url(), database), "analyze");
    } finally {
      await store.close();
    }
    const pick = () => ids[Math.floor(Math.random() * ids.length)]!;
    const get = (i: number) => fetch(`${urls[i % urls.length]}/fax/reports/${pick()}`, { headers: HEADERS });
    await load(Math.min(200, GETS), CONCURRENCY, 200, get);
    const getLoad = await load(GETS, 1, 200, get);
    const list = await load(LISTS, 1, 200, (i) => fetch(`${urls[i % urls.length]}/fax/reports`, { headers: HEADERS }));
    return { label, nodes: count, intake, nodeCpu, dbCpu, get: getLoad, list };
  } finally {
    await stopAllChildNodes();
    for (const d of dirs) d.remove();
  }
}

/**
 * Claim latency across nodes: node A runs only the api role, node R only the scheduler, node S
 * only the sender, all polling once a minute, so that only the store's wake-ups move the work:
 * A's 201 wakes R (render), R's commit of the rendered job wakes S (call).
 */
async function claimLatency(env: Record<string, string>, url: string): Promise<{ toRender: number[]; toCall: number[]; renderToCall: number[] }> {
  const dirs = [tempDir("faxline-bench-a-"), tempDir("faxline-bench-r-"), tempDir("faxline-bench-s-")];
  try {
    await createAccountWithCli(dirs[0]!.path, ACCOUNT, { env });
    const common = { ...env, FAXLINE_SCHEDULER_POLL_INTERVAL: "60s", FAXLINE_LOG_LEVEL: "warn", FAXLINE_AUTH_CACHE_TTL: "1h" };
    const a = await startChildNode({ name: "A", dataDir: dirs[0]!.path, pollInterval: "60s", env: { ...common, FAXLINE_ROLES: "api", FAXLINE_NODE_ID: "bench-a" } });
    await startChildNode({ name: "R", dataDir: dirs[1]!.path, pollInterval: "60s", ready: "log", env: { ...common, FAXLINE_ROLES: "scheduler", FAXLINE_NODE_ID: "bench-r" } });
    await startChildNode({ name: "S", dataDir: dirs[2]!.path, pollInterval: "60s", ready: "log", env: { ...common, FAXLINE_ROLES: "sender", FAXLINE_NODE_ID: "bench-s" } });
    const toRender: number[] = [];
    const toCall: number[] = [];
    const renderToCall: number[] = [];
    for (let i = 0; i < CLAIMS + 5; i++) {
      const res = await fetch(`${a.url}/rest/v1/${ACCOUNT.custNr}/fax`, { method: "POST", headers: HEADERS, body: jobBody(i) });
      const acknowledged = Date.now();
      const { jobId } = (await res.json()) as { jobId: string };
      for (;;) {
        const rows = await pgQuery<{ started_at: number | null; rendered_at: number | null }>(
          url,
          "select (select min(started_at) from attempts where job_id = $1) as started_at, (select min(created_at) from fax_images where job_id = $1) as rendered_at",
          [jobId],
        );
        const row = rows[0];
        if (row?.started_at != null && row.rendered_at != null) {
          // The first five warm the render worker and the connections up.
          if (i >= 5) {
            toRender.push(Number(row.rendered_at) - acknowledged);
            toCall.push(Number(row.started_at) - acknowledged);
            renderToCall.push(Number(row.started_at) - Number(row.rendered_at));
          }
          break;
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    }
    const sort = (v: number[]) => v.sort((x, y) => x - y);
    return { toRender: sort(toRender), toCall: sort(toCall), renderToCall: sort(renderToCall) };
  } finally {
    await stopAllChildNodes();
    for (const d of dirs) d.remove();
  }
}

async function main(): Promise<void> {
  const cpu = cpus();
  console.log("Faxline bench:cluster");
  console.log(`date      ${new Date().toISOString()}`);
  console.log(`machine   ${cpu[0]?.model.trim() ?? "unknown CPU"}, ${cpu.length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${platform()} ${release()}`);
  console.log(`runtime   Node ${process.version}; every node a faxline serve process (api role), the client in this process`);
  console.log(`settings  ${JOBS} jobs per setup, concurrency ${CONCURRENCY}, ${REPORTS} stored reports, ${GETS} GETs by id (one client), ${LISTS} list GETs, ${CLAIMS} claim samples`);

  let cluster: PostgresCluster | null = null;
  let base = opts["pg-url"] ?? null;
  if (base === null) {
    cluster = await startPostgresCluster({ name: "bench", settings: { fsync: "on", full_page_writes: "on", synchronous_commit: "on", shared_buffers: "256MB" } });
    base = cluster.url();
    const version = await cluster.query<{ server_version: string }>("show server_version");
    console.log(`postgres  ${version[0]?.server_version ?? "?"}, a throwaway cluster on this machine (fsync on, synchronous_commit on, shared_buffers 256MB)`);
  } else {
    console.log(`postgres  ${base.replace(/:[^:@/]*@/, ":***@")} (given; its CPU is not measured)`);
  }
  console.log("");
  try {
    const runs: SetupRun[] = [];
    console.error("SQLite, one node …");
    runs.push(await runSetup("SQLite", 1, {}, null, null));
    for (const n of NODE_COUNTS) {
      const database = `faxline_bench_${n}`;
      await pgQuery(withDatabase(base, "postgres"), `create database ${database}`);
      console.error(`PostgreSQL, ${n} node(s) …`);
      runs.push(await runSetup("PostgreSQL", n, { FAXLINE_STORE_URL: withDatabase(base, database) }, cluster, database));
    }
    const lite = runs[0]!;
    console.log("| store | nodes | intake jobs/s | vs SQLite | p50 ms | p99 ms | CPU per node (% of a core) | database CPU | GET by id p50 / p99 ms | list p50 ms |");
    console.log("|---|---:|---:|---:|---:|---:|---|---:|---:|---:|");
    for (const r of runs) {
      console.log(
        `| ${r.label} | ${r.nodes} | ${rate(r.intake.perSecond)} | ${pct(r.intake.perSecond / lite.intake.perSecond)} | ${ms(r.intake.p50)} | ${ms(r.intake.p99)} | ${r.nodeCpu.map(pct).join(", ")} | ${r.dbCpu === null ? "–" : pct(r.dbCpu)} | ${ms(r.get.p50)} / ${ms(r.get.p99)} | ${ms(r.list.p50)} |`,
      );
    }
    console.log("");
    await pgQuery(withDatabase(base, "postgres"), "create database faxline_bench_claims");
    console.error("claim latency …");
    const claims = await claimLatency({ FAXLINE_STORE_URL: withDatabase(base, "faxline_bench_claims") }, withDatabase(base, "faxline_bench_claims"));
    const show = (v: number[]) => `p50 ${percentile(v, 50)} ms, p99 ${percentile(v, 99)} ms, max ${v.at(-1)} ms`;
    console.log(`claim latency, ${claims.toCall.length} jobs sent one at a time to an api-only node A, rendered by a scheduler-only node R and dialled by a sender-only node S, all polling once a minute:`);
    console.log(`  201 on A → rendered on R (wake-up, claim and render):   ${show(claims.toRender)}`);
    console.log(`  rendered on R → first call started on S (wake-up, claim): ${show(claims.renderToCall)}`);
    console.log(`  201 on A → first call started on S:                      ${show(claims.toCall)}`);
  } finally {
    cluster?.remove();
  }
}

await main();

/**
 * `npm run bench:api` — how fast the REST API and the store answer, on this machine.
 *
 * Starts one in-process node with only the api role (no scheduler, sender or retention: this
 * measures the HTTP layer, authentication, validation and the SQLite store, not the engine) on
 * a fresh data directory, adds a test login, and measures over real HTTP with Node's global
 * fetch (undici, keep-alive):
 *
 *  1. baseline: a trivial Fastify route (POST that answers 201 {"jobId"}) in the same process,
 *     with the same client, body, headers and concurrency: the ceiling of this client on this
 *     machine, to which intake is compared;
 *  2. intake: POST /{custNr}/fax with one recipient and a short text document;
 *  3. with `--reports` completed reports stored (written straight through the store's Kysely
 *     db in batched transactions: a job, one recipient and one delivered attempt each, as the
 *     engine leaves them once the documents are purged): GET one report by random id (with
 *     `--concurrency` clients, and with one client for the unloaded latency), and GET the list
 *     (the oldest 1000, one client).
 *
 * Each load runs `--rounds` times after a warm-up, the baseline and intake rounds taking turns;
 * the table shows the median round (by throughput) and the spread of the rounds' throughput.
 * Client and server share one process and event loop, for the baseline as for Faxline.
 *
 * With `--store postgres`, the same loads run a second time in the same run on a PostgreSQL
 * store (a throwaway cluster with durable settings, or `--pg-url`), after the SQLite run that
 * is their reference, and a table sets both side by side. Several nodes: `npm run bench:cluster`.
 *
 * Options: --jobs N (2000) --concurrency N (16) --reports N (100000) --gets N (2000)
 *          --lists N (50) --rounds N (5) --keep (keep the data directory)
 *          --store sqlite|postgres (sqlite) --pg-url URL
 */
import { mkdtempSync, rmSync, statSync, existsSync } from "node:fs";
import { cpus, platform, release, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { performance } from "node:perf_hooks";
import Fastify from "fastify";
import { createLogin } from "../src/accounts/accounts.ts";
import { loadConfig } from "../src/config/load.ts";
import { silentLogger } from "../src/lib/logger.ts";
import { startNode } from "../src/roles/start-node.ts";
import { sqliteStoreFile as storeFile } from "../src/store/dialects/open-store.ts";
import type { Database } from "../src/store/database.ts";
import { sql, type Kysely } from "kysely";
import { startPostgresCluster } from "../test/support/postgres-cluster.ts";
import { seedCompletedJobs } from "../test/support/seed-completed-jobs.ts";
import { load, type LoadResult } from "./http-load.ts";

const { values: opts } = parseArgs({
  options: {
    jobs: { type: "string", default: "2000" },
    concurrency: { type: "string", default: "16" },
    reports: { type: "string", default: "100000" },
    gets: { type: "string", default: "2000" },
    lists: { type: "string", default: "50" },
    rounds: { type: "string", default: "5" },
    keep: { type: "boolean", default: false },
    store: { type: "string", default: "sqlite" },
    "pg-url": { type: "string" },
  },
});
const JOBS = Number(opts.jobs);
const CONCURRENCY = Number(opts.concurrency);
const REPORTS = Number(opts.reports);
const GETS = Number(opts.gets);
const LISTS = Number(opts.lists);
const ROUNDS = Math.max(1, Number(opts.rounds));

const ACCOUNT = { custNr: "99999TE", login: "bench", password: "bench-pass-1" };
const AUTH = `Basic ${Buffer.from(`${ACCOUNT.login}:${ACCOUNT.password}`).toString("base64")}`;
const HEADERS = { "content-type": "application/json", authorization: AUTH };
const TEXT = Buffer.from("Benchmark fax.\nA short letter of two lines.\n").toString("base64");
const jobBody = (i: number) =>
  JSON.stringify({ recipients: [{ number: `+4930555${String(i % 100_000).padStart(5, "0")}` }], documents: [{ name: "letter.txt", data: TEXT }] });

type Measured = LoadResult & { minRate: number; maxRate: number };

function summarize(rounds: LoadResult[]): Measured {
  const byRate = [...rounds].sort((a, b) => a.perSecond - b.perSecond);
  const median = byRate[Math.floor(byRate.length / 2)]!;
  return { ...median, minRate: byRate[0]!.perSecond, maxRate: byRate.at(-1)!.perSecond };
}

type Load = { name: string; count: number; concurrency: number; expect: number; request: (i: number) => Promise<Response> };

/**
 * Warm-up of each load, then `ROUNDS` rounds in which the loads take turns (so that a noisy
 * moment of the machine hits all of them alike); per load the median round by throughput and
 * the spread, plus the per-round throughput ratio of the second load to the first.
 */
async function measure(...loads: Load[]): Promise<{ results: Measured[]; ratios: number[] }> {
  for (const l of loads) await load(`${l.name} (warm-up)`, Math.min(200, l.count), l.concurrency, l.expect, l.request);
  const rounds: LoadResult[][] = loads.map(() => []);
  const ratios: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const [k, l] of loads.entries()) rounds[k]!.push(await load(l.name, l.count, l.concurrency, l.expect, l.request));
    if (loads.length >= 2) ratios.push(rounds[1]![r]!.perSecond / rounds[0]![r]!.perSecond);
  }
  return { results: rounds.map(summarize), ratios: ratios.sort((a, b) => a - b) };
}

function fileBytes(file: string): number {
  return existsSync(file) ? statSync(file).size : 0;
}

function seedReports(db: Kysely<Database>, datacenter: string, count: number): Promise<string[]> {
  return seedCompletedJobs(db, {
    custNr: ACCOUNT.custNr,
    login: ACCOUNT.login,
    datacenter,
    count,
    firstCompletedAt: Date.now() - 7 * 86_400_000,
    spacingMs: 5,
    customerDefinedId: (i) => `seed-${i}`,
    billingCode: "bench",
  });
}

const ms = (v: number) => v.toFixed(2);
const rate = (v: number) => Math.round(v).toLocaleString("en-US");

interface StoreRun {
  kind: "sqlite" | "postgres";
  results: Measured[];
  intake: Measured;
  hello: Measured;
  ratios: number[];
  seedSeconds: number;
  storeNote: string;
  peakRssMb: number;
}

/** One node (api role) on a fresh store of `kind`; the same loads as always. */
async function benchStore(kind: "sqlite" | "postgres", pgUrl: string | null): Promise<StoreRun> {
  const dataDir = mkdtempSync(join(tmpdir(), "faxline-bench-"));
  const config = loadConfig({
    env: {},
    overrides: {
      "store.dataDir": dataDir,
      "store.url": kind === "postgres" ? pgUrl! : "",
      "http.host": "127.0.0.1",
      "http.port": 0,
      "node.roles": "api",
      "log.level": "silent",
      "auth.cacheTtl": "1h",
    },
  });
  const node = await startNode(config, silentLogger());
  const baseline = Fastify({ logger: false });
  baseline.post("/rest/v1/:custNr/fax", async (_request, reply) => reply.status(201).send({ jobId: "FJ00000000000000000000" }));
  const baselineUrl = await baseline.listen({ host: "127.0.0.1", port: 0 });

  try {
    await createLogin(node.context.store.db, { ...ACCOUNT, isTest: true, ipAllowList: null, retentionDays: null }, Date.now());
    const base = `${node.url}/rest/v1/${ACCOUNT.custNr}`;
    const results: Measured[] = [];
    const post = (url: string) => (i: number) => fetch(url, { method: "POST", headers: HEADERS, body: jobBody(i) });
    console.error(`[${kind}] measuring baseline and intake …`);
    const intakeRun = await measure(
      { name: "baseline: Fastify hello POST", count: JOBS, concurrency: CONCURRENCY, expect: 201, request: post(`${baselineUrl}/rest/v1/${ACCOUNT.custNr}/fax`) },
      { name: "intake: POST /fax", count: JOBS, concurrency: CONCURRENCY, expect: 201, request: post(`${base}/fax`) },
    );
    const [hello, intake] = intakeRun.results as [Measured, Measured];
    results.push(hello, intake);

    console.error(`[${kind}] storing ${REPORTS} completed reports …`);
    const seedStart = performance.now();
    const ids = await seedReports(node.context.store.db, config.node.datacenter, REPORTS);
    // Fresh planner statistics after the bulk load, as autovacuum would soon take them (without,
    // PostgreSQL plans the report reads for the empty tables it last saw).
    if (kind === "postgres") await sql`analyze`.execute(node.context.store.db);
    const seedSeconds = (performance.now() - seedStart) / 1000;

    console.error(`[${kind}] measuring report reads …`);
    const pick = () => ids[Math.floor(Math.random() * ids.length)]!;
    if (ids.length > 0) {
      const reads = await measure(
        { name: `GET report by id (${REPORTS} stored)`, count: GETS, concurrency: CONCURRENCY, expect: 200, request: () => fetch(`${base}/fax/reports/${pick()}`, { headers: HEADERS }) },
        { name: "GET reports (oldest 1000)", count: LISTS, concurrency: 1, expect: 200, request: () => fetch(`${base}/fax/reports`, { headers: HEADERS }) },
      );
      results.push(...reads.results);
      const single = await measure({
        name: `GET report by id, one client (${REPORTS} stored)`,
        count: GETS,
        concurrency: 1,
        expect: 200,
        request: () => fetch(`${base}/fax/reports/${pick()}`, { headers: HEADERS }),
      });
      results.push(...single.results);
    }
    const mib = (v: number) => `${(v / 2 ** 20).toFixed(1)} MiB`;
    let storeNote: string;
    if (kind === "sqlite") {
      const file = storeFile(config);
      const [dbBytes, walBytes, shmBytes] = [fileBytes(file), fileBytes(`${file}-wal`), fileBytes(`${file}-shm`)];
      storeNote = `${mib(dbBytes + walBytes + shmBytes)} on disk: faxline.sqlite ${mib(dbBytes)}, -wal ${mib(walBytes)}, -shm ${mib(shmBytes)}`;
    } else {
      const size = await sql<{ bytes: number }>`select pg_database_size(current_database())::bigint as bytes`.execute(node.context.store.db);
      storeNote = `${mib(Number(size.rows[0]?.bytes ?? 0))} database (pg_database_size)`;
    }
    return { kind, results, intake, hello, ratios: intakeRun.ratios, seedSeconds, storeNote, peakRssMb: process.resourceUsage().maxRSS / 1024 };
  } finally {
    await baseline.close();
    await node.stop();
    if (opts.keep) console.log(`data kept in ${dataDir}`);
    else rmSync(dataDir, { recursive: true, force: true });
  }
}

function printRun(run: StoreRun): void {
  console.log(`### ${run.kind === "sqlite" ? "SQLite (embedded, WAL, synchronous=NORMAL)" : "PostgreSQL (one node; fsync and synchronous_commit on)"}`);
  console.log("");
  console.log("| measurement | requests | concurrency | req/s (median) | req/s (min–max of rounds) | p50 ms | p99 ms | max ms | response bytes |");
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of run.results) {
    console.log(
      `| ${r.name} | ${r.requests} | ${r.concurrency} | ${rate(r.perSecond)} | ${rate(r.minRate)}–${rate(r.maxRate)} | ${ms(r.p50)} | ${ms(r.p99)} | ${ms(r.max)} | ${Math.round(r.bytesPerResponse)} |`,
    );
  }
  console.log("");
  const pct = (v: number) => `${(v * 100).toFixed(0)} %`;
  const r = run.ratios;
  console.log(
    `intake    ${pct(run.intake.perSecond / run.hello.perSecond)} of the baseline's throughput (median rounds); per-round ratio median ${pct(r[Math.floor(r.length / 2)]!)}, range ${pct(r[0]!)}–${pct(r.at(-1)!)}`,
  );
  console.log(`seeding   ${REPORTS} reports in ${run.seedSeconds.toFixed(1)} s (${rate(REPORTS / run.seedSeconds)} rows/s per table)`);
  console.log(`store     ${run.storeNote} (${REPORTS} reports with recipient and attempt rows, ${Math.min(200, JOBS) + JOBS * ROUNDS} pending intake jobs with their documents)`);
  console.log(`peak RSS  ${run.peakRssMb.toFixed(0)} MiB so far (client and server in one process)`);
  console.log("");
}

async function main(): Promise<void> {
  const cpu = cpus();
  console.log("Faxline bench:api");
  console.log(`date      ${new Date().toISOString()}`);
  console.log(`machine   ${cpu[0]?.model.trim() ?? "unknown CPU"}, ${cpu.length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${platform()} ${release()}`);
  console.log(`runtime   Node ${process.version}, undici ${process.versions.undici ?? "?"} (global fetch, keep-alive)`);
  console.log(`settings  ${JOBS} jobs, concurrency ${CONCURRENCY}, ${REPORTS} stored reports, ${GETS} single GETs, ${LISTS} list GETs, ${ROUNDS} rounds (median shown), store ${opts.store}`);
  console.log("");
  const runs: StoreRun[] = [];
  runs.push(await benchStore("sqlite", null));
  printRun(runs[0]!);
  if (opts.store === "postgres") {
    const pg = await benchPostgres();
    try {
      console.log(`postgres  ${pg.description}`);
      console.log("");
      runs.push(await benchStore("postgres", pg.url));
      printRun(runs[1]!);
    } finally {
      await pg.close();
    }
    const [lite, post] = runs as [StoreRun, StoreRun];
    console.log("### PostgreSQL against SQLite, same run");
    console.log("");
    console.log("| measurement | SQLite req/s | PostgreSQL req/s | ratio | SQLite p99 ms | PostgreSQL p99 ms |");
    console.log("|---|---:|---:|---:|---:|---:|");
    for (const [i, a] of lite.results.entries()) {
      const b = post.results[i]!;
      console.log(`| ${a.name} | ${rate(a.perSecond)} | ${rate(b.perSecond)} | ${(b.perSecond / a.perSecond).toFixed(2)} | ${ms(a.p99)} | ${ms(b.p99)} |`);
    }
  }
}

/**
 * The PostgreSQL server of the bench: --pg-url, or a throwaway cluster on this machine with
 * durable settings (fsync, full_page_writes and synchronous_commit on, as in production).
 */
async function benchPostgres(): Promise<{ url: string; description: string; close(): Promise<void> }> {
  if (opts["pg-url"]) return { url: opts["pg-url"], description: `${opts["pg-url"].replace(/:[^:@/]*@/, ":***@")} (given)`, close: async () => {} };
  const cluster = await startPostgresCluster({ name: "bench", settings: { fsync: "on", full_page_writes: "on", synchronous_commit: "on", shared_buffers: "256MB" } });
  await cluster.query("create database faxline_bench");
  const version = await cluster.query<{ server_version: string }>("show server_version");
  return {
    url: cluster.url("faxline_bench"),
    description: `PostgreSQL ${version[0]?.server_version ?? "?"} on this machine (throwaway cluster; fsync on, synchronous_commit on, shared_buffers 256MB)`,
    close: async () => cluster.remove(),
  };
}

await main();

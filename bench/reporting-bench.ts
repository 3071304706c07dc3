/**
 * `npm run bench:reporting` — a month's reports over a million faxes, on SQLite and PostgreSQL.
 *
 * Per dialect: a fresh store (a throwaway PostgreSQL cluster, or `--pg-url`) gets `--faxes`
 * finished faxes over 30 days (one big customer with five logins and a few small ones, both data
 * centers, six countries, six outcomes, 1 to 3 calls each) and `--receptions` receptions, written
 * with bulk inserts (test/support/seed-report-history.ts), then counted into the daily rollups by
 * the rollup sweep (the backfill path; its time is printed). Then one node (api role) answers
 * GraphQL over HTTP, and each query kind runs `--runs` times after a warm-up, one at a time:
 *
 *   out-month        faxOutSummary over the month: totals and rows by day (the Reports page's chart)
 *   out-by-country   faxOutSummary over the month by country and status
 *   out-by-reason    faxOutSummary over the month by failure reason
 *   calls-by-trunk   faxOutCallSummary over the month by trunk and result
 *   in-month         faxInSummary over the month by day
 *   failing-top10    faxOutFailingDestinations over the month
 *   dashboard        the five above in one request
 *   udr-page         faxOutUdrReport: a page of 100 records with every field, from a random day
 *
 * It prints p50 and p99 (ms, at the client) per query kind and dialect. The goal (issue 33):
 * a month's report answers in < 200 ms p99.
 *
 * Options: --faxes N (1000000) --receptions N (100000) --runs N (200) --dialects sqlite,postgres --pg-url URL
 *
 * A seeded store can be kept and its queries timed again (when the machine is quieter) without
 * seeding a million faxes anew: `--keep` leaves the SQLite directory, and the PostgreSQL cluster
 * running with its database, and prints how to reuse them; `--reuse-sqlite DIR` and
 * `--reuse-pg URL` (a database URL) skip the seed and time the queries. A kept
 * store's month is the UTC month before the day it was seeded on: reuse it the same day.
 * `--queries udr-page,out-month` times only those kinds. `--seed-only` seeds and keeps the store, its
 * rows uncounted; a later `--reuse-…` run migrates it (a new migration's backfill, timed), runs the
 * rollup sweep until nothing is left uncounted (timed), then times the queries.
 */
import { cpus, totalmem } from "node:os";
import { parseArgs } from "node:util";
import { createLogin } from "../src/accounts/accounts.ts";
import { openStore } from "../src/store/dialects/open-store.ts";
import { rollUpPending } from "../src/store/queries/report-rollups.ts";
import { startPostgresCluster, withDatabase, pgQuery, type PostgresCluster } from "../test/support/postgres-cluster.ts";
import { seedReportHistory } from "../test/support/seed-report-history.ts";
import { startTestNode, tempDir, testConfig } from "../test/support/test-node.ts";

const { values: opts } = parseArgs({
  options: {
    faxes: { type: "string", default: "1000000" },
    receptions: { type: "string", default: "100000" },
    runs: { type: "string", default: "200" },
    dialects: { type: "string", default: "sqlite,postgres" },
    "pg-url": { type: "string" },
    keep: { type: "boolean", default: false },
    "reuse-sqlite": { type: "string" },
    "reuse-pg": { type: "string" },
    queries: { type: "string" },
    "seed-only": { type: "boolean", default: false },
  },
});
const FAXES = Number(opts.faxes);
const RECEPTIONS = Number(opts.receptions);
const RUNS = Number(opts.runs);
const DAY = 86_400_000;
const today = Math.floor(Date.now() / DAY) * DAY;
const FIRST_DAY = today - 31 * DAY;
const MONTH = { fromIncluded: new Date(today - 30 * DAY).toISOString(), toExcluded: new Date(today).toISOString() };

const QUERIES: Record<string, (i: number) => { query: string; variables: Record<string, unknown> }> = {
  "out-month": () => ({ query: `query($p: DatePeriod!) { faxOutSummary(customerId: "BIG", datePeriod: $p, groupBy: [DAY]) { totals { faxes delivered failed pages attempts lineSeconds successRate attemptsPerDeliveredFax } rows { period faxes delivered successRate lineSeconds } } }`, variables: { p: MONTH } }),
  "out-by-country": () => ({ query: `query($p: DatePeriod!) { faxOutSummary(customerId: "BIG", datePeriod: $p, groupBy: [COUNTRY, STATUS]) { rows { country status faxes pages } } }`, variables: { p: MONTH } }),
  "out-by-reason": () => ({ query: `query($p: DatePeriod!) { faxOutSummary(customerId: "BIG", datePeriod: $p, groupBy: [REASON]) { rows { reason faxes attempts } } }`, variables: { p: MONTH } }),
  "calls-by-trunk": () => ({ query: `query($p: DatePeriod!) { faxOutCallSummary(customerId: "BIG", datePeriod: $p, groupBy: [TRUNK, RESULT]) { rows { trunk result calls lineSeconds successRate } } }`, variables: { p: MONTH } }),
  "in-month": () => ({ query: `query($p: DatePeriod!) { faxInSummary(customerId: "BIG", datePeriod: $p, groupBy: [DAY]) { totals { faxes ok pages } rows { period faxes ok } } }`, variables: { p: MONTH } }),
  "failing-top10": () => ({ query: `query($p: DatePeriod!) { faxOutFailingDestinations(customerId: "BIG", datePeriod: $p, limit: 10) { number failedFaxes reasons { reason faxes } } }`, variables: { p: MONTH } }),
  dashboard: () => ({
    query: `query($p: DatePeriod!) {
      out: faxOutSummary(customerId: "BIG", datePeriod: $p, groupBy: [DAY]) { totals { faxes successRate } rows { period faxes delivered } }
      reasons: faxOutSummary(customerId: "BIG", datePeriod: $p, groupBy: [REASON]) { rows { reason faxes } }
      calls: faxOutCallSummary(customerId: "BIG", datePeriod: $p, groupBy: [DAY]) { rows { period lineSeconds } }
      received: faxInSummary(customerId: "BIG", datePeriod: $p, groupBy: [DAY]) { rows { period faxes } }
      failing: faxOutFailingDestinations(customerId: "BIG", datePeriod: $p, limit: 10) { number failedFaxes }
    }`,
    variables: { p: MONTH },
  }),
  "udr-page": (i) => {
    const day = today - (1 + (i % 28)) * DAY;
    return {
      query: `query($p: DatePeriod!) { faxOutUdrReport(customerId: "BIG", datePeriod: $p, page: 0, size: 100) { content { faxId jobId attemptSeqNo statusName calledCountry callDuration keyTimestamp sumCallDurations lastAttemptSeqNo jobBillingCode } hasMoreElements } }`,
      variables: { p: { fromIncluded: new Date(day).toISOString(), toExcluded: new Date(day + DAY).toISOString() } },
    };
  },
};

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function benchDialect(dialect: "sqlite" | "postgres", pgUrl: string | null, reuse: { sqliteDir?: string } | null = null) {
  const dirPath = reuse?.sqliteDir ?? tempDir("faxline-bench-reporting-").path;
  const overrides: Record<string, unknown> = { "node.roles": "api", "log.level": "silent" };
  if (dialect === "postgres") overrides["store.url"] = pgUrl!;
  if (reuse === null) await seed(dialect, dirPath, pgUrl);
  else console.log(`${dialect}: the store seeded before (${reuse.sqliteDir ?? pgUrl}); no seed`);
  if ((opts.keep || opts["seed-only"]) && reuse === null) {
    if (dialect === "sqlite") console.log(`  kept: npm run bench:reporting -- --dialects sqlite --reuse-sqlite ${dirPath}`);
    else console.log(`  kept: npm run bench:reporting -- --dialects postgres --reuse-pg ${pgUrl}`);
  }
  if (opts["seed-only"]) return {};
  await migrateAndRollUp(dialect, dirPath, overrides, pgUrl);
  return timeQueries(dialect, dirPath, overrides);
}

/** A fresh store with the history, its rows uncounted (as rows of before migration 0025). */
async function seed(dialect: "sqlite" | "postgres", dirPath: string, pgUrl: string | null) {
  const overrides: Record<string, unknown> = { "node.roles": "api", "log.level": "silent" };
  if (dialect === "postgres") overrides["store.url"] = pgUrl!;
  const store = await openStore(testConfig(dirPath, overrides));
  await store.migrate();
  const creds = { login: "big-manager", password: "big-manager-password" };
  await createLogin(store.db, { custNr: "BIG", login: creds.login, password: creds.password, isTest: false, isAdmin: false, isManager: true, ipAllowList: null, retentionDays: 90 }, Date.now());
  for (const c of ["S1", "S2", "S3"]) await createLogin(store.db, { custNr: c, login: `${c}-login`, password: "small-password-1", isTest: false, isAdmin: false, isManager: false, ipAllowList: null, retentionDays: 90 }, Date.now());

  let t = performance.now();
  await seedReportHistory(store.db, {
    customers: [
      { custNr: "BIG", logins: ["big-1", "big-2", "big-3", "big-4", "big-5"], topics: ["main", "sales", "support"] },
      { custNr: "BIG", logins: ["big-1", "big-2", "big-3", "big-4", "big-5"], topics: ["main", "sales", "support"] },
      { custNr: "BIG", logins: ["big-1", "big-2", "big-3", "big-4", "big-5"], topics: ["main", "sales", "support"] },
      { custNr: "S1", logins: ["S1-login"], topics: ["in"] },
    ],
    faxes: FAXES,
    receptions: RECEPTIONS,
    firstDay: FIRST_DAY,
    days: 31,
    datacenters: ["DE1", "DE2"],
    rowsPerStatement: dialect === "postgres" ? 1000 : 500,
    rowsPerTransaction: 20_000,
    onProgress: (n) => {
      if (n % 200_000 < 20_000) process.stderr.write(`  ${dialect}: ${n} faxes written\n`);
    },
  });
  const seedSecs = (performance.now() - t) / 1000;
  await store.close();
  console.log(`${dialect}: seeded ${FAXES} faxes and ${RECEPTIONS} receptions in ${seedSecs.toFixed(0)} s`);
}

/**
 * The store's pending migrations (timed: a migration's backfill runs here on a kept store), then
 * the rollup sweep until nothing is left uncounted (the backfill path; nothing on a store counted before).
 */
async function migrateAndRollUp(dialect: "sqlite" | "postgres", dirPath: string, overrides: Record<string, unknown>, pgUrl: string | null) {
  const store = await openStore(testConfig(dirPath, overrides));
  let t = performance.now();
  await store.migrate();
  const migrateSecs = (performance.now() - t) / 1000;
  t = performance.now();
  let counted = 0;
  for (;;) {
    const n = await rollUpPending(store.db, 5000, Date.now() + DAY);
    counted += n.faxes;
    if (n.jobs === 0 && n.receptions === 0) break;
  }
  const rollupSecs = (performance.now() - t) / 1000;
  if (dialect === "postgres") await pgQuery(pgUrl!, "VACUUM ANALYZE");
  const rollupRows = Number((await store.db.selectFrom("report_out_faxes").select((eb) => eb.fn.countAll().as("n")).executeTakeFirstOrThrow()).n);
  await store.close();
  console.log(`${dialect}: migrations ${migrateSecs.toFixed(1)} s; the rollup sweep counted ${counted} faxes in ${rollupSecs.toFixed(1)} s (${Math.round(counted / Math.max(rollupSecs, 0.001))}/s) into ${rollupRows} rows of report_out_faxes`);
}

/** Each query kind `--runs` times after a warm-up, one at a time, over HTTP. */
async function timeQueries(dialect: "sqlite" | "postgres", dirPath: string, overrides: Record<string, unknown>) {
  const creds = { login: "big-manager", password: "big-manager-password" };
  const node = await startTestNode(overrides, dirPath);
  const auth = `Basic ${Buffer.from(`${creds.login}:${creds.password}`).toString("base64")}`;
  const results: Record<string, { p50: number; p99: number }> = {};
  try {
    const only = opts.queries?.split(",").map((q) => q.trim());
    for (const [name, make] of Object.entries(QUERIES)) {
      if (only !== undefined && !only.includes(name)) continue;
      const times: number[] = [];
      for (let i = -10; i < RUNS; i++) {
        const body = JSON.stringify(make(i + 10));
        const start = performance.now();
        const res = await fetch(`${node.url}/graphql`, { method: "POST", headers: { "content-type": "application/json", authorization: auth }, body });
        const json = (await res.json()) as { errors?: unknown };
        const ms = performance.now() - start;
        if (res.status !== 200 || json.errors) throw new Error(`${name}: ${res.status} ${JSON.stringify(json.errors)}`);
        if (i >= 0) times.push(ms);
      }
      times.sort((a, b) => a - b);
      results[name] = { p50: percentile(times, 50), p99: percentile(times, 99) };
      console.log(`  ${dialect.padEnd(8)} ${name.padEnd(16)} p50 ${results[name]!.p50.toFixed(1).padStart(7)} ms   p99 ${results[name]!.p99.toFixed(1).padStart(7)} ms`);
    }
  } finally {
    await node.stop();
  }
  return results;
}

console.log(`bench:reporting: ${FAXES} faxes, ${RECEPTIONS} receptions over 31 days; ${RUNS} runs per query; ${cpus().length} cores (${cpus()[0]?.model}), ${Math.round(totalmem() / 2 ** 30)} GB`);
const dialects = opts.dialects!.split(",").map((d) => d.trim());
let cluster: PostgresCluster | null = null;
try {
  for (const dialect of dialects) {
    if (dialect === "sqlite") await benchDialect("sqlite", null, opts["reuse-sqlite"] !== undefined ? { sqliteDir: opts["reuse-sqlite"] } : null);
    else if (dialect === "postgres" && opts["reuse-pg"] !== undefined) await benchDialect("postgres", opts["reuse-pg"], {});
    else if (dialect === "postgres") {
      let url = opts["pg-url"] ?? null;
      if (url === null) {
        cluster = await startPostgresCluster({ name: "bench-reporting", settings: { fsync: "on", synchronous_commit: "on", shared_buffers: "256MB" } });
        url = cluster.url();
      }
      const name = `faxline_bench_reporting_${Date.now()}`;
      await pgQuery(url, `CREATE DATABASE ${name}`);
      await benchDialect("postgres", withDatabase(url, name));
    }
  }
} finally {
  if (cluster && (opts.keep || opts["seed-only"])) {
    cluster.detach();
    console.log(`  the PostgreSQL cluster runs on (data in ${cluster.dataDir}); stop it with pg_ctl -D ${cluster.dataDir} stop (as the user postgres when run as root)`);
  } else if (cluster) {
    cluster.stop();
    cluster.remove();
  }
}

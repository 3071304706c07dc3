/**
 * The store's commands and start-up checks, as a user runs them:
 *  - `faxline serve` with a bad or unreachable store.url stops with a message that names the
 *    key and the cause, and no stack trace;
 *  - `faxline migrate --check` reports pending migrations (exit 1) without running them,
 *    `faxline migrate` runs them; ten nodes starting at once on an empty database migrate once;
 *  - `faxline store copy --to postgres://…` moves a stopped node's SQLite store, with its
 *    history, into an empty PostgreSQL database and verifies the counts; a node pointed at the
 *    copy serves the old reports; it refuses a running source and a non-empty target.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { openStore } from "../../src/store/dialects/open-store.ts";
import { COPIED_TABLES } from "../../src/store/copy-store.ts";
import { api, eventually, tempDir, testConfig, TEXT_DOC, waitForFinalReport } from "../support/test-node.ts";
import { createAccountWithCli, freePort, runFaxlineCli, startChildNode, stopAllChildNodes, withChildLogs, FAST_RETRIES_ENV, type ChildNode } from "../support/child-node.ts";
import { DIALECTS, testStore, type TestStore } from "../support/dialects.ts";
import { pgQuery } from "../support/postgres-cluster.ts";

const runPostgres = DIALECTS.includes("postgres");
/** Every migration file of the store, in order: each must be pending on an empty database and run once. */
const MIGRATIONS = readdirSync(new URL("../../src/store/migrations/", import.meta.url))
  .filter((f) => /^\d{4}-.+\.ts$/.test(f))
  .map((f) => f.replace(/\.ts$/, ""))
  .sort();
const ACCOUNT = { custNr: "99999TE", login: "mover", password: "mover-pass-1" };

describe("store.url at start", () => {
  const dir = tempDir("faxline-store-url-");
  after(() => dir.remove());
  const serve = async (url: string) =>
    runFaxlineCli(["serve"], { FAXLINE_DATA_DIR: dir.path, FAXLINE_HOST: "127.0.0.1", FAXLINE_PORT: String(await freePort()), FAXLINE_STORE_URL: url, FAXLINE_STORE_CONNECT_TIMEOUT: "2s", FAXLINE_LOG_LEVEL: "warn" }, 30_000);

  it("refuses a URL of another kind, naming the key", async () => {
    const result = await serve("mysql://db/faxline");
    assert.equal(result.code, 1);
    assert.match(result.stderr, /store\.url/);
    assert.match(result.stderr, /postgres:\/\//);
    assert.doesNotMatch(result.stderr, /\n\s+at /, "no stack trace");
  });

  it("refuses a malformed PostgreSQL URL, saying what is wrong and hiding the password", async () => {
    const result = await serve("postgres://faxline:s3cret@db1:99999/faxline");
    assert.equal(result.code, 1);
    assert.match(result.stderr, /FAXLINE_STORE_URL/);
    assert.match(result.stderr, /port of "db1:99999" is out of range/);
    assert.doesNotMatch(result.stderr, /s3cret/);
    const unknown = await serve("postgres://db1/faxline?targetsessionattrs=read-write");
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /"targetsessionattrs" is not one Faxline reads/);
  });

  it("stops with the cause when no server answers, without a stack trace", async () => {
    const port = await freePort();
    const result = await serve(`postgres://faxline:s3cret@127.0.0.1:${port}/faxline`);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /Cannot open the store at store\.url \(FAXLINE_STORE_URL\) postgres:\/\/faxline:\*\*\*@127\.0\.0\.1:\d+\/faxline: .*ECONNREFUSED/);
    assert.doesNotMatch(result.stderr, /s3cret/);
    assert.doesNotMatch(result.stderr, /\n\s+at /);
  });
});

describe("postgres: migrations", { skip: !runPostgres && "FAXLINE_TEST_DIALECTS excludes postgres" }, () => {
  const dir = tempDir("faxline-migrate-");
  let ts: TestStore;
  before(async () => {
    ts = await testStore("postgres");
  });
  after(async () => {
    await ts.drop();
    dir.remove();
  });
  const cli = (...args: string[]) => runFaxlineCli(args, { ...ts.env, FAXLINE_DATA_DIR: dir.path, FAXLINE_LOG_LEVEL: "warn" });

  it("migrate --check lists what is pending and changes nothing; migrate runs it", async () => {
    const check = await cli("migrate", "--check");
    assert.equal(check.code, 1, check.stderr);
    assert.match(check.stdout, new RegExp(`has ${MIGRATIONS.length} pending migration\\(s\\)`));
    for (const name of MIGRATIONS) assert.match(check.stdout, new RegExp(`\\b${name}\\b`));
    const tables = await pgQuery<{ n: number }>(ts.url, "select count(*) as n from information_schema.tables where table_name = 'jobs'");
    assert.equal(tables[0]!.n, 0, "--check created nothing");
    const run = await cli("migrate");
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, new RegExp(`Migrated the store postgres://.*${MIGRATIONS.at(-1)}`, "s"));
    const again = await cli("migrate", "--check");
    assert.equal(again.code, 0);
    assert.match(again.stdout, new RegExp(`is up to date \\(${MIGRATIONS.length} migrations\\)`));
  });

  it("ten nodes opening an empty database at once migrate it once", async () => {
    const fresh = await testStore("postgres");
    try {
      const config = testConfig(dir.path, fresh.overrides);
      const stores = await Promise.all(Array.from({ length: 10 }, () => openStore(config)));
      try {
        const rows = await pgQuery<{ name: string }>(fresh.url, "select name from kysely_migration order by name");
        assert.deepEqual(
          rows.map((r) => r.name),
          MIGRATIONS,
        );
        const triggers = await pgQuery<{ n: number }>(fresh.url, "select count(*) as n from pg_trigger where tgname like '%_signal_%'");
        assert.equal(triggers[0]!.n, 3);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    } finally {
      await fresh.drop();
    }
  });
});

describe("postgres: faxline store copy", { skip: !runPostgres && "FAXLINE_TEST_DIALECTS excludes postgres" }, () => {
  const source = tempDir("faxline-copy-src-");
  const other = tempDir("faxline-copy-pg-");
  let target: TestStore;
  let node: ChildNode | undefined;
  const jobIds: string[] = [];
  before(async () => {
    target = await testStore("postgres");
  });
  after(async () => {
    await stopAllChildNodes();
    await target.drop();
    source.remove();
    other.remove();
  });

  it("copies a stopped node's SQLite history into an empty database, verified, and a node on the copy serves it", { timeout: 120_000 }, async () => {
    await withChildLogs(
      () => [node],
      async () => {
        // A history on SQLite: an account, settings, jobs with images, reports and a push log.
        await createAccountWithCli(source.path, ACCOUNT);
        const setHeader = await runFaxlineCli(["accounts", "set-header", "--customer", ACCOUNT.custNr, "--header", "ACME %P/%T"], { FAXLINE_DATA_DIR: source.path, FAXLINE_LOG_LEVEL: "warn" });
        assert.equal(setHeader.code, 0, setHeader.stderr);
        const badToneMode = await runFaxlineCli(["accounts", "set-tone-mode", "--customer", ACCOUNT.custNr, "--tone-mode", "sepia"], { FAXLINE_DATA_DIR: source.path, FAXLINE_LOG_LEVEL: "warn" });
        assert.notEqual(badToneMode.code, 0);
        assert.match(badToneMode.stderr, /must be one of AUTO, TEXT, PHOTO, THRESHOLD/);
        const setToneMode = await runFaxlineCli(["accounts", "set-tone-mode", "--customer", ACCOUNT.custNr, "--tone-mode", "photo"], { FAXLINE_DATA_DIR: source.path, FAXLINE_LOG_LEVEL: "warn" });
        assert.equal(setToneMode.code, 0, setToneMode.stderr);
        assert.match(setToneMode.stdout, /Default tone mode of customer \S+: PHOTO/);
        // Receiving: a topic with a number, which the account's own fax below arrives on.
        for (const args of [
          ["inbound", "topic", "create", "--customer", ACCOUNT.custNr, "--name", "main"],
          ["inbound", "number", "add", "--customer", ACCOUNT.custNr, "--topic", "main", "--number", "+49 30 5550 1234"],
        ]) {
          const r = await runFaxlineCli(args, { FAXLINE_DATA_DIR: source.path, FAXLINE_LOG_LEVEL: "warn" });
          assert.equal(r.code, 0, r.stderr);
        }
        const issued = await runFaxlineCli(["inbound", "credential", "issue", "--customer", ACCOUNT.custNr], { FAXLINE_DATA_DIR: source.path, FAXLINE_LOG_LEVEL: "warn" });
        assert.equal(issued.code, 0, issued.stderr);
        const pullPassword = issued.stdout.trim();
        node = await startChildNode({ name: "sqlite node", dataDir: source.path, env: FAST_RETRIES_ENV });
        const client = api(node.url, ACCOUNT);
        for (const number of ["+4900000020", "+4900000001", "+4900000009", "+493055501234"]) {
          const res = await client.post(`/${ACCOUNT.custNr}/fax`, { recipients: [{ number }], documents: [TEXT_DOC], statusReportOptions: { reportMail: { successAddress: "a@example.com" } } });
          assert.equal(res.status, 201);
          jobIds.push(res.body.jobId as string);
        }
        const before = await Promise.all(jobIds.map((id) => waitForFinalReport(client, ACCOUNT.custNr, id, 30_000)));
        // The fax to the account's own number has arrived (fetch with no lock, so nothing changes).
        await eventually(async () => {
          const res = await fetch(`${node!.url}/faxin/rest/v1/topics/main?fetch=1&timeout=0`, {
            method: "POST",
            headers: { authorization: `Basic ${Buffer.from(`${ACCOUNT.custNr}:${pullPassword}`).toString("base64")}` },
          });
          const body = (await res.json()) as { results?: unknown[] };
          return (body.results?.length ?? 0) > 0 ? true : undefined;
        }, 15_000, "the reception on the account's own number");

        // A running source is refused.
        const busy = await runFaxlineCli(["store", "copy", "--to", target.url], { FAXLINE_DATA_DIR: source.path, FAXLINE_LOG_LEVEL: "warn" });
        assert.equal(busy.code, 1);
        assert.match(busy.stderr, /A node is running on .*stop it before copying/);
        await node.stop();

        const copied = await runFaxlineCli(["store", "copy", "--to", target.url], { FAXLINE_DATA_DIR: source.path, FAXLINE_LOG_LEVEL: "warn" }, 60_000);
        assert.equal(copied.code, 0, copied.stderr + copied.stdout);
        assert.match(copied.stdout, /Copied and verified/);
        for (const table of COPIED_TABLES) assert.match(copied.stdout, new RegExp(`\\b${table}\\b`));
        assert.doesNotMatch(copied.stdout, /MISMATCH/);
        const jobs = await pgQuery<{ n: number }>(target.url, "select count(*) as n from jobs");
        assert.equal(jobs[0]!.n, 4);
        const received = await pgQuery<{ n: number; bytes: number }>(target.url, "select count(*) as n, sum(length(image)) as bytes from received_faxes");
        assert.equal(Number(received[0]!.n), 1, "the received fax came along");
        assert.ok(Number(received[0]!.bytes) > 0);
        const images = await pgQuery<{ n: number; bytes: number }>(target.url, "select count(*) as n, sum(length(content)) as bytes from fax_images");
        assert.ok(images[0]!.n >= 2 && images[0]!.bytes > 0, "fax images came along");
        // The topic and its number were made with `faxline inbound …`: audited as the configuration API's changes are.
        const audit = await pgQuery<{ resource: string; resource_key: string; action: string; actor_login: string; actor_role: string }>(
          target.url,
          "select resource, resource_key, action, actor_login, actor_role from config_audit order by at, id",
        );
        assert.deepEqual(
          audit.map((a) => [a.resource, a.resource_key, a.action, a.actor_role]),
          [
            ["inbound/profiles", "main", "create", "operator"],
            ["inbound/numbers", "+493055501234", "create", "operator"],
          ],
        );
        assert.match(audit[0]!.actor_login, /^cli:\S+@\S+$/, "the machine's user and host");

        // A second copy into the now filled database is refused.
        const twice = await runFaxlineCli(["store", "copy", "--to", target.url], { FAXLINE_DATA_DIR: source.path, FAXLINE_LOG_LEVEL: "warn" });
        assert.equal(twice.code, 1);
        assert.match(twice.stderr, /is not empty/);

        // A node on PostgreSQL serves the history exactly as the SQLite node did.
        node = await startChildNode({ name: "postgres node", dataDir: other.path, env: { ...FAST_RETRIES_ENV, ...target.env } });
        const moved = api(node.url, ACCOUNT);
        for (const [i, id] of jobIds.entries()) {
          const res = await moved.get(`/${ACCOUNT.custNr}/fax/reports/${id}`);
          assert.equal(res.status, 200);
          assert.deepEqual(res.body, before[i]);
        }
        const header = await pgQuery<{ default_header: string }>(target.url, "select default_header from customers where cust_nr = $1", [ACCOUNT.custNr]);
        assert.equal(header[0]!.default_header, "ACME %P/%T");
        const toneMode = await pgQuery<{ default_tone_mode: string }>(target.url, "select default_tone_mode from customers where cust_nr = $1", [ACCOUNT.custNr]);
        assert.equal(toneMode[0]!.default_tone_mode, "PHOTO", "the default tone mode was copied");
        const sent = await moved.post(`/${ACCOUNT.custNr}/fax`, { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC] });
        assert.equal(sent.status, 201, "and takes new jobs");
        await waitForFinalReport(moved, ACCOUNT.custNr, sent.body.jobId, 30_000);
      },
    );
  });
});

describe("faxline datacenter adopt", () => {
  const dir = tempDir("faxline-adopt-cli-");
  after(() => dir.remove());
  const cli = (...args: string[]) => runFaxlineCli(["datacenter", "adopt", ...args], { FAXLINE_DATA_DIR: dir.path, FAXLINE_LOG_LEVEL: "warn" });

  it("refuses data centers of different regions, the same one twice, and unknown ones", async () => {
    const cross = await cli("--from", "DE1", "--to", "US2");
    assert.equal(cross.code, 1);
    assert.match(cross.stderr, /DE1 lies in region DE and US2 in US; jobs move only within a region/);
    const same = await cli("--from", "de2", "--to", "DE2");
    assert.equal(same.code, 1);
    assert.match(same.stderr, /name the same data center/);
    const unknown = await cli("--from", "DE3", "--to", "DE1");
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /--from must be one of DE1, DE2, US1, US2, not "DE3"/);
    const missing = await runFaxlineCli(["datacenter", "adopt", "--from", "DE1"], { FAXLINE_DATA_DIR: dir.path });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--to is required/);
  });

  it("moves a data center's jobs to the other and says how many; nothing the second time", async () => {
    await createAccountWithCli(dir.path, ACCOUNT);
    const node = await startChildNode({ name: "DE1", dataDir: dir.path, datacenter: "DE1", env: FAST_RETRIES_ENV });
    try {
      const client = api(node.url, ACCOUNT);
      const sent = await client.post(`/${ACCOUNT.custNr}/fax`, { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC] });
      await waitForFinalReport(client, ACCOUNT.custNr, sent.body.jobId);
      const moved = await cli("--from", "DE1", "--to", "DE2");
      assert.equal(moved.code, 0, moved.stderr);
      assert.match(moved.stdout, /Jobs adopted by DE2 from DE1 at \S+: 1 jobs \(0 unfinished\), 1 recipients, \d+ notifications\./);
      assert.match(moved.stdout, /1 node\(s\) of DE1 still run/);
      assert.equal((await client.get(`/${ACCOUNT.custNr}/fax/reports/${sent.body.jobId}`)).status, 404, "DE1 no longer reports it");
      const again = await cli("--from", "DE1", "--to", "DE2");
      assert.match(again.stdout, /DE1 owns no jobs; nothing to adopt/);
    } finally {
      await node.stop();
    }
  });
});

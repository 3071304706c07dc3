/**
 * Test support: real, throwaway PostgreSQL clusters (initdb + pg_ctl in a temporary directory,
 * on a free port on 127.0.0.1), as graphile-worker's and Kysely's suites use a real server.
 *
 * - `testPostgresUrl()`: the server the dialect-looped tests use. FAXLINE_TEST_PG_URL when set
 *   (scripts/run-tests.sh starts one cluster for the whole run and sets it), else a cluster
 *   started for this test process and removed when it exits.
 * - `createTestDatabase()`: a fresh, empty database on that server per suite, dropped after.
 * - `startPostgresCluster()`: a cluster of a test's own, for tests that stop, kill, promote or
 *   cut off their database (fault and failover tests). `startStandby()` makes a streaming
 *   standby of it with pg_basebackup.
 *
 * PostgreSQL refuses to run as root: when the tests run as root, the server programs run as
 * the `postgres` user (runuser), which owns the cluster's directory. The clusters run with
 * fsync off (a test kills processes, not the machine) and the C locale.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "./child-node.ts";

const IS_ROOT = process.getuid?.() === 0;

/** The directory of initdb, pg_ctl, postgres and pg_basebackup. */
export function postgresBinDir(): string {
  const fromEnv = process.env.FAXLINE_TEST_PG_BIN;
  if (fromEnv) return fromEnv;
  try {
    const dir = execFileSync("pg_config", ["--bindir"], { encoding: "utf8" }).trim();
    if (existsSync(join(dir, "initdb"))) return dir;
  } catch {
    /* no pg_config */
  }
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, "bin", "initdb")))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0] !== undefined) return join(root, versions[0], "bin");
  }
  throw new Error("PostgreSQL server programs (initdb, pg_ctl) not found: install the postgresql package (scripts/install.sh does), or set FAXLINE_TEST_PG_URL");
}

function pgUser(): { uid: number; gid: number } | null {
  if (!IS_ROOT) return null;
  const passwd = readFileSync("/etc/passwd", "utf8").split("\n").find((l) => l.startsWith("postgres:"));
  if (!passwd) throw new Error("running as root, but there is no postgres user to run the test cluster as");
  const [, , uid, gid] = passwd.split(":");
  return { uid: Number(uid), gid: Number(gid) };
}

/** Runs a server program, as the postgres user when we are root. */
function runPg(program: string, args: string[], options: { allowFail?: boolean } = {}): { status: number | null; output: string } {
  const bin = join(postgresBinDir(), program);
  const [cmd, argv] = IS_ROOT ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
  const result = spawnSync(cmd, argv, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 120_000 });
  const output = `${result.stdout ?? ""}${result.stderr ?? ""}`;
  if (result.status !== 0 && !options.allowFail) throw new Error(`${program} ${args.join(" ")} failed (${result.status ?? result.signal}):\n${output}`);
  return { status: result.status, output };
}

export interface PostgresClusterOptions {
  /** Extra server settings (`-c name=value`). */
  settings?: Record<string, string>;
  /** A name for messages. */
  name?: string;
}

export class PostgresCluster {
  readonly name: string;
  readonly root: string;
  readonly dataDir: string;
  readonly port: number;
  readonly #settings: Record<string, string>;
  #running = false;

  constructor(init: { name: string; root: string; port: number; settings: Record<string, string> }) {
    this.name = init.name;
    this.root = init.root;
    this.dataDir = join(init.root, "data");
    this.port = init.port;
    this.#settings = init.settings;
    clusters.add(this);
  }

  get running(): boolean {
    return this.#running;
  }

  /** postgres://postgres@127.0.0.1:PORT/DATABASE */
  url(database = "postgres"): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** The server's log so far (for failure messages). */
  log(): string {
    try {
      return readFileSync(join(this.root, "server.log"), "utf8");
    } catch {
      return "(no log)";
    }
  }

  start(): void {
    const options = [
      `-p ${this.port}`,
      "-c listen_addresses=127.0.0.1",
      `-c unix_socket_directories=${this.root}`,
      ...Object.entries(this.#settings).map(([k, v]) => `-c ${k}=${v}`),
    ].join(" ");
    runPg("pg_ctl", ["-D", this.dataDir, "-l", join(this.root, "server.log"), "-w", "-t", "60", "-o", options, "start"]);
    this.#running = true;
  }

  /** A clean stop (the server finishes and closes its connections). */
  stop(mode: "fast" | "immediate" = "fast"): void {
    if (!this.#running) return;
    runPg("pg_ctl", ["-D", this.dataDir, "-m", mode, "-w", "-t", "60", "stop"], { allowFail: true });
    this.#running = false;
  }

  /** The postmaster's pid, while it runs. */
  pid(): number | null {
    try {
      return Number(readFileSync(join(this.dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
    } catch {
      return null;
    }
  }

  /** SIGKILL of the postmaster and every backend: the machine is gone. */
  kill(): void {
    const pid = this.pid();
    if (pid !== null) {
      spawnSync("pkill", ["-KILL", "-P", String(pid)]);
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        /* already gone */
      }
    }
    this.#running = false;
  }

  /** Promotes a standby to primary. */
  promote(): void {
    runPg("pg_ctl", ["-D", this.dataDir, "-w", "-t", "60", "promote"]);
  }

  /** Runs SQL on a database of this cluster and returns the rows. */
  async query<T = Record<string, unknown>>(text: string, database = "postgres"): Promise<T[]> {
    return pgQuery<T>(this.url(database), text);
  }

  /** Stops the server and deletes its files. */
  /** Leaves the cluster running, and its directory, after this process exits (a benchmark's kept store). */
  detach(): void {
    clusters.delete(this);
  }

  remove(): void {
    this.stop("immediate");
    rmSync(this.root, { recursive: true, force: true });
    clusters.delete(this);
  }
}

const clusters = new Set<PostgresCluster>();
process.once("exit", () => {
  for (const cluster of clusters) {
    try {
      cluster.kill();
      rmSync(cluster.root, { recursive: true, force: true });
    } catch {
      /* best effort */
    }
  }
});

function makeRoot(prefix: string): string {
  const root = mkdtempSync(join("/tmp", prefix));
  chmodSync(root, 0o700);
  const owner = pgUser();
  if (owner) chownSync(root, owner.uid, owner.gid);
  return root;
}

const TEST_SETTINGS: Record<string, string> = {
  fsync: "off",
  full_page_writes: "off",
  max_connections: "300",
  shared_buffers: "64MB",
  wal_level: "replica",
  max_wal_senders: "10",
  wal_keep_size: "256MB",
  log_min_messages: "warning",
};

/** initdb + start of a new primary cluster on a free port. */
export async function startPostgresCluster(options: PostgresClusterOptions = {}): Promise<PostgresCluster> {
  const root = makeRoot("faxline-pg-");
  runPg("initdb", ["-D", join(root, "data"), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "-N"]);
  const port = await freePort();
  const cluster = new PostgresCluster({ name: options.name ?? "primary", root, port, settings: { ...TEST_SETTINGS, ...options.settings } });
  cluster.start();
  return cluster;
}

/**
 * A streaming standby of `primary` (pg_basebackup -R), started. With `synchronous`, the
 * primary is set to wait for it on every commit (synchronous_standby_names).
 */
export async function startStandby(primary: PostgresCluster, options: PostgresClusterOptions & { synchronous?: boolean } = {}): Promise<PostgresCluster> {
  const name = options.name ?? "standby";
  const root = makeRoot("faxline-pg-standby-");
  runPg("pg_basebackup", ["-h", "127.0.0.1", "-p", String(primary.port), "-U", "postgres", "-D", join(root, "data"), "-R", "-X", "stream", "-c", "fast", "-d", `application_name=${name}`]);
  const port = await freePort();
  const standby = new PostgresCluster({
    name,
    root,
    port,
    settings: { ...TEST_SETTINGS, hot_standby: "on", primary_conninfo: `'host=127.0.0.1 port=${primary.port} user=postgres application_name=${name}'`, ...options.settings },
  });
  standby.start();
  if (options.synchronous) {
    await primary.query(`alter system set synchronous_standby_names = '${name}'`);
    await primary.query("select pg_reload_conf()");
    // Wait until the standby streams and counts as synchronous.
    for (let i = 0; i < 200; i++) {
      const rows = await primary.query<{ sync_state: string }>(`select sync_state from pg_stat_replication where application_name = '${name}'`);
      if (rows[0]?.sync_state === "sync") return standby;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`standby ${name} did not become synchronous\n${standby.log()}`);
  }
  return standby;
}

let processCluster: PostgresCluster | null = null;

/** The server of the dialect-looped tests: FAXLINE_TEST_PG_URL, or a cluster of this process. */
export async function testPostgresUrl(): Promise<string> {
  const fromEnv = process.env.FAXLINE_TEST_PG_URL;
  if (fromEnv) return fromEnv;
  processCluster ??= await startPostgresCluster({ name: "test" });
  return processCluster.url();
}

/** Runs one statement on its own connection and returns the rows (bigint as number). */
export async function pgQuery<T = Record<string, unknown>>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000, types: { getTypeParser: (oid: number, format?: string) => (oid === 20 ? Number : pg.types.getTypeParser(oid, format as "text")) } as never });
  client.on("error", () => {});
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end().catch(() => {});
  }
}

/** Replaces the database name of a postgres:// URL. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** A new, empty database on the test server; `drop()` removes it. */
export async function createTestDatabase(prefix = "faxline_test"): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const server = await testPostgresUrl();
  const name = `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  await pgQuery(withDatabase(server, "postgres"), `create database "${name}" template template0 encoding 'UTF8' lc_collate 'C' lc_ctype 'C'`);
  return {
    url: withDatabase(server, name),
    name,
    async drop() {
      await pgQuery(withDatabase(server, "postgres"), `drop database if exists "${name}" with (force)`);
    },
  };
}

/** A file the shared cluster of scripts/run-tests.sh writes (for `scripts/test-postgres.ts stop`). */
export function writeClusterFile(file: string, cluster: PostgresCluster): void {
  writeFileSync(file, JSON.stringify({ root: cluster.root, dataDir: cluster.dataDir, port: cluster.port, url: cluster.url() }));
}

export function stopClusterAt(root: string): void {
  const dataDir = join(root, "data");
  if (existsSync(dataDir)) runPg("pg_ctl", ["-D", dataDir, "-m", "immediate", "-w", "stop"], { allowFail: true });
  rmSync(root, { recursive: true, force: true });
}

/** Who the test clusters' programs run as (for messages). */
export function postgresRunAs(): string {
  return IS_ROOT ? "postgres" : userInfo().username;
}

/** Waits for a child process's exit (for spawned pg tools). */
export function spawnPg(program: string, args: string[]) {
  const bin = join(postgresBinDir(), program);
  return IS_ROOT ? spawn("runuser", ["-u", "postgres", "--", bin, ...args]) : spawn(bin, args);
}

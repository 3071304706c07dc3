/**
 * Test support: real nodes on real SQLite files in temporary directories.
 *
 * `startTestNode()` starts a full in-process node (API on an ephemeral port plus scheduler,
 * sender and retention roles) with fast timings: the test line runs at `timeScale` (default
 * 0.001) and retry waits are milliseconds. `createTestLogin()` adds a login. `api()` is a small
 * fetch-based client that speaks HTTP Basic like the Retarus SDKs.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogin } from "../../src/accounts/accounts.ts";
import { loadConfig } from "../../src/config/load.ts";
import type { FaxlineConfig } from "../../src/config/schema.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import { startNode, type RunningNode } from "../../src/roles/start-node.ts";

export function tempDir(prefix = "faxline-test-"): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Config overrides that make the engine fast enough for tests. */
export const FAST_ENGINE: Record<string, unknown> = {
  "testLine.timeScale": "0.001",
  "scheduler.pollInterval": "20ms",
  "retry.busy": "10ms,10ms,10ms",
  "retry.noAnswer": "10ms,10ms",
  "retry.noFax": "10ms",
  "retry.protocol": "10ms,10ms",
  "retry.internal": "10ms,10ms",
  "retention.interval": "50ms",
  "auth.cacheTtl": "60s",
  "cluster.heartbeatInterval": "100ms",
  "cluster.dutyLease": "2s",
  "log.level": "silent",
  // Tests stop their nodes at once; test/integration/graceful-stop.test.ts tests the drain.
  "node.shutdownGrace": "0s",
};

export function testConfig(dataDir: string, overrides: Record<string, unknown> = {}): FaxlineConfig {
  return loadConfig({
    env: {},
    overrides: { "store.dataDir": dataDir, "http.host": "127.0.0.1", "http.port": 0, ...FAST_ENGINE, ...overrides },
  });
}

export interface TestNode {
  node: RunningNode;
  url: string;
  config: FaxlineConfig;
  dataDir: string;
  stop(): Promise<void>;
}

export async function startTestNode(overrides: Record<string, unknown> = {}, dataDir?: string): Promise<TestNode> {
  const dir = dataDir ? { path: dataDir, remove() {} } : tempDir();
  const config = testConfig(dir.path, overrides);
  const node = await startNode(config, silentLogger());
  return {
    node,
    url: node.url!,
    config,
    dataDir: dir.path,
    async stop() {
      await node.stop();
      dir.remove();
    },
  };
}

export async function createTestLogin(
  node: TestNode | RunningNode,
  input: { custNr?: string; login?: string; password?: string; isTest?: boolean; isAdmin?: boolean; isManager?: boolean; ipAllowList?: string[]; retentionDays?: number } = {},
): Promise<{ custNr: string; login: string; password: string }> {
  const running = "node" in node ? node.node : node;
  const account = { custNr: input.custNr ?? "99999TE", login: input.login ?? "tester", password: input.password ?? "secret-pass-1" };
  await createLogin(
    running.context.store.db,
    { ...account, isTest: input.isTest ?? true, isAdmin: input.isAdmin ?? false, isManager: input.isManager ?? false, ipAllowList: input.ipAllowList ?? null, retentionDays: input.retentionDays ?? null },
    Date.now(),
  );
  return account;
}

export interface ApiResponse<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

/** A minimal client: `api(url, creds).post("/99999TE/fax", body)`; paths are below /rest/v1. */
export function api(baseUrl: string, creds: { login: string; password: string } | null) {
  const request = async <T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> => {
    const h: Record<string, string> = { "content-type": "application/json", ...headers };
    if (creds) h.authorization = `Basic ${Buffer.from(`${creds.login}:${creds.password}`).toString("base64")}`;
    const res = await fetch(`${baseUrl}/rest/v1${path}`, {
      method,
      headers: h,
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text === "" ? null : JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed as T, headers: res.headers };
  };
  return {
    request,
    get: <T = any>(path: string, headers?: Record<string, string>) => request<T>("GET", path, undefined, headers),
    post: <T = any>(path: string, body: unknown, headers?: Record<string, string>) => request<T>("POST", path, body, headers),
    delete: <T = any>(path: string, headers?: Record<string, string>) => request<T>("DELETE", path, undefined, headers),
  };
}

export const TEXT_DOC = { name: "test.txt", data: Buffer.from("Hello, this is a test fax.\n").toString("base64") };

/** Polls until `check` returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000, what = "condition"): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits until the job's report has no PENDING recipient and returns it. */
export async function waitForFinalReport(client: ReturnType<typeof api>, custNr: string, jobId: string, timeoutMs = 15_000): Promise<any> {
  return eventually(
    async () => {
      const res = await client.get(`/${custNr}/fax/reports/${jobId}`);
      if (res.status !== 200) return undefined;
      return res.body.recipientStatus.every((r: any) => r.status !== "PENDING") ? res.body : undefined;
    },
    timeoutMs,
    `job ${jobId} to finish`,
  );
}

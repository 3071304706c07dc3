/**
 * Test support: Faxline nodes as real child processes (`faxline serve`), for tests that need
 * what an in-process node cannot give: several independent data centers side by side, a
 * SIGKILL in the middle of the work, a restart on the same data directory, the start-up checks
 * of the real command.
 *
 * `startChildNode()` picks a free port, spawns the compiled `faxline serve` (the bundle of the
 * current source, test/support/compiled-faxline.ts) with FAXLINE_* variables only from its options (the parent's FAXLINE_* variables are not passed
 * on), and resolves once GET /health answers. Standard output and error are kept (the last
 * 256 KB of each) for diagnostics: `withChildLogs()` appends them to the message of a failing
 * test. Every child started here is tracked; `stopAllChildNodes()` (call it from an `after`
 * hook) ends those still running, and a process exit hook SIGKILLs any that remain, so a
 * failing or interrupted test run never leaves a node behind.
 *
 * `runFaxlineCli()` runs any other `faxline` command (e.g. `accounts create`) to completion.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createSocket } from "node:dgram";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { COMPILED_NODE_OPTIONS, compiledCli } from "./compiled-faxline.ts";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const OUTPUT_LIMIT = 256 * 1024;

/** A TCP port that was free a moment ago (listen on port 0, read it, close). */
export async function freePort(host = "127.0.0.1"): Promise<number> {
  const server = createServer();
  server.listen(0, host);
  await once(server, "listening");
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  await new Promise<void>((r) => server.close(() => r()));
  if (port === 0) throw new Error("could not obtain a free port");
  return port;
}

/** A UDP port that was free a moment ago on `host` (bind port 0, read it, close): a node's SIP port. */
export async function freeUdpPort(host = "127.0.0.1"): Promise<number> {
  const socket = createSocket("udp4");
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(0, host, resolve);
  });
  const port = socket.address().port;
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

/** The environment of a child: the parent's minus FAXLINE_* and node:test's own variable. */
function childEnv(faxline: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith("FAXLINE_") || key === "NODE_TEST_CONTEXT") continue;
    env[key] = value;
  }
  return { ...env, ...faxline };
}

class OutputBuffer {
  #text = "";
  #dropped = 0;
  append(chunk: Buffer | string): void {
    this.#text += chunk.toString();
    if (this.#text.length > OUTPUT_LIMIT) {
      const cut = this.#text.length - OUTPUT_LIMIT;
      this.#dropped += cut;
      this.#text = this.#text.slice(cut);
    }
  }
  get text(): string {
    return this.#text;
  }
  tail(chars: number): string {
    const hidden = this.#dropped + Math.max(0, this.#text.length - chars);
    const shown = this.#text.slice(-chars);
    return hidden > 0 ? `…(${hidden} earlier characters not shown)\n${shown}` : shown;
  }
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ChildNodeOptions {
  dataDir: string;
  region?: "DE" | "US";
  datacenter?: "DE1" | "DE2" | "US1" | "US2";
  /** Test line time scale (FAXLINE_TEST_LINE_TIME_SCALE); default 0.001. */
  timeScale?: string;
  /** FAXLINE_SCHEDULER_POLL_INTERVAL; default 20ms. */
  pollInterval?: string;
  /** FAXLINE_LOG_LEVEL; default warn. */
  logLevel?: string;
  /** Further FAXLINE_* variables; they win over the ones above. */
  env?: Record<string, string>;
  /** How long to wait until the node is ready; default 30 s. */
  readyTimeoutMs?: number;
  /**
   * When the node counts as started: "health" (GET /health answers; the default) or "log" (its
   * "node started" log line, for nodes without the api role; the log level is then at least info).
   */
  ready?: "health" | "log";
  /** A name for diagnostics, e.g. "DE1". */
  name?: string;
  /**
   * Run the node as PID 1 of a PID namespace of its own (`unshare --pid --fork --kill-child
   * --mount-proc`), as in most containers. Signals go to the node itself (PID 1 inside), and
   * the node's death ends the namespace and the unshare process.
   */
  pidNamespace?: boolean;
  /**
   * A command the node runs under: its argv goes after these words (which must exec it, so that
   * the node keeps the child's pid), e.g. unshare with a small tmpfs mounted for a disk-full test.
   */
  wrap?: readonly string[];
}

/** Retry schedules of milliseconds, as the in-process FAST_ENGINE uses. */
export const FAST_RETRIES_ENV: Record<string, string> = {
  FAXLINE_RETRY_BUSY: "10ms,10ms,10ms",
  FAXLINE_RETRY_NO_ANSWER: "10ms,10ms",
  FAXLINE_RETRY_NO_FAX: "10ms",
  FAXLINE_RETRY_PROTOCOL: "10ms,10ms",
  FAXLINE_RETRY_INTERNAL: "10ms,10ms",
};

const live = new Set<ChildNode>();

export class ChildNode {
  readonly name: string;
  readonly dataDir: string;
  readonly port: number;
  readonly url: string;
  readonly pid: number;
  readonly startedAt: number;
  readonly #child: ChildProcess;
  readonly #stdout = new OutputBuffer();
  readonly #stderr = new OutputBuffer();
  readonly #exited: Promise<ExitStatus>;
  #exit: ExitStatus | null = null;
  /** Log lines whose message matched a kept pattern, kept whatever the output buffer drops. */
  readonly #kept: Array<{ pattern: RegExp; lines: Array<Record<string, unknown>> }> = [];
  #partial = "";

  readonly #pidNamespace: boolean;

  constructor(child: ChildProcess, init: { name: string; dataDir: string; port: number; host: string; pidNamespace?: boolean }) {
    this.#child = child;
    this.#pidNamespace = init.pidNamespace === true;
    this.name = init.name;
    this.dataDir = init.dataDir;
    this.port = init.port;
    this.url = `http://${init.host}:${init.port}`;
    this.pid = child.pid ?? -1;
    this.startedAt = Date.now();
    child.stdout?.on("data", (c: Buffer) => {
      this.#stdout.append(c);
      if (this.#kept.length > 0) this.#scanForKept(c.toString());
    });
    child.stderr?.on("data", (c: Buffer) => this.#stderr.append(c));
    this.#exited = new Promise<ExitStatus>((resolveExit) => {
      child.once("exit", (code, signal) => {
        this.#exit = { code, signal };
        live.delete(this);
        resolveExit(this.#exit);
      });
    });
    live.add(this);
  }

  get stdout(): string {
    return this.#stdout.text;
  }
  get stderr(): string {
    return this.#stderr.text;
  }
  /** null while running. */
  get exitStatus(): ExitStatus | null {
    return this.#exit;
  }
  get running(): boolean {
    return this.#exit === null;
  }

  /** Standard output and error (their last `chars` characters), for a failure message. */
  describe(chars = 4000): string {
    const state = this.#exit ? `exited code=${this.#exit.code} signal=${this.#exit.signal}` : "running";
    return `--- child node ${this.name} (pid ${this.pid}, ${this.url}, ${state}) ---\nstdout:\n${this.#stdout.tail(chars) || "(empty)"}\nstderr:\n${this.#stderr.tail(chars) || "(empty)"}`;
  }

  /**
   * Keeps, from now on, every JSON log line whose `msg` matches `pattern`, even when the output
   * buffer later drops it (a busy node writes more than the buffer holds). Read with keptLines().
   */
  keepLines(pattern: RegExp): void {
    this.#kept.push({ pattern, lines: [] });
  }

  /** The lines kept for `pattern` (the same RegExp object given to keepLines). */
  keptLines(pattern: RegExp): Array<Record<string, unknown>> {
    return this.#kept.find((k) => k.pattern === pattern)?.lines ?? [];
  }

  #scanForKept(chunk: string): void {
    const text = this.#partial + chunk;
    const lines = text.split("\n");
    this.#partial = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.startsWith("{")) continue;
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      if (typeof parsed.msg !== "string") continue;
      for (const k of this.#kept) if (k.pattern.test(parsed.msg)) k.lines.push(parsed);
    }
  }

  /** Parsed JSON log lines of standard output (pino); other lines are skipped. */
  logLines(): Array<Record<string, unknown>> {
    const out: Array<Record<string, unknown>> = [];
    for (const line of this.#stdout.text.split("\n")) {
      if (!line.startsWith("{")) continue;
      try {
        out.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        /* a line cut by the buffer limit */
      }
    }
    return out;
  }

  /** Closes this end of the node's standard output: its log writes then fail with EPIPE (a `| head`, a log shipper that died). */
  closeStdout(): void {
    this.#child.stdout?.destroy();
  }

  kill(signal: NodeJS.Signals = "SIGTERM"): void {
    if (this.#exit !== null) return;
    if (this.#pidNamespace) {
      // The node is the unshare process's one child: PID 1 inside, another pid out here.
      const inner = this.namespacedPid();
      if (inner !== null) {
        try {
          process.kill(inner, signal);
          return;
        } catch {
          /* gone meanwhile: fall through to unshare */
        }
      }
    }
    this.#child.kill(signal);
  }

  /** With pidNamespace: the node's pid as seen from here (it is 1 inside its namespace), or null. */
  namespacedPid(): number | null {
    try {
      const children = readFileSync(`/proc/${this.pid}/task/${this.pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean);
      return children.length > 0 ? Number(children[0]) : null;
    } catch {
      return null;
    }
  }

  /** Resolves when the process has exited; rejects after `timeoutMs`. */
  async waitForExit(timeoutMs = 15_000): Promise<ExitStatus> {
    if (this.#exit) return this.#exit;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${this.name} (pid ${this.pid}) did not exit within ${timeoutMs} ms\n${this.describe()}`)), timeoutMs);
    });
    try {
      return await Promise.race([this.#exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** SIGTERM (graceful), then SIGKILL if it has not exited after `graceMs`. */
  async stop(graceMs = 10_000): Promise<ExitStatus> {
    if (this.#exit) return this.#exit;
    this.kill("SIGTERM");
    try {
      return await this.waitForExit(graceMs);
    } catch {
      this.kill("SIGKILL");
      return this.waitForExit(5_000);
    }
  }
}

function spawnServe(options: ChildNodeOptions, port: number, cli: string): ChildNode {
  const host = "127.0.0.1";
  const env = childEnv({
    FAXLINE_DATA_DIR: options.dataDir,
    FAXLINE_HOST: host,
    FAXLINE_PORT: String(port),
    FAXLINE_REGION: options.region ?? "DE",
    FAXLINE_DATACENTER: options.datacenter ?? "DE1",
    FAXLINE_TEST_LINE_TIME_SCALE: options.timeScale ?? "0.001",
    FAXLINE_SCHEDULER_POLL_INTERVAL: options.pollInterval ?? "20ms",
    FAXLINE_LOG_LEVEL: options.logLevel ?? "warn",
    // Stopped at once unless a test gives the drain time (graceful-stop.test.ts).
    FAXLINE_NODE_SHUTDOWN_GRACE: "0s",
    ...options.env,
    // A node whose start is seen in its log must log at info at least.
    ...(options.ready === "log" && !["info", "debug", "trace"].includes(options.env?.FAXLINE_LOG_LEVEL ?? options.logLevel ?? "warn") ? { FAXLINE_LOG_LEVEL: "info" } : {}),
  });
  const argv = [process.execPath, ...COMPILED_NODE_OPTIONS, cli, "serve"];
  if (options.pidNamespace) argv.unshift("unshare", "--pid", "--fork", "--kill-child", "--mount-proc");
  if (options.wrap !== undefined) argv.unshift(...options.wrap);
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: REPO_ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new ChildNode(child, { name: options.name ?? options.datacenter ?? "node", dataDir: options.dataDir, port, host, pidNamespace: options.pidNamespace });
}

async function waitForStartedLog(node: ChildNode, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (!node.running) throw new Error(`${node.name} exited before it logged "node started"\n${node.describe()}`);
    if (node.logLines().some((l) => l.msg === "node started")) return;
    if (Date.now() > end) {
      node.kill("SIGKILL");
      throw new Error(`${node.name} did not log "node started" within ${timeoutMs} ms\n${node.describe()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function waitForHealth(node: ChildNode, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (!node.running) throw new Error(`${node.name} exited before it answered /health\n${node.describe()}`);
    try {
      const res = await fetch(`${node.url}/health`, { signal: AbortSignal.timeout(1000) });
      if (res.status === 200) {
        await res.arrayBuffer();
        return;
      }
    } catch {
      /* not listening yet */
    }
    if (Date.now() > end) {
      node.kill("SIGKILL");
      throw new Error(`${node.name} did not answer /health within ${timeoutMs} ms\n${node.describe()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Starts `faxline serve` and waits until /health answers. A port taken between the probe and
 * the child's listen (EADDRINUSE) is retried on another port.
 */
export async function startChildNode(options: ChildNodeOptions): Promise<ChildNode> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const node = spawnServe(options, port, await compiledCli());
    try {
      if (options.ready === "log") await waitForStartedLog(node, options.readyTimeoutMs ?? 30_000);
      else await waitForHealth(node, options.readyTimeoutMs ?? 30_000);
      return node;
    } catch (err) {
      if (attempt < 3 && /EADDRINUSE/.test(node.stdout + node.stderr)) continue;
      throw err;
    }
  }
}

/** Runs a non-serve `faxline` command with the given FAXLINE_* variables to its end. */
export async function runFaxlineCli(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 30_000,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...COMPILED_NODE_OPTIONS, await compiledCli(), ...args], {
    cwd: REPO_ROOT,
    env: childEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  try {
    const [code, signal] = (await once(child, "exit")) as [number | null, NodeJS.Signals | null];
    return { code, signal, stdout, stderr };
  } finally {
    clearTimeout(timer);
  }
}

export interface CliAccount {
  custNr: string;
  login: string;
  password: string;
}

/** `faxline accounts create … --test` on the store of `dataDir`; throws unless it succeeds. */
export async function createAccountWithCli(dataDir: string, account: CliAccount, options: { test?: boolean; env?: Record<string, string> } = {}): Promise<void> {
  const args = ["accounts", "create", "--customer", account.custNr, "--login", account.login, "--password", account.password];
  if (options.test ?? true) args.push("--test");
  const result = await runFaxlineCli(args, { FAXLINE_DATA_DIR: dataDir, FAXLINE_LOG_LEVEL: "warn", ...options.env });
  if (result.code !== 0) {
    throw new Error(`faxline ${args.slice(0, 2).join(" ")} failed (code ${result.code}, signal ${result.signal})\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
  }
}

/** Ends every child node still running (SIGTERM, then SIGKILL). For `after` hooks. */
export async function stopAllChildNodes(): Promise<void> {
  await Promise.allSettled([...live].map((n) => n.stop(5_000)));
}

/**
 * Runs `fn`; if it throws, rethrows an error whose message also carries the output of the
 * given child nodes (taken lazily, so nodes started inside `fn` can be named via a getter).
 */
export async function withChildLogs<T>(nodes: () => Array<ChildNode | undefined>, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const logs = nodes()
      .filter((n): n is ChildNode => n !== undefined)
      .map((n) => n.describe())
      .join("\n");
    if (err instanceof Error) {
      err.message = `${err.message}\n${logs}`;
      throw err;
    }
    throw new Error(`${String(err)}\n${logs}`);
  }
}

process.once("exit", () => {
  for (const node of live) node.kill("SIGKILL");
});

/**
 * `npm run bench:memory` — how much memory a node takes for large request bodies, and whether it
 * gives it back (issue 13 saw a 1.23 GB peak and 676 MB idle after 50 MB bodies).
 *
 * A node runs as its own process (the compiled CLI, `npm run build` first: `faxline serve` on
 * SQLite in a temporary data directory, a test account), and its resident set is read from
 * /proc/PID/status: the RSS before, the peak over the requests (VmHWM, reset before each row
 * through /proc/PID/clear_refs, which needs the process's owner or root), and the RSS
 * 5 s and 30 s after the last answer. The requests, one after the other, each over a new connection:
 *
 *  - accepted: `--count` bodies of about 50 MB (two 18 MB text documents, base64; the job is
 *    accepted and fails at rendering, past the page limit, without drawing pages);
 *  - refused: `--count` bodies of about 50 MB with one 37 MB document (400 document_too_large).
 *
 * Both run twice: with glibc's default malloc settings, and with the settings scripts/install.sh
 * and the examples/ start a node with (MALLOC_ARENA_MAX=2, MALLOC_MMAP_THRESHOLD_=131072,
 * MALLOC_TRIM_THRESHOLD_=131072: large blocks mapped and unmapped on their own, freed memory at the
 * top of the heap given back), which is what lets the resident set fall after the requests.
 *
 * Reference, in the same run and with the same malloc settings: a bare Node HTTP server (node:http, no framework) that reads each
 * body, JSON.parse-s it and decodes the documents' base64 into Buffers, then answers 201: the
 * least any JSON API must hold for such a body. Ratios are Faxline / reference.
 *
 * Options: --count N (5)
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { count: { type: "string", default: "5" } } });
const count = Number(values.count);
const MiB = 1024 * 1024;

if (!existsSync(resolve("dist/cli/main.js"))) {
  console.error("bench:memory measures the compiled node: run `npm run build` first");
  process.exit(1);
}

function freePort(): Promise<number> {
  return new Promise((r) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => r(port));
    });
  });
}

function status(pid: number): { rss: number; hwm: number } {
  const text = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? 0);
  return { rss: kib("VmRSS") * 1024, hwm: kib("VmHWM") * 1024 };
}

/** Text of `bytes` bytes: numbered 70-character lines. */
function textOf(bytes: number): string {
  const line = "Faxline memory bench: a line of plain text that wraps nowhere 0123456789";
  const lines = Math.ceil(bytes / (line.length + 1));
  return Array.from({ length: lines }, () => line).join("\n").slice(0, bytes);
}
const doc18 = Buffer.from(textOf(18 * MiB)).toString("base64");
const doc37 = Buffer.from(textOf(37 * MiB)).toString("base64");
const accepted = JSON.stringify({ recipients: [{ number: "+4900000020" }], documents: [{ name: "a.txt", data: doc18 }, { name: "b.txt", data: doc18 }] });
const refused = JSON.stringify({ recipients: [{ number: "+4900000020" }], documents: [{ name: "big.txt", data: doc37 }] });

async function waitUp(url: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`the process exited (${child.exitCode})`);
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${url} did not come up`);
}

interface Figures {
  before: number;
  peak: number;
  after5: number;
  after30: number;
  statuses: string;
}

/** Resets the process's peak RSS (VmHWM) to its current RSS (Linux: "5" to clear_refs), so that each row has its own peak. */
function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
}

async function measure(pid: number, post: (body: string) => Promise<number>, body: string): Promise<Figures> {
  resetPeak(pid);
  const before = status(pid).rss;
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) statuses.push(await post(body));
  const peak = status(pid).hwm;
  await new Promise((r) => setTimeout(r, 5_000));
  const after5 = status(pid).rss;
  await new Promise((r) => setTimeout(r, 25_000));
  const after30 = status(pid).rss;
  return { before, peak, after5, after30, statuses: [...new Set(statuses)].join(",") };
}

const REFERENCE = `
const http = require("node:http");
http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    if (chunks.length === 0) return res.end("up");
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    const docs = body.documents.map((d) => Buffer.from(d.data, "base64"));
    res.writeHead(201, { "content-type": "application/json", connection: "close" });
    res.end(JSON.stringify({ jobId: "ref", bytes: docs.reduce((n, d) => n + d.length, 0) }));
  });
}).listen(Number(process.env.PORT), "127.0.0.1");
`;

const TUNED_MALLOC = { MALLOC_ARENA_MAX: "2", MALLOC_MMAP_THRESHOLD_: "131072", MALLOC_TRIM_THRESHOLD_: "131072" };
const UNSET_MALLOC = { MALLOC_ARENA_MAX: undefined, MALLOC_MMAP_THRESHOLD_: undefined, MALLOC_TRIM_THRESHOLD_: undefined };

async function runConfig(label: string, malloc: Record<string, string | undefined>): Promise<Array<[string, Figures, Figures]>> {
  const dir = mkdtempSync(join(tmpdir(), "faxline-memory-bench-"));
  const children: ChildProcess[] = [];
  try {
    const base = { ...process.env, ...malloc };
    for (const [k, v] of Object.entries(base)) if (v === undefined) delete base[k];
    const env = { ...base, FAXLINE_DATA_DIR: join(dir, "data"), FAXLINE_LOG_LEVEL: "warn" };
    const create = spawn(process.execPath, ["bin/faxline.js", "accounts", "create", "--customer", "99999TE", "--login", "bench", "--password", "bench-password", "--test"], { env, stdio: "ignore" });
    await new Promise((r) => create.once("exit", r));

    const refPort = await freePort();
    const ref = spawn(process.execPath, ["-e", REFERENCE], { env: { ...base, PORT: String(refPort) }, stdio: "inherit" });
    children.push(ref);
    const refUrl = `http://127.0.0.1:${refPort}/`;
    await waitUp(refUrl, ref);

    const port = await freePort();
    const node = spawn(process.execPath, ["bin/faxline.js", "serve"], { env: { ...env, FAXLINE_PORT: String(port), FAXLINE_HOST: "127.0.0.1" }, stdio: ["ignore", "ignore", "inherit"] });
    children.push(node);
    const url = `http://127.0.0.1:${port}`;
    await waitUp(`${url}/health`, node);
    await new Promise((r) => setTimeout(r, 2_000));

    const auth = `Basic ${Buffer.from("bench:bench-password").toString("base64")}`;
    const postTo = (to: string) => async (body: string) => {
      const res = await fetch(to, { method: "POST", headers: { "content-type": "application/json", authorization: auth, connection: "close" }, body });
      await res.arrayBuffer();
      return res.status;
    };
    const rows: Array<[string, Figures, Figures]> = [];
    for (const [name, body] of [["accepted (two 18 MB documents)", accepted], ["refused (one 37 MB document)", refused]] as const) {
      const ours = await measure(node.pid!, postTo(`${url}/rest/v1/99999TE/fax`), body);
      const theirs = await measure(ref.pid!, postTo(refUrl), body);
      rows.push([`${label}: ${name}, ${(Buffer.byteLength(body) / MiB).toFixed(0)} MB body`, ours, theirs]);
    }
    return rows;
  } finally {
    for (const c of children) c.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
}

async function run(): Promise<void> {
  const rows = [...(await runConfig("glibc defaults", UNSET_MALLOC)), ...(await runConfig("tuned malloc", TUNED_MALLOC))];
  console.log(`bench:memory ${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model ?? "?"} × ${cpus().length}, node ${process.version}, ${count} requests per row, one after the other`);
  console.log("| requests | answer | RSS before MiB | peak MiB (× ref) | RSS 5 s after (× ref) | RSS 30 s after (× ref) | reference peak / 30 s after MiB |");
  console.log("|---|---|---:|---:|---:|---:|---:|");
  const m = (n: number) => (n / MiB).toFixed(0);
  for (const [name, o, r] of rows) {
    console.log(
      `| ${name} | ${o.statuses} | ${m(o.before)} | ${m(o.peak)} (${(o.peak / r.peak).toFixed(1)}) | ${m(o.after5)} (${(o.after5 / r.after5).toFixed(1)}) | ${m(o.after30)} (${(o.after30 / r.after30).toFixed(1)}) | ${m(r.peak)} / ${m(r.after30)} |`,
    );
  }
}

await run();

/**
 * `npm run bench:cli` — what a `faxline` command costs to start: wall time from spawn to exit and
 * the kernel's peak RSS (GNU time's %M), for the compiled CLI (`bin/faxline.js`, `npm run build`
 * first), beside a bare `node -e ""` start as the reference (ratios to it).
 *
 * Commands: `--help`, `test-numbers` (no store), `accounts list` (opens the embedded SQLite store
 * in a temporary data directory), `render` of a one-line text file (loads the renderer).
 * Each runs once to warm the file cache, then --reps times; the median wall time and the largest
 * peak RSS are shown.
 *
 * Options: --reps N (9)
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { reps: { type: "string", default: "9" } } });
const reps = Number(values.reps);
const bin = resolve("bin/faxline.js");
if (!existsSync(resolve("dist/cli/main.js"))) {
  console.error("bench:cli measures the compiled CLI: run `npm run build` first");
  process.exit(1);
}
const hasGnuTime = spawnSync("/usr/bin/time", ["-f", "%M", "true"]).status === 0;
if (!hasGnuTime) {
  console.error("bench:cli needs GNU time (/usr/bin/time, Debian package time) for the peak RSS");
  process.exit(1);
}

const dir = mkdtempSync(join(tmpdir(), "faxline-cli-bench-"));
const textFile = join(dir, "hello.txt");
writeFileSync(textFile, "Hello fax\n");
const env = { ...process.env, FAXLINE_DATA_DIR: join(dir, "data"), FAXLINE_LOG_LEVEL: "warn" };

function runOnce(argv: string[]): { ms: number; rssKiB: number } {
  const started = process.hrtime.bigint();
  const r = spawnSync("/usr/bin/time", ["-f", "%M", ...argv], { env, encoding: "utf8" });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (r.status !== 0) throw new Error(`${argv.join(" ")} exited ${r.status}: ${r.stderr}`);
  const rssKiB = Number(r.stderr.trim().split("\n").at(-1));
  return { ms, rssKiB };
}

function measure(argv: string[]): { medianMs: number; peakMiB: number } {
  runOnce(argv);
  const runs = Array.from({ length: reps }, () => runOnce(argv));
  const times = runs.map((r) => r.ms).sort((a, b) => a - b);
  return { medianMs: times[Math.floor(times.length / 2)]!, peakMiB: Math.max(...runs.map((r) => r.rssKiB)) / 1024 };
}

const cases: Array<[string, string[]]> = [
  ["node -e \"\" (reference)", [process.execPath, "-e", ""]],
  ["faxline --help", [process.execPath, bin, "--help"]],
  ["faxline test-numbers", [process.execPath, bin, "test-numbers"]],
  ["faxline accounts list", [process.execPath, bin, "accounts", "list"]],
  ["faxline render (1 text page)", [process.execPath, bin, "render", textFile, "--out", join(dir, "out.tif")]],
];

console.log(`bench:cli ${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model ?? "?"} × ${cpus().length}, node ${process.version}, ${reps} runs each (median wall, peak RSS)`);
console.log("| command | wall ms | × node | peak RSS MiB | × node |");
console.log("|---|---:|---:|---:|---:|");
let reference: { medianMs: number; peakMiB: number } | null = null;
try {
  for (const [name, argv] of cases) {
    const m = measure(argv);
    reference ??= m;
    console.log(`| ${name} | ${m.medianMs.toFixed(0)} | ${(m.medianMs / reference.medianMs).toFixed(1)} | ${m.peakMiB.toFixed(0)} | ${(m.peakMiB / reference.peakMiB).toFixed(1)} |`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * `npm run bench:cli` — what a `faxline` command costs to start: wall time from spawn to exit and
 * the kernel's peak RSS (GNU time's %M), for the compiled CLI (`bin/faxline.js`, `npm run build`
 * first), beside a bare `node -e ""` start as the reference (ratios to it).
 *
 * Commands: `--help`, `test-numbers` (no store), `accounts list` (opens the embedded SQLite store
 * in a temporary data directory), `render` of a one-line text file (loads the renderer), and
 * `render` of a 19 MB text, far past the 500-page limit (fails with document_too_large; how soon
 * it fails is the point: issue 13 saw 43–52 s).
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
// 19 MB of 12-word lines from a fixed word list (about 1.6 million lines, 26 000 pages).
const WORDS = ["fax", "invoice", "payment", "total", "amount", "delivery", "contract", "Faxline", "page", "order"];
const longText = join(dir, "long.txt");
{
  const lines: string[] = [];
  let size = 0;
  let seed = 1;
  while (size < 19 * 1024 * 1024) {
    const words: string[] = [];
    for (let w = 0; w < 12; w++) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      words.push(WORDS[seed % WORDS.length]!);
    }
    const line = words.join(" ");
    lines.push(line);
    size += line.length + 1;
  }
  writeFileSync(longText, lines.join("\n"));
}
const env: Record<string, string | undefined> = { ...process.env, FAXLINE_DATA_DIR: join(dir, "data"), FAXLINE_LOG_LEVEL: "warn" };
// Each command as the faxline command sets it up (the fonts row below overrides it).
delete env.DISABLE_SYSTEM_FONTS_LOAD;

/** The environment of a command: the bench's, with `extra` on top. */
type Case = [name: string, argv: string[], expectedStatus?: number, extra?: Record<string, string>];

function runOnce(argv: string[], expectedStatus = 0, extra: Record<string, string> = {}): { ms: number; rssKiB: number } {
  const started = process.hrtime.bigint();
  const r = spawnSync("/usr/bin/time", ["-f", "%M", ...argv], { env: { ...env, ...extra }, encoding: "utf8" });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (r.status !== expectedStatus) throw new Error(`${argv.join(" ")} exited ${r.status}: ${r.stderr}`);
  const rssKiB = Number(r.stderr.trim().split("\n").at(-1));
  return { ms, rssKiB };
}

function measure(argv: string[], expectedStatus = 0, extra: Record<string, string> = {}): { medianMs: number; peakMiB: number } {
  runOnce(argv, expectedStatus, extra);
  const runs = Array.from({ length: reps }, () => runOnce(argv, expectedStatus, extra));
  const times = runs.map((r) => r.ms).sort((a, b) => a - b);
  return { medianMs: times[Math.floor(times.length / 2)]!, peakMiB: Math.max(...runs.map((r) => r.rssKiB)) / 1024 };
}

const cases: Case[] = [
  ["node -e \"\" (reference)", [process.execPath, "-e", ""]],
  ["faxline --help", [process.execPath, bin, "--help"]],
  ["faxline test-numbers", [process.execPath, bin, "test-numbers"]],
  ["faxline accounts list", [process.execPath, bin, "accounts", "list"]],
  ["faxline render (1 text page)", [process.execPath, bin, "render", textFile, "--out", join(dir, "out.tif")]],
  // The same with the system fonts scanned at start, as before 2026-11-27 (src/render/fonts/system-fonts.ts).
  ["faxline render (1 text page), system fonts at start", [process.execPath, bin, "render", textFile, "--out", join(dir, "out.tif")], 0, { DISABLE_SYSTEM_FONTS_LOAD: "" }],
  ["faxline render (19 MB text, past the page limit: exit 1)", [process.execPath, bin, "render", longText, "--out", join(dir, "long.tif")], 1],
];

console.log(`bench:cli ${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model ?? "?"} × ${cpus().length}, node ${process.version}, ${reps} runs each (median wall, peak RSS)`);
console.log("| command | wall ms | × node | peak RSS MiB | × node |");
console.log("|---|---:|---:|---:|---:|");
let reference: { medianMs: number; peakMiB: number } | null = null;
try {
  for (const [name, argv, expectedStatus, extra] of cases) {
    const m = measure(argv, expectedStatus, extra);
    reference ??= m;
    console.log(`| ${name} | ${m.medianMs.toFixed(0)} | ${(m.medianMs / reference.medianMs).toFixed(1)} | ${m.peakMiB.toFixed(0)} | ${(m.peakMiB / reference.peakMiB).toFixed(1)} |`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

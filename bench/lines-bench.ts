/**
 * `npm run bench:lines` — how many real-time fax calls one core carries: the media half of the SIP
 * line (src/line/fax-engine with the SpanDSP addon, src/line/media) sending one-page faxes at
 * the same time, in real time, to SpanDSP receivers in other processes.
 *
 * T.38: for each step of `--t38-calls` (a ramp), that many calls run at once, each a T.38 session
 * (`runT38Session`) over its own UDPTL socket (redundancy 3) to its own T.38 receiver
 * (test/peers/spandsp-receiver). The starts are spread over the first second, as independent
 * calls would be. Every 20 ms engine tick of every call is timed against the wall clock: its
 * **pacing error** is how late the tick ran behind the moment it was due (the runner sends the
 * tick's IFPs at once, so this is how late they leave). A step is sustained when every fax ended
 * T30_ERR_OK and the 99th percentile of the pacing error is under 5 ms; the ramp stops after the
 * first step that is not.
 *
 * G.711: `--g711-calls` calls at once over RTP (PCMA, 20 ms packets) to SpanDSP G.711 receivers;
 * the CPU time this process used (`process.cpuUsage`, user + system) divided by the calls and by
 * the wall time is the CPU per real-time G.711 call, in percent of one core.
 *
 * One core: `npm run bench:lines` runs this process under `taskset -c 0` (its whole thread pool
 * and GC threads included) and starts the receivers on the other cores (`taskset -c 1-N`), so they
 * do not take the sender's CPU. The process's CPU list is printed; on a one-core machine both
 * share it and the figures are pessimistic.
 *
 * The page: a full A4 page of text at HIGH (204 x 196 dpi) rendered by Faxline, about 30 s on
 * the line at 14 400 bit/s with ECM. SIP signalling is not included (a call set-up against SIPp
 * on loopback takes about 3 ms of the same event loop).
 *
 * Columns: pacing error p50/p99/max (and when the worst tick came, seconds into the step), the
 * share of ticks 5 ms late or more, this process's CPU (of one core, and per call), peak RSS, the
 * longest GC pause, the longest single call into the engine (SpanDSP prepares a page's T.4/T.6
 * data at the start of phase C in one go: every other call waits meanwhile), wall time.
 *
 * Receiving (`--direction receive`): the same, the other way round: each T.38 call is a session
 * in receive mode (the called terminal, as the SIP line's answering side runs it), and each far
 * end is the SpanDSP harness in its send mode (-t), which starts its clock on our first datagram
 * (our CED and DIS). A call is OK when our session ends T30_ERR_OK with the page received and the
 * sender exits 0. G.711 receiving is not measured (the G.711 harness has no send side).
 *
 * Media processes (`--processes K`, default 1): the sessions run as a node runs them, in media
 * processes of their own (src/line/media-host/, docs/adr/0010), here K forks of
 * lines-media-worker.ts on the same core, the calls dealt out in turn; their figures are merged.
 * `--media inline` runs them on this process's event loop instead, as a node did before the media
 * process. `--nice N` gives the media processes that nice value (lines.mediaNice; negative needs
 * root or CAP_SYS_NICE).
 *
 * API load (`--api-load`): this process also runs a Faxline node with the api role (SQLite), on
 * the same core as the media processes, and a client process on the peers' cores keeps 16
 * requests in flight against it (POST /fax and GET /fax/reports in turn, bench/api-load-worker.ts)
 * for the whole step; the API's throughput and latency meanwhile are printed under each row.
 *
 * Options: --t38-calls 1,50,100,200,300,400  --g711-calls 1,10  --ecm on|off (on)
 *          --direction send|receive (send)  --processes K (1)  --media process|inline (process)
 *          --nice N (-20, the node's default lines.mediaNice)  --api-load
 *          --offload on|off (on): T.38 sessions hand received IFPs to the engine off the event loop
 *          (receiveIfpAsync, as the node does since 2026-11-26); off: on the loop, as before
 *          --page-file uncompressed|g4 (uncompressed): the page file the engine reads, as the SIP
 *          line makes it since 2026-11-26, or the G4 file as before
 *          --spool on|off|both (on): receiving, each reception kept as the SIP line keeps it since
 *          ADR 0020 (a spool directory, every page fsynced before its MCF); off: in a plain file,
 *          as before; both: every step twice, without then with, and the ratio of receptions per
 *          core (by this process's CPU) between them
 *          --spread S: the calls start evenly over the first S seconds (1). With 1 they all reach
 *          phase C within a second, the worst case; with 20 or more they overlap as calls that
 *          come and go do.
 *          --tick-slots on|off (on): each media process spreads its sessions' 20 ms ticks over
 *          the period (TickSlots, as the node does since 2026-11-26); off: a session ticks in the
 *          phase it starts in, as before (with --spread 20 and 200 or 500 calls, starts 100 or
 *          40 ms apart, every call then ticks in the same millisecond)
 *          --peers shared|process (shared): the far ends of the T.38 calls as one harness process
 *          per peer core, each running its share of the calls on one event loop (the harness's
 *          -n, since 2026-11-27); process: one harness process per call, as before (at a few
 *          hundred calls the peers' core then spends most of its time waking them, and it, not
 *          Faxline, is the limit). G.711 peers are always one process per call.
 *          --peers-nice N (-5): the nice value of the shared T.38 harness processes. They stand
 *          for remote fax machines, and with --api-load they share their core with the API
 *          client: at -5 the client, not the far ends, yields when that core is short (300 calls
 *          starting within one second end their pages together, and a far end held up for
 *          seconds then misses its T.30 timers, a failure of the bench's peers, not of Faxline).
 *          Not used with --peers process.
 * Environment: BENCH_MEDIA_ARGV, Node options for the media processes, space-separated (for
 * example "--cpu-prof --cpu-prof-dir=prof" or "--trace-gc").
 */
import { fork, spawn } from "node:child_process";
import { readFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { cpus, loadavg, platform, release, setPriority, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { performance } from "node:perf_hooks";
import { SpandspEngine, uncompressFaxTiff } from "../src/line/fax-engine/spandsp-engine.ts";
import { runSessions, summarizePacing, PACING_LIMIT_MS, TICK_MS, type GcRecorder, type PacingRecorder, type SessionsJob, type SessionsResult } from "./lines-sessions.ts";
import { renderFaxJob } from "../src/render/render-fax-job.ts";
import { createLogin } from "../src/accounts/accounts.ts";
import { loadConfig } from "../src/config/load.ts";
import { silentLogger } from "../src/lib/logger.ts";
import { startNode } from "../src/roles/start-node.ts";
import { cleanupPeers, startG711Receiver, startT38Peers, startT38Receiver, startT38Sender, type ReceiverRun } from "../test/interop/peer-processes.ts";
import { requireNativeBuild } from "../test/interop/interop-support.ts";


const { values: args } = parseArgs({
  options: {
    "t38-calls": { type: "string", default: "1,50,100,200,300,400" },
    "g711-calls": { type: "string", default: "1,10" },
    ecm: { type: "string", default: "on" },
    spread: { type: "string", default: "1" },
    direction: { type: "string", default: "send" },
    media: { type: "string", default: "process" },
    processes: { type: "string", default: "1" },
    "api-load": { type: "boolean", default: false },
    nice: { type: "string", default: "-20" },
    offload: { type: "string", default: "on" },
    "tick-slots": { type: "string", default: "on" },
    "page-file": { type: "string", default: "uncompressed" },
    peers: { type: "string", default: "shared" },
    "peers-nice": { type: "string", default: "-5" },
    spool: { type: "string", default: "on" },
  },
});
if (args.peers !== "shared" && args.peers !== "process") throw new Error(`--peers must be shared or process, not ${args.peers}`);
const sharedPeers = args.peers === "shared";
const peersNice = Number(args["peers-nice"]);
if (!Number.isInteger(peersNice) || peersNice < -20 || peersNice > 19) throw new Error(`--peers-nice must be a whole number from -20 to 19, not ${args["peers-nice"]}`);
if (args.offload !== "on" && args.offload !== "off") throw new Error(`--offload must be on or off, not ${args.offload}`);
const offloadReceive = args.offload === "on";
if (args["tick-slots"] !== "on" && args["tick-slots"] !== "off") throw new Error(`--tick-slots must be on or off, not ${args["tick-slots"]}`);
const tickSlots = args["tick-slots"] === "on";
const receiving = args.direction === "receive";
if (!["on", "off", "both"].includes(args.spool!)) throw new Error(`--spool must be on, off or both, not ${args.spool}`);
/** Receiving: the variants of each step, without and with the reception spool (ADR 0020). */
const spoolVariants: boolean[] = !receiving ? [false] : args.spool === "both" ? [false, true] : [args.spool === "on"];
if (!receiving && args.direction !== "send") throw new Error(`--direction must be send or receive, not ${args.direction}`);
const list = (text: string): number[] => text.split(",").filter((x) => x.trim() !== "").map((x) => {
  const n = Number(x);
  if (!Number.isInteger(n) || n < 1) throw new Error(`not a call count: ${x}`);
  return n;
});
const t38Steps = list(args["t38-calls"]);
const g711Steps = list(args["g711-calls"]);
const ecm = args.ecm !== "off";
const spreadS = Number(args.spread);
if (!(spreadS >= 0)) throw new Error(`--spread must be seconds >= 0, not ${args.spread}`);
const inlineMedia = args.media === "inline";
if (!inlineMedia && args.media !== "process") throw new Error(`--media must be process or inline, not ${args.media}`);
const mediaProcesses = Number(args.processes);
if (!Number.isInteger(mediaProcesses) || mediaProcesses < 1) throw new Error(`--processes must be a whole number >= 1, not ${args.processes}`);
const apiLoad = args["api-load"];
const mediaNice = Number(args.nice);
if (!Number.isInteger(mediaNice) || mediaNice < -20 || mediaNice > 19) throw new Error(`--nice must be a whole number from -20 to 19, not ${args.nice}`);

/** The CPUs this process may run on, from /proc/self/status. */
function ownCpus(): string {
  return /^Cpus_allowed_list:\s*(.+)$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1]?.trim() ?? "unknown";
}

/** The CPU numbers of a list such as "0-2,5". */
function cpuList(list: string): number[] {
  const out: number[] = [];
  for (const part of list.split(",")) {
    const [a, b] = part.split("-").map(Number);
    if (a === undefined || Number.isNaN(a)) continue;
    for (let c = a; c <= (b ?? a); c++) out.push(c);
  }
  return out;
}

/** The CPUs other than this process's, for the receivers; undefined when there are none. */
function peerCpus(): string | undefined {
  const mine = new Set(cpuList(ownCpus()));
  const others = cpus().map((_, i) => i).filter((i) => !mine.has(i));
  return others.length > 0 ? others.join(",") : undefined;
}

interface StepResult {
  calls: number;
  ok: number;
  wallS: number;
  cpuMs: number;
  pacing: ReturnType<PacingRecorder["summary"]>;
  gc: ReturnType<GcRecorder["stop"]>;
  longestEngineCallMs: number;
  maxRssMiB: number;
  failures: string[];
  api: ApiLoadResult | null;
}

/** Runs a job in a new media process (this script with --worker), on this process's CPUs. */
function runSessionsInProcess(job: SessionsJob): Promise<SessionsResult> {
  const child = fork(fileURLToPath(new URL("./lines-media-worker.ts", import.meta.url)), [], { execArgv: ["--import", "tsx", ...(process.env.BENCH_MEDIA_ARGV ? process.env.BENCH_MEDIA_ARGV.split(/\s+/).filter(Boolean) : [])], serialization: "advanced" });
  if (mediaNice !== 0) {
    try {
      setPriority(child.pid!, mediaNice);
    } catch (error) {
      console.error(`cannot set the media process's nice value to ${mediaNice}: ${(error as Error).message}`);
    }
  }
  return new Promise((resolve, reject) => {
    child.once("message", (result: SessionsResult) => resolve(result));
    // Not on "exit": that can come before the result still in the IPC pipe has been read. The
    // channel closes after every message in it has been delivered.
    child.once("disconnect", () => setImmediate(() => reject(new Error(`a media process of the bench ended (exit code ${child.exitCode}) before its result`))));
    child.send(job);
  });
}

async function runStep(kind: "t38" | "g711", calls: number, tiffPath: string, engine: SpandspEngine, receiverCpus: string | undefined, rxDir: string, api: ApiTarget | null, spool = false): Promise<StepResult> {
  const receivers: ReceiverRun[] = [];
  if (kind === "t38" && sharedPeers) {
    // One harness process per peer core, the calls dealt out in turn (call i to process i % n).
    const groups = Math.min(calls, receiverCpus === undefined ? 1 : cpuList(receiverCpus).length);
    const started = await Promise.all(
      Array.from({ length: groups }, (_, k) => {
        const count = Math.floor(calls / groups) + (k < calls % groups ? 1 : 0);
        const cpu = receiverCpus === undefined ? {} : { cpus: String(cpuList(receiverCpus)[k]) };
        return startT38Peers(count, { speed: 1, ecm, ident: receiving ? `TX${k}` : `RX${k}`, wallSeconds: 180, nice: peersNice, ...cpu, ...(receiving ? { txFile: tiffPath } : {}) });
      }),
    );
    for (let i = 0; i < calls; i++) receivers.push(started[i % groups]![Math.floor(i / groups)]!);
  } else {
    for (let i = 0; i < calls; i++) {
      const common = { speed: 1, ecm, ident: `RX-${i}`, wallSeconds: 180, ...(receiverCpus !== undefined ? { cpus: receiverCpus } : {}) };
      if (receiving) receivers.push(await startT38Sender({ ...common, ident: `TX-${i}`, txFile: tiffPath }));
      else receivers.push(await (kind === "t38" ? startT38Receiver(common) : startG711Receiver(common)));
    }
  }
  const load = api === null ? null : startApiLoad(api, receiverCpus);
  const started = performance.now();
  const shares = inlineMedia ? 1 : mediaProcesses;
  const jobs: SessionsJob[] = Array.from({ length: shares }, (_, k) => {
    const indices = Array.from({ length: calls }, (_, i) => i).filter((i) => i % shares === k);
    return { kind, calls, indices, ports: indices.map((i) => receivers[i]!.port), tiffPath, rxDir, spreadS, ecm, receiving, offloadReceive, tickSlots, spool };
  }).filter((j) => j.indices.length > 0);
  const parts = await Promise.all(jobs.map((job) => (inlineMedia ? runSessions(job, engine) : runSessionsInProcess(job))));
  const wallS = (performance.now() - started) / 1000;
  const apiResult = load === null ? null : await load.stop();
  const received = await Promise.all(receivers.map((r) => r.result));
  const failures = parts.flatMap((p) => p.failures);
  received.forEach((r, i) => {
    if (r.exitCode !== 0) failures.push(`receiver ${i}: exit ${r.exitCode} ${r.result?.text ?? r.log.slice(-200)}`);
  });
  cleanupPeers();
  const okByIndex = new Map<number, boolean>();
  jobs.forEach((job, k) => job.indices.forEach((i, n) => okByIndex.set(i, parts[k]!.ok[n]! && received[i]!.exitCode === 0)));
  return {
    calls,
    ok: [...okByIndex.values()].filter(Boolean).length,
    wallS,
    cpuMs: parts.reduce((t, p) => t + p.cpuMs, 0),
    pacing: summarizePacing(parts.map((p) => p.pacing)),
    gc: { count: parts.reduce((t, p) => t + p.gc.count, 0), totalMs: parts.reduce((t, p) => t + p.gc.totalMs, 0), longestMs: Math.max(...parts.map((p) => p.gc.longestMs)) },
    longestEngineCallMs: Math.max(...parts.map((p) => p.longestEngineCallMs)),
    maxRssMiB: parts.reduce((t, p) => t + p.peakRss, 0) / 2 ** 20,
    failures,
    api: apiResult,
  };
}

/** A node serving the API in this process (--api-load), and the login its load uses. */
interface ApiTarget {
  url: string;
  custNr: string;
  login: string;
  password: string;
}

interface ApiLoadResult {
  requests: number;
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
  failed: number;
}

const API_ACCOUNT = { custNr: "99999TE", login: "bench", password: "bench-pass-1" };

/** Starts a node with the api role in this process, on a fresh SQLite store, with a test login. */
async function startApiNode(): Promise<{ target: ApiTarget; stop(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), "faxline-bench-lines-api-"));
  const config = loadConfig({
    env: {},
    overrides: { "store.dataDir": dataDir, "http.host": "127.0.0.1", "http.port": 0, "node.roles": "api", "log.level": "silent", "auth.cacheTtl": "1h" },
  });
  const node = await startNode(config, silentLogger());
  await createLogin(node.context.store.db, { ...API_ACCOUNT, isTest: true, ipAllowList: null, retentionDays: null }, Date.now());
  return {
    target: { url: node.url ?? "", ...API_ACCOUNT },
    stop: async () => {
      await node.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Runs bench/api-load-worker.ts against the node, on `cpus` (the peers' cores), until stopped. */
function startApiLoad(api: ApiTarget, cpus: string | undefined): { stop(): Promise<ApiLoadResult> } {
  const script = fileURLToPath(new URL("./api-load-worker.ts", import.meta.url));
  const argv = ["--import", "tsx", script, api.url, api.custNr, api.login, api.password];
  const child = cpus === undefined ? spawn(process.execPath, argv, { stdio: ["ignore", "pipe", "inherit"] }) : spawn("taskset", ["-c", cpus, process.execPath, ...argv], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
      return JSON.parse(out.trim().split("\n").pop() ?? "{}") as ApiLoadResult;
    },
  };
}

function row(r: StepResult): string {
  const cpuPct = (r.cpuMs / (r.wallS * 1000)) * 100;
  const sustained = r.ok === r.calls && r.pacing.p99 < PACING_LIMIT_MS;
  return [
    String(r.calls).padStart(5),
    `${r.ok}/${r.calls}`.padStart(8),
    r.pacing.p50.toFixed(2).padStart(7),
    r.pacing.p99.toFixed(2).padStart(7),
    `${r.pacing.max.toFixed(1)} @${r.pacing.maxAtS.toFixed(0)}s`.padStart(12),
    `${((r.pacing.overLimit / Math.max(1, r.pacing.ticks)) * 100).toFixed(2)}%`.padStart(8),
    `${cpuPct.toFixed(1)}%`.padStart(8),
    `${(cpuPct / r.calls).toFixed(2)}%`.padStart(9),
    r.maxRssMiB.toFixed(0).padStart(6),
    r.gc.longestMs.toFixed(1).padStart(6),
    r.longestEngineCallMs.toFixed(1).padStart(10),
    r.wallS.toFixed(1).padStart(6),
    sustained ? "yes" : "NO",
  ].join("  ");
}

const HEADER = "calls  faxes OK  p50 ms  p99 ms  max ms @ when  >=5 ms  CPU core  per call  RSS MiB  GC max  engine max  wall s  sustained";

async function main(): Promise<void> {
  requireNativeBuild();
  const engine = SpandspEngine.load();
  const apiNode = apiLoad ? await startApiNode() : null;
  const dir = mkdtempSync(join(tmpdir(), "faxline-bench-lines-"));
  try {
    const text = Array.from({ length: 60 }, (_, i) => `${String(i + 1).padStart(2)} The quick brown fox jumps over the lazy dog. Pack my box with five jugs.`).join("\n");
    const rendered = await renderFaxJob({
      documents: [{ name: "page.txt", bytes: Buffer.from(text) }],
      paperFormat: "A4",
      resolution: "HIGH",
      header: null,
      cover: null,
      overlay: null,
      recipients: [{ id: "r", number: "+4989123456", properties: {} }],
      limits: { maxPages: 5, maxSourcePixels: 50_000_000, converterTimeoutMs: 30_000 },
    });
    if (!rendered.ok) throw new Error(`the bench page did not render: ${rendered.message}`);
    if (rendered.images[0]!.pageSizes.length !== 1) throw new Error(`the bench page rendered to ${rendered.images[0]!.pageSizes.length} pages, expected 1`);
    const image = rendered.images[0]!;
    const tiffPath = join(dir, "page.tif");
    writeFileSync(tiffPath, image.tiff);
    if (args["page-file"] === "uncompressed") {
      // As the SIP line hands it to the engine since 2026-11-26 (sip-fax-line.ts, #withImageFile).
      await uncompressFaxTiff(tiffPath, `${tiffPath}.raw.tif`, Infinity);
      renameSync(`${tiffPath}.raw.tif`, tiffPath);
    } else if (args["page-file"] !== "g4") throw new Error(`--page-file must be uncompressed or g4, not ${args["page-file"]}`);

    const receiverCpus = peerCpus();
    console.log(`bench:lines  ${new Date().toISOString()}`);
    console.log(`machine      ${cpus()[0]?.model.trim() ?? "unknown CPU"}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${platform()} ${release()}, Node ${process.versions.node}, load ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
    console.log(`direction    ${receiving ? "receive: Faxline's sessions receive, the SpanDSP harnesses send" : "send: Faxline's sessions send, the SpanDSP harnesses receive"}`);
    console.log(`Faxline CPUs ${ownCpus()}; peers on ${receiverCpus ?? "the same CPUs (one core only: figures are pessimistic)"}`);
    console.log(`media        ${inlineMedia ? "inline: the sessions run on this process's event loop" + (apiLoad ? ", beside the node's API" : "") : `${mediaProcesses} media process${mediaProcesses === 1 ? "" : "es"} (forked, on the same CPUs), the calls dealt out in turn`}`);
    console.log(`T.38 peers   ${sharedPeers ? `one SpanDSP harness process per peer core, its share of the calls on one event loop (-n), nice ${peersNice}` : "one SpanDSP harness process per call"}`);
    console.log(`page file    ${args["page-file"] === "uncompressed" ? "uncompressed, as the SIP line hands it to the engine" : "G4 (the rendered file as it is)"}`);
    console.log(`media nice   ${inlineMedia ? "none (inline)" : `${mediaNice}${mediaNice !== 0 ? " (as lines.mediaNice; a refusal is reported below)" : ""}`}`);
    console.log(`tick phases  ${tickSlots ? "spread over the 20 ms period (TickSlots), as the node does" : "as each session starts (before TickSlots)"}`);
    if (receiving) console.log(`spool        ${spoolVariants.map((v) => (v ? "on: a spool directory per reception, every page fsynced before its MCF (ADR 0020)" : "off: each reception in a plain file")).join("; then ")}`);
    console.log(`received IFP ${offloadReceive ? "handed to the engine off the event loop (libuv's pool), T.38" : "handed to the engine on the event loop"}`);
    if (apiLoad) console.log(`API load     a node with the api role in this process (SQLite); a client on ${receiverCpus ?? "the same CPUs"} keeps 16 requests in flight: POST /fax and GET /fax/reports in turn`);
    console.log(`page         A4 HIGH text, ${image.pageSizes.length} page, ${image.pageSizes[0]} bytes G4; ECM ${ecm ? "on" : "off"}; sustained = every fax OK and p99 pacing error < ${PACING_LIMIT_MS} ms (ticks of ${TICK_MS} ms)`);

    console.log(`\nT.38 (UDPTL, redundancy 3), concurrent ${receiving ? "receptions" : "calls"} in real time`);
    console.log(HEADER);
    let best = 0;
    for (const calls of t38Steps) {
      let passed = true;
      const variants: StepResult[] = [];
      for (const spool of spoolVariants) {
        const r = await runStep("t38", calls, tiffPath, engine, receiverCpus, dir, apiNode?.target ?? null, spool);
        variants.push(r);
        console.log(`${row(r)}${receiving ? `  spool ${spool ? "on" : "off"}` : ""}`);
        if (r.api !== null) console.log(apiRow(r.api));
        if (r.failures.length > 0) console.log(failureRows(r.failures));
        passed &&= r.ok === r.calls && r.pacing.p99 < PACING_LIMIT_MS;
      }
      if (variants.length === 2) {
        // Receptions one core carries at this CPU per reception, without and with the spool.
        const perCore = (r: StepResult): number => r.calls / (r.cpuMs / (r.wallS * 1000));
        const [off, on] = variants as [StepResult, StepResult];
        console.log(`       receptions per core by CPU: ${perCore(off).toFixed(0)} without the spool, ${perCore(on).toFixed(0)} with it: ratio ${(perCore(on) / perCore(off)).toFixed(3)}; p99 pacing ${off.pacing.p99.toFixed(2)} vs ${on.pacing.p99.toFixed(2)} ms`);
      }
      if (passed) best = calls;
      else break;
    }
    console.log(`=> one core sustains at least ${best} concurrent T.38 ${receiving ? "receptions" : "calls"} (the largest step passed)`);
    if (receiving) return;

    console.log("\nG.711 (RTP PCMA, 20 ms packets), concurrent calls in real time");
    console.log(HEADER);
    for (const calls of g711Steps) {
      const r = await runStep("g711", calls, tiffPath, engine, receiverCpus, dir, apiNode?.target ?? null);
      console.log(row(r));
      if (r.api !== null) console.log(apiRow(r.api));
      if (r.failures.length > 0) console.log(failureRows(r.failures));
    }
    console.log("=> CPU per real-time G.711 call: the \"per call\" column (percent of one core)");
  } finally {
    cleanupPeers();
    await apiNode?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The failures of a step: the first five as they came, then how many of each kind on our side
 * ("call i: <reason>") and on the peers' ("receiver i: exit <code> <text>"), so a run can tell
 * whose failure it was.
 */
function failureRows(failures: string[]): string {
  const kinds = new Map<string, number>();
  for (const f of failures) {
    const kind = f.replace(/^call \d+: /, "ours: ").replace(/^receiver \d+: /, "peer: ");
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  const counted = [...kinds.entries()].sort((a, b) => b[1] - a[1]).map(([kind, n]) => `${n}× ${kind}`);
  return `       failures: ${failures.slice(0, 5).join("; ")}${failures.length > 5 ? ` … (${failures.length})` : ""}\n       by kind: ${counted.slice(0, 6).join("; ")}`;
}

function apiRow(a: ApiLoadResult): string {
  return `       API meanwhile: ${a.requests} requests, ${a.perSecond.toFixed(0)}/s, p50 ${a.p50.toFixed(1)} ms, p99 ${a.p99.toFixed(1)} ms, max ${a.max.toFixed(0)} ms, ${a.failed} failed`;
}

await main();

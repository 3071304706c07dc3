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
 * Options: --t38-calls 1,50,100,200,300,400  --g711-calls 1,10  --ecm on|off (on)
 *          --direction send|receive (send)
 *          --spread S: the calls start evenly over the first S seconds (1). With 1 they all reach
 *          phase C within a second, the worst case; with 20 or more they overlap as calls that
 *          come and go do.
 */
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, platform, release, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { performance, PerformanceObserver } from "node:perf_hooks";
import type { AudioSession, T38Session } from "../src/line/fax-engine/engine.ts";
import { runAudioSession } from "../src/line/fax-engine/run-audio-session.ts";
import { runT38Session, type T38SessionResult } from "../src/line/fax-engine/run-t38-session.ts";
import { SpandspEngine } from "../src/line/fax-engine/spandsp-engine.ts";
import { RtpSocket } from "../src/line/media/rtp.ts";
import { UdptlSocket } from "../src/line/media/udptl-socket.ts";
import { renderFaxJob } from "../src/render/render-fax-job.ts";
import { cleanupPeers, startG711Receiver, startT38Receiver, startT38Sender, type ReceiverRun } from "../test/interop/peer-processes.ts";
import { requireNativeBuild } from "../test/interop/interop-support.ts";

const PACING_LIMIT_MS = 5;
const TICK_MS = 20;

const { values: args } = parseArgs({
  options: {
    "t38-calls": { type: "string", default: "1,50,100,200,300,400" },
    "g711-calls": { type: "string", default: "1,10" },
    ecm: { type: "string", default: "on" },
    spread: { type: "string", default: "1" },
    direction: { type: "string", default: "send" },
  },
});
const receiving = args.direction === "receive";
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

/** The CPUs this process may run on, from /proc/self/status. */
function ownCpus(): string {
  return /^Cpus_allowed_list:\s*(.+)$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1]?.trim() ?? "unknown";
}

/** The CPUs other than this process's, for the receivers; undefined when there are none. */
function peerCpus(): string | undefined {
  const mine = new Set<number>();
  for (const part of ownCpus().split(",")) {
    const [a, b] = part.split("-").map(Number);
    if (a === undefined || Number.isNaN(a)) continue;
    for (let c = a; c <= (b ?? a); c++) mine.add(c);
  }
  const others = cpus().map((_, i) => i).filter((i) => !mine.has(i));
  return others.length > 0 ? others.join(",") : undefined;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Collects how late each 20 ms tick of a session ran, and when in the step the worst one came. */
class PacingRecorder {
  readonly #stepStart = performance.now();
  #values: number[] = [];
  #worst = { late: -Infinity, atS: 0 };
  /** Records a tick that ended at engine sample `sampleEnd` of a session started at wall time `startedAt`. */
  tick(startedAt: number, sampleEnd: number): void {
    const now = performance.now();
    const late = now - (startedAt + sampleEnd / 8);
    this.#values.push(late);
    if (late > this.#worst.late) this.#worst = { late, atS: (now - this.#stepStart) / 1000 };
  }
  summary(): { ticks: number; p50: number; p99: number; max: number; maxAtS: number; overLimit: number } {
    const sorted = Float64Array.from(this.#values).sort();
    let over = 0;
    for (const v of sorted) if (v >= PACING_LIMIT_MS) over += 1;
    return { ticks: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? NaN, maxAtS: this.#worst.atS, overLimit: over };
  }
}

/** Garbage collection pauses during a step: count, total and longest (PerformanceObserver "gc"). */
class GcRecorder {
  #count = 0;
  #totalMs = 0;
  #longestMs = 0;
  readonly #observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      this.#count += 1;
      this.#totalMs += entry.duration;
      this.#longestMs = Math.max(this.#longestMs, entry.duration);
    }
  });
  constructor() {
    this.#observer.observe({ entryTypes: ["gc"] });
  }
  stop(): { count: number; totalMs: number; longestMs: number } {
    this.#observer.disconnect();
    return { count: this.#count, totalMs: this.#totalMs, longestMs: this.#longestMs };
  }
}

/** The longest single call into the engine (it runs on the event loop and holds up every other call meanwhile). */
class EngineCallTimer {
  longestMs = 0;
  time<T>(call: () => T): T {
    const started = performance.now();
    try {
      return call();
    } finally {
      this.longestMs = Math.max(this.longestMs, performance.now() - started);
    }
  }
}

/** A T.38 session whose ticks are timed: `startedAt` is set just before the runner starts. */
function timedT38(session: T38Session, pacing: PacingRecorder, engineCalls: EngineCallTimer): { session: T38Session; start(): void } {
  let startedAt = 0;
  let samples = 0;
  return {
    start: () => (startedAt = performance.now()),
    session: {
      advance(n) {
        samples += n;
        pacing.tick(startedAt, samples);
        return engineCalls.time(() => session.advance(n));
      },
      receiveIfp: (ifp, seq) => engineCalls.time(() => session.receiveIfp(ifp, seq)),
      statistics: () => session.statistics(),
      close: () => session.close(),
    },
  };
}

function timedAudio(session: AudioSession, pacing: PacingRecorder, engineCalls: EngineCallTimer): { session: AudioSession; start(): void } {
  let startedAt = 0;
  let samples = 0;
  return {
    start: () => (startedAt = performance.now()),
    session: {
      process(rx) {
        samples += typeof rx === "number" ? rx : rx.length;
        pacing.tick(startedAt, samples);
        return engineCalls.time(() => session.process(rx));
      },
      statistics: () => session.statistics(),
      close: () => session.close(),
    },
  };
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
}

async function runStep(kind: "t38" | "g711", calls: number, tiffPath: string, engine: SpandspEngine, receiverCpus: string | undefined, rxDir: string): Promise<StepResult> {
  const receivers: ReceiverRun[] = [];
  for (let i = 0; i < calls; i++) {
    const common = { speed: 1, ecm, ident: `RX-${i}`, wallSeconds: 180, ...(receiverCpus !== undefined ? { cpus: receiverCpus } : {}) };
    if (receiving) receivers.push(await startT38Sender({ ...common, ident: `TX-${i}`, txFile: tiffPath }));
    else receivers.push(await (kind === "t38" ? startT38Receiver(common) : startG711Receiver(common)));
  }
  const pacing = new PacingRecorder();
  const gc = new GcRecorder();
  const engineCalls = new EngineCallTimer();
  let peakRss = process.memoryUsage.rss();
  const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 250);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const failures: string[] = [];
  const one = async (i: number): Promise<boolean> => {
    await new Promise((r) => setTimeout(r, (i / calls) * spreadS * 1000));
    const remote = { address: "127.0.0.1", port: receivers[i]!.port };
    const socket = kind === "t38"
      ? await UdptlSocket.open({ localAddress: "127.0.0.1", remote, redundancy: 3, maxDatagram: 400 })
      : await RtpSocket.open({ localAddress: "127.0.0.1", remote, codec: "PCMA", payloadType: 8 });
    const localIdent = receiving ? `RX-${i}` : `TX-${i}`;
    const sessionFile = receiving ? join(rxDir, `rx-${i}.tif`) : tiffPath;
    let close = (): void => {};
    try {
      let result: T38SessionResult;
      if (socket instanceof UdptlSocket) {
        const options = receiving ? { mode: "receive" as const, calling: false, tiffPath: sessionFile, localIdent, ecm } : { tiffPath, localIdent, ecm };
        const timed = timedT38(engine.openT38Session(options), pacing, engineCalls);
        close = () => timed.session.close();
        timed.start();
        result = await runT38Session(timed.session, socket, { maxSeconds: 150 });
      } else {
        const timed = timedAudio(engine.openAudioSession({ tiffPath, localIdent, ecm }), pacing, engineCalls);
        close = () => timed.session.close();
        timed.start();
        result = await runAudioSession(timed.session, socket, { maxSeconds: 150 });
      }
      const ok = result.phaseE?.name === "T30_ERR_OK" && (!receiving || result.statistics.pagesRx === 1);
      if (!ok) failures.push(`call ${i}: ${result.phaseE?.name ?? "no phase E"}${receiving ? `, ${result.statistics.pagesRx} pages received` : ""}`);
      return ok;
    } finally {
      close();
      await socket.close();
    }
  };
  const results = await Promise.all(Array.from({ length: calls }, (_, i) => one(i)));
  const wallS = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  clearInterval(rssTimer);
  const received = await Promise.all(receivers.map((r) => r.result));
  received.forEach((r, i) => {
    if (r.exitCode !== 0) failures.push(`receiver ${i}: exit ${r.exitCode} ${r.result?.text ?? r.log.slice(-200)}`);
  });
  cleanupPeers();
  return {
    calls,
    ok: results.filter((ok, i) => ok && received[i]!.exitCode === 0).length,
    wallS,
    cpuMs: (cpu.user + cpu.system) / 1000,
    pacing: pacing.summary(),
    gc: gc.stop(),
    longestEngineCallMs: engineCalls.longestMs,
    maxRssMiB: peakRss / 2 ** 20,
    failures,
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

    const receiverCpus = peerCpus();
    console.log(`bench:lines  ${new Date().toISOString()}`);
    console.log(`machine      ${cpus()[0]?.model.trim() ?? "unknown CPU"}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${platform()} ${release()}, Node ${process.versions.node}, load ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
    console.log(`direction    ${receiving ? "receive: Faxline's sessions receive, the SpanDSP harnesses send" : "send: Faxline's sessions send, the SpanDSP harnesses receive"}`);
    console.log(`Faxline CPUs ${ownCpus()}; peers on ${receiverCpus ?? "the same CPUs (one core only: figures are pessimistic)"}`);
    console.log(`page         A4 HIGH text, ${image.pageSizes.length} page, ${image.pageSizes[0]} bytes G4; ECM ${ecm ? "on" : "off"}; sustained = every fax OK and p99 pacing error < ${PACING_LIMIT_MS} ms (ticks of ${TICK_MS} ms)`);

    console.log(`\nT.38 (UDPTL, redundancy 3), concurrent ${receiving ? "receptions" : "calls"} in real time`);
    console.log(HEADER);
    let best = 0;
    for (const calls of t38Steps) {
      const r = await runStep("t38", calls, tiffPath, engine, receiverCpus, dir);
      console.log(row(r));
      if (r.failures.length > 0) console.log(`       failures: ${r.failures.slice(0, 5).join("; ")}${r.failures.length > 5 ? ` … (${r.failures.length})` : ""}`);
      if (r.ok === r.calls && r.pacing.p99 < PACING_LIMIT_MS) best = calls;
      else break;
    }
    console.log(`=> one core sustains at least ${best} concurrent T.38 ${receiving ? "receptions" : "calls"} (the largest step passed)`);
    if (receiving) return;

    console.log("\nG.711 (RTP PCMA, 20 ms packets), concurrent calls in real time");
    console.log(HEADER);
    for (const calls of g711Steps) {
      const r = await runStep("g711", calls, tiffPath, engine, receiverCpus, dir);
      console.log(row(r));
      if (r.failures.length > 0) console.log(`       failures: ${r.failures.slice(0, 5).join("; ")}`);
    }
    console.log("=> CPU per real-time G.711 call: the \"per call\" column (percent of one core)");
  } finally {
    cleanupPeers();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

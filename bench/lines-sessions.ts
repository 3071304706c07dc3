/**
 * The media half of `npm run bench:lines` (lines-bench.ts): a share of a step's calls run on one
 * event loop, as one media process of a node runs them (src/line/media-host/), with every tick's
 * pacing error, the GC pauses and the longest engine call recorded. It imports only what a media
 * process does (the engine, the session runners, the sockets), so that a media process of the
 * bench (lines-media-worker.ts) is no heavier than the node's.
 */
import { PerformanceObserver, performance } from "node:perf_hooks";
import { join } from "node:path";
import type { AudioSession, T38Session } from "../src/line/fax-engine/engine.ts";
import { runAudioSession } from "../src/line/fax-engine/run-audio-session.ts";
import { runT38Session, type T38SessionResult } from "../src/line/fax-engine/run-t38-session.ts";
import { TickSlots } from "../src/line/fax-engine/tick-slots.ts";
import type { SpandspEngine } from "../src/line/fax-engine/spandsp-engine.ts";
import { RtpSocket } from "../src/line/media/rtp.ts";
import { UdptlSocket } from "../src/line/media/udptl-socket.ts";
import { PageSpool } from "../src/line/reception-spool/page-spool.ts";
import { createReceptionDir, IMAGE_FILE, PROGRESS_FILE } from "../src/line/reception-spool/reception-spool.ts";
import { rm } from "node:fs/promises";

export const PACING_LIMIT_MS = 5;
export const TICK_MS = 20;

export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Collects how late each 20 ms tick of a session ran, and when in the step the worst one came. */
export class PacingRecorder {
  static readonly CHUNK = 65536;
  readonly #stepStart = performance.now();
  /**
   * The lateness of every tick, in fixed chunks: a growing array of 1.5 million numbers (500 calls) would be
   * copied whole each time it grows (tens of megabytes, in old space), and those copies and the
   * full collections they bring would stall the very loop being measured.
   */
  readonly #chunks: Float64Array[] = [new Float64Array(PacingRecorder.CHUNK)];
  #used = 0;
  #worst = { late: -Infinity, atS: 0 };
  /** Records a tick that ended at engine sample `sampleEnd` of a session started at wall time `startedAt`. */
  tick(startedAt: number, sampleEnd: number): void {
    const now = performance.now();
    const late = now - (startedAt + sampleEnd / 8);
    if (this.#used === PacingRecorder.CHUNK) {
      this.#chunks.push(new Float64Array(PacingRecorder.CHUNK));
      this.#used = 0;
    }
    this.#chunks[this.#chunks.length - 1]![this.#used++] = late;
    if (late > this.#worst.late) this.#worst = { late, atS: (now - this.#stepStart) / 1000 };
  }
  /** The raw lateness of every tick, and the worst one's time (to merge the media processes' figures). */
  export(): { values: Float64Array; worstAtS: number } {
    const values = new Float64Array((this.#chunks.length - 1) * PacingRecorder.CHUNK + this.#used);
    this.#chunks.forEach((chunk, k) => values.set(k === this.#chunks.length - 1 ? chunk.subarray(0, this.#used) : chunk, k * PacingRecorder.CHUNK));
    return { values, worstAtS: this.#worst.atS };
  }
  summary(): { ticks: number; p50: number; p99: number; max: number; maxAtS: number; overLimit: number } {
    return summarizePacing([this.export()]);
  }
}

/** Pacing figures over the ticks of several recorders (one per media process). */
export function summarizePacing(parts: { values: Float64Array; worstAtS: number }[]): { ticks: number; p50: number; p99: number; max: number; maxAtS: number; overLimit: number } {
  {
    const all = new Float64Array(parts.reduce((n, p) => n + p.values.length, 0));
    let at = 0;
    let worst = { late: -Infinity, atS: 0 };
    for (const part of parts) {
      all.set(part.values, at);
      at += part.values.length;
      const partMax = part.values.reduce((m, v) => Math.max(m, v), -Infinity);
      if (partMax > worst.late) worst = { late: partMax, atS: part.worstAtS };
    }
    const sorted = all.sort();
    let over = 0;
    for (const v of sorted) if (v >= PACING_LIMIT_MS) over += 1;
    return { ticks: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? NaN, maxAtS: worst.atS, overLimit: over };
  }
}

/** Garbage collection pauses during a step: count, total and longest (PerformanceObserver "gc"). */
export class GcRecorder {
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
export class EngineCallTimer {
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

/** A T.38 session whose ticks are timed: `start(at)` is given the time its runner's engine clock starts. */
export function timedT38(session: T38Session, pacing: PacingRecorder, engineCalls: EngineCallTimer): { session: T38Session; start(at: number): void } {
  let startedAt = 0;
  let samples = 0;
  return {
    start: (at) => (startedAt = at),
    session: {
      advance(n) {
        samples += n;
        pacing.tick(startedAt, samples);
        return engineCalls.time(() => session.advance(n));
      },
      receiveIfp: (ifp, seq) => engineCalls.time(() => session.receiveIfp(ifp, seq)),
      // Off the loop: only the synchronous hand-over is timed here (the answer is unpacked when it settles).
      ...(session.receiveIfpAsync !== undefined ? { receiveIfpAsync: (ifp: Uint8Array, seq: number) => engineCalls.time(() => session.receiveIfpAsync!(ifp, seq)) } : {}),
      statistics: () => session.statistics(),
      close: () => session.close(),
    },
  };
}

export function timedAudio(session: AudioSession, pacing: PacingRecorder, engineCalls: EngineCallTimer): { session: AudioSession; start(at: number): void } {
  let startedAt = 0;
  let samples = 0;
  return {
    start: (at) => (startedAt = at),
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

/** The share of a step's calls one media process runs. */
export interface SessionsJob {
  kind: "t38" | "g711";
  calls: number;
  indices: number[];
  ports: number[];
  tiffPath: string;
  rxDir: string;
  /** The calls start evenly over the first `spreadS` seconds of the step. */
  spreadS: number;
  ecm: boolean;
  /** Faxline's sessions receive (the peers send). */
  receiving: boolean;
  /** T.38: received IFPs handled off the event loop (runT38Session's offloadReceive). */
  offloadReceive: boolean;
  /**
   * Receiving: each reception as the SIP line's answering side keeps it since ADR 0020, in a spool
   * directory of its own (its record written before the session starts), every page fsynced with
   * its progress file before the engine's answer goes out; the directory removed at the end.
   */
  spool: boolean;
  /** The sessions take their tick phases from one TickSlots, as a media process's do (else each ticks in the phase it starts in). */
  tickSlots: boolean;
}

export interface SessionsResult {
  ok: boolean[];
  failures: string[];
  pacing: { values: Float64Array; worstAtS: number };
  gc: ReturnType<GcRecorder["stop"]>;
  longestEngineCallMs: number;
  cpuMs: number;
  wallS: number;
  peakRss: number;
}

/** Runs a share of a step's sessions on this process's event loop, as one media process does. */
export async function runSessions(job: SessionsJob, engine: SpandspEngine): Promise<SessionsResult> {
  const { kind, calls, tiffPath, rxDir, spreadS, ecm, receiving, offloadReceive } = job;
  const slots = job.tickSlots ? new TickSlots() : null;
  const pacing = new PacingRecorder();
  const gc = new GcRecorder();
  const engineCalls = new EngineCallTimer();
  let peakRss = process.memoryUsage.rss();
  const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 250);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const failures: string[] = [];
  const one = async (i: number, port: number): Promise<boolean> => {
    await new Promise((r) => setTimeout(r, (i / calls) * spreadS * 1000));
    const remote = { address: "127.0.0.1", port };
    const socket = kind === "t38"
      ? await UdptlSocket.open({ localAddress: "127.0.0.1", remote, redundancy: 3, maxDatagram: 400 })
      : await RtpSocket.open({ localAddress: "127.0.0.1", remote, codec: "PCMA", payloadType: 8 });
    const localIdent = receiving ? `RX-${i}` : `TX-${i}`;
    let sessionFile = receiving ? join(rxDir, `rx-${i}.tif`) : tiffPath;
    let spool: { dir: string; pages: PageSpool } | null = null;
    if (receiving && job.spool) {
      const dir = await createReceptionDir(join(rxDir, "spool"), { id: `FIBENCH${process.pid}X${i}`, custNr: "1", topic: "bench", trunk: "bench", toNumber: "+4930123456", fromNumber: null, startedAt: Date.now() });
      sessionFile = join(dir, IMAGE_FILE);
      spool = { dir, pages: new PageSpool({ tiffPath: sessionFile, progressPath: join(dir, PROGRESS_FILE), transport: "t38" }) };
    }
    let close = (): void => {};
    let releaseSlot = (): void => {};
    /** When the session's engine clock starts: in the phase the slots hand out, as InlineMediaRunner does, or now. */
    const clockStart = (): number => {
      const now = performance.now();
      if (slots === null) return now;
      const slot = slots.take(now);
      releaseSlot = slot.release;
      return slot.startAt;
    };
    try {
      let result: T38SessionResult;
      if (socket instanceof UdptlSocket) {
        const options = receiving ? { mode: "receive" as const, calling: false, tiffPath: sessionFile, localIdent, ecm } : { tiffPath, localIdent, ecm };
        const timed = timedT38(engine.openT38Session(options), pacing, engineCalls);
        close = () => timed.session.close();
        const startAt = clockStart();
        timed.start(startAt);
        const spooling =
          spool === null
            ? {}
            : {
                holdAfterPhaseD: () => spool!.pages.pageEnded(timed.session.statistics()),
                onEvent: (event: { type: string }) => {
                  if (event.type === "phaseE") void spool!.pages.phaseE(event as never, timed.session.statistics()).catch(() => undefined);
                },
              };
        result = await runT38Session(timed.session, socket, { maxSeconds: 150, offloadReceive, startAt, ...spooling });
      } else {
        const timed = timedAudio(engine.openAudioSession({ tiffPath, localIdent, ecm }), pacing, engineCalls);
        close = () => timed.session.close();
        const startAt = clockStart();
        timed.start(startAt);
        result = await runAudioSession(timed.session, socket, { maxSeconds: 150, startAt });
      }
      const ok = result.phaseE?.name === "T30_ERR_OK" && (!receiving || result.statistics.pagesRx === 1);
      if (!ok) failures.push(`call ${i}: ${result.phaseE?.name ?? "no phase E"}${receiving ? `, ${result.statistics.pagesRx} pages received` : ""}`);
      return ok;
    } finally {
      releaseSlot();
      close();
      await socket.close();
      if (spool !== null) {
        await spool.pages.settled();
        await rm(spool.dir, { recursive: true, force: true });
      }
    }
  };
  const ok = await Promise.all(job.indices.map((i, k) => one(i, job.ports[k]!)));
  const wallS = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  clearInterval(rssTimer);
  return { ok, failures, pacing: pacing.export(), gc: gc.stop(), longestEngineCallMs: engineCalls.longestMs, cpuMs: (cpu.user + cpu.system) / 1000, wallS, peakRss };
}


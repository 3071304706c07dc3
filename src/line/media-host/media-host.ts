/**
 * The node's media process (docs/adr/0010-media-process.md): a child process that runs every
 * fax session of the node's SIP line (the SpanDSP engine, the 20 ms pacing, UDPTL, RTP and RTCP),
 * so that the node's event loop (API, store, SIP, rendering hand-offs) and its garbage collector
 * never delay a call's ticks, and a crash or hang of the native engine costs only the calls it
 * ran.
 *
 * How a session runs: the line binds the call's media ports as before; `run()` hands the bound
 * sockets to the child over the IPC channel (Node passes dgram sockets as handles), closes its
 * own copies, and sends the spec. The child answers with the engine's events as they happen
 * (the line's watchdog and progress tracker stay here, on the SIP side) and the result at the end.
 * The far end's address changes and stops go the other way.
 *
 * Faults: the child's exit (SIGSEGV, SIGKILL, an uncaught error) rejects the runs it had with
 * MediaHostLostError; so does a child that has not answered a ping for `hangMs`, which is killed
 * first. A new child is started at once (at most one start per `restartDelayMs`), so the next
 * call has a process again; calls on other nodes and the node's API never notice.
 */
import { fork, type ChildProcess } from "node:child_process";
import type dgram from "node:dgram";
import { setPriority } from "node:os";
import { entryPath, runningFromSource } from "../../lib/code-location.ts";
import { closeQuietly } from "../media/bind-udp.ts";
import {
  MediaHostLostError,
  type FaxMediaClock,
  type FaxMediaEventHandler,
  type FaxMediaResult,
  type FaxMediaRun,
  type FaxMediaRunner,
  type FaxMediaSockets,
  type FaxMediaSpec,
} from "./fax-media.ts";
import type { FromMediaHost, ToMediaHost } from "./media-host-protocol.ts";

export interface MediaHostOptions {
  /** Ping interval, ms. (Default: 1000) */
  pingEveryMs?: number;
  /** A child that has not answered a ping for this long is killed as hung, ms. (Default: 5000) */
  hangMs?: number;
  /** Least time between two starts of the child after a loss, ms. (Default: 1000) */
  restartDelayMs?: number;
  /** A call waits this long for a child that is starting before it is given up, ms. (Default: 10000) */
  startTimeoutMs?: number;
  /**
   * The child's nice value (lines.mediaNice): below the node's, so that the scheduler runs a
   * call's tick at once when the node is busy on the same core. Lowering it needs root or
   * CAP_SYS_NICE; refused, the child keeps the node's and `onNiceRefused` is told. (Default: 0)
   */
  nice?: number;
  onNiceRefused?: (message: string) => void;
  /** Told about every child that ended while in use, and why. */
  onLost?: (info: { pid: number | undefined; reason: string; sessions: number }) => void;
}

interface Pending {
  /** The node's copies of the session's sockets until each is handed over (closed at the latest when the session ends). */
  sockets: dgram.Socket[];
  onEvent: FaxMediaEventHandler;
  resolve: (result: FaxMediaResult) => void;
  reject: (error: Error) => void;
  child: ChildProcess;
}

/** The error a child's start failed with (the addon is not built, for instance). */
export class MediaHostStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MediaHostStartError";
  }
}

export class MediaHost implements FaxMediaRunner {
  readonly #options: Required<Omit<MediaHostOptions, "onLost" | "onNiceRefused">> & Pick<MediaHostOptions, "onLost" | "onNiceRefused">;
  #child: ChildProcess | null = null;
  /** The child whose engine has loaded. */
  #readyChild: ChildProcess | null = null;
  #ready: Promise<void> | null = null;
  #lastStart = 0;
  #restartTimer: NodeJS.Timeout | null = null;
  #pingTimer: NodeJS.Timeout | null = null;
  #lastPong = 0;
  #pingSeq = 0;
  #nextId = 1;
  #closed = false;
  #losses = 0;
  #running = 0;
  /** Children killed as hung: counted as lost when killed, not again at their exit. */
  readonly #killedAsHung = new WeakSet<ChildProcess>();
  /** Each child's exit, to wait for a dying one. */
  readonly #exits = new WeakMap<ChildProcess, Promise<void>>();
  /** When the ping timer last ran: a late run means this node's loop stalled, not the child. */
  #lastPingRun = 0;
  readonly #pending = new Map<number, Pending>();

  constructor(options: MediaHostOptions = {}) {
    this.#options = { pingEveryMs: 1000, hangMs: 5000, restartDelayMs: 1000, startTimeoutMs: 10_000, nice: 0, ...options };
  }

  /** Starts the child and waits until its engine is loaded; throws MediaHostStartError if it cannot be. */
  start(): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("the media host is closed"));
    if (this.#ready === null) this.#spawn();
    return this.#ready!;
  }

  /** Whether a child runs with its engine loaded and answers. */
  get ready(): boolean {
    const child = this.#child;
    return child !== null && this.#readyChild === child && child.connected && !this.#killedAsHung.has(child);
  }

  /** The running child's process id (tests send it signals). */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Times the child ended without being asked to (crash, kill, hang): faxline_media_process_lost_total. */
  get losses(): number {
    return this.#losses;
  }

  /** Sessions running now (those waiting for a starting process included). */
  get sessions(): number {
    return this.#running;
  }

  run(spec: FaxMediaSpec, sockets: FaxMediaSockets, clock: FaxMediaClock, onEvent: FaxMediaEventHandler): FaxMediaRun {
    const id = this.#nextId++;
    let child: ChildProcess | null = null;
    let settled = false;
    let stopped = false;
    let moved: Extract<ToMediaHost, { type: "remote" }> | null = null;
    const result = (async (): Promise<FaxMediaResult> => {
      try {
        // A call that comes while the process is being restarted waits for the new one.
        child = await this.#runningChild();
      } catch (error) {
        for (const socket of Object.values(sockets)) socket.close();
        throw error;
      }
      const running = child;
      return new Promise<FaxMediaResult>((resolve, reject) => {
        const held = Object.values(sockets);
        this.#pending.set(id, { sockets: held, onEvent, resolve, reject, child: running });
        for (const [kind, socket] of Object.entries(sockets) as [keyof FaxMediaSockets, NonNullable<FaxMediaSockets[keyof FaxMediaSockets]>][]) {
          // The child gets its own descriptor of the bound socket. Our copy keeps reading until it
          // is closed once sent: what it reads meanwhile (the far end's first packets) is
          // forwarded, so that the session sees it too.
          const early: { datagram: Uint8Array; from: { address: string; port: number } }[] = [];
          socket.on("message", (datagram, from) => early.push({ datagram, from: { address: from.address, port: from.port } }));
          running.send({ type: "socket", id, kind } satisfies ToMediaHost, socket as never, (error) => {
            closeQuietly(socket);
            if (error) this.#settle(id, (p) => p.reject(new MediaHostLostError(`the ${kind} socket could not be handed to the media process: ${error.message}`)));
            else if (early.length > 0) this.#send(running, { type: "early", id, kind, datagrams: early });
          });
        }
        this.#send(running, { type: "run", id, spec, clock });
        if (moved !== null) this.#send(running, moved);
        if (stopped) this.#send(running, { type: "stop", id });
      });
    })();
    this.#running++;
    const done = (): void => {
      settled = true;
      this.#running--;
    };
    result.then(done, done);
    return {
      setRemote: (kind, remote) => {
        moved = { type: "remote", id, kind, remote };
        if (!settled && child !== null) this.#send(child, moved);
      },
      stop: () => {
        stopped = true;
        if (!settled && child !== null) this.#send(child, { type: "stop", id });
      },
      result,
    };
  }

  /** The child, once its engine is loaded; starts one if none runs. Rejects when closed, or after `startTimeoutMs`. */
  async #runningChild(): Promise<ChildProcess> {
    for (;;) {
      if (this.#closed) throw new MediaHostLostError("the media process was stopped");
      const child = this.#child;
      if (child !== null && this.#readyChild === child && child.connected && !this.#killedAsHung.has(child)) return child;
      if (child !== null && (!child.connected || this.#killedAsHung.has(child))) {
        // Dying (its channel closed, or killed as hung): wait for its exit, which starts the next.
        await this.#exits.get(child);
        continue;
      }
      if (child === null) {
        if (this.#restartTimer !== null) {
          clearTimeout(this.#restartTimer);
          this.#restartTimer = null;
        }
        this.#spawn();
      }
      const ready = this.#ready!;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new MediaHostLostError(`the media process did not start within ${this.#options.startTimeoutMs} ms`)), this.#options.startTimeoutMs);
      });
      try {
        await Promise.race([ready, timeout]);
      } catch (error) {
        if (error instanceof MediaHostLostError) throw error;
        throw new MediaHostLostError(error instanceof Error ? error.message : String(error));
      } finally {
        clearTimeout(timer);
      }
    }
  }

  /**
   * Stops the child. Sessions still running are stopped first and get up to `graceMs` to end
   * (a receiver's pages written and its file closed); those that do not end with MediaHostLostError.
   */
  async close(graceMs = 2000): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#restartTimer !== null) clearTimeout(this.#restartTimer);
    if (this.#pingTimer !== null) clearInterval(this.#pingTimer);
    const child = this.#child;
    if (child !== null && child.connected && this.#pending.size > 0) {
      const ending = [...this.#pending.keys()];
      for (const id of ending) this.#send(child, { type: "stop", id });
      const deadline = performance.now() + graceMs;
      while (ending.some((id) => this.#pending.has(id)) && performance.now() < deadline && child.connected) await new Promise((r) => setTimeout(r, 10));
    }
    if (child !== null && child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 2000);
      await this.#exits.get(child);
      clearTimeout(timer);
    }
    this.#lose(child, "the media process was stopped");
  }

  #spawn(): void {
    this.#lastStart = performance.now();
    const child = fork(entryPath("line/media-host/media-host-process"), [], {
      execArgv: runningFromSource ? ["--import", "tsx"] : [],
      serialization: "advanced",
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    this.#child = child;
    this.#lastPong = performance.now();
    if (this.#options.nice !== 0 && child.pid !== undefined) {
      try {
        setPriority(child.pid, this.#options.nice);
      } catch (error) {
        this.#options.onNiceRefused?.(`the media process keeps the node's nice value (${this.#options.nice} refused: ${(error as Error).message}); run the node with CAP_SYS_NICE (or as root) so that its calls' ticks come first`);
      }
    }
    let readied: (error: string | null) => void = () => {};
    this.#ready = new Promise<void>((resolve, reject) => {
      readied = (error) => (error === null ? resolve() : reject(new MediaHostStartError(`The media process could not load the fax engine: ${error}`)));
    });
    // A start that fails is reported to whoever awaits start(); later restarts are not awaited.
    this.#ready.catch(() => undefined);
    child.on("message", (message: FromMediaHost) => {
      switch (message.type) {
        case "ready":
          if (message.error === null) this.#readyChild = child;
          readied(message.error);
          return;
        case "event":
          this.#pending.get(message.id)?.onEvent(message.event, message.statistics);
          return;
        case "result":
          this.#settle(message.id, (p) => p.resolve(message.result));
          return;
        case "failed":
          this.#settle(message.id, (p) => p.reject(new Error(message.message)));
          return;
        case "pong":
          this.#lastPong = performance.now();
          return;
      }
    });
    child.on("error", () => undefined);
    this.#exits.set(child, new Promise<void>((resolve) => child.once("exit", () => resolve())));
    child.once("exit", (code, signal) => {
      const how = signal !== null ? `signal ${signal}` : `exit code ${code}`;
      readied(`it ended (${how}) before it was ready`);
      if (this.#child === child) this.#child = null;
      if (this.#readyChild === child) this.#readyChild = null;
      this.#lose(child, `the media process (pid ${child.pid}) ended with ${how}`);
      if (this.#closed) return;
      if (!this.#killedAsHung.has(child)) this.#losses++;
      // Restart at once, or after restartDelayMs since the last start (a crash loop does not spin).
      const wait = Math.max(0, this.#lastStart + this.#options.restartDelayMs - performance.now());
      this.#restartTimer = setTimeout(() => {
        this.#restartTimer = null;
        if (!this.#closed && this.#child === null) this.#spawn();
      }, wait);
      this.#restartTimer.unref();
    });
    if (this.#pingTimer === null) {
      this.#lastPingRun = performance.now();
      this.#pingTimer = setInterval(() => this.#ping(), this.#options.pingEveryMs);
      this.#pingTimer.unref();
    }
  }

  #ping(): void {
    const now = performance.now();
    const stalled = now - this.#lastPingRun > 2 * this.#options.pingEveryMs;
    this.#lastPingRun = now;
    const child = this.#child;
    if (child === null || !child.connected || this.#killedAsHung.has(child)) return;
    // A child still starting is judged by startTimeoutMs, not by pings; and when this node's own
    // loop stalled (the timer ran late), the pong may be waiting unread: give it a fresh period.
    if (this.#readyChild !== child || stalled) {
      this.#lastPong = now;
    } else if (now - this.#lastPong > this.#options.hangMs) {
      // Hung: its calls are lost whatever we do; kill it so the next start is clean.
      this.#losses++;
      this.#killedAsHung.add(child);
      if (this.#readyChild === child) this.#readyChild = null;
      this.#lose(child, `the media process (pid ${child.pid}) did not answer for ${this.#options.hangMs} ms and was killed`);
      child.kill("SIGKILL");
      return;
    }
    this.#send(child, { type: "ping", seq: ++this.#pingSeq });
  }

  #send(child: ChildProcess, message: ToMediaHost): void {
    if (!child.connected) return;
    try {
      child.send(message);
    } catch {
      // The channel closed meanwhile: the exit handler ends the sessions.
    }
  }

  #settle(id: number, how: (pending: Pending) => void): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    this.#pending.delete(id);
    // Sockets whose handover never completed (the child died or hung before acknowledging it).
    for (const socket of pending.sockets) closeQuietly(socket);
    how(pending);
  }

  /** Ends every session `child` ran with MediaHostLostError. */
  #lose(child: ChildProcess | null, reason: string): void {
    let sessions = 0;
    for (const [id, pending] of this.#pending) {
      if (pending.child !== child) continue;
      sessions++;
      this.#settle(id, (p) => p.reject(new MediaHostLostError(reason)));
    }
    if (sessions > 0 && !this.#closed) this.#options.onLost?.({ pid: child?.pid, reason, sessions });
  }
}

/**
 * Several media processes for one node (lines.mediaProcesses): each call goes to the process
 * running the fewest sessions. On one core the OS interleaves the processes, so a long engine
 * step (a page prepared at the start of phase C, a page written at its end) delays only the calls
 * of its own process, and a crash costs only that process's calls (docs/benchmarks.md, bench:lines
 * --processes).
 */
export class MediaHostPool implements FaxMediaRunner {
  readonly #hosts: MediaHost[];

  constructor(processes: number, options: MediaHostOptions = {}) {
    if (!Number.isInteger(processes) || processes < 1) throw new RangeError(`processes must be a whole number >= 1, got ${processes}`);
    this.#hosts = Array.from({ length: processes }, () => new MediaHost(options));
  }

  /** Starts every process; throws MediaHostStartError if one cannot load the engine. */
  async start(): Promise<void> {
    await Promise.all(this.#hosts.map((h) => h.start()));
  }

  /** The running processes' ids. */
  get pids(): number[] {
    return this.#hosts.map((h) => h.pid).filter((pid): pid is number => pid !== undefined);
  }

  get losses(): number {
    return this.#hosts.reduce((n, h) => n + h.losses, 0);
  }

  get sessions(): number {
    return this.#hosts.reduce((n, h) => n + h.sessions, 0);
  }

  run(spec: FaxMediaSpec, sockets: FaxMediaSockets, clock: FaxMediaClock, onEvent: FaxMediaEventHandler): FaxMediaRun {
    // The least busy of those ready; a process being restarted only when none is.
    const ready = this.#hosts.filter((h) => h.ready);
    let least: MediaHost | null = null;
    for (const host of ready.length > 0 ? ready : this.#hosts) if (least === null || host.sessions < least.sessions) least = host;
    return least!.run(spec, sockets, clock, onEvent);
  }

  async close(): Promise<void> {
    await Promise.all(this.#hosts.map((h) => h.close()));
  }
}

/**
 * Media processes for a node that may run `calls` at once on a machine of `cores` cores
 * (lines.mediaProcesses 0): one per 75 calls, but no more than the cores but one (one is left to
 * the node's API and store), 1 to 8. Several processes on one core cost more CPU than they give:
 * 500 T.38 calls over 20 s on one core took 60–65 % of it in seven processes against 25–36 % in
 * one, at a p99 pacing error of 8.0–8.3 ms against 2.7–5.7 (docs/benchmarks.md, "Peers in one
 * process"). On more cores they run side by side.
 */
export function mediaProcessesFor(calls: number, cores: number): number {
  return Math.min(8, Math.max(1, Math.min(Math.ceil(calls / 75), cores - 1)));
}


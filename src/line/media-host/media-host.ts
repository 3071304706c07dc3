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
import { fileURLToPath } from "node:url";
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
  /** Least time between two starts of the child, ms. (Default: 1000) */
  restartDelayMs?: number;
  /** Told about every child that ended while in use, and why. */
  onLost?: (info: { pid: number | undefined; reason: string; sessions: number }) => void;
}

interface Pending {
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
  readonly #options: Required<Omit<MediaHostOptions, "onLost">> & Pick<MediaHostOptions, "onLost">;
  #child: ChildProcess | null = null;
  #ready: Promise<void> | null = null;
  #lastStart = 0;
  #restartTimer: NodeJS.Timeout | null = null;
  #pingTimer: NodeJS.Timeout | null = null;
  #lastPong = 0;
  #pingSeq = 0;
  #nextId = 1;
  #closed = false;
  #losses = 0;
  /** Children killed as hung: counted as lost when killed, not again at their exit. */
  readonly #killedAsHung = new WeakSet<ChildProcess>();
  readonly #pending = new Map<number, Pending>();

  constructor(options: MediaHostOptions = {}) {
    this.#options = { pingEveryMs: 1000, hangMs: 5000, restartDelayMs: 1000, ...options };
  }

  /** Starts the child and waits until its engine is loaded; throws MediaHostStartError if it cannot be. */
  start(): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("the media host is closed"));
    if (this.#ready === null) this.#spawn();
    return this.#ready!;
  }

  /** The running child's process id (tests send it signals). */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Times the child ended without being asked to (crash, kill, hang): faxline_media_process_lost_total. */
  get losses(): number {
    return this.#losses;
  }

  /** Sessions running now. */
  get sessions(): number {
    return this.#pending.size;
  }

  run(spec: FaxMediaSpec, sockets: FaxMediaSockets, clock: FaxMediaClock, onEvent: FaxMediaEventHandler): FaxMediaRun {
    const child = this.#child;
    const id = this.#nextId++;
    let settled = false;
    const result = new Promise<FaxMediaResult>((resolve, reject) => {
      if (this.#closed || child === null || child.exitCode !== null || child.signalCode !== null || !child.connected) {
        for (const socket of Object.values(sockets)) socket.close();
        reject(new MediaHostLostError(this.#closed ? "the media process was stopped" : "the media process is not running (it is being restarted)"));
        return;
      }
      this.#pending.set(id, {
        onEvent,
        resolve: (r) => {
          settled = true;
          resolve(r);
        },
        reject: (e) => {
          settled = true;
          reject(e);
        },
        child,
      });
      for (const [kind, socket] of Object.entries(sockets) as [keyof FaxMediaSockets, NonNullable<FaxMediaSockets[keyof FaxMediaSockets]>][]) {
        // The child gets its own descriptor of the bound socket; ours is closed once it is sent,
        // so that datagrams go to the child only (until then they wait in the kernel's buffer).
        child.send({ type: "socket", id, kind } satisfies ToMediaHost, socket as never, (error) => {
          socket.close();
          if (error) this.#settle(id, (p) => p.reject(new MediaHostLostError(`the ${kind} socket could not be handed to the media process: ${error.message}`)));
        });
      }
      this.#send(child, { type: "run", id, spec, clock });
    });
    return {
      setRemote: (kind, remote) => {
        if (!settled && child !== null) this.#send(child, { type: "remote", id, kind, remote });
      },
      stop: () => {
        if (!settled && child !== null) this.#send(child, { type: "stop", id });
      },
      result,
    };
  }

  /** Stops the child; sessions still running end with MediaHostLostError. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#restartTimer !== null) clearTimeout(this.#restartTimer);
    if (this.#pingTimer !== null) clearInterval(this.#pingTimer);
    const child = this.#child;
    if (child !== null && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 2000);
      await exited;
      clearTimeout(timer);
    }
    this.#lose(child, "the media process was stopped");
  }

  #spawn(): void {
    this.#lastStart = performance.now();
    const here = import.meta.url;
    const entry = fileURLToPath(new URL(here.endsWith(".ts") ? "./media-host-process.ts" : "./media-host-process.js", here));
    const child = fork(entry, [], {
      execArgv: here.endsWith(".ts") ? ["--import", "tsx"] : [],
      serialization: "advanced",
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    this.#child = child;
    this.#lastPong = performance.now();
    let readied: (error: string | null) => void = () => {};
    this.#ready = new Promise<void>((resolve, reject) => {
      readied = (error) => (error === null ? resolve() : reject(new MediaHostStartError(`The media process could not load the fax engine: ${error}`)));
    });
    // A start that fails is reported to whoever awaits start(); later restarts are not awaited.
    this.#ready.catch(() => undefined);
    child.on("message", (message: FromMediaHost) => {
      switch (message.type) {
        case "ready":
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
    child.once("exit", (code, signal) => {
      const how = signal !== null ? `signal ${signal}` : `exit code ${code}`;
      readied(`it ended (${how}) before it was ready`);
      if (this.#child === child) this.#child = null;
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
      this.#pingTimer = setInterval(() => this.#ping(), this.#options.pingEveryMs);
      this.#pingTimer.unref();
    }
  }

  #ping(): void {
    const child = this.#child;
    if (child === null || !child.connected || this.#killedAsHung.has(child)) return;
    if (performance.now() - this.#lastPong > this.#options.hangMs) {
      // Hung: its calls are lost whatever we do; kill it so the next start is clean.
      this.#losses++;
      this.#killedAsHung.add(child);
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

/**
 * Runs a converter program (LibreOffice, Ghostscript) as a subprocess that cannot outlive its
 * welcome: a time limit, an AbortSignal, and a kill that reaches every process it started.
 *
 * - No shell: the program gets its arguments as an array, so nothing in a file name or argument
 *   is ever interpreted.
 * - Its own process group (`detached`): LibreOffice's `soffice` is a script that starts
 *   `oosplash`, which forks `soffice.bin`; killing only the first would leave the others running
 *   (seen: `timeout 60 soffice ...` on a macro that hung left oosplash and a defunct soffice.bin
 *   behind for over ten minutes). On the time limit, on abort, and also right when the program
 *   exits (stragglers), the whole group gets SIGKILL. A converter has nothing to save, so there
 *   is no gentler signal first.
 * - Its own environment: only what the caller passes (plus PATH and LANG), so no secret of the
 *   Faxline process (database URLs, API keys, proxy settings) reaches a document converter.
 * - stdin is /dev/null (no prompt can ever wait for input); stdout and stderr are kept up to
 *   `maxOutputBytes` each, and the last 2000 characters of stderr are always kept
 *   (`stderrTail`), so a chatty converter cannot fill the memory.
 * - Optionally no network at all (`isolateNetwork`): the program runs in new user and network
 *   namespaces (`unshare --user --map-root-user --net`, util-linux), which have no interface but
 *   a loopback that is down. Where the kernel or a container's seccomp profile forbids
 *   unprivileged user namespaces, the program runs without that isolation and the result says so
 *   (`networkIsolated: false`); the callers' own measures (LibreOffice's configuration) remain.
 *
 * When the Node process or thread that started a converter goes away, its process group is
 * killed too, by two means:
 * 1. every live group is recorded, and a `process.on("exit")` listener (one per thread) kills
 *    them; this covers process.exit(), a normal end, and a worker thread that exits by itself.
 *    It does not cover SIGKILL, a fatal signal without a handler (SIGTERM, SIGINT), a crash, or
 *    a worker thread ended by `worker.terminate()`: no JavaScript runs then.
 * 2. for those, a watchdog: a tiny `/bin/sh` (fixed script, the group id as its argument) that
 *    blocks reading a pipe from this thread and kills the group when the pipe reaches EOF. The
 *    kernel closes the pipe when the process dies however it dies, and Node closes it when a
 *    worker thread is terminated; when the converter ends normally, the watchdog is killed.
 *    Limits: a watchdog that is itself killed (e.g. `kill -9` of its group by an operator) no
 *    longer protects its converter, and between the converter's start and the watchdog's (a
 *    millisecond) only the exit listener protects it.
 * A killed group's id is only reused by the kernel after every member is gone, so the kills
 * cannot hit an unrelated process, except the final clean-up kill after a normal exit: if the
 * group emptied and the kernel handed out its number to a new process group within that same
 * moment (it would need the whole pid range to wrap), that group would be killed.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { findExecutable } from "./converter-availability.ts";

export interface ConverterCommand {
  /** Absolute path of the program. */
  executable: string;
  args: readonly string[];
  /** Working directory (the conversion's temp dir). */
  cwd: string;
  /** Environment of the program, in addition to PATH and LANG (nothing else is inherited). */
  env?: Readonly<Record<string, string>>;
  /** Time limit in ms; the process group is killed when it is exceeded. */
  timeoutMs: number;
  /** Aborting kills the process group. */
  signal?: AbortSignal;
  /** Most bytes kept of stdout, and of stderr; default 256 KiB each. */
  maxOutputBytes?: number;
  /** Run without network (new user and network namespaces) where the system allows it. */
  isolateNetwork?: boolean;
}

export interface ConverterResult {
  /** The program's exit code; null when it ended by a signal. */
  exitCode: number | null;
  /** The signal that ended the program, e.g. SIGKILL after the time limit. */
  signal: NodeJS.Signals | null;
  /** The time limit was exceeded and the process group was killed. */
  timedOut: boolean;
  /** The AbortSignal fired and the process group was killed (or the program never started). */
  aborted: boolean;
  durationMs: number;
  stdout: string;
  stderr: string;
  /** The last 2000 characters of stderr, also when stderr exceeded maxOutputBytes. */
  stderrTail: string;
  /** stdout or stderr was longer than maxOutputBytes and was cut. */
  outputTruncated: boolean;
  /** The program ran in its own network namespace (no network). */
  networkIsolated: boolean;
}

/** The program could not be started at all (missing, not executable); `code` is the system error code. */
export class ConverterStartError extends Error {
  constructor(
    readonly executable: string,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = "ConverterStartError";
  }
}

const DEFAULT_MAX_OUTPUT_BYTES = 256 * 1024;
const STDERR_TAIL_CHARS = 2000;
/** How long to wait for the output pipes to close after the group was killed. */
const PIPE_CLOSE_GRACE_MS = 2000;
const WATCHDOG_SHELL = "/bin/sh";
// $1 is the process group id. `read` returns on EOF, i.e. when this thread or process is gone.
// (No `--` before the negative id: dash's kill takes it as a number and fails.)
const WATCHDOG_SCRIPT = 'read -r _; kill -KILL "-$1" 2>/dev/null';

/** Process group ids of the converters running now, started by this thread. */
const liveGroups = new Set<number>();
let exitListenerInstalled = false;

/** How many converters started by this thread are running now. */
export function liveConverterCount(): number {
  return liveGroups.size;
}

/** Runs the program to its end, its time limit or its abort; rejects only with ConverterStartError. */
export async function runConverter(command: ConverterCommand): Promise<ConverterResult> {
  const started = performance.now();
  const networkIsolated = command.isolateNetwork === true && (await networkIsolationPrefix()).length > 0;
  if (command.signal?.aborted) {
    return emptyResult({ aborted: true, networkIsolated, durationMs: performance.now() - started });
  }
  const [executable, ...args] = networkIsolated ? [...(await networkIsolationPrefix()), command.executable, ...command.args] : [command.executable, ...command.args];
  const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", LANG: "C.UTF-8", ...command.env };
  const maxOutputBytes = command.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;

  const child = spawn(executable!, args, { cwd: command.cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const pgid = child.pid;
  if (pgid === undefined) {
    const err = await new Promise<NodeJS.ErrnoException>((resolve) => child.once("error", resolve));
    throw new ConverterStartError(command.executable, err.code, `${command.executable} could not be started: ${err.message}`);
  }
  // Errors after a successful start (a failed kill) must not become uncaught exceptions.
  child.on("error", () => {});
  liveGroups.add(pgid);
  installExitListener();
  const watchdog = startWatchdog(pgid);

  const stdout = new CappedOutput(maxOutputBytes, 0);
  const stderr = new CappedOutput(maxOutputBytes, STDERR_TAIL_CHARS * 4);
  child.stdout.on("data", (chunk: Buffer) => stdout.add(chunk));
  child.stderr.on("data", (chunk: Buffer) => stderr.add(chunk));

  let timedOut = false;
  let aborted = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(pgid);
  }, command.timeoutMs);
  const onAbort = (): void => {
    aborted = true;
    killGroup(pgid);
  };
  command.signal?.addEventListener("abort", onAbort, { once: true });

  try {
    const { exitCode, signal } = await waitForEnd(child, pgid);
    return {
      exitCode,
      signal,
      timedOut,
      aborted,
      durationMs: performance.now() - started,
      stdout: stdout.text(),
      stderr: stderr.text(),
      stderrTail: stderr.tailText(STDERR_TAIL_CHARS),
      outputTruncated: stdout.truncated || stderr.truncated,
      networkIsolated,
    };
  } finally {
    clearTimeout(timer);
    command.signal?.removeEventListener("abort", onAbort);
    liveGroups.delete(pgid);
    stopWatchdog(watchdog);
  }
}

/**
 * Resolves when the program has exited and its pipes are closed. On exit, the rest of its group
 * is killed at once (a straggler would hold the pipes open); pipes still open after
 * PIPE_CLOSE_GRACE_MS (a process that left the group) are destroyed.
 */
function waitForEnd(child: ChildProcess, pgid: number): Promise<{ exitCode: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    let graceTimer: NodeJS.Timeout | undefined;
    child.once("exit", () => {
      killGroup(pgid);
      graceTimer = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, PIPE_CLOSE_GRACE_MS);
    });
    child.once("close", (exitCode: number | null, signal: NodeJS.Signals | null) => {
      clearTimeout(graceTimer);
      resolve({ exitCode, signal });
    });
  });
}

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // ESRCH: the group is gone already.
  }
}

function installExitListener(): void {
  if (exitListenerInstalled) return;
  exitListenerInstalled = true;
  // First among the exit listeners, so that e.g. a profile directory is removed after its
  // LibreOffice is gone, not while it still writes there.
  process.prependListener("exit", () => {
    for (const pgid of liveGroups) killGroup(pgid);
  });
}

/** Starts the watchdog of a process group (see the module comment); null where there is no /bin/sh. */
function startWatchdog(pgid: number): ChildProcess | null {
  if (!existsSync(WATCHDOG_SHELL)) return null;
  try {
    // Its own process group, so that a Ctrl-C (SIGINT to the terminal's foreground group) does
    // not end the watchdog together with Faxline before it could do its work.
    const watchdog = spawn(WATCHDOG_SHELL, ["-c", WATCHDOG_SCRIPT, "faxline-converter-watchdog", String(pgid)], {
      detached: true,
      stdio: ["pipe", "ignore", "ignore"],
      env: { PATH: "/usr/bin:/bin" },
    });
    // A watchdog that fails to start or dies early is no reason to fail the conversion.
    watchdog.on("error", () => {});
    watchdog.stdin?.on("error", () => {});
    return watchdog;
  } catch {
    return null;
  }
}

function stopWatchdog(watchdog: ChildProcess | null): void {
  if (watchdog === null) return;
  if (watchdog.exitCode === null && watchdog.signalCode === null) watchdog.kill("SIGKILL");
  watchdog.stdin?.destroy();
}

let isolationPrefix: Promise<readonly string[]> | null = null;

/**
 * The command prefix that runs a program without network, or [] where that is not possible here.
 * Found out once per thread by running `true` through it.
 */
export function networkIsolationPrefix(): Promise<readonly string[]> {
  isolationPrefix ??= probeNetworkIsolation();
  return isolationPrefix;
}

async function probeNetworkIsolation(): Promise<readonly string[]> {
  const unshare = findExecutable(["unshare"]);
  const trueProgram = findExecutable(["true"]);
  if (unshare === null || trueProgram === null) return [];
  const prefix = [unshare, "--user", "--map-root-user", "--net", "--"];
  const works = await new Promise<boolean>((resolve) => {
    const probe = spawn(prefix[0]!, [...prefix.slice(1), trueProgram], { stdio: "ignore", env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
    const timer = setTimeout(() => probe.kill("SIGKILL"), 5000);
    probe.once("error", () => {
      clearTimeout(timer);
      resolve(false);
    });
    probe.once("exit", (code) => {
      clearTimeout(timer);
      resolve(code === 0);
    });
  });
  return works ? prefix : [];
}

function emptyResult(fields: { aborted: boolean; networkIsolated: boolean; durationMs: number }): ConverterResult {
  return { exitCode: null, signal: null, timedOut: false, stdout: "", stderr: "", stderrTail: "", outputTruncated: false, ...fields };
}

/** Output of one stream: the first `maxBytes`, and the last `tailBytes` however long it gets. */
class CappedOutput {
  readonly #maxBytes: number;
  readonly #tailBytes: number;
  readonly #head: Buffer[] = [];
  #headLength = 0;
  #tail: Buffer = Buffer.alloc(0);
  truncated = false;

  constructor(maxBytes: number, tailBytes: number) {
    this.#maxBytes = maxBytes;
    this.#tailBytes = tailBytes;
  }

  add(chunk: Buffer): void {
    const room = this.#maxBytes - this.#headLength;
    if (room > 0) {
      const kept = chunk.length <= room ? chunk : chunk.subarray(0, room);
      this.#head.push(kept);
      this.#headLength += kept.length;
    }
    if (chunk.length > room) this.truncated = true;
    if (this.#tailBytes > 0) {
      const joined = Buffer.concat([this.#tail, chunk]);
      this.#tail = joined.length > this.#tailBytes ? joined.subarray(joined.length - this.#tailBytes) : joined;
    }
  }

  text(): string {
    return Buffer.concat(this.#head).toString("utf8");
  }

  tailText(chars: number): string {
    const text = this.#tail.toString("utf8");
    return text.length > chars ? text.slice(text.length - chars) : text;
  }
}

/**
 * The far ends of the end-to-end line tests, each in a process of its own: SIPp (Debian
 * `sip-tester`) playing the carrier's trunk from a scenario in test/interop/sipp/, the SpanDSP
 * T.38 receiver harness (test/peers/spandsp-receiver, built by scripts/build-native.sh) that the
 * scenario's re-INVITE points the UDPTL at, and the SpanDSP G.711 receiver over RTP
 * (test/peers/spandsp-receiver/g711_receiver.c, also built by scripts/build-native.sh).
 * `cleanupPeers()` kills whatever is left.
 */
import { spawn } from "node:child_process";
import dnsPromises from "node:dns/promises";
import dgram from "node:dgram";
import net from "node:net";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { setPriority, tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { G711_RECEIVER_PATH, RECEIVER_PATH } from "./interop-support.ts";

export const SCENARIOS = path.join(path.dirname(fileURLToPath(import.meta.url)), "sipp");

const cleanups: (() => void)[] = [];

export function cleanupPeers(): void {
  for (const c of cleanups.splice(0)) c();
}

async function freePort(kind: "udp" | "tcp"): Promise<number> {
  if (kind === "tcp") {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise((resolve) => server.close(resolve));
    return port;
  }
  const socket = dgram.createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  const port = socket.address().port;
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

/** Whether something already holds `port` (SIPp has bound it). */
async function portTaken(kind: "udp" | "tcp", port: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (kind === "tcp") {
      const server = net.createServer();
      server.once("error", () => resolve(true));
      server.listen(port, "127.0.0.1", () => server.close(() => resolve(false)));
    } else {
      const socket = dgram.createSocket("udp4");
      socket.once("error", () => resolve(true));
      socket.bind(port, "127.0.0.1", () => socket.close(() => resolve(false)));
    }
  });
}

export interface SippRun {
  port: number;
  /** Where SIPp's own media (-mp) would be: the address its SDP names unless a scenario says otherwise. */
  mediaPort: number;
  exit: Promise<{ code: number | null; output: string }>;
  /** What the scenario's <log> actions wrote. */
  logs(): string;
  errors(): string;
  kill(): void;
}

type SippOptions = {
  keys?: Record<string, string>;
  calls?: number;
  timeoutSeconds?: number;
  transport?: "udp" | "tcp";
  /** Makes SIPp the caller (UAC): it calls `host:port`, with `service` as the Request-URI's user part. */
  call?: { remote: string; service: string };
};

/**
 * Starts SIPp as a UAS on 127.0.0.1 with `scenario` over `transport` (UDP), for `calls` calls;
 * `keys` become [key] in the scenario. It resolves once SIPp holds its port, so the first INVITE
 * (or TCP connect) is not lost. The free port is found by binding port 0 and closing it, so
 * another process may take it before SIPp binds it: then SIPp is started again on another port
 * (3 tries).
 */
export async function startSipp(scenario: string, options: SippOptions = {}): Promise<SippRun> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startSippOnce(scenario, options);
    } catch (error) {
      if (attempt >= 3 || !/Unable to bind|Address already in use/.test(String((error as Error).message))) throw error;
    }
  }
}

async function startSippOnce(scenario: string, options: SippOptions): Promise<SippRun> {
  const dir = mkdtempSync(path.join(tmpdir(), "faxline-sipp-"));
  const transport = options.transport ?? "udp";
  const port = await freePort(transport);
  const mediaPort = await freePort("udp");
  const args = [
    "-sf", path.join(SCENARIOS, scenario),
    "-nostdin",
    "-i", "127.0.0.1",
    "-p", String(port),
    "-mp", String(mediaPort),
    "-t", transport === "tcp" ? "t1" : "u1",
    "-m", String(options.calls ?? 1),
    "-timeout", `${options.timeoutSeconds ?? 120}s`,
    "-timeout_error",
    "-trace_err", "-error_file", path.join(dir, "errors.log"),
    "-trace_logs", "-log_file", path.join(dir, "logs.log"),
  ];
  for (const [k, v] of Object.entries(options.keys ?? {})) args.push("-key", k, v);
  if (options.call !== undefined) args.push("-s", options.call.service, options.call.remote);
  const child = spawn("sipp", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  const exit = new Promise<{ code: number | null; output: string }>((resolve) => child.on("close", (code) => resolve({ code, output })));
  cleanups.push(() => {
    if (child.exitCode === null) child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });
  const deadline = Date.now() + 5000;
  while (!(await portTaken(transport, port))) {
    if (Date.now() > deadline || child.exitCode !== null) {
      if (child.exitCode !== null) await exit;
      throw new Error(`sipp did not start: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  const read = (name: string): string => {
    try {
      return readFileSync(path.join(dir, name), "utf8");
    } catch {
      return "";
    }
  };
  return {
    port,
    mediaPort,
    exit,
    logs: () => read("logs.log"),
    errors: () => read("errors.log") + readdirSync(dir).join(" "),
    kill: () => child.kill("SIGKILL"),
  };
}

/** The receiver harness's RESULT line. */
export interface ReceiverResult {
  /** The call's index in a harness running several (startT38Peers). */
  session?: number;
  /** The exit code the call alone would have had (T.38 harness). */
  exit?: number;
  code: number;
  text: string;
  /** Pages sent (the harness's -t mode). */
  pages_tx?: number;
  pages_rx: number;
  bit_rate: number;
  ecm: number;
  encoding: string;
  width: number;
  length: number;
  bad_rows: number;
  remote_ident: string;
  local_ident: string;
  virtual_s: number;
  wall_s: number;
  /** The T.38 receiver's UDPTL counters. */
  udptl?: { tx_datagrams: number; tx_dropped: number; rx_datagrams: number; rx_recovered: number; rx_lost: number; rx_duplicates: number };
  /** The G.711 receiver's RTP counters. */
  rtp?: { tx_packets: number; rx_packets: number; rx_ignored: number; rx_malformed: number; late_samples: number; missing_ticks: number; played_ticks: number };
}

export interface ReceiverRun {
  port: number;
  /** Where the received pages are written (TIFF). */
  rxFile: string;
  /** Resolves with the RESULT line (null when the harness printed none), its exit code and its log. */
  result: Promise<{ result: ReceiverResult | null; exitCode: number | null; log: string }>;
  kill(): void;
  /**
   * Lockstep only (`lockstep: true`): tells the harness that our side has sent `sent` datagrams
   * in all; it takes them, runs one tick and resolves with the datagrams it has sent in all, or
   * with null once it has ended (it then no longer steps), and at once when not in lockstep.
   */
  step(sent: number): Promise<number | null>;
  /** Lockstep only: our side is done; the harness runs on alone to its end. */
  endLockstep(): void;
  /** As a sender (-t): `listener` gets the page count each time the receiver confirms a page (MCF). */
  onConfirmed(listener: (pagesTx: number) => void): void;
}

/**
 * Paces a T.38 session (runT38Session's `pacer`) in lockstep with a harness started with
 * `lockstep: true`: after each of our ticks the harness takes what we sent and runs its tick,
 * and our next tick waits until what it sent has arrived. A datagram that never arrives fails
 * the run after 10 s rather than hanging it.
 */
export function lockstepPacer(run: ReceiverRun, socket: { readonly stats: { datagramsSent: number; datagramsReceived: number } }): () => Promise<void> {
  return async () => {
    const peerSent = await run.step(socket.stats.datagramsSent);
    if (peerSent === null) return;
    const deadline = performance.now() + 10_000;
    while (socket.stats.datagramsReceived < peerSent) {
      if (performance.now() > deadline) throw new Error(`lockstep: datagram ${socket.stats.datagramsReceived + 1} of the harness's ${peerSent} never arrived`);
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
}

/** What a T.38 harness call is started with (startT38Receiver, startT38Peers). */
export interface T38HarnessOptions {
  speed: number;
  ecm: boolean;
  ident: string;
  redundancy?: number;
  lossPercent?: number;
  seed?: number;
  /** The compressions its DIS offers, or as a sender may send. (Default: all three) */
  compressions?: readonly ("MH" | "MR" | "MMR")[];
  virtualSeconds?: number;
  wallSeconds?: number;
  cpus?: string;
  /** Shares one virtual clock with our side, stepped through `step` (then `speed` is not used). */
  lockstep?: boolean;
}

function t38HarnessArgs(options: T38HarnessOptions): string[] {
  const args = ["-s", String(options.speed), "-R", String(options.redundancy ?? 3), "-i", options.ident, "-T", String(options.virtualSeconds ?? 600), "-W", String(options.wallSeconds ?? 120)];
  if (options.lossPercent !== undefined) args.push("-x", String(options.lossPercent), "-S", String(options.seed ?? 1));
  if (options.compressions !== undefined) args.push("-C", options.compressions.join(","));
  if (options.ecm) args.push("-e");
  if (options.lockstep) args.push("-L");
  return args;
}

/**
 * Starts the SpanDSP T.38 receiver on 127.0.0.1, a free port, at `speed` (it starts its clock on
 * our first datagram). `lossPercent` drops that share of what it sends, in a pattern fixed by `seed`.
 */
export async function startT38Receiver(options: T38HarnessOptions): Promise<ReceiverRun> {
  return startReceiver(RECEIVER_PATH, t38HarnessArgs(options), options.cpus);
}

/** Starts the SpanDSP G.711 receiver over RTP on 127.0.0.1, a free port, at `speed`. */
export async function startG711Receiver(options: {
  speed: number;
  ecm: boolean;
  ident: string;
  law?: "A" | "U";
  playoutDelayMs?: number;
  wallSeconds?: number;
  /** Runs the receiver on these CPUs only (`taskset -c`), e.g. "1" (bench:lines keeps it off the sender's core). */
  cpus?: string;
}): Promise<ReceiverRun> {
  const args = ["-s", String(options.speed), "-c", options.law ?? "A", "-D", String(options.playoutDelayMs ?? Math.max(60, 20 * options.speed)), "-i", options.ident, "-T", "600", "-W", String(options.wallSeconds ?? 120)];
  if (options.ecm) args.push("-e");
  return startReceiver(G711_RECEIVER_PATH, args, options.cpus);
}

/**
 * Starts the SpanDSP T.38 harness as a SENDER of `txFile` (the calling terminal) on 127.0.0.1, a
 * free port, at `speed`: it starts its clock on the first datagram of the answering side (Faxline
 * receiving). Its RESULT line carries `pages_tx`.
 */
export async function startT38Sender(options: Omit<T38HarnessOptions, "lockstep"> & { txFile: string }): Promise<ReceiverRun> {
  return startReceiver(RECEIVER_PATH, t38HarnessArgs(options), options.cpus, options.txFile);
}

async function startReceiver(binary: string, extraArgs: string[], cpus?: string, sendFile?: string): Promise<ReceiverRun> {
  return (await startReceiverGroup(binary, extraArgs, 1, cpus, sendFile))[0]!;
}

/**
 * Starts `count` calls of the T.38 harness in ONE process (its `-n`), on one event loop, each
 * with its own socket and clock, as startT38Receiver / startT38Sender start one. A process per
 * call costs its core a wake-up per call every 20 ms: at a few hundred calls that, not Faxline,
 * was the limit of `npm run bench:lines`. Call i receives into `<rxFile>` of its own, says
 * `<ident>-<i>`, and seeds its loss with `seed + i`. `kill()` ends only its own call (it still
 * reports, with exit code 3).
 */
export async function startT38Peers(
  count: number,
  options: T38HarnessOptions & {
    /** Send this file (the harness's -t) instead of receiving. */
    txFile?: string;
    /** The process's nice value (a negative one needs root or CAP_SYS_NICE; a refusal is printed). */
    nice?: number;
  },
): Promise<ReceiverRun[]> {
  if (!Number.isInteger(count) || count < 1) throw new Error(`not a call count: ${count}`);
  const args = t38HarnessArgs(options);
  if (count > 1) args.push("-n", String(count));
  return startReceiverGroup(RECEIVER_PATH, args, count, options.cpus, options.txFile, options.nice);
}

async function startReceiverGroup(binary: string, extraArgs: string[], count: number, cpus?: string, sendFile?: string, nice?: number): Promise<ReceiverRun[]> {
  const dir = mkdtempSync(path.join(tmpdir(), "faxline-rx-"));
  const rxFile = path.join(dir, "rx.tif");
  const args = [...(sendFile !== undefined ? ["-t", sendFile] : ["-f", rxFile]), "-l", "127.0.0.1:0", ...extraArgs];
  const stdio: ["pipe", "pipe", "pipe"] = ["pipe", "pipe", "pipe"];
  const child = cpus === undefined ? spawn(binary, args, { stdio }) : spawn("taskset", ["-c", cpus, binary, ...args], { stdio });
  if (nice !== undefined && child.pid !== undefined) {
    try {
      setPriority(child.pid, nice); // taskset execs the harness: the pid is the harness's
    } catch (error) {
      console.error(`cannot set the T.38 harness's nice value to ${nice} (it runs at the default): ${(error as Error).message}`);
    }
  }
  // A lone call reads stdin only in lockstep; a group reads it always ("STOP <i>" ends one call).
  const lockstep = args.includes("-L");
  if (!lockstep && count === 1) child.stdin.end();
  child.stdin.on("error", () => {}); // EPIPE once the harness has ended
  let log = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (log += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  cleanups.push(() => {
    if (child.exitCode === null) child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });
  // stdout: "LISTENING <port> ...", then in lockstep "STEPPED [<i>] <n>" per step, then one
  // "RESULT {...}" per call as it ends (with "session": i).
  let listening: (line: string | undefined) => void = () => {};
  const firstLine = new Promise<string | undefined>((resolve) => (listening = resolve));
  const calls = Array.from({ length: count }, () => ({
    confirmed: [] as ((pagesTx: number) => void)[],
    resultLine: undefined as string | undefined,
    stepped: [] as ((sent: number | null) => void)[],
    ended: false,
    reported: () => {},
  }));
  const endCall = (call: (typeof calls)[number]): void => {
    call.ended = true;
    for (const resolve of call.stepped.splice(0)) resolve(null);
    call.reported();
  };
  let closed = false;
  const lines = createInterface({ input: child.stdout });
  lines.on("line", (line) => {
    if (line.startsWith("LISTENING ")) listening(line);
    else if (line.startsWith("STEPPED ")) {
      const parts = line.slice("STEPPED ".length).split(" ").map(Number);
      const [index, sent] = count > 1 ? [parts[0]!, parts[1]!] : [0, parts[0]!];
      calls[index]?.stepped.shift()?.(sent);
    } else if (line.startsWith("CONFIRMED ")) {
      const [index, pages] = line.slice("CONFIRMED ".length).split(" ").map(Number);
      for (const listener of calls[index!]?.confirmed ?? []) listener(pages!);
    } else if (line.startsWith("RESULT ")) {
      const index = count > 1 ? (JSON.parse(line.slice("RESULT ".length)) as { session: number }).session : 0;
      const call = calls[index];
      if (call !== undefined) {
        call.resultLine = line;
        endCall(call);
      }
    }
  });
  lines.on("close", () => {
    closed = true;
    listening(undefined);
    for (const call of calls) endCall(call);
  });
  const first = await firstLine;
  const ports = (/^LISTENING ((?:\d+ ?)+)$/.exec(first ?? "")?.[1] ?? "").trim().split(" ").map(Number);
  if (ports.length !== count || !ports.every((p) => p > 0)) throw new Error(`the receiver did not say where it listens: ${first}\n${log}`);
  return calls.map((call, i) => {
    // With one call, its result waits for the process's exit code; with several, each call's own
    // "exit" from its RESULT line stands for it.
    const result = (async () => {
      if (count === 1) {
        const exitCode = await exited;
        await new Promise<void>((resolve) => (closed ? resolve() : lines.once("close", () => resolve())));
        return { result: call.resultLine ? (JSON.parse(call.resultLine.slice("RESULT ".length)) as ReceiverResult) : null, exitCode, log };
      }
      await new Promise<void>((resolve) => (call.ended ? resolve() : (call.reported = resolve)));
      const parsed = call.resultLine ? (JSON.parse(call.resultLine.slice("RESULT ".length)) as ReceiverResult) : null;
      return { result: parsed, exitCode: parsed?.exit ?? (await exited), log };
    })();
    return {
      port: ports[i]!,
      rxFile: count > 1 ? `${rxFile}.${i}` : rxFile,
      result,
      kill: () => {
        if (count === 1) child.kill("SIGTERM");
        else if (!call.ended && !child.stdin.writableEnded) child.stdin.write(`STOP ${i}\n`);
      },
      step: (sent) => {
        if (!lockstep || call.ended || child.stdin.writableEnded) return Promise.resolve(null);
        return new Promise((resolve) => {
          call.stepped.push(resolve);
          child.stdin.write(count > 1 ? `STEP ${i} ${sent}\n` : `STEP ${sent}\n`);
        });
      },
      onConfirmed: (listener) => void call.confirmed.push(listener),
      endLockstep: () => {
        if (!lockstep) return;
        if (count > 1) {
          if (!child.stdin.writableEnded) child.stdin.write(`END ${i}\n`);
        } else child.stdin.end();
      },
    };
  });
}

/**
 * A real DNS server for the SRV tests: dnsmasq on 127.0.0.1 and a free UDP port, answering only
 * for the records given (no upstream, no /etc/hosts). `srv`: `_sip._udp.trunk.test` → targets;
 * `hosts`: name → address. Resolves once it answers.
 */
export async function startDnsmasq(records: {
  srv: { name: string; target: string; port: number; priority: number; weight: number }[];
  hosts: Record<string, string>;
  naptr?: { name: string; order: number; preference: number; flags: string; service: string; replacement: string }[];
}): Promise<{ server: string; kill(): void }> {
  const port = await freePort("udp");
  const args = ["--no-daemon", "--conf-file=/dev/null", "--no-resolv", "--no-hosts", "--no-poll", "--pid-file=", "--user=root", "--bind-interfaces", "--listen-address=127.0.0.1", `--port=${port}`, "--log-facility=-"];
  // Answers for every name under .test (NXDOMAIN for names it has no records of, as a real zone does) instead of REFUSED.
  args.push("--local=/test/");
  for (const r of records.srv) args.push(`--srv-host=${r.name},${r.target},${r.port},${r.priority},${r.weight}`);
  for (const [name, address] of Object.entries(records.hosts)) args.push(`--host-record=${name},${address}`);
  for (const r of records.naptr ?? []) args.push(`--naptr-record=${r.name},${r.order},${r.preference},${r.flags},${r.service},,${r.replacement}`);
  const child = spawn("dnsmasq", args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  cleanups.push(() => {
    if (child.exitCode === null) child.kill("SIGKILL");
  });
  const resolver = new dnsPromises.Resolver({ timeout: 200, tries: 1 });
  resolver.setServers([`127.0.0.1:${port}`]);
  const deadline = Date.now() + 5000;
  for (;;) {
    try {
      await resolver.resolve4(Object.keys(records.hosts)[0]!);
      break;
    } catch {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`dnsmasq did not start: ${output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return { server: `127.0.0.1:${port}`, kill: () => child.kill("SIGKILL") };
}

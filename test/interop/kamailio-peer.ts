/**
 * Kamailio (Debian `kamailio`, with its dispatcher module) as a test peer: the SIP load balancer
 * in front of Faxline nodes, run from the very configuration file the deployment guide ships
 * (examples/kamailio/kamailio.cfg). What differs per run (its address and port, the nodes, the
 * carrier's network, shorter timers) is passed as the file's own defines (`-A NAME=value`), and
 * the nodes as a dispatcher list file written here.
 *
 * It runs in the foreground (`-DD`), logging to standard error (`-E`), in a process group of its
 * own so that `stop()` ends its worker processes with it. The configuration logs the dispatcher's
 * verdicts as `FAXLINE-NODE-DOWN <uri>` and `FAXLINE-NODE-UP <uri>`, and each INVITE's node as
 * `to node <uri>`: `waitForLog` waits for them.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freeUdpPort } from "../support/child-node.ts";
import { sipOptions } from "../support/sip-options.ts";

export const KAMAILIO_CONFIG = fileURLToPath(new URL("../../examples/kamailio/kamailio.cfg", import.meta.url));

export interface KamailioOptions {
  /** The address it listens on (UDP), and the nodes trust as their trunk's source. */
  address: string;
  /** The Faxline nodes (dispatcher set 1), as address and SIP port. */
  nodes: readonly { address: string; port: number }[];
  /** The carrier's networks (CIDR), the only sources of new calls. */
  carrierNets: readonly string[];
  /** Seconds between OPTIONS probes of each node. */
  pingIntervalSeconds: number;
  /** How long a node has to answer before it counts as silent, ms. */
  frTimerMs: number;
}

export interface KamailioRun {
  address: string;
  port: number;
  /** Its log so far (standard error). */
  log(): string;
  /**
   * Waits until a log line after `from` (an offset into `log()`, e.g. its length before an action)
   * matches `pattern`; rejects after `timeoutMs` with the log.
   */
  waitForLog(pattern: RegExp, from: number, timeoutMs: number): Promise<string>;
  stop(): Promise<void>;
}

/**
 * Starts Kamailio on `address` and a free UDP port with the example configuration and resolves
 * once it answers an OPTIONS of its own (the carrier's keep-alive). A port another process took
 * meanwhile is retried on another one (3 tries).
 */
export async function startKamailio(options: KamailioOptions): Promise<KamailioRun> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startKamailioOnce(options);
    } catch (error) {
      if (attempt >= 3 || !/Address already in use/.test((error as Error).message)) throw error;
    }
  }
}

async function startKamailioOnce(options: KamailioOptions): Promise<KamailioRun> {
  const dir = mkdtempSync(path.join(tmpdir(), "faxline-kamailio-"));
  const list = path.join(dir, "faxline-nodes.list");
  writeFileSync(list, options.nodes.map((n) => `1 sip:${n.address}:${n.port}\n`).join(""));
  const port = await freeUdpPort(options.address);
  const args = [
    "-DD",
    "-E",
    "-f", KAMAILIO_CONFIG,
    // Its runtime files (control sockets) in a directory of its own; little memory.
    "-Y", dir,
    "-m", "32",
    "-M", "4",
    "-A", `LISTEN_IP=${options.address}`,
    "-A", `LISTEN_PORT=${port}`,
    "-A", `NODES_LIST="${list}"`,
    "-A", `CARRIER_NETS="${options.carrierNets.join(",")}"`,
    "-A", `PING_INTERVAL=${options.pingIntervalSeconds}`,
    "-A", `FR_TIMER=${options.frTimerMs}`,
    "-A", "WORKERS=1",
  ];
  const child = spawn("kamailio", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let log = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (log += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (log += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let running = true;
  void exited.then(() => (running = false));
  const signalGroup = (signal: NodeJS.Signals): void => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      /* already gone */
    }
  };
  const stop = async (): Promise<void> => {
    if (running) {
      signalGroup("SIGTERM");
      const killed = setTimeout(() => signalGroup("SIGKILL"), 3000);
      await exited;
      clearTimeout(killed);
    }
    // Workers that outlived the main process.
    signalGroup("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (!running) {
      await stop();
      throw new Error(`kamailio did not start (${args.join(" ")}):\n${log}`);
    }
    if ((await sipOptions(options.address, port, 200)) !== null) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`kamailio does not answer OPTIONS on ${options.address}:${port}:\n${log}`);
    }
  }
  return {
    address: options.address,
    port,
    log: () => log,
    waitForLog: async (pattern, from, timeoutMs) => {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const line = log.slice(from).split("\n").find((l) => pattern.test(l));
        if (line !== undefined) return line;
        if (!running) throw new Error(`kamailio exited while the test waited for ${pattern}:\n${log}`);
        if (Date.now() > end) throw new Error(`kamailio logged no ${pattern} within ${timeoutMs} ms:\n${log.slice(-6000)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    stop,
  };
}

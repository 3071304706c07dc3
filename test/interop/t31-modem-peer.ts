/**
 * The far end of the efax tests, each part in a process of its own: the T.31 modem on a
 * pseudo-terminal (test/peers/t31-modem, built by scripts/build-native.sh) whose line is T.38 or
 * G.711, and efax (Debian `efax`, Ed Casas' own T.30) driving it as a Class 1 modem. What efax
 * sends is not what it reads: it decodes each page and codes it again in MH, after 20 white
 * scan lines of its own at the top (its page header's room, the header itself blank here);
 * `efaxSentPage` is that page, what a receiver must end up with.
 * `cleanupT31Peers()` kills whatever is left.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { PagePixels } from "../support/fax-page-pixels.ts";

export const T31_MODEM_PATH = fileURLToPath(new URL("../peers/t31-modem/build/t31_modem", import.meta.url));

/** Fails with a message naming what to install or build when efax or the modem is missing. */
export function requireEfaxPeers(): void {
  if (!existsSync(T31_MODEM_PATH)) throw new Error(`not built: ${T31_MODEM_PATH}. Run scripts/build-native.sh (needs libspandsp-dev, libtiff-dev and pkg-config).`);
  if (!existsSync("/usr/bin/efax")) throw new Error("efax is not installed: run scripts/install.sh (Debian package efax).");
}

const cleanups: (() => void)[] = [];

export function cleanupT31Peers(): void {
  for (const c of cleanups.splice(0)) c();
}

export interface T31ModemResult {
  code: number;
  text: string;
  line: "t38" | "g711";
  dialed: string;
  rang: boolean;
  dte_rx_bytes: number;
  dte_tx_bytes: number;
  reversed_non_ecm_bytes: number;
  virtual_s: number;
  wall_s: number;
  udptl?: { tx_datagrams: number; rx_datagrams: number; rx_recovered: number; rx_lost: number; rx_duplicates: number };
  rtp?: { tx_packets: number; rx_packets: number; rx_ignored: number; late_samples: number; missing_ticks: number };
}

export interface T31ModemRun {
  /** The pty's slave device, for efax -d. */
  device: string;
  /** Where the line listens (UDPTL or RTP): the SDP's port. */
  port: number;
  /** Resolves with the number the program dialed. */
  dialed: Promise<string>;
  result: Promise<{ result: T31ModemResult | null; exitCode: number | null; log: string }>;
  kill(): void;
}

/** Starts the T.31 modem with its line on 127.0.0.1, a free port, at `speed`. */
export async function startT31Modem(options: { line: "t38" | "g711"; speed: number; law?: "A" | "U"; wallSeconds?: number; debug?: boolean }): Promise<T31ModemRun> {
  const args = ["-m", options.line, "-s", String(options.speed), "-W", String(options.wallSeconds ?? 120), "-T", "600"];
  if (options.law !== undefined) args.push("-c", options.law);
  if (options.debug) args.push("-d");
  const child = spawn(T31_MODEM_PATH, args, { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (log += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  cleanups.push(() => {
    if (child.exitCode === null) child.kill("SIGKILL");
  });
  let device = "";
  let port = 0;
  let resultLine: string | undefined;
  let ready: () => void = () => {};
  const started = new Promise<void>((resolve) => (ready = resolve));
  let dialedResolve: (n: string) => void = () => {};
  const dialed = new Promise<string>((resolve) => (dialedResolve = resolve));
  const lines = createInterface({ input: child.stdout });
  lines.on("line", (line) => {
    if (line.startsWith("PTY ")) device = line.slice(4);
    else if (line.startsWith("LISTENING ")) {
      port = Number(line.slice(10));
      ready();
    } else if (line.startsWith("DIALED ")) dialedResolve(line.slice(7));
    else if (line.startsWith("RESULT ")) resultLine = line.slice(7);
  });
  const closed = new Promise<void>((resolve) => lines.once("close", resolve));
  await Promise.race([started, closed]);
  if (port <= 0 || device === "") throw new Error(`the T.31 modem did not start: ${log}`);
  return {
    device,
    port,
    dialed,
    result: (async () => {
      const exitCode = await exited;
      await closed;
      return { result: resultLine ? (JSON.parse(resultLine) as T31ModemResult) : null, exitCode, log };
    })(),
    kill: () => child.kill("SIGTERM"),
  };
}

export interface EfaxRun {
  /** efax's exit code (0: sent) and its session log. */
  exit: Promise<{ code: number | null; log: string }>;
  kill(): void;
}

/**
 * Runs efax in `dir` (removed at the end) on the modem on `device` as a Class 1 modem (-o1), with
 * `ident` as its TSI or CSI, its session log (-v: errors, warnings, information, negotiation,
 * commands, modem responses) collected; `args` say what it does.
 */
function runEfax(dir: string, device: string, ident: string, args: readonly string[]): EfaxRun {
  const child = spawn("efax", ["-d", device, "-o1", "-l", ident, "-x", path.join(dir, "LCK"), "-v", "ewinchm", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (log += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (log += chunk));
  const exit = new Promise<{ code: number | null; log: string }>((resolve) => child.on("close", (code) => resolve({ code, log })));
  cleanups.push(() => {
    if (child.exitCode === null) child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });
  return { exit, kill: () => child.kill("SIGTERM") };
}

/**
 * Starts efax sending `pages` (one file each) to `number` with a blank page header. `capabilities`
 * is its -c string (vr,br,wd,ln,df,ec,bf,st); efax takes the resolution and length from each file.
 */
export function startEfaxSender(options: { device: string; number: string; pages: readonly Buffer[]; ident: string; capabilities?: string }): EfaxRun {
  const dir = mkdtempSync(path.join(tmpdir(), "faxline-efax-"));
  const files = options.pages.map((page, i) => {
    const file = path.join(dir, `page.${String(i + 1).padStart(3, "0")}`);
    writeFileSync(file, page);
    return file;
  });
  const args = ["-h", "", ...(options.capabilities !== undefined ? ["-c", options.capabilities] : []), "-t", options.number, ...files];
  return runEfax(dir, options.device, options.ident, args);
}

/**
 * Starts efax waiting for a call (it answers the first RING); `pages()` lists the pages it has
 * written (TIFF, MH), in order.
 */
export function startEfaxReceiver(options: { device: string; ident: string }): EfaxRun & { pages(): string[] } {
  const dir = mkdtempSync(path.join(tmpdir(), "faxline-efax-rx-"));
  return {
    ...runEfax(dir, options.device, options.ident, ["-r", path.join(dir, "page")]),
    pages: () => readdirSync(dir).filter((name) => /^page\.\d{3}$/.test(name)).sort().map((name) => path.join(dir, name)),
  };
}

/** White scan lines efax puts above every page it sends (its HDRSPCE), at 196 lines per inch. */
export const EFAX_HEADER_ROWS = 20;

/**
 * The page efax sends for `page`: its header's white rows on top, the page below, as wide as the
 * page. At 98 lines per inch efax merges the header's rows in pairs (it composes the header at
 * 196) and with them the page's first 8 rows, ORed in pairs: those rows must be white here.
 */
export function efaxSentPage(page: PagePixels, yDpi: number): PagePixels {
  const { width } = page;
  let top: number;
  let skip: number;
  if (yDpi >= 150) {
    top = EFAX_HEADER_ROWS;
    skip = 0;
  } else {
    // Lines 0..27 (20 inserted + the page's first 8) are sent as 14 lines, each the OR of a pair.
    for (let i = 0; i < 8 * width; i++) if (page.pixels[i]! < 128) throw new Error("efaxSentPage: a LOW page's first 8 rows must be white");
    top = (EFAX_HEADER_ROWS + 8) / 2;
    skip = 8;
  }
  const height = top + page.height - skip;
  const pixels = Buffer.alloc(width * height, 255);
  page.pixels.copy(pixels, top * width, skip * width);
  return { width, height, pixels };
}

/**
 * One page as efax reads it: an uncompressed bilevel TIFF in one strip (efax reads TIFF only
 * uncompressed or in G3 1-D, in one strip), white = 0, with its resolution in pixels per inch.
 */
export function rawBilevelTiff(page: PagePixels, xDpi: number, yDpi: number): Buffer {
  const rowBytes = Math.ceil(page.width / 8);
  const data = Buffer.alloc(rowBytes * page.height, 0);
  for (let y = 0; y < page.height; y++) {
    for (let x = 0; x < page.width; x++) if (page.pixels[y * page.width + x]! < 128) data[y * rowBytes + (x >> 3)]! |= 0x80 >> (x & 7);
  }
  const entries: [tag: number, type: number, value: number][] = [
    [256, 4, page.width],
    [257, 4, page.height],
    [258, 3, 1],
    [259, 3, 1],
    [262, 3, 0],
    [273, 4, 0], // strip offset, set below
    [277, 3, 1],
    [278, 4, page.height],
    [279, 4, data.length],
    [282, 5, 0], // x resolution, at the rationals below
    [283, 5, 0],
    [296, 3, 2],
  ];
  const ifdAt = 8;
  const ifdSize = 2 + entries.length * 12 + 4;
  const rationalsAt = ifdAt + ifdSize;
  const dataAt = rationalsAt + 16;
  const out = Buffer.alloc(dataAt + data.length);
  out.write("II", 0, "latin1");
  out.writeUInt16LE(42, 2);
  out.writeUInt32LE(ifdAt, 4);
  out.writeUInt16LE(entries.length, ifdAt);
  entries.forEach(([tag, type, value], i) => {
    const at = ifdAt + 2 + i * 12;
    out.writeUInt16LE(tag, at);
    out.writeUInt16LE(type, at + 2);
    out.writeUInt32LE(1, at + 4);
    if (tag === 273) out.writeUInt32LE(dataAt, at + 8);
    else if (tag === 282) out.writeUInt32LE(rationalsAt, at + 8);
    else if (tag === 283) out.writeUInt32LE(rationalsAt + 8, at + 8);
    else if (type === 3) out.writeUInt16LE(value, at + 8);
    else out.writeUInt32LE(value, at + 8);
  });
  out.writeUInt32LE(0, ifdAt + 2 + entries.length * 12);
  out.writeUInt32LE(xDpi, rationalsAt);
  out.writeUInt32LE(1, rationalsAt + 4);
  out.writeUInt32LE(yDpi, rationalsAt + 8);
  out.writeUInt32LE(1, rationalsAt + 12);
  data.copy(out, dataAt);
  return out;
}

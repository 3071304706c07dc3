/**
 * The reception spool (docs/adr/0020-durable-reception.md): every fax this node answers is
 * received into a directory of its own under the spool (`<store.dataDir>/receptions/<id>/`, or
 * `inbound.spoolDir`), so that a page the caller was told was received (MCF) is on this node's
 * disk whatever happens to the node next:
 *
 *   reception.json  the record, written (and fsynced) before the call is answered: the received
 *                   fax's id, customer, topic, trunk, called and calling number, when it began
 *   received.tif    the pages, as SpanDSP writes them (one IFD per page, appended at its end)
 *   progress.json   written by the media runner after each page is whole on disk and before its
 *                   MCF goes out (page-spool.ts): the confirmed page count, the caller's TSI,
 *                   resolution, bit rate; and at phase E its completion code
 *   ended.json      the call's final report, written only when the store could not take it
 *
 * Every JSON file is written whole or not at all (a temporary file, fsync, rename, fsync of the
 * directory). When the store has the reception the directory is removed; at start a node stores
 * whatever it finds here (inbound-calls.ts `recoverUnfinished`). No store here: line/ knows none.
 */
import { readFileSync } from "node:fs";
import { mkdir, open, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";

export const RECORD_FILE = "reception.json";
export const PROGRESS_FILE = "progress.json";
export const IMAGE_FILE = "received.tif";
export const ENDED_FILE = "ended.json";

/** What is known of a reception when it is answered. */
export interface ReceptionRecord {
  /** The received fax's id (`FI…`), chosen before the answer: a stored reception is stored once. */
  id: string;
  custNr: string;
  topic: string;
  trunk: string;
  /** The called number, E.164. */
  toNumber: string;
  fromNumber: string | null;
  /** Wall clock, ms since the epoch, when the call came in. */
  startedAt: number;
}

/** What the media runner confirmed so far (page-spool.ts). */
export interface ReceptionProgress {
  /** Pages whole on disk (fsynced) before their MCF was sent. */
  pages: number;
  /** What carries the fax. */
  transport: "t38" | "g711";
  remoteCsid: string | null;
  /** Vertical resolution of the latest page, lines per inch; 0 before the first page. */
  yDpi: number;
  bitRate: number;
  ecm: boolean;
  encoding: string | null;
  /** `T30_ERR_*` once phase E came; null before. */
  completion: string | null;
  /** Wall clock, ms since the epoch, of this write. */
  updatedAt: number;
}

/** Writes `value` as JSON into `file`, whole or not at all, and makes it durable. */
export async function writeJsonDurably(file: string, value: unknown): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  const handle = await open(temporary, "w", 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(value)}\n`);
    await handle.datasync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  await fsyncDirectory(path.dirname(file));
}

/** Makes a directory's entries (a file created or renamed in it) durable. */
export async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Creates a reception's directory with its record, durably; returns the directory. Removes what it made when it fails. */
export async function createReceptionDir(spoolDir: string, record: ReceptionRecord): Promise<string> {
  await mkdir(spoolDir, { recursive: true, mode: 0o700 });
  const dir = path.join(spoolDir, record.id);
  try {
    await mkdir(dir, { mode: 0o700 });
    await fsyncDirectory(spoolDir);
    await writeJsonDurably(path.join(dir, RECORD_FILE), record);
  } catch (error) {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    throw error;
  }
  return dir;
}

export async function readJson<T>(file: string): Promise<T | null> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  return JSON.parse(text) as T;
}

/** A reception directory found in the spool. */
export interface SpooledReception {
  dir: string;
  /** Why its files cannot be read (a damaged JSON file …): then the others are null and it is left for an operator. */
  damaged: string | null;
  /** Null when the directory has none (the node died while creating it: never answered). */
  record: ReceptionRecord | null;
  progress: ReceptionProgress | null;
  /** The call's final report when it ended but could not be stored (its shape is the line's). */
  ended: unknown;
}

/** A reception's directory name: its received fax's id. Nothing else in the spool is touched. */
const RECEPTION_DIR = /^FI[A-Z0-9]{10,40}$/;

/** The reception directories in the spool, oldest id first; none when the spool does not exist. One that cannot be read comes back `damaged`. */
export async function spooledReceptions(spoolDir: string): Promise<SpooledReception[]> {
  let names: string[];
  try {
    names = (await readdir(spoolDir, { withFileTypes: true })).filter((e) => e.isDirectory() && RECEPTION_DIR.test(e.name)).map((e) => e.name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const out: SpooledReception[] = [];
  for (const name of names.sort()) {
    const dir = path.join(spoolDir, name);
    try {
      out.push({
        dir,
        damaged: null,
        record: await readJson<ReceptionRecord>(path.join(dir, RECORD_FILE)),
        progress: await readJson<ReceptionProgress>(path.join(dir, PROGRESS_FILE)),
        ended: await readJson<unknown>(path.join(dir, ENDED_FILE)),
      });
    } catch (error) {
      out.push({ dir, damaged: (error as Error).message, record: null, progress: null, ended: null });
    }
  }
  return out;
}

/** Thrown when another process holds the spool (its lock file names a live process). */
export class SpoolInUseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SpoolInUseError";
  }
}

/**
 * Takes the spool for this process: `<spool>/.lock` created exclusively with our pid and, on
 * Linux, the process's start time (so that a later process that got the same pid is not taken for
 * the holder). A lock whose process no longer runs is taken over; one whose process runs refuses
 * (SpoolInUseError), so that two lines never store (and delete) each other's receptions. Returns
 * its release.
 */
export async function lockSpool(spoolDir: string): Promise<() => Promise<void>> {
  await mkdir(spoolDir, { recursive: true, mode: 0o700 });
  const lockFile = path.join(spoolDir, ".lock");
  const own = lockLine(process.pid);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await writeFile(lockFile, `${own}\n`, { flag: "wx", mode: 0o600 });
      return async () => {
        const held = await readFile(lockFile, "utf8").catch(() => "");
        if (held.trim() === own) await rm(lockFile, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const [pidText, started] = (await readFile(lockFile, "utf8").catch(() => "")).trim().split(" ");
      const pid = Number(pidText);
      // A running process is the holder unless its start time, where it can be read, says it is a later one.
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processRuns(pid) && (started === undefined || (processStart(pid) ?? started) === started)) {
        throw new SpoolInUseError(`the reception spool ${spoolDir} is in use by process ${pid}: give each node (and each line) a spool of its own (inbound.spoolDir)`);
      }
      // Left by a process that ended (or by this one, or the pid is another process's now): taken over.
      await rm(lockFile, { force: true });
    }
  }
  throw new SpoolInUseError(`cannot take the reception spool ${spoolDir}'s lock file`);
}

/** What a lock file holds for `pid`: the pid, and its start time where the system tells it. */
export function lockLine(pid: number): string {
  const started = processStart(pid);
  return started === null ? String(pid) : `${pid} ${started}`;
}

/** A process's start time in clock ticks after boot (Linux /proc/<pid>/stat, field 22); null elsewhere. */
function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    // Field 2 (the command) is in parentheses and may hold spaces: count from after its ")".
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

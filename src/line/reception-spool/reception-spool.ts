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
import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
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
  /** Null when the directory has none (the node died while creating it: never answered). */
  record: ReceptionRecord | null;
  progress: ReceptionProgress | null;
  /** The call's final report when it ended but could not be stored (its shape is the line's). */
  ended: unknown;
}

/** The reception directories in the spool, oldest id first; none when the spool does not exist. */
export async function spooledReceptions(spoolDir: string): Promise<SpooledReception[]> {
  let names: string[];
  try {
    names = (await readdir(spoolDir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const out: SpooledReception[] = [];
  for (const name of names.sort()) {
    const dir = path.join(spoolDir, name);
    out.push({
      dir,
      record: await readJson<ReceptionRecord>(path.join(dir, RECORD_FILE)),
      progress: await readJson<ReceptionProgress>(path.join(dir, PROGRESS_FILE)),
      ended: await readJson<unknown>(path.join(dir, ENDED_FILE)),
    });
  }
  return out;
}

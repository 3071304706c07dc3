/**
 * One live process per node identity. A node holds `<dataDir>/locks/<nodeId>.node-lock` for its
 * whole life. A second `faxline serve` with the same node id (by default the id kept in the data
 * directory) refuses to start while the holder lives: otherwise it would release the first node's
 * leases as "its previous life's" while the calls still run, and those faxes would be sent twice.
 * Nodes with different ids may share a store.
 *
 * The lock is one the operating system holds for the process and drops when it dies, however it
 * dies (SIGKILL, out-of-memory kill, power loss): an exclusive SQLite transaction on a small lock
 * file, that is a POSIX record lock (fcntl) taken by SQLite and never committed. A PID file cannot do
 * this: a node that runs as PID 1 in a container finds its own PID in the stale file after a
 * restart, and a zombie that nobody reaps keeps its PID alive. (SQLite is used here only as a
 * portable way to an fcntl lock from Node, which has no flock of its own; it is not the store.)
 *
 * Beside the lock, `<nodeId>.owner` names the holder's pid and host, for messages only: whether a
 * node runs is decided by the lock alone. Lock files are never deleted: deleting one while another
 * process opens it would let two processes lock two different files of one name.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";

export class DataDirLockedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DataDirLockedError";
  }
}

const LOCK_SUFFIX = ".node-lock";

/** Lock files this process holds (SQLite would see its own lock as free to a second connection in some builds). */
const heldHere = new Set<string>();

function lockPaths(dataDir: string, nodeId: string): { dir: string; lock: string; owner: string } {
  const dir = join(dataDir, "locks");
  const safe = nodeId.replace(/[^A-Za-z0-9._-]/g, "_");
  return { dir, lock: join(dir, `${safe}${LOCK_SUFFIX}`), owner: join(dir, `${safe}.owner`) };
}

function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"));
}

/**
 * Takes the lock file's exclusive lock, or returns null when another process holds it.
 * `waitMs`: how long to wait for it (a start waits a little, so that `faxline store copy`
 * looking at the lock at that moment does not make it refuse).
 */
function tryLock(file: string, waitMs = 0): Database.Database | null {
  const db = new Database(file, { timeout: waitMs });
  try {
    db.pragma("locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
    return db;
  } catch (err) {
    db.close();
    if (isBusy(err)) return null;
    throw err;
  }
}

function ownerOf(ownerFile: string): string {
  try {
    const [pid, host] = readFileSync(ownerFile, "utf8").trim().split(" ");
    return pid ? `pid ${pid}${host && host !== hostname() ? ` on ${host}` : ""}` : "pid unknown";
  } catch {
    return "pid unknown";
  }
}

export function acquireNodeLock(dataDir: string, nodeId: string): { release(): void } {
  const paths = lockPaths(dataDir, nodeId);
  mkdirSync(paths.dir, { recursive: true });
  const busy = (who: string) =>
    new DataDirLockedError(
      `Another Faxline node (${who}) is running as node "${nodeId}" on the data directory ${dataDir}. ` +
        "Stop it first, or give this node its own FAXLINE_DATA_DIR or FAXLINE_NODE_ID.",
    );
  if (heldHere.has(paths.lock)) throw busy(`pid ${process.pid}, this process`);
  let db: Database.Database | null;
  try {
    db = tryLock(paths.lock, 500);
  } catch (err) {
    throw new DataDirLockedError(`Could not lock ${paths.lock}: ${(err as Error).message}; check the data directory's permissions`);
  }
  if (db === null) throw busy(ownerOf(paths.owner));
  heldHere.add(paths.lock);
  writeFileSync(paths.owner, `${process.pid} ${hostname()}\n`);
  const held = db;
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      rmSync(paths.owner, { force: true });
      held.close();
      heldHere.delete(paths.lock);
    },
  };
}

/** The node ids whose lock in `dataDir` a running process holds (this process's own locks left out). */
export function liveNodeLocks(dataDir: string): { nodeId: string; holder: string }[] {
  const dir = join(dataDir, "locks");
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(LOCK_SUFFIX));
  } catch {
    return [];
  }
  const live: { nodeId: string; holder: string }[] = [];
  for (const name of names) {
    const file = join(dir, name);
    if (heldHere.has(file)) continue;
    const db = tryLock(file);
    if (db === null) {
      const nodeId = name.slice(0, -LOCK_SUFFIX.length);
      live.push({ nodeId, holder: ownerOf(join(dir, `${nodeId}.owner`)) });
    } else {
      db.close();
    }
  }
  return live;
}

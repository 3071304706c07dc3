/**
 * One live process per node identity. A node holds `<dataDir>/locks/<nodeId>.lock` (its pid and
 * a token) for its whole life. A second `faxline serve` with the same node id (by default the id
 * kept in the data directory) refuses to start while the holder is alive: otherwise it would
 * release the first node's leases as "its previous life's" while the calls still run, and those
 * faxes would be sent twice. A lock left by a killed process (its pid no longer runs) is taken
 * over. Nodes with different ids may share a store.
 */
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { randomToken } from "../lib/ids.ts";

export class DataDirLockedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DataDirLockedError";
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

export function acquireNodeLock(dataDir: string, nodeId: string): { release(): void } {
  mkdirSync(join(dataDir, "locks"), { recursive: true });
  const file = join(dataDir, "locks", `${nodeId.replace(/[^A-Za-z0-9._-]/g, "_")}.lock`);
  const token = `${process.pid} ${randomToken(12)}`;
  for (let tries = 0; tries < 3; tries++) {
    try {
      const fd = openSync(file, "wx");
      writeSync(fd, `${token}\n`);
      closeSync(fd);
      return {
        release() {
          try {
            if (readFileSync(file, "utf8").trim() === token) rmSync(file);
          } catch {
            /* already gone */
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      let holder = "";
      try {
        holder = readFileSync(file, "utf8").trim();
      } catch {
        continue;
      }
      const pid = Number(holder.split(" ")[0]);
      if (Number.isInteger(pid) && pid > 0 && processAlive(pid)) {
        throw new DataDirLockedError(
          `Another Faxline node (pid ${pid}${pid === process.pid ? ", this process" : ""}) is running as node "${nodeId}" on the data directory ${dataDir}. ` +
            "Stop it first, or give this node its own FAXLINE_DATA_DIR or FAXLINE_NODE_ID.",
        );
      }
      rmSync(file, { force: true });
    }
  }
  throw new DataDirLockedError(`Could not lock the data directory ${dataDir}; check its permissions`);
}

/** The node ids whose lock in `dataDir` is held by a live process (a running node). */
export function liveNodeLocks(dataDir: string): { nodeId: string; pid: number }[] {
  const dir = join(dataDir, "locks");
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".lock"));
  } catch {
    return [];
  }
  const live: { nodeId: string; pid: number }[] = [];
  for (const name of names) {
    try {
      const pid = Number(readFileSync(join(dir, name), "utf8").trim().split(" ")[0]);
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processAlive(pid)) live.push({ nodeId: name.slice(0, -".lock".length), pid });
    } catch {
      /* released meanwhile */
    }
  }
  return live;
}

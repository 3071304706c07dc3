import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { acquireNodeLock, DataDirLockedError } from "../../src/roles/data-dir-lock.ts";
import { tempDir } from "../support/test-node.ts";

describe("node lock: one live process per node id", () => {
  it("refuses a second holder of the same id and allows other ids", () => {
    const dir = tempDir();
    try {
      const first = acquireNodeLock(dir.path, "de1-a");
      assert.throws(() => acquireNodeLock(dir.path, "de1-a"), (err: Error) => err instanceof DataDirLockedError && /running as node "de1-a"/.test(err.message));
      const other = acquireNodeLock(dir.path, "de1-b");
      other.release();
      first.release();
      assert.equal(existsSync(join(dir.path, "locks", "de1-a.lock")), false);
      acquireNodeLock(dir.path, "de1-a").release();
    } finally {
      dir.remove();
    }
  });

  it("takes over the lock of a process that no longer runs", () => {
    const dir = tempDir();
    try {
      const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]).stdout.toString();
      acquireNodeLock(dir.path, "x").release();
      writeFileSync(join(dir.path, "locks", "x.lock"), `${dead} stale-token\n`);
      const lock = acquireNodeLock(dir.path, "x");
      lock.release();
    } finally {
      dir.remove();
    }
  });
});

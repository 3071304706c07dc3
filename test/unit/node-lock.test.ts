/**
 * The node lock: one live process per node id, released by the operating system when the process
 * dies however it dies (roles/data-dir-lock.ts). The holders here are real processes, SIGKILLed;
 * one runs as PID 1 of its own PID namespace, as a node does in most containers.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { acquireNodeLock, DataDirLockedError, liveNodeLocks } from "../../src/roles/data-dir-lock.ts";
import { tempDir } from "../support/test-node.ts";

const LOCK_MODULE = resolve("src/roles/data-dir-lock.ts");

/** A process that takes the lock, prints "locked <pid>" and waits to be killed. */
function holder(dataDir: string, nodeId: string, wrap: string[] = []): Promise<{ child: ChildProcess; pid: number }> {
  const script = `import(${JSON.stringify(LOCK_MODULE)}).then((m) => { m.acquireNodeLock(${JSON.stringify(dataDir)}, ${JSON.stringify(nodeId)}); console.log("locked " + process.pid); setInterval(() => {}, 1000); });`;
  const argv = [...wrap, process.execPath, "--import", "tsx", "-e", script];
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((resolveHolder, reject) => {
    let out = "";
    let err = "";
    child.stdout!.on("data", (d) => {
      out += d;
      const m = /locked (\d+)/.exec(out);
      if (m) resolveHolder({ child, pid: Number(m[1]) });
    });
    child.stderr!.on("data", (d) => (err += d));
    child.on("exit", (code) => reject(new Error(`the lock holder exited (${code}) before locking: ${err}`)));
  });
}

function killed(child: ChildProcess): Promise<void> {
  return new Promise((r) => {
    if (child.exitCode !== null || child.signalCode !== null) return r();
    child.once("exit", () => r());
    child.kill("SIGKILL");
  });
}

describe("node lock: one live process per node id", () => {
  it("refuses a second holder of the same id in this process and allows other ids", () => {
    const dir = tempDir();
    try {
      const first = acquireNodeLock(dir.path, "de1-a");
      assert.throws(() => acquireNodeLock(dir.path, "de1-a"), (err: Error) => err instanceof DataDirLockedError && /\(pid \d+, this process\) is running as node "de1-a"/.test(err.message));
      const other = acquireNodeLock(dir.path, "de1-b");
      other.release();
      first.release();
      acquireNodeLock(dir.path, "de1-a").release();
    } finally {
      dir.remove();
    }
  });

  it("refuses while another process holds the id, naming its pid; free at once after SIGKILL", async () => {
    const dir = tempDir();
    try {
      const { child, pid } = await holder(dir.path, "x");
      try {
        assert.throws(() => acquireNodeLock(dir.path, "x"), (err: Error) => err instanceof DataDirLockedError && err.message.includes(`(pid ${pid}) is running as node "x"`));
        assert.deepEqual(liveNodeLocks(dir.path), [{ nodeId: "x", holder: `pid ${pid}` }]);
      } finally {
        await killed(child);
      }
      assert.deepEqual(liveNodeLocks(dir.path), []);
      acquireNodeLock(dir.path, "x").release();
    } finally {
      dir.remove();
    }
  });

  it("is not fooled by a stale owner file that names this very process (the PID 1 case)", () => {
    const dir = tempDir();
    try {
      acquireNodeLock(dir.path, "y").release();
      writeFileSync(join(dir.path, "locks", "y.owner"), `${process.pid} ${"somehost"}\n`);
      writeFileSync(join(dir.path, "locks", "y.lock"), `${process.pid} an-old-style-pid-file\n`);
      acquireNodeLock(dir.path, "y").release();
    } finally {
      dir.remove();
    }
  });

  const unshare = spawnSync("unshare", ["--pid", "--fork", "--mount-proc", "true"]).status === 0;
  it("lets a node that ran as PID 1 of a PID namespace restart as PID 1 after SIGKILL", { skip: !unshare && "unshare --pid is not permitted here" }, async () => {
    const dir = tempDir();
    try {
      for (let life = 1; life <= 3; life++) {
        const { child, pid } = await holder(dir.path, "container", ["unshare", "--pid", "--fork", "--kill-child", "--mount-proc"]);
        try {
          assert.equal(pid, 1, "the holder is PID 1 of its namespace");
          assert.equal(liveNodeLocks(dir.path).length, 1, `life ${life}: the lock is held`);
        } finally {
          // SIGKILL to unshare; --kill-child has the kernel SIGKILL the namespace's PID 1 with it.
          await killed(child);
        }
        const deadline = Date.now() + 10_000;
        while (liveNodeLocks(dir.path).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        assert.deepEqual(liveNodeLocks(dir.path), [], `life ${life}: released by the kernel when PID 1 died`);
      }
      assert.ok(existsSync(join(dir.path, "locks", "container.node-lock")), "the lock file stays (it is never deleted)");
    } finally {
      dir.remove();
    }
  });
});

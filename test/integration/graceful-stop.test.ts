/**
 * Stopping a node (`faxline serve`, SIGTERM) drains it (docs/operations.md "Stopping",
 * node.shutdownGrace): calls in progress end on their own and are recorded, not cut off and
 * redialled; meanwhile new API requests answer 503 and the readiness probe says the node is
 * draining; the calls' status pushes reach a real HTTP receiver before the node exits. A second
 * SIGTERM cuts the drain short:
 * the node exits at once and its calls are redialled after the restart. And a node whose
 * standard output has been closed (a `| head`) still exits.
 *
 * Each node is a child process with a slowed test line (a one-page call takes a few seconds),
 * read through the API and a read-only SQLite connection to its store.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { api, eventually, tempDir, TEXT_DOC } from "../support/test-node.ts";
import { PushReceiver } from "../support/push-receiver.ts";
import { createAccountWithCli, startChildNode, stopAllChildNodes, withChildLogs, type ChildNode } from "../support/child-node.ts";

const ACCOUNT = { custNr: "99999TE", login: "drain-tester", password: "secret-pass-1" };
/** A one-page call on the test line takes about 17 s at scale 1: about 3.4 s here. */
const TIME_SCALE = "0.2";

interface AttemptRow {
  recipient_id: string;
  result: string;
}

function attempts(dataDir: string): AttemptRow[] {
  const db = new BetterSqlite3(join(dataDir, "faxline.sqlite"), { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT recipient_id, result FROM attempts ORDER BY started_at").all() as AttemptRow[];
  } finally {
    db.close();
  }
}

/** Sends `count` one-recipient jobs; with `pushUrl`, each asks for its status push there. */
async function sendJobs(node: ChildNode, count: number, pushUrl?: string): Promise<string[]> {
  const client = api(node.url, ACCOUNT);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await client.post<{ jobId: string }>(`/${ACCOUNT.custNr}/fax`, {
      recipients: [{ number: `+49305550${String(i).padStart(4, "0")}` }],
      documents: [TEXT_DOC],
      ...(pushUrl !== undefined ? { statusReportOptions: { httpStatusPush: { targetUrl: pushUrl } } } : {}),
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    ids.push(res.body.jobId);
  }
  return ids;
}

async function callsInProgress(dataDir: string, count: number): Promise<void> {
  await eventually(async () => (attempts(dataDir).filter((a) => a.result === "in_progress").length === count ? true : undefined), 20_000, `${count} calls in progress`);
}

describe("stopping a node", () => {
  const dirs: Array<{ remove(): void }> = [];
  let node: ChildNode | undefined;
  after(async () => {
    await stopAllChildNodes();
    for (const dir of dirs) dir.remove();
  });

  /** A node on a data directory of its own with the test account, given 60 s to drain. */
  async function nodeWithGrace(env: Record<string, string> = {}): Promise<{ path: string }> {
    const dir = tempDir();
    dirs.push(dir);
    await createAccountWithCli(dir.path, ACCOUNT);
    node = await startChildNode({ dataDir: dir.path, timeScale: TIME_SCALE, env: { FAXLINE_NODE_SHUTDOWN_GRACE: "60s", FAXLINE_PUSH_ALLOW_TARGETS: "127.0.0.1", ...env } });
    return dir;
  }

  it("SIGTERM drains: calls in progress end on their own, their reports are pushed before the exit, new requests get 503, the probe says draining", async () => {
    const dir = await nodeWithGrace({ FAXLINE_PUSH_CONCURRENCY: "1" });
    // A slow receiver (4 s an answer) and one push at a time (push.concurrency 1): when the last
    // call ends (within one call's length, 3.4 s, of the first), the first push is still being
    // answered, so the last can only go out if the stopping node keeps delivering after its calls.
    const receiver = new PushReceiver();
    receiver.on("/status", () => ({ status: 200, delayMs: 4_000 }));
    await receiver.start();
    await withChildLogs(() => [node], async () => {
      const jobIds = await sendJobs(node!, 3, receiver.url("/status"));
      await callsInProgress(dir.path, 3);

      node!.kill("SIGTERM");
      const ready = await eventually(async () => {
        const res = await fetch(`${node!.url}/health/ready`);
        return res.status === 503 ? res : undefined;
      }, 5_000, "the readiness probe to say the node is draining");
      assert.match(await ready.text(), /shutting down/);
      const refused = await api(node!.url, ACCOUNT).post<{ error: string }>(`/${ACCOUNT.custNr}/fax`, { recipients: [{ number: "+4930555099999" }], documents: [TEXT_DOC] });
      assert.equal(refused.status, 503);
      assert.equal(refused.body.error, "service_unavailable");
      // The calls are still running: the node has not exited.
      assert.equal(node!.running, true);

      const exit = await node!.waitForExit(45_000);
      assert.deepEqual(exit, { code: 0, signal: null });
      const rows = attempts(dir.path);
      assert.deepEqual(rows.map((a) => a.result), ["delivered", "delivered", "delivered"], "each call ran to its end once");
      // Each job's final report reached the receiver before the node exited (it is down now).
      const pushed = receiver.received("/status").map((r) => r.body);
      assert.equal(pushed.length, 3, `one push per job before the exit, got ${pushed.length}`);
      for (const jobId of jobIds) assert.equal(pushed.filter((body) => body.includes(jobId)).length, 1, `job ${jobId} pushed once`);

      // After a restart nothing is dialled again, and every report is final and OK.
      const restarted: ChildNode = await startChildNode({ dataDir: dir.path, timeScale: TIME_SCALE });
      node = restarted;
      for (const jobId of jobIds) {
        const report = await api(restarted.url, ACCOUNT).get<{ recipientStatus: Array<{ status: string }> }>(`/${ACCOUNT.custNr}/fax/reports/${jobId}`);
        assert.equal(report.status, 200);
        assert.deepEqual(report.body.recipientStatus.map((r) => r.status), ["OK"]);
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(attempts(dir.path).length, 3, "no call placed again");
      assert.equal(receiver.received("/status").length, 3, "no report pushed again after the restart");
      await restarted.stop();
    }).finally(() => receiver.stop());
  });

  it("a second SIGTERM cuts the drain short: the node exits at once and redials its calls after the restart", async () => {
    const dir = await nodeWithGrace();
    await withChildLogs(() => [node], async () => {
      const jobIds = await sendJobs(node!, 2);
      await callsInProgress(dir.path, 2);
      node!.kill("SIGTERM");
      await new Promise((resolve) => setTimeout(resolve, 200));
      const stoppedAt = Date.now();
      node!.kill("SIGTERM");
      const exit = await node!.waitForExit(10_000);
      assert.equal(exit.code, 1);
      assert.ok(Date.now() - stoppedAt < 2_500, "exited without waiting for the calls");
      assert.deepEqual(attempts(dir.path).map((a) => a.result), ["in_progress", "in_progress"], "the calls were cut off, not recorded");

      // The cut calls are abandoned at the restart and retried on retry.internal.
      node = await startChildNode({ dataDir: dir.path, timeScale: TIME_SCALE, env: { FAXLINE_RETRY_INTERNAL: "100ms" } });
      for (const jobId of jobIds) {
        await eventually(async () => {
          const report = await api(node!.url, ACCOUNT).get<{ recipientStatus?: Array<{ status: string }> }>(`/${ACCOUNT.custNr}/fax/reports/${jobId}`);
          return report.status === 200 && report.body.recipientStatus?.[0]?.status === "OK" ? true : undefined;
        }, 30_000, `job ${jobId} delivered after the restart`);
      }
      const rows = attempts(dir.path);
      assert.equal(rows.filter((a) => a.result === "delivered").length, 2);
      await node.stop();
    });
  });

  it("a node whose standard output was closed still exits on SIGTERM", async () => {
    const dir = tempDir();
    dirs.push(dir);
    node = await startChildNode({ dataDir: dir.path, logLevel: "info" });
    node.closeStdout();
    node.kill("SIGTERM");
    const exit = await node.waitForExit(10_000);
    assert.deepEqual(exit, { code: 0, signal: null });
  });
});

/**
 * Crash loop as PID 1 (issue 13): a node that runs as PID 1 of its own PID namespace, as in most
 * containers, is SIGKILLed at random moments under a steady load and started again at once, four
 * lives in a row. Each restart must succeed at once (a PID-file lock refused it: "pid 1, this
 * process"), and in the end every job that got a 201 is final, each recipient delivered by
 * exactly one attempt, none left running.
 *
 * The kill moments come from a seeded generator, so a run repeats. SQLite store (the lock and
 * restart are the point; claims across nodes are tested in both dialects elsewhere).
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { api, eventually, tempDir, TEXT_DOC, waitForFinalReport } from "../support/test-node.ts";
import { createAccountWithCli, startChildNode, stopAllChildNodes, withChildLogs, type ChildNode } from "../support/child-node.ts";

const ACCOUNT = { custNr: "99999TE", login: "pid1-tester", password: "pid1-pass-1" };
const LIVES = 4;
const unshareWorks = spawnSync("unshare", ["--pid", "--fork", "--mount-proc", "true"]).status === 0;

/** A small seeded generator (mulberry32), so that the kill moments repeat from run to run. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("crash loop: a node as PID 1 in its own PID namespace, SIGKILLed and restarted", { skip: !unshareWorks && "unshare --pid is not permitted here" }, () => {
  const dir = tempDir("faxline-pid1-");
  const lives: ChildNode[] = [];
  after(async () => {
    await stopAllChildNodes();
    dir.remove();
  });

  it(`restarts at once after each of ${LIVES} SIGKILLs and finishes every acknowledged job exactly once`, { timeout: 240_000 }, async () => {
    await withChildLogs(
      () => lives,
      async () => {
        await createAccountWithCli(dir.path, ACCOUNT);
        const random = seeded(1125);
        const accepted = new Map<string, string>();
        let current = null as ChildNode | null;
        let loading = true;
        let n = 0;
        const load = (async () => {
          while (loading) {
            const node = current;
            if (node?.running) {
              n++;
              const number = n % 9 === 0 ? "+4900000008" : `+4930777${String(n).padStart(5, "0")}`;
              try {
                const res = await api(node.url, ACCOUNT).post(`/${ACCOUNT.custNr}/fax`, { recipients: [{ number }], documents: [TEXT_DOC] });
                if (res.status === 201) accepted.set(res.body.jobId as string, number);
              } catch {
                /* the node died under the request: not acknowledged */
              }
            }
            await new Promise((r) => setTimeout(r, 25));
          }
        })();

        for (let life = 1; life <= LIVES; life++) {
          const node = await startChildNode({
            name: `pid1-life-${life}`,
            dataDir: dir.path,
            pidNamespace: true,
            timeScale: "0.05",
            logLevel: "info",
            env: { FAXLINE_SENDER_CHANNELS: "8", FAXLINE_RETRY_BUSY: "100ms,100ms", FAXLINE_RETRY_INTERNAL: "100ms,100ms,100ms,100ms,100ms", FAXLINE_SCHEDULER_SEND_LEASE: "30s" },
          });
          lives.push(node);
          const started = await eventually(async () => node.logLines().find((l) => l.msg === "node started"), 10_000, "the node's start line");
          assert.equal(started.pid, 1, `life ${life} runs as PID 1 of its namespace`);
          current = node;
          if (life === LIVES) break;
          // Kill at a random moment 1.5 to 4 s into this life, while calls run.
          await new Promise((r) => setTimeout(r, 1_500 + random() * 2_500));
          node.kill("SIGKILL");
          await node.waitForExit();
        }
        loading = false;
        await load;
        assert.ok(accepted.size >= 40, `${accepted.size} jobs acknowledged`);
        const last = current!;
        for (const [jobId, number] of accepted) {
          const report = await waitForFinalReport(api(last.url, ACCOUNT), ACCOUNT.custNr, jobId, 60_000);
          assert.equal(report.recipientStatus[0].status, "OK", `${jobId} to ${number}`);
        }
        const db = new BetterSqlite3(join(dir.path, "faxline.sqlite"), { readonly: true, fileMustExist: true });
        try {
          const delivered = db.prepare("SELECT recipient_id, COUNT(*) AS n FROM attempts WHERE result = 'delivered' GROUP BY recipient_id").all() as { recipient_id: string; n: number }[];
          assert.deepEqual([...new Set(delivered.map((d) => d.n))], [1], "no recipient delivered twice");
          const recipients = db.prepare("SELECT COUNT(*) AS n FROM recipients WHERE job_id IN (SELECT value FROM json_each(?))").get(JSON.stringify([...accepted.keys()])) as { n: number };
          assert.equal(recipients.n, accepted.size, "every acknowledged job is in the store");
          // A job the node stored but never acknowledged (killed before its 201) is not among the
          // awaited reports and may still be in its call: every attempt must end, not at this instant.
          const runningNow = () => (db.prepare("SELECT COUNT(*) AS n FROM attempts WHERE result = 'in_progress'").get() as { n: number }).n;
          const deadline = Date.now() + 60_000;
          while (runningNow() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
          assert.equal(runningNow(), 0, "no attempt left running");
          const abandoned = db.prepare("SELECT COUNT(*) AS n FROM attempts WHERE result = 'abandoned'").get() as { n: number };
          assert.ok(abandoned.n >= 1, "the kills cut calls, which were retried");
        } finally {
          db.close();
        }
      },
    );
  });
});

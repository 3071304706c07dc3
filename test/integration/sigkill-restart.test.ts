/**
 * Acceptance test: a node killed with SIGKILL in the middle of its work loses nothing and sends
 * nothing twice once it is restarted on the same data directory.
 *
 * One `faxline serve` child process runs with a slowed test line (a one-page call takes about
 * 0.7 s) and 20 channels. A few hundred jobs go in, a mix of delivering numbers and test
 * numbers whose outcome is documented (+4900000007 no answer then OK, +4900000008 busy twice
 * then OK, +4900000001 busy for good). Once the node has accepted all of them and some, but
 * not all, recipients are final while calls are running, the node is SIGKILLed and started
 * again on the same store; during that second life more jobs arrive and it is SIGKILLed once
 * more (with a job submission in flight), then started a third time and left to finish.
 *
 * The send lease is 30 s on purpose: a restarted node that waited for its old leases to expire
 * would leave the killed calls hanging for 20 s or more, which the timing checks catch; a node
 * that releases them at start (what start-node.ts promises) abandons them within a second or two.
 *
 * The store is read with a separate read-only SQLite connection, never written by the test.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { api, eventually, tempDir, TEXT_DOC } from "../support/test-node.ts";
import { createAccountWithCli, runFaxlineCli, startChildNode, stopAllChildNodes, withChildLogs, type ChildNode } from "../support/child-node.ts";

const ACCOUNT = { custNr: "99999TE", login: "crash-tester", password: "secret-pass-1" };
const JOBS_BEFORE_KILL = 300;
const JOBS_DURING_RESTART = 30;
const SEND_LEASE_MS = 30_000;
/** A restarted node must have abandoned its old calls well before their leases could expire. */
const RELEASE_DEADLINE_MS = 12_000;

const NODE_ENV: Record<string, string> = {
  FAXLINE_SENDER_CHANNELS: "20",
  FAXLINE_SENDER_CALLS_PER_NUMBER: "20",
  FAXLINE_SCHEDULER_SEND_LEASE: `${SEND_LEASE_MS / 1000}s`,
  FAXLINE_SCHEDULER_RENDER_LEASE: "30s",
  FAXLINE_RETRY_BUSY: "100ms,100ms",
  FAXLINE_RETRY_NO_ANSWER: "100ms,100ms",
  FAXLINE_RETRY_NO_FAX: "100ms",
  FAXLINE_RETRY_PROTOCOL: "100ms,100ms",
  // sender_lost (a killed call) retries on the internal schedule; two kills need two entries.
  FAXLINE_RETRY_INTERNAL: "100ms,100ms,100ms,100ms",
};

/** The final report status each number must reach (docs/test-numbers.md; others deliver). */
const TEST_NUMBER_OUTCOME: Record<string, "OK" | "BUSY"> = {
  "+4900000007": "OK",
  "+4900000008": "OK",
  "+4900000001": "BUSY",
};

/** Recipients of job `i`: mostly delivering numbers, every tenth-ish a test number. */
function recipientsOf(i: number): string[] {
  const kind = i % 10;
  const first =
    kind === 6 ? "+4900000007" : kind === 7 || kind === 8 ? "+4900000008" : kind === 9 ? "+4900000001" : `+4930555${String(i).padStart(5, "0")}`;
  // Every seventh job has a second, delivering recipient: the job completes only when both end.
  return i % 7 === 0 ? [first, `+4940555${String(i).padStart(5, "0")}`] : [first];
}

const expectedStatus = (e164: string): "OK" | "BUSY" => TEST_NUMBER_OUTCOME[e164] ?? "OK";

interface AttemptRow {
  id: string;
  recipient_id: string;
  attempt_no: number;
  node: string;
  result: string;
  reason_code: string | null;
  started_at: number;
  ended_at: number | null;
}

interface RecipientRow {
  id: string;
  job_id: string;
  number: string;
  current_e164: string;
  state: string;
  status: string | null;
  attempt_count: number;
}

/** Runs `fn` on a fresh read-only connection to the node's store. */
function readStore<T>(dataDir: string, fn: (db: BetterSqlite3.Database) => T): T {
  const db = new BetterSqlite3(join(dataDir, "faxline.sqlite"), { readonly: true, fileMustExist: true });
  try {
    db.pragma("busy_timeout = 5000");
    return fn(db);
  } finally {
    db.close();
  }
}

interface Progress {
  jobs: number;
  recipients: number;
  finalRecipients: number;
  inProgress: number;
  jobStates: Record<string, number>;
}

function progress(dataDir: string): Progress {
  return readStore(dataDir, (db) => {
    const jobStates: Record<string, number> = {};
    for (const row of db.prepare("SELECT state, COUNT(*) AS n FROM jobs GROUP BY state").all() as { state: string; n: number }[]) {
      jobStates[row.state] = row.n;
    }
    const r = db
      .prepare("SELECT COUNT(*) AS total, SUM(CASE WHEN state IN ('succeeded','failed') THEN 1 ELSE 0 END) AS final FROM recipients")
      .get() as { total: number; final: number | null };
    const a = db.prepare("SELECT COUNT(*) AS n FROM attempts WHERE result = 'in_progress'").get() as { n: number };
    return {
      jobs: Object.values(jobStates).reduce((s, n) => s + n, 0),
      recipients: r.total,
      finalRecipients: r.final ?? 0,
      inProgress: a.n,
      jobStates,
    };
  });
}

/** Runs `task(i)` for i in [0, count) with at most `parallel` at a time. */
async function pool(count: number, parallel: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

describe("SIGKILL and restart: no job lost, no attempt duplicated, old leases released at once", () => {
  const dir = tempDir("faxline-sigkill-");
  const lives: ChildNode[] = [];
  const logs = () => lives;
  /** jobId → its recipients' numbers, for every job that was answered 201. */
  const accepted = new Map<string, string[]>();
  let jobCounter = 0;

  const start = async (): Promise<{ node: ChildNode; client: ReturnType<typeof api>; startedAt: number }> => {
    const startedAt = Date.now();
    const node = await startChildNode({ name: `life ${lives.length + 1}`, dataDir: dir.path, timeScale: "0.02", pollInterval: "50ms", env: NODE_ENV });
    lives.push(node);
    return { node, client: api(node.url, ACCOUNT), startedAt };
  };

  const sendJob = async (client: ReturnType<typeof api>): Promise<void> => {
    const i = jobCounter++;
    const numbers = recipientsOf(i);
    const res = await client.post(`/${ACCOUNT.custNr}/fax`, {
      recipients: numbers.map((number) => ({ number })),
      documents: [TEXT_DOC],
      reference: { customerDefinedId: `load-${i}` },
    });
    assert.equal(res.status, 201, `job ${i}: ${JSON.stringify(res.body)}`);
    accepted.set(res.body.jobId, numbers);
  };

  /** What the store says about the calls that were running when the node died. */
  const snapshotAfterKill = () => ({
    ...readStore(dir.path, (db) => ({
      inFlight: db.prepare("SELECT * FROM attempts WHERE result = 'in_progress'").all() as AttemptRow[],
      sending: (db.prepare("SELECT COUNT(*) AS n FROM recipients WHERE state = 'sending'").get() as { n: number }).n,
      rendering: (db.prepare("SELECT COUNT(*) AS n FROM jobs WHERE state = 'rendering'").get() as { n: number }).n,
    })),
    ...progress(dir.path),
  });

  /** The structured log line of a restarted node that released its previous life's leases. */
  const releaseLog = (node: ChildNode) => node.logLines().find((l) => l.msg === "released leases held by this node before its restart");

  let kill1: ReturnType<typeof snapshotAfterKill>;
  let kill2: ReturnType<typeof snapshotAfterKill>;
  let restart1At = 0;
  let restart2At = 0;
  let finishedAt = 0;
  let trickleFailures = 0;

  before(async () => {
    await createAccountWithCli(dir.path, ACCOUNT);
  });

  after(async () => {
    await stopAllChildNodes();
    dir.remove();
  });

  it("life 1: accepts the load and is SIGKILLed while calls are in flight", async () => {
    await withChildLogs(logs, async () => {
      const { node, client } = await start();
      await pool(JOBS_BEFORE_KILL, 8, () => sendJob(client));
      assert.equal(accepted.size, JOBS_BEFORE_KILL);
      const recipientsTotal = [...accepted.values()].reduce((s, n) => s + n.length, 0);
      // Kill once some recipients are final, some calls are running, and work remains.
      await eventually(
        async () => {
          const p = progress(dir.path);
          return p.jobs === JOBS_BEFORE_KILL && p.finalRecipients >= 20 && p.inProgress >= 5 && p.finalRecipients < recipientsTotal ? p : undefined;
        },
        30_000,
        "calls in flight with some recipients final",
      );
      node.kill("SIGKILL");
      const exit = await node.waitForExit();
      assert.equal(exit.signal, "SIGKILL");
      kill1 = snapshotAfterKill();
      assert.ok(kill1.inFlight.length >= 1, "calls were running at the kill");
      assert.equal(kill1.sending, kill1.inFlight.length, "one running attempt per recipient in 'sending'");
      assert.ok(kill1.finalRecipients < kill1.recipients, "work was left at the kill");
    });
  });

  it("life 2: releases the old leases at start, takes more jobs, and is SIGKILLed again with a submission in flight", async () => {
    await withChildLogs(logs, async () => {
      const { node, client, startedAt } = await start();
      restart1At = startedAt;
      const released = releaseLog(node);
      assert.ok(released, "the restarted node logs the leases it released");
      assert.equal(released.recipients, kill1.sending, "it released exactly the recipients that were sending at the kill");
      assert.equal(released.jobs, kill1.rendering, "and exactly the jobs that were rendering");

      await pool(JOBS_DURING_RESTART, 4, () => sendJob(client));
      const holder1 = new Set(kill1.inFlight.map((a) => a.node));
      // Wait until this life has calls of its own running, then kill it while a job is being submitted.
      await eventually(
        async () =>
          readStore(dir.path, (db) => {
            const mine = (db.prepare("SELECT node FROM attempts WHERE result = 'in_progress'").all() as { node: string }[]).filter((a) => !holder1.has(a.node));
            return mine.length >= 5 ? true : undefined;
          }),
        30_000,
        "calls of the second life in flight",
      );
      let stop = false;
      let submitted = 0;
      const trickle = (async () => {
        while (!stop) {
          try {
            await sendJob(client);
            submitted++;
          } catch {
            trickleFailures++;
            return;
          }
        }
      })();
      // Kill as soon as the trickle is under way and, at that very moment, calls of this life
      // run (a call lasts about 300 ms here; a fixed sleep could outlast the last of them).
      await eventually(
        async () =>
          submitted >= 1
            ? readStore(dir.path, (db) => {
                const mine = (db.prepare("SELECT node FROM attempts WHERE result = 'in_progress'").all() as { node: string }[]).filter((a) => !holder1.has(a.node));
                return mine.length >= 1 ? true : undefined;
              })
            : undefined,
        30_000,
        "a submitted job and calls in flight",
      );
      node.kill("SIGKILL");
      stop = true;
      await trickle;
      assert.equal((await node.waitForExit()).signal, "SIGKILL");
      kill2 = snapshotAfterKill();
      assert.ok(kill2.inFlight.length >= 1, "calls were running at the second kill");
      assert.ok(kill2.inFlight.every((a) => !holder1.has(a.node)), "no call of the first life was still running");
    });
  });

  it("life 3: releases the second life's leases and finishes every job", async () => {
    await withChildLogs(logs, async () => {
      const { node, startedAt } = await start();
      restart2At = startedAt;
      const released = releaseLog(node);
      assert.ok(released, "the restarted node logs the leases it released");
      assert.equal(released.recipients, kill2.sending);
      assert.equal(released.jobs, kill2.rendering);
      await eventually(
        async () => {
          const p = progress(dir.path);
          return p.finalRecipients === p.recipients && p.jobStates.completed === p.jobs ? p : undefined;
        },
        60_000,
        "every job to complete",
      );
      finishedAt = Date.now();
      assert.ok(node.running, "the node is still up");
    });
  });

  it("reports every accepted job, each recipient with its number's documented final status", async () => {
    const node = lives.at(-1)!;
    await withChildLogs(logs, async () => {
      const client = api(node.url, ACCOUNT);
      const ids = [...accepted.keys()];
      assert.ok(ids.length >= JOBS_BEFORE_KILL + JOBS_DURING_RESTART);
      const bulk = await client.post(`/${ACCOUNT.custNr}/fax/reports`, { action: "GET", jobIds: ids });
      assert.equal(bulk.status, 200);
      const reports = new Map<string, any>(bulk.body.reports.map((r: any) => [r.jobId, r]));
      const lost = ids.filter((id) => !reports.has(id));
      assert.deepEqual(lost, [], `accepted jobs missing from the reports`);
      const wrong: string[] = [];
      for (const [jobId, numbers] of accepted) {
        const statuses = reports.get(jobId).recipientStatus.map((r: any) => `${r.number}=${r.status}`);
        const expected = numbers.map((n) => `${n}=${expectedStatus(n)}`);
        if (JSON.stringify(statuses) !== JSON.stringify(expected)) wrong.push(`${jobId}: ${statuses.join(",")} (expected ${expected.join(",")})`);
      }
      assert.deepEqual(wrong, []);
      // The list holds every completed job of the store: the accepted ones, plus at most the
      // one whose 201 was cut off by the second kill.
      const list = await client.get(`/${ACCOUNT.custNr}/fax/reports`);
      const listed = new Set<string>(list.body.reports.map((r: any) => r.jobId));
      assert.ok(ids.every((id) => listed.has(id)));
      assert.ok(listed.size - ids.length <= trickleFailures, `${listed.size - ids.length} unexpected jobs listed`);
    });
  });

  it("stores every recipient final with the documented status, and no unanswered job", () => {
    readStore(dir.path, (db) => {
      const recipients = db.prepare("SELECT id, job_id, number, current_e164, state, status, attempt_count FROM recipients").all() as RecipientRow[];
      const wrong = recipients.filter((r) => r.status !== expectedStatus(r.current_e164) || !["succeeded", "failed"].includes(r.state));
      assert.deepEqual(wrong, []);
      const open = db.prepare("SELECT id, state FROM jobs WHERE state != 'completed' OR completed_at IS NULL").all();
      assert.deepEqual(open, []);
    });
  });

  it("keeps the attempts consistent: no attempt twice, none left running, no fax sent twice", () => {
    readStore(dir.path, (db) => {
      const dupes = db.prepare("SELECT recipient_id, attempt_no, COUNT(*) AS n FROM attempts GROUP BY recipient_id, attempt_no HAVING n > 1").all();
      assert.deepEqual(dupes, []);
      const running = db.prepare("SELECT * FROM attempts WHERE result = 'in_progress'").all();
      assert.deepEqual(running, []);

      const attempts = db.prepare("SELECT * FROM attempts ORDER BY recipient_id, attempt_no").all() as AttemptRow[];
      const recipients = db.prepare("SELECT id, current_e164, status, attempt_count FROM recipients").all() as RecipientRow[];
      const byRecipient = new Map<string, AttemptRow[]>();
      for (const a of attempts) byRecipient.set(a.recipient_id, [...(byRecipient.get(a.recipient_id) ?? []), a]);
      const problems: string[] = [];
      for (const r of recipients) {
        const list = byRecipient.get(r.id) ?? [];
        const numbersSeen = list.map((a) => a.attempt_no).join(",");
        const contiguous = Array.from({ length: r.attempt_count }, (_, k) => k + 1).join(",");
        if (numbersSeen !== contiguous) problems.push(`${r.id}: attempt numbers ${numbersSeen}, attempt_count ${r.attempt_count}`);
        const delivered = list.filter((a) => a.result === "delivered").length;
        const last = list.at(-1);
        if (r.status === "OK" && (delivered !== 1 || last?.result !== "delivered")) problems.push(`${r.id} (${r.current_e164}): ${delivered} delivered attempts, last ${last?.result}`);
        if (r.status === "BUSY") {
          const busy = list.filter((a) => a.result === "failed" && a.reason_code === "line_busy").length;
          // retry.busy has two entries: the first busy try plus two retries.
          if (delivered !== 0 || busy !== 3) problems.push(`${r.id} (${r.current_e164}): BUSY after ${busy} busy attempts, ${delivered} delivered`);
        }
        if (list.some((a) => a.ended_at === null)) problems.push(`${r.id}: an attempt without end`);
      }
      assert.deepEqual(problems, []);
    });
  });

  it("abandons exactly the calls that were in flight at each kill, right after the restart, and retries them", () => {
    readStore(dir.path, (db) => {
      const byId = db.prepare("SELECT * FROM attempts WHERE id = ?");
      const later = db.prepare("SELECT COUNT(*) AS n FROM attempts WHERE recipient_id = ? AND attempt_no > ?");
      for (const [kill, restartAt] of [
        [kill1, restart1At],
        [kill2, restart2At],
      ] as const) {
        assert.ok(kill.inFlight.length >= 1);
        for (const before of kill.inFlight) {
          const a = byId.get(before.id) as AttemptRow;
          assert.equal(a.result, "abandoned", `attempt ${a.id}`);
          assert.equal(a.reason_code, "sender_lost");
          assert.ok(a.ended_at !== null && a.ended_at >= restartAt, `abandoned by the restarted node, not before`);
          assert.ok(
            a.ended_at - restartAt < RELEASE_DEADLINE_MS,
            `abandoned ${a.ended_at - restartAt} ms after the restart; the ${SEND_LEASE_MS} ms lease was waited for`,
          );
          assert.ok((later.get(a.recipient_id, a.attempt_no) as { n: number }).n >= 1, `recipient ${a.recipient_id} was retried`);
        }
      }
      // Nothing else was abandoned: only killed calls are lost calls.
      const abandoned = (db.prepare("SELECT COUNT(*) AS n FROM attempts WHERE result = 'abandoned'").get() as { n: number }).n;
      assert.equal(abandoned, kill1.inFlight.length + kill2.inFlight.length);
    });
  });

  it("finishes the work of the last life in reasonable time", (t) => {
    const afterRestart = finishedAt - restart2At;
    t.diagnostic(
      `kill 1: ${kill1.inFlight.length} calls in flight, ${kill1.finalRecipients}/${kill1.recipients} recipients final, jobs ${JSON.stringify(kill1.jobStates)}; ` +
        `kill 2: ${kill2.inFlight.length} in flight, ${kill2.finalRecipients}/${kill2.recipients} final, jobs ${JSON.stringify(kill2.jobStates)}; ` +
        `accepted ${accepted.size} jobs; last life finished ${afterRestart} ms after its start`,
    );
    assert.ok(finishedAt > 0 && afterRestart < 45_000, `the last life took ${afterRestart} ms`);
  });
});

/**
 * A second `faxline serve` started by mistake on the data directory of a running node (same
 * node id, kept in the directory) must not touch the running node's work: were it to release
 * "its previous life's" leases, the running node's sweep would abandon its live calls and
 * schedule them again, and those faxes would be sent twice. The node lock refuses the second node
 * before it opens the store.
 */
describe("a second serve on the data directory of a running node", () => {
  const dir = tempDir("faxline-second-");
  after(async () => {
    await stopAllChildNodes();
    dir.remove();
  });

  it(
    "is refused by the data-directory lock and does not abandon the running node's calls",
    async () => {
      await createAccountWithCli(dir.path, ACCOUNT);
      const first = await startChildNode({
        name: "running",
        dataDir: dir.path,
        timeScale: "0.2",
        pollInterval: "50ms",
        env: { FAXLINE_SENDER_CHANNELS: "3", FAXLINE_SENDER_CALLS_PER_NUMBER: "3" },
      });
      await withChildLogs(
        () => [first],
        async () => {
          const client = api(first.url, ACCOUNT);
          for (let i = 0; i < 3; i++) {
            const res = await client.post(`/${ACCOUNT.custNr}/fax`, { recipients: [{ number: `+4930777000${i}` }], documents: [TEXT_DOC] });
            assert.equal(res.status, 201);
          }
          await eventually(async () => (progress(dir.path).inProgress === 3 ? true : undefined), 15_000, "three calls running");
          const second = await runFaxlineCli(
            ["serve"],
            { FAXLINE_DATA_DIR: dir.path, FAXLINE_HOST: "127.0.0.1", FAXLINE_PORT: String(first.port), FAXLINE_LOG_LEVEL: "warn" },
            20_000,
          );
          assert.equal(second.code, 1, "the second serve is refused");
          assert.match(second.stderr, /Another Faxline node \(pid \d+\) is running as node "[^"]+" on the data directory/);
          assert.ok(first.running);
          await new Promise((r) => setTimeout(r, 300));
          const abandoned = readStore(dir.path, (db) => db.prepare("SELECT id, reason_code FROM attempts WHERE result = 'abandoned'").all());
          assert.deepEqual(abandoned, [], "the running node's calls were abandoned");
          await eventually(async () => (progress(dir.path).jobStates.completed === 3 ? true : undefined), 30_000, "the three jobs to complete");
          const attempts = readStore(dir.path, (db) => db.prepare("SELECT COUNT(*) AS n FROM attempts").get() as { n: number });
          assert.equal(attempts.n, 3, "each recipient was dialled once");
        },
      );
    },
  );
});

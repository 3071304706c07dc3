/**
 * Validity and the hard deadline: how recipients end when jobValid.end passes.
 *
 * What the engine does (and these tests pin down):
 *  - a failed attempt whose next try would start at or after the end is final at once with
 *    `validity_ends`: the status and reason keep the real cause ("BUSY … (1 attempt; the
 *    job's validity ends before the next retry)"), which tells the client more than EXPIRED;
 *  - a recipient that is still waiting to be dialled when the end passes is ended by the sweep
 *    with job_expired (EXPIRED); a call already running is allowed to finish;
 *  - at end + jobs.deadlineGrace every open recipient, even one whose call never returns, is
 *    ended with deadline_exceeded (EXPIRED) and the job completes.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { failureReason } from "../../src/errors/failure-reasons.ts";
import { api, createTestLogin, eventually, startTestNode, TEXT_DOC, waitForFinalReport } from "../support/test-node.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";

const EIGHT_PAGE_DOC = {
  name: "letter.txt",
  data: Buffer.from(Array.from({ length: 400 }, (_, i) => `Line ${i + 1} of the engine test letter.`).join("\n")).toString("base64"),
};
const endsIn = (ms: number) => new Date(Date.now() + ms).toISOString();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function setup(overrides: Record<string, unknown>) {
  const node = await startTestNode(overrides);
  const creds = await createTestLogin(node);
  const client = api(node.url, creds);
  const db = node.node.context.store.db;
  // Warm the login cache: the first request verifies the password (scrypt), which is slow.
  assert.equal((await client.get(`/${creds.custNr}/fax/reports`)).status, 200);
  // Warm the renderer: a node's first render starts its render worker thread, which takes longer
  // than the shortest validity windows below leave.
  const warmUp = await client.post(`/${creds.custNr}/fax`, { recipients: [{ number: "+4989000000799" }], documents: [TEXT_DOC] });
  assert.equal(warmUp.status, 201, JSON.stringify(warmUp.body));
  await eventually(
    async () => {
      const job = await db.selectFrom("jobs").select("state").where("id", "=", warmUp.body.jobId).executeTakeFirstOrThrow();
      return job.state === "pending" || job.state === "rendering" ? undefined : true;
    },
    10_000,
    "the warm-up job to be rendered",
  );
  const send = async (body: Record<string, unknown>): Promise<string> => {
    const res = await client.post(`/${creds.custNr}/fax`, { documents: [TEXT_DOC], ...body });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.jobId as string;
  };
  const recipients = (jobId: string) => db.selectFrom("recipients").selectAll().where("job_id", "=", jobId).orderBy("ordinal").execute();
  const attempts = (jobId: string) => db.selectFrom("attempts").selectAll().where("job_id", "=", jobId).orderBy("attempt_no").execute();
  const job = (jobId: string) => db.selectFrom("jobs").selectAll().where("id", "=", jobId).executeTakeFirstOrThrow();
  const final = (jobId: string) => waitForFinalReport(client, creds.custNr, jobId, 10_000);
  return { node, db, send, recipients, attempts, job, final };
}

for (const dialect of DIALECTS) describe(`${dialect}: engine: validity end with a sender running`, () => {
  const store = withDialect(dialect);
  let t: Awaited<ReturnType<typeof setup>>;
  before(async () => {
    // 0.03: a busy call takes 120 ms, a ring-out 1.74 s, an eight-page delivery about 4 s.
    t = await setup({ ...store.overrides(), "testLine.timeScale": "0.03", "retry.busy": "10s", "retry.noAnswer": "10s" });
  });
  after(async () => {
    await t.node.stop();
  });

  it("a retry that would start after the end is not scheduled: the real cause is final (BUSY, validity_ends)", async () => {
    const jobId = await t.send({ recipients: [{ number: "+4900000001" }], meta: { jobValid: { end: endsIn(1_500) } } });
    const report = await t.final(jobId);
    const status = report.recipientStatus[0];
    assert.equal(status.status, "BUSY");
    assert.equal(status.reason, "Destination number busy (1 attempt; the job's validity ends before the next retry)");
    assert.equal(status.sentToNumber, "004900000001");
    const [recipient] = await t.recipients(jobId);
    const job = await t.job(jobId);
    assert.equal(recipient!.reason_code, "line_busy");
    assert.equal((await t.attempts(jobId)).length, 1);
    assert.equal(job.state, "completed");
    assert.ok(recipient!.finished_at! < job.valid_until, "decided at once, without waiting for the end");
  });

  it("an immediate retry on an alternative after the end is not scheduled either (RING_TO, validity_ends)", async () => {
    // The ring-out ends about 1.8 s after the start, 1.1 s after the end: the alternative cannot be claimed any more.
    const jobId = await t.send({
      recipients: [{ number: "+4900000005", alternativeNumbers: ["+4989000000001"] }],
      meta: { jobValid: { end: endsIn(700) } },
    });
    const report = await t.final(jobId);
    const status = report.recipientStatus[0];
    assert.equal(status.status, "RING_TO", "the real cause, not EXPIRED from the sweep");
    assert.equal(status.reason, `${failureReason("no_answer").description} (1 attempt; the job's validity ends before the next retry)`);
    const attempts = await t.attempts(jobId);
    assert.deepEqual(
      attempts.map((a) => [a.e164, a.result]),
      [["+4900000005", "failed"]],
    );
    const [recipient] = await t.recipients(jobId);
    const job = await t.job(jobId);
    assert.ok(attempts[0]!.ended_at! >= job.valid_until, "the call ended after the end");
    assert.equal(recipient!.reason_code, "no_answer");
  });

  it("a recipient still queued at the end expires (job_expired), while the running call to the same number completes", async () => {
    // Two recipients of one number: callsPerNumber 1 makes the second wait behind the first call
    // (eight pages, about 4 s). The end leaves 2 s to render and dial the first (a loaded machine
    // needs more than a second), and passes while its call runs.
    const jobId = await t.send({
      recipients: [{ number: "+4989000000600" }, { number: "+4989000000600" }],
      documents: [EIGHT_PAGE_DOC],
      meta: { jobValid: { end: endsIn(2_000) } },
    });
    const report = await t.final(jobId);
    const job = await t.job(jobId);
    const statuses = report.recipientStatus.map((r: any) => r.status).sort();
    assert.deepEqual(statuses, ["EXPIRED", "OK"]);
    const expired = report.recipientStatus.find((r: any) => r.status === "EXPIRED");
    assert.equal(expired.reason, failureReason("job_expired").description);
    assert.equal(expired.sentTs, undefined, "never dialled");
    assert.equal(expired.sentToNumber, undefined);
    assert.equal(expired.durationInSecs, 0);

    const rows = await t.recipients(jobId);
    const expiredRow = rows.find((r) => r.status === "EXPIRED")!;
    const okRow = rows.find((r) => r.status === "OK")!;
    assert.equal(expiredRow.reason_code, "job_expired");
    assert.equal(expiredRow.attempt_count, 0);
    assert.ok(expiredRow.finished_at! >= job.valid_until);
    assert.ok(expiredRow.finished_at! < okRow.finished_at!, "expired while the other call was still running");
    assert.ok(okRow.finished_at! > job.valid_until, "the call that started in time was allowed to finish");
    const attempts = await t.attempts(jobId);
    assert.equal(attempts.length, 1);
    assert.equal(attempts[0]!.recipient_id, okRow.id);
    assert.equal(job.state, "completed");
  });
});

for (const dialect of DIALECTS) describe(`${dialect}: engine: validity end and hard deadline without a sender`, () => {
  const store = withDialect(dialect);
  let t: Awaited<ReturnType<typeof setup>>;
  const grace = 1_000;
  before(async () => {
    t = await setup({ ...store.overrides(), "node.roles": "api,scheduler", "jobs.deadlineGrace": `${grace}ms` });
  });
  after(async () => {
    await t.node.stop();
  });

  async function readyRecipient(jobId: string) {
    return eventually(
      async () => {
        const [r] = await t.recipients(jobId);
        return r?.state === "ready" ? r : undefined;
      },
      5_000,
      "the recipient to be ready",
    );
  }

  it("a recipient never dialled before the end is EXPIRED with job_expired", async () => {
    const jobId = await t.send({ recipients: [{ number: "+4989000000700" }], meta: { jobValid: { end: endsIn(300) } } });
    await readyRecipient(jobId);
    const report = await t.final(jobId);
    const status = report.recipientStatus[0];
    assert.equal(status.status, "EXPIRED");
    assert.equal(status.reason, failureReason("job_expired").description);
    assert.equal(status.sentTs, undefined);
    const job = await t.job(jobId);
    const [recipient] = await t.recipients(jobId);
    assert.equal(recipient!.reason_code, "job_expired");
    assert.ok(recipient!.finished_at! >= job.valid_until);
    assert.ok(recipient!.finished_at! < job.deadline_at, "the validity sweep, not the deadline, ended it");
    assert.equal(job.state, "completed");
    assert.equal(job.completed_at, recipient!.finished_at);
  });

  it("a recipient stuck in sending under a live lease is ended at the hard deadline, and the job completes", async () => {
    const jobId = await t.send({ recipients: [{ number: "+4989000000701" }], meta: { jobValid: { end: endsIn(400) } } });
    const ready = await readyRecipient(jobId);
    // A call whose node never reports back and keeps its lease for an hour.
    const now = Date.now();
    await t.db.transaction().execute(async (trx) => {
      await trx
        .updateTable("recipients")
        .set({ state: "sending", locked_by: "ghost-node:tok", lease_until: now + 3_600_000, attempt_count: 1 })
        .where("id", "=", ready.id)
        .where("state", "=", "ready")
        .execute();
      await trx
        .insertInto("attempts")
        .values({
          id: "att_ghost_deadline",
          recipient_id: ready.id,
          job_id: jobId,
          attempt_no: 1,
          e164: "+4989000000701",
          dial_string: "004989000000701",
          node: "ghost-node:tok",
          started_at: now,
          result: "in_progress",
          pages_sent: 0,
          duration_secs: 0,
        })
        .execute();
    });
    const job = await t.job(jobId);
    // Past the validity end (several sweeps later) but before the deadline: a running call is not expired.
    await sleep(Math.max(0, job.valid_until - Date.now()) + 150);
    assert.ok(Date.now() < job.deadline_at);
    const [during] = await t.recipients(jobId);
    assert.equal(during!.state, "sending", "the validity sweep leaves a running call alone");

    const report = await t.final(jobId);
    const status = report.recipientStatus[0];
    assert.equal(status.status, "EXPIRED");
    assert.equal(status.reason, failureReason("deadline_exceeded").description);
    const [recipient] = await t.recipients(jobId);
    assert.equal(recipient!.state, "failed");
    assert.equal(recipient!.reason_code, "deadline_exceeded");
    assert.equal(recipient!.locked_by, null);
    assert.ok(recipient!.finished_at! >= job.deadline_at);
    assert.equal(job.deadline_at, job.valid_until + grace);
    const [attempt] = await t.attempts(jobId);
    assert.equal(attempt!.result, "abandoned");
    assert.equal(attempt!.reason_code, "deadline_exceeded");
    assert.equal(attempt!.ended_at, recipient!.finished_at);
    const completed = await t.job(jobId);
    assert.equal(completed.state, "completed");
    assert.ok(completed.completed_at! >= job.deadline_at);
  });
});

for (const dialect of DIALECTS) describe(`${dialect}: engine: hard deadline during a real call`, () => {
  const store = withDialect(dialect);
  let t: Awaited<ReturnType<typeof setup>>;
  before(async () => {
    // A fax timeout takes 62 s x 0.03 = 1.86 s; the deadline falls 0.8 s after the start.
    t = await setup({ ...store.overrides(), "testLine.timeScale": "0.03", "scheduler.sendLease": "300ms", "jobs.deadlineGrace": "300ms" });
  });
  after(async () => {
    await t.node.stop();
  });

  it("ends the recipient at the deadline; the call's late outcome changes nothing", async () => {
    const jobId = await t.send({ recipients: [{ number: "+4900000004" }], meta: { jobValid: { end: endsIn(500) } } });
    const report = await t.final(jobId);
    assert.equal(report.recipientStatus[0].status, "EXPIRED");
    assert.equal(report.recipientStatus[0].reason, failureReason("deadline_exceeded").description);
    const [ended] = await t.recipients(jobId);
    const job = await t.job(jobId);
    assert.equal(job.state, "completed");
    assert.ok(ended!.finished_at! >= job.deadline_at);
    // Let the simulated call's full time pass: its outcome must not reopen or rewrite anything.
    await sleep(1_500);
    const [afterwards] = await t.recipients(jobId);
    assert.deepEqual(afterwards, ended);
    const attempts = await t.attempts(jobId);
    assert.deepEqual(
      attempts.map((a) => [a.attempt_no, a.result, a.reason_code]),
      [[1, "abandoned", "deadline_exceeded"]],
    );
    assert.equal((await t.job(jobId)).state, "completed");
  });
});

/**
 * Under a mixed load every job ends: ~100 jobs over all test numbers, with alternatives,
 * express jobs, document failures and short validities, on one node.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { TEST_NUMBERS } from "../../src/line/test-numbers.ts";
import { api, createTestLogin, eventually, startTestNode, TEXT_DOC, type TestNode } from "../support/test-node.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";

const JOBS = 100;
const CALLS_PER_NUMBER = 2;
const PDF_DOC = { name: "scan.pdf", data: Buffer.from("%PDF-1.4\n").toString("base64") };

interface Plan {
  body: Record<string, unknown>;
  /** Expected final status per recipient when it is fully determined by its number. */
  expected: (string | null)[];
}

function plan(i: number): Plan {
  const count = 1 + (i % 3);
  const recipients = Array.from({ length: count }, (_, k) => {
    const t = TEST_NUMBERS[(i * 5 + k * 7) % TEST_NUMBERS.length]!;
    return { number: t.number, status: t.status };
  });
  const withAlternative = i % 7 === 3;
  const pdf = i % 13 === 5;
  const shortValidity = i % 17 === 8;
  const body: Record<string, unknown> = {
    recipients: recipients.map((r, k) =>
      withAlternative && k === 0 ? { number: r.number, alternativeNumbers: ["+4900000020", "+4900000009"] } : { number: r.number },
    ),
    documents: pdf ? [TEXT_DOC, PDF_DOC] : [TEXT_DOC],
    transportOptions: { isExpress: i % 10 === 0 },
    reference: { customerDefinedId: `load-${i}` },
  };
  if (shortValidity) body.meta = { jobValid: { end: "PT1S" } };
  const expected = recipients.map((r, k) => {
    if (pdf) return "DOC_ERROR";
    if (shortValidity) return null; // depends on timing: the real cause or EXPIRED
    if (withAlternative && k === 0) return null; // depends on the primary's failure
    return r.status;
  });
  return { body, expected };
}

for (const dialect of DIALECTS) describe(`${dialect}: engine: mixed load`, () => {
  const store = withDialect(dialect);
  let node: TestNode;
  before(async () => {
    node = await startTestNode({ ...store.overrides(), "sender.channels": 20, "sender.callsPerNumber": CALLS_PER_NUMBER });
  });
  after(async () => {
    await node.stop();
  });

  it(`${JOBS} jobs over every test number all complete, with consistent attempts`, async () => {
    const creds = await createTestLogin(node);
    const client = api(node.url, creds);
    const db = node.node.context.store.db;
    const plans = Array.from({ length: JOBS }, (_, i) => plan(i));
    const jobIds: string[] = [];
    for (let i = 0; i < plans.length; i += 10) {
      const batch = await Promise.all(plans.slice(i, i + 10).map((p) => client.post(`/${creds.custNr}/fax`, p.body)));
      for (const res of batch) {
        assert.equal(res.status, 201, JSON.stringify(res.body));
        jobIds.push(res.body.jobId);
      }
    }
    const numbersUsed = new Set(plans.flatMap((p) => (p.body.recipients as { number: string }[]).map((r) => r.number)));
    assert.deepEqual([...numbersUsed].sort(), TEST_NUMBERS.map((t) => t.number).sort(), "the load covers every test number");

    await eventually(
      async () => {
        const open = await db.selectFrom("jobs").select("id").where("id", "in", jobIds).where("state", "!=", "completed").execute();
        return open.length === 0 ? true : undefined;
      },
      30_000,
      "every job to complete",
    );

    const jobs = await db.selectFrom("jobs").selectAll().where("id", "in", jobIds).execute();
    assert.equal(jobs.length, JOBS);
    const recipients = await db.selectFrom("recipients").selectAll().where("job_id", "in", jobIds).execute();
    const attempts = await db.selectFrom("attempts").selectAll().where("job_id", "in", jobIds).execute();

    // Every job and recipient is final.
    assert.ok(jobs.every((j) => j.state === "completed" && j.completed_at !== null && j.locked_by === null));
    const open = recipients.filter((r) => r.state !== "succeeded" && r.state !== "failed");
    assert.deepEqual(open, [], "no recipient is left open");
    for (const r of recipients) {
      assert.ok(r.status && r.status !== "PENDING", `${r.id}: status`);
      assert.ok(r.reason_text && r.reason_text.length > 0, `${r.id}: reason`);
      assert.equal(r.locked_by, null);
      assert.equal(r.state === "succeeded", r.status === "OK", `${r.id}: state ${r.state} vs status ${r.status}`);
    }
    const finishedBy = new Map<string, number>();
    for (const r of recipients) finishedBy.set(r.job_id, Math.max(finishedBy.get(r.job_id) ?? 0, r.finished_at!));
    for (const j of jobs) assert.equal(j.completed_at, finishedBy.get(j.id), `${j.id}: completed when its last recipient finished`);

    // Attempts: none left running, no duplicate numbers, 1..attempt_count per recipient.
    assert.deepEqual(attempts.filter((a) => a.result === "in_progress"), [], "no attempt is in progress");
    assert.ok(attempts.every((a) => a.ended_at !== null && a.ended_at >= a.started_at));
    const keys = attempts.map((a) => `${a.recipient_id}#${a.attempt_no}`);
    assert.equal(new Set(keys).size, keys.length, "no (recipient_id, attempt_no) duplicates");
    const byRecipient = new Map<string, number[]>();
    for (const a of attempts) byRecipient.set(a.recipient_id, [...(byRecipient.get(a.recipient_id) ?? []), a.attempt_no]);
    for (const r of recipients) {
      const nos = (byRecipient.get(r.id) ?? []).sort((a, b) => a - b);
      assert.deepEqual(nos, Array.from({ length: r.attempt_count }, (_, k) => k + 1), `${r.id}: attempt numbers`);
      assert.ok(r.attempt_count <= node.config.retry.maxAttempts);
    }
    const delivered = attempts.filter((a) => a.result === "delivered");
    assert.equal(delivered.length, recipients.filter((r) => r.state === "succeeded").length, "one delivered attempt per delivered recipient");

    // The per-destination limit held under load.
    const byNumber = new Map<string, [number, number][]>();
    for (const a of attempts) byNumber.set(a.e164, [...(byNumber.get(a.e164) ?? []), [a.started_at, a.ended_at!]]);
    for (const [e164, intervals] of byNumber) {
      const events = intervals.flatMap(([s, e]) => [
        [s, 1],
        [e, -1],
      ]);
      events.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
      let running = 0;
      let most = 0;
      for (const [, d] of events) most = Math.max(most, (running += d!));
      assert.ok(most <= CALLS_PER_NUMBER, `${e164}: ${most} calls at once`);
    }

    // Statuses follow the test number table wherever the outcome is determined by the number.
    const byJob = new Map(jobIds.map((id, i) => [id, plans[i]!]));
    let checked = 0;
    for (const r of recipients) {
      const expected = byJob.get(r.job_id)!.expected[r.ordinal];
      if (expected === undefined) assert.fail(`${r.id}: no plan`);
      if (expected === null) {
        assert.ok(r.status === "OK" || r.status === "EXPIRED" || TEST_NUMBERS.some((t) => t.status === r.status), `${r.id}: ${r.status}`);
        continue;
      }
      assert.equal(r.status, expected, `${r.number} in job ${r.job_id}`);
      checked++;
    }
    assert.ok(checked > 150, `${checked} recipients checked against the table`);
    const docErrors = recipients.filter((r) => r.status === "DOC_ERROR");
    assert.ok(docErrors.length > 0 && docErrors.every((r) => r.attempt_count === 0), "document failures are never dialled");
  });
});

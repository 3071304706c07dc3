/**
 * The engine end to end on the test line: every test number's documented final status, retry
 * sequences, alternative numbers and the do-not-fax list.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { failureReason } from "../../src/errors/failure-reasons.ts";
import { pageSeconds } from "../../src/line/test-line.ts";
import { TEST_NUMBERS, type TestNumber } from "../../src/line/test-numbers.ts";
import type { FaxlineConfig } from "../../src/config/schema.ts";
import { api, createTestLogin, startTestNode, TEXT_DOC, waitForFinalReport, type TestNode } from "../support/test-node.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";

const ISO_SECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const THREE_PAGE_TEXT = Array.from({ length: 150 }, (_, i) => `Line ${i + 1} of the engine test letter.`).join("\n");
const THREE_PAGE_DOC = { name: "letter.txt", data: Buffer.from(THREE_PAGE_TEXT).toString("base64") };

const dial = (e164: string) => `00${e164.slice(1)}`;

/** Attempts a recipient dialling only `t.number` makes under `config.retry`. */
function expectedAttempts(t: TestNumber, config: FaxlineConfig): number {
  if (t.number === "+4900000007") return 2;
  if (t.number === "+4900000008") return 3;
  if (t.reason === "delivered") return 1;
  const delays: Record<string, number[]> = {
    busy: config.retry.busy,
    no_answer: config.retry.noAnswer,
    no_fax: config.retry.noFax,
    protocol: config.retry.protocol,
    internal: config.retry.internal,
  };
  const retryClass = failureReason(t.reason).retryClass;
  return retryClass === "never" ? 1 : 1 + delays[retryClass]!.length;
}

for (const dialect of DIALECTS) describe(`${dialect}: engine: test numbers on an in-process node`, () => {
  const store = withDialect(dialect);
  let node: TestNode;
  let client: ReturnType<typeof api>;
  let custNr: string;
  const db = () => node.node.context.store.db;

  async function send(body: Record<string, unknown>): Promise<string> {
    const res = await client.post(`/${custNr}/fax`, { documents: [TEXT_DOC], ...body });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.jobId as string;
  }

  async function attemptsOf(jobId: string, recipientOrdinal = 0) {
    const recipient = await db()
      .selectFrom("recipients")
      .selectAll()
      .where("job_id", "=", jobId)
      .where("ordinal", "=", recipientOrdinal)
      .executeTakeFirstOrThrow();
    const attempts = await db().selectFrom("attempts").selectAll().where("recipient_id", "=", recipient.id).orderBy("attempt_no").execute();
    return { recipient, attempts };
  }

  before(async () => {
    node = await startTestNode(store.overrides());
    const creds = await createTestLogin(node);
    custNr = creds.custNr;
    client = api(node.url, creds);
  });
  after(async () => {
    await node.stop();
  });

  it("every test number reaches its documented final status, with the documented attempts", async () => {
    const startedAt = Date.now();
    const jobId = await send({ recipients: TEST_NUMBERS.map((t) => ({ number: t.number })), documents: [THREE_PAGE_DOC] });
    const report = await waitForFinalReport(client, custNr, jobId);
    const endedAt = Date.now();
    assert.equal(report.pages, 3);
    const job = await db().selectFrom("jobs").selectAll().where("id", "=", jobId).executeTakeFirstOrThrow();
    assert.equal(job.state, "completed");
    const pageBytes = JSON.parse(job.page_sizes!) as number[];
    assert.equal(pageBytes.length, 3);
    const deliveredSecs = Math.round(6 + 7 + pageBytes.reduce((s, b) => s + pageSeconds(b), 0) + 1);

    assert.equal(report.recipientStatus.length, TEST_NUMBERS.length);
    for (const [i, t] of TEST_NUMBERS.entries()) {
      const status = report.recipientStatus[i];
      const what = `${t.number} (${t.status})`;
      assert.equal(status.number, t.number, what);
      assert.equal(status.status, t.status, what);
      assert.ok(typeof status.reason === "string" && status.reason.length > 0, `${what}: reason text`);
      assert.equal(status.sentToNumber, dial(t.number), `${what}: sentToNumber is 00-style`);
      assert.match(status.sentTs, ISO_SECONDS, `${what}: sentTs`);
      const sentMs = Date.parse(status.sentTs);
      assert.ok(sentMs >= Math.floor(startedAt / 1000) * 1000 && sentMs <= endedAt, `${what}: sentTs ${status.sentTs} lies in the test`);

      const { recipient, attempts } = await attemptsOf(jobId, i);
      const n = expectedAttempts(t, node.config);
      assert.equal(attempts.length, n, `${what}: attempts`);
      assert.equal(recipient.attempt_count, n, `${what}: attempt_count`);
      assert.deepEqual(
        attempts.map((a) => a.attempt_no),
        Array.from({ length: n }, (_, k) => k + 1),
        `${what}: attempt numbers`,
      );
      for (const a of attempts) {
        assert.equal(a.e164, t.number, what);
        assert.equal(a.dial_string, dial(t.number), what);
        assert.notEqual(a.ended_at, null, what);
        assert.ok(a.ended_at! >= a.started_at, what);
      }
      for (let k = 1; k < attempts.length; k++) {
        assert.ok(attempts[k]!.started_at >= attempts[k - 1]!.ended_at!, `${what}: attempts are sequential`);
      }
      const last = attempts.at(-1)!;
      assert.equal(status.durationInSecs, last.duration_secs, `${what}: duration of the last call`);

      if (t.status === "OK") {
        assert.equal(status.reason, "OK");
        assert.deepEqual(attempts.map((a) => a.result), [...Array(n - 1).fill("failed"), "delivered"], what);
        assert.equal(status.durationInSecs, deliveredSecs, `${what}: delivered duration follows the timing model`);
        assert.equal(recipient.pages_sent, 3, what);
        assert.equal(status.remoteCsid, t.number, what);
      } else {
        assert.ok(attempts.every((a) => a.result === "failed" && a.reason_code === t.reason), `${what}: every attempt failed with ${t.reason}`);
        assert.equal(recipient.reason_code, t.reason, what);
        const tries = n === 1 ? "1 attempt" : `${n} attempts`;
        assert.equal(status.reason, `${failureReason(t.reason as Exclude<typeof t.reason, "delivered">).description} (${tries})`, what);
      }
      if (t.status === "INCOMPLETE" || t.status === "REM_DIS") {
        assert.equal(recipient.pages_sent, 2, `${what}: ceil(3 / 2) pages confirmed`);
        assert.equal(status.remoteCsid, t.number, what);
      }
      if (["BUSY", "RING_TO", "WRONG_NUMBER", "LINE_ERROR"].includes(t.status)) {
        assert.equal(status.durationInSecs, 0, `${what}: an unanswered call has no duration`);
      }
    }
  });

  it("busy, busy, then OK: +4900000008 is delivered on its third attempt", async () => {
    const jobId = await send({ recipients: [{ number: "+4900000008" }] });
    const report = await waitForFinalReport(client, custNr, jobId);
    assert.equal(report.recipientStatus[0].status, "OK");
    const { recipient, attempts } = await attemptsOf(jobId);
    assert.equal(attempts.length, 3);
    assert.deepEqual(
      attempts.map((a) => [a.attempt_no, a.result, a.reason_code]),
      [
        [1, "failed", "line_busy"],
        [2, "failed", "line_busy"],
        [3, "delivered", null],
      ],
    );
    assert.deepEqual(JSON.parse(recipient.retries_used), { busy: 2 });
    // The busy schedule (10 ms) separates the attempts.
    assert.ok(attempts[1]!.started_at - attempts[0]!.ended_at! >= node.config.retry.busy[0]!);
    assert.ok(attempts[2]!.started_at - attempts[1]!.ended_at! >= node.config.retry.busy[1]!);
  });

  it("an alternative number is dialled at once after the primary rings out, and is reported as sentToNumber", async () => {
    const jobId = await send({ recipients: [{ number: "+4900000005", alternativeNumbers: ["+4989000000001"] }] });
    const report = await waitForFinalReport(client, custNr, jobId);
    const status = report.recipientStatus[0];
    assert.equal(status.status, "OK");
    assert.equal(status.sentToNumber, "004989000000001");
    assert.deepEqual(status.alternativeNumbers, ["+4989000000001"]);
    const { recipient, attempts } = await attemptsOf(jobId);
    assert.deepEqual(
      attempts.map((a) => [a.attempt_no, a.e164, a.result, a.reason_code]),
      [
        [1, "+4900000005", "failed", "no_answer"],
        [2, "+4989000000001", "delivered", null],
      ],
    );
    assert.deepEqual(JSON.parse(recipient.retries_used), {}, "trying the alternative spent no retry budget");
    assert.equal(recipient.target_index, 1);
  });

  it("an invalid number is never retried, but its alternative is tried", async () => {
    const okJob = await send({ recipients: [{ number: "+4900000009", alternativeNumbers: ["+4989000000002"] }] });
    const busyJob = await send({ recipients: [{ number: "+4900000009", alternativeNumbers: ["+4900000001"] }] });
    const lonelyJob = await send({ recipients: [{ number: "+4900000009" }] });

    const ok = await waitForFinalReport(client, custNr, okJob);
    assert.equal(ok.recipientStatus[0].status, "OK");
    assert.equal(ok.recipientStatus[0].sentToNumber, "004989000000002");
    const okAttempts = (await attemptsOf(okJob)).attempts;
    assert.deepEqual(
      okAttempts.map((a) => [a.e164, a.result, a.reason_code]),
      [
        ["+4900000009", "failed", "invalid_number"],
        ["+4989000000002", "delivered", null],
      ],
    );

    const busy = await waitForFinalReport(client, custNr, busyJob);
    assert.equal(busy.recipientStatus[0].status, "BUSY", "the last real cause, on the live alternative");
    const busyRun = await attemptsOf(busyJob);
    assert.deepEqual(
      busyRun.attempts.map((a) => a.e164),
      ["+4900000009", ...Array(1 + node.config.retry.busy.length).fill("+4900000001")],
      "the invalid primary is dialled once, the alternative uses the whole busy budget",
    );
    assert.deepEqual(JSON.parse(busyRun.recipient.dead_targets), [0]);

    const lonely = await waitForFinalReport(client, custNr, lonelyJob);
    assert.equal(lonely.recipientStatus[0].status, "WRONG_NUMBER");
    assert.equal((await attemptsOf(lonelyJob)).attempts.length, 1);
  });

  it("the do-not-fax list: BLACKLISTED when the check is on, delivered when it is off", async () => {
    await db().insertInto("blacklist").values({ e164: "+4989000000077", note: "engine test", added_at: Date.now() }).execute();
    const checked = await send({ recipients: [{ number: "+4989000000077" }], transportOptions: { isBlacklistEnabled: true } });
    const unchecked = await send({ recipients: [{ number: "+4989000000077" }], transportOptions: { isBlacklistEnabled: false } });
    const withAlternative = await send({
      recipients: [{ number: "+4989000000077", alternativeNumbers: ["+4989000000078"] }],
      transportOptions: { isBlacklistEnabled: true },
    });

    const blocked = (await waitForFinalReport(client, custNr, checked)).recipientStatus[0];
    assert.equal(blocked.status, "BLACKLISTED");
    assert.match(blocked.reason, /do-not-fax/);
    assert.equal(blocked.sentTs, undefined, "nothing was dialled, so no sentTs");
    assert.equal(blocked.sentToNumber, undefined);
    const blockedRun = await attemptsOf(checked);
    assert.deepEqual(
      blockedRun.attempts.map((a) => [a.result, a.reason_code, a.duration_secs]),
      [["failed", "number_blacklisted", 0]],
      "one attempt, not retried",
    );
    assert.match(blockedRun.attempts[0]!.raw_cause ?? "", /\+4989000000077/);

    const sent = (await waitForFinalReport(client, custNr, unchecked)).recipientStatus[0];
    assert.equal(sent.status, "OK");
    assert.equal(sent.sentToNumber, "004989000000077");

    const alt = (await waitForFinalReport(client, custNr, withAlternative)).recipientStatus[0];
    assert.equal(alt.status, "OK");
    assert.equal(alt.sentToNumber, "004989000000078");
  });
});

/**
 * Intake of large jobs, on each dialect, through the dialect's insertJobRows. PostgreSQL stores
 * a job of up to SINGLE_STATEMENT_RECIPIENTS recipients in one statement; above that, in a
 * transaction of several statements, since one statement binds at most 65 535 parameters
 * (ADR 0007). SQLite always uses a transaction of slices. Either way a job is stored whole, its
 * recipients in order, or not at all.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { NewJobDocumentRow, NewJobRow, NewRecipientRow } from "../../src/store/database.ts";
import { SINGLE_STATEMENT_RECIPIENTS } from "../../src/store/dialects/postgres/postgres-writes.ts";
import type { JobRows } from "../../src/store/store.ts";
import { DIALECTS, suiteStore } from "../support/dialects.ts";

const T0 = Date.UTC(2026, 10, 1);
/** PostgreSQL's limit on the parameters of one statement (a 16-bit count in its protocol). */
const PG_MAX_PARAMETERS = 65_535;

function jobRows(jobId: string, recipientCount: number): JobRows {
  const job: NewJobRow = {
    id: jobId,
    cust_nr: "99999TE",
    login: "tester",
    region: "DE",
    datacenter: "DE1",
    accepted_datacenter: "DE1",
    state: "pending",
    is_test: 1,
    is_express: 0,
    blacklist_check: 0,
    csid: null,
    paper_format: "A4",
    resolution: "HIGH",
    header: null,
    coverpage_template: null,
    overlay_name: null,
    overlay_mode: null,
    tone_mode: null,
    customer_defined_id: null,
    billing_code: null,
    billing_info: null,
    customer_reference: null,
    status_report_options: null,
    idempotency_key: null,
    request_hash: null,
    valid_from: T0,
    valid_until: T0 + 86_400_000,
    deadline_at: T0 + 90_000_000,
    pages: null,
    page_sizes: null,
    render_attempts: 0,
    created_at: T0,
  };
  const documents: NewJobDocumentRow[] = [0, 1].map((ordinal) => ({
    job_id: jobId,
    ordinal,
    name: `doc${ordinal}.txt`,
    charset: "UTF-8",
    reference_url: null,
    content: Buffer.from(`page ${ordinal}`),
    size_bytes: 6,
  }));
  const recipients: NewRecipientRow[] = Array.from({ length: recipientCount }, (_, ordinal) => {
    const e164 = `+4940${String(ordinal).padStart(7, "0")}`;
    return {
      id: `${jobId}R${String(ordinal).padStart(5, "0")}`,
      job_id: jobId,
      ordinal,
      datacenter: "DE1",
      is_express: 0,
      number: e164,
      alternative_numbers: null,
      properties: null,
      dial_targets: JSON.stringify([{ e164, dialString: `00${e164.slice(1)}` }]),
      target_index: 0,
      dead_targets: "[]",
      current_e164: e164,
      state: "waiting",
      run_at: T0,
      attempt_count: 0,
      retries_used: "{}",
      duration_secs: 0,
      pages_sent: 0,
    };
  });
  return { job, documents, recipients };
}

for (const dialect of DIALECTS) {
  describe(`${dialect}: intake of large jobs`, () => {
    const suite = suiteStore(dialect);

    async function stored(jobId: string): Promise<{ jobs: number; documents: number; ordinals: number[] }> {
      const { db } = suite.store;
      const jobs = await db.selectFrom("jobs").select("id").where("id", "=", jobId).execute();
      const documents = await db.selectFrom("job_documents").select("ordinal").where("job_id", "=", jobId).execute();
      const recipients = await db.selectFrom("recipients").select(["ordinal", "id"]).where("job_id", "=", jobId).orderBy("ordinal").execute();
      for (const r of recipients) assert.equal(r.id, `${jobId}R${String(r.ordinal).padStart(5, "0")}`);
      return { jobs: jobs.length, documents: documents.length, ordinals: recipients.map((r) => Number(r.ordinal)) };
    }

    const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

    it("stores a job of 4 000 recipients, more than one PostgreSQL statement can bind, whole and in order", async () => {
      const rows = jobRows("FJLARGE4000", 4000);
      const parameters = Object.keys(rows.recipients[0]!).length * rows.recipients.length;
      assert.ok(parameters > PG_MAX_PARAMETERS, `${parameters} parameters: the job must not fit one statement`);
      assert.ok(rows.recipients.length > SINGLE_STATEMENT_RECIPIENTS);
      await suite.store.writes.insertJobRows(suite.store.db, rows);
      assert.deepEqual(await stored("FJLARGE4000"), { jobs: 1, documents: 2, ordinals: range(4000) });
    });

    it(`stores a job of exactly ${SINGLE_STATEMENT_RECIPIENTS} recipients (PostgreSQL's one statement) and of one more (its transaction)`, async () => {
      await suite.store.writes.insertJobRows(suite.store.db, jobRows("FJEDGE1000", SINGLE_STATEMENT_RECIPIENTS));
      await suite.store.writes.insertJobRows(suite.store.db, jobRows("FJEDGE1001", SINGLE_STATEMENT_RECIPIENTS + 1));
      assert.deepEqual(await stored("FJEDGE1000"), { jobs: 1, documents: 2, ordinals: range(SINGLE_STATEMENT_RECIPIENTS) });
      assert.deepEqual(await stored("FJEDGE1001"), { jobs: 1, documents: 2, ordinals: range(SINGLE_STATEMENT_RECIPIENTS + 1) });
    });

    for (const [count, bad] of [
      [4000, 3500],
      [SINGLE_STATEMENT_RECIPIENTS, 500],
    ] as const) {
      it(`stores nothing of a job of ${count} recipients whose recipient ${bad} is refused (all or nothing)`, async () => {
        const jobId = `FJFAIL${count}`;
        const rows = jobRows(jobId, count);
        // A recipient id used twice: the primary key refuses the row in the last slices.
        rows.recipients[bad] = { ...rows.recipients[bad]!, id: rows.recipients[0]!.id };
        await assert.rejects(suite.store.writes.insertJobRows(suite.store.db, rows), (err: unknown) => suite.store.faults.isUniqueViolation(err));
        assert.deepEqual(await stored(jobId), { jobs: 0, documents: 0, ordinals: [] });
        // The suite.store takes the job once the row is right.
        await suite.store.writes.insertJobRows(suite.store.db, jobRows(jobId, count));
        assert.deepEqual(await stored(jobId), { jobs: 1, documents: 2, ordinals: range(count) });
      });
    }
  });
}

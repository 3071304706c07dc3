/**
 * PostgreSQL's form of the writes that differ by dialect. A job with its documents and
 * recipients is one statement: the job and its documents are inserted by data-modifying CTEs
 * of the statement that inserts the recipients. One statement is atomic by itself, so intake
 * needs no BEGIN and COMMIT either: one round trip instead of five, which is most of the
 * difference to SQLite's in-process writes (docs/benchmarks.md, bench:cluster). The foreign
 * keys (NO ACTION) are checked at the end of the statement, when the job row exists.
 *
 * A statement binds at most 65 535 parameters: a job of more than SINGLE_STATEMENT_RECIPIENTS
 * recipients (about 20 columns each; jobs.maxRecipients allows it) is inserted as a
 * transaction of several statements instead.
 */
import type { DialectWrites } from "../../store.ts";

export const SINGLE_STATEMENT_RECIPIENTS = 1000;

export const postgresWrites: DialectWrites = {
  async insertJobRows(db, { job, documents, recipients }) {
    if (recipients.length > SINGLE_STATEMENT_RECIPIENTS) {
      await db.transaction().execute(async (trx) => {
        await trx.insertInto("jobs").values(job).execute();
        if (documents.length > 0) await trx.insertInto("job_documents").values(documents).execute();
        for (let i = 0; i < recipients.length; i += SINGLE_STATEMENT_RECIPIENTS) {
          await trx.insertInto("recipients").values(recipients.slice(i, i + SINGLE_STATEMENT_RECIPIENTS)).execute();
        }
      });
      return;
    }
    let query = db.with("inserted_job", (qc) => qc.insertInto("jobs").values(job).returning("id"));
    if (documents.length > 0) {
      query = query.with("inserted_documents", (qc) => qc.insertInto("job_documents").values(documents).returning("ordinal")) as unknown as typeof query;
    }
    await query.insertInto("recipients").values(recipients).execute();
  },
};

/**
 * PostgreSQL's form of the writes that differ by dialect. A job with its documents and
 * recipients is one statement: the job and its documents are inserted by data-modifying CTEs
 * of the statement that inserts the recipients. One statement is atomic by itself, so intake
 * needs no BEGIN and COMMIT either: one round trip instead of five, which is most of the
 * difference to SQLite's in-process writes (docs/benchmarks.md, bench:cluster). The foreign
 * keys (NO ACTION) are checked at the end of the statement, when the job row exists.
 * At most 1 000 recipients of about 20 columns stay well below the 65 535 parameters a
 * statement may bind.
 */
import type { DialectWrites } from "../../store.ts";

export const postgresWrites: DialectWrites = {
  async insertJobRows(db, { job, documents, recipients }) {
    let query = db.with("inserted_job", (qc) => qc.insertInto("jobs").values(job).returning("id"));
    if (documents.length > 0) {
      query = query.with("inserted_documents", (qc) => qc.insertInto("job_documents").values(documents).returning("ordinal")) as unknown as typeof query;
    }
    await query.insertInto("recipients").values(recipients).execute();
  },
};

/**
 * SQLite's form of the writes that differ by dialect: a job with its documents and recipients
 * in one transaction, the recipients in slices (SQLite limits the bound parameters of one
 * statement).
 */
import type { DialectWrites } from "../../store.ts";

export const sqliteWrites: DialectWrites = {
  async insertJobRows(db, { job, documents, recipients }) {
    await db.transaction().execute(async (trx) => {
      await trx.insertInto("jobs").values(job).execute();
      if (documents.length > 0) await trx.insertInto("job_documents").values(documents).execute();
      for (let i = 0; i < recipients.length; i += 200) await trx.insertInto("recipients").values(recipients.slice(i, i + 200)).execute();
    });
  },
};

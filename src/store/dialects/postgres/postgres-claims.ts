/**
 * PostgreSQL's claims, for many nodes on one database (graphile-worker's `getJobs`): the row to
 * claim is chosen with `FOR UPDATE SKIP LOCKED`, so concurrent claimers never wait for each
 * other and never get the same row; the update stamps the lease in the same statement or
 * transaction.
 *
 * The per-destination limit (sender.callsPerNumber) must hold over all nodes. Counting the
 * `sending` rows of a destination is not enough under READ COMMITTED: two nodes could each
 * count 0 and each claim a recipient of the same number. So, for each candidate, the claim
 * takes a transaction-scoped advisory lock on the destination (pg_try_advisory_xact_lock:
 * busy means another node is claiming for that number right now, so the candidate is
 * skipped), then counts again with a fresh snapshot: a claim that committed before the lock
 * was released is seen. The lock ends with the claiming transaction.
 */
import { sql } from "kysely";
import type { ClaimQueries } from "../../store.ts";
import {
  availableReceivedFaxes,
  claimJob,
  claimNotification,
  claimReceivedFaxesQuery,
  claimRecipient,
  dueNotifications,
  dueRecipients,
  pendingJobs,
  pendingJobsOfIdleCustomers,
} from "../claim-candidates.ts";

/** First key of the advisory locks on destinations (an arbitrary constant: "FAXD"). */
const DESTINATION_LOCK_CLASS = 0x46415844;
/** Candidates locked per recipient claim; the first one whose destination is free wins. */
const RECIPIENT_CANDIDATES = 8;

export const postgresClaims: ClaimQueries = {
  claimJobToRender: async (db, args) =>
    (await claimJob(db, pendingJobsOfIdleCustomers(db, args.datacenter).limit(1).forUpdate().skipLocked(), args).executeTakeFirst()) ??
    (await claimJob(db, pendingJobs(db, args.datacenter).limit(1).forUpdate().skipLocked(), args).executeTakeFirst()),

  async claimDueRecipient(trx, args) {
    const candidates = await dueRecipients(trx, args).limit(RECIPIENT_CANDIDATES).forUpdate("r").skipLocked().execute();
    for (const candidate of candidates) {
      const e164 = candidate.current_e164;
      if (e164 !== null) {
        const locked = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(${DESTINATION_LOCK_CLASS}::int4, hashtext(${e164})) as ok`.execute(trx);
        if (locked.rows[0]?.ok !== true) continue;
        const running = await trx
          .selectFrom("recipients")
          .select((eb) => eb.fn.countAll().as("n"))
          .where("current_e164", "=", e164)
          .where("state", "=", "sending")
          .executeTakeFirstOrThrow();
        if (Number(running.n) >= args.callsPerNumber) continue;
      }
      const claimed = await claimRecipient(trx, candidate.id, args).executeTakeFirst();
      if (claimed) return claimed;
    }
    return undefined;
  },

  claimDueNotification: (db, args) => claimNotification(db, dueNotifications(db, args).limit(1).forUpdate().skipLocked(), args).executeTakeFirst(),

  claimReceivedFaxes: async (db, args) =>
    (await claimReceivedFaxesQuery(db, availableReceivedFaxes(db, args).limit(args.limit).forUpdate().skipLocked(), args).execute()).sort(
      (a, b) => Number(a.received_at) - Number(b.received_at) || a.id.localeCompare(b.id),
    ),
};

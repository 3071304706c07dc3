/**
 * SQLite's claims. SQLite has one writer at a time, so a claim is a single
 * `UPDATE … WHERE id = (SELECT … LIMIT 1) RETURNING *` statement: no other writer can interleave
 * between the choice and the update, and the per-destination count in the recipient claim is
 * exact because no other claim can run beside it.
 */
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

export const sqliteClaims: ClaimQueries = {
  claimJobToRender: async (db, args) =>
    (await claimJob(db, pendingJobsOfIdleCustomers(db, args.datacenter).limit(1), args).executeTakeFirst()) ??
    (await claimJob(db, pendingJobs(db, args.datacenter).limit(1), args).executeTakeFirst()),
  claimDueRecipient: (trx, args) => claimRecipient(trx, dueRecipients(trx, args).limit(1), args).executeTakeFirst(),
  claimDueNotification: (db, args) => claimNotification(db, dueNotifications(db, args).limit(1), args).executeTakeFirst(),
  claimReceivedFaxes: async (db, args) =>
    (await claimReceivedFaxesQuery(db, availableReceivedFaxes(db, args).limit(args.limit), args).execute()).sort((a, b) => Number(a.received_at) - Number(b.received_at) || a.id.localeCompare(b.id)),
};

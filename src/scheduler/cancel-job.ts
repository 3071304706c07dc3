/**
 * Cancelling a job (a Faxline extension; the console's Cancel button and
 * `POST /rest/v1/{custNr}/fax/reports/{jobId}/cancel`).
 *
 * Recipients that wait for rendering or for their (next) call end at once with the failure
 * reason `cancelled` (status CANCELLED); the job completes when none is left open, and its
 * notifications go out as for any other completion. A call already running is not cut: a fax
 * half sent is worse than one sent whole, so that recipient ends with the call's own outcome and
 * is not retried if it fails (its job is cancelled). HylaFAX's faxrm does the same for a job
 * whose modem is already busy.
 */
import type { Kysely } from "kysely";
import type { Database } from "../store/database.ts";
import { failRecipientsFinal, lockJob } from "./recipient-outcomes.ts";

export type CancelResult =
  | { kind: "not_found" }
  | { kind: "completed" }
  | { kind: "cancelled"; cancelled: number; stillSending: number };

export async function cancelJob(
  db: Kysely<Database>,
  scope: { login: string; datacenters: readonly string[] },
  jobId: string,
  now: number,
): Promise<CancelResult> {
  return db.transaction().execute(async (trx) => {
    const job = await trx
      .selectFrom("jobs")
      .select(["id", "state"])
      .where("id", "=", jobId)
      .where("login", "=", scope.login)
      .where("datacenter", "in", [...scope.datacenters])
      .executeTakeFirst();
    if (!job) return { kind: "not_found" } as const;
    await lockJob(trx, jobId);
    const current = await trx.selectFrom("jobs").select("state").where("id", "=", jobId).executeTakeFirstOrThrow();
    if (current.state === "completed") return { kind: "completed" } as const;
    await trx.updateTable("jobs").set({ cancelled_by: scope.login }).where("id", "=", jobId).where("cancelled_by", "is", null).execute();
    const cancelled = await failRecipientsFinal(trx, { jobId, states: ["waiting", "ready"] }, "cancelled", now, `by login ${scope.login}`);
    // A running call's recipient must not be retried after it: closing the validity window makes
    // a failure of that call final (retry-policy.ts), and the call itself runs to its end; its
    // report names the cancellation (jobs.cancelled_by), not the validity.
    const sending = await trx.selectFrom("recipients").select("id").where("job_id", "=", jobId).where("state", "=", "sending").execute();
    if (sending.length > 0) {
      await trx.updateTable("jobs").set({ valid_until: now }).where("id", "=", jobId).where("valid_until", ">", now).execute();
    }
    return { kind: "cancelled", cancelled, stillSending: sending.length } as const;
  });
}

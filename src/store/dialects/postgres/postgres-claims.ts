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

/** First key of the advisory locks on destinations (an arbitrary constant: "FAXD"). */
const DESTINATION_LOCK_CLASS = 0x46415844;
/** Candidates locked per recipient claim; the first one whose destination is free wins. */
const RECIPIENT_CANDIDATES = 8;

export const postgresClaims: ClaimQueries = {
  async claimJobToRender(db, { datacenter, node, leaseUntil }) {
    return db
      .updateTable("jobs")
      .set((eb) => ({
        state: "rendering",
        locked_by: node,
        lease_until: leaseUntil,
        render_attempts: eb("render_attempts", "+", 1),
      }))
      .where("id", "=", (eb) =>
        eb
          .selectFrom("jobs")
          .select("id")
          .where("datacenter", "=", datacenter)
          .where("state", "=", "pending")
          .orderBy("is_express", "desc")
          .orderBy("created_at", "asc")
          .limit(1)
          .forUpdate()
          .skipLocked(),
      )
      .where("state", "=", "pending")
      .returningAll()
      .executeTakeFirst();
  },

  async claimDueRecipient(trx, { datacenter, node, now, leaseUntil, callsPerNumber }) {
    const candidates = await trx
      .selectFrom("recipients as r")
      .select(["r.id", "r.current_e164"])
      .where("r.datacenter", "=", datacenter)
      .where("r.state", "=", "ready")
      .where("r.run_at", "<=", now)
      .where((w) =>
        w(
          w
            .selectFrom("recipients as s")
            .select(w.fn.countAll().as("n"))
            .whereRef("s.current_e164", "=", "r.current_e164")
            .where("s.state", "=", "sending"),
          "<",
          callsPerNumber,
        ),
      )
      .where((w) =>
        w.exists(
          w
            .selectFrom("jobs as j")
            .select("j.id")
            .whereRef("j.id", "=", "r.job_id")
            .where("j.valid_until", ">", now),
        ),
      )
      .orderBy("r.is_express", "desc")
      .orderBy("r.run_at", "asc")
      .orderBy("r.id", "asc")
      .limit(RECIPIENT_CANDIDATES)
      .forUpdate("r")
      .skipLocked()
      .execute();

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
        if (Number(running.n) >= callsPerNumber) continue;
      }
      const claimed = await trx
        .updateTable("recipients")
        .set((eb) => ({
          state: "sending",
          locked_by: node,
          lease_until: leaseUntil,
          attempt_count: eb("attempt_count", "+", 1),
        }))
        .where("id", "=", candidate.id)
        .where("state", "=", "ready")
        .returningAll()
        .executeTakeFirst();
      if (claimed) return claimed;
    }
    return undefined;
  },

  async claimDueNotification(db, { datacenter, node, now, leaseUntil, busyReceivers }) {
    return db
      .updateTable("notifications")
      .set({ state: "delivering", locked_by: node, lease_until: leaseUntil })
      .where("id", "=", (eb) => {
        let query = eb
          .selectFrom("notifications")
          .select("id")
          .where("datacenter", "=", datacenter)
          .where("state", "=", "pending")
          .where("next_attempt_at", "<=", now);
        if (busyReceivers.length > 0) query = query.where("receiver", "not in", [...busyReceivers]);
        return query.orderBy("next_attempt_at", "asc").orderBy("id", "asc").limit(1).forUpdate().skipLocked();
      })
      .where("state", "=", "pending")
      .returningAll()
      .executeTakeFirst();
  },
};

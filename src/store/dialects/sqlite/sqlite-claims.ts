/**
 * SQLite's claims. SQLite has one writer at a time, so a claim is a single
 * `UPDATE … WHERE id = (SELECT … LIMIT 1) RETURNING *` statement: no other writer can interleave
 * between the choice and the update, and the per-destination count in the recipient claim is
 * exact because no other claim can run beside it.
 */
import type { ClaimQueries } from "../../store.ts";

export const sqliteClaims: ClaimQueries = {
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
          .limit(1),
      )
      .where("state", "=", "pending")
      .returningAll()
      .executeTakeFirst();
  },

  async claimDueRecipient(db, { datacenter, node, now, leaseUntil, callsPerNumber }) {
    return db
      .updateTable("recipients")
      .set((eb) => ({
        state: "sending",
        locked_by: node,
        lease_until: leaseUntil,
        attempt_count: eb("attempt_count", "+", 1),
      }))
      .where("id", "=", (eb) =>
        eb
          .selectFrom("recipients as r")
          .select("r.id")
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
          .limit(1),
      )
      .where("state", "=", "ready")
      .returningAll()
      .executeTakeFirst();
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
        return query.orderBy("next_attempt_at", "asc").orderBy("id", "asc").limit(1);
      })
      .where("state", "=", "pending")
      .returningAll()
      .executeTakeFirst();
  },
};

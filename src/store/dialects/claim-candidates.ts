/**
 * What each claim looks for, the same in every dialect: the pending job to render, the due
 * recipients, the due notification, in claim order, and what a claim writes. The dialects add
 * how a row is taken without another claimer taking it too (sqlite/sqlite-claims.ts,
 * postgres/postgres-claims.ts).
 */
import type { Kysely } from "kysely";
import type { Database } from "../database.ts";
import type { ClaimJobArgs, ClaimNotificationArgs, ClaimReceivedFaxesArgs, ClaimRecipientArgs } from "../store.ts";

/** Pending jobs of the data center, express first, then oldest first. */
export function pendingJobs(db: Kysely<Database>, datacenter: string) {
  return db
    .selectFrom("jobs")
    .select("id")
    .where("datacenter", "=", datacenter)
    .where("state", "=", "pending")
    .orderBy("is_express", "desc")
    .orderBy("created_at", "asc");
}

/**
 * Pending jobs of customers that have no job rendering in the data center now, in the order of
 * pendingJobs. A render claim asks for these first, so that a customer's long job (or many jobs)
 * takes one render slot while other customers' jobs wait, not all of them.
 */
export function pendingJobsOfIdleCustomers(db: Kysely<Database>, datacenter: string) {
  return pendingJobs(db, datacenter).where("cust_nr", "not in", db.selectFrom("jobs as busy").select("busy.cust_nr").where("busy.datacenter", "=", datacenter).where("busy.state", "=", "rendering"));
}

/**
 * Due `ready` recipients of the data center whose destination has fewer than `callsPerNumber`
 * calls running and whose job is still valid: express first, then by due time.
 */
export function dueRecipients(db: Kysely<Database>, { datacenter, now, callsPerNumber }: Pick<ClaimRecipientArgs, "datacenter" | "now" | "callsPerNumber">) {
  return db
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
    .orderBy("r.id", "asc");
}

/** Due `pending` notifications of the data center, not to receivers this node is busy with. */
export function dueNotifications(db: Kysely<Database>, { datacenter, now, busyReceivers }: Pick<ClaimNotificationArgs, "datacenter" | "now" | "busyReceivers">) {
  let query = db
    .selectFrom("notifications")
    .select("id")
    .where("datacenter", "=", datacenter)
    .where("state", "=", "pending")
    .where("next_attempt_at", "<=", now);
  if (busyReceivers.length > 0) query = query.where("receiver", "not in", [...busyReceivers]);
  return query.orderBy("next_attempt_at", "asc").orderBy("id", "asc");
}

/** Claims a pending job (`candidate` names it) for rendering. */
export function claimJob(db: Kysely<Database>, candidate: ReturnType<typeof pendingJobs>, { node, leaseUntil }: Pick<ClaimJobArgs, "node" | "leaseUntil">) {
  return db
    .updateTable("jobs")
    .set((eb) => ({ state: "rendering", locked_by: node, lease_until: leaseUntil, render_attempts: eb("render_attempts", "+", 1) }))
    .where("id", "=", candidate)
    .where("state", "=", "pending")
    .returningAll();
}

/** Claims a ready recipient (`candidate` names it) for a call. */
export function claimRecipient(db: Kysely<Database>, candidate: string | ReturnType<typeof dueRecipients>, { node, leaseUntil }: Pick<ClaimJobArgs, "node" | "leaseUntil">) {
  return db
    .updateTable("recipients")
    .set((eb) => ({ state: "sending", locked_by: node, lease_until: leaseUntil, attempt_count: eb("attempt_count", "+", 1) }))
    .where("id", "=", typeof candidate === "string" ? candidate : candidate.clearSelect().select("r.id"))
    .where("state", "=", "ready")
    .returningAll();
}

/** Claims a due notification (`candidate` names it) for delivery. */
export function claimNotification(db: Kysely<Database>, candidate: ReturnType<typeof dueNotifications>, { node, leaseUntil }: Pick<ClaimJobArgs, "node" | "leaseUntil">) {
  return db
    .updateTable("notifications")
    .set({ state: "delivering", locked_by: node, lease_until: leaseUntil })
    .where("id", "=", candidate)
    .where("state", "=", "pending")
    .returningAll();
}

/** Received faxes of a topic a poller may get now (neither acknowledged nor locked), oldest first. */
export function availableReceivedFaxes(db: Kysely<Database>, { custNr, topic, now }: Pick<ClaimReceivedFaxesArgs, "custNr" | "topic" | "now">) {
  return db
    .selectFrom("received_faxes")
    .select("id")
    .where("cust_nr", "=", custNr)
    .where("topic", "=", topic)
    .where("acknowledged_at", "is", null)
    .where("purged_at", "is", null)
    .where((eb) => eb.or([eb("locked_until", "is", null), eb("locked_until", "<=", now)]))
    .orderBy("received_at", "asc")
    .orderBy("id", "asc");
}

/** Locks the received faxes `candidates` names for a poller, and returns them. */
export function claimReceivedFaxesQuery(db: Kysely<Database>, candidates: ReturnType<typeof availableReceivedFaxes>, { now, lockUntil }: Pick<ClaimReceivedFaxesArgs, "now" | "lockUntil">) {
  return db
    .updateTable("received_faxes")
    .set((eb) => ({ locked_until: lockUntil, handed_out: eb("handed_out", "+", 1) }))
    .where("id", "in", candidates)
    .where("acknowledged_at", "is", null)
    .where((eb) => eb.or([eb("locked_until", "is", null), eb("locked_until", "<=", now)]))
    .returningAll();
}

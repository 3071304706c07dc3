/**
 * The notification outbox and its delivery log: writing a notification (inside the caller's
 * transaction), recording a try, releasing abandoned tries, reading a job's log, redelivering.
 * Every update is guarded by the state (and lease holder) it expects, so a node that lost its
 * lease changes nothing.
 */
import { sql, type Kysely } from "kysely";
import { randomToken } from "../../lib/ids.ts";
import type { Database, NotificationAttemptRow, NotificationRow } from "../database.ts";
import { readOneSnapshot } from "./read-snapshot.ts";
import { assertNotificationTransition, type NotificationState } from "../../notifications/notification-states.ts";

export interface NewNotification {
  jobId: string;
  custNr: string;
  datacenter: string;
  channel: "http" | "email" | "sftp";
  event: string;
  target: string;
  receiver: string;
  auth: string | null;
  payload: string;
}

export async function insertNotification(db: Kysely<Database>, n: NewNotification, now: number): Promise<string> {
  const id = `msg_${randomToken(24)}`;
  await db
    .insertInto("notifications")
    .values({
      id,
      job_id: n.jobId,
      cust_nr: n.custNr,
      datacenter: n.datacenter,
      channel: n.channel,
      event: n.event,
      target: n.target,
      receiver: n.receiver,
      auth: n.auth,
      payload: n.payload,
      state: "pending",
      attempts: 0,
      schedule_step: 0,
      next_attempt_at: now,
      created_at: now,
    })
    .execute();
  return id;
}

/** Appends try number `attempts + 1` of `n` to the delivery log. */
async function logTry(
  trx: Kysely<Database>,
  n: NotificationRow,
  entry: Omit<NotificationAttemptRow, "id" | "notification_id" | "attempt_no">,
): Promise<void> {
  await trx
    .insertInto("notification_attempts")
    .values({ id: `nta_${randomToken(16)}`, notification_id: n.id, attempt_no: n.attempts + 1, ...entry })
    .execute();
}

export interface TryRecord {
  notification: NotificationRow;
  holder: string;
  startedAt: number;
  durationMs: number;
  outcome: "delivered" | "retry" | "failed";
  statusCode: number | null;
  error: string | null;
  responseExcerpt: string | null;
  next:
    | { state: "delivered" }
    | { state: "pending"; nextAttemptAt: number; scheduleStep: number }
    | { state: "failed"; why: string };
  now: number;
}

/** Writes the try to the log and moves the notification on; false when the lease was lost. */
export async function recordNotificationTry(db: Kysely<Database>, r: TryRecord): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const n = r.notification;
    assertNotificationTransition("delivering", r.next.state);
    const update = await trx
      .updateTable("notifications")
      .set({
        state: r.next.state,
        attempts: n.attempts + 1,
        schedule_step: r.next.state === "pending" ? r.next.scheduleStep : n.schedule_step,
        next_attempt_at: r.next.state === "pending" ? r.next.nextAttemptAt : n.next_attempt_at,
        locked_by: null,
        lease_until: null,
        last_error: r.next.state === "failed" ? r.next.why : r.error,
        finished_at: r.next.state === "pending" ? null : r.now,
      })
      .where("id", "=", n.id)
      .where("state", "=", "delivering")
      .where("locked_by", "=", r.holder)
      .executeTakeFirst();
    if (Number(update.numUpdatedRows) === 0) return false;
    await logTry(trx, n, {
      node: r.holder,
      started_at: r.startedAt,
      duration_ms: r.durationMs,
      outcome: r.outcome,
      status_code: r.statusCode,
      error: r.error,
      response_excerpt: r.responseExcerpt,
    });
    return true;
  });
}

/**
 * Tries whose node died (lease expired) or that a restarted node left behind (holder of its
 * previous life): logged as abandoned and due again at once. Returns how many.
 */
export async function releaseNotificationLeases(
  db: Kysely<Database>,
  where: { datacenter: string; now: number } & ({ expiredBefore: number } | { holderPrefix: string; exceptHolder: string }),
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    let query = trx
      .selectFrom("notifications")
      .selectAll()
      .where("datacenter", "=", where.datacenter)
      .where("state", "=", "delivering");
    // An exact, case-sensitive prefix (LIKE would read "_" and "%" in node ids as wildcards).
    query =
      "expiredBefore" in where
        ? query.where("lease_until", "<", where.expiredBefore)
        : query.where(sql<string>`substr(locked_by, 1, ${where.holderPrefix.length})`, "=", where.holderPrefix).where("locked_by", "!=", where.exceptHolder);
    const rows = await query.execute();
    if (rows.length > 0) assertNotificationTransition("delivering", "pending");
    let released = 0;
    for (const n of rows) {
      // Guarded by the state and holder read above: a try recorded meanwhile is left alone.
      const update = await trx
        .updateTable("notifications")
        .set({ state: "pending", attempts: n.attempts + 1, locked_by: null, lease_until: null, next_attempt_at: where.now })
        .where("id", "=", n.id)
        .where("state", "=", "delivering")
        .where("locked_by", "=", n.locked_by)
        .executeTakeFirst();
      if (Number(update.numUpdatedRows) === 0) continue;
      released += 1;
      await logTry(trx, n, {
        node: n.locked_by ?? "",
        started_at: where.now,
        duration_ms: 0,
        outcome: "abandoned",
        status_code: null,
        error: "The node delivering this notification stopped before it finished; it is sent again",
        response_excerpt: null,
      });
    }
    return released;
  });
}

export interface NotificationWithLog {
  notification: NotificationRow;
  tries: NotificationAttemptRow[];
}

/** A job's notifications with their tries, read from one snapshot (a try recorded meanwhile shows in both or neither). */
export async function listJobNotifications(db: Kysely<Database>, jobId: string): Promise<NotificationWithLog[]> {
  return readOneSnapshot(db, async (trx) => {
    const notifications = await trx.selectFrom("notifications").selectAll().where("job_id", "=", jobId).orderBy("created_at").orderBy("id").execute();
    if (notifications.length === 0) return [];
    const tries = await trx
      .selectFrom("notification_attempts")
      .selectAll()
      .where("notification_id", "in", notifications.map((n) => n.id))
      .orderBy("notification_id")
      .orderBy("attempt_no")
      .execute();
    return notifications.map((notification) => ({ notification, tries: tries.filter((t) => t.notification_id === notification.id) }));
  });
}

export type RedeliverResult = "queued" | "not_found" | "in_flight";

/** Queues a notification again, with a fresh retry schedule, whatever its state but `delivering`. */
export async function redeliverNotification(db: Kysely<Database>, jobId: string, id: string, now: number): Promise<RedeliverResult> {
  const current = await db.selectFrom("notifications").select("state").where("id", "=", id).where("job_id", "=", jobId).executeTakeFirst();
  if (!current) return "not_found";
  if (current.state === "delivering") return "in_flight";
  // A pending notification is simply made due now; the others come back to pending.
  if (current.state !== "pending") assertNotificationTransition(current.state as NotificationState, "pending");
  const update = await db
    .updateTable("notifications")
    .set({ state: "pending", schedule_step: 0, next_attempt_at: now, finished_at: null })
    .where("id", "=", id)
    .where("job_id", "=", jobId)
    .where("state", "!=", "delivering")
    .executeTakeFirst();
  if (Number(update.numUpdatedRows) > 0) return "queued";
  // Zero rows: a notifier claimed it between the read and the update, or the retention purge
  // deleted it.
  const still = await db.selectFrom("notifications").select("id").where("id", "=", id).where("job_id", "=", jobId).executeTakeFirst();
  return still ? "in_flight" : "not_found";
}

/** Deletes up to `limit` finished notifications (with their logs) that finished before `cutoff`. */
export async function purgeFinishedNotifications(db: Kysely<Database>, datacenter: string, cutoff: number, limit: number): Promise<number> {
  const rows = await db
    .selectFrom("notifications")
    .select("id")
    .where("datacenter", "=", datacenter)
    .where("state", "in", ["delivered", "failed"])
    .where("finished_at", "<", cutoff)
    .limit(limit)
    .execute();
  if (rows.length === 0) return 0;
  // The conditions again: a redelivery may have made one pending since it was read.
  const deleted = await db
    .deleteFrom("notifications")
    .where("id", "in", rows.map((r) => r.id))
    .where("state", "in", ["delivered", "failed"])
    .where("finished_at", "<", cutoff)
    .executeTakeFirst();
  return Number(deleted.numDeletedRows);
}

/**
 * States of the third durable machine: a notification (one push or one mail) in the outbox.
 *
 *  - `pending`: due at `next_attempt_at`; a notifier may claim it. Entered when the event is
 *    written (in the transaction of the state change it reports), after a failed try with a retry
 *    ahead, when a dead node's try is abandoned, and by a redelivery request.
 *  - `delivering`: a notifier holds a lease and a try runs. Left to `delivered`, `pending`
 *    (retry) or `failed` when the try is recorded, or to `pending` through lease expiry.
 *  - `delivered`: a receiver took it (2xx, or the SMTP server accepted the mail). Left only by a
 *    redelivery request.
 *  - `failed`: given up (permanent failure, or the retry schedule is used up). Left only by a
 *    redelivery request.
 *
 * As for jobs, every change is an UPDATE guarded by the expected state (and lease holder), and
 * the queries in store/queries/notifications.ts check each move against this table.
 */
import { InternalError } from "../errors/internal-error.ts";

export const NotificationState = {
  Pending: "pending",
  Delivering: "delivering",
  Delivered: "delivered",
  Failed: "failed",
} as const;
export type NotificationState = (typeof NotificationState)[keyof typeof NotificationState];

const notificationTransitions: { readonly [S in NotificationState]: readonly NotificationState[] } = {
  pending: ["delivering"],
  delivering: ["delivered", "pending", "failed"],
  delivered: ["pending"],
  failed: ["pending"],
};

export const NOTIFICATION_TRANSITIONS = notificationTransitions;

export function assertNotificationTransition(from: NotificationState, to: NotificationState): void {
  if (!notificationTransitions[from]?.includes(to)) {
    throw new InternalError("notification-transition", `notification cannot move from ${from} to ${to}`);
  }
}

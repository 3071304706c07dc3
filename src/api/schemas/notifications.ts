/** Shapes of the notification delivery log (a Faxline extension of the contract). */
import { Type, type Static } from "typebox";

export const NotificationTrySchema = Type.Object({
  attemptNo: Type.Integer(),
  startedTs: Type.String({ description: "UTC, seconds" }),
  durationMs: Type.Integer(),
  outcome: Type.String({ description: "delivered, retry (a retry follows), failed (given up) or abandoned (the node stopped mid-try)" }),
  statusCode: Type.Optional(Type.Integer({ description: "HTTP status, or the SMTP reply code" })),
  error: Type.Optional(Type.String()),
  responseExcerpt: Type.Optional(Type.String({ description: "The first 1 KiB of the receiver's answer" })),
});

export const NotificationSchema = Type.Object({
  id: Type.String({ description: "msg_…; also the webhook-id header of every try" }),
  channel: Type.String({ description: "http or email" }),
  event: Type.String({ description: "job.completed, recipient.completed or attempt.failed" }),
  target: Type.String({ description: "Push URL (without user info) or e-mail address" }),
  state: Type.String({ description: "pending, delivering, delivered or failed" }),
  attempts: Type.Integer(),
  createdTs: Type.String(),
  nextAttemptTs: Type.Optional(Type.String({ description: "When the next try is due (pending only)" })),
  finishedTs: Type.Optional(Type.String()),
  lastError: Type.Optional(Type.String()),
  tries: Type.Array(NotificationTrySchema),
});
export type NotificationView = Static<typeof NotificationSchema>;

export const JobNotificationsSchema = Type.Object({
  jobId: Type.String(),
  notifications: Type.Array(NotificationSchema),
});

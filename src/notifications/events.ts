/**
 * Notification events. `job.completed` is always sent (push and mail, as the request or the
 * account asks); the others are opt-in per account (`faxline accounts set-push --events`) and
 * are pushed only, never mailed.
 */
export const JOB_COMPLETED = "job.completed";
/** A recipient reached its final state (delivered or failed for good). */
export const RECIPIENT_COMPLETED = "recipient.completed";
/** A call failed and a retry is scheduled. */
export const ATTEMPT_FAILED = "attempt.failed";

export const OPTIONAL_PUSH_EVENTS = [RECIPIENT_COMPLETED, ATTEMPT_FAILED] as const;
export type OptionalPushEvent = (typeof OPTIONAL_PUSH_EVENTS)[number];
export type NotificationEvent = typeof JOB_COMPLETED | OptionalPushEvent;

export function isOptionalPushEvent(name: string): name is OptionalPushEvent {
  return (OPTIONAL_PUSH_EVENTS as readonly string[]).includes(name);
}

/** A fax was received on a topic's number (inbound/enqueue-reception.ts): its fax-to-email and fax-to-webservice deliveries. */
export const FAX_RECEIVED = "fax.received";

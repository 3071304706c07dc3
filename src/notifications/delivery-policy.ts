/**
 * What happens after one delivery try of a notification: pure, so the schedule can be tested
 * without a receiver.
 *
 * A push is delivered by any 2xx answer. Every other answer and every network failure is
 * retried on the schedule (as Svix and Stripe do: a receiver's 404 or 401 is as often a
 * deployment in progress as a permanent refusal), except where retrying cannot help:
 *  - 410 Gone: the receiver says the endpoint is gone for good;
 *  - a target the SSRF guard refuses, a URL that cannot be used, missing account settings
 *    (`permanent` results from the client).
 * 429 and 503 may carry Retry-After; the next try then waits at least that long (capped by
 * push.maxRetryAfter). Waits are spread by ±jitter so a receiver coming back is not hit by
 * every queued push at once. When the schedule is used up the notification is `failed`; an
 * operator or the client can still redeliver it.
 */
export interface DeliveryResult {
  /** delivered: done. retry: a temporary failure. permanent: retrying cannot help. */
  kind: "delivered" | "retry" | "permanent";
  /** HTTP status, or the SMTP reply code, when the receiver answered. */
  statusCode: number | null;
  /** Why it failed, as a sentence; null when delivered. */
  error: string | null;
  /** The start of the receiver's answer, for the delivery log. */
  responseExcerpt: string | null;
  /** From a Retry-After header, in milliseconds. */
  retryAfterMs: number | null;
}

export type NextStep =
  | { state: "delivered" }
  | { state: "pending"; nextAttemptAt: number; scheduleStep: number }
  | { state: "failed"; why: string };

export interface RetryPlan {
  schedule: readonly number[];
  jitterPercent: number;
  maxRetryAfterMs: number;
}

/** `random` returns [0, 1); injectable for tests. */
export function nextStepAfter(result: DeliveryResult, scheduleStep: number, now: number, plan: RetryPlan, random: () => number = Math.random): NextStep {
  if (result.kind === "delivered") return { state: "delivered" };
  if (result.kind === "permanent") return { state: "failed", why: result.error ?? "permanent failure" };
  const wait = plan.schedule[scheduleStep];
  if (wait === undefined) {
    return { state: "failed", why: `gave up after ${scheduleStep + 1} tries over the whole retry schedule; last error: ${result.error ?? "unknown"}` };
  }
  const spread = (wait * plan.jitterPercent) / 100;
  let delay = Math.round(wait - spread + 2 * spread * random());
  if (result.retryAfterMs !== null) delay = Math.max(delay, Math.min(result.retryAfterMs, plan.maxRetryAfterMs));
  return { state: "pending", nextAttemptAt: now + delay, scheduleStep: scheduleStep + 1 };
}

/**
 * Parses Retry-After (RFC 9110 §10.2.3): delay seconds or an HTTP date. Null when absent or
 * unreadable; a date in the past gives 0.
 */
export function parseRetryAfter(value: string | undefined, now: number): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - now);
}

/**
 * Retry policy: what happens to a recipient after a failed attempt. Pure: no I/O, no clock.
 *
 * A recipient has dial targets: its primary number, then its alternative numbers. After a
 * failure:
 *  1. A failure whose retry class is `never` (invalid number, blacklisted …) gives up that
 *     number for good.
 *  2. If a later live number exists in the current round, it is dialled at once: alternatives
 *     are tried before the primary is retried, and that costs no retry budget.
 *  3. Otherwise a new round starts at the first live number after the wait that the failure's
 *     retry class schedules (`retry.busy`, `retry.noAnswer` …); each class has its own budget,
 *     the length of its schedule. A `never` failure that wraps to a number already tried this
 *     round retries it at once.
 *  4. The recipient fails for good when no live number remains, the class budget is spent, the
 *     attempt cap is reached, or the next try would fall after the job's validity. The final
 *     status and reason name the last real cause ("BUSY … after 10 attempts"), never a generic
 *     "too many failures".
 */
import type { FailureReason, RetryClass } from "../errors/failure-reasons.ts";

export interface RetrySchedule {
  maxAttempts: number;
  delaysMs: Record<Exclude<RetryClass, "never">, readonly number[]>;
}

export interface RetryState {
  targetCount: number;
  targetIndex: number;
  deadTargets: readonly number[];
  attemptCount: number;
  retriesUsed: Readonly<Partial<Record<RetryClass, number>>>;
}

export type RetryDecision =
  | {
      kind: "retry";
      runAt: number;
      targetIndex: number;
      deadTargets: number[];
      retriesUsed: Partial<Record<RetryClass, number>>;
    }
  | { kind: "final"; why: "no_live_number" | "budget_spent" | "attempt_cap" | "validity_ends"; deadTargets: number[] };

export function decideAfterFailure(
  state: RetryState,
  reason: FailureReason,
  now: number,
  schedule: RetrySchedule,
  validUntil: number,
): RetryDecision {
  const dead = new Set(state.deadTargets);
  if (reason.retryClass === "never") dead.add(state.targetIndex);
  const deadTargets = [...dead].sort((a, b) => a - b);
  const live = Array.from({ length: state.targetCount }, (_, i) => i).filter((i) => !dead.has(i));
  if (live.length === 0) return { kind: "final", why: "no_live_number", deadTargets };
  if (state.attemptCount >= schedule.maxAttempts) return { kind: "final", why: "attempt_cap", deadTargets };
  // An immediate retry at or after the end could never be claimed (claims skip jobs past
  // validity); ending here keeps the real cause instead of the expiry sweep's job_expired.
  if (now >= validUntil) return { kind: "final", why: "validity_ends", deadTargets };

  const laterInRound = live.find((i) => i > state.targetIndex);
  if (laterInRound !== undefined) {
    return { kind: "retry", runAt: now, targetIndex: laterInRound, deadTargets, retriesUsed: { ...state.retriesUsed } };
  }

  const first = live[0]!;
  if (reason.retryClass === "never") {
    return { kind: "retry", runAt: now, targetIndex: first, deadTargets, retriesUsed: { ...state.retriesUsed } };
  }
  const used = state.retriesUsed[reason.retryClass] ?? 0;
  const delays = schedule.delaysMs[reason.retryClass];
  if (used >= delays.length) return { kind: "final", why: "budget_spent", deadTargets };
  const runAt = now + delays[used]!;
  if (runAt >= validUntil) return { kind: "final", why: "validity_ends", deadTargets };
  return {
    kind: "retry",
    runAt,
    targetIndex: first,
    deadTargets,
    retriesUsed: { ...state.retriesUsed, [reason.retryClass]: used + 1 },
  };
}

/**
 * The report's `reason` text for a recipient that failed for good. `cancelledBy`: the login that
 * cancelled the job, whose validity the cancel closed (scheduler/cancel-job.ts).
 */
export function finalReasonText(reason: FailureReason, attempts: number, why: RetryDecision["kind"] extends string ? string : never, cancelledBy: string | null = null): string {
  const tries = attempts === 1 ? "1 attempt" : `${attempts} attempts`;
  switch (why) {
    case "validity_ends":
      if (cancelledBy !== null) return `${reason.description} (${tries}; not retried: the job was cancelled by login ${cancelledBy})`;
      return `${reason.description} (${tries}; the job's validity ends before the next retry)`;
    case "attempt_cap":
      return `${reason.description} (${tries}; attempt limit reached)`;
    default:
      return attempts > 0 ? `${reason.description} (${tries})` : reason.description;
  }
}

/**
 * States of the two durable machines: the job and its recipients.
 *
 * Job
 *  - `pending`: accepted and stored; waits for a scheduler to render it (and for jobValid.start).
 *    Entered at intake, or again from `rendering` when a renderer's lease expired.
 *  - `rendering`: a scheduler holds a lease on it and fetches and renders its documents.
 *    Left to `active` (pages known) or `completed` (documents failed: every recipient fails).
 *  - `active`: rendered; its recipients are being delivered. Left to `completed` when the last
 *    recipient reaches a final state.
 *  - `completed`: every recipient is final; the job appears in report lists. Terminal.
 *
 * Recipient
 *  - `waiting`: the job has not rendered yet. Left to `ready` when it has, or `failed`.
 *  - `ready`: due at `run_at`; a sender may claim it. Left to `sending` by a claim, or to `failed`
 *    by the expiry and deadline sweeps.
 *  - `sending`: a sender holds a lease and a call runs; one `attempts` row is `in_progress`.
 *    Left to `succeeded`, to `ready` (retry) or `failed` when the outcome is recorded, or through
 *    lease expiry (the node died: the attempt is `abandoned`, then as a `sender_lost` failure).
 *  - `succeeded`, `failed`: final; status and reason are set.
 *
 * Every change is an UPDATE guarded by the expected current state (and lease holder), so a lost
 * race changes nothing. The outcome functions (recipient-outcomes.ts) also check each recipient
 * move against the transition table with `assertRecipientTransition`, so a code path that would
 * make an illegal move throws instead of writing it.
 */
import { InternalError } from "../errors/internal-error.ts";

export const JobState = {
  Pending: "pending",
  Rendering: "rendering",
  Active: "active",
  Completed: "completed",
} as const;
export type JobState = (typeof JobState)[keyof typeof JobState];

export const RecipientState = {
  Waiting: "waiting",
  Ready: "ready",
  Sending: "sending",
  Succeeded: "succeeded",
  Failed: "failed",
} as const;
export type RecipientState = (typeof RecipientState)[keyof typeof RecipientState];

const jobTransitions: { readonly [S in JobState]: readonly JobState[] } = {
  pending: ["rendering", "completed"],
  rendering: ["active", "pending", "completed"],
  active: ["completed"],
  completed: [],
};

const recipientTransitions: { readonly [S in RecipientState]: readonly RecipientState[] } = {
  waiting: ["ready", "failed"],
  ready: ["sending", "failed"],
  sending: ["succeeded", "ready", "failed"],
  succeeded: [],
  failed: [],
};

export const FINAL_RECIPIENT_STATES: readonly RecipientState[] = ["succeeded", "failed"];

export function assertJobTransition(from: JobState, to: JobState): void {
  if (!jobTransitions[from]?.includes(to)) {
    throw new InternalError("job-transition", `job cannot move from ${from} to ${to}`);
  }
}

export function assertRecipientTransition(from: RecipientState, to: RecipientState): void {
  if (!recipientTransitions[from]?.includes(to)) {
    throw new InternalError("recipient-transition", `recipient cannot move from ${from} to ${to}`);
  }
}

export const JOB_TRANSITIONS = jobTransitions;
export const RECIPIENT_TRANSITIONS = recipientTransitions;

import { randomInt } from "node:crypto";

/**
 * Identifiers in the provider's style: 22 characters of [A-Z0-9].
 * Job ids start with `FJ`, recipient ids (the push message's `numId`) with `FN`, received faxes
 * with `FI`.
 *
 * The 20 characters after the prefix are 8 characters of base-36 time (ms, so ids sort
 * roughly by creation and stay unique across nodes) followed by 12 random characters
 * (62 bits of entropy per millisecond).
 */
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";

export type JobId = string & { readonly __brand: "JobId" };
export type RecipientId = string & { readonly __brand: "RecipientId" };

function timePart(ms: number): string {
  return ms.toString(36).toUpperCase().padStart(8, "0").slice(-8);
}

function randomPart(length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(36)];
  return out;
}

export function newJobId(nowMs: number = Date.now()): JobId {
  return `FJ${timePart(nowMs)}${randomPart(12)}` as JobId;
}

export function newRecipientId(nowMs: number = Date.now()): RecipientId {
  return `FN${timePart(nowMs)}${randomPart(12)}` as RecipientId;
}

/** A received fax's id: `FI` and the same 20 characters as a job id (sortable by time). */
export function newReceivedFaxId(nowMs: number = Date.now()): string {
  return `FI${timePart(nowMs)}${randomPart(12)}`;
}

/** A configuration API audit entry's id: `CA` and the same 20 characters (sortable by time). */
export function newAuditId(nowMs: number = Date.now()): string {
  return `CA${timePart(nowMs)}${randomPart(12)}`;
}

/** Random token for node instances and similar, not shown to clients. */
export function randomToken(length = 12): string {
  return randomPart(length).toLowerCase();
}

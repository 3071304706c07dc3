/**
 * Failure reasons: why a recipient's delivery attempt (or the whole recipient) failed.
 *
 * These are domain data, recorded in the store and shown to clients; they are never thrown.
 * Each reason has
 *  - `code`: stable lower_snake identifier (stored in `attempts.reason_code`),
 *  - `category`: where it arose (call, t30, document, destination, policy, internal),
 *  - `retryClass`: which retry budget a failure draws on (see scheduler/retry-policy.ts);
 *    `never` ends the number at once,
 *  - `status`: the value of the contract's `recipientStatus[].status` when this is the final
 *    outcome. The Retarus status vocabulary (OK, BUSY, NOFAX, NOFAX_DIS, NOFAX_TO, RING_TO,
 *    REM_DIS) is used wherever it fits; the others are Faxline extensions, documented in
 *    docs/failure-reasons.md,
 *  - `description`: English text for the report's `reason` and for operators.
 *
 * The raw cause (SIP response, Q.850 cause, SpanDSP `T30_ERR_*` name) travels beside the code
 * in `AttemptOutcome.rawCause`.
 *
 * docs/failure-reasons.md lists exactly these entries; test/unit/catalogues.test.ts checks it.
 */

export const RetryClass = {
  Busy: "busy",
  NoAnswer: "no_answer",
  NoFax: "no_fax",
  Protocol: "protocol",
  Internal: "internal",
  Never: "never",
} as const;
export type RetryClass = (typeof RetryClass)[keyof typeof RetryClass];

export const FailureCategory = {
  Call: "call",
  T30: "t30",
  Document: "document",
  Destination: "destination",
  Policy: "policy",
  Internal: "internal",
} as const;
export type FailureCategory = (typeof FailureCategory)[keyof typeof FailureCategory];

export interface FailureReason {
  readonly code: string;
  readonly category: FailureCategory;
  readonly retryClass: RetryClass;
  readonly status: string;
  readonly description: string;
}

function reason(
  code: string,
  category: FailureCategory,
  retryClass: RetryClass,
  status: string,
  description: string,
): FailureReason {
  return Object.freeze({ code, category, retryClass, status, description });
}

export const FailureReasons = {
  line_busy: reason("line_busy", "call", "busy", "BUSY", "Destination number busy"),
  no_answer: reason("no_answer", "call", "no_answer", "RING_TO", "No answer: the call rang out without being picked up"),
  not_a_fax: reason(
    "not_a_fax",
    "call",
    "no_fax",
    "NOFAX",
    "No fax device: answered by a person, an answering machine or a data modem",
  ),
  fax_disconnected: reason(
    "fax_disconnected",
    "t30",
    "protocol",
    "NOFAX_DIS",
    "Fax disconnect: the recipient ended the communication before the transfer began",
  ),
  fax_timeout: reason(
    "fax_timeout",
    "t30",
    "no_fax",
    "NOFAX_TO",
    "Fax timeout: the call was answered but no fax signal followed",
  ),
  remote_disconnect: reason(
    "remote_disconnect",
    "t30",
    "protocol",
    "REM_DIS",
    "The remote fax machine disconnected during the transmission",
  ),
  partial_transmission: reason(
    "partial_transmission",
    "t30",
    "protocol",
    "INCOMPLETE",
    "Only part of the pages were confirmed by the remote fax machine",
  ),
  call_failed: reason("call_failed", "call", "internal", "LINE_ERROR", "The call could not be set up (network or carrier error)"),
  invalid_number: reason(
    "invalid_number",
    "destination",
    "never",
    "WRONG_NUMBER",
    "The fax number is not a valid or reachable telephone number",
  ),
  number_blacklisted: reason(
    "number_blacklisted",
    "destination",
    "never",
    "BLACKLISTED",
    "The fax number is on the do-not-fax list",
  ),
  job_expired: reason(
    "job_expired",
    "policy",
    "never",
    "EXPIRED",
    "The job's validity window (jobValid.end) closed before the fax could be delivered",
  ),
  deadline_exceeded: reason(
    "deadline_exceeded",
    "policy",
    "never",
    "EXPIRED",
    "The job reached its hard deadline and was ended",
  ),
  cancelled: reason(
    "cancelled",
    "policy",
    "never",
    "CANCELLED",
    "The job was cancelled before the fax was sent to this number",
  ),
  document_type_unsupported: reason(
    "document_type_unsupported",
    "document",
    "never",
    "DOC_ERROR",
    "A document's type cannot be rendered by this Faxline installation",
  ),
  document_fetch_failed: reason(
    "document_fetch_failed",
    "document",
    "never",
    "DOC_ERROR",
    "A referenced document could not be fetched",
  ),
  document_too_large: reason(
    "document_too_large",
    "document",
    "never",
    "DOC_ERROR",
    "A document exceeds the configured size or page limit",
  ),
  document_unreadable: reason(
    "document_unreadable",
    "document",
    "never",
    "DOC_ERROR",
    "A document could not be read (bad encoding or corrupt content)",
  ),
  document_encrypted: reason(
    "document_encrypted",
    "document",
    "never",
    "DOC_ERROR",
    "A document is password-protected or encrypted and cannot be opened",
  ),
  document_type_unavailable: reason(
    "document_type_unavailable",
    "document",
    "never",
    "DOC_ERROR",
    "A document's type needs a converter that is not installed on this Faxline node",
  ),
  document_blank: reason(
    "document_blank",
    "document",
    "never",
    "DOC_ERROR",
    "Every page of the documents is blank, and blank pages are left out (mail-to-fax's suppressBlankPages): there was nothing to fax",
  ),
  render_failed: reason("render_failed", "internal", "never", "DOC_ERROR", "Rendering the documents failed"),
  sender_lost: reason(
    "sender_lost",
    "internal",
    "internal",
    "LINE_ERROR",
    "The node that was sending stopped during the call; the attempt was abandoned",
  ),
  engine_lost: reason(
    "engine_lost",
    "internal",
    "internal",
    "LINE_ERROR",
    "The fax engine's process on the sending node crashed or hung during the call; Faxline hung up and restarted it",
  ),
  no_line_configured: reason(
    "no_line_configured",
    "internal",
    "never",
    "LINE_ERROR",
    "No transmission line is configured on this node for this account (only test accounts can send)",
  ),
  // Reasons of the SIP/T.38 line (line/outcomes/call-outcomes.ts maps SIP responses, Q.850
  // causes and every T30_ERR_* completion code onto these and the ones above).
  call_rejected: reason(
    "call_rejected",
    "call",
    "no_answer",
    "LINE_ERROR",
    "The destination rejected the call (SIP 603 Decline, Q.850 cause 21 call rejected)",
  ),
  trunk_rejected: reason(
    "trunk_rejected",
    "call",
    "internal",
    "LINE_ERROR",
    "The carrier refused the call: check the trunk's credentials, caller number and permitted destinations",
  ),
  no_route: reason(
    "no_route",
    "destination",
    "never",
    "LINE_ERROR",
    "No trunk on this node routes this number (no route prefix of lines.trunksFile matches it)",
  ),
  t38_refused: reason(
    "t38_refused",
    "call",
    "protocol",
    "LINE_ERROR",
    "The carrier or the remote end refused T.38 fax and the call could not go on as audio",
  ),
  fax_negotiation_failed: reason(
    "fax_negotiation_failed",
    "t30",
    "protocol",
    "NOFAX_DIS",
    "Fax negotiation failed: the remote fax machine answered, but the two could not agree on settings or a transmission speed",
  ),
  fax_not_receiving: reason(
    "fax_not_receiving",
    "t30",
    "no_answer",
    "NOFAX_DIS",
    "The remote fax machine answered but said it cannot receive now (out of paper or memory full)",
  ),
  fax_incompatible: reason(
    "fax_incompatible",
    "t30",
    "never",
    "NOFAX_DIS",
    "The remote fax machine cannot take this fax: it does not support its resolution or page size, or refuses our identification",
  ),
  transmission_failed: reason(
    "transmission_failed",
    "t30",
    "protocol",
    "INCOMPLETE",
    "The page transfer failed: the remote fax machine rejected the pages or stopped answering before confirming any",
  ),
  fax_image_error: reason(
    "fax_image_error",
    "internal",
    "internal",
    "LINE_ERROR",
    "The sending node could not read the fax image during the call (a Faxline fault); the attempt is retried",
  ),
} as const satisfies Record<string, FailureReason>;

export type FailureReasonCode = keyof typeof FailureReasons;

export function failureReason(code: FailureReasonCode): FailureReason {
  return FailureReasons[code];
}

export function isFailureReasonCode(code: string): code is FailureReasonCode {
  return Object.hasOwn(FailureReasons, code);
}

/** Status and reason a successful delivery reports, as the contract shows them. */
export const DELIVERED_STATUS = "OK";
export const DELIVERED_REASON = "OK";
/** Status of a recipient that has not reached a final state yet. */
export const PENDING_STATUS = "PENDING";

/**
 * Call outcomes: how the end of a real call becomes a Faxline failure reason and a contract
 * status. Pure: every table below is data, and test/unit/call-outcomes.test.ts walks each one.
 *
 * Three sources end a call, and each has a table:
 *  - SIP final responses to our INVITE or T.38 re-INVITE (`SIP_STATUS_RULES`, with a default per
 *    class as RFC 3261 §21 says an unknown code is treated as its class's x00), refined by the
 *    Q.850 cause of a `Reason: Q.850;cause=N` header when the carrier sends one
 *    (`Q850_CAUSE_RULES`): the cause says more than the SIP code a gateway mapped it to;
 *  - SpanDSP's phase E completion codes, every `T30_ERR_*` of t30.h by name and number
 *    (`T30_COMPLETION_RULES`); what a code means depends on how far the fax got, so a rule gives
 *    a kind, and the progress (DIS seen, transfer begun, pages confirmed) picks the reason;
 *  - Faxline's own timers: the ring timeout (our CANCEL, then 487 → RING_TO / no_answer), no
 *    answer to the INVITE at all, and the call watchdog (call-watchdog.ts).
 *
 * Principles:
 *  - A fax whose every page the receiver confirmed (MCF) is delivered, even if the call ends
 *    untidily afterwards (DCN lost, BYE first): the pages are on the receiver's paper.
 *  - A refused T.38 re-INVITE is not a failure: RFC 3261 §14.1 leaves the session as it was, so
 *    the fax goes on as G.711 audio (verdict `t38_fallback`). Only when it cannot go on does the
 *    attempt fail, with t38_refused.
 *  - `advancesLadder` says whether the next attempt to this destination should step down the
 *    fallback ladder (fallback-ladder.ts): protocol-class failures (T.30 errors, T.38 refused)
 *    do, and so does silence after a T.38 switch (the gateway may not pass T.38 at all). Busy,
 *    no answer, wrong numbers and carrier errors do not: they say nothing about the fax path.
 *  - The raw cause keeps what the network and the engine said, names first
 *    ("SIP 486 Busy Here (Q.850 cause 17 user busy)", "T30_ERR_TX_GOTDCN: Received a DCN while
 *    waiting for a DIS"), so operators can search for it.
 */
import {
  DELIVERED_STATUS,
  failureReason,
  type FailureCategory,
  type FailureReasonCode,
  type RetryClass,
} from "../../errors/failure-reasons.ts";
import type { AttemptOutcome } from "../line.ts";
import { T30_ERR, t30ErrName, type T30ErrName } from "../fax-engine/t30-completion-codes.ts";
import type { CallPhase } from "./call-watchdog.ts";

// ---------------------------------------------------------------------------------------------
// SIP

/** A final (or provisional) SIP response as the SIP layer received it. */
export interface SipResponse {
  status: number;
  /** The reason phrase received; absent: the standard one. */
  reasonPhrase?: string | null;
  /** Q.850 cause from a `Reason: Q.850;cause=N` header, if any. */
  q850Cause?: number | null;
}

/** Which request a response answers: the initial INVITE, or our re-INVITE switching to T.38. */
export type SipRequestKind = "invite" | "reinvite";

export interface SipResponseContext {
  request: SipRequestKind;
  /** We sent CANCEL (ring timeout): a 487 is then the expected end of an unanswered call. */
  cancelledByUs?: boolean;
  /** The request already carried credentials: a further 401/407 means they were refused. */
  credentialsSent?: boolean;
  /** The initial INVITE offered T.38 only (no audio): a 488/415/606 is then a T.38 refusal. */
  offeredT38Only?: boolean;
}

export type SipVerdict =
  | { kind: "provisional"; rawCause: string }
  | { kind: "answered"; rawCause: string }
  /** 401/407: send the request again with credentials. */
  | { kind: "challenge"; rawCause: string }
  /** 491 to a re-INVITE: glare; send it again after 2.1–4 s (RFC 3261 §14.1). */
  | { kind: "retry_later"; rawCause: string }
  /** The re-INVITE to T.38 (or a T.38-only INVITE) was refused: go on as G.711 audio. */
  | { kind: "t38_fallback"; rawCause: string }
  /** 481/408 to a re-INVITE: the dialog is gone, the call is over. */
  | { kind: "dialog_ended"; rawCause: string }
  | { kind: "failed"; reasonCode: FailureReasonCode; rawCause: string };

/** Standard reason phrases (RFC 3261 §21 and later RFCs), for raw causes when none was received. */
export const SIP_REASON_PHRASES: Readonly<Record<number, string>> = {
  100: "Trying", 180: "Ringing", 181: "Call Is Being Forwarded", 182: "Queued", 183: "Session Progress", 199: "Early Dialog Terminated",
  200: "OK", 202: "Accepted", 204: "No Notification",
  300: "Multiple Choices", 301: "Moved Permanently", 302: "Moved Temporarily", 305: "Use Proxy", 380: "Alternative Service",
  400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
  406: "Not Acceptable", 407: "Proxy Authentication Required", 408: "Request Timeout", 410: "Gone", 412: "Conditional Request Failed",
  413: "Request Entity Too Large", 414: "Request-URI Too Long", 415: "Unsupported Media Type", 416: "Unsupported URI Scheme",
  417: "Unknown Resource-Priority", 420: "Bad Extension", 421: "Extension Required", 422: "Session Interval Too Small",
  423: "Interval Too Brief", 428: "Use Identity Header", 429: "Provide Referrer Identity", 433: "Anonymity Disallowed",
  436: "Bad Identity-Info", 437: "Unsupported Certificate", 438: "Invalid Identity Header", 470: "Consent Needed",
  480: "Temporarily Unavailable", 481: "Call/Transaction Does Not Exist", 482: "Loop Detected", 483: "Too Many Hops",
  484: "Address Incomplete", 485: "Ambiguous", 486: "Busy Here", 487: "Request Terminated", 488: "Not Acceptable Here",
  489: "Bad Event", 491: "Request Pending", 493: "Undecipherable", 494: "Security Agreement Required",
  500: "Server Internal Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Server Time-out",
  505: "Version Not Supported", 513: "Message Too Large", 555: "Push Notification Service Not Supported", 580: "Precondition Failure",
  600: "Busy Everywhere", 603: "Decline", 604: "Does Not Exist Anywhere", 606: "Not Acceptable", 607: "Unwanted", 608: "Rejected",
};

/**
 * Final responses to the initial INVITE with a rule of their own; every other code takes its
 * class default (`SIP_CLASS_DEFAULTS`). 401/407, 487 and 488/415/606 depend on the context and
 * are decided in `classifySipResponse` first.
 */
export const SIP_STATUS_RULES: Readonly<Record<number, FailureReasonCode>> = {
  // 4xx: the request or the callee
  401: "trunk_rejected", // credentials refused (a first 401/407 is a challenge)
  402: "trunk_rejected",
  403: "trunk_rejected",
  404: "invalid_number",
  407: "trunk_rejected",
  408: "no_answer",
  410: "invalid_number", // number no longer in service (Q.850 22 number changed)
  433: "trunk_rejected", // anonymous calls refused: the caller number is missing
  480: "no_answer",
  484: "invalid_number",
  485: "invalid_number",
  486: "line_busy",
  487: "call_failed", // terminated without our CANCEL
  488: "call_failed", // our audio offer refused: a trunk codec mismatch
  415: "call_failed",
  // 6xx: the callee, everywhere
  600: "line_busy",
  603: "call_rejected",
  604: "invalid_number",
  606: "call_failed",
  607: "call_rejected",
  608: "call_rejected",
};

/** RFC 3261 §21: an unrecognised final response is treated as the x00 of its class. */
export const SIP_CLASS_DEFAULTS: Readonly<Record<3 | 4 | 5 | 6, FailureReasonCode>> = {
  3: "call_failed", // redirects are not followed: a carrier trunk should not send them
  4: "call_failed",
  5: "call_failed", // 500, 502, 503 (congestion), 504 …: the carrier's trouble, retried on retry.internal
  6: "call_failed",
};

/** Responses to a T.38 re-INVITE that refuse the media change only: the call goes on as audio. */
const T38_REFUSALS = new Set([415, 488, 606]);

/**
 * Q.850 causes (ITU-T Q.850 Table 1) that decide the reason when a failure response carries
 * them. Causes not listed (16 normal clearing, 31 normal unspecified …) leave the SIP rule.
 */
export const Q850_CAUSE_RULES: Readonly<Record<number, { text: string; reasonCode: FailureReasonCode | null }>> = {
  1: { text: "unallocated number", reasonCode: "invalid_number" },
  2: { text: "no route to specified transit network", reasonCode: "call_failed" },
  3: { text: "no route to destination", reasonCode: "invalid_number" },
  6: { text: "channel unacceptable", reasonCode: "call_failed" },
  16: { text: "normal call clearing", reasonCode: null },
  17: { text: "user busy", reasonCode: "line_busy" },
  18: { text: "no user responding", reasonCode: "no_answer" },
  19: { text: "no answer from user", reasonCode: "no_answer" },
  20: { text: "subscriber absent", reasonCode: "no_answer" },
  21: { text: "call rejected", reasonCode: "call_rejected" },
  22: { text: "number changed", reasonCode: "invalid_number" },
  27: { text: "destination out of order", reasonCode: "call_failed" },
  28: { text: "invalid number format", reasonCode: "invalid_number" },
  29: { text: "facility rejected", reasonCode: "call_failed" },
  31: { text: "normal, unspecified", reasonCode: null },
  34: { text: "no circuit/channel available", reasonCode: "call_failed" },
  38: { text: "network out of order", reasonCode: "call_failed" },
  41: { text: "temporary failure", reasonCode: "call_failed" },
  42: { text: "switching equipment congestion", reasonCode: "call_failed" },
  44: { text: "requested circuit/channel not available", reasonCode: "call_failed" },
  47: { text: "resource unavailable, unspecified", reasonCode: "call_failed" },
  50: { text: "requested facility not subscribed", reasonCode: "trunk_rejected" },
  55: { text: "incoming calls barred within CUG", reasonCode: "trunk_rejected" },
  57: { text: "bearer capability not authorized", reasonCode: "trunk_rejected" },
  58: { text: "bearer capability not presently available", reasonCode: "call_failed" },
  63: { text: "service or option not available, unspecified", reasonCode: "call_failed" },
  65: { text: "bearer capability not implemented", reasonCode: "call_failed" },
  69: { text: "requested facility not implemented", reasonCode: "call_failed" },
  79: { text: "service or option not implemented, unspecified", reasonCode: "call_failed" },
  88: { text: "incompatible destination", reasonCode: "not_a_fax" },
  102: { text: "recovery on timer expiry", reasonCode: "no_answer" },
  111: { text: "protocol error, unspecified", reasonCode: "call_failed" },
  127: { text: "interworking, unspecified", reasonCode: "call_failed" },
};

/** "SIP 486 Busy Here (Q.850 cause 17 user busy)". */
export function describeSipResponse(response: SipResponse): string {
  const phrase = response.reasonPhrase?.trim() || SIP_REASON_PHRASES[response.status] || "";
  const head = phrase === "" ? `SIP ${response.status}` : `SIP ${response.status} ${phrase}`;
  const cause = response.q850Cause ?? null;
  if (cause === null) return head;
  const text = Q850_CAUSE_RULES[cause]?.text;
  return `${head} (Q.850 cause ${cause}${text ? ` ${text}` : ""})`;
}

/** What a SIP response means for the call. */
export function classifySipResponse(response: SipResponse, context: SipResponseContext): SipVerdict {
  const { status } = response;
  const rawCause = describeSipResponse(response);
  if (!Number.isInteger(status) || status < 100 || status > 699) {
    throw new RangeError(`classifySipResponse: ${status} is not a SIP status code (100–699)`);
  }
  if (status < 200) return { kind: "provisional", rawCause };
  if (status < 300) return { kind: "answered", rawCause };
  if ((status === 401 || status === 407) && !context.credentialsSent) return { kind: "challenge", rawCause };

  if (context.request === "reinvite") {
    // RFC 3261 §14.1: a failed re-INVITE leaves the session unchanged, except 481 and 408,
    // which end the dialog; 491 asks to try again later.
    if (status === 481 || status === 408) return { kind: "dialog_ended", rawCause };
    if (status === 491) return { kind: "retry_later", rawCause };
    return { kind: "t38_fallback", rawCause };
  }

  if (status === 487 && context.cancelledByUs) return { kind: "failed", reasonCode: "no_answer", rawCause };
  if (T38_REFUSALS.has(status) && context.offeredT38Only) return { kind: "t38_fallback", rawCause };

  const cause = response.q850Cause ?? null;
  const byCause = cause === null ? null : (Q850_CAUSE_RULES[cause]?.reasonCode ?? null);
  const bySip = SIP_STATUS_RULES[status] ?? SIP_CLASS_DEFAULTS[Math.floor(status / 100) as 3 | 4 | 5 | 6];
  return { kind: "failed", reasonCode: byCause ?? bySip, rawCause };
}

// ---------------------------------------------------------------------------------------------
// T.30

/**
 * What a completion code says, before the progress of the call is known:
 *  - ok: the engine finished cleanly;
 *  - no_fax_signal: answered, but no fax answered (T0/T1): fax_timeout (NOFAX_TO);
 *  - remote_drop: the far end sent DCN or hung up: fax_disconnected (NOFAX_DIS) before the
 *    transfer began, remote_disconnect (REM_DIS) after;
 *  - protocol: a T.30 exchange failed: fax_negotiation_failed (NOFAX_DIS) before the transfer
 *    began, partial_transmission (INCOMPLETE) after some pages were confirmed,
 *    transmission_failed (INCOMPLETE) after the transfer began but before any was;
 *  - not_receiving: the receiver's DIS says it cannot receive now: fax_not_receiving;
 *  - incompatible: the receiver cannot take this image or refuses us: fax_incompatible;
 *  - local_image: our own TIFF could not be read: fax_image_error.
 * `stage` is where the code arises in T.30 when nothing else is known: "transfer" for codes
 * that only happen once pages are being sent.
 */
export type T30Kind = "ok" | "no_fax_signal" | "remote_drop" | "protocol" | "not_receiving" | "incompatible" | "local_image";

export interface T30Rule {
  kind: T30Kind;
  stage: "before" | "transfer";
}

const rule = (kind: T30Kind, stage: "before" | "transfer" = "before"): T30Rule => Object.freeze({ kind, stage });

/** Every `T30_ERR_*` completion code of SpanDSP's t30.h (0 … 61). */
export const T30_COMPLETION_RULES: Readonly<Record<T30ErrName, T30Rule>> = {
  T30_ERR_OK: rule("ok"),
  // Link problems
  T30_ERR_CEDTONE: rule("protocol"),
  T30_ERR_T0_EXPIRED: rule("no_fax_signal"),
  T30_ERR_T1_EXPIRED: rule("no_fax_signal"),
  T30_ERR_T3_EXPIRED: rule("protocol"),
  T30_ERR_HDLC_CARRIER: rule("protocol"),
  T30_ERR_CANNOT_TRAIN: rule("protocol"),
  T30_ERR_OPER_INT_FAIL: rule("protocol"),
  T30_ERR_INCOMPATIBLE: rule("protocol"), // no common modem or coding: another rung (no ECM, 9600) may find one
  T30_ERR_RX_INCAPABLE: rule("not_receiving"),
  T30_ERR_TX_INCAPABLE: rule("incompatible"),
  T30_ERR_NORESSUPPORT: rule("incompatible"),
  T30_ERR_NOSIZESUPPORT: rule("incompatible"),
  T30_ERR_UNEXPECTED: rule("protocol"),
  // Phase E status values returned to a transmitter
  T30_ERR_TX_BADDCS: rule("protocol"),
  T30_ERR_TX_BADPG: rule("remote_drop", "transfer"),
  T30_ERR_TX_ECMPHD: rule("protocol", "transfer"),
  T30_ERR_TX_GOTDCN: rule("remote_drop"),
  T30_ERR_TX_INVALRSP: rule("protocol", "transfer"),
  T30_ERR_TX_NODIS: rule("protocol"),
  T30_ERR_TX_PHBDEAD: rule("protocol"),
  T30_ERR_TX_PHDDEAD: rule("protocol", "transfer"),
  T30_ERR_TX_T5EXP: rule("protocol", "transfer"),
  // Phase E status values returned to a receiver (a sender should not see them; mapped all the same)
  T30_ERR_RX_ECMPHD: rule("protocol", "transfer"),
  T30_ERR_RX_GOTDCS: rule("protocol"),
  T30_ERR_RX_INVALCMD: rule("protocol", "transfer"),
  T30_ERR_RX_NOCARRIER: rule("protocol", "transfer"),
  T30_ERR_RX_NOEOL: rule("protocol", "transfer"),
  T30_ERR_RX_NOFAX: rule("protocol", "transfer"),
  T30_ERR_RX_T2EXPDCN: rule("protocol", "transfer"),
  T30_ERR_RX_T2EXPD: rule("protocol", "transfer"),
  T30_ERR_RX_T2EXPFAX: rule("protocol", "transfer"),
  T30_ERR_RX_T2EXPMPS: rule("protocol", "transfer"),
  T30_ERR_RX_T2EXPRR: rule("protocol", "transfer"),
  T30_ERR_RX_T2EXP: rule("protocol"),
  T30_ERR_RX_DCNWHY: rule("remote_drop"),
  T30_ERR_RX_DCNDATA: rule("remote_drop", "transfer"),
  T30_ERR_RX_DCNFAX: rule("remote_drop", "transfer"),
  T30_ERR_RX_DCNPHD: rule("remote_drop", "transfer"),
  T30_ERR_RX_DCNRRD: rule("remote_drop", "transfer"),
  T30_ERR_RX_DCNNORTN: rule("remote_drop", "transfer"),
  // TIFF file problems: ours
  T30_ERR_FILEERROR: rule("local_image"),
  T30_ERR_NOPAGE: rule("local_image"),
  T30_ERR_BADTIFF: rule("local_image"),
  T30_ERR_BADPAGE: rule("local_image"),
  T30_ERR_BADTAG: rule("local_image"),
  T30_ERR_BADTIFFHDR: rule("local_image"),
  T30_ERR_NOMEM: rule("local_image"),
  // General problems
  T30_ERR_RETRYDCN: rule("protocol", "transfer"), // pages refused (RTN, PPR) until the retries ran out
  T30_ERR_CALLDROPPED: rule("remote_drop"),
  // Feature negotiation issues: the far end refuses an identification or feature
  T30_ERR_NOPOLL: rule("incompatible"),
  T30_ERR_IDENT_UNACCEPTABLE: rule("incompatible"),
  T30_ERR_SUB_UNACCEPTABLE: rule("incompatible"),
  T30_ERR_SEP_UNACCEPTABLE: rule("incompatible"),
  T30_ERR_PSA_UNACCEPTABLE: rule("incompatible"),
  T30_ERR_SID_UNACCEPTABLE: rule("incompatible"),
  T30_ERR_PWD_UNACCEPTABLE: rule("incompatible"),
  T30_ERR_TSA_UNACCEPTABLE: rule("incompatible"),
  T30_ERR_IRA_UNACCEPTABLE: rule("incompatible"),
  T30_ERR_CIA_UNACCEPTABLE: rule("incompatible"),
  T30_ERR_ISP_UNACCEPTABLE: rule("incompatible"),
  T30_ERR_CSA_UNACCEPTABLE: rule("incompatible"),
};

/** A code missing from the table (a newer SpanDSP) is read as a protocol failure. */
const UNKNOWN_T30_RULE = rule("protocol");

/** How far the fax got before the call ended. */
export interface FaxProgress {
  /** The receiver's DIS arrived (T.30 phase B began). */
  disReceived?: boolean;
  /** Training succeeded (CFR) or a page began: the transfer is under way. */
  transferStarted?: boolean;
  /** Pages the receiver confirmed (MCF). */
  pagesConfirmed: number;
}

export type FaxTransport = "t38" | "g711";

/** The rule of a completion code, by number or name. */
export function t30Rule(code: number | T30ErrName): { name: string; code: number | null; rule: T30Rule } {
  if (typeof code === "string") {
    const entry = T30_ERR[code];
    return { name: code, code: entry.code, rule: T30_COMPLETION_RULES[code] };
  }
  const name = t30ErrName(code);
  const known = Object.hasOwn(T30_COMPLETION_RULES, name) ? T30_COMPLETION_RULES[name as T30ErrName] : undefined;
  return { name, code, rule: known ?? UNKNOWN_T30_RULE };
}

/** "T30_ERR_TX_GOTDCN: Received a DCN while waiting for a DIS". */
export function describeT30(code: number | T30ErrName): string {
  const { name } = t30Rule(code);
  const entry = (T30_ERR as Record<string, { code: number; text: string } | undefined>)[name];
  return entry === undefined ? `${name}: unknown completion code` : `${name}: ${entry.text}`;
}

/** The reason a T.30 rule gives for the call's progress; null for `ok`. */
function reasonForT30(rule: T30Rule, progress: FaxProgress): FailureReasonCode | null {
  const inTransfer = rule.stage === "transfer" || progress.transferStarted === true || progress.pagesConfirmed > 0;
  switch (rule.kind) {
    case "ok":
      return null;
    case "no_fax_signal":
      return "fax_timeout";
    case "remote_drop":
      return inTransfer ? "remote_disconnect" : "fax_disconnected";
    case "protocol":
      if (!inTransfer) return "fax_negotiation_failed";
      return progress.pagesConfirmed > 0 ? "partial_transmission" : "transmission_failed";
    case "not_receiving":
      return "fax_not_receiving";
    case "incompatible":
      return "fax_incompatible";
    case "local_image":
      return "fax_image_error";
  }
}

// ---------------------------------------------------------------------------------------------
// The whole call

/** How a call ended, as the line saw it. */
export type CallEnd =
  /** The INVITE got a final non-2xx response (after our CANCEL, if we sent one). */
  | { kind: "rejected"; response: SipResponse; cancelledByUs?: boolean; credentialsSent?: boolean; offeredT38Only?: boolean }
  /** It rang for the trunk's ring timeout, we sent CANCEL; `response` is the 487, if it came. */
  | { kind: "ring_timeout"; ringSeconds: number; response?: SipResponse | null }
  /** No final response to the INVITE at all (SIP timer B), or no transport to the proxy. */
  | { kind: "no_response"; detail: string }
  /** The far end refused T.38 and the call could not go on as audio. */
  | { kind: "t38_refused"; response: SipResponse | null; detail?: string }
  /** The media layer heard a voice or a modem that is no fax. */
  | { kind: "voice_answer"; detail: string }
  /** The fax engine reached phase E. `sipCause` adds what SIP said (a BYE's Q.850 cause). */
  | { kind: "fax_completed"; completionCode: number | T30ErrName; progress: FaxProgress; sipCause?: string | null }
  /** The far end hung up (BYE) before any fax engine ran. */
  | { kind: "remote_hangup"; progress: FaxProgress; detail: string }
  /** The call watchdog gave up (call-watchdog.ts). */
  | { kind: "watchdog"; phase: CallPhase | "call"; progress: FaxProgress; rawCause: string }
  /** The process that ran the fax engine died or hung during the fax (media-host/media-host.ts). */
  | { kind: "engine_lost"; phase: CallPhase; progress: FaxProgress; detail: string };

export interface CallContext {
  /** Pages of the fax image being sent. */
  pagesTotal: number;
  /** What carried the fax when it ended; null when no fax exchange began. */
  transport: FaxTransport | null;
}

export interface CallOutcome {
  result: "delivered" | "failed";
  /** Null when delivered. */
  reasonCode: FailureReasonCode | null;
  /** The contract's recipient status: OK, or the failure reason's status. */
  status: string;
  category: FailureCategory | null;
  retryClass: RetryClass | null;
  /** SIP response / Q.850 cause / T30_ERR name and text, as said; null when delivered cleanly. */
  rawCause: string | null;
  sipStatus: number | null;
  q850Cause: number | null;
  t30: { code: number | null; name: string } | null;
  /** Pages the receiver confirmed. */
  pagesDelivered: number;
  /** The next attempt to this destination should step down the fallback ladder. */
  advancesLadder: boolean;
}

function failed(
  reasonCode: FailureReasonCode,
  rawCause: string,
  extra: { pagesDelivered?: number; sip?: SipResponse | null; t30?: { code: number | null; name: string } | null; advancesLadder?: boolean },
): CallOutcome {
  const reason = failureReason(reasonCode);
  return {
    result: "failed",
    reasonCode,
    status: reason.status,
    category: reason.category,
    retryClass: reason.retryClass,
    rawCause,
    sipStatus: extra.sip?.status ?? null,
    q850Cause: extra.sip?.q850Cause ?? null,
    t30: extra.t30 ?? null,
    pagesDelivered: extra.pagesDelivered ?? 0,
    advancesLadder: extra.advancesLadder ?? reason.retryClass === "protocol",
  };
}

function delivered(pages: number, rawCause: string | null, t30: { code: number | null; name: string } | null): CallOutcome {
  return {
    result: "delivered",
    reasonCode: null,
    status: DELIVERED_STATUS,
    category: null,
    retryClass: null,
    rawCause,
    sipStatus: null,
    q850Cause: null,
    t30,
    pagesDelivered: pages,
    advancesLadder: false,
  };
}

function pagesNote(progress: FaxProgress, pagesTotal: number): string {
  return `${progress.pagesConfirmed} of ${pagesTotal} page${pagesTotal === 1 ? "" : "s"} confirmed`;
}

/** The outcome of a call: reason, status, retry class, raw cause, pages, and whether to step down the ladder. */
export function outcomeOfCall(end: CallEnd, context: CallContext): CallOutcome {
  const { pagesTotal } = context;
  switch (end.kind) {
    case "rejected": {
      const verdict = classifySipResponse(end.response, {
        request: "invite",
        cancelledByUs: end.cancelledByUs ?? false,
        credentialsSent: end.credentialsSent ?? true,
        offeredT38Only: end.offeredT38Only ?? false,
      });
      if (verdict.kind === "failed") return failed(verdict.reasonCode, verdict.rawCause, { sip: end.response, advancesLadder: false });
      if (verdict.kind === "t38_fallback") return failed("t38_refused", verdict.rawCause, { sip: end.response });
      // A 1xx/2xx/challenge is not how a call ends: the line must not report it as one.
      throw new RangeError(`outcomeOfCall: ${verdict.rawCause} does not end a call (${verdict.kind})`);
    }
    case "ring_timeout": {
      const answer = end.response ? ` (${describeSipResponse(end.response)})` : " (no 487 followed)";
      return failed("no_answer", `CANCEL after ${Math.round(end.ringSeconds)} s of ringing${answer}`, { sip: end.response ?? null, advancesLadder: false });
    }
    case "no_response":
      return failed("call_failed", end.detail, { advancesLadder: false });
    case "t38_refused":
      return failed("t38_refused", end.response ? `${describeSipResponse(end.response)} to the T.38 re-INVITE; ${end.detail ?? "the call could not go on as audio"}` : (end.detail ?? "T.38 refused"), {
        sip: end.response,
      });
    case "voice_answer":
      return failed("not_a_fax", end.detail, { advancesLadder: false });
    case "remote_hangup":
    case "fax_completed":
    case "watchdog":
      return faxOutcome(end, context, pagesTotal);
    case "engine_lost": {
      // Our fault, not the line's: never a step down the ladder. Pages the receiver confirmed
      // before are counted; all of them confirmed, the fax is delivered.
      if (pagesTotal > 0 && end.progress.pagesConfirmed >= pagesTotal) return delivered(pagesTotal, end.detail, null);
      return failed("engine_lost", `${end.detail}; ${pagesNote(end.progress, pagesTotal)}`, {
        pagesDelivered: Math.min(end.progress.pagesConfirmed, pagesTotal),
        advancesLadder: false,
      });
    }
  }
}

function faxOutcome(
  end: Extract<CallEnd, { kind: "fax_completed" | "remote_hangup" | "watchdog" }>,
  context: CallContext,
  pagesTotal: number,
): CallOutcome {
  const { progress } = end;
  const pagesDelivered = Math.min(progress.pagesConfirmed, pagesTotal);
  const allConfirmed = pagesTotal > 0 && progress.pagesConfirmed >= pagesTotal;

  if (end.kind === "watchdog") {
    if (allConfirmed) return delivered(pagesTotal, end.rawCause, null);
    const reasonCode = watchdogReason(end.phase, progress);
    // A hang in the fax exchange is the noisy-line case the ladder is for.
    const advancesLadder = reasonCode !== "no_answer" && reasonCode !== "call_failed";
    return failed(reasonCode, `${end.rawCause}; ${pagesNote(progress, pagesTotal)}`, { pagesDelivered, advancesLadder });
  }

  if (end.kind === "remote_hangup") {
    if (allConfirmed) return delivered(pagesTotal, end.detail, null);
    const { rule: dropRule } = t30Rule("T30_ERR_CALLDROPPED");
    const reasonCode = reasonForT30(dropRule, progress)!;
    return failed(reasonCode, `${end.detail}; ${pagesNote(progress, pagesTotal)}`, { pagesDelivered });
  }

  const { name, code, rule } = t30Rule(end.completionCode);
  const t30 = { code, name };
  const text = describeT30(end.completionCode) + (end.sipCause ? `; ${end.sipCause}` : "");
  if (rule.kind === "ok") {
    if (allConfirmed || pagesTotal === 0) return delivered(pagesTotal, null, t30);
    // Phase E said OK, yet pages are missing: never report a fax delivered that was not.
    const reasonCode = progress.pagesConfirmed > 0 ? "partial_transmission" : "transmission_failed";
    return failed(reasonCode, `${text}, but only ${pagesNote(progress, pagesTotal)}`, { pagesDelivered, t30 });
  }
  if (allConfirmed && rule.kind !== "local_image") {
    // Every page confirmed; only the goodbye went wrong.
    return delivered(pagesTotal, `${text}, after all pages were confirmed`, t30);
  }
  const reasonCode = reasonForT30(rule, progress)!;
  // Silence after a switch to T.38: the gateway may not carry T.38 at all, so the next try goes down a rung.
  const advancesLadder = failureReason(reasonCode).retryClass === "protocol" || (rule.kind === "no_fax_signal" && context.transport === "t38");
  return failed(reasonCode, `${text}; ${pagesNote(progress, pagesTotal)}`, { pagesDelivered, t30, advancesLadder });
}

function watchdogReason(phase: CallPhase | "call", progress: FaxProgress): FailureReasonCode {
  switch (phase) {
    case "setup":
      return "call_failed";
    case "ringing":
      return "no_answer";
    case "answered":
      return progress.disReceived ? "fax_negotiation_failed" : "fax_timeout";
    case "phase_b":
      return reasonForT30(rule("protocol", "before"), progress)!;
    case "phase_c":
    case "phase_d":
    case "phase_e":
      return reasonForT30(rule("protocol", "transfer"), progress)!;
    case "call":
      if (progress.transferStarted || progress.pagesConfirmed > 0) return reasonForT30(rule("protocol", "transfer"), progress)!;
      return progress.disReceived ? "fax_negotiation_failed" : "fax_timeout";
  }
}

/** The Line's AttemptOutcome for a call outcome, with the facts only the line knows. */
export function toAttemptOutcome(
  outcome: CallOutcome,
  facts: { durationSecs: number; remoteCsid: string | null; bitRate: number; sentToNumber?: string; dialled?: boolean },
): AttemptOutcome {
  const dialled = facts.sentToNumber !== undefined ? { sentToNumber: facts.sentToNumber } : {};
  if (outcome.result === "delivered") {
    return {
      result: "delivered",
      pagesSent: outcome.pagesDelivered,
      durationSecs: facts.durationSecs,
      remoteCsid: facts.remoteCsid ?? "",
      bitRate: facts.bitRate,
      ...dialled,
    };
  }
  return {
    result: "failed",
    reasonCode: outcome.reasonCode!,
    pagesSent: outcome.pagesDelivered,
    durationSecs: facts.durationSecs,
    remoteCsid: facts.remoteCsid,
    rawCause: outcome.rawCause,
    ...dialled,
    ...(facts.dialled === false ? { dialled: false } : {}),
  };
}

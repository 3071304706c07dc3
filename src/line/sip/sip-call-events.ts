/**
 * What a `SipCall` reports to its caller: typed events, and the outcome it ends with.
 *
 * Event order for a fax call: `provisional`* → `answered` → (`t38Switched` | `t38Refused`)? →
 * (`sessionRefreshed` | `mediaChanged`)* → `remoteBye`? → `ended`. A call that is never answered
 * goes `provisional`* → `failed` → `ended`. `ended` is always the last event and carries the
 * same outcome `SipCall.outcome` resolves with. Failures are data (house style §10.5): the
 * outcome is never a rejection.
 */
import type { AudioMedia, NegotiatedMedia, T38Media } from "./sdp.ts";

/** Where the call was when it failed. */
export const SipFailurePhase = {
  /** Before the call was answered: a final non-2xx to the INVITE, ring timeout, no response. */
  Ring: "ring",
  /** The 2xx came but the call could not be used (no SDP answer, no codec in common). */
  Answer: "answer",
  /** A re-INVITE ended the dialog (408, 481, timeout, transport error, no ACK for our 2xx). */
  Reinvite: "reinvite",
} as const;
export type SipFailurePhase = (typeof SipFailurePhase)[keyof typeof SipFailurePhase];

export const SipFailureCause = {
  /** The far end (or a proxy) answered with a final error response. */
  Rejected: "rejected",
  /** Our ring timer ran out; we sent CANCEL (the 487 that followed is in `sipStatus`). */
  RingTimeout: "ring_timeout",
  /** Our caller hung up (or aborted) before the answer; we sent CANCEL. */
  Cancelled: "cancelled",
  /** No final response within 64*T1 (RFC 3261 §8.1.3.1: treated as 408). */
  Timeout: "timeout",
  /** The request could not be sent (RFC 3261 §8.1.3.1: treated as 503). */
  Transport: "transport",
  /** A 401/407 we had no credentials for, or a second challenge after we answered one. */
  Auth: "auth",
  /** The answer's SDP had no stream we can use. */
  Media: "media",
  /** The far end never ACKed our 2xx to its re-INVITE (RFC 3261 §13.3.1.4). */
  NoAck: "no_ack",
} as const;
export type SipFailureCause = (typeof SipFailureCause)[keyof typeof SipFailureCause];

/** A `Reason` header (RFC 3326), e.g. `Q.850;cause=17;text="User busy"`. */
export interface SipReason {
  protocol: string;
  cause: number | null;
  text: string | null;
}

export interface SipCallFailure {
  result: "failed";
  /** The SIP status that ended the call; 408 for a timeout, 503 for a transport error, null when none applies. */
  sipStatus: number | null;
  reasonPhrase: string;
  phase: SipFailurePhase;
  cause: SipFailureCause;
  /** The far end's Reason header (Q.850 cause), when it sent one. */
  reason: SipReason | null;
  /** Whether the call had been answered (phase "answer" or "reinvite"). */
  answered: boolean;
  /** Whether we had answered a digest challenge on this call: a further 401/407 means the credentials were refused. */
  credentialsSent: boolean;
  /** INVITE sent to 2xx, ms; null when never answered. */
  setupMs: number | null;
}

export interface SipCallCompleted {
  result: "completed";
  endedBy: "local" | "remote";
  /** INVITE sent to 2xx received, ms. */
  setupMs: number;
  /** 2xx received to BYE, ms. */
  connectedMs: number;
  /** The far end's Reason header on its BYE, when it sent one. */
  reason: SipReason | null;
}

export type SipCallOutcome = SipCallCompleted | SipCallFailure;

export type SipCallEvent =
  | { type: "provisional"; sipStatus: number; reasonPhrase: string; earlyMedia: NegotiatedMedia | null }
  | { type: "answered"; media: NegotiatedMedia; setupMs: number }
  | { type: "t38Switched"; media: T38Media; initiatedBy: "local" | "remote" }
  /** Our T.38 re-INVITE was refused (488/415/606, or another non-2xx, or the stream rejected in a 2xx): stay on audio. */
  | { type: "t38Refused"; sipStatus: number; reasonPhrase: string; media: AudioMedia }
  /** The far end changed the media (new address or port, back to audio, new T.38 parameters). */
  | { type: "mediaChanged"; media: NegotiatedMedia }
  /** A re-INVITE or UPDATE that left the media as it was (a session refresh). */
  | { type: "sessionRefreshed"; method: "INVITE" | "UPDATE"; sdpChanged: boolean }
  /** The far end sent OPTIONS (a keep-alive) or INFO inside the dialog; we answered 200. */
  | { type: "requestReceived"; method: "OPTIONS" | "INFO" }
  | { type: "remoteBye"; reason: SipReason | null }
  | { type: "failed"; failure: SipCallFailure }
  | { type: "ended"; outcome: SipCallOutcome };

export type SipCallEventType = SipCallEvent["type"];
export type SipCallEventOf<K extends SipCallEventType> = Extract<SipCallEvent, { type: K }>;

/** The result of `SipCall.switchToT38()`. */
export type T38SwitchResult =
  | { result: "switched"; media: T38Media }
  | { result: "refused"; sipStatus: number; reasonPhrase: string; media: AudioMedia }
  /** The call ended (or was not answered) before the switch could complete. */
  | { result: "ended" };

export function parseReasonHeader(value: string | undefined): SipReason | null {
  if (value === undefined) return null;
  const m = /^\s*([^;\s]+)\s*(.*)$/.exec(value);
  if (m === null) return null;
  const cause = /;\s*cause\s*=\s*(\d+)/i.exec(m[2]!);
  const text = /;\s*text\s*=\s*"((?:[^"\\]|\\.)*)"/i.exec(m[2]!);
  return { protocol: m[1]!, cause: cause !== null ? Number(cause[1]) : null, text: text !== null ? text[1]!.replace(/\\(.)/g, "$1") : null };
}

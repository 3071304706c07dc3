/**
 * What the SIP line drops, and why: every message that gets no answer of ours, or only part of
 * one, is counted here under one reason (`faxline_sip_messages_dropped_total{reason}`), and one
 * listener (the line's logger) hears about it. The counts are plain numbers the metrics read.
 *
 * Reasons:
 *  - `unparsable`: not a SIP message (no start line, no end of headers, garbage bytes), or a
 *    request whose top Via cannot be read, so no answer can be routed (RFC 3261 §18.2.1).
 *  - `bad_response`: a response that does not parse or lacks the headers that match it to a
 *    transaction; responses are never answered.
 *  - `unroutable_response`: an answer we made whose destination is not a usable address and
 *    port (a Via naming port 0 or 70000, §18.2.2); it is dropped instead of sent.
 *  - `send_failed`: the socket refused a message (an address the kernel will not send to), or
 *    an INVITE cannot be answered because the TCP/TLS connection it came over has closed.
 *  - `rate_limited`: over the per-source bound on requests or new INVITEs.
 *  - `refused_source`: a source that is no trunk's, past its small budget of 403s.
 *  - `locked_out`: a source locked out after repeated wrong digest answers.
 *  - `connection_limit`: a TCP/TLS connection over the per-source or total bound, closed at once.
 *  - `stream_framing`: a TCP/TLS stream whose framing broke (§18.3); the connection is closed.
 *  - `idle_connection`: a TCP/TLS connection closed after its idle time.
 *  - `internal`: a fault of Faxline's own while handling the message (logged with its stack);
 *    a request still gets 500 when it can be answered.
 */
export const SIP_DROP_REASONS = [
  "unparsable",
  "bad_response",
  "unroutable_response",
  "send_failed",
  "rate_limited",
  "refused_source",
  "locked_out",
  "connection_limit",
  "stream_framing",
  "idle_connection",
  "internal",
] as const;
export type SipDropReason = (typeof SIP_DROP_REASONS)[number];

export interface SipDrop {
  reason: SipDropReason;
  /** Where the message came from, or where an answer would have gone. */
  remote: { address: string; port: number } | null;
  protocol: "udp" | "tcp" | "tls";
  /** For people: what was wrong. */
  detail: string;
  /** `internal` only: the error. */
  error?: unknown;
}

/** Counts per reason, and the listener that logs each drop. */
export class SipDropCounter {
  readonly counts: Record<SipDropReason, number> = Object.fromEntries(SIP_DROP_REASONS.map((r) => [r, 0])) as Record<SipDropReason, number>;
  #listener: ((drop: SipDrop) => void) | null = null;

  onDrop(listener: (drop: SipDrop) => void): void {
    this.#listener = listener;
  }

  drop(drop: SipDrop): void {
    this.counts[drop.reason]++;
    try {
      this.#listener?.(drop);
    } catch {
      // A listener's fault must not turn a drop into a crash.
    }
  }

  get total(): number {
    let sum = 0;
    for (const reason of SIP_DROP_REASONS) sum += this.counts[reason];
    return sum;
  }
}

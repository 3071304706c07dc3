/**
 * SIP session timers (RFC 4028): the headers and the decisions, without timers or I/O. A call
 * (session-refresh.ts) keeps one `SessionTimer` and runs its two clocks: when we are the refresher, a
 * refresh (UPDATE, or a re-INVITE with the same SDP) at half the interval; when the far end is,
 * a BYE if no refresh came before the session expires (§10: the interval minus a third, at most
 * 32 s before its end).
 *
 * Headers: `Session-Expires: 1800;refresher=uac`, `Min-SE: 90`, `Supported: timer`,
 * `Require: timer`; `refresher` names the side by its role in the transaction that carried it.
 */
import type { SipHeaders } from "./sip-message.ts";

/** RFC 4028 §4: the smallest interval allowed unless a Min-SE says more. */
export const DEFAULT_MIN_SE_SECONDS = 90;

export interface SessionExpires {
  seconds: number;
  refresher: "uac" | "uas" | null;
}

/** A running session timer: its interval and who refreshes, `local` (we) or `remote`. */
export interface SessionTimer {
  seconds: number;
  refresher: "local" | "remote";
}

/** Reads Session-Expires (the parser has turned a compact `x` into it); null when absent or unreadable. */
export function readSessionExpires(headers: SipHeaders): SessionExpires | null {
  const value = headers.get("session-expires");
  if (value === undefined) return null;
  const m = /^\s*(\d{1,10})\s*(?:;(.*))?$/.exec(value);
  if (m === null) return null;
  const seconds = Number(m[1]);
  if (!(seconds > 0)) return null;
  const refresher = /(?:^|;)\s*refresher\s*=\s*(uac|uas)\b/i.exec(m[2] ?? "")?.[1]?.toLowerCase() ?? null;
  return { seconds, refresher: refresher as "uac" | "uas" | null };
}

/** Reads Min-SE; null when absent or unreadable. */
export function readMinSe(headers: SipHeaders): number | null {
  const m = /^\s*(\d{1,10})/.exec(headers.get("min-se") ?? "");
  return m === null ? null : Number(m[1]);
}

/** Whether a Supported or Require header lists `option`. */
export function listsOption(headers: SipHeaders, name: "supported" | "require", option: string): boolean {
  return headers.getAll(name).some((v) => v.split(",").some((o) => o.trim().toLowerCase() === option));
}

/**
 * The timer a 2xx to our INVITE (or to our refresh) sets up, we being the UAC of that
 * transaction (§7.2): refresher=uac (or none given) is us. Null when the 2xx has no
 * Session-Expires: no session timer.
 */
export function timerFromResponse(headers: SipHeaders): SessionTimer | null {
  const se = readSessionExpires(headers);
  if (se === null) return null;
  return { seconds: se.seconds, refresher: se.refresher === "uas" ? "remote" : "local" };
}

export type TimerAnswer =
  | { ok: true; timer: SessionTimer | null; headers: [string, string][] }
  /** The interval is below our minimum: answer 422 with `Min-SE: minSe`. */
  | { ok: false; minSe: number };

/**
 * What we answer to a request that asks for a session timer, we being its UAS (§9): the INVITE
 * of a call we answer, or the far end's refresh. A caller that supports timers keeps the role it
 * asked for (the UAC refreshes when it named none); one that does not (a proxy added the header)
 * leaves the refreshing to us. No Session-Expires: no timer (it is switched off).
 */
export function answerTimerRequest(headers: SipHeaders, minSe: number): TimerAnswer {
  const se = readSessionExpires(headers);
  if (se === null) return { ok: true, timer: null, headers: [] };
  if (se.seconds < minSe) return { ok: false, minSe };
  const supports = listsOption(headers, "supported", "timer");
  const refresher = supports ? (se.refresher ?? "uac") : "uas";
  const out: [string, string][] = [["session-expires", `${se.seconds};refresher=${refresher}`]];
  if (supports) out.push(["require", "timer"]);
  return { ok: true, timer: { seconds: se.seconds, refresher: refresher === "uas" ? "local" : "remote" }, headers: out };
}

/** When the refresher refreshes: half the interval (§10). */
export function refreshDelayMs(timer: SessionTimer): number {
  return (timer.seconds * 1000) / 2;
}

/** When the other side gives the session up without a refresh: a third (at most 32 s) before its end (§10). */
export function expiryDelayMs(timer: SessionTimer): number {
  return (timer.seconds - Math.min(32, timer.seconds / 3)) * 1000;
}

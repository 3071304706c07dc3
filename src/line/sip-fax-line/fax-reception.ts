/**
 * One fax received over SIP, from the far end's INVITE to the BYE: the receiving counterpart of
 * fax-call.ts. The line (sip-fax-line.ts) has already checked the caller and the number and
 * chosen where the image goes; this answers, receives and says what arrived.
 *
 * The call:
 *  1. A pair of media ports is bound and the INVITE answered (180, then 200 with our SDP answer):
 *     G.711 audio, or T.38 straight away when the caller offered it and the trunk allows it.
 *  2. On audio with T.38 allowed, the caller usually re-INVITEs to T.38 when it hears our CED or
 *     DIS (we accept); if it has not after `t38ReinviteDelayMs`, we re-INVITE ourselves. A refusal
 *     (488/415/606) leaves the fax on G.711 in the same call.
 *  3. The engine runs as the called terminal in receive mode (CED, DIS, then DCS, pages, MCF …)
 *     and writes every page that arrives to `tiffPath` as SpanDSP received it (T.4 1-D, T.4 2-D
 *     or T.6, one IFD per page, the far end's resolution and width).
 *  4. Phase E, the caller's BYE or the whole-call limit ends it; we hang up if the caller has not.
 *     The pages kept are those the engine finished: a fax broken off in page 3 keeps pages 1–2.
 *
 * Time: as in fax-call.ts, SIP on the wall clock, the engine at `speed` (1 for real callers).
 */
import type { AudioMedia, T38Media } from "../sip/sdp.ts";
import type { SipCallOutcome } from "../sip/sip-call-events.ts";
import type { SipCall } from "../sip/sip-call.ts";
import type { IncomingInvite } from "../sip/sip-user-agent.ts";
import type { EngineEvent, PhaseEEvent, TransferStatistics } from "../fax-engine/engine.ts";
import { describeT30Completion } from "../fax-engine/t30-completion-codes.ts";
import type { FaxMediaResult } from "../media-host/fax-media.ts";
import type { RtcpStats } from "../media/rtcp.ts";
import { DEFAULT_WATCHDOG_LIMITS } from "../outcomes/call-watchdog.ts";
import type { DurablePages } from "../media-host/fax-media.ts";
import { readJson, type ReceptionProgress } from "../reception-spool/reception-spool.ts";
import { followCall, startFaxMedia, waitForT38, type FaxCallSetup } from "./fax-call.ts";

export interface ReceptionInput {
  invite: IncomingInvite;
  /** Accept or ask for T.38 (the trunk's `t38`). */
  t38: boolean;
  /** Offer error correction (the trunk's `ecm`). */
  ecm: boolean;
  /** Our fax id, sent as CSI: at most 20 printable ASCII characters. */
  csid: string;
  /** Where the engine writes the pages. */
  tiffPath: string;
  /**
   * Receive durably (reception-spool/): each page is fsynced with the spool's progress file before
   * its MCF goes out, and the report counts only such pages (a page that cannot be kept ends the call).
   */
  durable?: DurablePages;
  /** 180 Ringing this long before the 200, ms. */
  answerDelayMs: number;
  /** Whole-call limit, ms of the call's own time. */
  maxCallMs: number;
  signal?: AbortSignal;
  onEngineEvent?: (event: EngineEvent) => void;
}

export type ReceptionStatus = "OK" | "PARTIAL" | "FAILED";

export interface ReceptionReport {
  /** Our 200 was ACKed. */
  answered: boolean;
  /** OK: phase E with T30_ERR_OK after at least one page; PARTIAL: pages arrived but the fax broke off; FAILED: no page. */
  status: ReceptionStatus;
  /** Pages kept in `tiffPath` (receiving durably: the first this many, each whole and fsynced; more may follow in the file). */
  pages: number;
  /** The sender's TSI, trimmed; null when none came. */
  remoteCsid: string | null;
  /** From the pages' vertical resolution (≥ 150 lines/inch: HIGH); null without pages. */
  resolution: "HIGH" | "LOW" | null;
  /** What carried the fax; null when no fax exchange began. */
  transport: "t38" | "g711" | null;
  bitRate: number;
  ecm: boolean;
  /** The compression of the last page on the line (T.4 1-D = MH, T.4 2-D = MR, T.6 = MMR); null without pages. */
  encoding: string | null;
  /** `T30_ERR_*` at phase E; null when the engine never got there. */
  completion: string | null;
  /**
   * Why it is not OK when Faxline itself ended it: `spool_failed` (a page could not be kept on the
   * node's disk), `node_stopped` (stored from the spool after the node restarted). Else absent.
   */
  reasonCode?: "spool_failed" | "node_stopped";
  /** Why it is not OK, for people: the T.30 completion, or how the call ended. Null when OK. */
  rawCause: string | null;
  /** Answer to hang-up in the call's own time, whole seconds; 0 when not answered. */
  durationSecs: number;
  /** How the SIP side ended; null when the INVITE was gone before we could answer it (cancelled). */
  sip: SipCallOutcome | null;
  /** G.711 calls: the RTCP exchanged (what the caller reported of our audio). */
  rtcp?: RtcpStats;
}

/** A reception without a fax: FAILED, no page. */
function nothingReceived(rawCause: string, answered: boolean, durationSecs: number, sip: SipCallOutcome | null): ReceptionReport {
  return { answered, status: "FAILED", pages: 0, remoteCsid: null, resolution: null, transport: null, bitRate: 0, ecm: false, encoding: null, completion: null, rawCause, durationSecs, sip };
}

/**
 * Answers and receives one fax; see the module comment. Once the call is answered, every ending
 * (the caller's BYE, a media or engine fault) is a report; it throws only before the answer
 * (NoFreeMediaPortError, a transport that cannot open) and for faults of its own.
 */
export async function receiveFaxCall(setup: FaxCallSetup, input: ReceptionInput): Promise<ReceptionReport> {
  const now = setup.now ?? (() => performance.now());
  const limits = setup.watchdogLimits ?? DEFAULT_WATCHDOG_LIMITS;
  const ports = await setup.ports.acquire();
  let call: SipCall | null = null;
  const onAbort = (): void => void call?.hangup();
  input.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    call = await setup.ua.answerCall(input.invite, {
      t38: input.t38,
      // Twice the sending side's delay: a Faxline sender (or a gateway) usually switches first, and two
      // re-INVITEs crossing (491) would cost both ends seconds of back-off.
      t38ReinviteDelayMs: input.t38 ? 2 * setup.t38ReinviteDelayMs : null,
      localMedia: { address: setup.mediaAddress, audioPort: ports.audioPort, t38Port: ports.t38Port },
      answerDelayMs: input.answerDelayMs,
    });
    if (call === null) return nothingReceived("Not answered: the caller cancelled while the call was being checked, its TCP/TLS connection closed, or the node is stopping", false, 0, null);
    const answeredCall = call;
    const notReceived = async (rawCause: string, answered: boolean, answeredAt: number | null): Promise<ReceptionReport> => {
      const sip = await answeredCall.hangup();
      return nothingReceived(rawCause, answered, answeredAt !== null ? Math.max(1, Math.round((now() - answeredAt) / 1000)) : 0, sip);
    };
    const answered = await answeredCall.next("answered", { includePast: true });
    if (answered === null) {
      const sip = await answeredCall.outcome;
      const why = sip.result === "failed" ? `${sip.sipStatus ?? ""} ${sip.reasonPhrase}`.trim() : "the call ended";
      return { ...(await notReceived(`Not answered: ${why}`, false, null)), sip };
    }
    const answeredAt = now();
    let faxMedia: { kind: "t38"; media: T38Media } | { kind: "audio"; media: AudioMedia };
    if (answered.media.kind === "t38") {
      faxMedia = { kind: "t38", media: answered.media };
    } else if (input.t38) {
      const waited = await waitForT38(answeredCall, limits.answeredMs);
      if (waited.kind === "ended") return notReceived("The caller hung up before the fax began", true, answeredAt);
      if (waited.kind === "timeout") {
        return notReceived(`No switch to T.38 within ${Math.round(limits.answeredMs / 1000)} s of the answer (neither the caller's re-INVITE nor an answer to ours); Faxline hung up`, true, answeredAt);
      }
      faxMedia = waited.kind === "t38" ? { kind: "t38", media: waited.media } : { kind: "audio", media: waited.media };
    } else {
      faxMedia = { kind: "audio", media: answered.media };
    }

    const faxStartedAt = now();
    let phaseE: PhaseEEvent | null = null;
    let lastStatistics: TransferStatistics | null = null;
    let engineSeconds = 0;
    let faultAfterAnswer: string | null = null;
    const sessionOptions = { mode: "receive" as const, calling: false, tiffPath: input.tiffPath, localIdent: input.csid, ecm: input.ecm };
    const run = startFaxMedia(
      setup,
      ports,
      faxMedia,
      sessionOptions,
      Math.ceil(input.maxCallMs / 1000),
      (event, statistics) => {
        if (statistics !== null) lastStatistics = statistics;
        if (event.type === "phaseE") phaseE = event;
        input.onEngineEvent?.(event);
      },
      input.durable,
    );
    const stopListening = followCall(answeredCall, run, () => run.stop());
    if (answeredCall.state === "terminated") run.stop();
    // The line's own abort (the node stopping): the fax ends here, and what arrived is kept.
    const onOuterAbort = (): void => run.stop();
    input.signal?.addEventListener("abort", onOuterAbort, { once: true });
    let result: FaxMediaResult | null = null;
    try {
      result = await run.result;
      engineSeconds = result.engineSeconds;
    } catch (error) {
      // The media or the engine failed after we answered (its process lost, for one): the call
      // is answered, so what arrived so far is kept and reported, never dropped.
      faultAfterAnswer = error instanceof Error ? error.message : String(error);
      engineSeconds = ((now() - faxStartedAt) * setup.speed) / 1000;
    } finally {
      stopListening();
      input.signal?.removeEventListener("abort", onOuterAbort);
    }
    // After the result the session is closed: the pages are on disk. A lost engine's file has
    // the pages it finished (each written at its end of page); its statistics are the last known.
    const statistics: TransferStatistics | null = result?.statistics ?? lastStatistics;
    const sip = await answeredCall.hangup();
    let pages = statistics?.pagesRx ?? 0;
    let spoolFault: string | null = null;
    if (input.durable !== undefined) {
      // Only the pages made durable count; a lost media process's are in its progress file.
      if (result?.durable !== undefined) ({ pages, fault: spoolFault } = result.durable);
      else pages = (await readJson<ReceptionProgress>(input.durable.progressPath).catch(() => null))?.pages ?? 0;
    }
    const ended = phaseE as PhaseEEvent | null;
    const ok = ended !== null && ended.name === "T30_ERR_OK" && pages > 0 && spoolFault === null;
    const status: ReceptionStatus = ok ? "OK" : pages > 0 ? "PARTIAL" : "FAILED";
    let rawCause: string | null = null;
    if (!ok) {
      if (spoolFault !== null) rawCause = `Faxline ended the call: ${spoolFault}; ${pages} page${pages === 1 ? "" : "s"} kept`;
      else if (faultAfterAnswer !== null) rawCause = `Faxline could not run the fax after answering: ${faultAfterAnswer}; ${pages} page${pages === 1 ? "" : "s"} received`;
      else if (ended !== null) rawCause = describeT30Completion(ended.completionCode);
      else if (sip.result === "completed" && sip.endedBy === "remote") rawCause = `The caller hung up (BYE) before the fax ended; ${pages} page${pages === 1 ? "" : "s"} received`;
      else rawCause = `The call ended before the fax did (${sip.result === "failed" ? sip.reasonPhrase : `whole-call limit ${Math.round(input.maxCallMs / 1000)} s`}); ${pages} page${pages === 1 ? "" : "s"} received`;
    }
    const durationMs = faxStartedAt - answeredAt + engineSeconds * 1000;
    return {
      answered: true,
      status,
      pages,
      remoteCsid: statistics?.remoteIdent ? statistics.remoteIdent : null,
      resolution: pages > 0 && statistics !== null ? (statistics.yDpi >= 150 ? "HIGH" : "LOW") : null,
      transport: faxMedia.kind === "t38" ? "t38" : "g711",
      bitRate: statistics?.bitRate ?? 0,
      ecm: statistics?.ecm ?? false,
      encoding: pages > 0 && statistics !== null && statistics.encoding !== "none" ? statistics.encoding : null,
      completion: ended?.name ?? null,
      rawCause,
      durationSecs: Math.max(1, Math.round(durationMs / 1000)),
      sip,
      ...(result?.media.rtcp !== undefined ? { rtcp: result.media.rtcp } : {}),
      ...(spoolFault !== null ? { reasonCode: "spool_failed" as const } : {}),
    };
  } catch (error) {
    if (call !== null && call.state !== "terminated") await call.hangup().catch(() => undefined);
    throw error;
  } finally {
    input.signal?.removeEventListener("abort", onAbort);
    ports.release();
  }
}

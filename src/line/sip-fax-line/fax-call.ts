/**
 * One fax call over SIP, from the INVITE to the BYE: the part of the SIP line that ties the
 * user agent (sip/), the fax engine with its media sockets (media-host/: in the node's media
 * process, or inline) and the outcome tables (outcomes/) together. The line (sip-fax-line.ts) chooses the route and the fax mode and
 * writes the image file; this runs the call and says how it ended.
 *
 * The call:
 *  1. A pair of media ports is bound (media-ports.ts) and the INVITE offers G.711 audio on the
 *     first; T.38 is allowed on the call when the mode's transport is T.38.
 *  2. Not answered: the SIP failure becomes a `CallEnd` (rejected, ring timeout, no response).
 *  3. Answered, T.38 mode: the far end usually re-INVITEs to image/t38 when it hears a fax
 *     (we accept); if it has not after `t38ReinviteDelayMs`, we re-INVITE ourselves. Switched:
 *     the T.38 session runs over UDPTL on the second port, to the address and with the datagram
 *     limit and error correction of the far end's SDP. Refused (488/415/606): the fax goes on as
 *     G.711 audio in the same call, and the attempt reports the refusal for the capability cache.
 *  4. Audio mode (or after a refusal): the audio session runs over RTP on the first port, with
 *     the codec the answer chose, in 20 ms frames.
 *  5. After phase E (and its linger), or when the far end hangs up, or when the watchdog gives
 *     up, or when the media process that ran the engine is lost (`engine_lost`), we hang up; the
 *     engine's completion code, its statistics and what SIP said become the `CallOutcome`
 *     (outcomes/call-outcomes.ts) and the Line's `AttemptOutcome`.
 *
 * Time: SIP runs on the wall clock. The fax engine runs `speed` times faster than the wall (1 in
 * production; tests use a virtual clock with a peer at the same speed), so the call's own time,
 * which the watchdog and the reported duration use, is wall time until the fax starts and engine
 * time from then on.
 *
 * Aborting `signal` (node stopping, lease lost) hangs up and rejects with its reason.
 */
import type { EngineEvent, PhaseEEvent, T30SessionOptions, TransferStatistics } from "../fax-engine/engine.ts";
import { bitRateCap, SAMPLES_PER_SECOND } from "../fax-engine/engine.ts";
import type { AttemptOutcome } from "../line.ts";
import { MediaHostLostError, type DurablePages, type FaxMediaEventHandler, type FaxMediaResult, type FaxMediaRun, type FaxMediaRunner } from "../media-host/fax-media.ts";
import {
  describeSipResponse,
  outcomeOfCall,
  toAttemptOutcome,
  type CallEnd,
  type CallOutcome,
  type FaxTransport,
  type SipResponse,
} from "../outcomes/call-outcomes.ts";
import { callCeilingMs, checkWatchdog, DEFAULT_WATCHDOG_LIMITS, type CallPhase, type WatchdogLimits, type WatchdogVerdict } from "../outcomes/call-watchdog.ts";
import type { FaxMode } from "../outcomes/fallback-ladder.ts";
import type { AudioMedia, T38Media } from "../sip/sdp.ts";
import type { SipCallFailure, SipCallOutcome, SipReason } from "../sip/sip-call-events.ts";
import type { SipCall } from "../sip/sip-call.ts";
import type { SipCredentials } from "../sip/digest-auth.ts";
import type { SipUserAgent } from "../sip/sip-user-agent.ts";
import type { SipTransportChoice } from "../sip/resolve-targets.ts";
import type { TrunkConfig } from "../trunks/trunk-config.ts";
import { FaxProgressTracker } from "./fax-progress.ts";
import type { MediaPortPool } from "./media-ports.ts";

/** Where and how one call goes: from the dial plan, or from `faxline fax send`'s options. */
export interface FaxRoute {
  /** The trunk, or null for a direct call to a SIP URI. */
  trunk: TrunkConfig | null;
  /** Request-URI and To. */
  target: string;
  from: string;
  /** The trunk's transport, or "auto" (DNS chooses, RFC 3263). */
  transport: SipTransportChoice;
  /** host:port every request goes to; absent: the target's host. */
  outboundProxy?: string;
  credentials?: SipCredentials;
  ringTimeoutMs: number;
  /** Our fax id (TSI): at most 20 printable ASCII characters. */
  csid: string;
  /** The number (or URI) actually dialled: the report's sentToNumber. */
  sentToNumber: string;
  /** The destination's E.164 number (the capability cache's key); null for a SIP URI. */
  e164: string | null;
}

/** What every call of a line shares. */
export interface FaxCallSetup {
  ua: SipUserAgent;
  /** Runs the fax engine and its media: in the node's media process, or inline (media-host/). */
  media: FaxMediaRunner;
  ports: MediaPortPool;
  /** The address our SDP names for media. */
  mediaAddress: string;
  /** Engine clock speed: 1 for real far ends (lines.clockSpeed). */
  speed: number;
  /** Re-INVITE to T.38 ourselves when the far end has not this long after the answer, ms. */
  t38ReinviteDelayMs: number;
  /** UDPTL redundancy: secondary IFPs per datagram (ADR 0004: 3). */
  redundancy: number;
  watchdogLimits?: WatchdogLimits;
  /** Monotonic wall clock, ms. (Default: performance.now) */
  now?: () => number;
}

export interface FaxCallInput {
  route: FaxRoute;
  mode: FaxMode;
  /** The TIFF-F file SpanDSP reads. */
  tiffPath: string;
  /** G4 bytes of each page (for the watchdog's ceilings). */
  pageSizes: readonly number[];
  signal?: AbortSignal;
  /** Every engine event as it happens (the CLI prints them). */
  onEngineEvent?: (event: EngineEvent) => void;
  /** SIP progress, for logs and the CLI: "ringing", "answered", "t38", "t38 refused", "fax started". */
  onProgress?: (what: string) => void;
}

export interface FaxCallReport {
  end: CallEnd;
  outcome: CallOutcome;
  /** The Line's outcome, sentToNumber included. */
  attempt: AttemptOutcome;
  /** The mode the call was placed in. */
  mode: FaxMode;
  /** What carried the fax: "g711" after a refused T.38 switch; null when no fax exchange began. */
  transport: FaxTransport | null;
  /** The far end refused our T.38 re-INVITE. */
  t38Refused: boolean;
  statistics: TransferStatistics | null;
  phaseE: PhaseEEvent | null;
  sip: SipCallOutcome;
  /** INVITE to 2xx, ms of wall time; null when not answered. */
  setupMs: number | null;
  media: FaxMediaResult["media"] & { remote?: { address: string; port: number } };
  /** Engine time of the fax exchange, seconds. */
  engineSeconds: number;
  /** Wall time of the whole call, ms. */
  wallMs: number;
  /** The call's duration in its own time (answer to hang-up), whole seconds; 0 when not answered. */
  durationSecs: number;
}

/** SpanDSP's T30_MAX_IDENT_LEN. */
const MAX_IDENT = 20;

/** A fax id SpanDSP takes: printable ASCII, at most 20 characters. */
export function faxIdent(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, "?").slice(0, MAX_IDENT);
}

/** Where in the fax a hang-up came, for the raw cause. */
const PHASE_WORDS: Readonly<Record<CallPhase, string>> = {
  setup: "before the answer",
  ringing: "before the answer",
  answered: "before the receiver's DIS (T.30 phase A)",
  phase_b: "during the negotiation (T.30 phase B)",
  phase_c: "during a page (T.30 phase C)",
  phase_d: "waiting for a page's confirmation (T.30 phase D)",
  phase_e: "during the hang-up (T.30 phase E)",
};

/** Why the fax loop was stopped early. */
class FaxStopped extends Error {
  constructor(
    readonly why: "watchdog" | "call_ended",
    readonly verdict: Extract<WatchdogVerdict, { expired: true }> | null = null,
  ) {
    super(why);
  }
}

function q850(reason: SipReason | null): number | null {
  return reason !== null && reason.protocol.toUpperCase() === "Q.850" ? reason.cause : null;
}

function describeReason(reason: SipReason | null): string {
  if (reason === null) return "";
  const cause = reason.cause !== null ? ` cause ${reason.cause}` : "";
  const text = reason.text !== null ? ` ${reason.text}` : "";
  return ` (${reason.protocol}${cause}${text})`;
}

/**
 * How a call that never got to a fax exchange ended, from the SIP layer's failure.
 * `provisionalSeen`: a 1xx came; a ring timeout without any is silence, not an unanswered call.
 */
export function endOfSipFailure(failure: SipCallFailure, ringTimeoutMs: number, provisionalSeen = true): CallEnd {
  const response: SipResponse | null =
    failure.sipStatus === null ? null : { status: failure.sipStatus, reasonPhrase: failure.reasonPhrase, q850Cause: q850(failure.reason) };
  if (failure.phase === "ring") {
    switch (failure.cause) {
      case "rejected":
      case "auth":
        if (response !== null && response.status >= 300) return { kind: "rejected", response, credentialsSent: failure.cause === "auth" || failure.credentialsSent };
        break;
      case "ring_timeout":
        if (!provisionalSeen) return { kind: "no_response", detail: `No response at all to the INVITE within the ring timeout (${Math.round(ringTimeoutMs / 1000)} s)` };
        return { kind: "ring_timeout", ringSeconds: ringTimeoutMs / 1000, response: failure.sipStatus === 487 ? response : null };
      case "timeout":
        return { kind: "no_response", detail: `No final response to the INVITE (${response ? describeSipResponse(response) : "SIP timer B"})` };
      case "transport":
        return { kind: "no_response", detail: `The INVITE could not be sent: ${failure.reasonPhrase}` };
      default:
        break;
    }
    return { kind: "no_response", detail: `The call was not set up: ${failure.reasonPhrase}${describeReason(failure.reason)}` };
  }
  // Answered, and then the SIP side failed before the fax could run (no usable SDP answer, a
  // re-INVITE that ended the dialog, our 2xx never ACKed).
  const what = response !== null ? describeSipResponse(response) : failure.reasonPhrase;
  if (failure.phase === "answer") return { kind: "no_response", detail: `The call was answered, but ${what}; Faxline hung up` };
  return { kind: "remote_hangup", progress: { pagesConfirmed: 0 }, detail: `The dialog ended on a re-INVITE: ${what}` };
}

type T38Wait = { kind: "t38"; media: T38Media } | { kind: "refused"; sipStatus: number; reasonPhrase: string; media: AudioMedia } | { kind: "ended" } | { kind: "timeout" };

/** Waits for the switch to T.38 (the far end's re-INVITE or ours), its refusal, or the end of the call. */
export function waitForT38(call: SipCall, timeoutMs: number): Promise<T38Wait> {
  const fromEvent = (): T38Wait | null => {
    for (const event of call.events) {
      if (event.type === "t38Switched") return { kind: "t38", media: event.media };
      if (event.type === "t38Refused") return { kind: "refused", sipStatus: event.sipStatus, reasonPhrase: event.reasonPhrase, media: event.media };
      if (event.type === "ended") return { kind: "ended" };
    }
    return null;
  };
  const past = fromEvent();
  if (past !== null) return Promise.resolve(past);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      stop();
      resolve({ kind: "timeout" });
    }, timeoutMs);
    const stop = call.onEvent(() => {
      const result = fromEvent();
      if (result === null) return;
      clearTimeout(timer);
      stop();
      resolve(result);
    });
  });
}

/** Runs one fax call; see the module comment. */
export async function runFaxCall(setup: FaxCallSetup, input: FaxCallInput): Promise<FaxCallReport> {
  const now = setup.now ?? (() => performance.now());
  const limits = setup.watchdogLimits ?? DEFAULT_WATCHDOG_LIMITS;
  const { route, mode, signal } = input;
  const startedAt = now();
  signal?.throwIfAborted();

  const ports = await setup.ports.acquire();
  let call: SipCall | null = null;
  const onAbort = (): void => void call?.hangup();
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    call = setup.ua.placeCall({
      target: route.target,
      from: route.from,
      transport: route.transport,
      ...(route.outboundProxy !== undefined ? { outboundProxy: route.outboundProxy } : {}),
      ...(route.credentials !== undefined ? { credentials: route.credentials } : {}),
      t38: mode.transport === "t38",
      t38ReinviteDelayMs: mode.transport === "t38" ? setup.t38ReinviteDelayMs : null,
      ringTimeoutMs: route.ringTimeoutMs,
      localMedia: { address: setup.mediaAddress, audioPort: ports.audioPort, t38Port: ports.t38Port },
    });
    const placed = call;
    if (input.onProgress) {
      placed.on("provisional", (e) => input.onProgress!(`SIP ${e.sipStatus} ${e.reasonPhrase}`));
      placed.on("t38Switched", (e) => input.onProgress!(`switched to T.38 (${e.initiatedBy === "remote" ? "the far end's re-INVITE" : "our re-INVITE"})`));
      placed.on("t38Refused", (e) => input.onProgress!(`T.38 refused (SIP ${e.sipStatus} ${e.reasonPhrase}); going on as G.711 audio`));
    }

    const answered = await placed.next("answered", { includePast: true });
    signal?.throwIfAborted();
    const report = (
      end: CallEnd,
      sip: SipCallOutcome,
      fax: FaxRun | null,
      extra: { transport?: FaxTransport | null; t38Refused?: boolean; answeredAt?: number | null; faxStartedAt?: number | null; faxEndedAt?: number | null } = {},
    ): FaxCallReport => {
      const endedAt = now();
      const transport = extra.transport ?? null;
      const outcome = outcomeOfCall(end, { pagesTotal: input.pageSizes.length, transport });
      let durationMs = 0;
      if (extra.answeredAt != null) {
        if (fax !== null && extra.faxStartedAt != null && extra.faxEndedAt != null) {
          durationMs = extra.faxStartedAt - extra.answeredAt + fax.engineSeconds * 1000 + (endedAt - extra.faxEndedAt);
        } else {
          durationMs = endedAt - extra.answeredAt;
        }
      }
      const durationSecs = extra.answeredAt != null ? Math.max(1, Math.round(durationMs / 1000)) : 0;
      const remoteCsid = fax?.statistics.remoteIdent ? fax.statistics.remoteIdent : null;
      const attempt = toAttemptOutcome(outcome, {
        durationSecs,
        remoteCsid,
        bitRate: fax?.statistics.bitRate ?? 0,
        sentToNumber: route.sentToNumber,
      });
      return {
        end,
        outcome,
        attempt,
        mode,
        transport,
        t38Refused: extra.t38Refused ?? false,
        statistics: fax?.statistics ?? null,
        phaseE: fax?.phaseE ?? null,
        sip,
        setupMs: sip.setupMs,
        media: fax?.media ?? {},
        engineSeconds: fax?.engineSeconds ?? 0,
        wallMs: endedAt - startedAt,
        durationSecs,
      };
    };

    if (answered === null) {
      const sip = await placed.outcome;
      signal?.throwIfAborted();
      const provisionalSeen = placed.events.some((e) => e.type === "provisional");
      const end = sip.result === "failed" ? endOfSipFailure(sip, route.ringTimeoutMs, provisionalSeen) : ({ kind: "no_response", detail: "The call ended before it was answered" } as const);
      return report(end, sip, null);
    }
    const answeredAt = now();
    input.onProgress?.(`answered after ${answered.setupMs} ms`);

    let faxMedia: { kind: "t38"; media: T38Media } | { kind: "audio"; media: AudioMedia };
    let t38Refused = false;
    if (mode.transport === "t38") {
      const waited = await waitForT38(placed, limits.answeredMs);
      signal?.throwIfAborted();
      if (waited.kind === "ended" || waited.kind === "timeout") {
        const sip = await placed.hangup();
        signal?.throwIfAborted();
        let end: CallEnd;
        if (waited.kind === "timeout") {
          end = {
            kind: "watchdog",
            phase: "answered",
            progress: { pagesConfirmed: 0 },
            rawCause: `Watchdog: no switch to T.38 within ${Math.round(limits.answeredMs / 1000)} s of the answer (neither the far end's re-INVITE nor an answer to ours); Faxline hung up`,
          };
        } else if (sip.result === "failed") {
          end = endOfSipFailure(sip, route.ringTimeoutMs);
        } else {
          end = { kind: "remote_hangup", progress: { pagesConfirmed: 0 }, detail: `The far end hung up (BYE${describeReason(sip.reason)}) before the fax began` };
        }
        return report(end, sip, null, { answeredAt });
      }
      if (waited.kind === "t38") {
        faxMedia = { kind: "t38", media: waited.media };
      } else {
        t38Refused = true;
        faxMedia = { kind: "audio", media: waited.media };
      }
    } else {
      const media = placed.media;
      if (media === null || media.kind !== "audio") throw new Error(`answered call without audio media (${media?.kind ?? "none"})`);
      faxMedia = { kind: "audio", media };
    }

    const faxStartedAt = now();
    input.onProgress?.(faxMedia.kind === "t38" ? "T.38 fax started" : "G.711 fax started");
    const fax = await runFax(setup, input, placed, ports, faxMedia, faxStartedAt - startedAt);
    const faxEndedAt = now();
    signal?.throwIfAborted();
    const sip = await placed.hangup();
    signal?.throwIfAborted();
    const transport: FaxTransport = faxMedia.kind === "t38" ? "t38" : "g711";
    return report(fax.end(sip), sip, fax, { transport, t38Refused, answeredAt, faxStartedAt, faxEndedAt });
  } catch (error) {
    if (call !== null && call.state !== "terminated") await call.hangup().catch(() => undefined);
    if (signal?.aborted) throw signal.reason;
    throw error;
  } finally {
    signal?.removeEventListener("abort", onAbort);
    ports.release();
  }
}

/**
 * Starts the fax engine over the negotiated media (media-host/fax-media.ts): the call's media
 * sockets (T.38: the second port; G.711: the first, with RTCP on the port after it), the far
 * end's address, datagram limit and error correction from its SDP. While it runs, the media
 * follows the far end's new address (a re-INVITE or UPDATE that moved it) and `onEnded` runs when
 * the call ends; the returned function stops following.
 */
export function startFaxMedia(
  setup: Pick<FaxCallSetup, "media" | "redundancy" | "speed">,
  ports: Awaited<ReturnType<MediaPortPool["acquire"]>>,
  faxMedia: { kind: "t38"; media: T38Media } | { kind: "audio"; media: AudioMedia },
  session: T30SessionOptions,
  maxSeconds: number,
  onEvent: FaxMediaEventHandler,
  durable?: DurablePages,
): FaxMediaRun {
  const clock = { speed: setup.speed, maxSeconds };
  const spool = durable !== undefined ? { durable } : {};
  if (faxMedia.kind === "t38") {
    const { media } = faxMedia;
    const maxDatagram = media.params.maxDatagram ?? 400;
    return setup.media.run(
      {
        kind: "t38",
        session: { ...session, t38Version: media.params.version, maxDatagram: Math.max(32, maxDatagram) },
        remote: media.remote,
        maxDatagram,
        redundancy: media.params.errorCorrection === "none" ? 0 : setup.redundancy,
        ...spool,
      },
      { t38: ports.take("t38") },
      clock,
      onEvent,
    );
  }
  const { media } = faxMedia;
  return setup.media.run(
    { kind: "audio", session, remote: media.remote, codec: media.codec, payloadType: media.payloadType, ...spool },
    { audio: ports.take("audio"), rtcp: ports.take("rtcp") },
    clock,
    onEvent,
  );
}

/** Makes a running fax's media follow the far end's address, and calls `onEnded` when the call ends. */
export function followCall(call: SipCall, run: FaxMediaRun, onEnded: () => void): () => void {
  return call.onEvent((event) => {
    if (event.type === "mediaChanged" || event.type === "t38Switched") run.setRemote(event.media.kind === "t38" ? "t38" : "audio", event.media.remote);
    else if (event.type === "ended") onEnded();
  });
}

/** Statistics of a session nothing is known of. */
function emptyStatistics(): TransferStatistics {
  return {
    pagesTx: 0,
    pagesRx: 0,
    pagesInFile: 0,
    bitRate: 0,
    ecm: false,
    ecmRetries: 0,
    encoding: "none",
    width: 0,
    length: 0,
    xDpi: 0,
    yDpi: 0,
    imageBytes: 0,
    badRows: 0,
    longestBadRowRun: 0,
    currentStatus: 0,
    remoteIdent: "",
    localIdent: "",
    samples: 0,
  };
}

interface FaxRun {
  phaseE: PhaseEEvent | null;
  statistics: TransferStatistics;
  engineSeconds: number;
  media: FaxCallReport["media"];
  /** The CallEnd, given how SIP ended. */
  end(sip: SipCallOutcome): CallEnd;
}

/**
 * Runs the fax engine over the negotiated media until phase E, the far end's hang-up or the
 * watchdog. `callStartedAt` is the call's own time (ms) at which the fax starts.
 */
async function runFax(
  setup: FaxCallSetup,
  input: FaxCallInput,
  call: SipCall,
  ports: Awaited<ReturnType<MediaPortPool["acquire"]>>,
  faxMedia: { kind: "t38"; media: T38Media } | { kind: "audio"; media: AudioMedia },
  callStartedAt: number,
): Promise<FaxRun> {
  const now = setup.now ?? (() => performance.now());
  const limits = setup.watchdogLimits ?? DEFAULT_WATCHDOG_LIMITS;
  const speed = setup.speed;
  const { route, mode } = input;
  const tracker = new FaxProgressTracker(input.pageSizes, callStartedAt);
  const callDeadline = callCeilingMs(input.pageSizes, route.ringTimeoutMs, limits);
  const localIdent = route.csid;

  const faxStartWall = now();
  const virtualNow = (): number => callStartedAt + (now() - faxStartWall) * speed;
  let lastStatistics: TransferStatistics | null = null;
  let eventPhaseE: PhaseEEvent | null = null;
  const onEvent = (event: EngineEvent, statistics: TransferStatistics | null): void => {
    if (statistics !== null) lastStatistics = statistics;
    if (event.type === "phaseE") eventPhaseE ??= event;
    tracker.onEvent(event, callStartedAt + event.atSample / (SAMPLES_PER_SECOND / 1000));
    input.onEngineEvent?.(event);
  };
  const sessionOptions = {
    tiffPath: input.tiffPath,
    localIdent,
    ecm: mode.ecm,
    // The rung's cap, lowered further by the far end's T38MaxBitRate.
    maxBitRate: bitRateCap(faxMedia.kind === "t38" ? Math.min(mode.maxBitRate, faxMedia.media.params.maxBitRate) : mode.maxBitRate),
  };
  const run = startFaxMedia(setup, ports, faxMedia, sessionOptions, Math.ceil(callDeadline / 1000), onEvent);
  let stoppedBy: FaxStopped | null = null;
  const stopWith = (why: FaxStopped): void => {
    stoppedBy ??= why;
    run.stop();
  };
  const onOuterAbort = (): void => run.stop();
  input.signal?.addEventListener("abort", onOuterAbort, { once: true });
  const stopListening = followCall(call, run, () => stopWith(new FaxStopped("call_ended")));
  if (call.state === "terminated") stopWith(new FaxStopped("call_ended"));
  const watchdogEvery = Math.min(1000, Math.max(20, 1000 / speed));
  const watchdog = setInterval(() => {
    const verdict = checkWatchdog(tracker.watchdogState(callDeadline), virtualNow(), limits);
    if (verdict.expired) stopWith(new FaxStopped("watchdog", verdict));
  }, watchdogEvery);

  let result: FaxMediaResult | null = null;
  let lost: MediaHostLostError | null = null;
  try {
    result = await run.result;
  } catch (error) {
    if (!(error instanceof MediaHostLostError)) throw error;
    lost = error;
  } finally {
    clearInterval(watchdog);
    stopListening();
    input.signal?.removeEventListener("abort", onOuterAbort);
  }
  input.signal?.throwIfAborted();
  if (result?.stopped && stoppedBy === null) stoppedBy = new FaxStopped("call_ended");

  // A lost engine leaves what its last phase B or D said (its pages sent by then).
  const statistics = result?.statistics ?? lastStatistics ?? emptyStatistics();
  const engineSeconds = result?.engineSeconds ?? ((now() - faxStartWall) * speed) / 1000;
  const progress = tracker.progress(statistics.pagesTx);
  const media = { ...(result?.media ?? {}), remote: faxMedia.media.remote };
  // The engine's phase E may have come during the linger, or just before a BYE stopped the loop.
  const sawPhaseE = result?.phaseE ?? (eventPhaseE as PhaseEEvent | null);

  return {
    phaseE: sawPhaseE,
    statistics,
    engineSeconds,
    media,
    end(sip: SipCallOutcome): CallEnd {
      const byeCause = sip.result === "completed" && sip.endedBy === "remote" ? `the far end hung up (BYE${describeReason(sip.reason)})` : null;
      if (sawPhaseE !== null) return { kind: "fax_completed", completionCode: sawPhaseE.completionCode, progress, sipCause: byeCause };
      // A loss while the call was being stopped anyway (the far end's BYE, the watchdog) does not change why it ended.
      if (lost !== null && stoppedBy === null) return { kind: "engine_lost", phase: tracker.phase, progress, detail: `${lost.message} ${PHASE_WORDS[tracker.phase]}; Faxline hung up` };
      if (stoppedBy?.why === "watchdog" && stoppedBy.verdict !== null) {
        return { kind: "watchdog", phase: stoppedBy.verdict.phase, progress, rawCause: stoppedBy.verdict.rawCause };
      }
      if (stoppedBy?.why === "call_ended") {
        const detail =
          sip.result === "completed"
            ? `The far end hung up (BYE${describeReason(sip.reason)}) ${PHASE_WORDS[tracker.phase]}`
            : `The call ended during the fax: ${sip.sipStatus !== null ? describeSipResponse({ status: sip.sipStatus, reasonPhrase: sip.reasonPhrase }) : sip.reasonPhrase}`;
        return { kind: "remote_hangup", progress, detail };
      }
      return {
        kind: "watchdog",
        phase: "call",
        progress,
        rawCause: `Watchdog: the fax engine ran ${Math.round(engineSeconds)} s without ending the call (whole-call limit); Faxline ended it`,
      };
    },
  };
}

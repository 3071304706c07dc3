/**
 * The media half of a fax call: a fax engine session and its UDP media (UDPTL for T.38, RTP and
 * RTCP for G.711), run from the moment the SIP side has negotiated the media until phase E, a
 * stop or a fault. The SIP side (sip-fax-line/) hands over the call's bound sockets and a spec,
 * follows the far end's address changes into it (`setRemote`), stops it (`stop`), and gets the
 * engine's events as they happen and a result at the end.
 *
 * Two runners fill this interface:
 *  - `InlineMediaRunner` (here) runs the session on the calling thread's event loop;
 *  - `MediaHost` (media-host.ts) runs the same InlineMediaRunner in a child process of its own,
 *    so that neither the node's event loop nor its garbage collector delays a call's 20 ms ticks,
 *    and a crash or hang of the native engine ends only the calls it ran (docs/adr/0010-media-process.md).
 *
 * The spec and the result are plain data (they cross a process boundary); the sockets are
 * dgram sockets already bound by the line's port pool, owned by the runner from then on.
 */
import type dgram from "node:dgram";
import { randomUUID } from "node:crypto";
import { closeQuietly } from "../media/bind-udp.ts";
import type { AudioSession, AudioSessionOptions, Engine, EngineEvent, PhaseEEvent, T38Session, T38SessionOptions, TransferStatistics } from "../fax-engine/engine.ts";
import { runAudioSession } from "../fax-engine/run-audio-session.ts";
import { runT38Session } from "../fax-engine/run-t38-session.ts";
import { TickSlots } from "../fax-engine/tick-slots.ts";
import { PageSpool, PageSpoolError } from "../reception-spool/page-spool.ts";
import type { AudioCodec } from "../sip/sdp.ts";
import { RtcpSession, type RtcpStats } from "../media/rtcp.ts";
import { RtpSocket, type RtpPlayoutStats, type RtpSocketStats } from "../media/rtp.ts";
import { UdptlSocket, type UdpEndpoint, type UdptlSocketStats } from "../media/udptl-socket.ts";

/** Where the far end takes a stream; for audio also its RTCP when its SDP names a place (`a=rtcp`). */
export type MediaRemote = UdpEndpoint & { rtcp?: UdpEndpoint };

/**
 * A receiving session whose pages are made durable one by one before their MCF (reception-spool/
 * page-spool.ts): the session's `tiffPath` is the spool's image, `progressPath` its progress file.
 */
export interface DurablePages {
  progressPath: string;
}

/** What to run: the engine session's options and the far end's media from the SDP. */
export type FaxMediaSpec = (
  | {
      kind: "t38";
      session: T38SessionOptions;
      remote: UdpEndpoint;
      /** The far end's T38FaxMaxDatagram (400 when it names none). */
      maxDatagram: number;
      /** Secondary IFPs per datagram (0 when the far end asked for no error correction). */
      redundancy: number;
    }
  | {
      kind: "audio";
      session: AudioSessionOptions;
      remote: MediaRemote;
      codec: AudioCodec;
      payloadType: number;
    }
) & { durable?: DurablePages };

export interface FaxMediaClock {
  /** Engine clock speed: 1 for real far ends (lines.clockSpeed). */
  speed: number;
  /** Engine time after which the session is given up without phase E, seconds. */
  maxSeconds: number;
}

/** The sockets a spec needs: `t38` for T.38, `audio` and `rtcp` for G.711. */
export interface FaxMediaSockets {
  t38?: dgram.Socket;
  audio?: dgram.Socket;
  rtcp?: dgram.Socket;
}

export interface FaxMediaResult {
  /** Ended by `stop()` before phase E and its linger. */
  stopped: boolean;
  phaseE: PhaseEEvent | null;
  statistics: TransferStatistics;
  /** Engine time of the session, seconds. */
  engineSeconds: number;
  media: { udptl?: UdptlSocketStats; rtp?: RtpSocketStats; rtcp?: RtcpStats; playout?: RtpPlayoutStats };
  /**
   * A durable reception's pages (spec.durable): those made durable before their MCF, and why the
   * session was ended when one could not be (the disk full …); then `stopped` is true.
   */
  durable?: { pages: number; fault: string | null };
}

export interface FaxMediaRun {
  /** The far end moved its media (re-INVITE or UPDATE). */
  setRemote(kind: "t38" | "audio", remote: MediaRemote): void;
  /** Ends the session now; `result` still resolves (`stopped: true`). Idempotent. */
  stop(): void;
  /**
   * Resolves when the session has ended and its sockets are closed (the engine's pages written
   * when receiving). Rejects when the engine or the media failed: with `MediaHostLostError`
   * when the process that ran it died or hung.
   */
  readonly result: Promise<FaxMediaResult>;
}

export type FaxMediaEventHandler = (event: EngineEvent, statistics: TransferStatistics | null) => void;

export interface FaxMediaRunner {
  /**
   * Starts a session; `onEvent` gets every engine event as it happens, phase B and D events with
   * the session's statistics at that moment (what is known of a session whose process is lost).
   */
  run(spec: FaxMediaSpec, sockets: FaxMediaSockets, clock: FaxMediaClock, onEvent: FaxMediaEventHandler): FaxMediaRun;
  /** Ends the runner (a child process: stops it). Sessions still running end as stopped or lost. */
  close(): Promise<void>;
}

/** The process that ran a session died or stopped answering; the session is gone. */
export class MediaHostLostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MediaHostLostError";
  }
}

/** Where the far end's RTCP goes: where its `a=rtcp` says (sdp.ts: AudioEndpoint), else its RTP port + 1 (RFC 3605's default). */
export function rtcpRemote(remote: MediaRemote): UdpEndpoint {
  return remote.rtcp ?? { address: remote.address, port: remote.port + 1 };
}

class Stopped extends Error {
  constructor() {
    super("stopped");
  }
}

/**
 * Runs sessions on this thread's event loop with the engine given. Real-time sessions take their
 * tick phase from one TickSlots per runner, so that calls started together do not tick together.
 */
export class InlineMediaRunner implements FaxMediaRunner {
  readonly #engine: Engine;
  readonly #tickSlots = new TickSlots();

  constructor(engine: Engine) {
    this.#engine = engine;
  }

  run(spec: FaxMediaSpec, sockets: FaxMediaSockets, clock: FaxMediaClock, onEvent: FaxMediaEventHandler): FaxMediaRun {
    const stop = new AbortController();
    let udptl: UdptlSocket | null = null;
    let rtp: RtpSocket | null = null;
    let rtcp: RtcpSession | null = null;
    // The far end's latest move, for a session whose sockets are still being opened.
    const moved: { to: { kind: "t38" | "audio"; remote: MediaRemote } | null } = { to: null };
    const follow = (kind: "t38" | "audio", remote: MediaRemote): void => {
      if (kind === "t38") udptl?.setRemote(remote);
      else {
        rtp?.setRemote(remote);
        rtcp?.setRemote(rtcpRemote(remote));
      }
    };
    const result = (async (): Promise<FaxMediaResult> => {
      let session: T38Session | AudioSession | null = null;
      const pageSpool = spec.durable === undefined ? null : new PageSpool({ tiffPath: spec.session.tiffPath, progressPath: spec.durable.progressPath, transport: spec.kind === "t38" ? "t38" : "g711" });
      let phaseEWritten: Promise<void> | null = null;
      const withStatistics = (event: EngineEvent): void => {
        if (event.type === "phaseE" && pageSpool !== null && session !== null) phaseEWritten = pageSpool.phaseE(event, session.statistics()).catch(() => undefined);
        onEvent(event, event.type === "phaseB" || event.type === "phaseD" ? (session?.statistics() ?? null) : null);
      };
      /** Holds the engine's answer to a page until the page is durable; a page that cannot be ends the session. */
      const holdAfterPhaseD =
        pageSpool === null
          ? undefined
          : (): Promise<void> | null => {
              const pending = pageSpool.pageEnded(session!.statistics());
              return pending === null ? null : pending.catch((error: unknown) => {
                if (!stop.signal.aborted) stop.abort(new Stopped());
                throw error;
              });
            };
      let releaseTickSlot = (): void => {};
      /** The run's options, made as it starts: a real-time session's engine clock starts in the tick phase it is given (a virtual clock, in tests, at once, as its peer expects). */
      const optionsNow = () => {
        const options = { speed: clock.speed, maxSeconds: clock.maxSeconds, signal: stop.signal, onEvent: withStatistics, ...(holdAfterPhaseD !== undefined ? { holdAfterPhaseD } : {}) };
        if (clock.speed !== 1) return options;
        const slot = this.#tickSlots.take(performance.now());
        releaseTickSlot = slot.release;
        return { ...options, startAt: slot.startAt };
      };
      const started = performance.now();
      let ran: { phaseE: PhaseEEvent | null; engineSeconds: number; playout?: RtpPlayoutStats } | null = null;
      try {
        if (spec.kind === "t38") {
          udptl = await UdptlSocket.open({ socket: take(sockets, "t38"), remote: spec.remote, maxDatagram: spec.maxDatagram, redundancy: spec.redundancy });
          if (moved.to?.kind === "t38") udptl.setRemote(moved.to.remote);
          session = this.#engine.openT38Session(spec.session);
          if (stop.signal.aborted) throw new Stopped();
          ran = await runT38Session(session, udptl, optionsNow());
        } else {
          rtp = await RtpSocket.open({ socket: take(sockets, "audio"), remote: spec.remote, codec: spec.codec, payloadType: spec.payloadType });
          const source = rtp;
          rtcp = new RtcpSession({ socket: take(sockets, "rtcp"), remote: rtcpRemote(spec.remote), source: () => source.rtcpSource(), cname: `${randomUUID()}@faxline`, speed: clock.speed });
          if (moved.to?.kind === "audio") follow("audio", moved.to.remote);
          session = this.#engine.openAudioSession(spec.session);
          if (stop.signal.aborted) throw new Stopped();
          ran = await runAudioSession(session, rtp, optionsNow());
        }
      } catch (error) {
        if (!(stop.signal.aborted && (error === stop.signal.reason || error instanceof Stopped || error instanceof PageSpoolError))) {
          session?.close();
          throw error;
        }
      } finally {
        releaseTickSlot();
        for (const socket of Object.values(sockets)) closeQuietly(socket);
        await udptl?.close();
        await rtcp?.close().catch(() => undefined);
        await rtp?.close();
      }
      const statistics = session!.statistics();
      // Closing the session closes the TIFF file: a receiver's pages are on disk after this.
      session!.close();
      if (pageSpool !== null) {
        await pageSpool.settled();
        if (phaseEWritten !== null) await phaseEWritten;
      }
      const media: FaxMediaResult["media"] = {
        ...(udptl !== null ? { udptl: (udptl as UdptlSocket).stats } : {}),
        ...(rtp !== null ? { rtp: (rtp as RtpSocket).stats } : {}),
        ...(rtcp !== null ? { rtcp: { ...(rtcp as RtcpSession).stats } } : {}),
        ...(ran?.playout !== undefined ? { playout: ran.playout } : {}),
      };
      return {
        ...(pageSpool !== null ? { durable: { pages: pageSpool.confirmed, fault: pageSpool.failure?.message ?? null } } : {}),
        stopped: ran === null,
        phaseE: ran?.phaseE ?? null,
        statistics,
        engineSeconds: ran?.engineSeconds ?? ((performance.now() - started) * clock.speed) / 1000,
        media,
      };
    })();
    return {
      setRemote(kind, remote) {
        moved.to = { kind, remote };
        follow(kind, remote);
      },
      stop() {
        if (!stop.signal.aborted) stop.abort(new Stopped());
      },
      result,
    };
  }

  async close(): Promise<void> {}
}

function take(sockets: FaxMediaSockets, kind: keyof FaxMediaSockets): dgram.Socket {
  const socket = sockets[kind];
  if (socket === undefined) throw new Error(`the ${kind} media socket is missing`);
  delete sockets[kind];
  return socket;
}


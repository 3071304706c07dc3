/**
 * Runs one audio (G.711) fax session over an RTP transport (media/rtp.ts) until phase E: the
 * audio twin of run-t38-session.ts.
 *
 * Every 20 ms tick of the engine clock (160 samples), the frame the playout buffer holds for
 * that tick goes into the engine (or, when none arrived, the count of missing samples, which the
 * modem fills in), and the frame the engine gives back is sent at once as one RTP packet: the
 * 20 ms pacing the far end's jitter buffer expects. The engine clock keeps up with the wall clock
 * multiplied by `speed`; received frames are placed in the playout buffer at the engine time
 * they arrive, `playoutDelayMs` behind (engine time: at 20× it must cover 20 times the wall-clock
 * jitter, hence its default).
 *
 * After phase E the clock runs on for `lingerSeconds` so the last frames (DCN) go out. Outcome as
 * for T.38: phase E resolves with its completion code; `maxSeconds` of engine time without it
 * resolves with `phaseE: null`; aborting `signal` rejects with its reason; an engine or transport
 * exception rejects with it.
 */
import { SAMPLES_PER_SECOND, type AudioSession, type AudioStep, type EngineEvent, type PhaseDEvent, type PhaseEEvent } from "./engine.ts";
import { RtpPlayout, type RtpPlayoutStats } from "../media/rtp.ts";
import { TICK_SAMPLES, type T38SessionResult } from "./run-t38-session.ts";

/** What the runner needs from the network: RtpSocket fits. */
export interface AudioFrameTransport {
  sendFrame(samples: Int16Array): void;
  onFrame(handler: (frame: { timestamp: number; samples: Int16Array }) => void): void;
}

export interface RunAudioSessionOptions {
  /** How much faster than real time the engine clock runs; 1 for a real far end. (Default: 1) */
  speed?: number;
  /** Engine time after which a call without phase E is given up, seconds. (Default: 3600) */
  maxSeconds?: number;
  /** Engine time to keep running after phase E, seconds. (Default: 2) */
  lingerSeconds?: number;
  /** Playout delay behind the first received frame, engine ms. (Default: 60 ms at speed 1; 20 ms of wall time × speed above) */
  playoutDelayMs?: number;
  signal?: AbortSignal;
  onEvent?: (event: EngineEvent) => void;
  /** Monotonic wall clock, milliseconds. (Default: performance.now) */
  now?: () => number;
  /**
   * When the engine clock starts, on `now`'s clock: its first tick runs one tick (20 ms of engine
   * time) later. A start a little ahead gives the session the tick phase a TickSlots handed out
   * (tick-slots.ts), so that sessions on one loop do not all tick in the same millisecond. The
   * result's `wallMs` counts from it. (Default: now())
   */
  startAt?: number;
  /**
   * Asked at every phase D event; while a promise it returned is pending, the engine's audio is
   * held back and silence sent instead (the clock and the received audio go on); once it resolves
   * the held audio follows, catching up by leaving out held frames of silence (T.30's 75 ms gap
   * before a response). A rejection ends the run with its error and the held audio is never sent.
   * Used to make a received page durable before it is confirmed (reception-spool/page-spool.ts).
   */
  holdAfterPhaseD?: (event: PhaseDEvent) => Promise<void> | null;
}

export interface AudioSessionResult extends T38SessionResult {
  playout: RtpPlayoutStats;
}

/**
 * 60 ms for a real far end; on an accelerated clock, 20 ms of wall-clock jitter (timers, a busy
 * event loop) times the speed. T.30 answers within T4 (3 s), so beyond about 20× the round trip
 * through two such buffers gets long: G.711 tests run at 20×, T.38 ones (no playout) at 50×.
 */
export function defaultPlayoutDelayMs(speed: number): number {
  return Math.max(60, 20 * speed);
}

export function runAudioSession(session: AudioSession, transport: AudioFrameTransport, options: RunAudioSessionOptions = {}): Promise<AudioSessionResult> {
  const speed = options.speed ?? 1;
  if (!(speed > 0) || !Number.isFinite(speed)) throw new RangeError(`speed must be a positive number, got ${speed}`);
  const maxSamples = Math.round((options.maxSeconds ?? 3600) * SAMPLES_PER_SECOND);
  const lingerSamples = Math.round((options.lingerSeconds ?? 2) * SAMPLES_PER_SECOND);
  const now = options.now ?? (() => performance.now());
  const samplesPerMs = (SAMPLES_PER_SECOND / 1000) * speed;
  const delayMs = options.playoutDelayMs ?? defaultPlayoutDelayMs(speed);
  const playout = new RtpPlayout(Math.round((delayMs * SAMPLES_PER_SECOND) / 1000 / TICK_SAMPLES) * TICK_SAMPLES);
  const signal = options.signal;
  if (options.startAt !== undefined && !Number.isFinite(options.startAt)) throw new RangeError(`startAt must be a finite time, got ${options.startAt}`);

  return new Promise<AudioSessionResult>((resolve, reject) => {
    const startedAt = options.startAt ?? now();
    const events: EngineEvent[] = [];
    let phaseE: PhaseEEvent | null = null;
    let samples = 0;
    let timer: NodeJS.Timeout | undefined;
    let done = false;

    const finish = (error?: unknown): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      transport.onFrame(() => {});
      if (error !== undefined) {
        reject(error);
        return;
      }
      resolve({
        phaseE,
        statistics: session.statistics(),
        events,
        engineSeconds: samples / SAMPLES_PER_SECOND,
        wallMs: now() - startedAt,
        playout: { ...playout.stats },
      });
    };
    const onAbort = (): void => finish(signal?.reason ?? new Error("aborted"));

    /** Holds pending (holdAfterPhaseD) and the audio held back, oldest first. */
    let holds = 0;
    const held: Int16Array[] = [];
    const hold = (pending: Promise<void>): void => {
      holds++;
      pending.then(
        () => void holds--,
        (error: unknown) => {
          holds--;
          held.length = 0;
          finish(error);
        },
      );
    };

    const handle = (step: AudioStep): void => {
      for (const event of step.events) {
        events.push(event);
        options.onEvent?.(event);
        if (event.type === "phaseE" && phaseE === null) phaseE = event;
        if (event.type === "phaseD" && options.holdAfterPhaseD !== undefined) {
          const pending = options.holdAfterPhaseD(event);
          if (pending !== null) hold(pending);
        }
      }
      if (holds > 0) {
        held.push(step.audio);
        transport.sendFrame(new Int16Array(step.audio.length));
      } else if (held.length > 0) {
        held.push(step.audio);
        while (held.length > 1 && isSilent(held[0]!)) held.shift();
        transport.sendFrame(held.shift()!);
      } else transport.sendFrame(step.audio);
      samples = step.samples;
    };

    const tick = (): void => {
      try {
        const due = (now() - startedAt) * samplesPerMs;
        while (samples + TICK_SAMPLES <= due && !done) {
          handle(session.process(playout.take(samples, TICK_SAMPLES)));
          if (phaseE !== null && samples >= phaseE.atSample + lingerSamples) return finish();
          if (samples >= maxSamples) return finish();
        }
        const nextTickAt = startedAt + (samples + TICK_SAMPLES) / samplesPerMs;
        timer = setTimeout(tick, Math.max(1, nextTickAt - now()));
      } catch (error) {
        finish(error);
      }
    };

    if (signal?.aborted) return finish(signal.reason ?? new Error("aborted"));
    signal?.addEventListener("abort", onAbort, { once: true });
    transport.onFrame(({ timestamp, samples: frame }) => {
      if (!done) playout.push(timestamp, frame, samples);
    });
    tick();
  });
}

function isSilent(frame: Int16Array): boolean {
  for (let i = 0; i < frame.length; i++) if (frame[i] !== 0) return false;
  return true;
}

/**
 * Runs one T.38 session over an IFP transport (UDPTL, media/udptl-socket.ts) until phase E: the
 * loop between the clock, the engine and the network that a T.38 call needs.
 *
 * How it works: the engine's clock is advanced in 20 ms ticks (160 samples) to keep up with the
 * wall clock multiplied by `speed`; each tick runs the T.30 timers and the pacing of image data,
 * and the IFP packets it produces are sent at once, each as many times as the engine asks. IFPs
 * arriving from the transport are handed to the engine as they come, and its answer is sent at
 * once too. After phase E the clock keeps running for `lingerSeconds` so the final frames (DCN and
 * its repeats) go out, then the promise resolves with the phase E event and the statistics.
 *
 * `speed` > 1 runs a virtual clock: T.30 timers, pacing and all, time passes `speed` times faster
 * than on the wall. Both ends must run at the same speed and start together (the answering test
 * peer starts its clock on our first packet). 50× was reliable on loopback in our measurements;
 * a real far end needs 1. The wall-time between ticks is at least 1 ms (Node timers), so at high
 * speeds several ticks run back to back.
 *
 * `pacer` replaces the wall clock altogether (then `speed` is not used): after each tick the
 * runner waits for it, so a test can run both ends of a call in lockstep on one virtual clock,
 * the same on every machine however loaded (test/interop/peer-processes.ts, lockstepPacer).
 *
 * Received IFPs go to the engine off the event loop when it can (`receiveIfpAsync`; not with a
 * `pacer`, whose lockstep needs each answer within its tick): a sender reads and encodes its page
 * when the receiver's DIS arrives, several milliseconds in one call, which would otherwise delay
 * the ticks of every other session on the loop. While such a call runs, the session's ticks wait
 * (the next one catches up) and further IFPs queue in order; the session is settled only after it
 * ends, so that nothing touches the engine meanwhile. Only a few IFPs of a process are off the
 * loop at once (`OffloadSlots`); one that finds no free slot is handled on the loop.
 *
 * Outcome: a call that ends, well or badly, resolves (phase E carries the completion code). A
 * call that reaches `maxSeconds` of engine time without phase E resolves with `phaseE: null`.
 * Aborting `signal` rejects with its reason. An exception from the engine or the transport
 * rejects with it.
 */
import { SAMPLES_PER_SECOND, type EngineEvent, type PhaseDEvent, type PhaseEEvent, type T38Session, type T38Step, type TransferStatistics } from "./engine.ts";

/** What the runner needs from the network: UdptlSocket fits. */
export interface IfpTransport {
  /** Sends one IFP `count` times under one sequence number. */
  sendIfp(ifp: Uint8Array, count: number): void;
  /** Sets the handler for received IFPs, in sequence order. */
  onIfp(handler: (received: { seq: number; ifp: Uint8Array }) => void): void;
}

export interface RunT38SessionOptions {
  /** How much faster than real time the engine clock runs; 1 for a real far end. (Default: 1) */
  speed?: number;
  /** Engine time after which a call without phase E is given up, seconds. (Default: 3600) */
  maxSeconds?: number;
  /** Engine time to keep running after phase E, seconds (fax-transport.md, gotcha 4). (Default: 2) */
  lingerSeconds?: number;
  signal?: AbortSignal;
  /** Called for every engine event as it happens. */
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
   * Decides when the next tick runs instead of the wall clock: called after every tick with the
   * engine time so far (samples); the next tick runs when it resolves, a rejection ends the run
   * with that error. IFPs that arrive meanwhile go to the engine as usual.
   */
  pacer?: (samples: number) => Promise<void>;
  /**
   * Hand received IFPs to the engine off the event loop (`receiveIfpAsync`) when it offers that.
   * Never with a pacer, whose lockstep ticks may not wait. (Default: true)
   */
  offloadReceive?: boolean;
  /**
   * How many IFPs the sessions sharing it may have off the loop at once; an IFP that finds none
   * free is handled on the loop. (Default: the process's, OFFLOAD_SLOTS)
   */
  offloadSlots?: OffloadSlots;
  /**
   * Asked at every phase D event; a promise it returns holds every packet the session would send
   * (the receiver's MCF among them) until it resolves, while the clock and the received IFPs go on.
   * A rejection ends the run with its error and the held packets are never sent. Used to make a
   * received page durable before it is confirmed (reception-spool/page-spool.ts).
   */
  holdAfterPhaseD?: (event: PhaseDEvent) => Promise<void> | null;
}

/**
 * The IFPs the T.38 sessions of one process may have off the event loop at once. libuv's pool
 * takes work first in, first out: when many calls reach phase C together (hundreds within a
 * second), their page steps (5–9 ms each) queue there faster than the pool drains them on a
 * shared core, and every IFP of any session that arrives meanwhile waits behind them, its
 * session's ticks too (up to 0.47 s in `npm run bench:lines`, and calls failed). With a bound the
 * queue stays short; an IFP beyond it is handled on the loop, as without the offload, which
 * spreads such a burst over all the sessions' ticks instead (docs/benchmarks.md, "Peers in one
 * process").
 */
export class OffloadSlots {
  #inUse = 0;

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 0) throw new RangeError(`the offload limit must be a whole number >= 0, got ${limit}`);
  }

  get inUse(): number {
    return this.#inUse;
  }

  /** Takes a slot if one is free. */
  tryTake(): boolean {
    if (this.#inUse >= this.limit) return false;
    this.#inUse++;
    return true;
  }

  release(): void {
    if (this.#inUse === 0) throw new Error("OffloadSlots.release without a slot taken");
    this.#inUse--;
  }
}

/** The process's offload slots: two, half of libuv's default pool of four threads. */
export const OFFLOAD_SLOTS = new OffloadSlots(2);

export interface T38SessionResult {
  /** Phase E, or null when `maxSeconds` passed without it. */
  phaseE: PhaseEEvent | null;
  statistics: TransferStatistics;
  events: EngineEvent[];
  /** Engine time at the end, seconds. */
  engineSeconds: number;
  wallMs: number;
}

/** 20 ms at 8 kHz: the tick SpanDSP's T.38 pacing is written for. */
export const TICK_SAMPLES = 160;

export function runT38Session(session: T38Session, transport: IfpTransport, options: RunT38SessionOptions = {}): Promise<T38SessionResult> {
  const speed = options.speed ?? 1;
  if (!(speed > 0) || !Number.isFinite(speed)) throw new RangeError(`speed must be a positive number, got ${speed}`);
  const maxSamples = Math.round((options.maxSeconds ?? 3600) * SAMPLES_PER_SECOND);
  const lingerSamples = Math.round((options.lingerSeconds ?? 2) * SAMPLES_PER_SECOND);
  const now = options.now ?? (() => performance.now());
  const samplesPerMs = (SAMPLES_PER_SECOND / 1000) * speed;
  const signal = options.signal;
  if (options.startAt !== undefined && !Number.isFinite(options.startAt)) throw new RangeError(`startAt must be a finite time, got ${options.startAt}`);

  return new Promise<T38SessionResult>((resolve, reject) => {
    const startedAt = options.startAt ?? now();
    const events: EngineEvent[] = [];
    let phaseE: PhaseEEvent | null = null;
    let samples = 0;
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    const offload = session.receiveIfpAsync !== undefined && options.pacer === undefined && (options.offloadReceive ?? true);
    const slots = options.offloadSlots ?? OFFLOAD_SLOTS;
    /** An IFP is being handled off the loop: the engine takes no other call until it ends. */
    let busy = false;
    const queued: { seq: number; ifp: Uint8Array }[] = [];
    /** How the run ends, once the engine is free to be asked for its statistics. */
    let settle: (() => void) | null = null;

    const finish = (error?: unknown): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      transport.onIfp(() => {});
      settle = () => settleWith(error);
      if (!busy) settle();
    };
    let settled = false;
    const settleWith = (error: unknown): void => {
      if (settled) return;
      settled = true;
      if (error !== undefined) {
        reject(error);
        return;
      }
      try {
        resolve({ phaseE, statistics: session.statistics(), events, engineSeconds: samples / SAMPLES_PER_SECOND, wallMs: now() - startedAt });
      } catch (statisticsError) {
        reject(statisticsError);
      }
    };
    const onAbort = (): void => finish(signal?.reason ?? new Error("aborted"));

    /** Holds pending (holdAfterPhaseD) and the packets they hold back, in order. */
    let holds = 0;
    const held: T38Step["packets"] = [];
    const hold = (pending: Promise<void>): void => {
      holds++;
      pending.then(
        () => {
          holds--;
          if (holds > 0 || done) return;
          for (const packet of held.splice(0)) transport.sendIfp(packet.ifp, packet.count);
        },
        (error: unknown) => {
          held.length = 0;
          holds--;
          finish(error);
        },
      );
    };

    const handle = (step: T38Step): void => {
      for (const event of step.events) {
        events.push(event);
        options.onEvent?.(event);
        if (event.type === "phaseE" && phaseE === null) phaseE = event;
        if (event.type === "phaseD" && options.holdAfterPhaseD !== undefined) {
          const pending = options.holdAfterPhaseD(event);
          if (pending !== null) hold(pending);
        }
      }
      if (holds > 0) held.push(...step.packets);
      else for (const packet of step.packets) transport.sendIfp(packet.ifp, packet.count);
      samples = step.samples;
    };

    const pacer = options.pacer;
    const step = (): void => {
      if (done) return;
      try {
        handle(session.advance(TICK_SAMPLES));
        if ((phaseE !== null && samples >= phaseE.atSample + lingerSamples) || samples >= maxSamples) return finish();
      } catch (error) {
        return finish(error);
      }
      pacer!(samples).then(step, finish);
    };

    const tick = (): void => {
      if (busy) {
        // The engine is handling an IFP off the loop; this tick runs (and catches up) once it is done.
        timer = setTimeout(tick, 1);
        return;
      }
      try {
        const due = (now() - startedAt) * samplesPerMs;
        while (samples + TICK_SAMPLES <= due && !done) {
          handle(session.advance(TICK_SAMPLES));
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
    const receiveQueued = (): void => {
      while (!done && !busy && queued.length > 0) {
        const { seq, ifp } = queued.shift()!;
        if (!offload || !slots.tryTake()) {
          try {
            handle(session.receiveIfp(ifp, seq));
          } catch (error) {
            finish(error);
          }
          continue;
        }
        busy = true;
        let pending: Promise<T38Step>;
        try {
          pending = session.receiveIfpAsync!(ifp, seq);
        } catch (error) {
          pending = Promise.reject(error);
        }
        pending.then(
          (step) => {
            busy = false;
            slots.release();
            try {
              if (!done) handle(step);
            } catch (error) {
              // As on the loop: an exception from the transport or an event handler ends the run with it.
              finish(error);
            }
            if (settle !== null) settle();
            else receiveQueued();
          },
          (error: unknown) => {
            busy = false;
            slots.release();
            finish(error);
            settle?.();
          },
        );
      }
    };
    transport.onIfp((received) => {
      if (done) return;
      queued.push(received);
      receiveQueued();
    });
    if (pacer) step();
    else tick();
  });
}

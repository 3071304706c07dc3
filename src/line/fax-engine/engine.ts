/**
 * The fax engine interface: what a line needs from a T.30 implementation, whatever fills it.
 *
 * An engine opens sessions. A session is one T.30 terminal for one call, either over T.38 (it
 * takes and gives T.38 IFP packets, without UDPTL framing) or over G.711 audio (it takes and gives
 * 16-bit linear samples at 8 kHz). A session does no I/O and keeps no time of its own: the caller
 * drives its clock (`advance(samples)` for T.38, one `process()` per audio frame) and feeds it
 * what arrives; every call returns, synchronously, what the session wants sent and the T.30
 * events that happened (frames, phase B, D and E). Time is counted in samples at 8 kHz
 * (8000 samples = 1 s), the unit T.30 timers and modem pacing run on.
 *
 * A call ends at phase E, with a completion code (`T30_ERR_*`, t30-completion-codes.ts): data,
 * never an exception. Sessions throw only for misuse (a closed session, a bad argument).
 *
 * The first engine is SpanDSP through an N-API addon (spandsp-engine.ts; docs/adr/0004). A
 * pure-TypeScript T.30 could replace it behind this interface.
 */
import type { T30ErrName } from "./t30-completion-codes.ts";

/** Page compressions a terminal may offer (DIS) or choose (DCS). */
export type FaxCompression = "T.4 1-D" | "T.4 2-D" | "T.6";

export const ALL_COMPRESSIONS: readonly FaxCompression[] = ["T.4 1-D", "T.4 2-D", "T.6"];

/** 8000 samples per second: the engine clock. */
export const SAMPLES_PER_SECOND = 8000;

/** The modem bit rates a session can be capped at (`T30SessionOptions.maxBitRate`). */
export const FAX_BIT_RATE_CAPS = [14_400, 9_600, 4_800] as const;
export type FaxBitRateCap = (typeof FAX_BIT_RATE_CAPS)[number];

/** The highest cap that does not exceed `bitRate` (a ladder rung's or an SDP's T38MaxBitRate); 4800 below that. */
export function bitRateCap(bitRate: number): FaxBitRateCap {
  return FAX_BIT_RATE_CAPS.find((cap) => cap <= bitRate) ?? 4_800;
}

export interface T30SessionOptions {
  /** "send" transmits `tiffPath`; "receive" writes what arrives to it (test peers only). (Default: "send") */
  mode?: "send" | "receive";
  /** Whether this terminal placed the call (sends CNG and waits for DIS). (Default: true) */
  calling?: boolean;
  /** The TIFF-F file to send, or to write when receiving. It is read while the call runs. */
  tiffPath: string;
  /** Our identity, sent as TSI when sending and CSI when receiving: at most 20 characters (SpanDSP `T30_MAX_IDENT_LEN`). */
  localIdent: string;
  /** Offer error correction mode (T.30 Annex A). (Default: true) */
  ecm?: boolean;
  /** Compressions this terminal may use. (Default: all of `ALL_COMPRESSIONS`) */
  compressions?: readonly FaxCompression[];
  /**
   * The highest modem bit rate to offer: 14400 (V.17, V.29 and V.27ter), 9600 (V.29 and V.27ter:
   * the fallback ladder's rung for lines that garble V.17) or 4800 (V.27ter only). The T.30
   * fallback after a failed training still goes lower. (Default: 14400)
   */
  maxBitRate?: FaxBitRateCap;
  /** Engine log verbosity on stderr, 0 for none; for SpanDSP 5 is FLOW. (Default: 0) */
  logLevel?: number;
  /** Report ECM image frames (FCD, RCP) as `frame` events too: hundreds per page. (Default: false) */
  reportImageFrames?: boolean;
}

export interface T38SessionOptions extends T30SessionOptions {
  /** T.38 version to speak, from the SDP `T38FaxVersion` both ends agreed. (Default: 0) */
  t38Version?: 0 | 1 | 2 | 3;
  /**
   * The far end's `T38FaxMaxDatagram`, bytes. (Default: 400) SpanDSP 0.0.6 records it but does not
   * size its IFPs by it: paced, they stay small (a 30 ms chunk at 14 400 bit/s is 54 data bytes),
   * and the UDPTL sender (media/udptl.ts) trims redundancy to fit the limit.
   */
  maxDatagram?: number;
  /**
   * Pace image data at the modem bit rate, as a gateway to the PSTN needs (T.38 over UDP).
   * False streams it as fast as possible, for TCP or IAF peers. (Default: true)
   */
  pacing?: boolean;
}

export type AudioSessionOptions = T30SessionOptions;

/** A frame the T.30 engine sent or received: a control frame, or an ECM image frame when asked for. */
export interface FrameEvent {
  type: "frame";
  /** Engine clock at the event, samples since the session opened. */
  atSample: number;
  direction: "rx" | "tx";
  /** The FCF, in SpanDSP's bit order (t30-fcf.ts). */
  fcf: number;
  /** The engine's name for the frame ("DIS", "DCS", "MCF" …). */
  name: string;
  /** The whole HDLC frame: address, control, FCF and information field (no FCS). */
  bytes: Uint8Array;
}

/** Phase B: the engine accepted the far end's DIS (when sending) or DCS (when receiving). */
export interface PhaseBEvent {
  type: "phaseB";
  atSample: number;
  fcf: number;
  name: string;
  /** The DIS or DCS frame, when the engine saw it arrive. */
  frame: Uint8Array | null;
}

/** Phase D: a page's post-message exchange (for a sender, the receiver's MCF, RTN … to MPS/EOP). */
export interface PhaseDEvent {
  type: "phaseD";
  atSample: number;
  fcf: number;
  name: string;
}

/** Phase E: the call is over. */
export interface PhaseEEvent {
  type: "phaseE";
  atSample: number;
  completionCode: number;
  /** `T30_ERR_*`, or `T30_ERR_UNKNOWN_<n>` for a code the table lacks. */
  name: T30ErrName | `T30_ERR_UNKNOWN_${number}`;
  /** The engine's text for the code. */
  text: string;
}

export type EngineEvent = FrameEvent | PhaseBEvent | PhaseDEvent | PhaseEEvent;

/** Transfer statistics of a session so far; the page fields are those of the most recent page. */
export interface TransferStatistics {
  pagesTx: number;
  pagesRx: number;
  /** Pages in the file being sent; 0 when unknown or receiving. */
  pagesInFile: number;
  /** Image bit rate negotiated (or, before phase B, the first one to be tried). */
  bitRate: number;
  ecm: boolean;
  /** ECM frame retransmissions. */
  ecmRetries: number;
  /** Compression on the line for the most recent page; "none" before the first page. */
  encoding: FaxCompression | "none" | "unknown";
  width: number;
  length: number;
  /** Pixels per inch across and down (204 and 98 or 196 for Faxline's pages); 0 before the first page. */
  xDpi: number;
  yDpi: number;
  /** Encoded bytes of the most recent page. */
  imageBytes: number;
  badRows: number;
  longestBadRowRun: number;
  /** The completion code the call would end with now (`T30_ERR_OK` until something fails). */
  currentStatus: number;
  /** The far end's CSI (when sending) or TSI (when receiving), trimmed; "" until received. */
  remoteIdent: string;
  localIdent: string;
  /** Engine clock, samples since the session opened. */
  samples: number;
}

/** An IFP packet to send, and how many times: every copy goes under one UDPTL sequence number. */
export interface OutgoingIfp {
  ifp: Uint8Array;
  count: number;
}

export interface SessionStep {
  events: readonly EngineEvent[];
  /** Phase E has happened; keep the clock running a little (2 s) so the last frames go out. */
  finished: boolean;
  /** Engine clock after the call, samples since the session opened. */
  samples: number;
}

export interface T38Step extends SessionStep {
  packets: OutgoingIfp[];
}

export interface AudioStep extends SessionStep {
  /** The samples to transmit, as many as were processed. */
  audio: Int16Array;
}

export interface T38Session {
  /** Moves the session's clock on by `samples` (160 per 20 ms tick) and runs its timers and pacing. */
  advance(samples: number): T38Step;
  /** Hands the session one received IFP with its UDPTL sequence number (0–65535). */
  receiveIfp(ifp: Uint8Array, seq: number): T38Step;
  /**
   * The same, handled off the calling thread (SpanDSP: on libuv's thread pool), so that a long
   * step (a sender reads and encodes its page when the receiver's DIS arrives) does not hold up the
   * other sessions of the event loop. Until it settles the session takes no other call; `close()`
   * meanwhile takes effect when it ends. Engines without it are driven by `receiveIfp` alone.
   */
  receiveIfpAsync?(ifp: Uint8Array, seq: number): Promise<T38Step>;
  statistics(): TransferStatistics;
  /** Frees the session; it may not be used afterwards. Idempotent. */
  close(): void;
}

export interface AudioSession {
  /**
   * Processes one received audio frame and returns a frame of the same length to transmit;
   * the clock moves on by its length. A number instead of samples means that many samples were
   * lost (the modem then fills in).
   */
  process(received: Int16Array | number): AudioStep;
  statistics(): TransferStatistics;
  close(): void;
}

export interface Engine {
  readonly name: string;
  openT38Session(options: T38SessionOptions): T38Session;
  openAudioSession(options: AudioSessionOptions): AudioSession;
}

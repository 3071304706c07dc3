/**
 * The SpanDSP fax engine: the `Engine` interface filled by Debian's libspandsp 0.0.6 through the
 * N-API addon in native/spandsp-engine (docs/adr/0004-fax-engine-spandsp-addon.md).
 *
 * The addon is synchronous and single-threaded: each call runs SpanDSP until it returns and hands
 * back what SpanDSP produced meanwhile (IFP packets with their repeat count, audio, T.30 events).
 * This module only checks and converts arguments and results; T.30, T.4/T.6 and the modems are
 * SpanDSP's. `SpandspEngine.load()` loads the addon from
 * native/spandsp-engine/build/Release/spandsp_engine.node (or `FAXLINE_SPANDSP_ADDON`); a missing
 * or unloadable addon throws `SpandspAddonError` saying how to build it.
 */
import { createRequire } from "node:module";
import { existsSync } from "node:fs";
import path from "node:path";
import {
  ALL_COMPRESSIONS,
  FAX_BIT_RATE_CAPS,
  type AudioSession,
  type AudioSessionOptions,
  type AudioStep,
  type Engine,
  type EngineEvent,
  type FaxCompression,
  type T30SessionOptions,
  type T38Session,
  type T38SessionOptions,
  type T38Step,
  type TransferStatistics,
} from "./engine.ts";
import { t30ErrName } from "./t30-completion-codes.ts";
import { packageRoot } from "../../lib/code-location.ts";

/** `T30_SUPPORT_*_COMPRESSION` bits of SpanDSP's t30.h. */
const COMPRESSION_BITS: Readonly<Record<FaxCompression, number>> = { "T.4 1-D": 0x02, "T.4 2-D": 0x04, "T.6": 0x08 };
/** Pixels per metre to pixels per inch. */
const INCHES_PER_METRE = 0.0254;
const MAX_IDENT_LENGTH = 20;
const ADDON_RELATIVE = "native/spandsp-engine/build/Release/spandsp_engine.node";
const INSTALL_HINT =
  "Build it with scripts/build-native.sh, which needs the Debian packages libspandsp-dev, libtiff-dev and pkg-config " +
  "(apt-get install -y --no-install-recommends libspandsp-dev libtiff-dev pkg-config).";

type AddonHandle = { readonly __brand: "SpandspHandle" };

interface AddonOptions {
  mode: "send" | "receive";
  calling: boolean;
  tiffPath: string;
  localIdent: string;
  ecm: boolean;
  compressions: number;
  maxBitRate: number;
  logLevel: number;
  reportImageFrames: boolean;
  t38Version?: number;
  maxDatagram?: number;
  pacing?: boolean;
}

type AddonEvent =
  | { type: "frame"; atSample: number; direction: "rx" | "tx"; fcf: number; name: string; bytes: Uint8Array }
  | { type: "phaseB"; atSample: number; fcf: number; name: string; frame: Uint8Array | null }
  | { type: "phaseD"; atSample: number; fcf: number; name: string }
  | { type: "phaseE"; atSample: number; completionCode: number; text: string };

interface AddonStatistics {
  pagesTx: number;
  pagesRx: number;
  pagesInFile: number;
  bitRate: number;
  ecm: boolean;
  ecmRetries: number;
  encoding: string;
  width: number;
  length: number;
  xResolution: number;
  yResolution: number;
  imageBytes: number;
  badRows: number;
  longestBadRowRun: number;
  currentStatus: number;
  remoteIdent: string;
  localIdent: string;
  samples: number;
}

/** The addon's exports (native/spandsp-engine/src/spandsp_engine.c). */
interface SpandspAddon {
  t38Create(options: AddonOptions): AddonHandle;
  audioCreate(options: AddonOptions): AddonHandle;
  t38Advance(handle: AddonHandle, samples: number): { packets: { ifp: Uint8Array; count: number }[]; events: AddonEvent[]; finished: boolean; samples: number };
  t38AdvanceInto(handle: AddonHandle, samples: number, out: Uint8Array): number;
  t38ReceiveIfp(handle: AddonHandle, ifp: Uint8Array, seq: number): { packets: { ifp: Uint8Array; count: number }[]; events: AddonEvent[]; finished: boolean; samples: number };
  t38ReceiveIfpAsync(handle: AddonHandle, ifp: Uint8Array, seq: number): Promise<{ packets: { ifp: Uint8Array; count: number }[]; events: AddonEvent[]; finished: boolean; samples: number }>;
  audioProcess(handle: AddonHandle, received: Int16Array | number): { audio: Int16Array; events: AddonEvent[]; finished: boolean; samples: number };
  statistics(handle: AddonHandle): AddonStatistics;
  free(handle: AddonHandle): void;
  uncompressTiff(src: string, dst: string, maxBytes: number): Promise<number>;
  completionCodeText(code: number): string;
  frameName(fcf: number): string;
}

/** The addon is missing or cannot be loaded; the message says how to build it. */
export class SpandspAddonError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "SpandspAddonError";
  }
}

/** Where the addon is: below Faxline's package root (native/, built by scripts/build-native.sh). */
function addonCandidates(): string[] {
  const fromEnv = process.env.FAXLINE_SPANDSP_ADDON;
  if (fromEnv) return [path.resolve(fromEnv)];
  try {
    return [path.join(packageRoot(), ADDON_RELATIVE)];
  } catch (error) {
    throw new SpandspAddonError(`The SpanDSP fax engine addon cannot be looked for: ${(error as Error).message}. Set FAXLINE_SPANDSP_ADDON to its path. ${INSTALL_HINT}`, { cause: error });
  }
}

/** Loaded addons by path: Node loads a native module once per process anyway. */
const loadedAddons = new Map<string, SpandspAddon>();

function loadAddon(addonPath: string | undefined): SpandspAddon {
  const candidates = addonPath === undefined ? addonCandidates() : [path.resolve(addonPath)];
  const found = candidates.find((candidate) => existsSync(candidate));
  if (!found) {
    throw new SpandspAddonError(`The SpanDSP fax engine addon is not built (looked for ${candidates.join(", ")}). ${INSTALL_HINT}`);
  }
  const cached = loadedAddons.get(found);
  if (cached) return cached;
  try {
    const addon = createRequire(import.meta.url)(found) as SpandspAddon;
    loadedAddons.set(found, addon);
    return addon;
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new SpandspAddonError(
      `The SpanDSP fax engine addon ${found} cannot be loaded: ${detail}. It needs the runtime library libspandsp2 ` +
        `(and libtiff6); if Node or libspandsp changed since it was built, rebuild it. ${INSTALL_HINT}`,
      { cause: error },
    );
  }
}

function addonOptions(options: T30SessionOptions): AddonOptions {
  const compressions = options.compressions ?? ALL_COMPRESSIONS;
  if (compressions.length === 0) throw new RangeError("a fax session needs at least one compression");
  if (options.localIdent.length > MAX_IDENT_LENGTH) {
    throw new RangeError(`localIdent ${JSON.stringify(options.localIdent)} is longer than ${MAX_IDENT_LENGTH} characters`);
  }
  if (!/^[\x20-\x7e]*$/.test(options.localIdent)) {
    throw new RangeError(`localIdent ${JSON.stringify(options.localIdent)} must be printable ASCII`);
  }
  const maxBitRate = options.maxBitRate ?? 14_400;
  if (!(FAX_BIT_RATE_CAPS as readonly number[]).includes(maxBitRate)) throw new RangeError(`maxBitRate must be one of ${FAX_BIT_RATE_CAPS.join(", ")}, got ${maxBitRate}`);
  return {
    mode: options.mode ?? "send",
    calling: options.calling ?? true,
    tiffPath: options.tiffPath,
    localIdent: options.localIdent,
    ecm: options.ecm ?? true,
    compressions: compressions.reduce((bits, c) => bits | COMPRESSION_BITS[c], 0),
    maxBitRate,
    logLevel: options.logLevel ?? 0,
    reportImageFrames: options.reportImageFrames ?? false,
  };
}

function toEvent(event: AddonEvent): EngineEvent {
  if (event.type !== "phaseE") return event;
  return { type: "phaseE", atSample: event.atSample, completionCode: event.completionCode, name: t30ErrName(event.completionCode), text: event.text };
}

function toEncoding(encoding: string): TransferStatistics["encoding"] {
  return encoding === "T.4 1-D" || encoding === "T.4 2-D" || encoding === "T.6" || encoding === "none" ? encoding : "unknown";
}

type AddonT38Step = ReturnType<SpandspAddon["t38Advance"]>;

function toT38Step(step: AddonT38Step): T38Step {
  // Most ticks carry no event: no new array for them.
  return { packets: step.packets, events: step.events.length === 0 ? NO_EVENTS : step.events.map(toEvent), finished: step.finished, samples: step.samples };
}

/** A step t38AdvanceInto wrote to `out`: u32 samples, then `n` times u16 length, u16 count, bytes (little-endian). */
function readAdvanced(out: Uint8Array, n: number): T38Step {
  const samples = (out[0]! | (out[1]! << 8) | (out[2]! << 16)) + out[3]! * 0x1000000;
  const packets: T38Step["packets"] = [];
  let at = 4;
  for (let i = 0; i < n; i++) {
    const length = out[at]! | (out[at + 1]! << 8);
    const count = out[at + 2]! | (out[at + 3]! << 8);
    // A copy: `out` is written again by the next tick.
    packets.push({ ifp: out.slice(at + 4, at + 4 + length), count });
    at += 4 + length;
  }
  return { packets, events: NO_EVENTS, finished: false, samples };
}

/** Shared by every step without events (steps hand out their events read-only). */
const NO_EVENTS: readonly EngineEvent[] = Object.freeze([]);

function toStatistics(s: AddonStatistics): TransferStatistics {
  return {
    pagesTx: s.pagesTx,
    pagesRx: s.pagesRx,
    pagesInFile: Math.max(0, s.pagesInFile),
    bitRate: s.bitRate,
    ecm: s.ecm,
    ecmRetries: s.ecmRetries,
    encoding: toEncoding(s.encoding),
    width: s.width,
    length: s.length,
    xDpi: Math.round(s.xResolution * INCHES_PER_METRE),
    yDpi: Math.round(s.yResolution * INCHES_PER_METRE),
    imageBytes: s.imageBytes,
    badRows: s.badRows,
    longestBadRowRun: s.longestBadRowRun,
    currentStatus: s.currentStatus,
    remoteIdent: s.remoteIdent.trim(),
    localIdent: s.localIdent,
    samples: s.samples,
  };
}

class SpandspSession {
  protected readonly addon: SpandspAddon;
  #handle: AddonHandle | null;

  constructor(addon: SpandspAddon, handle: AddonHandle) {
    this.addon = addon;
    this.#handle = handle;
  }

  protected get handle(): AddonHandle {
    if (this.#handle === null) throw new Error("the fax engine session is closed");
    return this.#handle;
  }

  statistics(): TransferStatistics {
    return toStatistics(this.addon.statistics(this.handle));
  }

  close(): void {
    if (this.#handle === null) return;
    this.addon.free(this.#handle);
    this.#handle = null;
  }
}

/** Room for a tick's packets in t38AdvanceInto: far more than one 20 ms tick produces (about 40 bytes of image data at 14 400 bit/s). */
const ADVANCE_BYTES = 8192;

class SpandspT38Session extends SpandspSession implements T38Session {
  /** Where t38AdvanceInto writes a tick's packets (one per session: a session's calls never overlap). */
  readonly #tick: Uint8Array | null;

  advance(samples: number): T38Step {
    if (!Number.isInteger(samples) || samples < 0) throw new RangeError(`samples must be a whole number >= 0, got ${samples}`);
    const out = this.#tick;
    if (out !== null) {
      // The common tick (no event, not finished) comes back as bytes, not as objects built by the addon.
      const n = this.addon.t38AdvanceInto(this.handle, samples, out);
      if (n >= 0) return readAdvanced(out, n);
      return toT38Step(this.addon.t38Advance(this.handle, 0));
    }
    return toT38Step(this.addon.t38Advance(this.handle, samples));
  }

  receiveIfp(ifp: Uint8Array, seq: number): T38Step {
    if (!Number.isInteger(seq) || seq < 0 || seq > 0xffff) throw new RangeError(`seq must be 0 to 65535, got ${seq}`);
    const step = this.addon.t38ReceiveIfp(this.handle, ifp, seq);
    return toT38Step(step);
  }

  /**
   * Offered for sending sessions only: a sender gets few IFPs, one of which (the DIS) costs
   * several ms. A receiver gets an IFP every 30 ms or so, and SpanDSP writes received pages with
   * calls (localtime) that are not safe on several threads at once.
   */
  readonly receiveIfpAsync?: (ifp: Uint8Array, seq: number) => Promise<T38Step>;

  constructor(addon: SpandspAddon, handle: AddonHandle, sending: boolean, packedTicks: boolean) {
    super(addon, handle);
    this.#tick = packedTicks ? new Uint8Array(ADVANCE_BYTES) : null;
    if (sending) {
      this.receiveIfpAsync = async (ifp, seq) => {
        if (!Number.isInteger(seq) || seq < 0 || seq > 0xffff) throw new RangeError(`seq must be 0 to 65535, got ${seq}`);
        const step = await this.addon.t38ReceiveIfpAsync(this.handle, ifp, seq);
        return toT38Step(step);
      };
    }
  }
}

class SpandspAudioSession extends SpandspSession implements AudioSession {
  process(received: Int16Array | number): AudioStep {
    const step = this.addon.audioProcess(this.handle, received);
    return { audio: step.audio, events: step.events.map(toEvent), finished: step.finished, samples: step.samples };
  }
}

/**
 * Writes the fax TIFF `src` to `dst` with its rows uncompressed, for a sending session to read:
 * SpanDSP reads a page when the receiver's DIS arrives (and each later page at its start) in one
 * engine call, and without a G4 page to decode that call takes about half as long (2.3 vs 5.1 ms
 * for an A4 HIGH text page; docs/benchmarks.md, bench:lines). Runs on libuv's thread pool. False
 * (and no file) when the copy would exceed `maxBytes` (about 0.5 MB per A4 HIGH page): the caller
 * then sends `src` as it is. Rejects when `src` is not a bilevel TIFF.
 */
export async function uncompressFaxTiff(src: string, dst: string, maxBytes: number, addonPath?: string): Promise<boolean> {
  return (await loadAddon(addonPath).uncompressTiff(src, dst, maxBytes)) > 0;
}

export class SpandspEngine implements Engine {
  readonly name = "spandsp";
  readonly #addon: SpandspAddon;
  /** T.38 ticks through t38AdvanceInto (`packedTicks: false` compares with t38Advance in tests). */
  readonly #packedTicks: boolean;

  private constructor(addon: SpandspAddon, packedTicks: boolean) {
    this.#addon = addon;
    this.#packedTicks = packedTicks;
  }

  /**
   * Loads the addon (once per process): from `addonPath`, else `FAXLINE_SPANDSP_ADDON`, else
   * native/spandsp-engine/build/Release/spandsp_engine.node in the repository. Throws
   * `SpandspAddonError`, naming scripts/build-native.sh and the Debian packages, when it is missing
   * or cannot be loaded. `packedTicks: false`: every T.38 tick through t38Advance (objects built
   * by the addon) instead of t38AdvanceInto, to compare the two.
   */
  static load(options: { addonPath?: string; packedTicks?: boolean } = {}): SpandspEngine {
    return new SpandspEngine(loadAddon(options.addonPath), options.packedTicks ?? true);
  }

  /** Whether T.38 ticks go through t38AdvanceInto (false when asked). */
  get packedTicks(): boolean {
    return this.#packedTicks;
  }

  openT38Session(options: T38SessionOptions): T38Session {
    const maxDatagram = options.maxDatagram ?? 400;
    if (!Number.isInteger(maxDatagram) || maxDatagram < 32) throw new RangeError(`maxDatagram must be a whole number >= 32, got ${maxDatagram}`);
    const handle = this.#addon.t38Create({
      ...addonOptions(options),
      t38Version: options.t38Version ?? 0,
      maxDatagram,
      pacing: options.pacing ?? true,
    });
    return new SpandspT38Session(this.#addon, handle, (options.mode ?? "send") === "send", this.#packedTicks);
  }

  openAudioSession(options: AudioSessionOptions): AudioSession {
    return new SpandspAudioSession(this.#addon, this.#addon.audioCreate(addonOptions(options)));
  }

  /** SpanDSP's text for a completion code (`t30_completion_code_to_str`). */
  completionCodeText(code: number): string {
    return this.#addon.completionCodeText(code);
  }

  /** SpanDSP's name for a frame control field (`t30_frametype`). */
  frameName(fcf: number): string {
    return this.#addon.frameName(fcf);
  }
}

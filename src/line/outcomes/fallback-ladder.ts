/**
 * The fallback ladder and the per-destination capability cache: which fax settings the next
 * call to a number uses. Pure: the store keeps the cache (store/queries/destination-capabilities.ts),
 * these functions decide.
 *
 * The ladder, most capable first (FusionPBX and HylaFAX walk similar ones; peers-and-gaps §6
 * and §7 G3: carriers that mishandle T.38, VoIP audio that loses image data without ECM):
 *
 *   0  T.38   with ECM      up to 14 400 bit/s
 *   1  G.711  with ECM      up to 14 400 bit/s
 *   2  T.38   without ECM   up to  9 600 bit/s
 *   3  G.711  without ECM   up to  9 600 bit/s
 *
 * A trunk with T.38 off or ECM off cannot use some rungs; they become their nearest allowed
 * mode (T.38 → G.711, ECM → no ECM at the same speed) and repeats drop out, so a trunk without
 * T.38 walks G.711 with ECM → G.711 without ECM at 9600.
 *
 * Successive attempts to one destination (over all jobs: it is the remote machine that is
 * difficult, not the job) walk down the ladder:
 *  - the first call, or one after the cache has aged out (`lines.capabilityMaxAge`), starts at
 *    the top;
 *  - after a success, calls start at the mode that worked;
 *  - after a protocol-class failure (`CallOutcome.advancesLadder`: T.30 errors, T.38 refused,
 *    silence after a switch to T.38), the next call starts one rung below the mode that
 *    failed; at the bottom it stays there;
 *  - busy, no answer, wrong numbers and carrier errors leave the cache as it is: they say
 *    nothing about the fax path;
 *  - once T.38 was refused, the T.38 rungs are skipped until T.38 works again or the refusal
 *    ages out.
 */
import type { FaxTransport } from "./call-outcomes.ts";

export interface FaxMode {
  transport: FaxTransport;
  ecm: boolean;
  /** Highest image bit rate offered (14 400: V.17; 9 600: V.29). */
  maxBitRate: number;
}

export const FALLBACK_LADDER: readonly FaxMode[] = Object.freeze([
  Object.freeze({ transport: "t38", ecm: true, maxBitRate: 14_400 }),
  Object.freeze({ transport: "g711", ecm: true, maxBitRate: 14_400 }),
  Object.freeze({ transport: "t38", ecm: false, maxBitRate: 9_600 }),
  Object.freeze({ transport: "g711", ecm: false, maxBitRate: 9_600 }),
] satisfies FaxMode[]);

/** What a trunk allows. */
export interface TrunkFaxOptions {
  t38: boolean;
  ecm: boolean;
}

export function sameMode(a: FaxMode, b: FaxMode): boolean {
  return a.transport === b.transport && a.ecm === b.ecm && a.maxBitRate === b.maxBitRate;
}

/** A mode as a trunk can run it: T.38 becomes G.711 without T.38, ECM goes without ECM. */
export function modeOnTrunk(mode: FaxMode, trunk: TrunkFaxOptions): FaxMode {
  return {
    transport: trunk.t38 ? mode.transport : "g711",
    ecm: trunk.ecm ? mode.ecm : false,
    maxBitRate: mode.maxBitRate,
  };
}

/** The ladder a trunk walks: the full ladder mapped onto what it allows, repeats removed. */
export function ladderFor(trunk: TrunkFaxOptions): FaxMode[] {
  const out: FaxMode[] = [];
  for (const rung of FALLBACK_LADDER) {
    const mode = modeOnTrunk(rung, trunk);
    if (!out.some((m) => sameMode(m, mode))) out.push(mode);
  }
  return out;
}

/** What the cache holds for one E.164 destination. Times are ms since the epoch. */
export interface DestinationCapability {
  e164: string;
  /** The mode of the last delivered call; null when none was delivered (in the trusted past). */
  worked: FaxMode | null;
  /** Bit rate that call actually ran at. */
  workedBitRate: number | null;
  workedAt: number | null;
  /** The mode of the last protocol-class failure since then; null when none. */
  failed: FaxMode | null;
  failedAt: number | null;
  /** Reason code of that failure, for operators. */
  failedReason: string | null;
  /** Protocol-class failures in a row since the last success. */
  failuresInRow: number;
  /** When T.38 was last refused (re-INVITE answered 488/415/606); null when never, or it worked since. */
  t38RefusedAt: number | null;
  updatedAt: number;
}

export type ModeBasis = "default" | "worked" | "after_failure";

export interface ModeChoice {
  mode: FaxMode;
  /** Index in the trunk's ladder. */
  rung: number;
  basis: ModeBasis;
}

/** The rung of the trunk's ladder that a remembered mode stands for. */
function rungOf(ladder: readonly FaxMode[], mode: FaxMode, trunk: TrunkFaxOptions): number {
  const mapped = modeOnTrunk(mode, trunk);
  const exact = ladder.findIndex((m) => sameMode(m, mapped));
  if (exact !== -1) return exact;
  // A mode this ladder lacks (the trunk changed): the first rung no more demanding than it.
  const gentler = ladder.findIndex(
    (m) => m.transport === mapped.transport && (mapped.ecm || !m.ecm) && m.maxBitRate <= mapped.maxBitRate,
  );
  return gentler === -1 ? ladder.length - 1 : gentler;
}

function fresh(at: number | null, now: number, maxAgeMs: number): at is number {
  return at !== null && now - at < maxAgeMs;
}

/**
 * The mode the next call to a destination uses. `record` is the cache entry (null: none),
 * `maxAgeMs` is `lines.capabilityMaxAge`.
 */
export function chooseFaxMode(
  trunk: TrunkFaxOptions,
  record: DestinationCapability | null,
  now: number,
  maxAgeMs: number,
): ModeChoice {
  const ladder = ladderFor(trunk);
  const t38Refused = record !== null && fresh(record.t38RefusedAt, now, maxAgeMs);
  // Skips T.38 rungs after a refusal, unless nothing else is left.
  const usable = (i: number): number => {
    if (!t38Refused) return i;
    for (let j = i; j < ladder.length; j++) if (ladder[j]!.transport !== "t38") return j;
    return i;
  };
  const pick = (i: number, basis: ModeBasis): ModeChoice => {
    const rung = usable(i);
    return { mode: ladder[rung]!, rung, basis };
  };

  if (record === null) return pick(0, "default");
  const workedFresh = record.worked !== null && fresh(record.workedAt, now, maxAgeMs);
  const failedFresh = record.failed !== null && fresh(record.failedAt, now, maxAgeMs);
  if (failedFresh && (!workedFresh || record.failedAt! >= record.workedAt!)) {
    const failedRung = rungOf(ladder, record.failed!, trunk);
    return pick(Math.min(failedRung + 1, ladder.length - 1), "after_failure");
  }
  if (workedFresh) return pick(rungOf(ladder, record.worked!, trunk), "worked");
  return pick(0, "default");
}

/** What one attempt reports for the cache. */
export interface AttemptModeReport {
  /** The mode the fax exchange actually ran in (after an in-call fallback from T.38 to G.711, the G.711 one). */
  mode: FaxMode;
  delivered: boolean;
  /** `CallOutcome.advancesLadder`. */
  advancesLadder: boolean;
  /** The far end refused our T.38 re-INVITE in this call. */
  t38Refused: boolean;
  /** Bit rate the pages went at (delivered calls). */
  bitRate?: number | null;
  reasonCode?: string | null;
}

/**
 * The cache entry after an attempt, or null when the attempt teaches nothing (busy, no answer,
 * carrier trouble) and the entry stays as it is.
 */
export function updateCapability(
  e164: string,
  record: DestinationCapability | null,
  report: AttemptModeReport,
  now: number,
): DestinationCapability | null {
  const base: DestinationCapability = record ?? {
    e164,
    worked: null,
    workedBitRate: null,
    workedAt: null,
    failed: null,
    failedAt: null,
    failedReason: null,
    failuresInRow: 0,
    t38RefusedAt: null,
    updatedAt: now,
  };
  const t38RefusedAt = report.t38Refused ? now : report.delivered && report.mode.transport === "t38" ? null : base.t38RefusedAt;
  if (report.delivered) {
    return {
      ...base,
      worked: { ...report.mode },
      workedBitRate: report.bitRate ?? null,
      workedAt: now,
      failed: null,
      failedAt: null,
      failedReason: null,
      failuresInRow: 0,
      t38RefusedAt,
      updatedAt: now,
    };
  }
  if (!report.advancesLadder && !report.t38Refused) return null;
  if (!report.advancesLadder) return { ...base, t38RefusedAt, updatedAt: now };
  return {
    ...base,
    failed: { ...report.mode },
    failedAt: now,
    failedReason: report.reasonCode ?? null,
    failuresInRow: base.failuresInRow + 1,
    t38RefusedAt,
    updatedAt: now,
  };
}

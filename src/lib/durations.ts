/**
 * Durations: ISO-8601 (`PT80M`, `P1M`, `P2DT3H`) as the contract's `jobValid.end` allows, and the
 * short operator form (`90s`, `5m`, `2h`, `30d`, `250ms`) used in config.
 */

export interface IsoDuration {
  years: number;
  months: number;
  weeks: number;
  days: number;
  hours: number;
  minutes: number;
  seconds: number;
}

const ISO_DURATION =
  /^P(?!$)(?:(\d+(?:[.,]\d+)?)Y)?(?:(\d+(?:[.,]\d+)?)M)?(?:(\d+(?:[.,]\d+)?)W)?(?:(\d+(?:[.,]\d+)?)D)?(?:T(?=\d)(?:(\d+(?:[.,]\d+)?)H)?(?:(\d+(?:[.,]\d+)?)M)?(?:(\d+(?:[.,]\d+)?)S)?)?$/i;

export function parseIsoDuration(text: string): IsoDuration | null {
  const m = ISO_DURATION.exec(text.trim());
  if (!m) return null;
  const n = (i: number) => (m[i] ? Number(m[i]!.replace(",", ".")) : 0);
  return { years: n(1), months: n(2), weeks: n(3), days: n(4), hours: n(5), minutes: n(6), seconds: n(7) };
}

/** Adds an ISO duration to a point in time, with calendar semantics for years and months. */
export function addIsoDuration(startMs: number, d: IsoDuration): number {
  const date = new Date(startMs);
  if (d.years || d.months) {
    const wholeMonths = Math.trunc(d.years * 12 + d.months);
    const day = date.getUTCDate();
    date.setUTCDate(1);
    date.setUTCMonth(date.getUTCMonth() + wholeMonths);
    const lastDay = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate();
    date.setUTCDate(Math.min(day, lastDay));
  }
  const ms =
    (d.weeks * 7 + d.days) * 86_400_000 + d.hours * 3_600_000 + d.minutes * 60_000 + d.seconds * 1000;
  return date.getTime() + Math.round(ms);
}

const SHORT_DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/i;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Parses a config duration into milliseconds: a number (ms), `250ms`, `30s`, `5m`, `2h`, `30d`,
 * or an ISO-8601 duration without years or months. Returns null when it is none of these.
 */
export function parseDurationMs(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) && value >= 0 ? value : null;
  if (typeof value !== "string") return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const short = SHORT_DURATION.exec(text);
  if (short) return Math.round(Number(short[1]) * UNIT_MS[short[2]!.toLowerCase()]!);
  const iso = parseIsoDuration(text);
  if (iso && !iso.years && !iso.months) return addIsoDuration(0, iso);
  return null;
}

export function formatDurationMs(ms: number): string {
  if (ms % 86_400_000 === 0 && ms > 0) return `${ms / 86_400_000}d`;
  if (ms % 3_600_000 === 0 && ms > 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

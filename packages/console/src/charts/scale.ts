/**
 * The arithmetic of the console's charts, without DOM: value axes with round ticks, time axes
 * with ticks on whole seconds, minutes or hours, and the thinning of category labels.
 */

/** Round tick values from 0 (or below) to at least `max`, about `count` of them; `integers`: whole steps only. */
export function niceTicks(min: number, max: number, count = 5, integers = false): number[] {
  const lo = Math.min(0, min);
  let hi = Math.max(max, lo);
  if (hi === lo) hi = lo + 1;
  const rough = (hi - lo) / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(rough));
  const steps = [1, 2, 2.5, 5, 10].map((m) => m * power).filter((s) => !integers || Number.isInteger(s));
  const step = steps.find((s) => s >= rough) ?? 10 * power;
  const first = Math.floor(lo / step) * step;
  const ticks: number[] = [];
  // Whole numbers of steps, so that 0.1 + 0.2 never shows as 0.30000000000000004.
  const decimals = Math.max(0, -Math.floor(Math.log10(step)) + (step / power === 2.5 ? 1 : 0));
  for (let i = 0; ; i++) {
    const v = Number((first + i * step).toFixed(decimals));
    ticks.push(v);
    if (v >= hi) break;
  }
  return ticks;
}

/** Whole-number ticks for counts (calls, faxes): never 0.5 of a call. */
export function countTicks(max: number, count = 5): number[] {
  if (max <= count) return Array.from({ length: Math.max(1, Math.ceil(max)) + 1 }, (_, i) => i);
  return niceTicks(0, max, count, true);
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const TIME_STEPS = [5 * SECOND, 10 * SECOND, 15 * SECOND, 30 * SECOND, MINUTE, 2 * MINUTE, 5 * MINUTE, 10 * MINUTE, 15 * MINUTE, 30 * MINUTE, HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR];

/** Ticks on a time axis from `from` to `to` (ms): whole steps of local time, at most `count`. */
export function timeTicks(from: number, to: number, count = 6): { ticks: number[]; step: number } {
  const span = Math.max(1, to - from);
  const step = TIME_STEPS.find((s) => span / s <= count) ?? 24 * HOUR;
  // Steps align on the local clock (10:05, 10:10 …): shift by the zone's offset before rounding.
  const offset = new Date(from).getTimezoneOffset() * MINUTE;
  const first = Math.ceil((from - offset) / step) * step + offset;
  const ticks: number[] = [];
  for (let t = first; t <= to; t += step) ticks.push(t);
  return { ticks, step };
}

/** Shows every n-th of `count` category labels so that labels `labelWidth` wide fit in `width`. */
export function labelEvery(count: number, width: number, labelWidth: number): number {
  if (count <= 0) return 1;
  return Math.max(1, Math.ceil((count * labelWidth) / Math.max(1, width)));
}

/** A linear map from [d0, d1] to [r0, r1]. */
export function linear(d0: number, d1: number, r0: number, r1: number): (v: number) => number {
  const span = d1 - d0 || 1;
  return (v) => r0 + ((v - d0) / span) * (r1 - r0);
}

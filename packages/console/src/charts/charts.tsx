/**
 * The console's charts: hand-made SVG drawn by Preact (ADR 0019), three kinds.
 *
 *  - LineChart: values over time (the Operations page's live charts), one line per series.
 *  - BarChart: values per category (days, weeks), series side by side or stacked.
 *  - RankChart: one value per category as horizontal bars, largest first (failure reasons,
 *    failing destinations).
 *
 * Every chart is a <figure>: its caption, the drawing (an image with a name and a one-line
 * summary for screen readers, patterns as well as colours), a legend, the same numbers as a
 * table (behind "Show as table"), and "Download CSV" with those numbers unformatted. Numbers and
 * dates follow the console's language.
 */
import type { ComponentChildren, RefObject } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { formatClock, t } from "../i18n.ts";
import { toCsv } from "./csv.ts";
import { countTicks, labelEvery, linear, niceTicks, timeTicks } from "./scale.ts";

/** One position on the x axis: its CSV value, its label, and (time axes) its instant in ms. */
export interface ChartPoint {
  csv: string;
  label: string;
  at?: number;
}

export interface ChartSeries {
  /** The CSV column. */
  key: string;
  label: string;
  values: readonly (number | null)[];
  /** In the table and the CSV only, not drawn (a count beside the times it explains). */
  tableOnly?: boolean;
  /** Its values' format, when not the chart's. */
  format?: (v: number) => string;
}

export interface ChartProps {
  id: string;
  title: string;
  /** A sentence under the caption: what is counted, over what. */
  note?: ComponentChildren;
  /** The x column: its CSV name and its table heading. */
  x: { key: string; label: string };
  points: readonly ChartPoint[];
  series: readonly ChartSeries[];
  /** Values as the table, axis and tooltips show them. */
  format: (v: number) => string;
  /** Whole numbers only (counts): the axis ticks stay whole. */
  counts?: boolean;
  /** The CSV file's name, without ".csv". */
  csvName: string;
  /** Shown instead of the drawing when there is nothing to draw. */
  empty?: string;
  /** Text columns the table and the CSV show after the series (a destination's country and reasons). */
  columns?: readonly { key: string; label: string; values: readonly string[] }[];
  /** Axis ticks fall on whole multiples of this (60: minutes of a value in seconds). */
  tickUnit?: number;
}

const HEIGHT = 220;
const FONT_WIDTH = 7;
const MARGIN = { top: 10, right: 14, bottom: 26 };

/** The width the chart's box has, followed as it changes. */
function useWidth(): [RefObject<HTMLDivElement | null>, number] {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(640);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const measure = () => setWidth(Math.max(240, Math.floor(el.clientWidth)));
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}

function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: "text/csv;charset=utf-8" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = `${name}.csv`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** The chart's numbers as CSV: the x column, then one column per series. */
export function chartCsv(props: Pick<ChartProps, "x" | "points" | "series" | "columns">): string {
  const columns = props.columns ?? [];
  return toCsv(
    [props.x.key, ...props.series.map((s) => s.key), ...columns.map((c) => c.key)],
    props.points.map((p, i) => [p.csv, ...props.series.map((s) => s.values[i] ?? null), ...columns.map((c) => c.values[i] ?? "")]),
  );
}

/** Series drawn as bars alternate plain and hatched fills, so that they differ in more than colour. */
function Hatch({ id }: { id: string }) {
  return (
    <defs>
      <pattern id={`${id}-hatch`} width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
        <line x1="0" y1="0" x2="0" y2="6" class="chart-hatch" />
      </pattern>
    </defs>
  );
}

function Legend({ id, series, bars, latest }: { id: string; series: readonly ChartSeries[]; bars?: boolean; latest?: (s: ChartSeries) => string | null }) {
  if (series.length < 2 && !latest) return null;
  return (
    <ul class="chart-legend">
      {series.map((s, i) => {
        const value = latest?.(s) ?? null;
        return (
          <li data-series={s.key}>
            <svg width="26" height="12" aria-hidden="true" class="chart-swatch">
              {bars ? (
                <>
                  <rect x="1" y="1" width="24" height="10" class={`chart-bar s${i % 6}`} />
                  {i % 2 === 1 ? <rect x="1" y="1" width="24" height="10" fill={`url(#${id}-hatch)`} /> : null}
                </>
              ) : (
                <line x1="1" y1="6" x2="25" y2="6" class={`chart-line s${i % 6}`} />
              )}
            </svg>
            {s.label}
            {value !== null ? <span class="chart-legend-value">{value}</span> : null}
          </li>
        );
      })}
    </ul>
  );
}

function DataTable({ props }: { props: ChartProps }) {
  return (
    <details class="chart-table">
      <summary>{t("chart.showTable")}</summary>
      {/* A region of its own: it scrolls, so the keyboard must reach it (WCAG 2.1.1). */}
      <div class="chart-table-scroll" tabIndex={0} role="region" aria-label={t("chart.tableOf", { title: props.title })}>
        <table>
          <caption class="visually-hidden">{props.title}</caption>
          <thead>
            <tr>
              <th scope="col">{props.x.label}</th>
              {props.series.map((s) => (
                <th scope="col" class="num">
                  {s.label}
                </th>
              ))}
              {(props.columns ?? []).map((c) => (
                <th scope="col">{c.label}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {props.points.map((p, i) => (
              <tr data-x={p.csv}>
                <th scope="row">{p.label}</th>
                {props.series.map((s) => {
                  const v = s.values[i];
                  return (
                    <td class="num" data-series={s.key}>
                      {written(v, s.format ?? props.format)}
                    </td>
                  );
                })}
                {(props.columns ?? []).map((c) => (
                  <td data-column={c.key}>{c.values[i] ?? ""}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}

/** The figure around every chart: caption, drawing, legend, table and CSV download. */
function ChartFigure({ props, summary, legend, children }: { props: ChartProps; summary: string; legend?: ComponentChildren; children: ComponentChildren }) {
  const hasData = props.points.length > 0;
  return (
    <figure class="chart" id={props.id} data-chart={props.id} data-points={props.points.length}>
      <figcaption>
        <span class="chart-title" id={`${props.id}-title`}>
          {props.title}
        </span>
        {hasData ? (
          <button type="button" class="button-quiet chart-csv" aria-describedby={`${props.id}-title`} onClick={() => download(props.csvName, chartCsv(props))}>
            {t("chart.csv")}
          </button>
        ) : null}
      </figcaption>
      {props.note ? <p class="chart-note small muted">{props.note}</p> : null}
      {hasData ? (
        <>
          <div class="chart-drawing" role="img" aria-label={`${props.title}: ${summary}`}>
            {children}
          </div>
          {legend}
          <DataTable props={props} />
        </>
      ) : (
        <p class="muted chart-empty">{props.empty ?? t("chart.empty")}</p>
      )}
    </figure>
  );
}

/** A value as the chart writes it, "–" for none. */
const written = (v: number | null | undefined, format: (v: number) => string) => (v === null || v === undefined ? "–" : format(v));

/** The values at one x, beside the pointer (the table says the same to a screen reader). */
function Tip({ props, index, left }: { props: ChartProps; index: number; left: number }) {
  return (
    <div class="chart-tip" aria-hidden="true" style={{ left: `${left}px` }}>
      <strong>{props.points[index]!.label}</strong>
      {props.series.map((s) => (
        <div>
          {s.label}: {written(s.values[index], s.format ?? props.format)}
        </div>
      ))}
    </div>
  );
}

function maxOf(series: readonly ChartSeries[], stacked = false, count = 0): number {
  let max = 0;
  if (stacked) {
    for (let i = 0; i < count; i++) max = Math.max(max, series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  } else {
    for (const s of series) for (const v of s.values) if (v !== null && v > max) max = v;
  }
  return max;
}

function YAxis({ ticks, y, left, right, format }: { ticks: number[]; y: (v: number) => number; left: number; right: number; format: (v: number) => string }) {
  return (
    <g class="chart-axis">
      {ticks.map((v) => (
        <g>
          <line x1={left} x2={right} y1={y(v)} y2={y(v)} class={v === 0 ? "chart-baseline" : "chart-grid"} />
          <text x={left - 6} y={y(v)} dy="0.32em" text-anchor="end">
            {format(v)}
          </text>
        </g>
      ))}
    </g>
  );
}

/** The y axis' ticks and the room their labels need. */
function valueAxis(props: ChartProps, max: number, yMax?: number) {
  const unit = props.tickUnit ?? 1;
  const ticks =
    yMax !== undefined ? niceTicks(0, Math.max(yMax, max), 4) : props.counts ? countTicks(max, 4) : niceTicks(0, max / unit, 4).map((v) => v * unit);
  const labelWidth = Math.max(...ticks.map((v) => props.format(v).length)) * FONT_WIDTH + 10;
  return { ticks, left: Math.max(36, labelWidth) };
}

/**
 * Values over time, or along categories (days, weeks) when no `from`/`to` is given.
 * `from`/`to` fix a time axis (a live chart's window) and points carry `at`. Null values leave a
 * gap (no sample: the store did not answer; no fax that day). `dots`: separate measurements
 * (renders of an interval), drawn as dots without lines between them.
 */
export function LineChart(all: ChartProps & { from?: number; to?: number; yMax?: number; dots?: boolean }) {
  const [ref, width] = useWidth();
  const [hover, setHover] = useState<number | null>(null);
  // The drawing, legend and tooltip show the drawn series; the figure's table and CSV all of them.
  const props = { ...all, series: all.series.filter((s) => !s.tableOnly) };
  const { ticks, left } = valueAxis(props, maxOf(props.series), props.yMax);
  const timed = props.from !== undefined && props.to !== undefined;
  const n = props.points.length;
  // Categories sit in the middle of equal bands, as a bar chart's do.
  const band = (width - MARGIN.right - left) / Math.max(1, n);
  const x = timed ? linear(props.from!, props.to!, left, width - MARGIN.right) : (i: number) => left + band * (i + 0.5);
  const y = linear(0, ticks[ticks.length - 1]!, HEIGHT - MARGIN.bottom, MARGIN.top);
  const times = timed ? timeTicks(props.from!, props.to!, Math.max(2, Math.floor((width - left) / 90))) : null;
  const at = props.points.map((p, i) => (timed ? (p.at ?? 0) : i));
  const every = labelEvery(n, width - MARGIN.right - left, Math.max(1, ...props.points.map((p) => p.label.length)) * FONT_WIDTH + 8);
  const paths = props.series.map((s) => {
    let d = "";
    let pen = false;
    s.values.forEach((v, i) => {
      if (v === null || v === undefined) {
        pen = false;
        return;
      }
      d += `${pen ? "L" : "M"}${x(at[i]!).toFixed(1)},${y(v).toFixed(1)}`;
      pen = true;
    });
    return d;
  });
  const last = props.points.length - 1;
  const summary = props.series
    .map((s) => {
      const v = s.values[last];
      return `${s.label} ${written(v, props.format)}`;
    })
    .join(", ");
  const onMove = (e: PointerEvent) => {
    const box = (e.currentTarget as SVGSVGElement).getBoundingClientRect();
    const px = e.clientX - box.left;
    let best = -1;
    let bestDistance = Infinity;
    at.forEach((ms, i) => {
      const d = Math.abs(x(ms) - px);
      if (d < bestDistance) {
        bestDistance = d;
        best = i;
      }
    });
    setHover(best >= 0 ? best : null);
  };
  const shown = hover !== null && hover <= last ? hover : null;
  return (
    <ChartFigure
      props={all}
      summary={t("chart.latest", { values: summary })}
      legend={<Legend id={props.id} series={props.series} latest={(s) => (s.values[last] === null || s.values[last] === undefined ? null : props.format(s.values[last]!))} />}
    >
      <div class="chart-box" ref={ref}>
        <svg width={width} height={HEIGHT} aria-hidden="true" onPointerMove={onMove} onPointerLeave={() => setHover(null)}>
          <YAxis ticks={ticks} y={y} left={left} right={width - MARGIN.right} format={props.format} />
          <g class="chart-axis">
            {times
              ? times.ticks.map((ms) => (
                  <text x={x(ms)} y={HEIGHT - 6} text-anchor="middle">
                    {formatClock(ms, times.step < 60_000)}
                  </text>
                ))
              : props.points.map((p, i) =>
                  i % every === 0 ? (
                    <text x={x(i)} y={HEIGHT - 6} text-anchor="middle">
                      {p.label}
                    </text>
                  ) : null,
                )}
          </g>
          {props.dots ? null : paths.map((d, i) => <path d={d} class={`chart-line s${i % 6}`} data-series={props.series[i]!.key} />)}
          {props.series.map((s, i) =>
            s.values.map((v, k) => {
              // Sparse measurements (dots) show every value; otherwise a value between gaps, which no line reaches.
              const alone = (k === 0 || s.values[k - 1] === null || s.values[k - 1] === undefined) && (k === last || s.values[k + 1] === null || s.values[k + 1] === undefined);
              return v !== null && v !== undefined && (props.dots || alone) ? <circle cx={x(at[k]!)} cy={y(v)} r="3" class={`chart-dot s${i % 6}`} /> : null;
            }),
          )}
          {shown !== null ? (
            <g class="chart-hover">
              <line x1={x(at[shown]!)} x2={x(at[shown]!)} y1={MARGIN.top} y2={HEIGHT - MARGIN.bottom} />
              {props.series.map((s, i) => (s.values[shown] === null || s.values[shown] === undefined ? null : <circle cx={x(at[shown]!)} cy={y(s.values[shown]!)} r="3.5" class={`chart-dot s${i % 6}`} />))}
            </g>
          ) : null}
        </svg>
        {shown !== null ? <Tip props={props} index={shown} left={Math.min(x(at[shown]!) + 10, width - 180)} /> : null}
      </div>
    </ChartFigure>
  );
}

/** Values per category (days, weeks, months): series side by side, or stacked. */
export function BarChart(props: ChartProps & { stacked?: boolean; yMax?: number }) {
  const [ref, width] = useWidth();
  const [hover, setHover] = useState<number | null>(null);
  const n = props.points.length;
  const { ticks, left } = valueAxis(props, maxOf(props.series, props.stacked, n), props.yMax);
  const plot = width - MARGIN.right - left;
  const band = plot / Math.max(1, n);
  const y = linear(0, ticks[ticks.length - 1]!, HEIGHT - MARGIN.bottom, MARGIN.top);
  const longest = Math.max(1, ...props.points.map((p) => p.label.length));
  const every = labelEvery(n, plot, longest * FONT_WIDTH + 8);
  const gap = band > 6 ? Math.min(band * 0.2, 8) : 0;
  const groups = props.stacked ? 1 : props.series.length;
  const barWidth = Math.max(1, (band - gap) / groups);
  const totals = props.series.map((s) => s.values.reduce<number>((sum, v) => sum + (v ?? 0), 0));
  const summary = props.series.map((s, i) => `${s.label} ${props.format(totals[i]!)}`).join(", ");
  return (
    <ChartFigure props={props} summary={t("chart.total", { n, values: summary })} legend={<Legend id={props.id} series={props.series} bars />}>
      <div class="chart-box" ref={ref}>
        <svg width={width} height={HEIGHT} aria-hidden="true" onPointerLeave={() => setHover(null)}>
          <Hatch id={props.id} />
          <YAxis ticks={ticks} y={y} left={left} right={width - MARGIN.right} format={props.format} />
          {props.points.map((p, i) => {
            let base = 0;
            const x0 = left + i * band + gap / 2;
            return (
              <g class={hover === i ? "chart-band hovered" : "chart-band"} onPointerEnter={() => setHover(i)}>
                <rect class="chart-hit" x={left + i * band} y={MARGIN.top} width={band} height={HEIGHT - MARGIN.bottom - MARGIN.top} />
                {props.series.map((s, k) => {
                  const v = s.values[i] ?? 0;
                  const top = props.stacked ? base + v : v;
                  const bottom = props.stacked ? base : 0;
                  base = top;
                  if (v <= 0) return null;
                  const box = { x: props.stacked ? x0 : x0 + k * barWidth, width: Math.max(1, barWidth - (groups > 1 ? 1 : 0)), y: y(top), height: Math.max(0.5, y(bottom) - y(top)) };
                  return (
                    <>
                      <rect class={`chart-bar s${k % 6}`} data-series={s.key} data-value={v} {...box} />
                      {k % 2 === 1 ? <rect {...box} fill={`url(#${props.id}-hatch)`} /> : null}
                    </>
                  );
                })}
                {i % every === 0 ? (
                  <text class="chart-axis-label" x={left + i * band + band / 2} y={HEIGHT - 6} text-anchor="middle">
                    {p.label}
                  </text>
                ) : null}
              </g>
            );
          })}
        </svg>
        {hover !== null && hover < n ? <Tip props={props} index={hover} left={Math.min(left + hover * band + band + 6, width - 180)} /> : null}
      </div>
    </ChartFigure>
  );
}

const ROW = 26;

/** One value per category as horizontal bars, in the order given (largest first). */
export function RankChart(props: ChartProps) {
  const [ref, width] = useWidth();
  const s = props.series[0];
  const n = props.points.length;
  const labelWidth = Math.min(Math.floor(width * 0.45), Math.max(...props.points.map((p) => p.label.length), 4) * FONT_WIDTH + 12);
  const values = s ? s.values.map((v) => v ?? 0) : [];
  const max = Math.max(1, ...values);
  const valueWidth = Math.max(...values.map((v) => props.format(v).length), 1) * FONT_WIDTH + 10;
  const x = linear(0, max, labelWidth, width - MARGIN.right - valueWidth);
  const height = n * ROW + 8;
  const summary = props.points
    .slice(0, 3)
    .map((p, i) => `${p.label} ${props.format(values[i]!)}`)
    .join(", ");
  return (
    <ChartFigure props={props} summary={t("chart.top", { n, values: summary })}>
      <div class="chart-box" ref={ref}>
        <svg width={width} height={height} aria-hidden="true">
          {props.points.map((p, i) => {
            const v = values[i]!;
            const cy = 4 + i * ROW + ROW / 2;
            const shown = p.label.length * FONT_WIDTH > labelWidth - 12 ? `${p.label.slice(0, Math.max(4, Math.floor((labelWidth - 12) / FONT_WIDTH) - 1))}…` : p.label;
            return (
              <g class="chart-rank" data-x={p.csv}>
                <title>{`${p.label}: ${props.format(v)}`}</title>
                <text class="chart-axis-label" x={labelWidth - 8} y={cy} dy="0.32em" text-anchor="end">
                  {shown}
                </text>
                <rect class="chart-bar s0" x={labelWidth} y={cy - 8} width={Math.max(1, x(v) - labelWidth)} height="16" />
                <text class="chart-value" x={x(v) + 6} y={cy} dy="0.32em">
                  {props.format(v)}
                </text>
              </g>
            );
          })}
        </svg>
      </div>
    </ChartFigure>
  );
}

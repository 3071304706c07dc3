/**
 * The Operations page's live charts: calls running on the region's nodes, each data center's
 * queue, and the serving node's render time, from the samples the node keeps
 * (GET /console/api/operations/history; src/metrics/metrics-history.ts). The page loads the
 * node's whole window once, then only the samples after the last one it has.
 */
import { useRef, useState } from "preact/hooks";
import { call } from "../api.ts";
import { LineChart, type ChartPoint, type ChartSeries } from "../charts/charts.tsx";
import { formatClock, formatNumber, t } from "../i18n.ts";
import { useRepeating } from "../live.ts";

interface OpenWork {
  toRender: number;
  due: number;
  later: number;
  inCall: number;
  notifications: number;
}

interface Sample {
  t: number;
  calls: Record<string, number> | null;
  queues: Record<string, OpenWork> | null;
  receptions: number;
  renders: number;
  renderMeanSeconds: number | null;
  renderMaxSeconds: number | null;
  callsDelivered: number;
  callsFailed: number;
}

interface History {
  node: string | null;
  roles: string[];
  nowTs: number;
  intervalMs: number;
  windowMs: number;
  samples: Sample[];
}

const RANGES = [15, 30, 60];

/** The node's history, kept up to date every `refreshMs` by asking for the newer samples. */
export function useHistory(refreshMs: number): History | null {
  const [history, setHistory] = useState<History | null>(null);
  const latest = useRef<History | null>(null);
  useRepeating(async (alive) => {
    try {
      const have = latest.current;
      const last = have?.samples.at(-1)?.t;
      const got = await call<History>("GET", `/console/api/operations/history${last !== undefined ? `?after=${last}` : ""}`);
      if (!alive()) return;
      // A node restarted between two loads starts a new history.
      const merged = have && have.node === got.node ? [...have.samples, ...got.samples] : got.samples;
      const next = { ...got, samples: merged.filter((s) => s.t > got.nowTs - got.windowMs) };
      latest.current = next;
      setHistory(next);
    } catch {
      // The page's own load reports errors; the charts keep what they have.
    }
  }, refreshMs);
  return history;
}

const countFormat = (v: number) => formatNumber(v);
const secondsFormat = (v: number) => `${formatNumber(v, v < 10 ? 2 : 1)} s`;

export function OperationsCharts({ history }: { history: History }) {
  const windowMinutes = Math.round(history.windowMs / 60_000);
  const ranges = RANGES.filter((r) => r <= Math.max(windowMinutes, RANGES[0]!));
  const [range, setRange] = useState(Math.min(15, windowMinutes) || 15);
  const to = Math.max(history.nowTs, history.samples.at(-1)?.t ?? 0);
  // A node that started a few minutes ago has only those: the axis begins at its first sample.
  const from = Math.max(to - range * 60_000, Math.min(history.samples[0]?.t ?? to, to - 60_000));
  const samples = history.samples.filter((s) => s.t >= from);
  const node = history.node ?? "–";
  const points: ChartPoint[] = samples.map((s) => ({ csv: new Date(s.t).toISOString(), label: formatClock(s.t, true), at: s.t }));
  const x = { key: "time", label: t("chart.time") };
  const stamp = new Date(to).toISOString().slice(0, 16).replace(/[-:]/g, "").replace("T", "-");

  // Calls: one line per node seen in the range, the total when there are several, and this node's receptions.
  const nodes = [...new Set(samples.flatMap((s) => Object.keys(s.calls ?? {})))].sort();
  const callSeries: ChartSeries[] = nodes.map((id) => ({ key: `calls_${id}`, label: id, values: samples.map((s) => (s.calls === null ? null : (s.calls[id] ?? 0))) }));
  if (nodes.length > 1) {
    callSeries.unshift({ key: "calls_total", label: t("ops.chart.allNodes"), values: samples.map((s) => (s.calls === null ? null : Object.values(s.calls).reduce((a, b) => a + b, 0))) });
  }
  callSeries.push({ key: `receiving_${node}`, label: t("ops.chart.receiving", { node }), values: samples.map((s) => s.receptions) });

  const datacenters = [...new Set(samples.flatMap((s) => Object.keys(s.queues ?? {})))].sort();
  const queueKeys: [keyof OpenWork, string][] = [
    ["toRender", t("ops.chart.toRender")],
    ["due", t("ops.chart.due")],
    ["later", t("ops.chart.later")],
    ["inCall", t("ops.chart.inCall")],
    ["notifications", t("ops.chart.notifications")],
  ];
  const renders = history.roles.includes("scheduler");
  // Render times exist only for intervals with renders: one dot each.
  const rendered = samples.filter((s) => s.renders > 0);

  return (
    <section class="card" aria-labelledby="ops-live">
      <div class="card-head">
        <h2 id="ops-live">{t("ops.live")}</h2>
        <label class="inline">
          {t("ops.range")}
          <select value={range} onChange={(e) => setRange(Number((e.target as HTMLSelectElement).value))}>
            {ranges.map((r) => (
              <option value={r}>{t("ops.range.minutes", { n: r })}</option>
            ))}
          </select>
        </label>
      </div>
      {samples.length === 0 ? <p class="muted">{t("ops.chart.waiting")}</p> : null}
      <div class="charts-grid">
        <LineChart
          id="chart-calls"
          title={t("ops.chart.calls")}
          note={t("ops.chart.callsNote", { node })}
          x={x}
          points={points}
          series={callSeries}
          format={countFormat}
          counts
          from={from}
          to={to}
          csvName={`faxline-calls-${stamp}`}
          empty={t("ops.chart.waiting")}
        />
        {datacenters.map((dc) => (
          <LineChart
            id={`chart-queue-${dc}`}
            title={t("ops.chart.queue", { dc })}
            note={t("ops.chart.queueNote", { dc })}
            x={x}
            points={points}
            series={queueKeys.map(([key, label]) => ({ key, label, values: samples.map((s) => (s.queues?.[dc] ? s.queues[dc]![key] : null)) }))}
            format={countFormat}
            counts
            from={from}
            to={to}
            csvName={`faxline-queue-${dc}-${stamp}`}
          />
        ))}
        <LineChart
          id="chart-render"
          title={t("ops.chart.render", { node })}
          note={renders ? t("ops.chart.renderNote", { n: formatNumber(history.intervalMs / 1000, 1) }) : t("ops.chart.renderNone")}
          x={x}
          points={renders ? rendered.map((s) => ({ csv: new Date(s.t).toISOString(), label: formatClock(s.t, true), at: s.t })) : []}
          series={[
            { key: "renders", label: t("ops.chart.renders"), values: rendered.map((s) => s.renders), tableOnly: true, format: countFormat },
            { key: "renderMeanSeconds", label: t("ops.chart.mean"), values: rendered.map((s) => s.renderMeanSeconds) },
            { key: "renderMaxSeconds", label: t("ops.chart.max"), values: rendered.map((s) => s.renderMaxSeconds) },
          ]}
          format={secondsFormat}
          dots
          from={from}
          to={to}
          csvName={`faxline-render-time-${stamp}`}
          empty={renders ? t("ops.chart.rendersNone") : t("ops.chart.renderNone")}
        />
      </div>
    </section>
  );
}

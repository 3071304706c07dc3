/**
 * Reports: what was sent and received over a range of days, as charts with their tables and
 * CSV, from the reporting interface's aggregates (one /graphql request; reports-query.ts), and
 * links to the node's streaming exports of the filtered usage records. Every login has it: a
 * login sees its own faxes, a manager its customer's, an operator any customer's or all.
 */
import { useEffect, useState } from "preact/hooks";
import type { Account } from "../api.ts";
import { BarChart, LineChart, RankChart, type ChartPoint } from "../charts/charts.tsx";
import { Notice, PageTitle, Section } from "../components.tsx";
import { formatDay, formatDuration, formatMonth, formatNumber, formatPercent, t, useLanguage } from "../i18n.ts";
import { navigate, useLocation } from "../router.ts";
import {
  dayMs,
  defaultFilters,
  exportLinks,
  filtersFromQuery,
  filtersToQuery,
  loadReports,
  periodsBetween,
  reportVariables,
  type Grouping,
  type ReportData,
  type ReportFilters,
} from "./reports-query.ts";

const count = (v: number) => formatNumber(v);
const percent = (v: number) => formatPercent(v);

/** A period's label on the axis and in the table. */
function periodLabel(period: string, group: Grouping, short: boolean): string {
  if (group === "MONTH") return formatMonth(period);
  if (group === "WEEK") return t("reports.weekOf", { day: formatDay(period, short) });
  return formatDay(period, short);
}

/** Seconds shown in the unit that suits the largest value: seconds, minutes or hours. */
function durationAxis(max: number): { unit: number; format: (v: number) => string } {
  if (max < 120) return { unit: 1, format: (v) => `${formatNumber(v, 1)} s` };
  if (max < 7200) return { unit: 60, format: (v) => `${formatNumber(v / 60, 1)} min` };
  return { unit: 3600, format: (v) => `${formatNumber(v / 3600, 1)} h` };
}

export function ReportsPage({ account }: { account: Account }) {
  useLanguage();
  const { query } = useLocation();
  const filters = filtersFromQuery(query);
  const key = filtersToQuery(filters);
  const [form, setForm] = useState<ReportFilters>(filters);
  const [data, setData] = useState<ReportData | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const viewer = { operator: account.operator, manager: account.manager };

  useEffect(() => setForm(filters), [key]);
  useEffect(() => {
    let stale = false;
    setLoading(true);
    setError(null);
    loadReports(reportVariables(filters, viewer))
      .then((d) => {
        if (!stale) setData(d);
      })
      .catch((err: Error) => {
        if (!stale) {
          setError(err.message);
          setData(null);
        }
      })
      .finally(() => {
        if (!stale) setLoading(false);
      });
    return () => {
      stale = true;
    };
  }, [key]);

  const apply = (e: Event) => {
    e.preventDefault();
    if (dayMs(form.from) > dayMs(form.to)) {
      setError(t("reports.fromAfterTo"));
      return;
    }
    navigate(`/reports?${filtersToQuery(form)}`);
  };
  const set = (name: keyof ReportFilters) => (e: Event) => setForm({ ...form, [name]: (e.target as HTMLInputElement | HTMLSelectElement).value });

  const scope = account.operator
    ? filters.customer
      ? t("reports.scope.customer", { custNr: filters.customer })
      : t("reports.scope.all")
    : account.manager
      ? t("reports.scope.manager", { custNr: account.custNr })
      : t("reports.scope.login", { login: account.login, custNr: account.custNr });

  return (
    <>
      <PageTitle>{t("reports.title")}</PageTitle>
      <p class="muted">{scope}</p>
      <section class="card" aria-labelledby="reports-filters">
        <h2 id="reports-filters" class="visually-hidden">
          {t("reports.filters")}
        </h2>
        <form class="report-filters" onSubmit={apply}>
          <label>
            {t("reports.from")}
            <input type="date" name="from" required value={form.from} onInput={set("from")} />
          </label>
          <label>
            {t("reports.to")}
            <input type="date" name="to" required value={form.to} onInput={set("to")} />
          </label>
          <label>
            {t("reports.group")}
            <select name="group" value={form.group} onChange={set("group")}>
              <option value="DAY">{t("reports.group.DAY")}</option>
              <option value="WEEK">{t("reports.group.WEEK")}</option>
              <option value="MONTH">{t("reports.group.MONTH")}</option>
            </select>
          </label>
          {account.operator ? (
            <label>
              {t("reports.customer")}
              <input name="customer" value={form.customer} placeholder={t("reports.customerAll")} onInput={set("customer")} />
            </label>
          ) : null}
          {account.operator || account.manager ? (
            <label>
              {t("reports.login")}
              <input name="login" value={form.login} placeholder={t("reports.loginAll")} onInput={set("login")} />
            </label>
          ) : null}
          <label>
            {t("jobs.datacenter")}
            <select name="datacenter" value={form.datacenter} onChange={set("datacenter")}>
              <option value="">{t("jobs.datacenter.any")}</option>
              {account.datacenters.map((dc) => (
                <option value={dc}>{dc}</option>
              ))}
            </select>
          </label>
          <label>
            {t("reports.countries")}
            <input name="countries" value={form.countries} placeholder="DEU, FRA" aria-describedby="reports-countries-hint" onInput={set("countries")} />
            <span id="reports-countries-hint" class="small muted">
              {t("reports.countriesHint")}
            </span>
          </label>
          <div class="filter-buttons">
            <button type="submit" class="button-primary">
              {t("jobs.apply")}
            </button>
            <button type="button" class="button-quiet" onClick={() => navigate(`/reports?${filtersToQuery(defaultFilters())}`)}>
              {t("jobs.reset")}
            </button>
          </div>
        </form>
        <p class="small muted">{t("reports.utc")}</p>
      </section>
      {error ? <Notice tone="error">{error}</Notice> : null}
      {loading && !data ? <p class="loading">{t("common.loading")}</p> : null}
      {data ? <ReportCharts data={data} filters={filters} busy={loading} /> : null}
      <ReportExports filters={filters} account={account} />
    </>
  );
}

function ReportCharts({ data, filters, busy }: { data: ReportData; filters: ReportFilters; busy: boolean }) {
  const periods = periodsBetween(filters.from, filters.to, filters.group);
  const sentBy = new Map(data.sent.rows.map((r) => [r.period, r]));
  const receivedBy = new Map(data.received.rows.map((r) => [r.period, r]));
  const points: ChartPoint[] = periods.map((p) => ({ csv: p, label: periodLabel(p, filters.group, true) }));
  const tablePoints: ChartPoint[] = points;
  const x = { key: "period", label: t(`reports.group.${filters.group}`) };
  const name = (chart: string) => `faxline-${chart}-${filters.from}-${filters.to}`;
  const s = data.sent.totals;
  const r = data.received.totals;
  const lineSeconds = periods.map((p) => (sentBy.get(p)?.lineSeconds ?? 0) + (receivedBy.get(p)?.lineSeconds ?? 0));
  const duration = durationAxis(Math.max(0, ...lineSeconds));
  const reasons = data.reasons.rows.filter((row) => row.reason !== null && row.reason !== "").sort((a, b) => b.faxes - a.faxes);
  const countries = [...data.countries.rows].sort((a, b) => b.faxes - a.faxes);

  return (
    <div aria-busy={busy ? "true" : "false"}>
      <Section title={t("reports.totals")} id="reports-totals">
        <dl class="totals">
          <Total id="sent" label={t("reports.sent")} value={count(s.faxes)} detail={t("reports.sentDetail", { delivered: count(s.delivered), failed: count(s.failed) })} />
          <Total id="success" label={t("reports.successRate")} value={s.successRate === null ? "–" : percent(s.successRate)} />
          <Total id="pages" label={t("reports.pages")} value={count(s.pages)} />
          <Total id="attempts" label={t("reports.callsPerFax")} value={s.attemptsPerDeliveredFax === null ? "–" : formatNumber(s.attemptsPerDeliveredFax, 2)} />
          <Total id="received" label={t("reports.received")} value={count(r.faxes)} detail={t("reports.receivedDetail", { ok: count(r.ok), partial: count(r.partial), failed: count(r.failed) })} />
          <Total id="line-time" label={t("reports.lineTime")} value={formatDuration(s.lineSeconds + r.lineSeconds)} />
        </dl>
        {data.sent.truncated || data.received.truncated ? <Notice tone="info">{t("reports.truncated")}</Notice> : null}
      </Section>
      <div class="charts-grid">
        <section class="card" aria-label={t("reports.chart.faxes")}>
          <BarChart
            id="chart-faxes"
            title={t("reports.chart.faxes")}
            x={x}
            points={tablePoints}
            series={[
              { key: "sent", label: t("reports.sent"), values: periods.map((p) => sentBy.get(p)?.faxes ?? 0) },
              { key: "received", label: t("reports.received"), values: periods.map((p) => receivedBy.get(p)?.faxes ?? 0) },
            ]}
            format={count}
            counts
            csvName={name("faxes")}
          />
        </section>
        <section class="card" aria-label={t("reports.chart.success")}>
          <LineChart
            id="chart-success"
            title={t("reports.chart.success")}
            note={t("reports.chart.successNote")}
            x={x}
            points={tablePoints}
            series={[
              { key: "sentSuccessRate", label: t("reports.sent"), values: periods.map((p) => sentBy.get(p)?.successRate ?? null) },
              { key: "receivedSuccessRate", label: t("reports.received"), values: periods.map((p) => receivedBy.get(p)?.successRate ?? null) },
            ]}
            format={percent}
            yMax={1}
            csvName={name("success-rate")}
          />
        </section>
        <section class="card" aria-label={t("reports.chart.lineTime")}>
          <BarChart
            id="chart-line-time"
            title={t("reports.chart.lineTime")}
            note={t("reports.chart.lineTimeNote")}
            x={x}
            points={tablePoints}
            series={[
              { key: "sentLineSeconds", label: t("reports.sent"), values: periods.map((p) => sentBy.get(p)?.lineSeconds ?? 0) },
              { key: "receivedLineSeconds", label: t("reports.received"), values: periods.map((p) => receivedBy.get(p)?.lineSeconds ?? 0) },
            ]}
            format={duration.format}
            tickUnit={duration.unit}
            stacked
            csvName={name("line-time")}
          />
        </section>
        <section class="card" aria-label={t("reports.chart.reasons")}>
          <RankChart
            id="chart-reasons"
            title={t("reports.chart.reasons")}
            note={t("reports.chart.reasonsNote")}
            x={{ key: "reason", label: t("job.col.reason") }}
            points={reasons.map((row) => ({ csv: row.reason!, label: row.reason! }))}
            series={[{ key: "faxes", label: t("reports.failedFaxes"), values: reasons.map((row) => row.faxes) }]}
            format={count}
            csvName={name("failure-reasons")}
            empty={t("reports.noFailures")}
          />
        </section>
        <section class="card" aria-label={t("reports.chart.failing")}>
          <RankChart
            id="chart-failing"
            title={t("reports.chart.failing")}
            x={{ key: "number", label: t("ops.number") }}
            points={data.failing.map((d) => ({ csv: d.number, label: d.number }))}
            series={[
              { key: "failedFaxes", label: t("reports.failedFaxes"), values: data.failing.map((d) => d.failedFaxes) },
              { key: "attempts", label: t("reports.calls"), values: data.failing.map((d) => d.attempts), tableOnly: true },
            ]}
            columns={[
              { key: "country", label: t("reports.country"), values: data.failing.map((d) => d.country) },
              { key: "reasons", label: t("job.col.reason"), values: data.failing.map((d) => d.reasons.map((x) => `${x.reason}:${x.faxes}`).join(";")) },
            ]}
            format={count}
            csvName={name("failing-destinations")}
            empty={t("reports.noFailures")}
          />
        </section>
        <section class="card" aria-label={t("reports.chart.countries")}>
          <RankChart
            id="chart-countries"
            title={t("reports.chart.countries")}
            x={{ key: "country", label: t("reports.country") }}
            points={countries.map((row) => ({ csv: row.country ?? "", label: row.country || t("reports.countryUnknown") }))}
            series={[
              { key: "faxes", label: t("reports.sent"), values: countries.map((row) => row.faxes) },
              { key: "delivered", label: t("reports.delivered"), values: countries.map((row) => row.delivered), tableOnly: true },
            ]}
            format={count}
            csvName={name("countries")}
          />
        </section>
      </div>
    </div>
  );
}

function Total({ id, label, value, detail }: { id: string; label: string; value: string; detail?: string }) {
  return (
    <div class="total" data-total={id}>
      <dt>{label}</dt>
      <dd>
        <span class="total-value">{value}</span>
        {detail ? <span class="small muted"> {detail}</span> : null}
      </dd>
    </div>
  );
}

function ReportExports({ filters, account }: { filters: ReportFilters; account: Account }) {
  const custNr = account.operator ? (filters.customer.trim() === "" ? null : filters.customer.trim()) : account.custNr;
  const links = exportLinks(filters, custNr);
  const pair = (href: ((f: "csv" | "json") => string) | null, what: string, id: string) => (
    <li data-export={id}>
      <span>{what}</span>{" "}
      {href ? (
        <>
          <a href={href("csv")} download>
            CSV
          </a>{" "}
          ·{" "}
          <a href={href("json")} download>
            JSON
          </a>
        </>
      ) : (
        <span class="muted">{t("reports.export.needCustomer")}</span>
      )}
    </li>
  );
  return (
    <Section title={t("reports.export")} id="reports-export">
      <p class="small muted">{t("reports.export.intro")}</p>
      <ul class="plain-list exports">
        {pair(links.outRecords, t("reports.export.outRecords"), "out-records")}
        {pair(links.inRecords, t("reports.export.inRecords"), "in-records")}
        {pair(links.outSummary, t("reports.export.outSummary"), "out-summary")}
        {pair(links.inSummary, t("reports.export.inSummary"), "in-summary")}
      </ul>
    </Section>
  );
}

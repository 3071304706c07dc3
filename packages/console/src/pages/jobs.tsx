import { useEffect, useState } from "preact/hooks";
import { ApiFailure, call, type Account } from "../api.ts";
import { Notice, PageTitle, StatusBadge } from "../components.tsx";
import { formatTime, t, useLanguage } from "../i18n.ts";
import { useJobChanges } from "../live.ts";
import { linkTo, navigate, useLocation } from "../router.ts";

interface JobRow {
  jobId: string;
  state: string;
  datacenter: string;
  createdTs: string;
  pages: number | null;
  reference: string | null;
  test: boolean;
  recipients: { number: string; state: string; status: string | null; reasonCode: string | null; attempts: number }[];
}

const FILTERS = ["q", "status", "from", "to", "number", "reference", "datacenter", "limit"] as const;
const SHOWN_RECIPIENTS = 4;

export function JobsPage({ account }: { account: Account }) {
  useLanguage();
  const { query } = useLocation();
  const [rows, setRows] = useState<JobRow[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [form, setForm] = useState<Record<string, string>>(() => Object.fromEntries(FILTERS.map((k) => [k, query.get(k) ?? ""])));
  const before = query.get("before") ?? "";
  // Cursors of the pages before this one, for "Newer jobs".
  const history = (query.get("back") ?? "").split(",").filter(Boolean);
  const key = query.toString();

  const load = async () => {
    const params = new URLSearchParams();
    for (const k of FILTERS) {
      const v = query.get(k);
      if (v) params.set(k, v);
    }
    if (before) params.set("before", before);
    try {
      const page = await call<{ jobs: JobRow[]; next: string | null }>("GET", `/console/api/jobs?${params}`);
      setRows(page.jobs);
      setNext(page.next);
      setError(null);
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : String(err));
    }
  };

  useEffect(() => {
    setForm(Object.fromEntries(FILTERS.map((k) => [k, query.get(k) ?? ""])));
    void load();
  }, [key]);

  // Live: reload when a shown job changed, or a new one arrived and this is the first page.
  useJobChanges((ids) => {
    if (!before || rows?.some((r) => ids.includes(r.jobId))) void load();
  });

  const go = (values: Record<string, string>, extra: Record<string, string> = {}) => {
    const params = new URLSearchParams();
    for (const k of FILTERS) if (values[k]) params.set(k, values[k]!);
    for (const [k, v] of Object.entries(extra)) if (v) params.set(k, v);
    const s = params.toString();
    navigate(`/jobs${s ? `?${s}` : ""}`);
  };
  const field = (k: string) => ({
    value: form[k] ?? "",
    onInput: (e: Event) => setForm({ ...form, [k]: (e.target as HTMLInputElement).value }),
  });

  return (
    <>
      <PageTitle actions={<a class="button button-primary" {...linkTo("/send")}>{t("nav.send")}</a>}>{t("jobs.title")}</PageTitle>
      <form
        class="filters card"
        aria-label={t("jobs.filters")}
        onSubmit={(e) => {
          e.preventDefault();
          go(form);
        }}
      >
        <label class="grow">
          {t("jobs.search")}
          <input type="search" name="q" placeholder={t("jobs.searchHint")} {...field("q")} />
        </label>
        <label>
          {t("jobs.status")}
          <select name="status" {...field("status")} onChange={(e) => setForm({ ...form, status: (e.target as HTMLSelectElement).value })}>
            <option value="">{t("jobs.status.any")}</option>
            <option value="open">{t("jobs.status.open")}</option>
            <option value="delivered">{t("jobs.status.delivered")}</option>
            <option value="failed">{t("jobs.status.failed")}</option>
          </select>
        </label>
        <label>
          {t("jobs.from")}
          <input type="date" name="from" {...field("from")} />
        </label>
        <label>
          {t("jobs.to")}
          <input type="date" name="to" {...field("to")} />
        </label>
        <label>
          {t("jobs.number")}
          <input name="number" inputMode="tel" {...field("number")} />
        </label>
        <label>
          {t("jobs.reference")}
          <input name="reference" {...field("reference")} />
        </label>
        <label>
          {t("jobs.datacenter")}
          <select name="datacenter" {...field("datacenter")} onChange={(e) => setForm({ ...form, datacenter: (e.target as HTMLSelectElement).value })}>
            <option value="">{t("jobs.datacenter.any")}</option>
            {account.datacenters.map((dc) => (
              <option value={dc}>{dc}</option>
            ))}
          </select>
        </label>
        <div class="filter-buttons">
          <button type="submit" class="button-primary">{t("jobs.apply")}</button>
          <button type="button" class="button-quiet" onClick={() => go({})}>
            {t("jobs.reset")}
          </button>
        </div>
      </form>
      {error ? <Notice tone="error">{t("common.error", { message: error })}</Notice> : null}
      {rows === null ? (
        <p class="loading">{t("common.loading")}</p>
      ) : rows.length === 0 ? (
        <p class="empty card">{t("jobs.empty")}</p>
      ) : (
        <div class="card table-card" tabIndex={0} role="region" aria-label={t("jobs.title")}>
          <table class="jobs-table">
            <thead>
              <tr>
                <th scope="col">{t("jobs.col.job")}</th>
                <th scope="col">{t("jobs.col.created")}</th>
                <th scope="col">{t("jobs.col.reference")}</th>
                <th scope="col">{t("jobs.col.recipients")}</th>
                <th scope="col" class="num">{t("jobs.col.pages")}</th>
                <th scope="col">{t("jobs.col.dc")}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((job) => (
                <tr key={job.jobId} data-job-id={job.jobId}>
                  <td>
                    <a class="mono" {...linkTo(`/jobs/${encodeURIComponent(job.jobId)}`)}>
                      {job.jobId}
                    </a>
                  </td>
                  <td>{formatTime(job.createdTs)}</td>
                  <td>{job.reference ?? <span class="muted">–</span>}</td>
                  <td>
                    <ul class="recipient-list">
                      {job.recipients.slice(0, SHOWN_RECIPIENTS).map((r) => (
                        <li>
                          <span class="mono">{r.number}</span> <StatusBadge status={r.status} state={r.state} />
                        </li>
                      ))}
                      {job.recipients.length > SHOWN_RECIPIENTS ? <li class="muted">{t("jobs.more", { n: job.recipients.length - SHOWN_RECIPIENTS })}</li> : null}
                    </ul>
                  </td>
                  <td class="num">{job.pages ?? "–"}</td>
                  <td>{job.datacenter}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav class="pager" aria-label={t("jobs.title")}>
        <button
          type="button"
          class="button-quiet"
          disabled={!before}
          onClick={() => go(Object.fromEntries(FILTERS.map((k) => [k, query.get(k) ?? ""])), { before: history[history.length - 1] === "-" ? "" : (history[history.length - 1] ?? ""), back: history.slice(0, -1).join(",") })}
        >
          ← {t("jobs.newer")}
        </button>
        <button
          type="button"
          class="button-quiet"
          disabled={!next}
          onClick={() => go(Object.fromEntries(FILTERS.map((k) => [k, query.get(k) ?? ""])), { before: next ?? "", back: [...history, before || "-"].join(",") })}
        >
          {t("jobs.older")} →
        </button>
      </nav>
    </>
  );
}

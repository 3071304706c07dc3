import { useEffect, useState } from "preact/hooks";
import { ApiFailure, call, type Account } from "../api.ts";
import { DeliveryLog, Notice, PageTitle, Section } from "../components.tsx";
import { formatTime, t, useLanguage } from "../i18n.ts";
import { linkTo, useLocation } from "../router.ts";

interface Received {
  id: string;
  topic: string;
  receivedTs: string;
  calledNumber: string;
  callingNumber: string | null;
  remoteCsid: string | null;
  pages: number;
  status: string;
  durationInSecs: number;
  resolution: string | null;
  fetched: boolean;
  acknowledged: boolean;
}

function ReceivedStatus({ status }: { status: string }) {
  const tone = status === "OK" ? "good" : status === "PARTIAL" ? "info" : "bad";
  const label = status === "OK" ? t("received.status.OK") : status === "PARTIAL" ? t("received.status.PARTIAL") : t("received.status.FAILED");
  return (
    <span class={`badge badge-${tone}`} data-status={status}>
      {label}
    </span>
  );
}

export function ReceivedListPage(_: { account: Account }) {
  useLanguage();
  const { query } = useLocation();
  const [rows, setRows] = useState<Received[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const before = query.get("before") ?? "";
  useEffect(() => {
    const params = new URLSearchParams();
    if (before) params.set("before", before);
    call<{ received: Received[]; next: string | null }>("GET", `/console/api/received?${params}`)
      .then((r) => {
        setRows(r.received);
        setNext(r.next);
      })
      .catch((err: unknown) => setError(err instanceof ApiFailure ? err.message : String(err)));
  }, [before]);

  return (
    <>
      <PageTitle>{t("received.title")}</PageTitle>
      {error ? <Notice tone="error">{error}</Notice> : null}
      {rows === null ? (
        <p class="loading">{t("common.loading")}</p>
      ) : rows.length === 0 ? (
        <p class="empty card">{t("received.empty")}</p>
      ) : (
        <div class="card table-card" tabIndex={0} role="region" aria-label={t("received.title")}>
          <table>
            <thead>
              <tr>
                <th scope="col">{t("received.col.received")}</th>
                <th scope="col">{t("received.col.from")}</th>
                <th scope="col">{t("received.col.to")}</th>
                <th scope="col">{t("received.col.topic")}</th>
                <th scope="col" class="num">{t("jobs.col.pages")}</th>
                <th scope="col">{t("jobs.status")}</th>
                <th scope="col">{t("received.col.fetched")}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr data-received-id={r.id}>
                  <td>
                    <a {...linkTo(`/received/${r.id}`)}>{formatTime(r.receivedTs)}</a>
                  </td>
                  <td>{r.remoteCsid || r.callingNumber || <span class="muted">–</span>}</td>
                  <td class="mono">{r.calledNumber}</td>
                  <td>{r.topic}</td>
                  <td class="num">{r.pages}</td>
                  <td>
                    <ReceivedStatus status={r.status} />
                  </td>
                  <td>{r.acknowledged ? t("received.acknowledged") : r.fetched ? t("received.fetched") : t("received.waiting")}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav class="pager" aria-label={t("received.title")}>
        <a class="button button-quiet" {...linkTo("/received")} aria-disabled={before ? "false" : "true"}>
          ← {t("jobs.newer")}
        </a>
        {next ? (
          <a class="button button-quiet" {...linkTo(`/received?before=${encodeURIComponent(next)}`)}>
            {t("jobs.older")} →
          </a>
        ) : null}
      </nav>
    </>
  );
}

interface ReceivedDetail extends Received {
  imageKept: boolean;
  transport: string | null;
  pagesAnnounced: number | null;
  pageQuality: { page: number; badRows: number; longestBadRowRun: number; bitRate: number; ecmRetries: number; retrains: number }[] | null;
  deliveries: { id: string; channel: string; target: string; state: string; attempts: number; lastError: string | null; tries: { attemptNo: number; startedTs: string; outcome: string; statusCode: number | null; error: string | null }[] }[];
}

export function ReceivedPage({ id }: { id: string }) {
  useLanguage();
  const [fax, setFax] = useState<ReceivedDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const load = () =>
    call<ReceivedDetail>("GET", `/console/api/received/${encodeURIComponent(id)}`)
      .then(setFax)
      .catch((err: unknown) => setError(err instanceof ApiFailure ? err.message : String(err)));
  useEffect(() => void load(), [id]);
  if (!fax) return error ? <Notice tone="error">{error}</Notice> : <p class="loading">{t("common.loading")}</p>;
  const base = `/console/api/received/${encodeURIComponent(fax.id)}`;
  return (
    <>
      <p class="breadcrumb">
        <a {...linkTo("/received")}>← {t("received.title")}</a>
      </p>
      <PageTitle>{t("received.one", { from: fax.remoteCsid || fax.callingNumber || "?" })}</PageTitle>
      <Section title={t("job.state")} id="received-facts">
        <dl class="facts">
          <dt>{t("received.col.received")}</dt>
          <dd>{formatTime(fax.receivedTs)}</dd>
          <dt>{t("received.col.to")}</dt>
          <dd class="mono">{fax.calledNumber}</dd>
          <dt>{t("received.callingNumber")}</dt>
          <dd class="mono">{fax.callingNumber ?? t("received.withheld")}</dd>
          <dt>{t("received.csid")}</dt>
          <dd>{fax.remoteCsid ?? "–"}</dd>
          <dt>{t("received.col.topic")}</dt>
          <dd>{fax.topic}</dd>
          <dt>{t("jobs.col.pages")}</dt>
          <dd>{fax.pagesAnnounced && fax.pagesAnnounced !== fax.pages ? `${fax.pages} / ${fax.pagesAnnounced}` : fax.pages}</dd>
          <dt>{t("jobs.status")}</dt>
          <dd>
            <ReceivedStatus status={fax.status} />
          </dd>
          <dt>{t("job.col.transport")}</dt>
          <dd>{fax.transport?.toUpperCase() ?? "–"}</dd>
          <dt>{t("job.col.duration")}</dt>
          <dd>{t("common.seconds", { n: fax.durationInSecs })}</dd>
          <dt>{t("received.col.fetched")}</dt>
          <dd>{fax.acknowledged ? t("received.acknowledged") : fax.fetched ? t("received.fetched") : t("received.waiting")}</dd>
        </dl>
      </Section>
      {fax.pageQuality && fax.pageQuality.length > 0 ? (
        <Section title={t("received.quality")} id="received-quality">
          <table>
            <thead>
              <tr>
                <th scope="col">{t("received.quality.page")}</th>
                <th scope="col">{t("received.quality.bitRate")}</th>
                <th scope="col">{t("received.quality.badRows")}</th>
                <th scope="col">{t("received.quality.ecmRetries")}</th>
                <th scope="col">{t("received.quality.retrains")}</th>
              </tr>
            </thead>
            <tbody>
              {fax.pageQuality.map((q) => (
                <tr>
                  <td>{q.page}</td>
                  <td>{q.bitRate}</td>
                  <td>{q.badRows > 0 ? t("received.quality.badRowsRun", { rows: q.badRows, run: q.longestBadRowRun }) : "0"}</td>
                  <td>{q.ecmRetries}</td>
                  <td>{q.retrains}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Section>
      ) : null}
      <Section title={t("job.previews")} id="received-pages">
        {!fax.imageKept ? (
          <p class="muted">{t("received.noPages")}</p>
        ) : (
          <>
            <p class="image-actions">
              <a class="button button-quiet" href={`${base}/document.tif`} download={`${fax.id}.tif`}>
                {t("job.downloadTiff")}
              </a>
              <a class="button button-quiet" href={`${base}/document.pdf`} download={`${fax.id}.pdf`}>
                {t("job.downloadPdf")}
              </a>
            </p>
            <ol class="pages">
              {Array.from({ length: fax.pages }, (_, p) => (
                <li>
                  <a href={`${base}/pages/${p + 1}`} target="_blank" rel="noopener">
                    <img class="page-preview" loading="lazy" src={`${base}/pages/${p + 1}`} alt={t("job.pageAlt", { page: p + 1, pages: fax.pages })} />
                  </a>
                </li>
              ))}
            </ol>
          </>
        )}
      </Section>
      <Section title={t("received.deliveries")} id="received-deliveries">
        {message ? <Notice tone="success">{message}</Notice> : null}
        {error ? <Notice tone="error">{error}</Notice> : null}
        {fax.deliveries.length === 0 ? (
          <p class="muted">{t("received.deliveriesNone")}</p>
        ) : (
          <DeliveryLog
            entries={fax.deliveries}
            onRedeliver={(nid) =>
              call("POST", `/console/api/received/${encodeURIComponent(fax.id)}/deliveries/${encodeURIComponent(nid)}/redeliver`)
                .then(() => {
                  setMessage(t("job.redelivered"));
                  return load();
                })
                .catch((err: unknown) => setError(err instanceof ApiFailure ? err.message : String(err)))
            }
          />
        )}
      </Section>
    </>
  );
}

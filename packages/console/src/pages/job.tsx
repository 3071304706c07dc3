import { useEffect, useState } from "preact/hooks";
import { ApiFailure, call, rest, type Account } from "../api.ts";
import { DeliveryLog, Notice, PageTitle, Section, StatusBadge } from "../components.tsx";
import { formatTime, hasText, t, useLanguage, type TextKey } from "../i18n.ts";
import { useJobChanges } from "../live.ts";
import { linkTo, navigate } from "../router.ts";

interface Reason {
  code: string;
  category: string | null;
  retryClass: string | null;
  description: string;
}

interface JobDetail {
  jobId: string;
  state: string;
  datacenter: string;
  local: boolean;
  test: boolean;
  createdTs: string;
  completedTs: string | null;
  validUntilTs: string;
  pages: number | null;
  options: { resolution: string; paperFormat: string; toneMode: string; header: string | null; coverpageTemplate: string | null; express: boolean; csid: string | null };
  reference: { customerDefinedId: string | null; customerReference: string | null; billingCode: string | null; billingInfo: string | null };
  failure: (Reason & { detail: string | null }) | null;
  documentsPurged: boolean;
  documents: { name: string; sizeBytes: number | null; referenceUrl: string | null }[];
  images: { imageId: string; variant: number; pages: number; sizeBytes: number }[];
  recipients: {
    number: string;
    state: string;
    status: string | null;
    reason: string | null;
    reasonDetail: Reason | null;
    nextAttemptTs: string | null;
    sentToNumber: string | null;
    remoteCsid: string | null;
    pagesSent: number;
    durationSecs: number;
    imageId: string | null;
    tries: {
      attemptNo: number;
      startedTs: string;
      endedTs: string | null;
      number: string;
      node: string;
      result: string;
      transport: string | null;
      bitRate: number | null;
      pagesSent: number;
      durationSecs: number;
      reason: Reason | null;
      rawCause: string | null;
    }[];
  }[];
}

interface Notification {
  id: string;
  channel: string;
  event: string;
  target: string;
  state: string;
  attempts: number;
  createdTs: string;
  lastError?: string;
  tries: { attemptNo: number; startedTs: string; durationMs: number; outcome: string; statusCode?: number; error?: string }[];
}

export function JobPage({ account, jobId }: { account: Account; jobId: string }) {
  useLanguage();
  const [job, setJob] = useState<JobDetail | null>(null);
  const [notifications, setNotifications] = useState<Notification[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const base = rest(account, `/fax/reports/${encodeURIComponent(jobId)}`);

  const load = async () => {
    try {
      const detail = await call<JobDetail>("GET", `/console/api/jobs/${encodeURIComponent(jobId)}`);
      setJob(detail);
      setError(null);
      if (detail.local) {
        const list = await call<{ notifications: Notification[] }>("GET", `${base}/notifications`);
        setNotifications(list.notifications);
      }
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : String(err));
    }
  };
  useEffect(() => {
    setJob(null);
    void load();
  }, [jobId]);
  useJobChanges((ids) => {
    if (ids.includes(jobId)) void load();
  });

  const act = async (work: () => Promise<unknown>, done: string) => {
    try {
      await work();
      setMessage(done);
      setError(null);
      await load();
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : String(err));
    }
  };

  if (!job) return error ? <Notice tone="error">{error}</Notice> : <p class="loading">{t("common.loading")}</p>;
  const stateKey = `job.state.${job.state}`;
  const reference = job.reference.customerDefinedId ?? job.reference.customerReference ?? job.reference.billingCode;

  return (
    <>
      <p class="breadcrumb">
        <a {...linkTo("/jobs")}>← {t("job.back")}</a>
      </p>
      <PageTitle
        actions={
          job.local ? (
            <>
              {job.state !== "completed" ? (
                <button type="button" class="button-danger" onClick={() => confirm(t("job.cancelConfirm")) && act(() => call("POST", `${base}/cancel`), t("job.cancelled"))}>
                  {t("job.cancel")}
                </button>
              ) : (
                <button
                  type="button"
                  class="button-danger"
                  onClick={() =>
                    confirm(t("job.deleteConfirm")) &&
                    call("DELETE", base)
                      .then(() => navigate("/jobs"))
                      .catch((err: unknown) => setError(err instanceof ApiFailure ? err.message : String(err)))
                  }
                >
                  {t("job.delete")}
                </button>
              )}
            </>
          ) : null
        }
      >
        {t("job.title", { id: job.jobId })}
      </PageTitle>
      {message ? <Notice tone="success">{message}</Notice> : null}
      {error ? <Notice tone="error">{error}</Notice> : null}
      {!job.local ? <Notice tone="info">{t("job.otherDc", { dc: job.datacenter })}</Notice> : null}

      <div class="grid-2">
        <Section title={t("job.state")} id="job-summary">
          <dl class="facts">
            <dt>{t("job.state")}</dt>
            <dd data-testid="job-state">{hasText(stateKey) ? t(stateKey) : job.state}</dd>
            <dt>{t("job.created")}</dt>
            <dd>{formatTime(job.createdTs)}</dd>
            <dt>{t("job.completed")}</dt>
            <dd>{formatTime(job.completedTs)}</dd>
            <dt>{t("job.validUntil")}</dt>
            <dd>{formatTime(job.validUntilTs)}</dd>
            <dt>{t("job.pages")}</dt>
            <dd>{job.pages ?? "–"}</dd>
            <dt>{t("job.datacenter")}</dt>
            <dd>{job.datacenter}</dd>
            {reference ? (
              <>
                <dt>{t("jobs.reference")}</dt>
                <dd>{reference}</dd>
              </>
            ) : null}
          </dl>
          {job.failure ? <Notice tone="error">{job.failure.description}{job.failure.detail ? `: ${job.failure.detail}` : ""}</Notice> : null}
        </Section>
        <Section title={t("job.options")} id="job-options">
          <dl class="facts">
            <dt>{t("send.resolution")}</dt>
            <dd>{job.options.resolution}</dd>
            <dt>{t("send.paper")}</dt>
            <dd>{job.options.paperFormat}</dd>
            <dt>{t("send.toneMode")}</dt>
            <dd data-testid="job-tone-mode">{t(`send.toneMode.${job.options.toneMode}` as TextKey)}</dd>
            <dt>{t("send.header")}</dt>
            <dd>{job.options.header ?? "–"}</dd>
            <dt>{t("send.cover")}</dt>
            <dd>{job.options.coverpageTemplate ?? t("common.none")}</dd>
            <dt>Express</dt>
            <dd>{job.options.express ? t("common.yes") : t("common.no")}</dd>
            <dt>{t("job.documents")}</dt>
            <dd>
              {job.documentsPurged ? t("job.purged") : job.documents.map((d) => d.name).join(", ") || t("common.none")}
            </dd>
          </dl>
        </Section>
      </div>

      <Section title={t("job.recipients")} id="job-recipients">
        {job.recipients.map((r, i) => (
          <article class="recipient" aria-labelledby={`recipient-${i}`} data-recipient={r.number}>
            <h3 id={`recipient-${i}`}>
              <span class="mono">{r.number}</span> <StatusBadge status={r.status} state={r.state} />
            </h3>
            {r.reason ? <p class="reason" data-testid="recipient-reason">{r.reason}</p> : null}
            {r.reasonDetail ? (
              <p class="muted small">
                {r.status === null ? `${t("job.lastFailure")} ` : null}
                <code>{r.reasonDetail.code}</code> · {t("job.category", { category: r.reasonDetail.category ?? "–", retry: r.reasonDetail.retryClass ?? "–" })}
              </p>
            ) : null}
            {r.nextAttemptTs ? <p class="muted">{t("job.nextAttempt", { time: formatTime(r.nextAttemptTs) })}</p> : null}
            {r.tries.length === 0 ? (
              <p class="muted">{t("job.noAttempts")}</p>
            ) : (
              <table class="attempts">
                <caption class="visually-hidden">{t("job.attempts")}</caption>
                <thead>
                  <tr>
                    <th scope="col">{t("job.col.no")}</th>
                    <th scope="col">{t("job.col.started")}</th>
                    <th scope="col" class="num">{t("job.col.duration")}</th>
                    <th scope="col">{t("job.col.transport")}</th>
                    <th scope="col" class="num">{t("job.col.pagesSent")}</th>
                    <th scope="col">{t("job.col.result")}</th>
                    <th scope="col">{t("job.col.reason")}</th>
                  </tr>
                </thead>
                <tbody>
                  {r.tries.map((a) => (
                    <tr>
                      <td>{a.attemptNo}</td>
                      <td>{formatTime(a.startedTs)}</td>
                      <td class="num">{t("common.seconds", { n: a.durationSecs })}</td>
                      <td>{a.transport ? `${a.transport.toUpperCase()}${a.bitRate ? ` · ${a.bitRate} bit/s` : ""}` : "–"}</td>
                      <td class="num">{a.pagesSent}</td>
                      <td>{a.result}</td>
                      <td>
                        {a.reason ? (
                          <>
                            {a.reason.description}
                            <div class="muted small">
                              <code>{a.reason.code}</code> · {t("job.category", { category: a.reason.category ?? "–", retry: a.reason.retryClass ?? "–" })}
                            </div>
                          </>
                        ) : (
                          "–"
                        )}
                        {a.rawCause ? <div class="muted small mono">{t("job.rawCause", { cause: a.rawCause })}</div> : null}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </article>
        ))}
      </Section>

      <Section title={t("job.previews")} id="job-pages">
        {!job.local ? null : job.images.length === 0 ? (
          <p class="muted">{t("job.previewsNone")}</p>
        ) : (
          job.images.map((image) => (
            <div class="image-block">
              <p class="image-actions">
                <a class="button button-quiet" href={`${base}/fax-images/${encodeURIComponent(image.imageId)}`} download={`${image.imageId}.tif`}>
                  {t("job.downloadTiff")}
                </a>
                <a class="button button-quiet" href={`${base}/fax-images/${encodeURIComponent(image.imageId)}?format=pdf`} download={`${image.imageId}.pdf`}>
                  {t("job.downloadPdf")}
                </a>
              </p>
              <ol class="pages">
                {Array.from({ length: image.pages }, (_, p) => (
                  <li>
                    <a href={`${base}/fax-images/${encodeURIComponent(image.imageId)}/pages/${p + 1}`} target="_blank" rel="noopener">
                      <img
                        class="page-preview"
                        loading="lazy"
                        src={`${base}/fax-images/${encodeURIComponent(image.imageId)}/pages/${p + 1}`}
                        alt={t("job.pageAlt", { page: p + 1, pages: image.pages })}
                      />
                    </a>
                  </li>
                ))}
              </ol>
            </div>
          ))
        )}
      </Section>

      {job.local ? (
        <Section title={t("job.notifications")} id="job-notifications">
          {!notifications || notifications.length === 0 ? (
            <p class="muted">{t("job.notificationsNone")}</p>
          ) : (
            <DeliveryLog
              entries={notifications}
              onRedeliver={(nid) => act(() => call("POST", `${base}/notifications/${encodeURIComponent(nid)}/redeliver`), t("job.redelivered"))}
            />
          )}
        </Section>
      ) : null}
    </>
  );
}

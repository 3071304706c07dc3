/** Small shared pieces: status badges, notices, page headings that take focus. */
import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";
import { formatTime, hasText, t } from "./i18n.ts";

const FAILED_TONE = "bad";

/** A recipient's status as a word and a colour (never the colour alone). */
export function StatusBadge({ status, state }: { status: string | null; state?: string }) {
  const shown = status ?? "PENDING";
  const known = `status.${shown}`;
  const isPending = shown === "PENDING" || state === "waiting" || state === "ready" || state === "sending";
  const tone = shown === "OK" ? "good" : isPending ? "info" : shown === "CANCELLED" ? "muted" : FAILED_TONE;
  const label = isPending && status === null ? t("status.PENDING") : hasText(known) ? t(known) : t("status.failed", { status: shown });
  return (
    <span class={`badge badge-${tone}`} data-status={shown}>
      {label}
    </span>
  );
}

export function Notice({ tone, children }: { tone: "error" | "success" | "info"; children: ComponentChildren }) {
  return (
    <div class={`notice notice-${tone}`} role={tone === "error" ? "alert" : "status"}>
      {children}
    </div>
  );
}

/** The page's h1; it takes focus when the page opens, so screen readers announce the page. */
export function PageTitle({ children, actions }: { children: ComponentChildren; actions?: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    ref.current?.focus();
  }, []);
  return (
    <div class="page-title">
      <h1 tabIndex={-1} ref={ref}>
        {children}
      </h1>
      {actions ? <div class="page-actions">{actions}</div> : null}
    </div>
  );
}

export function Section({ title, children, id }: { title: string; children: ComponentChildren; id?: string }) {
  return (
    <section class="card" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

/** One status push, status mail or reception delivery with its tries. */
export interface DeliveryEntry {
  id: string;
  channel: string;
  target: string;
  state: string;
  attempts: number;
  event?: string;
  tries: { startedTs: string; outcome: string; statusCode?: number | null; error?: string | null; durationMs?: number }[];
}

/** A delivery log (pushes and mails) with "Deliver again" on each entry. */
export function DeliveryLog({ entries, onRedeliver }: { entries: DeliveryEntry[]; onRedeliver: (id: string) => void }) {
  return (
    <ul class="notifications">
      {entries.map((d) => (
        <li data-notification={d.id} data-state={d.state}>
          <div class="notification-head">
            <span class={`badge ${d.state === "delivered" ? "badge-good" : d.state === "failed" ? "badge-bad" : "badge-info"}`}>{d.state}</span>{" "}
            <strong>{d.channel === "http" ? "HTTP" : d.channel === "sftp" ? "SFTP" : "E-mail"}</strong> <span class="mono">{d.target}</span>
            {d.event ? ` · ${d.event}` : ""} · {t("job.tries", { n: d.attempts })}
            <button type="button" class="button-quiet" disabled={d.state === "delivering"} onClick={() => onRedeliver(d.id)}>
              {t("job.redeliver")}
            </button>
          </div>
          {d.tries.length > 0 ? (
            <ol class="tries">
              {d.tries.map((tr) => (
                <li>
                  {formatTime(tr.startedTs)} · {tr.outcome}
                  {tr.statusCode ? ` · ${tr.statusCode}` : ""}
                  {tr.durationMs !== undefined ? ` · ${tr.durationMs} ms` : ""}
                  {tr.error ? ` · ${tr.error}` : ""}
                </li>
              ))}
            </ol>
          ) : null}
        </li>
      ))}
    </ul>
  );
}

/**
 * The audit log of the configuration API (GET /audit), read-only: newest first, a page at a
 * time, narrowed to one kind of resource; each entry with who (login and role), when, what, and
 * the fields it changed. Secrets are not in it (a PIN shows as "(set)").
 */
import { useEffect, useState } from "preact/hooks";
import type { ConfigAuditPage, FaxlineConfiguration } from "@faxline/client/configuration";
import { messageOf } from "../../config-api.ts";
import { formatTime, hasText, t } from "../../i18n.ts";
import { changedFields } from "./audit-changes.ts";
import { OutcomeLine, Pager, type Outcome } from "./form-kit.tsx";

const PAGE = 20;
const RESOURCES = ["outbound/users", "outbound/profiles", "outbound/domains", "outbound/settings", "inbound/numbers", "inbound/profiles", "inbound/settings"];

const resourceName = (r: string) => (hasText(`m2f.audit.res.${r}`) ? t(`m2f.audit.res.${r}` as never) : r);
const word = (key: string, fallback: string) => (hasText(key) ? t(key) : fallback);

export function AuditSection({ api, version }: { api: FaxlineConfiguration; version: number }) {
  const [resource, setResource] = useState("");
  const [offset, setOffset] = useState(0);
  const [page, setPage] = useState<ConfigAuditPage | null>(null);
  const [outcome, setOutcome] = useState<Outcome>(null);

  useEffect(() => {
    api.audit({ limit: PAGE, offset, ...(resource === "" ? {} : { resource }) }).then(
      (p) => {
        setPage(p);
        setOutcome(null);
      },
      (err: unknown) => setOutcome({ tone: "error", text: t("m2f.loadFailed", { message: messageOf(err) }) }),
    );
  }, [api, resource, offset, version]);

  return (
    <section class="card" aria-labelledby="m2f-audit" data-section="audit">
      <div class="card-head">
        <h2 id="m2f-audit">{t("m2f.audit.title")}</h2>
        <label class="inline">
          {t("m2f.audit.resource")}
          <select
            name="auditResource"
            value={resource}
            onChange={(e) => {
              setResource((e.target as HTMLSelectElement).value);
              setOffset(0);
            }}
          >
            <option value="">{t("m2f.audit.all")}</option>
            {RESOURCES.map((r) => (
              <option value={r}>{resourceName(r)}</option>
            ))}
          </select>
        </label>
      </div>
      <p class="muted small">{t("m2f.audit.intro")}</p>
      {page === null ? null : page.entries.length === 0 ? (
        <p class="empty">{t("m2f.audit.none")}</p>
      ) : (
        <table class="audit-table">
          <thead>
            <tr>
              <th scope="col">{t("m2f.audit.when")}</th>
              <th scope="col">{t("m2f.audit.who")}</th>
              <th scope="col">{t("m2f.audit.what")}</th>
              <th scope="col">{t("m2f.audit.changes")}</th>
            </tr>
          </thead>
          <tbody>
            {page.entries.map((e) => {
              const lines = changedFields(e.before, e.after);
              return (
                <tr data-audit={e.id} data-resource={e.resource} data-key={e.key} data-action={e.action}>
                  <td>{formatTime(e.at)}</td>
                  <td>
                    {e.login} <span class="muted small">({word(`m2f.audit.role.${e.role}`, e.role)})</span>
                  </td>
                  <td>
                    {resourceName(e.resource)} {e.key ? <span class="mono">{e.key}</span> : null} {word(`m2f.audit.action.${e.action}`, e.action)}
                  </td>
                  <td>
                    {lines.length === 0 ? (
                      <span class="muted">{t("m2f.audit.nothing")}</span>
                    ) : (
                      <ul class="plain-list small">
                        {lines.map((l) => (
                          <li>
                            <span class="mono">{l.field}</span>: {l.before ?? "–"} → {l.after ?? "–"}
                          </li>
                        ))}
                      </ul>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {page ? <Pager label={t("m2f.audit.title")} offset={offset} count={page.entries.length} limit={PAGE} hasMore={page.hasMore} onPage={setOffset} /> : null}
      <OutcomeLine outcome={outcome} />
    </section>
  );
}

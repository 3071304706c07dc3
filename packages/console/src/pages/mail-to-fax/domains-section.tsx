/**
 * The sender domains the customer allows (/outbound/domains): each with or without a PIN,
 * which is write-only (the list says only whether there is one).
 */
import { useEffect, useState } from "preact/hooks";
import type { FaxlineConfiguration, OutboundDomain } from "@faxline/client/configuration";
import { messageOf } from "../../config-api.ts";
import { t } from "../../i18n.ts";
import { ConfigForm, DeleteButton, OutcomeLine, useSectionHeading, type Outcome } from "./form-kit.tsx";

export function DomainsSection({ api, changed }: { api: FaxlineConfiguration; changed: () => void }) {
  const [domains, setDomains] = useState<OutboundDomain[] | null>(null);
  const [domain, setDomain] = useState("");
  const [pin, setPin] = useState("");
  const [outcome, setOutcome] = useState<Outcome>(null);
  const heading = useSectionHeading();

  const load = async () => {
    try {
      setDomains(await api.listOutboundDomains());
    } catch (err) {
      setOutcome({ tone: "error", text: t("m2f.loadFailed", { message: messageOf(err) }) });
    }
  };
  useEffect(() => void load(), [api]);

  return (
    <section class="card" aria-labelledby="m2f-domains" data-section="domains">
      <h2 id="m2f-domains" tabIndex={-1} ref={heading.ref}>{t("m2f.domains.title")}</h2>
      <p class="muted small">{t("m2f.domains.intro")}</p>
      {domains === null ? null : domains.length === 0 ? (
        <p class="empty">{t("m2f.domains.none")}</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">{t("m2f.domains.domain")}</th>
              <th scope="col">{t("m2f.users.pin")}</th>
              <th scope="col">
                <span class="visually-hidden">{t("m2f.delete")}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {domains.map((d) => (
              <tr data-domain={d.domain}>
                <td class="mono">{d.domain}</td>
                <td>{d.hasPin ? t("common.yes") : t("common.no")}</td>
                <td>
                  <DeleteButton
                    name={d.domain}
                    onDelete={async () => {
                      try {
                        await api.deleteOutboundDomain(d.domain);
                        setOutcome({ tone: "success", text: t("m2f.deleted", { name: d.domain }) });
                        changed();
                      } catch (err) {
                        setOutcome({ tone: "error", text: messageOf(err) });
                      }
                      heading.focus();
                      await load();
                    }}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <ConfigForm
        id="m2f-domain-form"
        title={t("m2f.domains.add")}
        submitLabel={t("m2f.domains.add")}
        fields={["domain", "pin"]}
        keyField="domain"
        onSubmit={async () => {
          const saved = await api.putOutboundDomain(domain.trim(), pin === "" ? {} : { pin });
          setDomain("");
          setPin("");
          setOutcome({ tone: "success", text: t("m2f.saved", { name: saved.domain }) });
          changed();
          await load();
        }}
      >
        {(field) => (
          <div class="options-grid">
            <label>
              {t("m2f.domains.domain")}
              <input {...field("domain")} value={domain} maxLength={253} autoComplete="off" placeholder="example.com" onInput={(e) => setDomain((e.target as HTMLInputElement).value)} />
            </label>
            <label>
              {t("m2f.domains.pin")}
              <input {...field("pin", "m2f-domain-pin-hint")} type="password" inputMode="numeric" autoComplete="new-password" maxLength={12} value={pin} onInput={(e) => setPin((e.target as HTMLInputElement).value)} />
              <span id="m2f-domain-pin-hint" class="muted small">
                {t("m2f.domains.pinHint")}
              </span>
            </label>
          </div>
        )}
      </ConfigForm>
      <OutcomeLine outcome={outcome} />
    </section>
  );
}

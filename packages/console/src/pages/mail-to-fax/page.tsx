/**
 * The Mail to fax page (managers and operators): the customer's mail-to-fax settings, its
 * allowed sender domains, profiles and users, and the audit log of the configuration API, all
 * through @faxline/client's FaxlineConfiguration with the console's session. An operator
 * names the customer it configures (its own by default).
 */
import { useEffect, useMemo, useState } from "preact/hooks";
import type { Account } from "../../api.ts";
import { configurationOf, messageOf } from "../../config-api.ts";
import { Notice, PageTitle } from "../../components.tsx";
import { t, useLanguage } from "../../i18n.ts";
import { AuditSection } from "./audit-section.tsx";
import { CustomerSection } from "./customer-section.tsx";
import { DomainsSection } from "./domains-section.tsx";
import { ProfilesSection } from "./profiles-section.tsx";
import { UsersSection } from "./users-section.tsx";

export function MailToFaxPage({ account }: { account: Account }) {
  useLanguage();
  const [custNr, setCustNr] = useState(account.custNr);
  const [draft, setDraft] = useState(account.custNr);
  // Every change bumps this: the lists that show its effects (user counts, the audit log) read again.
  const [version, setVersion] = useState(0);
  const api = useMemo(() => configurationOf(custNr), [custNr]);
  const changed = () => setVersion((v) => v + 1);
  const [login, setLogin] = useState<string | null | undefined>(undefined);
  // The customer is read once first: one that cannot be configured (an operator's typo) is one message, not five.
  const [refusal, setRefusal] = useState<string | null>(null);
  useEffect(() => {
    setLogin(undefined);
    setRefusal(null);
    api.getOutboundSettings().then(
      (s) => setLogin(s.login),
      (err: unknown) => setRefusal(t("m2f.loadFailed", { message: messageOf(err) })),
    );
  }, [api]);

  return (
    <>
      <PageTitle>{t("m2f.title")}</PageTitle>
      <p class="muted">{t("m2f.intro")}</p>
      {account.operator ? (
        <form
          class="inline-form"
          aria-label={t("m2f.customer")}
          onSubmit={(e) => {
            e.preventDefault();
            if (draft.trim() !== "") setCustNr(draft.trim());
          }}
        >
          <label>
            {t("m2f.customer")}
            <input name="customer" value={draft} aria-describedby="m2f-customer-hint" onInput={(e) => setDraft((e.target as HTMLInputElement).value)} />
            <span id="m2f-customer-hint" class="muted small">
              {t("m2f.customerHint")}
            </span>
          </label>
          <button type="submit" class="button-quiet">
            {t("m2f.show")}
          </button>
        </form>
      ) : null}
      {login === null ? (
        <Notice tone="info">
          {t("m2f.settings.notSetUp")} <a href="#m2f-settings">{t("m2f.settings.title")}</a>
        </Notice>
      ) : null}
      {/* Users first (what a manager changes most), the customer's level below what inherits from it. */}
      {refusal ? <Notice tone="error">{refusal}</Notice> : null}
      {login === undefined ? (
        refusal ? null : <p class="loading">{t("common.loading")}</p>
      ) : (
        <div key={custNr} data-customer={custNr}>
          <UsersSection api={api} version={version} changed={changed} />
          <ProfilesSection api={api} version={version} changed={changed} />
          <DomainsSection api={api} changed={changed} />
          <CustomerSection api={api} changed={changed} onLogin={setLogin} />
          <AuditSection api={api} version={version} />
        </div>
      )}
    </>
  );
}

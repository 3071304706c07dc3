/**
 * The customer's level of mail-to-fax (GET/PUT /outbound/settings): the login its jobs are
 * booked on and the settings every profile and user inherits.
 */
import { useEffect, useState } from "preact/hooks";
import type { FaxlineConfiguration, OutboundSettingsChange } from "@faxline/client/configuration";
import { messageOf } from "../../config-api.ts";
import { t } from "../../i18n.ts";
import { ConfigForm, OutcomeLine, type Outcome } from "./form-kit.tsx";
import { SettingsGroups } from "./settings-groups.tsx";
import { formOf, groupsOf, SETTINGS_PATHS, type FormValues } from "./settings-fields.ts";

/** `onLogin` hears the booking login as read (null: mail-to-fax not set up), for the page's notice. */
export function CustomerSection({ api, changed, onLogin }: { api: FaxlineConfiguration; changed: () => void; onLogin: (login: string | null) => void }) {
  const [login, setLogin] = useState<string | null | undefined>(undefined);
  const [draftLogin, setDraftLogin] = useState("");
  const [values, setValues] = useState<FormValues>({});
  const [outcome, setOutcome] = useState<Outcome>(null);

  const load = async () => {
    try {
      const s = await api.getOutboundSettings();
      setLogin(s.login);
      onLogin(s.login);
      setDraftLogin(s.login ?? "");
      setValues(formOf(s as Record<string, unknown>));
    } catch (err) {
      setOutcome({ tone: "error", text: t("m2f.loadFailed", { message: messageOf(err) }) });
    }
  };
  useEffect(() => void load(), [api]);

  return (
    <section class="card" aria-labelledby="m2f-settings" data-section="settings">
      <h2 id="m2f-settings">{t("m2f.settings.title")}</h2>
      <p class="muted small">{t("m2f.settings.intro")}</p>
      {login === undefined ? null : (
        <ConfigForm
          id="m2f-settings-form"
          labelledBy="m2f-settings"
          fields={["login", ...SETTINGS_PATHS]}
          keyField={null}
          onSubmit={async () => {
            await api.putOutboundSettings({ login: draftLogin.trim(), ...groupsOf(values) } as OutboundSettingsChange);
            setOutcome({ tone: "success", text: t("m2f.saved", { name: t("m2f.settings.title") }) });
            changed();
            await load();
          }}
        >
          {(field) => (
            <>
              <label>
                {t("m2f.settings.login")}
                <input {...field("login", "m2f-settings-login-hint")} value={draftLogin} maxLength={128} autoComplete="off" onInput={(e) => setDraftLogin((e.target as HTMLInputElement).value)} />
                <span id="m2f-settings-login-hint" class="muted small">
                  {t("m2f.settings.loginHint")}
                </span>
              </label>
              <SettingsGroups formId="m2f-settings-form" values={values} set={(p, v) => setValues({ ...values, [p]: v })} inherited={null} field={field} />
            </>
          )}
        </ConfigForm>
      )}
      <OutcomeLine outcome={outcome} />
    </section>
  );
}

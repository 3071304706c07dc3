import { useEffect, useState } from "preact/hooks";
import { ApiFailure, call, type Account } from "../api.ts";
import { Notice, PageTitle } from "../components.tsx";
import { formatTime, t, useLanguage, type TextKey } from "../i18n.ts";
import { TopicsSection } from "./topics.tsx";

interface Settings {
  custNr: string;
  login: string;
  canManage: boolean;
  push: { url: string | null; format: string; events: string[]; oauth2TokenUrl: string | null; signingSecrets: number };
  reportMail: { successAddress: string | null; failureAddress: string | null; attachedFaxImageMode: string; attachedFaxImageFormat: string } | null;
  defaultHeader: string | null;
  defaultToneMode: string | null;
  retentionDays: number | null;
  defaultRetentionDays: number;
  coverTemplates: { name: string; kind: string; updatedTs: string }[];
  ipAllowList: string[];
  clientAddress: string;
  choices: { pushFormats: string[]; pushEvents: string[]; attachedFaxImageModes: string[]; attachedFaxImageFormats: string[]; toneModes: string[] };
}

type Status = { tone: "success" | "error"; text: string } | null;

/** A settings form: its own save button and its own message beside it. */
function SettingsForm({ title, id, onSave, children, saveLabel, readOnly }: { title: string; id: string; onSave: () => Promise<string | void>; children: preact.ComponentChildren; saveLabel?: string; readOnly?: boolean }) {
  const [status, setStatus] = useState<Status>(null);
  const [busy, setBusy] = useState(false);
  return (
    <section class="card" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <form
        class="stack"
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          try {
            const text = await onSave();
            setStatus({ tone: "success", text: text ?? t("common.saved") });
          } catch (err) {
            setStatus({ tone: "error", text: err instanceof ApiFailure ? err.message : String(err) });
          } finally {
            setBusy(false);
          }
        }}
      >
        <fieldset class="plain" disabled={readOnly}>
          <div class="stack">{children}</div>
        </fieldset>
        {readOnly ? null : (
          <div class="form-actions">
            <button type="submit" class="button-primary" disabled={busy}>
              {saveLabel ?? t("common.save")}
            </button>
          </div>
        )}
        {status ? <Notice tone={status.tone}>{status.text}</Notice> : null}
      </form>
    </section>
  );
}

export function SettingsPage({ account }: { account: Account }) {
  useLanguage();
  const [s, setS] = useState<Settings | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const [pushUrl, setPushUrl] = useState("");
  const [pushFormat, setPushFormat] = useState("XML");
  const [pushEvents, setPushEvents] = useState<string[]>([]);
  const [oauth2, setOauth2] = useState("");
  const [success, setSuccess] = useState("");
  const [failure, setFailure] = useState("");
  const [mode, setMode] = useState("NEVER");
  const [format, setFormat] = useState("PDF");
  const [header, setHeader] = useState("");
  const [toneMode, setToneMode] = useState("");
  const [retention, setRetention] = useState("");
  const [allow, setAllow] = useState("");
  const [coverName, setCoverName] = useState("default");
  const [coverFile, setCoverFile] = useState<File | null>(null);
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");

  const load = async () => {
    try {
      const v = await call<Settings>("GET", "/console/api/settings");
      setS(v);
      setPushUrl(v.push.url ?? "");
      setPushFormat(v.push.format);
      setPushEvents(v.push.events);
      setOauth2(v.push.oauth2TokenUrl ?? "");
      setSuccess(v.reportMail?.successAddress ?? "");
      setFailure(v.reportMail?.failureAddress ?? "");
      setMode(v.reportMail?.attachedFaxImageMode ?? "NEVER");
      setFormat(v.reportMail?.attachedFaxImageFormat ?? "PDF");
      setHeader(v.defaultHeader ?? "");
      setToneMode(v.defaultToneMode === null || v.defaultToneMode === "AUTO" ? "" : v.defaultToneMode);
      setRetention(v.retentionDays === null ? "" : String(v.retentionDays));
      setAllow(v.ipAllowList.join("\n"));
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : String(err));
    }
  };
  useEffect(() => void load(), []);

  if (!s) return error ? <Notice tone="error">{error}</Notice> : <p class="loading">{t("common.loading")}</p>;
  const input = (set: (v: string) => void) => (e: Event) => set((e.target as HTMLInputElement).value);

  return (
    <>
      <PageTitle>{t("settings.title")}</PageTitle>
      <p class="muted">
        {account.login} · {s.custNr}
      </p>
      {!s.canManage ? <Notice tone="info">{t("settings.readOnly")}</Notice> : null}
      <div class="grid-2">
        <SettingsForm
          title={t("settings.push")}
          id="settings-push" readOnly={!s.canManage}
          onSave={() => call("PUT", "/console/api/settings/push", { url: pushUrl, format: pushFormat, events: pushEvents, oauth2TokenUrl: oauth2 }).then(load)}
        >
          <label>
            {t("settings.pushUrl")}
            <input name="pushUrl" type="url" value={pushUrl} onInput={input(setPushUrl)} aria-describedby="push-url-hint" placeholder="https://example.com/fax-status" />
            <span id="push-url-hint" class="muted small">{t("settings.pushUrlHint")}</span>
          </label>
          <label>
            {t("settings.pushFormat")}
            <select name="pushFormat" value={pushFormat} onChange={input(setPushFormat)}>
              {s.choices.pushFormats.map((f) => (
                <option value={f}>{f}</option>
              ))}
            </select>
          </label>
          <fieldset>
            <legend>{t("settings.pushEvents")}</legend>
            {s.choices.pushEvents.map((ev) => (
              <label class="inline">
                <input
                  type="checkbox"
                  checked={pushEvents.includes(ev)}
                  onChange={(e) => setPushEvents((e.target as HTMLInputElement).checked ? [...pushEvents, ev] : pushEvents.filter((x) => x !== ev))}
                />{" "}
                <code>{ev}</code>
              </label>
            ))}
          </fieldset>
          <label>
            {t("settings.oauth2")}
            <input name="oauth2TokenUrl" type="url" value={oauth2} onInput={input(setOauth2)} />
          </label>
        </SettingsForm>

        <section class="card" aria-labelledby="settings-signing">
          <h2 id="settings-signing">{t("settings.signing")}</h2>
          <p>{s.push.signingSecrets > 0 ? t("settings.signingCount", { n: s.push.signingSecrets }) : t("settings.signingNone")}</p>
          {secret ? (
            <Notice tone="success">
              {t("settings.newSecret")} <code class="secret" data-testid="new-secret">{secret}</code>
            </Notice>
          ) : null}
          <div class="form-actions" hidden={!s.canManage}>
            <button
              type="button"
              class="button-primary"
              onClick={() =>
                call<{ secret: string }>("POST", "/console/api/settings/signing-secret", { action: "rotate" })
                  .then((r) => {
                    setSecret(r.secret);
                    return load();
                  })
                  .catch((err: unknown) => setError(err instanceof ApiFailure ? err.message : String(err)))
              }
            >
              {t("settings.rotate")}
            </button>
            {s.push.signingSecrets > 1 ? (
              <button type="button" class="button-quiet" onClick={() => call("POST", "/console/api/settings/signing-secret", { action: "retire" }).then(load)}>
                {t("settings.retire")}
              </button>
            ) : null}
          </div>
        </section>

        <SettingsForm
          title={t("settings.mail")}
          id="settings-mail" readOnly={!s.canManage}
          onSave={() =>
            call("PUT", "/console/api/settings/report-mail", success.trim() || failure.trim() ? { successAddress: success, failureAddress: failure, attachedFaxImageMode: mode, attachedFaxImageFormat: format } : null).then(load)
          }
        >
          <p class="muted small">{t("settings.mailHint")}</p>
          <label>
            {t("settings.successAddress")}
            <input name="successAddress" type="email" value={success} onInput={input(setSuccess)} />
          </label>
          <label>
            {t("settings.failureAddress")}
            <input name="failureAddress" type="email" value={failure} onInput={input(setFailure)} />
          </label>
          <label>
            {t("settings.attachMode")}
            <select name="attachMode" value={mode} onChange={input(setMode)}>
              {s.choices.attachedFaxImageModes.map((m) => (
                <option value={m}>{m}</option>
              ))}
            </select>
          </label>
          <label>
            {t("settings.attachFormat")}
            <select name="attachFormat" value={format} onChange={input(setFormat)}>
              {s.choices.attachedFaxImageFormats.map((m) => (
                <option value={m}>{m}</option>
              ))}
            </select>
          </label>
        </SettingsForm>

        <SettingsForm title={t("settings.header")} id="settings-header" readOnly={!s.canManage} onSave={() => call("PUT", "/console/api/settings/header", { header }).then(load)}>
          <label>
            {t("send.header")}
            <input name="defaultHeader" value={header} maxLength={1000} onInput={input(setHeader)} />
          </label>
        </SettingsForm>

        <SettingsForm title={t("settings.toneMode")} id="settings-tone-mode" readOnly={!s.canManage} onSave={() => call("PUT", "/console/api/settings/tone-mode", { toneMode: toneMode || null }).then(load)}>
          <label>
            {t("send.toneMode")}
            <select name="defaultToneMode" value={toneMode} onChange={input(setToneMode)} aria-describedby="tone-mode-hint">
              <option value="">{t("send.toneMode.AUTO")}</option>
              {s.choices.toneModes
                .filter((mode) => mode !== "AUTO")
                .map((mode) => (
                  <option value={mode}>{t(`send.toneMode.${mode}` as TextKey)}</option>
                ))}
            </select>
            <span id="tone-mode-hint" class="muted small">{t("settings.toneModeHint")}</span>
          </label>
        </SettingsForm>

        <section class="card" aria-labelledby="settings-cover">
          <h2 id="settings-cover">{t("settings.cover")}</h2>
          {s.coverTemplates.length === 0 ? (
            <p class="muted">{t("settings.coverNone")}</p>
          ) : (
            <ul class="plain-list">
              {s.coverTemplates.map((c) => (
                <li>
                  <strong>{c.name}</strong> <span class="muted">({c.kind.toUpperCase()}, {formatTime(c.updatedTs)})</span>{" "}
                  {s.canManage ? (
                    <button type="button" class="button-quiet" onClick={() => call("DELETE", `/console/api/settings/cover-templates/${encodeURIComponent(c.name)}`).then(load)}>
                      {t("common.remove")}
                    </button>
                  ) : null}
                </li>
              ))}
            </ul>
          )}
          {s.canManage ? <SettingsForm
            title={t("settings.coverInstall")}
            id="settings-cover-install"
            saveLabel={t("settings.coverInstall")}
            onSave={async () => {
              if (!coverFile) throw new Error(t("settings.coverFile"));
              await call("PUT", `/console/api/settings/cover-templates/${encodeURIComponent(coverName)}`, { fileName: coverFile.name, content: await coverFile.text() });
              await load();
            }}
          >
            <label>
              {t("settings.coverName")}
              <input name="coverName" value={coverName} onInput={input(setCoverName)} />
            </label>
            <label>
              {t("settings.coverFile")}
              <input name="coverFile" type="file" accept=".svg,.html,.htm" onChange={(e) => setCoverFile((e.target as HTMLInputElement).files?.[0] ?? null)} />
            </label>
          </SettingsForm> : null}
        </section>

        <SettingsForm
          title={t("settings.retention")}
          id="settings-retention" readOnly={!s.canManage}
          onSave={() => call("PUT", "/console/api/settings/retention", { days: retention.trim() === "" ? null : Number(retention) }).then(load)}
        >
          <label>
            {t("settings.retentionDays")}
            <input name="retentionDays" type="number" min={1} max={3650} value={retention} onInput={input(setRetention)} aria-describedby="retention-hint" />
            <span id="retention-hint" class="muted small">{t("settings.retentionHint", { days: s.defaultRetentionDays })}</span>
          </label>
        </SettingsForm>

        <SettingsForm
          title={t("settings.allowList")}
          id="settings-allow" readOnly={!s.canManage}
          onSave={() => call("PUT", "/console/api/settings/allow-list", { entries: allow.split(/\s+/).filter(Boolean) }).then(load)}
        >
          <label>
            {t("settings.allowList")}
            <textarea name="allowList" rows={3} value={allow} onInput={input(setAllow)} aria-describedby="allow-hint" />
            <span id="allow-hint" class="muted small">{t("settings.allowListHint", { ip: s.clientAddress })}</span>
          </label>
        </SettingsForm>

        <SettingsForm
          title={t("settings.password")}
          id="settings-password"
          saveLabel={t("settings.changePassword")}
          onSave={async () => {
            await call("POST", "/console/api/settings/password", { currentPassword: current, newPassword: next });
            setCurrent("");
            setNext("");
            return t("settings.passwordChanged");
          }}
        >
          <label>
            {t("settings.currentPassword")}
            <input name="currentPassword" type="password" autoComplete="current-password" value={current} onInput={input(setCurrent)} />
          </label>
          <label>
            {t("settings.newPassword")}
            <input name="newPassword" type="password" autoComplete="new-password" minLength={8} value={next} onInput={input(setNext)} />
          </label>
        </SettingsForm>
      </div>
      <TopicsSection />
      {error ? <Notice tone="error">{error}</Notice> : null}
    </>
  );
}

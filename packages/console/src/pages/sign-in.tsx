import { useState } from "preact/hooks";
import { ApiFailure, call, type Account } from "../api.ts";
import { Notice, PageTitle } from "../components.tsx";
import { t, useLanguage, setLanguage, type Language } from "../i18n.ts";

export function SignInPage({ ended, onSignedIn }: { ended: string | null; onSignedIn: (a: Account) => void }) {
  const lang = useLanguage();
  const [login, setLogin] = useState("");
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await call<Account>("POST", "/console/api/session", { login, password }, { signIn: true }));
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : String(err));
      setPassword("");
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="sign-in">
      <div class="sign-in-card">
        <div class="brand brand-large">
          <span class="brand-mark" aria-hidden="true">F</span> Faxline
        </div>
        <PageTitle>{t("signIn.title")}</PageTitle>
        <p class="muted">{t("signIn.intro")}</p>
        {ended ? <Notice tone="info">{ended}</Notice> : null}
        {error ? <Notice tone="error">{error}</Notice> : null}
        <form onSubmit={submit} class="stack">
          <label>
            {t("signIn.login")}
            <input name="login" autoComplete="username" required value={login} onInput={(e) => setLogin((e.target as HTMLInputElement).value)} />
          </label>
          <label>
            {t("signIn.password")}
            <input name="password" type="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword((e.target as HTMLInputElement).value)} />
          </label>
          <button type="submit" class="button-primary" disabled={busy}>
            {busy ? t("signIn.busy") : t("signIn.submit")}
          </button>
        </form>
        <label class="language">
          {t("nav.language")}{" "}
          <select value={lang} onChange={(e) => setLanguage((e.target as HTMLSelectElement).value as Language)}>
            <option value="en">English</option>
            <option value="de">Deutsch</option>
          </select>
        </label>
      </div>
    </main>
  );
}

/** The console's shell: session, navigation, language, live updates, and the page for the path. */
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { call, setCsrfToken, whenSessionEnds, type Account } from "./api.ts";
import { setLanguage, t, useLanguage, type Language } from "./i18n.ts";
import { linkTo, navigate, useLocation } from "./router.ts";
import { startLiveUpdates, useLiveState } from "./live.ts";
import { SignInPage } from "./pages/sign-in.tsx";
import { JobsPage } from "./pages/jobs.tsx";
import { JobPage } from "./pages/job.tsx";
import { SendPage } from "./pages/send.tsx";
import { SettingsPage } from "./pages/settings.tsx";
import { MailToFaxPage } from "./pages/mail-to-fax/page.tsx";
import { OperationsPage } from "./pages/operations.tsx";
import { ReportsPage } from "./pages/reports.tsx";
import { ReceivedListPage, ReceivedPage } from "./pages/received.tsx";

function App() {
  useLanguage();
  const { path } = useLocation();
  const [account, setAccount] = useState<Account | null | undefined>(undefined);
  const [endedMessage, setEndedMessage] = useState<string | null>(null);

  useEffect(() => {
    whenSessionEnds(() => {
      setAccount(null);
      setEndedMessage(t("signIn.ended"));
    });
    call<Account>("GET", "/console/api/session", undefined, { signIn: true })
      .then((a) => {
        setCsrfToken(a.csrfToken);
        setAccount(a);
      })
      .catch(() => setAccount(null));
  }, []);

  useEffect(() => {
    if (!account) return;
    return startLiveUpdates();
  }, [account?.login]);

  if (account === undefined) return <p class="loading">{t("common.loading")}</p>;
  if (account === null) {
    return (
      <SignInPage
        ended={endedMessage}
        onSignedIn={(a) => {
          setCsrfToken(a.csrfToken);
          setEndedMessage(null);
          setAccount(a);
          if (path === "/" || path === "/sign-in") navigate("/jobs", true);
        }}
      />
    );
  }

  // The configuration API's roles: a login that manages its customer's account, and operators.
  const canConfigure = account.manager || account.operator;
  let page;
  const jobMatch = /^\/jobs\/([^/]+)$/.exec(path);
  if (jobMatch) page = <JobPage account={account} jobId={decodeURIComponent(jobMatch[1]!)} />;
  else if (path === "/send") page = <SendPage account={account} />;
  else if (path === "/received") page = <ReceivedListPage account={account} />;
  else if (/^\/received\/[^/]+$/.test(path)) page = <ReceivedPage id={decodeURIComponent(path.slice("/received/".length))} />;
  else if (path === "/settings") page = <SettingsPage account={account} />;
  else if (path === "/mail-to-fax" && canConfigure) page = <MailToFaxPage account={account} />;
  else if (path === "/reports" && account.reports) page = <ReportsPage account={account} />;
  else if (path === "/operations" && account.operator) page = <OperationsPage />;
  else page = <JobsPage account={account} />;

  const signOut = async () => {
    await call("DELETE", "/console/api/session").catch(() => undefined);
    setAccount(null);
    navigate("/", true);
  };
  const current = (p: string) => (path === p || (p === "/jobs" && (path === "/" || path.startsWith("/jobs"))) ? "page" : undefined);

  return (
    <>
      <a class="skip" href="#main">
        {t("app.skip")}
      </a>
      <header class="topbar">
        <a class="brand" {...linkTo("/jobs")}>
          <span class="brand-mark" aria-hidden="true">F</span> {t("app.name")}
        </a>
        <nav aria-label={t("nav.main")}>
          <ul>
            <li><a {...linkTo("/jobs")} aria-current={current("/jobs")}>{t("nav.jobs")}</a></li>
            <li><a {...linkTo("/send")} aria-current={current("/send")}>{t("nav.send")}</a></li>
            <li><a {...linkTo("/received")} aria-current={path.startsWith("/received") ? "page" : undefined}>{t("nav.received")}</a></li>
            {account.reports ? <li><a {...linkTo("/reports")} aria-current={current("/reports")}>{t("nav.reports")}</a></li> : null}
            <li><a {...linkTo("/settings")} aria-current={current("/settings")}>{t("nav.settings")}</a></li>
            {canConfigure ? <li><a {...linkTo("/mail-to-fax")} aria-current={current("/mail-to-fax")}>{t("nav.mailToFax")}</a></li> : null}
            {account.operator ? <li><a {...linkTo("/operations")} aria-current={current("/operations")}>{t("nav.operations")}</a></li> : null}
          </ul>
        </nav>
        <div class="account">
          <LiveIndicator />
          <span class="who" title={t("nav.signedInAs", { login: account.login, custNr: account.custNr })}>
            {account.login} · {account.custNr} · {account.datacenter}
          </span>
          <LanguageSwitch />
          <button type="button" class="button-quiet" onClick={signOut}>
            {t("nav.signOut")}
          </button>
        </div>
      </header>
      {account.test ? <p class="test-banner">{t("nav.testAccount")}</p> : null}
      <main id="main">{page}</main>
    </>
  );
}

function LanguageSwitch() {
  const lang = useLanguage();
  return (
    <label class="language">
      <span class="visually-hidden">{t("nav.language")}</span>
      <select value={lang} onChange={(e) => setLanguage((e.target as HTMLSelectElement).value as Language)}>
        <option value="en">English</option>
        <option value="de">Deutsch</option>
      </select>
    </label>
  );
}

function LiveIndicator() {
  const live = useLiveState();
  return (
    <span class={`live ${live ? "live-on" : "live-off"}`} role="status" data-live={live ? "on" : "off"}>
      <span class="dot" aria-hidden="true" />
      <span class="visually-hidden">{live ? t("common.live") : t("common.liveOff")}</span>
    </span>
  );
}

render(<App />, document.getElementById("app")!);

import { useEffect, useState } from "preact/hooks";
import { ApiFailure, call, inboundProfile } from "../api.ts";
import { Notice } from "../components.tsx";
import { t, useLanguage } from "../i18n.ts";

interface SftpDelivery {
  host: string;
  port: number;
  username: string;
  authMethod: "key" | "password";
  publicKey: string | null;
  hostKeys: string[];
  directory: string;
  filePattern: string;
  documentFormat: string;
  metadataFormat: string;
  target: string;
}

interface Topic {
  name: string;
  numbers: string[];
  mailTo: string[];
  mailAttachment: string;
  pushUrl: string | null;
  retentionDays: number | null;
  sftp: SftpDelivery | null;
}

type Status = { tone: "success" | "error"; text: string } | null;

/** Fax-to-SFTP of one topic, changed through the configuration API (the profile's `ftp`). */
function SftpForm({ topic, canManage, reload, id }: { topic: Topic; canManage: boolean; reload: () => Promise<void>; id: string }) {
  const d = topic.sftp;
  const [host, setHost] = useState(d?.host ?? "");
  const [port, setPort] = useState(String(d?.port ?? 22));
  const [user, setUser] = useState(d?.username ?? "");
  const [hostKeys, setHostKeys] = useState((d?.hostKeys ?? []).join("\n"));
  const [method, setMethod] = useState<"key" | "password">(d?.authMethod ?? "key");
  const [privateKey, setPrivateKey] = useState("");
  const [passphrase, setPassphrase] = useState("");
  const [generateKey, setGenerateKey] = useState(d === null);
  const [password, setPassword] = useState("");
  const [directory, setDirectory] = useState(d?.directory ?? "");
  const [pattern, setPattern] = useState(d?.filePattern ?? "{date}-{time}_{called}_{id}");
  const [documentFormat, setDocumentFormat] = useState(d?.documentFormat ?? "PDF");
  const [metadataFormat, setMetadataFormat] = useState(d?.metadataFormat ?? "JSON");
  const [presented, setPresented] = useState<{ fingerprint: string; type: string } | null>(null);
  const [status, setStatus] = useState<Status>(null);
  const value = (set: (v: string) => void) => (e: Event) => set((e.target as HTMLInputElement).value);
  const fail = (err: unknown) => setStatus({ tone: "error", text: err instanceof ApiFailure ? err.message : String(err) });
  return (
    <section class="stack" aria-labelledby={`${id}-sftp`} data-sftp={topic.name}>
      <h4 id={`${id}-sftp`}>{t("sftp.title")}</h4>
      <p class="muted small">{d ? d.target : t("sftp.none")} · {t("sftp.intro")}</p>
      <form
        class="stack"
        onSubmit={(e) => {
          e.preventDefault();
          // Secrets left empty are not sent: the stored ones stay.
          const secret = (text: string) => (text === "" ? undefined : text);
          call("PATCH", inboundProfile(topic.name), {
            ftp: {
              host,
              port: Number(port),
              username: user,
              hostKeys: hostKeys.split(/\s+/).filter(Boolean),
              authMethod: method,
              privateKey: method === "key" && !generateKey ? secret(privateKey) : undefined,
              keyPassphrase: method === "key" && !generateKey ? secret(passphrase) : undefined,
              generateKey: method === "key" && generateKey,
              password: method === "password" ? secret(password) : undefined,
              directory,
              filePattern: pattern,
              documentFormat,
              metadataFormat,
            },
          })
            .then(async () => {
              setPrivateKey("");
              setPassphrase("");
              setPassword("");
              setGenerateKey(false);
              setStatus({ tone: "success", text: t("common.saved") });
              await reload();
            })
            .catch(fail);
        }}
      >
        <fieldset class="plain" disabled={!canManage}>
          <div class="stack">
            <label>
              {t("sftp.host")}
              <input name="sftpHost" value={host} onInput={value(setHost)} autocomplete="off" />
            </label>
            <label>
              {t("sftp.port")}
              <input name="sftpPort" inputMode="numeric" value={port} onInput={value(setPort)} />
            </label>
            <label>
              {t("sftp.user")}
              <input name="sftpUser" value={user} onInput={value(setUser)} autocomplete="off" />
            </label>
            <label>
              {t("sftp.hostKeys")}
              <textarea name="sftpHostKeys" rows={2} value={hostKeys} onInput={value(setHostKeys)} class="mono" />
            </label>
            <div class="form-actions">
              <button
                type="button"
                class="button-quiet"
                onClick={() =>
                  call<{ fingerprint: string; type: string }>("POST", "/console/api/sftp-host-key", { host, port: Number(port) })
                    .then((k) => {
                      setPresented(k);
                      setStatus(null);
                    })
                    .catch(fail)
                }
              >
                {t("sftp.readKey")}
              </button>
            </div>
            {presented ? (
              <Notice tone="info">
                {t("sftp.presented", presented)}{" "}
                <button type="button" class="button-quiet" onClick={() => setHostKeys(presented.fingerprint)}>
                  {t("sftp.useKey")}
                </button>
              </Notice>
            ) : null}
            <label>
              {t("sftp.login")}
              <select name="sftpLogin" value={method} onChange={(e) => setMethod((e.target as HTMLSelectElement).value === "password" ? "password" : "key")}>
                <option value="key">{t("sftp.login.key")}</option>
                <option value="password">{t("sftp.login.password")}</option>
              </select>
            </label>
            {method === "key" ? (
              <>
                <label class="inline">
                  <input type="checkbox" name="sftpGenerateKey" checked={generateKey} onChange={(e) => setGenerateKey((e.target as HTMLInputElement).checked)} /> {t("sftp.generateKey")}
                </label>
                {!generateKey ? (
                  <>
                    <label>
                      {t("sftp.privateKey")}
                      <textarea name="sftpPrivateKey" rows={3} value={privateKey} onInput={value(setPrivateKey)} class="mono" autocomplete="off" />
                    </label>
                    <label>
                      {t("sftp.passphrase")}
                      <input name="sftpPassphrase" type="password" value={passphrase} onInput={value(setPassphrase)} autocomplete="off" />
                    </label>
                  </>
                ) : null}
                {d?.publicKey ? (
                  <label>
                    {t("sftp.publicKey")}
                    <textarea name="sftpPublicKey" rows={2} readOnly value={d.publicKey} class="mono" />
                  </label>
                ) : null}
              </>
            ) : (
              <label>
                {t("sftp.password")}
                <input name="sftpPassword" type="password" value={password} onInput={value(setPassword)} autocomplete="new-password" />
              </label>
            )}
            <label>
              {t("sftp.directory")}
              <input name="sftpDirectory" value={directory} onInput={value(setDirectory)} />
            </label>
            <label>
              {t("sftp.pattern")}
              <input name="sftpPattern" value={pattern} onInput={value(setPattern)} class="mono" />
            </label>
            <label>
              {t("sftp.documentFormat")}
              <select name="sftpDocument" value={documentFormat} onChange={value(setDocumentFormat)}>
                <option value="PDF">PDF</option>
                <option value="TIFF">TIFF</option>
              </select>
            </label>
            <label>
              {t("sftp.metadataFormat")}
              <select name="sftpMetadata" value={metadataFormat} onChange={value(setMetadataFormat)}>
                <option value="JSON">JSON</option>
                <option value="XML">XML</option>
              </select>
            </label>
          </div>
        </fieldset>
        {canManage ? (
          <div class="form-actions">
            <button type="submit" class="button-primary">{t("sftp.save")}</button>
            {d ? (
              <button
                type="button"
                class="button-quiet"
                onClick={() =>
                  call("PATCH", inboundProfile(topic.name), { ftp: null })
                    .then(async () => {
                      setStatus({ tone: "success", text: t("sftp.removed") });
                      await reload();
                    })
                    .catch(fail)
                }
              >
                {t("sftp.remove")}
              </button>
            ) : null}
          </div>
        ) : null}
      </form>
      {status ? <Notice tone={status.tone}>{status.text}</Notice> : null}
    </section>
  );
}

function TopicCard({ topic, canManage, reload }: { topic: Topic; canManage: boolean; reload: () => Promise<void> }) {
  const [mailTo, setMailTo] = useState(topic.mailTo.join(", "));
  const [attach, setAttach] = useState(topic.mailAttachment);
  const [pushUrl, setPushUrl] = useState(topic.pushUrl ?? "");
  const [status, setStatus] = useState<{ tone: "success" | "error"; text: string } | null>(null);
  const run = async (work: () => Promise<unknown>, done: string) => {
    try {
      await work();
      setStatus({ tone: "success", text: done });
      await reload();
    } catch (err) {
      setStatus({ tone: "error", text: err instanceof ApiFailure ? err.message : String(err) });
    }
  };
  const id = `topic-${topic.name.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  return (
    <section class="topic" aria-labelledby={id} data-topic={topic.name}>
      <h3 id={id}>{topic.name}</h3>
      <p class="muted small">{topic.numbers.length === 0 ? t("topics.noNumbers") : t("topics.numbers")}</p>
      <ul class="plain-list">
        {topic.numbers.map((n) => (
          <li>
            <span class="mono">{n}</span>
          </li>
        ))}
      </ul>

      <form
        class="stack"
        onSubmit={(e) => {
          e.preventDefault();
          void run(
            () =>
              call("PATCH", inboundProfile(topic.name), {
                email: mailTo.split(/[,\s]+/).filter(Boolean).length > 0 ? { recipients: mailTo.split(/[,\s]+/).filter(Boolean), attachment: attach } : null,
                webservice: pushUrl.trim() ? { url: pushUrl.trim() } : null,
              }),
            t("common.saved"),
          );
        }}
      >
        <fieldset class="plain" disabled={!canManage}>
          <div class="stack">
            <label>
              {t("topics.mailTo")}
              <input name="mailTo" value={mailTo} onInput={(e) => setMailTo((e.target as HTMLInputElement).value)} />
            </label>
            <label>
              {t("topics.attach")}
              <select name="attach" value={attach} onChange={(e) => setAttach((e.target as HTMLSelectElement).value)}>
                <option value="PDF">PDF</option>
                <option value="TIFF">TIFF</option>
                <option value="NONE">{t("common.none")}</option>
              </select>
            </label>
            <label>
              {t("topics.pushUrl")}
              <input name="pushUrl" type="url" value={pushUrl} onInput={(e) => setPushUrl((e.target as HTMLInputElement).value)} />
            </label>
          </div>
        </fieldset>
        {canManage ? (
          <div class="form-actions">
            <button type="submit" class="button-primary">{t("common.save")}</button>
          </div>
        ) : null}
      </form>
      {status ? <Notice tone={status.tone}>{status.text}</Notice> : null}
      <SftpForm topic={topic} canManage={canManage} reload={reload} id={id} />
    </section>
  );
}

/** A number as the configuration API shows it (its own settings). */
interface InboundNumber {
  number: string;
  profile: string | null;
  faxId: string | null;
  active: boolean | null;
  paused: boolean | null;
}

function NumberRow({ number, topics, saved }: { number: InboundNumber; topics: string[]; saved: () => Promise<void> }) {
  const [profile, setProfile] = useState(number.profile ?? "");
  const [faxId, setFaxId] = useState(number.faxId ?? "");
  const [active, setActive] = useState(number.active !== false);
  const [paused, setPaused] = useState(number.paused === true);
  const [status, setStatus] = useState<Status>(null);
  const vars = { number: number.number };
  return (
    <tr data-number={number.number}>
      <th scope="row" class="mono">
        {number.number}
      </th>
      <td>
        <select aria-label={t("numbers.topicFor", vars)} value={profile} onChange={(e) => setProfile((e.target as HTMLSelectElement).value)}>
          <option value="">{t("numbers.noTopic")}</option>
          {topics.map((name) => (
            <option value={name}>{name}</option>
          ))}
        </select>
      </td>
      <td>
        <input aria-label={t("numbers.faxIdFor", vars)} value={faxId} maxLength={20} onInput={(e) => setFaxId((e.target as HTMLInputElement).value)} />
      </td>
      <td>
        <input type="checkbox" aria-label={t("numbers.activeFor", vars)} checked={active} onChange={(e) => setActive((e.target as HTMLInputElement).checked)} />
      </td>
      <td>
        <input type="checkbox" aria-label={t("numbers.pausedFor", vars)} checked={paused} onChange={(e) => setPaused((e.target as HTMLInputElement).checked)} />
      </td>
      <td>
        <button
          type="button"
          class="button-quiet"
          aria-label={t("numbers.saveFor", vars)}
          onClick={() =>
            call("PATCH", `/config/v2/inbound/numbers/${encodeURIComponent(number.number)}`, {
              profile: profile === "" ? null : profile,
              faxId: faxId.trim() === "" ? null : faxId.trim(),
              active,
              // Unchecked is "not set": a pause of the topic or the customer still holds.
              paused: paused ? true : null,
            })
              .then(async () => {
                setStatus({ tone: "success", text: t("numbers.saved", vars) });
                // The topics above show their numbers: read them again.
                await saved();
              })
              .catch((err: unknown) => setStatus({ tone: "error", text: err instanceof ApiFailure ? err.message : String(err) }))
          }
        >
          {t("common.save")}
        </button>
        {status ? <Notice tone={status.tone}>{status.text}</Notice> : null}
      </td>
    </tr>
  );
}

/** The customer's numbers, changed through the configuration API (managers: docs/config-api.md). */
function NumbersSection({ topics, version, saved }: { topics: string[]; version: number; saved: () => Promise<void> }) {
  const [numbers, setNumbers] = useState<InboundNumber[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    call<InboundNumber[]>("GET", "/config/v2/inbound/numbers?limit=1000")
      .then(setNumbers)
      .catch((err: unknown) => setError(err instanceof ApiFailure ? err.message : String(err)));
  }, [version]);
  return (
    <section class="stack" aria-labelledby="settings-numbers">
      <h3 id="settings-numbers">{t("numbers.title")}</h3>
      <p class="muted small">{t("numbers.intro")}</p>
      {error ? <Notice tone="error">{error}</Notice> : null}
      {numbers === null ? null : numbers.length === 0 ? (
        <p class="muted">{t("numbers.none")}</p>
      ) : (
        <div class="table-card" tabIndex={0} role="region" aria-label={t("numbers.title")}>
          <table>
            <thead>
              <tr>
                <th scope="col">{t("numbers.number")}</th>
                <th scope="col">{t("numbers.topic")}</th>
                <th scope="col">{t("numbers.faxId")}</th>
                <th scope="col">{t("numbers.active")}</th>
                <th scope="col">{t("numbers.paused")}</th>
                <th scope="col">
                  <span class="visually-hidden">{t("common.save")}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {numbers.map((n) => (
                <NumberRow key={n.number} number={n} topics={topics} saved={saved} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

export function TopicsSection() {
  useLanguage();
  const [data, setData] = useState<{ topics: Topic[]; canManage: boolean; defaultRetentionDays: number } | null>(null);
  const [name, setName] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  const load = async () => {
    try {
      setData(await call("GET", "/console/api/topics"));
      setVersion((v) => v + 1);
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : String(err));
    }
  };
  useEffect(() => void load(), []);
  if (!data) return error ? <Notice tone="error">{error}</Notice> : null;
  return (
    <section class="card" aria-labelledby="settings-topics">
      <h2 id="settings-topics">{t("topics.title")}</h2>
      <p class="muted small">{t("topics.intro", { days: data.defaultRetentionDays })}</p>
      {data.topics.length === 0 ? <p class="muted">{t("topics.none")}</p> : null}
      {data.topics.map((topic) => (
        <TopicCard key={topic.name} topic={topic} canManage={data.canManage} reload={load} />
      ))}
      {data.canManage ? <NumbersSection topics={data.topics.map((topic) => topic.name)} version={version} saved={load} /> : null}
      {data.canManage ? (
        <form
          class="inline-form"
          onSubmit={async (e) => {
            e.preventDefault();
            try {
              // Through the configuration API; If-None-Match: * creates it only, never replaces one.
              await call("PUT", inboundProfile(name.trim()), {}, { headers: { "if-none-match": "*" } });
              setName("");
              setError(null);
              await load();
            } catch (err) {
              setError(err instanceof ApiFailure ? err.message : String(err));
            }
          }}
        >
          <label>
            {t("topics.newName")}
            <input name="topicName" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          </label>
          <button type="submit" class="button-primary">{t("topics.create")}</button>
        </form>
      ) : null}
      {error ? <Notice tone="error">{error}</Notice> : null}
    </section>
  );
}

import { useEffect, useState } from "preact/hooks";
import { ApiFailure, call } from "../api.ts";
import { Notice } from "../components.tsx";
import { t, useLanguage } from "../i18n.ts";

interface Topic {
  name: string;
  numbers: string[];
  mailTo: string[];
  mailAttachment: string;
  pushUrl: string | null;
  retentionDays: number | null;
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
              call("PUT", `/console/api/topics/${encodeURIComponent(topic.name)}/deliveries`, {
                mailTo: mailTo.split(/[,\s]+/).filter(Boolean),
                mailAttachment: attach,
                pushUrl: pushUrl.trim() || null,
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
    </section>
  );
}

export function TopicsSection() {
  useLanguage();
  const [data, setData] = useState<{ topics: Topic[]; canManage: boolean; defaultRetentionDays: number } | null>(null);
  const [name, setName] = useState("");
  const [error, setError] = useState<string | null>(null);
  const load = async () => {
    try {
      setData(await call("GET", "/console/api/topics"));
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
      {data.canManage ? (
        <form
          class="inline-form"
          onSubmit={async (e) => {
            e.preventDefault();
            try {
              await call("POST", "/console/api/topics", { name });
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

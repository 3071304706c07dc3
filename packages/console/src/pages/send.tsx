import { useEffect, useRef, useState } from "preact/hooks";
import { ApiFailure, call, rest, type Account } from "../api.ts";
import { Notice, PageTitle, Section } from "../components.tsx";
import { t, useLanguage, type TextKey } from "../i18n.ts";
import { navigate } from "../router.ts";

/** renderingOptions.toneMode (docs/api.md): how pages become black and white. */
const TONE_MODES = ["AUTO", "TEXT", "PHOTO", "THRESHOLD"] as const;

interface NumberRow {
  id: number;
  value: string;
  check: { ok: true; e164: string } | { ok: false; message: string } | null;
}

interface Preview {
  estimatedSeconds: number;
  pages: { page: number; png: string; warnings: string[] }[];
}

const ACCEPT = ".pdf,.doc,.docx,.xls,.xlsx,.ppt,.pptx,.odt,.ods,.odp,.rtf,.tif,.tiff,.jpg,.jpeg,.png,.gif,.txt,.htm,.html";
const VALIDITY = ["", "PT1H", "PT4H", "PT24H", "P3D"] as const;

/** A file name the API takes: at most 32 characters of a-z A-Z 0-9 - _ . with its extension kept. */
export function documentName(fileName: string): string {
  const dot = fileName.lastIndexOf(".");
  const ext = dot > 0 ? fileName.slice(dot).replace(/[^a-zA-Z0-9.]/g, "").slice(0, 8) : "";
  const stem = (dot > 0 ? fileName.slice(0, dot) : fileName).normalize("NFKD").replace(/[^a-zA-Z0-9_-]+/g, "_").replace(/^_+|_+$/g, "") || "document";
  return `${stem.slice(0, 32 - ext.length)}${ext}`;
}

async function base64Of(file: File): Promise<string> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

export function SendPage({ account }: { account: Account }) {
  useLanguage();
  const [files, setFiles] = useState<File[]>([]);
  const [numbers, setNumbers] = useState<NumberRow[]>([{ id: 1, value: "", check: null }]);
  const [resolution, setResolution] = useState("HIGH");
  const [paper, setPaper] = useState("A4");
  // "": the account's default tone mode (Settings), else AUTO.
  const [toneMode, setToneMode] = useState("");
  const [header, setHeader] = useState("");
  const [cover, setCover] = useState("");
  const [covers, setCovers] = useState<string[]>([]);
  const [express, setExpress] = useState(false);
  const [validity, setValidity] = useState("");
  const [reference, setReference] = useState("");
  const [preview, setPreview] = useState<Preview | null>(null);
  const [busy, setBusy] = useState<"preview" | "send" | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [testNumbers, setTestNumbers] = useState<{ number: string; description: string }[]>([]);
  const timers = useRef(new Map<number, number>());
  const nextId = useRef(2);

  useEffect(() => {
    call<{ coverTemplates: { name: string }[] }>("GET", "/console/api/settings")
      .then((s) => setCovers(s.coverTemplates.map((c) => c.name)))
      .catch(() => undefined);
    if (account.test) {
      call<{ numbers: { number: string; description: string }[] }>("GET", "/console/api/test-numbers")
        .then((r) => setTestNumbers(r.numbers))
        .catch(() => undefined);
    }
  }, []);

  const setNumber = (id: number, value: string) => {
    setNumbers((rows) => rows.map((r) => (r.id === id ? { ...r, value, check: null } : r)));
    setPreview(null);
    const old = timers.current.get(id);
    if (old) clearTimeout(old);
    if (value.trim() === "") return;
    timers.current.set(
      id,
      window.setTimeout(async () => {
        try {
          const check = await call<NumberRow["check"]>("GET", `/console/api/numbers/check?number=${encodeURIComponent(value)}`);
          setNumbers((rows) => rows.map((r) => (r.id === id && r.value === value ? { ...r, check } : r)));
        } catch {
          /* the send itself will say */
        }
      }, 250),
    );
  };

  const body = async () => {
    const documents = await Promise.all(files.map(async (f) => ({ name: documentName(f.name), data: await base64Of(f) })));
    return {
      recipients: numbers.filter((n) => n.value.trim() !== "").map((n) => ({ number: n.value.trim() })),
      documents,
      renderingOptions: { resolution, paperFormat: paper, toneMode: toneMode || null, header: header.trim() || null, coverpageTemplate: cover || null },
      transportOptions: { isExpress: express },
      reference: reference.trim() ? { customerDefinedId: reference.trim() } : null,
      meta: validity ? { jobValid: { end: validity } } : null,
    };
  };

  const problems = (): string | null => {
    if (files.length === 0 && !cover) return t("send.needDocument");
    const filled = numbers.filter((n) => n.value.trim() !== "");
    if (filled.length === 0) return t("send.needNumber");
    if (filled.some((n) => n.check && !n.check.ok)) return t("send.fixNumbers");
    return null;
  };

  const run = async (kind: "preview" | "send") => {
    const problem = problems();
    if (problem) return setError(problem);
    setBusy(kind);
    setError(null);
    try {
      if (kind === "preview") {
        setPreview(await call<Preview>("POST", rest(account, "/fax/preview"), await body()));
      } else {
        const created = await call<{ jobId: string }>("POST", rest(account, "/fax"), await body());
        navigate(`/jobs/${encodeURIComponent(created.jobId)}`);
      }
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : String(err));
    } finally {
      setBusy(null);
    }
  };

  return (
    <>
      <PageTitle>{t("send.title")}</PageTitle>
      <form
        class="send-form"
        onSubmit={(e) => {
          e.preventDefault();
          void run("send");
        }}
      >
        <Section title={t("send.documents")} id="send-documents">
          <label>
            <span class="visually-hidden">{t("send.documents")}</span>
            <input
              type="file"
              name="documents"
              multiple
              accept={ACCEPT}
              aria-describedby="documents-hint"
              onChange={(e) => {
                setFiles(Array.from((e.target as HTMLInputElement).files ?? []));
                setPreview(null);
              }}
            />
          </label>
          <p id="documents-hint" class="muted small">{t("send.documentsHint")}</p>
          {files.length > 0 ? (
            <ul class="file-list">
              {files.map((f) => (
                <li>
                  {f.name} <span class="muted">({Math.ceil(f.size / 1024)} KB)</span>
                </li>
              ))}
            </ul>
          ) : null}
        </Section>

        <Section title={t("send.recipients")} id="send-numbers">
          <ol class="number-list">
            {numbers.map((n, i) => (
              <li>
                <label>
                  {t("send.numberLabel", { n: i + 1 })}
                  <input
                    name={`number-${i + 1}`}
                    inputMode="tel"
                    autoComplete="off"
                    placeholder="+49 89 123456"
                    value={n.value}
                    aria-invalid={n.check && !n.check.ok ? "true" : "false"}
                    aria-describedby={`number-${n.id}-check`}
                    onInput={(e) => setNumber(n.id, (e.target as HTMLInputElement).value)}
                  />
                </label>
                <span id={`number-${n.id}-check`} class={`check ${n.check ? (n.check.ok ? "check-ok" : "check-bad") : ""}`} aria-live="polite">
                  {n.check ? (n.check.ok ? `✓ ${t("send.numberOk", { e164: n.check.e164 })}` : `✗ ${n.check.message}`) : t("send.numberHint")}
                </span>
                {numbers.length > 1 ? (
                  <button type="button" class="button-quiet" aria-label={t("send.removeNumber", { n: i + 1 })} onClick={() => setNumbers(numbers.filter((x) => x.id !== n.id))}>
                    {t("common.remove")}
                  </button>
                ) : null}
              </li>
            ))}
          </ol>
          <button type="button" class="button-quiet" onClick={() => setNumbers([...numbers, { id: nextId.current++, value: "", check: null }])}>
            + {t("send.addNumber")}
          </button>
          {testNumbers.length > 0 ? (
            <details class="test-numbers">
              <summary>{t("send.testNumbers")}</summary>
              <ul>
                {testNumbers.map((tn) => (
                  <li>
                    <span class="mono">{tn.number}</span>: {tn.description}
                  </li>
                ))}
              </ul>
            </details>
          ) : null}
        </Section>

        <Section title={t("send.options")} id="send-options">
          <div class="options-grid">
            <fieldset>
              <legend>{t("send.resolution")}</legend>
              {["HIGH", "LOW"].map((r) => (
                <label class="inline">
                  <input type="radio" name="resolution" value={r} checked={resolution === r} onChange={() => setResolution(r)} /> {t(r === "HIGH" ? "send.resolution.HIGH" : "send.resolution.LOW")}
                </label>
              ))}
            </fieldset>
            <label>
              {t("send.paper")}
              <select name="paper" value={paper} onChange={(e) => setPaper((e.target as HTMLSelectElement).value)}>
                <option value="A4">A4</option>
                <option value="LETTER">Letter</option>
              </select>
            </label>
            <label>
              {t("send.toneMode")}
              <select name="toneMode" value={toneMode} onChange={(e) => setToneMode((e.target as HTMLSelectElement).value)}>
                <option value="">{t("send.toneMode.default")}</option>
                {TONE_MODES.map((mode) => (
                  <option value={mode}>{t(`send.toneMode.${mode}` as TextKey)}</option>
                ))}
              </select>
            </label>
            <label>
              {t("send.cover")}
              <select name="cover" value={cover} onChange={(e) => setCover((e.target as HTMLSelectElement).value)}>
                <option value="">{t("common.none")}</option>
                {covers.map((c) => (
                  <option value={c}>{c}</option>
                ))}
              </select>
            </label>
            <label>
              {t("send.validity")}
              <select name="validity" value={validity} onChange={(e) => setValidity((e.target as HTMLSelectElement).value)}>
                {VALIDITY.map((v) => (
                  <option value={v}>
                    {v === "" ? t("send.validity.default") : v.startsWith("PT") ? t("send.validity.hours", { n: Number(v.slice(2, -1)) }) : t("send.validity.days", { n: Number(v.slice(1, -1)) })}
                  </option>
                ))}
              </select>
            </label>
            <label class="wide">
              {t("send.header")}
              <input name="header" value={header} maxLength={1000} aria-describedby="header-hint" onInput={(e) => setHeader((e.target as HTMLInputElement).value)} />
              <span id="header-hint" class="muted small">{t("send.headerHint")}</span>
            </label>
            <label class="wide">
              {t("send.reference")}
              <input name="reference" value={reference} maxLength={256} onInput={(e) => setReference((e.target as HTMLInputElement).value)} />
            </label>
            <label class="inline">
              <input type="checkbox" name="express" checked={express} onChange={(e) => setExpress((e.target as HTMLInputElement).checked)} /> {t("send.express")}
            </label>
          </div>
        </Section>

        {error ? <Notice tone="error">{error}</Notice> : null}
        <div class="form-actions">
          <button type="button" class="button-quiet" disabled={busy !== null} onClick={() => run("preview")}>
            {busy === "preview" ? t("send.previewing") : t("send.preview")}
          </button>
          <button type="submit" class="button-primary" disabled={busy !== null}>
            {busy === "send" ? t("send.sending") : t("send.submit")}
          </button>
        </div>
      </form>

      {preview ? (
        <Section title={t("send.previewTitle")} id="send-preview">
          <p>{preview.pages.length === 1 ? t("send.previewSummaryOne", { seconds: Math.round(preview.estimatedSeconds) }) : t("send.previewSummary", { pages: preview.pages.length, seconds: Math.round(preview.estimatedSeconds) })}</p>
          <ol class="pages">
            {preview.pages.map((p) => (
              <li>
                <img class="page-preview" src={`data:image/png;base64,${p.png}`} alt={t("job.pageAlt", { page: p.page, pages: preview.pages.length })} />
                {p.warnings.length > 0 ? <p class="muted small">{p.warnings.join("; ")}</p> : null}
              </li>
            ))}
          </ol>
        </Section>
      ) : null}
    </>
  );
}

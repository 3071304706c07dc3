/**
 * The pieces every mail-to-fax form shares: a form that names the field a refusal is about
 * (marked aria-invalid, described by the message, and focused), a heading that takes focus
 * when the form opens, and a delete button that asks before it deletes. Forms are noValidate:
 * the API decides what is valid, and its refusal names the field (the browser would not).
 */
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { messageOf } from "../../config-api.ts";
import { hasText, t, type TextKey } from "../../i18n.ts";
import { problemOf, type Problem } from "./field-problem.ts";

const KEY_LABELS: Record<string, TextKey> = {
  email: "m2f.users.email",
  name: "m2f.profiles.name",
  domain: "m2f.domains.domain",
  pin: "m2f.users.pin",
  login: "m2f.settings.login",
  "general.profile": "m2f.users.profile",
};

/** The label of a field by its API path, as the form shows it. */
export function labelOf(path: string): string {
  const key = KEY_LABELS[path] ?? `m2f.field.${path}`;
  return hasText(key) ? t(key) : path;
}

/** The attributes of a form control: its name (the API path), id, and its hint and refusal. */
export type FieldProps = (name: string, hintId?: string) => { name: string; id: string; "aria-invalid"?: "true"; "aria-describedby"?: string };

export const idOf = (formId: string, name: string) => `${formId}-${name.replace(/[^A-Za-z0-9_-]/g, "-")}`;

export function ConfigForm(props: {
  id: string;
  /** The form's own heading (h3); without one, `labelledBy` names the heading of its section. */
  title?: string;
  labelledBy?: string;
  /** Every field's name, to find the one a refusal names. */
  fields: readonly string[];
  /** The resource's key field (email, name, domain), for refusals that quote its value. */
  keyField: string | null;
  submitLabel?: string;
  onSubmit: () => Promise<void>;
  onCancel?: () => void;
  children: (field: FieldProps) => ComponentChildren;
}) {
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (props.onCancel) heading.current?.focus();
  }, []);
  useEffect(() => {
    if (problem?.field) form.current?.querySelector<HTMLElement>(`[name="${CSS.escape(problem.field)}"]`)?.focus();
  }, [problem]);
  const problemId = `${props.id}-problem`;
  const field: FieldProps = (name, hintId) => {
    const invalid = problem?.field === name;
    const describedBy = [hintId, invalid ? problemId : undefined].filter(Boolean).join(" ");
    return { name, id: idOf(props.id, name), ...(invalid ? { "aria-invalid": "true" as const } : {}), ...(describedBy ? { "aria-describedby": describedBy } : {}) };
  };
  return (
    <form
      ref={form}
      class="stack"
      aria-labelledby={props.title ? `${props.id}-title` : props.labelledBy}
      data-form={props.id}
      noValidate
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setProblem(null);
        try {
          await props.onSubmit();
        } catch (err) {
          setProblem(problemOf(err, props.fields, props.keyField, messageOf));
        } finally {
          setBusy(false);
        }
      }}
    >
      {props.title ? (
        <h3 id={`${props.id}-title`} tabIndex={-1} ref={heading}>
          {props.title}
        </h3>
      ) : null}
      {props.children(field)}
      {problem ? (
        <div id={problemId} class="notice notice-error" role="alert" data-problem-field={problem.field ?? ""}>
          {problem.field ? t("m2f.fieldError", { field: labelOf(problem.field), message: problem.message }) : problem.message}
        </div>
      ) : null}
      <div class="form-actions">
        <button type="submit" class="button-primary" disabled={busy}>
          {props.submitLabel ?? t("common.save")}
        </button>
        {props.onCancel ? (
          <button type="button" class="button-quiet" onClick={props.onCancel}>
            {t("common.cancel")}
          </button>
        ) : null}
      </div>
    </form>
  );
}

/** "Delete" that turns into "Delete X? Yes, delete / Cancel" (no browser dialog). */
export function DeleteButton({ name, onDelete }: { name: string; onDelete: () => Promise<void> }) {
  const [asking, setAsking] = useState(false);
  const yes = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) yes.current?.focus();
  }, [asking]);
  if (!asking) {
    return (
      <button type="button" class="button-quiet" aria-label={`${t("m2f.delete")} ${name}`} onClick={() => setAsking(true)}>
        {t("m2f.delete")}
      </button>
    );
  }
  return (
    <span role="group" aria-label={t("m2f.confirmDelete", { name })} class="confirm">
      <span>{t("m2f.confirmDelete", { name })}</span>{" "}
      <button type="button" class="button-danger" ref={yes} onClick={() => void onDelete().finally(() => setAsking(false))}>
        {t("m2f.confirmYes")}
      </button>{" "}
      <button type="button" class="button-quiet" onClick={() => setAsking(false)}>
        {t("common.cancel")}
      </button>
    </span>
  );
}

/**
 * A section's heading that takes the focus when what had it goes away (a form closed, a row
 * deleted), so keyboard and screen reader users stay in the section; the outcome line beside
 * it says what happened.
 */
export function useSectionHeading() {
  const ref = useRef<HTMLHeadingElement>(null);
  return { ref, focus: () => ref.current?.focus() };
}

/** A section's outcome line: "X saved.", or a refusal that belongs to no form. */
export type Outcome = { tone: "success" | "error"; text: string } | null;

export function OutcomeLine({ outcome }: { outcome: Outcome }) {
  // Always rendered, so screen readers announce what is written into it.
  return (
    <div role="status" aria-live="polite" class={outcome ? `notice notice-${outcome.tone}` : "visually-hidden"}>
      {outcome?.text ?? ""}
    </div>
  );
}

/** Previous / Next over limit/offset pages (the API's paging), with which entries are shown. */
export function Pager({ label, offset, count, limit, hasMore, onPage }: { label: string; offset: number; count: number; limit: number; hasMore: boolean; onPage: (offset: number) => void }) {
  if (offset === 0 && !hasMore) return null;
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" class="button-quiet" disabled={offset === 0} onClick={() => onPage(Math.max(0, offset - limit))}>
        ← {t("m2f.previous")}
      </button>
      <span class="muted small">{t("m2f.pageOf", { from: count === 0 ? 0 : offset + 1, to: offset + count })}</span>
      <button type="button" class="button-quiet" disabled={!hasMore} onClick={() => onPage(offset + limit)}>
        {t("m2f.next")} →
      </button>
    </nav>
  );
}

/**
 * The settings groups of a customer, profile or user as form fields: one fieldset per group,
 * every field may stay "Inherited" (empty), which shows the value it then takes when the level
 * above is known.
 */
import { hasText, t } from "../../i18n.ts";
import type { FieldProps } from "./form-kit.tsx";
import { GROUPS, PERSONALIZATION, type FieldSpec, type FormValues } from "./settings-fields.ts";

function shown(value: unknown): string {
  if (value === undefined || value === null || value === "") return "–";
  const key = `m2f.value.${String(value)}`;
  return hasText(key) ? t(key) : String(value);
}

function inheritLabel(inherited: Record<string, unknown> | null, path: string): string {
  return inherited === null ? t("m2f.inherited") : t("m2f.inheritedValue", { value: shown(inherited[path]) });
}

function Field({ spec, values, set, inherited, field, formId }: { spec: FieldSpec; values: FormValues; set: (path: string, value: string) => void; inherited: Record<string, unknown> | null; field: FieldProps; formId: string }) {
  const value = values[spec.path] ?? "";
  const onChange = (e: Event) => set(spec.path, (e.target as HTMLInputElement | HTMLSelectElement).value);
  const label = t(`m2f.field.${spec.path}` as never);
  if (spec.kind === "text") {
    const hintId = `${formId}-${spec.path.replace(".", "-")}-hint`;
    return (
      <label>
        {label}
        {spec.type === "email" ? (
          <input {...field(spec.path, hintId)} type="email" maxLength={spec.max} value={value} onInput={onChange} />
        ) : (
          <input {...field(spec.path, hintId)} type="text" maxLength={spec.max} value={value} inputMode={spec.inputMode} onInput={onChange} />
        )}
        <span id={hintId} class="muted small">
          {inheritLabel(inherited, spec.path)}
        </span>
      </label>
    );
  }
  const choices = spec.kind === "bool" ? ["true", "false"] : spec.values;
  return (
    <label>
      {label}
      <select {...field(spec.path)} value={value} onChange={onChange}>
        <option value="">{inheritLabel(inherited, spec.path)}</option>
        {choices.map((c) => (
          <option value={c}>{shown(c)}</option>
        ))}
      </select>
    </label>
  );
}

export function SettingsGroups(props: { formId: string; values: FormValues; set: (path: string, value: string) => void; inherited: Record<string, unknown> | null; field: FieldProps }) {
  const personalizationHint = `${props.formId}-personalization-hint`;
  return (
    <>
      {GROUPS.map((g) => (
        <fieldset data-group={g.group}>
          <legend>{t(`m2f.group.${g.group}` as never)}</legend>
          <div class="options-grid">
            {g.fields.map((spec) => (
              <Field spec={spec} {...props} />
            ))}
          </div>
        </fieldset>
      ))}
      <fieldset data-group={PERSONALIZATION}>
        <legend>{t("m2f.group.personalization")}</legend>
        <label>
          {t("m2f.field.personalization")}
          <textarea {...props.field(PERSONALIZATION, personalizationHint)} rows={3} value={props.values[PERSONALIZATION] ?? ""} onInput={(e) => props.set(PERSONALIZATION, (e.target as HTMLTextAreaElement).value)} />
          <span id={personalizationHint} class="muted small">
            {t("m2f.inheritedHint")}
          </span>
        </label>
      </fieldset>
    </>
  );
}

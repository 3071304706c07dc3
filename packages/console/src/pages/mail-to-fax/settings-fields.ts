/**
 * The mail-to-fax settings groups as form fields (docs/mail-to-fax.md "Settings"; the
 * configuration API's `general`, `fax`, `dialing`, `reportEmail`, `coverSheet`,
 * `personalization`). A form holds every field as text under its API path ("fax.csid"); ""
 * means inherited, which the API writes as the field left out. Pure: no requests, no DOM.
 */

export type FieldSpec =
  | { path: string; kind: "text"; max: number; type?: "email" | "text"; inputMode?: "numeric" }
  | { path: string; kind: "bool" }
  | { path: string; kind: "choice"; values: readonly string[] };

export interface GroupSpec {
  group: "general" | "fax" | "dialing" | "reportEmail" | "coverSheet";
  fields: FieldSpec[];
}

/** The groups and fields, in the order of docs/mail-to-fax.md (general.client and .profile are the user form's). */
export const GROUPS: readonly GroupSpec[] = [
  {
    group: "general",
    fields: [
      { path: "general.active", kind: "bool" },
      { path: "general.language", kind: "choice", values: ["en", "de"] },
    ],
  },
  {
    group: "fax",
    fields: [
      { path: "fax.csid", kind: "text", max: 20 },
      { path: "fax.costCenter", kind: "text", max: 100 },
      { path: "fax.header", kind: "text", max: 200 },
      { path: "fax.paperFormat", kind: "choice", values: ["A4", "LETTER"] },
      { path: "fax.resolution", kind: "choice", values: ["HIGH", "LOW"] },
      { path: "fax.sendAttachmentsOnly", kind: "bool" },
      { path: "fax.suppressBlankPages", kind: "bool" },
      { path: "fax.blocklist", kind: "bool" },
      { path: "fax.isExpress", kind: "bool" },
    ],
  },
  { group: "dialing", fields: [{ path: "dialing.removePrefix", kind: "text", max: 4, inputMode: "numeric" }] },
  {
    group: "reportEmail",
    fields: [
      { path: "reportEmail.enabled", kind: "bool" },
      { path: "reportEmail.onSuccess", kind: "bool" },
      { path: "reportEmail.onFailure", kind: "bool" },
      { path: "reportEmail.address", kind: "text", max: 320, type: "email" },
      { path: "reportEmail.attachFaxImage", kind: "choice", values: ["NEVER", "SUCCESS_ONLY", "FAILURE_ONLY", "ALWAYS"] },
      { path: "reportEmail.imageFormat", kind: "choice", values: ["PDF", "TIFF"] },
    ],
  },
  {
    group: "coverSheet",
    fields: [
      { path: "coverSheet.bodyAs", kind: "choice", values: ["FIRST_PAGE", "COVER_PAGE"] },
      { path: "coverSheet.template", kind: "text", max: 100 },
    ],
  },
];

export const PERSONALIZATION = "personalization";

/** Every field path of the groups, with personalization. */
export const SETTINGS_PATHS: readonly string[] = [...GROUPS.flatMap((g) => g.fields.map((f) => f.path)), PERSONALIZATION];

/** path → text; "" is inherited. */
export type FormValues = Record<string, string>;

type Groups = Record<string, unknown>;

function read(groups: Groups, path: string): unknown {
  const [group, field] = path.split(".") as [string, string];
  const g = groups[group];
  return g !== null && typeof g === "object" ? (g as Record<string, unknown>)[field] : undefined;
}

/** The form's values of a user, profile or customer as the API shows it (each level's own). */
export function formOf(groups: Groups): FormValues {
  const values: FormValues = {};
  for (const g of GROUPS) {
    for (const f of g.fields) {
      const v = read(groups, f.path);
      values[f.path] = v === undefined || v === null ? "" : String(v);
    }
  }
  const p = groups[PERSONALIZATION];
  values[PERSONALIZATION] = p !== null && typeof p === "object" ? Object.entries(p as Record<string, string>).map(([k, v]) => `${k}=${v}`).join("\n") : "";
  return values;
}

/** A value the form cannot send, named by its field (shown as the API's refusals are). */
export class FormProblem extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** The groups to send: each set field; a group without any is left out (inherited). */
export function groupsOf(values: FormValues): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const g of GROUPS) {
    const fields: Record<string, unknown> = {};
    for (const f of g.fields) {
      const text = values[f.path] ?? "";
      if (text === "") continue;
      const name = f.path.slice(g.group.length + 1);
      fields[name] = f.kind === "bool" ? text === "true" : text;
    }
    if (Object.keys(fields).length > 0) out[g.group] = fields;
  }
  const personalization: Record<string, string> = {};
  for (const line of (values[PERSONALIZATION] ?? "").split("\n")) {
    if (line.trim() === "") continue;
    const at = line.indexOf("=");
    if (at <= 0) throw new FormProblem(PERSONALIZATION, `"${line.trim()}" is not Name=value`);
    personalization[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  if (Object.keys(personalization).length > 0) out[PERSONALIZATION] = personalization;
  return out;
}

/** The effective values a level inherits (its parent's, shown with inherit=true), as path → raw value. */
export function inheritedOf(effective: Groups | null): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (effective === null) return out;
  for (const g of GROUPS) for (const f of g.fields) out[f.path] = read(effective, f.path);
  return out;
}

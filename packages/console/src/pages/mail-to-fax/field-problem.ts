/**
 * Which field a refusal is about. The configuration API names the field at the start of its
 * message ("fax.csid is longer than 20 characters", "pin must be 6 to 12 digits") or, for the
 * resource's key, quotes the value ("\"x\" is not an e-mail address"); a few codes name it by
 * themselves (profile_not_found: the user's profile). The form marks that field and moves the
 * focus to it.
 */
import { FaxlineApiError } from "../../config-api.ts";
import { FormProblem } from "./settings-fields.ts";

export interface Problem {
  /** The form field's name (its API path), or null when the refusal is about no one field. */
  field: string | null;
  message: string;
}

const BY_CODE: Record<string, string> = { profile_not_found: "general.profile", user_taken: "email", domain_taken: "domain" };

export function problemOf(err: unknown, fields: readonly string[], keyField: string | null, fallback: (err: unknown) => string): Problem {
  if (err instanceof FormProblem) return { field: err.field, message: err.message };
  if (!(err instanceof FaxlineApiError)) return { field: null, message: fallback(err) };
  const message = err.message;
  const byCode = BY_CODE[err.code];
  if (byCode !== undefined && fields.includes(byCode)) return { field: byCode, message };
  if (err.status === 400) {
    const named = [...fields].sort((a, b) => b.length - a.length).find((f) => message.startsWith(`${f} `) || message.startsWith(`${f}.`) || message.startsWith(`${f}[`));
    if (named !== undefined) return { field: named, message };
    if (keyField !== null && (message.startsWith('"') || message.startsWith("profile name "))) return { field: keyField, message };
  }
  return { field: null, message };
}

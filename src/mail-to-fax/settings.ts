/**
 * Mail-to-fax settings and their hierarchy: customer → profile → user. Each level sets what it
 * sets; a lower level overrides a value of a higher one, and whatever no level sets takes the
 * built-in default (MAIL_TO_FAX_DEFAULTS). The groups are the provider's (`general`, `fax`,
 * `dialing`, `reportEmail`, `coverSheet`, `personalization`; the reference's §1.2–1.4), their
 * fields Faxline's where the provider's are not public (docs/mail-to-fax.md lists them).
 *
 * `effectiveSettings` is the one place that merges the levels; the SMTP intake and the
 * configuration API's `inherit=true` both read it. Pure: no store, no clock.
 */

export const PAPER_FORMATS = ["A4", "LETTER"] as const;
export const RESOLUTIONS = ["HIGH", "LOW"] as const;
export const REPORT_LANGUAGES = ["en", "de"] as const;
export const REPORT_IMAGE_MODES = ["NEVER", "SUCCESS_ONLY", "FAILURE_ONLY", "ALWAYS"] as const;
export const REPORT_IMAGE_FORMATS = ["PDF", "TIFF"] as const;
/** What becomes of the mail's text: the first page, the cover page's message, or nothing. */
export const BODY_MODES = ["FIRST_PAGE", "COVER_PAGE"] as const;

export interface MailToFaxSettings {
  general?: {
    /** false: the level's senders are refused (a customer's: all of them). */
    active?: boolean;
    /** Language of the report mail when the mail gives none (Content-Language, Accept-Language). */
    language?: (typeof REPORT_LANGUAGES)[number];
  };
  fax?: {
    /** The sender fax id (CSID), at most 20 characters. */
    csid?: string;
    /** Written to the job's billing code (reporting by cost center). */
    costCenter?: string;
    /** Header line template (docs/rendering.md placeholders). */
    header?: string;
    paperFormat?: (typeof PAPER_FORMATS)[number];
    resolution?: (typeof RESOLUTIONS)[number];
    /** true: only the attachments are faxed, the mail's text is not. */
    sendAttachmentsOnly?: boolean;
    /** true: a mail text that is empty (after signature separators and quoting) is not faxed. */
    suppressBlankPages?: boolean;
    /** The customer's do-not-fax list is checked (the contract's isBlacklistEnabled). */
    blocklist?: boolean;
    isExpress?: boolean;
  };
  dialing?: {
    /** Digits removed from the start of a number written in the address (an outside-line "0"). */
    removePrefix?: string;
  };
  reportEmail?: {
    /** false: no report mail. */
    enabled?: boolean;
    onSuccess?: boolean;
    onFailure?: boolean;
    /** Where reports go; empty: the sender. */
    address?: string;
    attachFaxImage?: (typeof REPORT_IMAGE_MODES)[number];
    imageFormat?: (typeof REPORT_IMAGE_FORMATS)[number];
  };
  coverSheet?: {
    /** FIRST_PAGE: the text is the fax's first page; COVER_PAGE: it is the message of a cover page. */
    bodyAs?: (typeof BODY_MODES)[number];
    /** The installed cover template for COVER_PAGE ("default": the customer's default, else the built-in one). */
    template?: string;
  };
  /** Free key/values; they fill the cover page's placeholders (FromName, FromCompanyName …). */
  personalization?: Record<string, string>;
}

export interface EffectiveMailToFaxSettings {
  general: Required<NonNullable<MailToFaxSettings["general"]>>;
  fax: Omit<Required<NonNullable<MailToFaxSettings["fax"]>>, "csid" | "costCenter" | "header"> & { csid: string | null; costCenter: string | null; header: string | null };
  dialing: Required<NonNullable<MailToFaxSettings["dialing"]>>;
  reportEmail: Omit<Required<NonNullable<MailToFaxSettings["reportEmail"]>>, "address"> & { address: string | null };
  coverSheet: Required<NonNullable<MailToFaxSettings["coverSheet"]>>;
  personalization: Record<string, string>;
}

export const MAIL_TO_FAX_DEFAULTS: EffectiveMailToFaxSettings = {
  general: { active: true, language: "en" },
  fax: { csid: null, costCenter: null, header: null, paperFormat: "A4", resolution: "HIGH", sendAttachmentsOnly: false, suppressBlankPages: true, blocklist: false, isExpress: false },
  dialing: { removePrefix: "" },
  reportEmail: { enabled: true, onSuccess: true, onFailure: true, address: null, attachFaxImage: "FAILURE_ONLY", imageFormat: "PDF" },
  coverSheet: { bodyAs: "FIRST_PAGE", template: "default" },
  personalization: {},
};

const GROUPS = ["general", "fax", "dialing", "reportEmail", "coverSheet"] as const;

/**
 * The settings in force for a user: the defaults, then the customer's, the profile's and the
 * user's settings, each overriding field by field what the one before set (personalization key
 * by key). A level that is null is skipped. `active` is the one exception: a sender is active
 * only when no level switches it off (an inactive customer deactivates all its profiles and users).
 */
export function effectiveSettings(
  customer: MailToFaxSettings | null,
  profile: MailToFaxSettings | null,
  user: MailToFaxSettings | null,
): EffectiveMailToFaxSettings {
  const levels = [customer, profile, user].filter((l): l is MailToFaxSettings => l !== null);
  const out = structuredClone(MAIL_TO_FAX_DEFAULTS) as unknown as Record<string, Record<string, unknown>>;
  for (const level of levels) {
    for (const group of GROUPS) {
      const values = level[group] as Record<string, unknown> | undefined;
      if (values === undefined || values === null) continue;
      for (const [key, value] of Object.entries(values)) {
        if (value === undefined || value === null) continue;
        if (!(key in out[group]!)) continue;
        out[group]![key] = value;
      }
    }
    for (const [key, value] of Object.entries(level.personalization ?? {})) {
      if (typeof value === "string") out.personalization![key] = value;
    }
  }
  const effective = out as unknown as EffectiveMailToFaxSettings;
  effective.general.active = levels.every((l) => l.general?.active !== false);
  return effective;
}

/** A settings problem: the path of the field and what is wrong. */
export interface SettingsProblem {
  path: string;
  message: string;
}

type FieldCheck = (value: unknown) => string | null;
const isBool: FieldCheck = (v) => (typeof v === "boolean" ? null : "must be true or false");
const isText =
  (max: number): FieldCheck =>
  (v) =>
    typeof v !== "string" ? "must be a string" : v.length > max ? `must be at most ${max} characters` : null;
const isOneOf =
  (values: readonly string[]): FieldCheck =>
  (v) =>
    typeof v === "string" && values.includes(v) ? null : `must be one of ${values.join(", ")}`;

const FIELDS: Record<(typeof GROUPS)[number], Record<string, FieldCheck>> = {
  general: { active: isBool, language: isOneOf(REPORT_LANGUAGES) },
  fax: {
    csid: isText(20),
    costCenter: isText(100),
    header: isText(200),
    paperFormat: isOneOf(PAPER_FORMATS),
    resolution: isOneOf(RESOLUTIONS),
    sendAttachmentsOnly: isBool,
    suppressBlankPages: isBool,
    blocklist: isBool,
    isExpress: isBool,
  },
  dialing: { removePrefix: (v) => (typeof v === "string" && /^[0-9]{0,4}$/.test(v) ? null : 'must be up to 4 digits, e.g. "0"') },
  reportEmail: {
    enabled: isBool,
    onSuccess: isBool,
    onFailure: isBool,
    address: (v) => (typeof v === "string" && (v === "" || /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v)) ? null : "must be an e-mail address (or empty: the sender)"),
    attachFaxImage: isOneOf(REPORT_IMAGE_MODES),
    imageFormat: isOneOf(REPORT_IMAGE_FORMATS),
  },
  coverSheet: { bodyAs: isOneOf(BODY_MODES), template: isText(100) },
};

/**
 * Checks settings as a client sends them (the configuration API, the CLI): every group an
 * object, every field known and of its type. Returns the problems (empty: valid) and the
 * settings with nulls dropped (null means "inherit", as an absent field).
 */
export function checkSettings(input: unknown): { settings: MailToFaxSettings; problems: SettingsProblem[] } {
  const problems: SettingsProblem[] = [];
  const settings: Record<string, Record<string, unknown>> = {};
  if (input === null || input === undefined) return { settings: {}, problems };
  if (typeof input !== "object" || Array.isArray(input)) return { settings: {}, problems: [{ path: "", message: "must be an object of settings groups" }] };
  for (const [group, values] of Object.entries(input as Record<string, unknown>)) {
    if (values === null || values === undefined) continue;
    if (group === "personalization") {
      if (typeof values !== "object" || Array.isArray(values)) {
        problems.push({ path: group, message: "must be an object of text values" });
        continue;
      }
      const personal: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(values as Record<string, unknown>)) {
        if (value === null) continue;
        if (typeof value !== "string" || value.length > 500) problems.push({ path: `${group}.${key}`, message: "must be a text of at most 500 characters" });
        else personal[key] = value;
      }
      settings[group] = personal;
      continue;
    }
    const checks = FIELDS[group as (typeof GROUPS)[number]];
    if (checks === undefined) {
      problems.push({ path: group, message: `is not a settings group; use ${[...GROUPS, "personalization"].join(", ")}` });
      continue;
    }
    if (typeof values !== "object" || Array.isArray(values)) {
      problems.push({ path: group, message: "must be an object" });
      continue;
    }
    const kept: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(values as Record<string, unknown>)) {
      if (value === null) continue;
      const check = checks[key];
      if (check === undefined) {
        problems.push({ path: `${group}.${key}`, message: `is not a setting of ${group}; known: ${Object.keys(checks).join(", ")}` });
        continue;
      }
      const problem = check(value);
      if (problem !== null) problems.push({ path: `${group}.${key}`, message: problem });
      else kept[key] = value;
    }
    settings[group] = kept;
  }
  return { settings: settings as MailToFaxSettings, problems };
}

/** Reads settings stored by this module (already checked); a damaged value counts as none. */
export function parseStoredSettings(text: string | null | undefined): MailToFaxSettings {
  if (text === null || text === undefined || text === "") return {};
  try {
    const parsed = JSON.parse(text) as unknown;
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as MailToFaxSettings) : {};
  } catch {
    return {};
  }
}

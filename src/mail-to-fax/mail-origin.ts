/**
 * What a mail-to-fax job keeps of its mail (jobs.mail_origin, JSON): the Message-ID that the
 * report mail answers (In-Reply-To, References: the report lands in the sender's thread), the
 * sender, the subject without its PIN, and the language the report is written in.
 */
import { REPORT_LANGUAGES } from "./settings.ts";

export type ReportLanguage = (typeof REPORT_LANGUAGES)[number];

export interface MailOrigin {
  /** With its angle brackets, as in the header; null when the mail had none. */
  messageId: string | null;
  sender: string;
  subject: string;
  language: ReportLanguage;
}

export function serializeMailOrigin(origin: MailOrigin): string {
  return JSON.stringify(origin);
}

/** Null for a job of the API (no mail_origin) or a damaged value. */
export function parseMailOrigin(text: string | null | undefined): MailOrigin | null {
  if (text === null || text === undefined || text === "") return null;
  try {
    const raw = JSON.parse(text) as Partial<MailOrigin>;
    if (typeof raw.sender !== "string") return null;
    return {
      messageId: typeof raw.messageId === "string" ? raw.messageId : null,
      sender: raw.sender,
      subject: typeof raw.subject === "string" ? raw.subject : "",
      language: REPORT_LANGUAGES.includes(raw.language as ReportLanguage) ? (raw.language as ReportLanguage) : "en",
    };
  } catch {
    return null;
  }
}

/**
 * The report's language from the mail's Content-Language or Accept-Language (RFC 3282; the
 * first tag counts), else `fallback` (the sender's general.language).
 */
export function mailLanguage(contentLanguage: string | null, acceptLanguage: string | null, fallback: ReportLanguage): ReportLanguage {
  for (const header of [contentLanguage, acceptLanguage]) {
    const tag = header?.split(",")[0]?.split(";")[0]?.trim().toLowerCase().split("-")[0];
    if (tag && REPORT_LANGUAGES.includes(tag as ReportLanguage)) return tag as ReportLanguage;
  }
  return fallback;
}

/**
 * Turns a parsed mail into the send request it stands for (the REST API's FaxJobRequest, so
 * that the API's intake checks it the same way, api/fax-job-intake.ts):
 *  - recipients: the fax numbers of the addresses (fax-address.ts);
 *  - documents: the mail's text first (unless the settings fax attachments only, or it is
 *    empty and blank pages are suppressed, or it goes on the cover page), then the
 *    attachments in the order of the mail; S/MIME and PGP signatures and images that belong to
 *    the HTML text (inline, by Content-ID) are left out;
 *  - the cover page (coverSheet.bodyAs COVER_PAGE): the subject and text fill SubjectTitle and
 *    SubjectText, the sender's name FromName, personalization the rest;
 *  - the options of the effective settings (CSID, header, paper, resolution, cost center as
 *    billing code, the report mail to the sender or reportEmail.address);
 *  - beside the request, whether blank pages of the attachments are left out
 *    (fax.suppressBlankPages): a job attribute (jobs.suppress_blank_pages), not a field of the
 *    REST contract, which the caller sets on the job the intake makes.
 * Options in the subject: "PIN=123456" (removed before the subject is used anywhere). Pure.
 */
import type { FaxJobRequest } from "../api/schemas/fax-job-request.ts";
import { MAX_PROPERTY_VALUE_LENGTH } from "../api/schemas/fax-job-request.ts";
import { documentTypeFromName, KNOWN_EXTENSIONS } from "../render/document-types.ts";
import type { EffectiveMailToFaxSettings } from "./settings.ts";
import { refusal, type SmtpRefusal } from "./smtp-replies.ts";

export interface MailAttachment {
  filename: string | null;
  contentType: string;
  content: Buffer;
  /** Part of the HTML text (an inline image referenced by Content-ID). */
  related: boolean;
}

export interface FaxMail {
  subject: string;
  /** The plain text (or the text of the HTML part); null when the mail has none. */
  text: string | null;
  attachments: MailAttachment[];
  /** The display name of the From address, if any. */
  fromName: string | null;
  /** The envelope sender (lower-case). */
  sender: string;
}

/** Extensions for attachments whose name has none, by content type. */
const EXTENSION_BY_TYPE: Record<string, string> = {
  "application/pdf": "pdf",
  "image/tiff": "tif",
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/bmp": "bmp",
  "image/webp": "webp",
  "text/plain": "txt",
  "text/html": "html",
  "application/postscript": "ps",
  "application/msword": "doc",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
  "application/vnd.oasis.opendocument.text": "odt",
  "application/rtf": "rtf",
  "application/vnd.ms-excel": "xls",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
  "application/vnd.oasis.opendocument.spreadsheet": "ods",
  "application/vnd.ms-powerpoint": "ppt",
  "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
};

/** Signatures travel as attachments but are no part of the letter. */
const SIGNATURE_TYPES = new Set(["application/pkcs7-signature", "application/x-pkcs7-signature", "application/pgp-signature", "application/pgp-keys"]);

const PIN_IN_SUBJECT = /(?:^|\s)PIN\s*[=:]\s*(\d{4,12})(?=\s|$)/i;

/** The PIN written in a subject ("PIN=123456", "pin: 123456"), and the subject without it. */
export function extractPin(subject: string): { pin: string | null; subject: string } {
  const m = PIN_IN_SUBJECT.exec(subject);
  if (!m) return { pin: null, subject: subject.trim() };
  return { pin: m[1]!, subject: (subject.slice(0, m.index) + " " + subject.slice(m.index + m[0].length)).replace(/\s+/g, " ").trim() };
}

/** A document name the API accepts ([a-zA-Z0-9._-]), with an extension that says its type. */
export function documentName(attachment: MailAttachment, index: number): string {
  const type = attachment.contentType.toLowerCase().split(";")[0]!.trim();
  let name = (attachment.filename ?? "").normalize("NFKD").replace(/[\u0300-\u036f]/g, "").replace(/[^a-zA-Z0-9._-]+/g, "_").replace(/^[._]+/, "");
  if (name === "") name = `attachment-${index + 1}`;
  if (documentTypeFromName(name) === null && EXTENSION_BY_TYPE[type] !== undefined && !/\.[a-z0-9]{1,5}$/i.test(name)) name = `${name}.${EXTENSION_BY_TYPE[type]}`;
  return name.slice(-200);
}

const cut = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

export function mailToJobRequest(
  mail: FaxMail,
  numbers: readonly string[],
  settings: EffectiveMailToFaxSettings,
): { ok: true; request: FaxJobRequest; suppressBlankPages: boolean } | { ok: false; refusal: SmtpRefusal } {
  const { subject } = extractPin(mail.subject);
  const text = (mail.text ?? "").replace(/\r\n/g, "\n").replace(/\s+$/, "");
  const faxText = !settings.fax.sendAttachmentsOnly && (text.trim() !== "" || !settings.fax.suppressBlankPages);
  const coverPage = faxText && settings.coverSheet.bodyAs === "COVER_PAGE";

  const documents: { name: string; data: string; charset?: string }[] = [];
  if (faxText && !coverPage) documents.push({ name: "mail.txt", data: Buffer.from(text === "" ? "\n" : `${text}\n`, "utf8").toString("base64"), charset: "UTF-8" });
  const parts = mail.attachments.filter((a) => !a.related && !SIGNATURE_TYPES.has(a.contentType.toLowerCase().split(";")[0]!.trim()));
  for (const [i, attachment] of parts.entries()) {
    const name = documentName(attachment, i);
    if (documentTypeFromName(name) === null) {
      return {
        ok: false,
        refusal: refusal("attachment_unsupported", `"${attachment.filename ?? name}" (${attachment.contentType}) is not a kind of document that can be faxed; attach ${KNOWN_EXTENSIONS.map((e) => e.toUpperCase()).filter((e) => ["PDF", "TIF", "PNG", "JPG", "DOCX", "ODT", "XLSX", "TXT"].includes(e)).join(", ")} …`),
      };
    }
    if (attachment.content.length === 0) return { ok: false, refusal: refusal("attachment_unsupported", `"${attachment.filename ?? name}" is empty`) };
    documents.push({ name, data: attachment.content.toString("base64") });
  }
  if (documents.length === 0 && !coverPage) {
    const why = settings.fax.sendAttachmentsOnly
      ? "it has no attachment, and your settings fax only attachments; attach the document to fax"
      : "it has no attachment and no text; attach the document to fax";
    return { ok: false, refusal: refusal("nothing_to_fax", why) };
  }

  const properties: { key: string; value: string }[] = [];
  if (coverPage) {
    const personal = settings.personalization;
    properties.push({ key: "FromName", value: cut(personal.FromName ?? mail.fromName ?? mail.sender, MAX_PROPERTY_VALUE_LENGTH) });
    properties.push({ key: "SubjectTitle", value: cut(subject, MAX_PROPERTY_VALUE_LENGTH) });
    properties.push({ key: "SubjectText", value: cut(text, MAX_PROPERTY_VALUE_LENGTH) });
    for (const [key, value] of Object.entries(personal)) {
      if (key !== "FromName" && properties.length < 50) properties.push({ key: key.slice(0, 100), value: cut(value, MAX_PROPERTY_VALUE_LENGTH) });
    }
  }

  const report = settings.reportEmail;
  const reportTo = report.address ?? mail.sender;
  const request: FaxJobRequest = {
    recipients: numbers.map((number) => ({ number, ...(properties.length > 0 ? { properties } : {}) })),
    documents,
    transportOptions: { csid: settings.fax.csid, isExpress: settings.fax.isExpress, isBlacklistEnabled: settings.fax.blocklist },
    renderingOptions: {
      paperFormat: settings.fax.paperFormat,
      resolution: settings.fax.resolution,
      header: settings.fax.header,
      coverpageTemplate: coverPage ? settings.coverSheet.template : null,
    },
    statusReportOptions: report.enabled
      ? {
          reportMail: {
            successAddress: report.onSuccess ? reportTo : null,
            failureAddress: report.onFailure ? reportTo : null,
            attachedFaxImageMode: report.attachFaxImage,
            attachedFaxImageFormat: report.imageFormat,
          },
        }
      : null,
    reference: { customerDefinedId: null, billingCode: settings.fax.costCenter === null ? null : cut(settings.fax.costCenter, 80), billingInfo: null },
    meta: { customerReference: subject === "" ? null : cut(subject, 256) },
  };
  return { ok: true, request, suppressBlankPages: settings.fax.suppressBlankPages };
}

/**
 * Composes one status mail (a nodemailer message) from a report snapshot: subject, plain-text
 * and HTML parts from the customer's templates or the built-in ones, and the fax image attached
 * as `statusReportOptions.reportMail` asks. Reads no store and sends nothing.
 *
 * Customer templates are checked with parseTemplate when an operator installs them; a template
 * that does not parse here was changed behind that check, and composing throws
 * TemplateSyntaxError naming the part.
 */
import type { AttachedImageMode, ReportSnapshot, SnapshotRecipient } from "../report-snapshot.ts";
import { renderTemplate, TemplateSyntaxError, type TemplateEscape } from "../templates/render-template.ts";
import { defaultStatusMailTemplates, type StatusMailTemplates } from "./default-status-mail-templates.ts";

export type { StatusMailTemplates };
import { recipientsCoveredBy, type StatusMailKind } from "./plan-status-mails.ts";


/** The job's rendered fax image: TIFF-F, CCITT G4, one IFD per page. */
export interface FaxImage {
  tiff: Buffer;
  pages: number;
}

export interface ComposeStatusMailInput {
  snapshot: ReportSnapshot;
  kind: StatusMailKind;
  to: string;
  from: string;
  templates: StatusMailTemplates;
  /** Null when the job has none (rendering failed, or the image was purged). */
  faxImage: FaxImage | null;
  /** Milliseconds since the epoch, for the Date header (default: now). */
  now?: number;
  /**
   * The mail a mail-to-fax job came from (mail-to-fax/mail-origin.ts): the report answers it
   * (In-Reply-To, References), so that it lands in the sender's thread.
   */
  inReplyTo?: string | null;
  /**
   * Language of the built-in templates (`en`, the default, or `de`; a mail-to-fax sender's);
   * a customer's own templates serve every language.
   */
  language?: string;
}

export interface StatusMailAttachment {
  filename: string;
  content: Buffer;
  contentType: string;
}

/** A message for nodemailer's sendMail. */
export interface StatusMailMessage {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  date: Date;
  attachments: StatusMailAttachment[];
  headers: Record<string, string>;
}

/**
 * What templates can use. Snapshot fields keep their names (the contract's push names); the
 * rest is derived so that templates need no logic beyond sections.
 */
interface StatusMailTemplateData {
  kind: StatusMailKind;
  isSuccess: boolean;
  isFailure: boolean;
  jobId: string;
  custNr: string;
  event: string;
  eventTS: string;
  /** Rendered pages of the job, cover page included. */
  pages: number;
  /** The recipients this mail reports on: the delivered ones, or the failed ones. */
  recipients: SnapshotRecipient[];
  allRecipients: SnapshotRecipient[];
  recipientCount: number;
  coveredCount: number;
  deliveredCount: number;
  failedCount: number;
  /** True when this mail reports on only some of the job's recipients. */
  partial: boolean;
  reference: ReportSnapshot["reference"];
  /** meta.customerReference of the request. */
  jobReference: string | null;
  documents: ReportSnapshot["documents"];
  options: ReportSnapshot["options"];
  attachment: { filename: string; contentType: string } | null;
  /** Sentences about the attachment (missing image, no OCR); the built-in templates show them. */
  notes: string[];
}

export async function composeStatusMail(input: ComposeStatusMailInput): Promise<StatusMailMessage> {
  const { snapshot, kind } = input;
  const { attachment, notes } = await attachFaxImage(snapshot, kind, input.faxImage, input.language === "de" ? "de" : "en");
  const covered = recipientsCoveredBy(snapshot, kind);
  const data: StatusMailTemplateData = {
    kind,
    isSuccess: kind === "success",
    isFailure: kind === "failure",
    jobId: snapshot.jobId,
    custNr: snapshot.custNr,
    event: snapshot.event,
    eventTS: snapshot.eventTS,
    pages: snapshot.pages,
    recipients: covered,
    allRecipients: snapshot.recipients,
    recipientCount: snapshot.recipients.length,
    coveredCount: covered.length,
    deliveredCount: recipientsCoveredBy(snapshot, "success").length,
    failedCount: recipientsCoveredBy(snapshot, "failure").length,
    partial: covered.length < snapshot.recipients.length,
    reference: snapshot.reference,
    jobReference: snapshot.options.jobReference,
    documents: snapshot.documents,
    options: snapshot.options,
    attachment: attachment && { filename: attachment.filename, contentType: attachment.contentType },
    notes,
  };
  const render = (part: keyof StatusMailTemplates, escape: TemplateEscape) => {
    const custom = input.templates[part];
    if (custom === undefined) return renderTemplate(defaultStatusMailTemplates(input.language ?? "en")[part], data, escape);
    try {
      return renderTemplate(custom, data, escape);
    } catch (error) {
      if (!(error instanceof TemplateSyntaxError)) throw error;
      throw new TemplateSyntaxError(`The ${part} template of customer ${snapshot.custNr} is invalid: ${error.message}`, error.line, error.column);
    }
  };
  return {
    from: input.from,
    to: input.to,
    // A header is one line: line breaks from values or the template become spaces.
    subject: render("subject", "none").replace(/\s+/g, " ").trim(),
    text: render("text", "none"),
    html: render("html", "html"),
    date: new Date(input.now ?? Date.now()),
    attachments: attachment === null ? [] : [attachment],
    headers: {
      // RFC 3834: keeps auto-responders from answering the report.
      "Auto-Submitted": "auto-generated",
      "X-Faxline-Job-Id": snapshot.jobId,
      "X-Faxline-Report": kind,
      ...(input.inReplyTo ? { "In-Reply-To": input.inReplyTo, References: input.inReplyTo } : {}),
    },
  };
}

function wantsFaxImage(mode: AttachedImageMode, kind: StatusMailKind): boolean {
  switch (mode) {
    case "NEVER":
      return false;
    case "ALWAYS":
      return true;
    case "SUCCESS_ONLY":
      return kind === "success";
    case "FAILURE_ONLY":
      return kind === "failure";
  }
}

async function attachFaxImage(
  snapshot: ReportSnapshot,
  kind: StatusMailKind,
  faxImage: FaxImage | null,
  language: "en" | "de",
): Promise<{ attachment: StatusMailAttachment | null; notes: string[] }> {
  const de = language === "de";
  const options = snapshot.reportMail;
  if (options === null || !wantsFaxImage(options.attachedFaxImageMode, kind)) return { attachment: null, notes: [] };
  if (faxImage === null) {
    return {
      attachment: null,
      notes: [
        de
          ? "Es ist kein Faxbild angehängt: für diesen Auftrag gibt es keines (seine Dokumente konnten nicht aufbereitet werden, oder das Bild ist gelöscht)."
          : "No fax image is attached: none is available for this job (its documents could not be rendered, or the image has been deleted).",
      ],
    };
  }
  if (options.attachedFaxImageFormat === "TIFF") {
    return { attachment: { filename: `fax-${snapshot.jobId}.tif`, content: faxImage.tiff, contentType: "image/tiff" }, notes: [] };
  }
  let pdf: Buffer;
  try {
    // Loaded on first use: sharp and the PDF writer stay out of a node that never attaches a PDF.
    const { faxImageToPdf } = await import("./fax-image-to-pdf.ts");
    pdf = await faxImageToPdf(faxImage.tiff);
  } catch (error) {
    // A status mail without its attachment is worth more than no status mail.
    const why = (error instanceof Error ? error.message : String(error)).replace(/\.$/, "");
    return { attachment: null, notes: [de ? `Es ist kein Faxbild angehängt: es ließ sich nicht in PDF umwandeln (${why}).` : `No fax image is attached: it could not be converted to PDF (${why}).`] };
  }
  const notes =
    options.attachedFaxImageFormat === "PDF_WITH_OCR"
      ? [
          de
            ? "Das Faxbild ist als PDF ohne Textebene angehängt: dieser Dienst erkennt keinen Text, sein Text lässt sich also nicht durchsuchen oder kopieren."
            : "The fax image is attached as a PDF without an OCR text layer: this service does not run text recognition, so its text cannot be searched or copied.",
        ]
      : [];
  return { attachment: { filename: `fax-${snapshot.jobId}.pdf`, content: pdf, contentType: "application/pdf" }, notes };
}

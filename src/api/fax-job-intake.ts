/**
 * Intake of a send request: turns a structurally valid `FaxJobRequest` into a `NewFaxJob`, or
 * throws an `ApiError` (400) that names the field and says what is wrong. Pure apart from the
 * clock it is given: documents are decoded here, references are checked for syntax and obvious
 * forbidden targets (the fetch itself happens in the scheduler, where DNS is checked again).
 */
import { ApiError } from "../errors/api-errors.ts";
import { addIsoDuration, parseIsoDuration } from "../lib/durations.ts";
import { normalizeFaxNumber, type NumberContext } from "../numbers/normalize-number.ts";
import { convertsToPdf, documentTypeFromName } from "../render/document-types.ts";
import { normalizeCharset } from "../render/decode-text.ts";
import { checkReferenceUrl } from "../documents/fetch-reference.ts";
import { parseHeaderTemplate } from "../render/header/header-template.ts";
import { OVERLAY_MODES } from "../render/overlay/overlay-pages.ts";
import { TONE_MODES, type ToneMode } from "../render/fax-image/tone-mode.ts";
import { missingConverterMessage } from "../render/convert/converter-availability.ts";
import { normalizeStatusReportOptions, type StoredStatusReportOptions } from "../notifications/report-snapshot.ts";
import type { FaxJobRequest } from "./schemas/fax-job-request.ts";

export interface DialTarget {
  e164: string;
  dialString: string;
}

export interface NewFaxDocument {
  name: string;
  charset: string | null;
  referenceUrl: string | null;
  content: Buffer | null;
}

export interface NewFaxRecipient {
  number: string;
  alternativeNumbers: string[] | null;
  properties: { key: string; value: string | null }[] | null;
  targets: DialTarget[];
}

export interface NewFaxJob {
  isExpress: boolean;
  blacklistCheck: boolean;
  csid: string | null;
  paperFormat: "A4" | "LETTER";
  resolution: "HIGH" | "LOW";
  header: string | null;
  coverpageTemplate: string | null;
  overlay: { name: string; mode: string } | null;
  /** renderingOptions.toneMode (Faxline extension); null when absent: the account's default tone mode, else AUTO. */
  toneMode: ToneMode | null;
  /**
   * Leave blank document pages out of the fax (jobs.suppress_blank_pages). Not part of the REST
   * contract: intake sets false, and the mail-to-fax intake sets the sender's fax.suppressBlankPages.
   */
  suppressBlankPages: boolean;
  reference: { customerDefinedId: string | null; billingCode: string | null; billingInfo: string | null };
  customerReference: string | null;
  /** Normalised (enums matched, blanks dropped); null when the request gave none. */
  statusReportOptions: StoredStatusReportOptions | null;
  validFrom: number;
  validUntil: number;
  documents: NewFaxDocument[];
  recipients: NewFaxRecipient[];
  requestHash: string | null;
}

export interface IntakeLimits {
  maxRecipients: number;
  maxDocuments: number;
  maxDocumentBytes: number;
  maxJobBytes: number;
  defaultValidity: string;
  /** Longest validity (ISO-8601 duration); config jobs.maxValidity. */
  maxValidity: string;
  allowPrivateReferenceTargets: boolean;
  numberContext: NumberContext;
}

const IMAGE_MODES = ["NEVER", "SUCCESS_ONLY", "FAILURE_ONLY", "ALWAYS"] as const;
const IMAGE_FORMATS = ["TIFF", "PDF", "PDF_WITH_OCR"] as const;
const AUTH_METHODS = ["NONE", "HTTP_BASIC", "HTTP_DIGEST", "OAUTH2"] as const;

/** Matches `value` against `allowed` ignoring letter case, dashes and underscores. */
function matchEnum<T extends string>(value: string | null | undefined, allowed: readonly T[], field: string, aliases: Record<string, T> = {}): T | null {
  if (value === null || value === undefined || value.trim() === "") return null;
  const key = value.trim().toUpperCase().replace(/-/g, "_");
  const hit = allowed.find((a) => a.toUpperCase() === key) ?? aliases[key];
  if (hit === undefined) {
    throw new ApiError("enum_value_invalid", `${field} is "${value}"; use one of ${allowed.join(", ")}`);
  }
  return hit;
}

/** Base64 or base64url, with line breaks and spaces anywhere (MIME style), and up to two "=". */
// ASCII whitespace only: Node's base64 decoder skips it, but not other Unicode spaces.
const BASE64 = /^[A-Za-z0-9+/\-_\t\n\v\f\r ]*(?:=[\t\n\v\f\r ]*){0,2}$/;

/**
 * How many bytes base64 `data` decodes to, or null when it is not base64. Reads the text without
 * copying it: a document of tens of megabytes is checked against the size limits before it is
 * decoded, and then decoded straight into one Buffer (Node's decoder takes both alphabets and
 * skips whitespace).
 */
function base64DecodedLength(data: string): number | null {
  if (!BASE64.test(data)) return null;
  let chars = data.length;
  if (/[\t\n\v\f\r ]/.test(data)) {
    for (let i = 0; i < data.length; i++) {
      const c = data.charCodeAt(i);
      if (c === 0x20 || (c >= 0x09 && c <= 0x0d)) chars--;
    }
  }
  let padding = 0;
  for (let i = data.length - 1; i >= 0 && padding < 3; i--) {
    const c = data.charCodeAt(i);
    if (c === 0x3d) padding++;
    else if (c > 0x20) break;
  }
  const significant = chars - padding;
  if (significant % 4 === 1) return null;
  return Math.floor((significant * 3) / 4);
}



const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(Z|[+-]\d{2}(?::?\d{2})?)$/i;
const ISO_TIMESTAMP_NO_ZONE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}([.,]\d+)?)?)?$/;

function parseZonedTimestamp(text: string): number | null {
  const m = ISO_TIMESTAMP.exec(text.trim());
  if (!m) return null;
  // Date.parse rolls impossible days over ("2030-02-30" becomes 2 March): refuse them instead.
  const [year, month, day] = text.trim().slice(0, 10).split("-").map(Number) as [number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return null;
  let normalized = text.trim().replace(",", ".");
  const zone = m[1]!;
  if (/^[+-]\d{2}$/.test(zone)) normalized += ":00";
  else if (/^[+-]\d{4}$/.test(zone)) normalized = normalized.slice(0, -5) + zone.slice(0, 3) + ":" + zone.slice(3);
  const ms = Date.parse(normalized);
  return Number.isNaN(ms) ? null : ms;
}

/** Whether a computed point in time is a real date (not NaN or Infinity, within ECMAScript's range). */
function inDateRange(ms: number): boolean {
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15;
}

export function resolveJobValidity(
  jobValid: { start?: string | null; end?: string | null } | null | undefined,
  now: number,
  defaultValidity: string,
  maxValidity: string,
): { validFrom: number; validUntil: number } {
  const startText = jobValid?.start?.trim() ?? "";
  const endText = jobValid?.end?.trim() ?? "";
  const max = parseIsoDuration(maxValidity)!;
  let validFrom = now;
  if (startText !== "") {
    const ts = parseZonedTimestamp(startText);
    const duration = ts === null ? parseIsoDuration(startText) : null;
    if (ts !== null) validFrom = Math.max(ts, now);
    else if (duration) validFrom = addIsoDuration(now, duration);
    else if (ISO_TIMESTAMP_NO_ZONE.test(startText)) {
      throw new ApiError("job_valid_invalid", `meta.jobValid.start "${startText}" has no time zone; add "Z" or an offset such as "+01:00"`);
    } else {
      throw new ApiError("job_valid_invalid", `meta.jobValid.start "${startText}" is not an ISO-8601 timestamp with time zone`);
    }
  }
  if (!inDateRange(validFrom) || validFrom > addIsoDuration(now, max)) {
    throw new ApiError("job_valid_invalid", `meta.jobValid.start "${startText}" lies more than ${maxValidity} ahead; a job may start at most ${maxValidity} from now`);
  }
  let validUntil: number;
  if (endText === "") {
    validUntil = addIsoDuration(validFrom, parseIsoDuration(defaultValidity)!);
  } else {
    const ts = parseZonedTimestamp(endText);
    const duration = ts === null ? parseIsoDuration(endText) : null;
    if (ts !== null) validUntil = ts;
    else if (duration) validUntil = addIsoDuration(validFrom, duration);
    else {
      throw new ApiError(
        "job_valid_invalid",
        `meta.jobValid.end "${endText}" is neither an ISO-8601 timestamp with time zone nor a duration such as PT80M`,
      );
    }
  }
  if (!inDateRange(validUntil)) {
    throw new ApiError("job_valid_invalid", `meta.jobValid.end "${endText}" is out of range; a job may stay valid at most ${maxValidity}`);
  }
  if (validUntil <= validFrom) {
    throw new ApiError("job_valid_invalid", "meta.jobValid.end lies before the job becomes valid (start, or now)");
  }
  // Every job ends: a longer validity is cut to the maximum (docs/api.md, config jobs.maxValidity).
  return { validFrom, validUntil: Math.min(validUntil, addIsoDuration(validFrom, max)) };
}

const SIMPLE_EMAIL = /^[^\s@]+@[^\s@]+$/;

/** `requestHash`: the raw body's hash when the request has an Idempotency-Key (api/plugins/json-body.ts), else null. */
export function intakeFaxJob(body: FaxJobRequest, limits: IntakeLimits, now: number, requestHash: string | null = null): NewFaxJob {
  const recipientsIn = body.recipients ?? [];
  if (recipientsIn.length === 0) throw new ApiError("no_recipients", "recipients is empty; a job needs at least one recipient");
  if (recipientsIn.length > limits.maxRecipients) {
    throw new ApiError("too_many_recipients", `The job has ${recipientsIn.length} recipients; at most ${limits.maxRecipients} are allowed`);
  }
  const rendering = body.renderingOptions ?? null;
  const coverpageTemplate = rendering?.coverpageTemplate?.trim() || null;
  const documentsIn = body.documents ?? [];
  if (documentsIn.length === 0 && coverpageTemplate === null) {
    throw new ApiError("no_content", "The job has neither documents nor renderingOptions.coverpageTemplate");
  }
  if (documentsIn.length > limits.maxDocuments) {
    throw new ApiError("too_many_documents", `The job has ${documentsIn.length} documents; at most ${limits.maxDocuments} are allowed`);
  }

  let totalBytes = 0;
  const documents = documentsIn.map((doc, i): NewFaxDocument => {
    const field = `documents[${i}]`;
    const type = documentTypeFromName(doc.name);
    if (type === null) {
      throw new ApiError(
        "document_type_unknown",
        `${field}.name "${doc.name}" has no known document extension (.txt, .pdf, .tif, .png, .jpg, .docx …)`,
      );
    }
    if (convertsToPdf(type)) {
      const missing = missingConverterMessage(type, doc.name);
      if (missing !== null) throw new ApiError("document_type_unavailable", `${field}.name "${doc.name}": ${missing}`);
    }
    let charset: string | null = null;
    if (doc.charset !== null && doc.charset !== undefined && doc.charset.trim() !== "") {
      charset = normalizeCharset(doc.charset);
      if (charset === null) {
        throw new ApiError(
          "charset_unsupported",
          `${field}.charset "${doc.charset}" is not supported; use US-ASCII, UTF-8, UTF-16, UTF-16BE, UTF-16LE, ISO-8859-1 or Windows-1252`,
        );
      }
    }
    const reference = doc.reference?.trim() || null;
    if (reference !== null) {
      const check = checkReferenceUrl(reference, limits.allowPrivateReferenceTargets);
      if (!check.ok) throw new ApiError("document_reference_forbidden", `${field}.reference: ${check.message}`);
      return { name: doc.name, charset, referenceUrl: check.url.href, content: null };
    }
    if (doc.data === null || doc.data === undefined) {
      throw new ApiError("document_data_invalid", `${field} has neither data (base64) nor a reference URL`);
    }
    // Both size limits are checked on the decoded length before anything is decoded.
    const length = base64DecodedLength(doc.data);
    if (length === null) throw new ApiError("document_data_invalid", `${field}.data is not valid base64`);
    if (length === 0) throw new ApiError("document_data_invalid", `${field} ("${doc.name}") is empty: its data holds 0 bytes; send the file's content, base64-encoded`);
    if (length > limits.maxDocumentBytes) {
      throw new ApiError("document_too_large", `${field} is ${length} bytes; at most ${limits.maxDocumentBytes} are allowed`);
    }
    totalBytes += length;
    if (totalBytes > limits.maxJobBytes) {
      throw new ApiError("document_too_large", `The job's documents exceed ${limits.maxJobBytes} bytes in total`);
    }
    return { name: doc.name, charset, referenceUrl: null, content: Buffer.from(doc.data, "base64") };
  });

  const recipients = recipientsIn.map((r, i): NewFaxRecipient => {
    const numbers = [r.number, ...(r.alternativeNumbers ?? [])];
    const targets = numbers.map((n, j) => {
      const field = j === 0 ? `recipients[${i}].number` : `recipients[${i}].alternativeNumbers[${j - 1}]`;
      const result = normalizeFaxNumber(n, limits.numberContext);
      if (!result.ok) throw new ApiError("number_invalid", `${field}: ${result.message}`);
      return { e164: result.e164, dialString: result.dialString };
    });
    return {
      number: r.number,
      alternativeNumbers: r.alternativeNumbers ?? null,
      properties: r.properties ?? null,
      targets,
    };
  });

  const header = rendering?.header ?? null;
  if (header !== null) {
    const parsed = parseHeaderTemplate(header);
    if (!parsed.ok) throw new ApiError("header_invalid", `renderingOptions.header: ${parsed.message}`);
  }
  let overlay: NewFaxJob["overlay"] = null;
  if (rendering?.overlay && rendering.overlay.name.trim() !== "") {
    const mode = matchEnum(rendering.overlay.mode, OVERLAY_MODES, "renderingOptions.overlay.mode") ?? "ALL_PAGES";
    if (mode !== "NO_OVERLAY") overlay = { name: rendering.overlay.name.trim(), mode };
  }

  const report = body.statusReportOptions ?? null;
  if (report?.reportMail) {
    for (const key of ["successAddress", "failureAddress"] as const) {
      const address = report.reportMail[key];
      if (address && address.trim() !== "" && !SIMPLE_EMAIL.test(address.trim())) {
        throw new ApiError("invalid_request", `statusReportOptions.reportMail.${key} "${address}" is not an e-mail address`);
      }
    }
    matchEnum(report.reportMail.attachedFaxImageMode, IMAGE_MODES, "statusReportOptions.reportMail.attachedFaxImageMode");
    matchEnum(report.reportMail.attachedFaxImageFormat, IMAGE_FORMATS, "statusReportOptions.reportMail.attachedFaxImageFormat");
  }
  if (report?.httpStatusPush) {
    matchEnum(report.httpStatusPush.authMethod, AUTH_METHODS, "statusReportOptions.httpStatusPush.authMethod", { OAUTH: "OAUTH2" });
    const target = report.httpStatusPush.targetUrl?.trim();
    if (target) {
      let url: URL | null = null;
      try {
        url = new URL(target);
      } catch {
        url = null;
      }
      if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
        throw new ApiError("invalid_request", `statusReportOptions.httpStatusPush.targetUrl "${target}" is not an http(s) URL`);
      }
    }
  }

  const { validFrom, validUntil } = resolveJobValidity(body.meta?.jobValid, now, limits.defaultValidity, limits.maxValidity);
  const transport = body.transportOptions ?? null;

  return {
    isExpress: transport?.isExpress === true,
    blacklistCheck: transport?.isBlacklistEnabled === true,
    csid: transport?.csid?.trim() || null,
    paperFormat: matchEnum(rendering?.paperFormat, ["A4", "LETTER"] as const, "renderingOptions.paperFormat") ?? "A4",
    resolution: matchEnum(rendering?.resolution, ["HIGH", "LOW"] as const, "renderingOptions.resolution") ?? "HIGH",
    header,
    coverpageTemplate,
    overlay,
    toneMode: matchEnum(rendering?.toneMode, TONE_MODES, "renderingOptions.toneMode") ?? null,
    suppressBlankPages: false,
    reference: {
      customerDefinedId: body.reference?.customerDefinedId ?? null,
      billingCode: body.reference?.billingCode ?? null,
      billingInfo: body.reference?.billingInfo ?? null,
    },
    customerReference: body.meta?.customerReference ?? null,
    statusReportOptions: report === null ? null : normalizeStatusReportOptions(report),
    validFrom,
    validUntil,
    documents,
    recipients,
    requestHash,
  };
}

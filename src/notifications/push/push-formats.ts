/**
 * Push bodies: the contract's default XML `faxJobReport` (REST v1 reference §12), a JSON
 * variant with the same element names, and per-account templates (the "individual layout").
 * Pure: a snapshot in, bytes and a content type out.
 *
 * As the contract says, some elements appear only when the request referenced them:
 * `reportMail` and `httpStatusPush` only when the request gave them, and within `options` only
 * the settings the job has. Per recipient, `sentTS`, `sentToNumber` and `remoteCsid` are left
 * out when no call was made or the far end sent no CSID.
 */
import { renderTemplate } from "../templates/render-template.ts";
import type { ReportSnapshot } from "../report-snapshot.ts";

export const PUSH_FORMATS = ["XML", "JSON", "TEMPLATE"] as const;
export type PushFormat = (typeof PUSH_FORMATS)[number];

export const FAX_JOB_REPORT_NAMESPACE = "http://retarus.com/fax4ba/faxws/3/0";

export interface PushBody {
  body: string;
  contentType: string;
}

/** The report as a plain object with the push layout's names and order (JSON and templates). */
export function faxJobReportObject(s: ReportSnapshot): Record<string, unknown> {
  const report: Record<string, unknown> = { jobId: s.jobId };
  if (s.reportMail !== null) {
    report.reportMail = {
      successAddress: s.reportMail.successAddress ?? "",
      failureAddress: s.reportMail.failureAddress ?? "",
      attachedFaxImageMode: s.reportMail.attachedFaxImageMode,
      attachedFaxImageFormat: s.reportMail.attachedFaxImageFormat,
    };
  }
  if (s.httpStatusPush !== null) report.httpStatusPush = { url: s.httpStatusPush.url, authMethod: s.httpStatusPush.authMethod };
  report.faxRecipient = s.recipients.map((r) => {
    const entry: Record<string, unknown> = { number: r.number, numId: r.numId, status: r.status, reason: r.reason };
    if (r.sentTS !== null) entry.sentTS = r.sentTS;
    entry.durationInSecs = r.durationInSecs;
    if (r.sentToNumber !== null) entry.sentToNumber = r.sentToNumber;
    if (r.remoteCsid !== null) entry.remoteCsid = r.remoteCsid;
    return entry;
  });
  report.document = s.documents.map((d) => ({ name: d.name, isText: d.isText }));
  const o = s.options;
  const options: Record<string, unknown> = { resolution: o.resolution };
  if (o.csid !== null) options.csid = o.csid;
  if (o.header !== null) options.header = o.header;
  options.isBlacklistEnabled = o.isBlacklistEnabled;
  options.isExpress = o.isExpress;
  if (o.overlay !== null) options.overlay = { name: o.overlay.name, mode: o.overlay.mode };
  if (o.coverpageTemplateName !== null) options.coverpageTemplateName = o.coverpageTemplateName;
  if (o.jobReference !== null) options.jobReference = o.jobReference;
  report.options = options;
  report.pages = s.pages;
  return report;
}

export function formatXml(s: ReportSnapshot): PushBody {
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>', `<faxJobReport xmlns="${FAX_JOB_REPORT_NAMESPACE}">`];
  const report = faxJobReportObject(s);
  for (const [name, value] of Object.entries(report)) appendElement(lines, name, value, 1);
  lines.push("</faxJobReport>");
  return { body: `${lines.join("\n")}\n`, contentType: "text/xml; charset=utf-8" };
}

function appendElement(lines: string[], name: string, value: unknown, depth: number): void {
  const indent = "  ".repeat(depth);
  if (Array.isArray(value)) {
    for (const item of value) appendElement(lines, name, item, depth);
  } else if (value !== null && typeof value === "object") {
    lines.push(`${indent}<${name}>`);
    for (const [child, v] of Object.entries(value)) appendElement(lines, child, v, depth + 1);
    lines.push(`${indent}</${name}>`);
  } else {
    lines.push(`${indent}<${name}>${escapeXml(String(value))}</${name}>`);
  }
}

export function escapeXml(text: string): string {
  // Characters XML 1.0 cannot carry at all are dropped; the five specials are escaped.
  return text
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

export function formatJson(s: ReportSnapshot): PushBody {
  return { body: JSON.stringify(faxJobReportObject(s)), contentType: "application/json" };
}

/** Data a push template sees: the JSON layout plus the event and the client's references. */
export function pushTemplateData(s: ReportSnapshot): Record<string, unknown> {
  return { ...faxJobReportObject(s), event: s.event, eventTS: s.eventTS, custNr: s.custNr, reference: s.reference };
}

/** Escaping follows the template's content type: XML, JSON, or HTML-safe text otherwise. */
export function formatTemplate(s: ReportSnapshot, template: { content: string; contentType: string }): PushBody {
  const type = template.contentType.toLowerCase();
  const escape = type.includes("json") ? "json" : type.includes("xml") ? "xml" : type.includes("html") ? "html" : "none";
  return { body: renderTemplate(template.content, pushTemplateData(s), escape), contentType: template.contentType };
}

/**
 * Fax-to-email: the mail a topic's address gets for each reception, with the fax attached as PDF
 * or TIFF (or not at all) and a summary in the body. Pure: the notifier reads the image and
 * sends the message.
 */
import type { ReceivedFaxSummary } from "../../inbound/pull-view.ts";
import { escapeXml } from "../push/push-formats.ts";
import type { StatusMailAttachment, StatusMailMessage } from "./compose-status-mail.ts";

export function composeReceivedFaxMail(input: {
  notice: ReceivedFaxSummary;
  to: string;
  from: string;
  attachment: StatusMailAttachment | null;
  now: number;
}): StatusMailMessage {
  const n = input.notice;
  const sender = n.remoteCsid?.trim() || n.callingNumber || "an unknown sender";
  const pages = `${n.pages} page${n.pages === 1 ? "" : "s"}`;
  const state = n.status === "OK" ? "" : n.status === "PARTIAL" ? " (incomplete: the call ended before the last page)" : " (failed)";
  const subject = `Fax from ${sender} to ${n.calledNumber}: ${pages}${state}`;
  const lines: [string, string][] = [
    ["Received", n.receivedTs],
    ["To", n.calledNumber],
    ["From number", n.callingNumber ?? "withheld"],
    ["Sender's fax id (CSID)", n.remoteCsid ?? "none"],
    ["Pages", String(n.pages)],
    ["Status", n.status],
    ["Duration", `${n.durationInSecs} s`],
    ["Topic", n.topic],
    ["Fax id", n.id],
  ];
  const text = `A fax was received${state}.\n\n${lines.map(([k, v]) => `${k}: ${v}`).join("\n")}\n\n${input.attachment ? `The fax is attached (${input.attachment.filename}).` : "The fax is not attached; fetch it with the pull API."}\n`;
  const html = `<p>A fax was received${escapeXml(state)}.</p><table>${lines.map(([k, v]) => `<tr><th align="left">${escapeXml(k)}</th><td>${escapeXml(v)}</td></tr>`).join("")}</table><p>${input.attachment ? `The fax is attached (${escapeXml(input.attachment.filename)}).` : "The fax is not attached; fetch it with the pull API."}</p>`;
  return {
    from: input.from,
    to: input.to,
    subject,
    text,
    html,
    date: new Date(input.now),
    attachments: input.attachment ? [input.attachment] : [],
    headers: { "Auto-Submitted": "auto-generated", "X-Faxline-Received-Fax-Id": n.id, "X-Faxline-Topic": n.topic },
  };
}

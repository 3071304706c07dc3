/**
 * Which status mails a completed job gets, from its `statusReportOptions.reportMail`: a success
 * mail to successAddress about the recipients that received the fax, and a failure mail to
 * failureAddress about those that did not. A job with both kinds of recipient and both addresses
 * gets both mails, even when the two addresses are the same.
 */
import { PENDING_STATUS } from "../../errors/failure-reasons.ts";
import type { ReportSnapshot, SnapshotRecipient } from "../report-snapshot.ts";

export type StatusMailKind = "success" | "failure";

export interface PlannedStatusMail {
  kind: StatusMailKind;
  to: string;
}

export function planStatusMails(snapshot: ReportSnapshot): PlannedStatusMail[] {
  const mail = snapshot.reportMail;
  if (mail === null) return [];
  const planned: PlannedStatusMail[] = [];
  if (mail.successAddress !== null && recipientsCoveredBy(snapshot, "success").length > 0) {
    planned.push({ kind: "success", to: mail.successAddress });
  }
  if (mail.failureAddress !== null && recipientsCoveredBy(snapshot, "failure").length > 0) {
    planned.push({ kind: "failure", to: mail.failureAddress });
  }
  return planned;
}

/** The recipients a mail of `kind` reports on: delivered ones, or finally failed ones. */
export function recipientsCoveredBy(snapshot: ReportSnapshot, kind: StatusMailKind): SnapshotRecipient[] {
  return snapshot.recipients.filter((r) => (kind === "success" ? r.delivered : !r.delivered && r.status !== PENDING_STATUS));
}

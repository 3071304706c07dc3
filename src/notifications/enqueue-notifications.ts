/**
 * Writes a job's notifications into the outbox, inside the transaction that changes the
 * job's state: either both are stored or neither, so a crash can neither lose a notification
 * nor report a state that was never stored.
 *
 * Targets:
 *  - push: the job's `httpStatusPush.targetUrl`, else the account's default push URL; with the
 *    job's authMethod, principal and credentials. `job.completed` always; `recipient.completed`
 *    and `attempt.failed` only for accounts that opted in (customers.push_events).
 *  - mail: for `job.completed` only, per `reportMail` (email/plan-status-mails.ts), or the
 *    account's `customers.report_mail` when the job gives none.
 */
import type { Kysely } from "kysely";
import type { Database } from "../store/database.ts";
import { insertNotification } from "../store/queries/notifications.ts";
import { planStatusMails } from "./email/plan-status-mails.ts";
import { JOB_COMPLETED, type NotificationEvent } from "./events.ts";
import { normalizeStatusReportOptions, parseStoredStatusReportOptions, takeReportSnapshot, type ReportSnapshot } from "./report-snapshot.ts";

/** The JSON stored in notifications.payload. */
export interface NotificationPayload {
  snapshot: ReportSnapshot;
  /** For mails: which of the job's status mails this is. */
  mailKind?: "success" | "failure";
}

/** Whom a push URL's concurrency limit counts against: its origin. */
export function receiverOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

export const MAIL_RECEIVER = "smtp";

/** Returns how many notifications were written. */
export async function enqueueJobNotifications(trx: Kysely<Database>, jobId: string, event: NotificationEvent, now: number): Promise<number> {
  const job = await trx.selectFrom("jobs").select(["cust_nr", "datacenter", "status_report_options"]).where("id", "=", jobId).executeTakeFirst();
  if (!job) return 0;
  const customer = await trx.selectFrom("customers").select(["push_url", "push_events", "report_mail"]).where("cust_nr", "=", job.cust_nr).executeTakeFirst();
  const options = parseStoredStatusReportOptions(job.status_report_options);
  // The account's e-mail report (console settings) when the job asks for none itself.
  const accountMail = options.reportMail === null && customer?.report_mail ? normalizeStatusReportOptions({ reportMail: JSON.parse(customer.report_mail) }).reportMail : null;
  const reportMail = options.reportMail ?? accountMail;
  const pushUrl = options.httpStatusPush?.targetUrl ?? customer?.push_url ?? null;
  const optedIn = customer?.push_events ? (JSON.parse(customer.push_events) as string[]) : [];
  const wantsPush = pushUrl !== null && (event === JOB_COMPLETED || optedIn.includes(event));
  const wantsMail = event === JOB_COMPLETED && reportMail !== null;
  if (!wantsPush && !wantsMail) return 0;

  const snapshot = await takeReportSnapshot(trx, jobId, event, now);
  if (snapshot.reportMail === null && accountMail !== null) snapshot.reportMail = accountMail;
  const base = { jobId, custNr: job.cust_nr, datacenter: job.datacenter, event };
  let written = 0;
  if (wantsPush) {
    const push = options.httpStatusPush;
    const auth = push === null ? null : JSON.stringify({ method: push.authMethod, principal: push.principal, credentials: push.credentials });
    const payload: NotificationPayload = { snapshot };
    await insertNotification(trx, { ...base, channel: "http", target: pushUrl, receiver: receiverOf(pushUrl), auth, payload: JSON.stringify(payload) }, now);
    written += 1;
  }
  if (wantsMail) {
    for (const mail of planStatusMails(snapshot)) {
      const payload: NotificationPayload = { snapshot, mailKind: mail.kind };
      await insertNotification(trx, { ...base, channel: "email", target: mail.to, receiver: MAIL_RECEIVER, auth: null, payload: JSON.stringify(payload) }, now);
      written += 1;
    }
  }
  return written;
}

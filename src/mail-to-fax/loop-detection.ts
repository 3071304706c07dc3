/**
 * Mail that must never become a fax, seen in its headers (docs/mail-to-fax.md, "Loops"):
 *  - Faxline's own mail: a status report (X-Faxline-Report) or a received fax
 *    (X-Faxline-Received-Fax-Id) sent back to a fax address would fax the report and report
 *    the fax, for ever;
 *  - any automatic mail (RFC 3834 Auto-Submitted other than "no"; Precedence bulk, junk or
 *    auto_reply; a delivery status notification, multipart/report), for the same reason with
 *    other systems' auto-replies;
 *  - a mail that has passed more relays than any real path has (Received headers): a loop
 *    between mail servers.
 * Pure: headers in, a refusal or null out.
 */
import { refusal, type SmtpRefusal } from "./smtp-replies.ts";

/** More Received headers than this is a loop (Postfix and Exim refuse at 50 and 30 hops). */
export const MAX_RECEIVED_HEADERS = 30;

/** `headers`: lower-case name → the values of all headers of that name, in order. */
export function detectLoop(headers: ReadonlyMap<string, readonly string[]>, contentType: string | null): SmtpRefusal | null {
  const first = (name: string) => headers.get(name)?.[0]?.trim() ?? null;
  if (headers.has("x-faxline-report") || headers.has("x-faxline-received-fax-id")) {
    return refusal("automatic_mail", "this is a report of the fax service itself, sent back to a fax address");
  }
  const autoSubmitted = first("auto-submitted");
  if (autoSubmitted !== null && autoSubmitted.toLowerCase().split(/[;\s]/)[0] !== "no") {
    return refusal("automatic_mail", `the mail says it was sent automatically (Auto-Submitted: ${autoSubmitted.slice(0, 40)})`);
  }
  const precedence = first("precedence")?.toLowerCase() ?? null;
  if (precedence !== null && ["bulk", "junk", "auto_reply", "list"].includes(precedence)) {
    return refusal("automatic_mail", `the mail says it was sent automatically (Precedence: ${precedence})`);
  }
  if (contentType !== null && contentType.toLowerCase().startsWith("multipart/report")) {
    return refusal("automatic_mail", "the mail is a delivery report");
  }
  const hops = headers.get("received")?.length ?? 0;
  if (hops > MAX_RECEIVED_HEADERS) return refusal("mail_loop", `the mail has passed ${hops} mail servers`);
  return null;
}

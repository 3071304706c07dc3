/**
 * Every answer the mail-to-fax listener gives to refuse a mail, in one table: the SMTP reply
 * code, the enhanced status code (RFC 3463) and a text a person reads in the bounce their mail
 * server sends back. docs/mail-to-fax.md lists them (a test checks that it names each one).
 * 5xx: the mail is refused for good; 4xx: the sending server tries again later.
 */

export const SMTP_REPLIES = {
  null_sender: { code: 550, status: "5.7.1", text: "Mail with an empty sender (a bounce or an automatic reply) is not faxed" },
  not_fax_domain: { code: 550, status: "5.7.1", text: "Relaying denied" },
  not_fax_number: { code: 550, status: "5.1.1", text: "Not a fax number" },
  too_many_recipients: { code: 452, status: "4.5.3", text: "Too many recipients in one mail; send the rest in another mail" },
  sender_unknown: { code: 550, status: "5.7.1", text: "The sender may not send faxes through this service" },
  sender_inactive: { code: 550, status: "5.7.1", text: "The sender's mail-to-fax access is switched off" },
  from_mismatch: { code: 550, status: "5.7.1", text: "The From address of the mail differs from its sender" },
  not_authenticated: { code: 550, status: "5.7.23", text: "The sender's domain is allowed, but this mail is not confirmed to come from it" },
  untrusted_client: { code: 550, status: "5.7.1", text: "This server takes mail only from the organisation's mail servers" },
  pin_locked: { code: 450, status: "4.7.1", text: "Too many wrong PINs from this sender; try again later" },
  message_id_reused: { code: 554, status: "5.6.0", text: "A different mail with this Message-ID was already faxed" },
  pin_wrong: { code: 550, status: "5.7.8", text: "The PIN in the subject is wrong or missing" },
  message_too_big: { code: 552, status: "5.3.4", text: "The mail is too big to fax" },
  malformed_mime: { code: 554, status: "5.6.0", text: "The mail cannot be read" },
  nothing_to_fax: { code: 554, status: "5.6.0", text: "The mail has nothing to fax" },
  attachment_unsupported: { code: 554, status: "5.6.1", text: "An attachment cannot be faxed" },
  job_refused: { code: 554, status: "5.6.0", text: "The fax cannot be sent as written" },
  mail_loop: { code: 554, status: "5.4.6", text: "Mail loop detected" },
  automatic_mail: { code: 550, status: "5.7.1", text: "Automatic mail (a report or an auto-reply) is not faxed" },
  store_unavailable: { code: 451, status: "4.3.0", text: "The fax service cannot store mail right now; try again later" },
  internal_error: { code: 451, status: "4.3.0", text: "The fax service failed to process the mail; try again later" },
} as const;

export type SmtpReplyKind = keyof typeof SMTP_REPLIES;

/** A refusal: the reply of `kind` with a detail that says what exactly is wrong. */
export interface SmtpRefusal {
  kind: SmtpReplyKind;
  detail: string | null;
}

export function refusal(kind: SmtpReplyKind, detail: string | null = null): SmtpRefusal {
  return { kind, detail };
}

/** The text after the code: "5.7.1 The sender may not …: <detail>". One line. */
export function refusalText(r: SmtpRefusal): string {
  const reply = SMTP_REPLIES[r.kind];
  const detail = r.detail === null ? "" : `: ${r.detail}`;
  return `${reply.status} ${reply.text}${detail}`.replace(/[\r\n]+/g, " ");
}

/** An Error as smtp-server answers it: responseCode and the text. */
export function refusalError(r: SmtpRefusal): Error & { responseCode: number } {
  return Object.assign(new Error(refusalText(r)), { responseCode: SMTP_REPLIES[r.kind].code });
}

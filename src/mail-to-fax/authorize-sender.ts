/**
 * Who may fax by mail (docs/mail-to-fax.md, "Who may send"). Two steps, both pure: the store
 * look-ups and the PIN's hash check are the caller's.
 *
 * At RCPT (authorizeEnvelopeSender), from the envelope's sender alone: a mail-to-fax user of a
 * customer that sends by mail, or an address of a domain a customer allows. Anyone else is
 * refused before the mail is transferred.
 *
 * At the end of DATA (authorizeMail), with the mail in hand:
 *  - the From header must name the envelope's sender (the address authorised at RCPT);
 *  - when the connection came from a trusted relay whose Authentication-Results are present,
 *    a DMARC fail for the sender's domain refuses the mail, users included;
 *  - a user with a PIN must give it in the subject;
 *  - anyone else (a user without PIN, a sender authorised by domain) needs the relay's
 *    confirmation that the mail is from the sender's domain (DMARC, DKIM or SPF pass for it),
 *    or the domain's PIN in the subject; users without PIN are taken on their address alone only
 *    with mailToFax.usersWithoutProof.
 */
import { confirmsDomain, type AuthVerdicts } from "./authentication-results.ts";
import { refusal, type SmtpRefusal } from "./smtp-replies.ts";

export interface SenderRecord {
  /** How the sender is known: as a user, or by a customer's allowed domain. */
  via: "user" | "domain";
  custNr: string;
  /** A user's profile (null: the customer's settings only); null for a domain sender. */
  profile: string | null;
  /** false: the user, or its customer, is switched off. */
  active: boolean;
  /** Whether a PIN is set (the user's, or the domain's). */
  hasPin: boolean;
}

export type Authorization = { ok: true; sender: SenderRecord } | { ok: false; refusal: SmtpRefusal };

/** At RCPT: the records found for the envelope sender (its user row, else its domain's). */
export function authorizeEnvelopeSender(sender: string, record: SenderRecord | null): Authorization {
  if (sender === "") return { ok: false, refusal: refusal("null_sender") };
  if (record === null) {
    return { ok: false, refusal: refusal("sender_unknown", `${sender} is neither a mail-to-fax user nor of a domain a customer allows; ask your fax administrator to add it`) };
  }
  if (!record.active) return { ok: false, refusal: refusal("sender_inactive", `${sender} is switched off; ask your fax administrator`) };
  return { ok: true, sender: record };
}

export interface MailFacts {
  /** The envelope's sender, lower-case. */
  envelopeSender: string;
  /** The addresses of the From header, lower-case. */
  fromAddresses: string[];
  /** The trusted relay's verdicts; null when the connection came from no trusted relay or it wrote none. */
  verdicts: AuthVerdicts | null;
  /** Whether the subject carried a PIN, and whether it was the right one (checked by the caller). */
  pin: "none" | "right" | "wrong";
  /** mailToFax.usersWithoutProof: a user without PIN may send on its address alone. */
  usersWithoutProof: boolean;
}

export function authorizeMail(sender: SenderRecord, facts: MailFacts): Authorization {
  if (facts.fromAddresses.length !== 1 || facts.fromAddresses[0] !== facts.envelopeSender) {
    const shown = facts.fromAddresses.length === 0 ? "no From address" : `From ${facts.fromAddresses.join(", ")}`;
    return { ok: false, refusal: refusal("from_mismatch", `the mail has ${shown} but was sent by ${facts.envelopeSender}; send it from the address you fax with`) };
  }
  const domain = facts.envelopeSender.slice(facts.envelopeSender.lastIndexOf("@") + 1);
  const check = facts.verdicts === null ? null : confirmsDomain(facts.verdicts, domain);
  if (check !== null && facts.verdicts?.dmarc?.result === "fail") {
    return { ok: false, refusal: refusal("not_authenticated", `${check.why}; the mail may not be from ${facts.envelopeSender}`) };
  }
  if (facts.pin === "wrong" || (sender.via === "user" && sender.hasPin && facts.pin !== "right")) {
    return { ok: false, refusal: refusal("pin_wrong", 'write the PIN into the subject as "PIN=123456"') };
  }
  if (facts.pin === "right") return { ok: true, sender };
  // A user with its PIN passed above. Anyone else needs the relay's confirmation that the mail
  // is from the sender's domain: an address alone is forged in one line. Only a node told so
  // (usersWithoutProof, for a listener that only the organisation's own server can reach)
  // takes users without PIN on their address.
  if (sender.via === "user" && facts.usersWithoutProof) return { ok: true, sender };
  if (check?.confirmed) return { ok: true, sender };
  const why = check === null ? `the mail carries no SPF, DKIM or DMARC results of a trusted relay for ${domain}` : check.why;
  const hint = sender.hasPin ? (sender.via === "domain" ? ', or write the domain\'s PIN into the subject as "PIN=123456"' : ', or write your PIN into the subject as "PIN=123456"') : "";
  return { ok: false, refusal: refusal("not_authenticated", `${why}; send through your organisation's mail server${hint}`) };
}

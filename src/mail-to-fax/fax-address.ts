/**
 * The fax addresses a mail is sent to: `<number>@<fax domain>`, the form the provider's and
 * every other mail-to-fax service use (the reference's §1.4: the provider's own forms are not
 * public). The local part is the fax number as a person writes it:
 *
 *   +4930123456@fax.example.com        international with "+"
 *   004930123456@fax.example.com       international with the prefix
 *   030123456@fax.example.com          national (the node's region: node.region)
 *   +49-30-123456@…, +49.30.123456@…, (030)123456@…   with separators - . / ( ) that are dropped
 *
 * A user's `dialing.removePrefix` (an outside-line "0" typed out of habit) is removed before
 * the number is read; that is the caller's step (removeDialPrefix), since it depends on the
 * sender. Pure: no store, no DNS.
 */
import { normalizeFaxNumber, type NumberContext } from "../numbers/normalize-number.ts";

export type FaxAddress =
  | { ok: true; number: string; e164: string; dialString: string }
  | { ok: false; kind: "domain"; message: string }
  | { ok: false; kind: "number"; message: string };

/** Splits an address at its last "@"; the domain lower-cased. Null when it is no address. */
export function splitAddress(address: string): { local: string; domain: string } | null {
  const at = address.lastIndexOf("@");
  if (at <= 0 || at === address.length - 1) return null;
  return { local: address.slice(0, at), domain: address.slice(at + 1).toLowerCase().replace(/\.$/, "") };
}

/** Whether `domain` is one of the fax domains (lower-case, no trailing dot). */
export function isFaxDomain(domain: string, faxDomains: readonly string[]): boolean {
  return faxDomains.some((d) => d.toLowerCase() === domain);
}

/** The number written in a local part: separators dropped, "+" kept. */
export function numberOfLocalPart(local: string): string {
  return local.trim().replace(/^"|"$/g, "").replace(/[-./()\s]/g, "");
}

/** Removes `prefix` (digits) from the start of a number written without "+". */
export function removeDialPrefix(number: string, prefix: string): string {
  if (prefix === "" || number.startsWith("+") || !number.startsWith(prefix)) return number;
  const rest = number.slice(prefix.length);
  return rest === "" ? number : rest;
}

export function readFaxAddress(address: string, faxDomains: readonly string[], ctx: NumberContext, removePrefix = ""): FaxAddress {
  const parts = splitAddress(address);
  if (parts === null) return { ok: false, kind: "number", message: `"${address}" is not an e-mail address` };
  if (!isFaxDomain(parts.domain, faxDomains)) {
    return {
      ok: false,
      kind: "domain",
      message: `this server takes mail only for fax numbers at ${faxDomains.join(", ")} (number@${faxDomains[0] ?? "fax domain"}), not for ${parts.domain}`,
    };
  }
  const written = numberOfLocalPart(parts.local);
  if (!/^\+?[0-9]+$/.test(written)) {
    return { ok: false, kind: "number", message: `"${parts.local}" is not a fax number; write the number before the @, e.g. +4930123456@${parts.domain}` };
  }
  const number = removeDialPrefix(written, removePrefix);
  const result = normalizeFaxNumber(number, ctx);
  if (!result.ok) return { ok: false, kind: "number", message: `${parts.local}@${parts.domain}: ${result.message}` };
  return { ok: true, number, e164: result.e164, dialString: result.dialString };
}

/**
 * Reads the SPF, DKIM and DMARC verdicts of the receiving relay from its
 * `Authentication-Results` header (RFC 8601):
 *
 *   Authentication-Results: mx.example.net; spf=pass smtp.mailfrom=example.com;
 *     dkim=pass (2048-bit key) header.d=example.com header.s=s1; dmarc=pass header.from=example.com
 *
 * Only a header whose authserv-id is the trusted relay's (config mailToFax.authservId) counts,
 * and of those the topmost, the one the relay added last: a header a sender wrote himself
 * carries another id, or sits below (RFC 8601 §5 has relays remove headers with their own id).
 * Whether the connection came from a trusted relay at all is the caller's check. Pure.
 */

export interface AuthVerdicts {
  /** The relay's verdict per method, with the domain it was about. */
  spf: { result: string; domain: string | null } | null;
  dkim: { result: string; domain: string | null }[];
  dmarc: { result: string; domain: string | null } | null;
}

/** Removes RFC 5322 comments "( … )", nested ones too. */
function stripComments(text: string): string {
  let out = "";
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\\" && i + 1 < text.length) {
      if (depth === 0) out += c + text[i + 1];
      i++;
      continue;
    }
    if (c === '"' && depth === 0) quoted = !quoted;
    if (!quoted && c === "(") depth++;
    else if (!quoted && c === ")" && depth > 0) depth--;
    else if (depth === 0) out += c;
  }
  return out;
}

const domainOf = (value: string | undefined): string | null => {
  if (value === undefined) return null;
  const v = value.replace(/^"|"$/g, "").toLowerCase();
  const at = v.lastIndexOf("@");
  return at >= 0 ? v.slice(at + 1) : v;
};

/** Parses one header value; null when it is not of the form "authserv-id; method=result …". */
export function parseAuthenticationResults(value: string): { authservId: string; verdicts: AuthVerdicts } | null {
  const clean = stripComments(value.replace(/\r?\n[ \t]+/g, " "));
  const parts = clean.split(";").map((p) => p.trim());
  const id = parts.shift()?.split(/\s+/)[0]?.toLowerCase();
  if (!id) return null;
  const verdicts: AuthVerdicts = { spf: null, dkim: [], dmarc: null };
  for (const part of parts) {
    const tokens = part.split(/\s+/).filter((t) => t !== "");
    const head = tokens.shift();
    if (head === undefined || !head.includes("=")) continue;
    const [method, result] = head.toLowerCase().split("=", 2) as [string, string];
    const props = new Map<string, string>();
    for (const token of tokens) {
      const eq = token.indexOf("=");
      if (eq > 0) props.set(token.slice(0, eq).toLowerCase(), token.slice(eq + 1));
    }
    if (method === "spf") verdicts.spf ??= { result, domain: domainOf(props.get("smtp.mailfrom") ?? props.get("smtp.helo")) };
    else if (method === "dkim") verdicts.dkim.push({ result, domain: domainOf(props.get("header.d") ?? props.get("header.i")) });
    else if (method === "dmarc") verdicts.dmarc ??= { result, domain: domainOf(props.get("header.from")) };
  }
  return { authservId: id, verdicts };
}

/** The verdicts of the topmost header with the trusted authserv-id; null when there is none. */
export function trustedVerdicts(headerValues: readonly string[], authservId: string): AuthVerdicts | null {
  if (authservId === "") return null;
  for (const value of headerValues) {
    const parsed = parseAuthenticationResults(value);
    if (parsed !== null && parsed.authservId === authservId.toLowerCase()) return parsed.verdicts;
  }
  return null;
}

/**
 * Whether the verdicts confirm that the mail comes from `domain` (the sender's): DMARC passed
 * for it (its header.from naming that domain; a pass without it confirms nothing), or DKIM passed with its signature, or SPF passed for it. A DMARC fail outweighs the
 * rest (the domain's owner says such mail is not his).
 */
export function confirmsDomain(verdicts: AuthVerdicts, domain: string): { confirmed: boolean; why: string } {
  const d = domain.toLowerCase();
  if (verdicts.dmarc !== null && verdicts.dmarc.result === "fail") return { confirmed: false, why: `the relay's DMARC check failed for ${verdicts.dmarc.domain ?? d}` };
  if (verdicts.dmarc?.result === "pass" && verdicts.dmarc.domain === d) return { confirmed: true, why: "DMARC passed" };
  if (verdicts.dkim.some((v) => v.result === "pass" && v.domain === d)) return { confirmed: true, why: "DKIM passed" };
  if (verdicts.spf?.result === "pass" && verdicts.spf.domain === d) return { confirmed: true, why: "SPF passed" };
  const seen = [verdicts.spf && `spf=${verdicts.spf.result}`, ...verdicts.dkim.map((v) => `dkim=${v.result}${v.domain ? ` (${v.domain})` : ""}`), verdicts.dmarc && `dmarc=${verdicts.dmarc.result}`].filter(Boolean);
  return { confirmed: false, why: seen.length === 0 ? `the relay checked neither SPF, DKIM nor DMARC for ${d}` : `the relay's checks do not confirm ${d} (${seen.join(", ")})` };
}

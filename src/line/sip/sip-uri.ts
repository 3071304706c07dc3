/**
 * SIP URIs and name-addr values (RFC 3261 §19.1, §25.1): parse and format, typed.
 *
 * Covers what a trunk and its peers send: `sip:` and `sips:`, a user part (a telephone number or
 * a name, percent-escapes kept as they are), a host name, IPv4 or bracketed IPv6 address, a port,
 * URI parameters (`;transport=tcp`, `;lr`) and a header part (kept raw). Display names may be
 * quoted or bare tokens. `tel:` URIs are not accepted as a request target.
 */

export class SipParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SipParseError";
  }
}

export interface SipUri {
  scheme: "sip" | "sips";
  /** The user part as written (a number such as "+4930123456", or a name); null when absent. */
  user: string | null;
  /** Host name, IPv4 address or IPv6 address without brackets. */
  host: string;
  port: number | null;
  /** URI parameters in order; a parameter without value (`;lr`) maps to null. Names are lower-case. */
  params: Map<string, string | null>;
  /** The `?…` header part without the `?`, or null. */
  headers: string | null;
}

/**
 * Parses `sip:user@host:port;params?headers`.
 *
 * ### Examples
 * `parseSipUri("sip:+4930123@trunk.example:5080;transport=tcp")` →
 * `{ scheme: "sip", user: "+4930123", host: "trunk.example", port: 5080, params: {transport: "tcp"} }`
 */
export function parseSipUri(text: string): SipUri {
  const m = /^(sips?):(.*)$/i.exec(text.trim());
  if (m === null) throw new SipParseError(`not a SIP URI: ${JSON.stringify(text)}`);
  const scheme = m[1]!.toLowerCase() as "sip" | "sips";
  let rest = m[2]!;
  let headers: string | null = null;
  const q = rest.indexOf("?");
  if (q !== -1) {
    headers = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  let user: string | null = null;
  const at = rest.lastIndexOf("@");
  if (at !== -1) {
    user = rest.slice(0, at);
    rest = rest.slice(at + 1);
    // A password (user:password@) is deprecated (RFC 3261 §19.1.1); keep only the user.
    const colon = user.indexOf(":");
    if (colon !== -1) user = user.slice(0, colon);
  }
  const semi = rest.indexOf(";");
  const hostPort = semi === -1 ? rest : rest.slice(0, semi);
  const paramText = semi === -1 ? "" : rest.slice(semi + 1);
  let host: string;
  let portText: string | null = null;
  if (hostPort.startsWith("[")) {
    const close = hostPort.indexOf("]");
    if (close === -1) throw new SipParseError(`unterminated IPv6 reference in ${JSON.stringify(text)}`);
    host = hostPort.slice(1, close);
    const after = hostPort.slice(close + 1);
    if (after.startsWith(":")) portText = after.slice(1);
    else if (after !== "") throw new SipParseError(`junk after host in ${JSON.stringify(text)}`);
  } else {
    const colon = hostPort.indexOf(":");
    host = colon === -1 ? hostPort : hostPort.slice(0, colon);
    if (colon !== -1) portText = hostPort.slice(colon + 1);
  }
  if (host === "" || !/^[A-Za-z0-9.\-:_]+$/.test(host)) throw new SipParseError(`bad host in ${JSON.stringify(text)}`);
  let port: number | null = null;
  if (portText !== null) {
    if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535 || Number(portText) === 0) throw new SipParseError(`bad port in ${JSON.stringify(text)}`);
    port = Number(portText);
  }
  return { scheme, user, host, port, params: parseParams(paramText, ";"), headers };
}

export function formatSipUri(uri: SipUri): string {
  const host = uri.host.includes(":") ? `[${uri.host}]` : uri.host;
  let s = `${uri.scheme}:${uri.user !== null ? `${uri.user}@` : ""}${host}${uri.port !== null ? `:${uri.port}` : ""}`;
  for (const [name, value] of uri.params) s += value === null ? `;${name}` : `;${name}=${value}`;
  if (uri.headers !== null) s += `?${uri.headers}`;
  return s;
}

/** A From/To/Contact/Route value: `"Name" <sip:…>;tag=…`. */
export interface NameAddr {
  displayName: string | null;
  /** The URI as written (between the angle brackets, when there are any). */
  uri: string;
  /** Header parameters after the URI (`tag`, `expires`, `lr` for bare Route values); names lower-case. */
  params: Map<string, string | null>;
}

export function parseNameAddr(text: string): NameAddr {
  const s = text.trim();
  let displayName: string | null = null;
  let uri: string;
  let rest: string;
  const lt = findUnquoted(s, "<");
  if (lt !== -1) {
    const gt = s.indexOf(">", lt);
    if (gt === -1) throw new SipParseError(`unterminated <…> in ${JSON.stringify(text)}`);
    const name = s.slice(0, lt).trim();
    if (name !== "") displayName = name.startsWith('"') ? unquote(name) : name;
    uri = s.slice(lt + 1, gt).trim();
    rest = s.slice(gt + 1).trim();
  } else {
    // addr-spec without brackets: parameters after the URI belong to the header (RFC 3261 §20.10).
    const semi = s.indexOf(";");
    uri = semi === -1 ? s : s.slice(0, semi);
    rest = semi === -1 ? "" : s.slice(semi);
  }
  if (rest !== "" && !rest.startsWith(";")) throw new SipParseError(`junk after URI in ${JSON.stringify(text)}`);
  return { displayName, uri, params: parseParams(rest.replace(/^;/, ""), ";") };
}

/** `a=1;b;c="x y"` → Map; names lower-cased, quoted values unquoted. */
export function parseParams(text: string, separator: ";" | ","): Map<string, string | null> {
  const params = new Map<string, string | null>();
  for (const part of splitOutsideQuotes(text, separator)) {
    const p = part.trim();
    if (p === "") continue;
    const eq = p.indexOf("=");
    if (eq === -1) params.set(p.toLowerCase(), null);
    else {
      const v = p.slice(eq + 1).trim();
      params.set(p.slice(0, eq).trim().toLowerCase(), v.startsWith('"') ? unquote(v) : v);
    }
  }
  return params;
}

/** Splits on `separator` outside double quotes and angle brackets. */
export function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === "\\") i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === "<") depth++;
    else if (c === ">") depth = Math.max(0, depth - 1);
    else if (c === separator && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

function findUnquoted(text: string, ch: string): number {
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === "\\") i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === ch) return i;
  }
  return -1;
}

function unquote(text: string): string {
  const t = text.trim();
  if (!t.startsWith('"') || !t.endsWith('"') || t.length < 2) return t;
  return t.slice(1, -1).replace(/\\(.)/g, "$1");
}

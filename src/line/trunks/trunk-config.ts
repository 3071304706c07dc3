/**
 * Trunks: the SIP accounts at carriers that real faxes leave through, read from the YAML file
 * that `lines.trunksFile` names (docs/trunks.md). A trunk list does not fit the flat key model
 * of config/schema.ts (one typed value per dotted key, each with its own environment
 * variable), so it lives in a file of its own, read and checked by loadConfig at start like
 * every other setting: a bad trunk stops the node with a ConfigError that names the file, the
 * trunk, the field, what is wrong and what would be right.
 *
 * The file:
 *
 *   trunks:
 *     - name: carrier-a
 *       proxy: sip.carrier-a.example:5060
 *       username: "4989998877"
 *       passwordEnv: FAXLINE_TRUNK_CARRIER_A_PASSWORD
 *       callerNumber: "+4989998877"
 *       routes: ["+49", "+43"]
 *
 * Every field is listed in TRUNK_FIELDS with its default; docs/trunks.md describes the same
 * fields (test/unit/dial-plan.test.ts checks that it mentions each).
 */
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { parseYaml } from "../../lib/yaml.ts";
import { parseDurationMs } from "../../lib/durations.ts";
import { ConfigError } from "../../config/config-error.ts";

export const SIP_TRANSPORTS = ["udp", "tcp", "tls"] as const;
export type SipTransport = (typeof SIP_TRANSPORTS)[number];

/**
 * How a trunk writes the E.164 number it dials, before `strip` and `prefix`:
 *  - e164: "+4989123456";
 *  - international: the international prefix and the digits, "004989123456" (the contract's
 *    sentToNumber form; "011…" with internationalPrefix "011");
 *  - digits: country code and number without prefix, "4989123456";
 *  - national: numbers of the node's own country in national form with the trunk prefix,
 *    "089123456" (DE) or "12125551234" (US); other countries as `international`.
 */
export const DIAL_FORMATS = ["e164", "international", "digits", "national"] as const;
export type DialFormat = (typeof DIAL_FORMATS)[number];

export interface HostPort {
  host: string;
  port: number;
  /**
   * False when the text named no port (`port` is then the transport's default): a host name is
   * then looked up by DNS SRV first (RFC 3263). (Default: true)
   */
  portGiven?: boolean;
}

export interface TrunkDialRule {
  format: DialFormat;
  /** Digits that introduce an international number for `international` and `national`; null: the node region's ("00" DE, "011" US). */
  internationalPrefix: string | null;
  /** Removed from the start of the formatted number when it starts with it ("" none). */
  strip: string;
  /** Put in front of the number after `strip` ("" none): an outside-line digit or a carrier's routing prefix. */
  prefix: string;
}

export interface TrunkConfig {
  name: string;
  /** Where every request of this trunk is sent (outbound proxy). */
  proxy: HostPort;
  /** Where REGISTER goes; null: the trunk does not register (IP-authenticated, or digest per INVITE). */
  registrar: HostPort | null;
  /** Expiry asked for in REGISTER, ms. */
  registerExpiresMs: number;
  /** SIP domain: host part of the request URI, To and From. */
  domain: string;
  /** The transport the trunk names, or "auto" when it names none: DNS chooses (NAPTR, then SRV; RFC 3263 §4.1, line/sip/resolve-targets.ts). */
  transport: SipTransport | "auto";
  /** Digest user name; "" when the carrier authenticates by address. */
  username: string;
  /** Digest password, resolved from `password` or `passwordEnv`; "" when none. Never log a trunk as a whole. */
  password: string;
  /** The environment variable the password came from, for messages; null when given inline or absent. */
  passwordEnv: string | null;
  /** User part of From (and P-Asserted-Identity): the number calls come from. */
  callerNumber: string;
  /** Our fax id (TSI) on this trunk when a job names none; null: sender.csid. */
  csid: string | null;
  dial: TrunkDialRule;
  /** Calls this node runs on the trunk at once. */
  maxCalls: number;
  /** Offer T.38 (re-INVITE to image/t38 once the far end answers as a fax). */
  t38: boolean;
  /** Offer error correction mode (T.30 Annex A). */
  ecm: boolean;
  /** E.164 prefixes routed to this trunk ("+" is every number); the longest match over all trunks wins. */
  routes: readonly string[];
  /** How long the call may ring before we CANCEL it (ms); the attempt ends with no_answer (RING_TO). */
  ringTimeoutMs: number;
  /** Answer the calls this trunk delivers to our inbound numbers (DIDs of inbound topics). */
  inbound: boolean;
  /**
   * Addresses and CIDR blocks the trunk's INVITEs may come from; empty: the proxy's and the
   * registrar's addresses (host names resolved when the line starts).
   */
  inboundFrom: readonly string[];
  /** How long an incoming call rings (180) before we answer it, ms. */
  answerDelayMs: number;
  /**
   * Digest user name the trunk's INVITEs must answer our 401 with; "" when the trunk is known by
   * its addresses only. With it, `inboundFrom` (when given) still admits without a challenge.
   */
  inboundUsername: string;
  /** Its password, from `inboundPassword` or `inboundPasswordEnv`. Never log a trunk as a whole. */
  inboundPassword: string;
}

export interface TrunkFieldSpec {
  readonly field: string;
  readonly required: boolean;
  readonly default: string;
  readonly description: string;
}

/** The fields of one trunk entry: the reference that docs/trunks.md mirrors. */
export const TRUNK_FIELDS: readonly TrunkFieldSpec[] = [
  { field: "name", required: true, default: "", description: "Unique name of the trunk (letters, digits, - and _), used in logs and messages." },
  { field: "proxy", required: true, default: "", description: "host or host:port every request is sent to (the carrier's SIP proxy or SBC)." },
  { field: "registrar", required: false, default: "none", description: "host or host:port to REGISTER with; absent: the trunk does not register." },
  { field: "registerExpires", required: false, default: "1h", description: "Registration lifetime asked for (duration, 1m to 24h)." },
  { field: "domain", required: false, default: "proxy host", description: "SIP domain in the request URI, To and From (host or host:port)." },
  { field: "transport", required: false, default: "DNS chooses", description: "udp, tcp or tls; the default port is 5060, 5061 for tls. Left out: a proxy or registrar written as a host name without a port gets the transport its NAPTR records (else the first of its _sip._udp, _sip._tcp, _sips._tcp SRV records) name (RFC 3263); an address or host:port is reached over UDP." },
  { field: "username", required: false, default: "none", description: "Digest user name; absent when the carrier authenticates by address." },
  { field: "password", required: false, default: "none", description: "Digest password written in the file; prefer passwordEnv." },
  { field: "passwordEnv", required: false, default: "none", description: "Name of the environment variable holding the password; it must be set when the node starts." },
  { field: "callerNumber", required: true, default: "", description: "User part of From: the number the fax is sent from, in the form the carrier wants (\"+4989998877\")." },
  { field: "csid", required: false, default: "sender.csid", description: "Our fax id (TSI) on this trunk when a job names none: up to 20 printable ASCII characters." },
  { field: "dial.format", required: false, default: "international", description: "How the number is written: e164 (+4989…), international (004989…), digits (4989…) or national (089… for the node's own country)." },
  { field: "dial.internationalPrefix", required: false, default: "region's (00 DE, 011 US)", description: "Digits before an international number in the international and national formats." },
  { field: "dial.strip", required: false, default: "none", description: "Removed from the start of the formatted number when it starts with it." },
  { field: "dial.prefix", required: false, default: "none", description: "Put in front after strip (digits, *, # or +): an outside-line digit or a carrier routing prefix." },
  { field: "maxCalls", required: false, default: "30", description: "Calls this node runs on the trunk at once (1 to 1000)." },
  { field: "t38", required: false, default: "true", description: "Offer T.38; false sends every fax as G.711 audio." },
  { field: "ecm", required: false, default: "true", description: "Offer error correction mode; false never uses it." },
  { field: "routes", required: true, default: "", description: "E.164 prefixes sent over this trunk (\"+49\", \"+4989\"; \"+\" for every number). The longest matching prefix over all trunks wins; trunks with the same prefix share it in file order (the next one takes calls when the first is at maxCalls)." },
  { field: "ringTimeout", required: false, default: "55s", description: "How long a call may ring before it is cancelled as no answer (RING_TO), 10s to 5m." },
  { field: "inbound", required: false, default: "false", description: "Answer the calls this trunk delivers to the node's inbound numbers (the DIDs of inbound topics: docs/inbound-api.md); calls from other sources are refused with 403." },
  { field: "answerDelay", required: false, default: "0s", description: "How long an incoming call rings (180 Ringing) before Faxline answers it, 0s to 30s; the caller may still cancel in that time." },
  { field: "inboundUsername", required: false, default: "none", description: "Digest user name the trunk's calls must authenticate with (Faxline answers their INVITE with 401); then they may come from any address. Only with inbound: true." },
  { field: "inboundPassword", required: false, default: "none", description: "The inbound digest password written in the file; prefer inboundPasswordEnv." },
  { field: "inboundPasswordEnv", required: false, default: "none", description: "Name of the environment variable holding the inbound digest password; it must be set when the node starts." },
  { field: "inboundFrom", required: false, default: "proxy and registrar addresses", description: "Addresses or CIDR blocks (\"192.0.2.0/24\", \"2001:db8::/32\") the trunk's INVITEs may come from; host names of proxy and registrar are resolved when the node starts." },
];

const DEFAULT_MAX_CALLS = 30;
const DEFAULT_RING_TIMEOUT_MS = 55_000;
const DEFAULT_REGISTER_EXPIRES_MS = 3_600_000;
/** SpanDSP's T30_MAX_IDENT_LEN. */
const MAX_CSID_LENGTH = 20;

const TOP_LEVEL_KEYS = ["trunks"] as const;
const TRUNK_KEYS = new Set(TRUNK_FIELDS.map((f) => f.field.split(".")[0]!));
const DIAL_KEYS = new Set(TRUNK_FIELDS.filter((f) => f.field.startsWith("dial.")).map((f) => f.field.slice("dial.".length)));

export interface TrunkFileOptions {
  /** Where the text came from, for messages (the file path). */
  source: string;
  /** The environment passwordEnv names are looked up in. */
  env: NodeJS.ProcessEnv;
}

/** Reads and checks the trunks file; throws ConfigError naming the file, trunk and field. */
export function readTrunksFile(file: string, options: Omit<TrunkFileOptions, "source">): TrunkConfig[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError(`Cannot read the trunks file ${file} (lines.trunksFile): ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new ConfigError(`The trunks file ${file} (lines.trunksFile) is not valid YAML: ${(err as Error).message}`);
  }
  return parseTrunks(doc, { ...options, source: file });
}

/** Checks a parsed trunks document (`{trunks: [...]}`) and returns the trunks with defaults filled in. */
export function parseTrunks(doc: unknown, options: TrunkFileOptions): TrunkConfig[] {
  const { source } = options;
  const fileError = (what: string): never => {
    throw new ConfigError(`Trunks file ${source}: ${what}. See docs/trunks.md for the format.`);
  };
  if (doc === null || doc === undefined) return fileError('it is empty; list the trunks under "trunks:"');
  if (typeof doc !== "object" || Array.isArray(doc)) return fileError('the top level must be a mapping with a "trunks:" list');
  const strays = Object.keys(doc).filter((k) => !(TOP_LEVEL_KEYS as readonly string[]).includes(k));
  if (strays.length > 0) fileError(`unknown top-level keys ${strays.join(", ")} (only "trunks" is known)`);
  const list = (doc as Record<string, unknown>).trunks;
  if (!Array.isArray(list)) return fileError('"trunks" must be a list of trunk entries ("- name: …")');
  if (list.length === 0) return fileError('"trunks" is empty; list at least one trunk, or leave lines.trunksFile empty');

  const trunks = list.map((entry, index) => parseTrunk(entry, index, options));
  const seen = new Map<string, number>();
  trunks.forEach((t, i) => {
    const lower = t.name.toLowerCase();
    const first = seen.get(lower);
    if (first !== undefined) fileError(`trunks[${first}] and trunks[${i}] are both named "${t.name}"; trunk names must be unique`);
    seen.set(lower, i);
  });
  return trunks;
}

function parseTrunk(entry: unknown, index: number, options: TrunkFileOptions): TrunkConfig {
  const { source, env } = options;
  const rawName = entry !== null && typeof entry === "object" && !Array.isArray(entry) ? (entry as Record<string, unknown>).name : undefined;
  const label = typeof rawName === "string" && rawName.trim() !== "" ? `trunk "${rawName.trim()}" (trunks[${index}])` : `trunks[${index}]`;
  const fail = (field: string, what: string): never => {
    throw new ConfigError(`Trunks file ${source}: ${label}, field ${field}: ${what}. See docs/trunks.md.`);
  };
  if (entry === null || typeof entry !== "object" || Array.isArray(entry)) {
    throw new ConfigError(`Trunks file ${source}: trunks[${index}] must be a mapping of fields (name, proxy, callerNumber, routes …). See docs/trunks.md.`);
  }
  const e = entry as Record<string, unknown>;
  const unknown = Object.keys(e).filter((k) => !TRUNK_KEYS.has(k));
  if (unknown.length > 0) {
    throw new ConfigError(
      `Trunks file ${source}: ${label} has unknown fields ${unknown.join(", ")}; the known ones are ${[...TRUNK_KEYS].join(", ")}. See docs/trunks.md.`,
    );
  }

  const text = (field: string, value: unknown, example: string): string | undefined => {
    if (value === undefined || value === null) return undefined;
    if (typeof value === "string") return value.trim();
    if (typeof value === "number" || typeof value === "boolean") {
      return fail(field, `must be text; write it in quotes, e.g. ${example} (YAML reads ${String(value)} without quotes as a ${typeof value}, and would drop a leading "+" or "0")`);
    }
    return fail(field, `must be text such as ${example}, got ${describe(value)}`);
  };
  const required = (field: string, value: string | undefined, example: string): string => {
    if (value === undefined || value === "") return fail(field, `is required, e.g. ${example}`);
    return value;
  };
  const bool = (field: string, value: unknown, fallback: boolean): boolean => {
    if (value === undefined || value === null) return fallback;
    if (typeof value === "boolean") return value;
    return fail(field, `must be true or false, got ${describe(value)}`);
  };
  const integer = (field: string, value: unknown, fallback: number, min: number, max: number): number => {
    if (value === undefined || value === null) return fallback;
    if (typeof value !== "number" || !Number.isInteger(value)) return fail(field, `must be a whole number from ${min} to ${max}, got ${describe(value)}`);
    if (value < min || value > max) return fail(field, `must be from ${min} to ${max}, got ${value}`);
    return value;
  };
  const duration = (field: string, value: unknown, fallbackMs: number, minMs: number, maxMs: number, range: string): number => {
    if (value === undefined || value === null) return fallbackMs;
    const ms = typeof value === "number" ? null : parseDurationMs(value);
    if (ms === null) return fail(field, `must be a duration such as 30s, 2m or PT1M, got ${describe(value)}`);
    if (ms < minMs || ms > maxMs) return fail(field, `must lie between ${range}, got ${describe(value)}`);
    return ms;
  };

  const name = required("name", text("name", e.name, '"carrier-a"'), '"carrier-a"');
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/.test(name)) {
    fail("name", `${JSON.stringify(name)} is not a valid name; use 1 to 63 letters, digits, "-" and "_", starting with a letter or digit`);
  }

  const transportText = text("transport", e.transport, '"udp"') ?? "auto";
  const transport = [...SIP_TRANSPORTS, "auto" as const].find((t) => t === transportText.toLowerCase());
  if (transport === undefined) fail("transport", `must be one of ${SIP_TRANSPORTS.join(", ")} (or left out: DNS chooses), got ${JSON.stringify(transportText)}`);
  const defaultPort = transport === "tls" ? 5061 : 5060;

  const proxy = parseHostPort(required("proxy", text("proxy", e.proxy, '"sip.carrier.example:5060"'), '"sip.carrier.example:5060"'), defaultPort, (what) =>
    fail("proxy", what),
  );
  const registrarText = text("registrar", e.registrar, '"sip.carrier.example"');
  const registrar = registrarText === undefined || registrarText === "" ? null : parseHostPort(registrarText, defaultPort, (what) => fail("registrar", what));
  const registerExpiresMs = duration("registerExpires", e.registerExpires, DEFAULT_REGISTER_EXPIRES_MS, 60_000, 86_400_000, "1m and 24h");
  if (registrar === null && e.registerExpires !== undefined && e.registerExpires !== null) {
    fail("registerExpires", "is set but registrar is not; name the registrar, or drop registerExpires");
  }

  const domainText = text("domain", e.domain, '"carrier.example"');
  let domain: string;
  if (domainText === undefined || domainText === "") {
    domain = proxy.port === defaultPort ? formatHost(proxy.host) : `${formatHost(proxy.host)}:${proxy.port}`;
  } else {
    const hp = parseHostPort(domainText, 0, (what) => fail("domain", what));
    domain = hp.port === 0 ? formatHost(hp.host) : `${formatHost(hp.host)}:${hp.port}`;
  }

  const username = text("username", e.username, '"4989998877"') ?? "";
  if (username !== "" && !/^[A-Za-z0-9!$&'()*+,.;=?~_-]+$/.test(username)) {
    // RFC 3261 user unreserved characters; anything else would need escaping in the Authorization header.
    fail("username", `${JSON.stringify(username)} contains characters a SIP user name cannot hold (spaces, "@", ":" …)`);
  }
  const inlinePassword = text("password", e.password, '"s3cret"');
  const passwordEnv = text("passwordEnv", e.passwordEnv, '"FAXLINE_TRUNK_CARRIER_A_PASSWORD"');
  let password = "";
  if (inlinePassword !== undefined && passwordEnv !== undefined) {
    fail("password", "and passwordEnv are both set; keep one (passwordEnv keeps the secret out of the file)");
  }
  if (passwordEnv !== undefined) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(passwordEnv)) fail("passwordEnv", `${JSON.stringify(passwordEnv)} is not an environment variable name`);
    const value = env[passwordEnv];
    if (value === undefined || value === "") fail("passwordEnv", `the environment variable ${passwordEnv} is not set (or empty); set it to the trunk's SIP password before starting the node`);
    password = value!;
  } else if (inlinePassword !== undefined) {
    password = inlinePassword;
  }
  if (password !== "" && username === "") fail("username", "is required when a password is given (digest authentication needs both)");

  const callerNumber = required("callerNumber", text("callerNumber", e.callerNumber, '"+4989998877"'), '"+4989998877"');
  if (!/^\+?[0-9A-Za-z._-]{1,32}$/.test(callerNumber)) {
    fail("callerNumber", `${JSON.stringify(callerNumber)} is not a valid From user; use the number as the carrier expects it, e.g. "+4989998877" or "089998877"`);
  }
  const csidText = text("csid", e.csid, '"+49 89 998877"');
  const csid = csidText === undefined || csidText === "" ? null : csidText;
  if (csid !== null) {
    if (csid.length > MAX_CSID_LENGTH) fail("csid", `${JSON.stringify(csid)} has ${csid.length} characters; a fax id holds at most ${MAX_CSID_LENGTH}`);
    if (!/^[\x20-\x7e]+$/.test(csid)) fail("csid", `${JSON.stringify(csid)} may only hold printable ASCII characters (a fax id has no others)`);
  }

  const dial = parseDialRule(e.dial, (field, what) => fail(field, what), text);

  const maxCalls = integer("maxCalls", e.maxCalls, DEFAULT_MAX_CALLS, 1, 1000);
  const t38 = bool("t38", e.t38, true);
  const ecm = bool("ecm", e.ecm, true);
  const ringTimeoutMs = duration("ringTimeout", e.ringTimeout, DEFAULT_RING_TIMEOUT_MS, 10_000, 300_000, "10s and 5m");

  if (e.routes === undefined || e.routes === null) fail("routes", 'is required: list the E.164 prefixes this trunk sends to, e.g. ["+49"], or ["+"] for every number');
  if (!Array.isArray(e.routes)) fail("routes", `must be a list of E.164 prefixes such as ["+49", "+43"], got ${describe(e.routes)}`);
  const routeList = e.routes as unknown[];
  if (routeList.length === 0) fail("routes", 'is empty: list at least one E.164 prefix, e.g. ["+49"], or ["+"] for every number');
  const routes: string[] = [];
  routeList.forEach((r, i) => {
    const field = `routes[${i}]`;
    const raw = text(field, r, '"+49"');
    const prefix = raw === undefined ? undefined : normalizeRoutePrefix(raw);
    if (prefix === undefined) return fail(field, `${describe(r)} is not an E.164 prefix; write "+" and the leading digits of the numbers, e.g. "+49" or "+4989" ("+" alone is every number)`);
    if (routes.includes(prefix)) return fail(field, `${prefix} is listed twice`);
    routes.push(prefix);
  });

  const inbound = bool("inbound", e.inbound, false);
  let inboundFrom: string[] = [];
  if (e.inboundFrom !== undefined && e.inboundFrom !== null) {
    if (!Array.isArray(e.inboundFrom)) fail("inboundFrom", `must be a list of addresses or CIDR blocks such as ["192.0.2.10", "198.51.100.0/24"], got ${describe(e.inboundFrom)}`);
    inboundFrom = (e.inboundFrom as unknown[]).map((a, i) => {
      const field = `inboundFrom[${i}]`;
      const raw = text(field, a, '"192.0.2.10"') ?? "";
      if (parseAddressBlock(raw) === null) return fail(field, `${describe(a)} is not an IP address or CIDR block such as "192.0.2.10", "198.51.100.0/24" or "2001:db8::/32"`);
      return raw;
    });
    if (!inbound && inboundFrom.length > 0) fail("inboundFrom", "is set but inbound is not true; set inbound: true to answer this trunk's calls");
  }
  const answerDelayMs = duration("answerDelay", e.answerDelay, 0, 0, 30_000, "0s and 30s");
  const inboundUsername = text("inboundUsername", e.inboundUsername, '"carrier-a"') ?? "";
  if (inboundUsername !== "" && !/^[A-Za-z0-9!$&'()*+,.;=?~_-]+$/.test(inboundUsername)) {
    fail("inboundUsername", `${JSON.stringify(inboundUsername)} contains characters a SIP user name cannot hold (spaces, "@", ":" …)`);
  }
  const inlineInbound = text("inboundPassword", e.inboundPassword, '"s3cret"');
  const inboundEnv = text("inboundPasswordEnv", e.inboundPasswordEnv, '"FAXLINE_TRUNK_CARRIER_A_INBOUND_PASSWORD"');
  if (inlineInbound !== undefined && inboundEnv !== undefined) fail("inboundPassword", "and inboundPasswordEnv are both set; keep one (inboundPasswordEnv keeps the secret out of the file)");
  let inboundPassword = inlineInbound ?? "";
  if (inboundEnv !== undefined) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(inboundEnv)) fail("inboundPasswordEnv", `${JSON.stringify(inboundEnv)} is not an environment variable name`);
    const value = env[inboundEnv];
    if (value === undefined || value === "") fail("inboundPasswordEnv", `the environment variable ${inboundEnv} is not set (or empty); set it to the password the trunk's calls authenticate with`);
    inboundPassword = value!;
  }
  if (inboundUsername !== "" && inboundPassword === "") fail("inboundPassword", "is required with inboundUsername (or inboundPasswordEnv)");
  if (inboundUsername === "" && inboundPassword !== "") fail("inboundUsername", "is required when an inbound password is given");
  if (!inbound && inboundUsername !== "") fail("inboundUsername", "is set but inbound is not true; set inbound: true to answer this trunk's calls");

  return {
    name,
    proxy,
    registrar,
    registerExpiresMs,
    domain,
    transport: transport!,
    username,
    password,
    passwordEnv: passwordEnv ?? null,
    callerNumber,
    csid,
    dial,
    maxCalls,
    t38,
    ecm,
    routes,
    ringTimeoutMs,
    inbound,
    inboundFrom,
    answerDelayMs,
    inboundUsername,
    inboundPassword,
  };
}

/** "192.0.2.10", "198.51.100.0/24", "2001:db8::/32" → address, prefix length and family; null when it is none. */
export function parseAddressBlock(text: string): { address: string; prefix: number; family: "ipv4" | "ipv6" } | null {
  const [address, prefixText, extra] = text.trim().split("/");
  if (address === undefined || extra !== undefined) return null;
  const version = isIP(address);
  if (version === 0) return null;
  const max = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : /^[0-9]{1,3}$/.test(prefixText) ? Number(prefixText) : -1;
  if (prefix < 0 || prefix > max) return null;
  return { address, prefix, family: version === 4 ? "ipv4" : "ipv6" };
}

function parseDialRule(
  value: unknown,
  fail: (field: string, what: string) => never,
  text: (field: string, value: unknown, example: string) => string | undefined,
): TrunkDialRule {
  if (value === undefined || value === null) return { format: "international", internationalPrefix: null, strip: "", prefix: "" };
  if (typeof value !== "object" || Array.isArray(value)) {
    return fail("dial", `must be a mapping such as {format: international, prefix: "0"}, got ${describe(value)}`);
  }
  const d = value as Record<string, unknown>;
  const unknown = Object.keys(d).filter((k) => !DIAL_KEYS.has(k));
  if (unknown.length > 0) fail("dial", `has unknown fields ${unknown.join(", ")}; the known ones are ${[...DIAL_KEYS].join(", ")}`);
  const formatText = text("dial.format", d.format, '"international"') ?? "international";
  const format = DIAL_FORMATS.find((f) => f === formatText.toLowerCase());
  if (format === undefined) fail("dial.format", `must be one of ${DIAL_FORMATS.join(", ")}, got ${JSON.stringify(formatText)}`);
  const intl = text("dial.internationalPrefix", d.internationalPrefix, '"00"');
  if (intl !== undefined && !/^[0-9]{1,4}$/.test(intl)) fail("dial.internationalPrefix", `must be 1 to 4 digits such as "00" or "011", got ${JSON.stringify(intl)}`);
  const strip = text("dial.strip", d.strip, '"0049"') ?? "";
  if (!/^[0-9*#+]*$/.test(strip)) fail("dial.strip", `may only hold digits, "*", "#" and "+", got ${JSON.stringify(strip)}`);
  const prefix = text("dial.prefix", d.prefix, '"0"') ?? "";
  if (!/^[0-9*#+]{0,16}$/.test(prefix)) fail("dial.prefix", `may only hold up to 16 digits, "*", "#" and "+", got ${JSON.stringify(prefix)}`);
  return { format: format!, internationalPrefix: intl === undefined || intl === "" ? null : intl, strip, prefix };
}

/** "+49", "+49 89", "0049", "49" → "+49"/"+4989"; "+" stays "+". Undefined when it is no E.164 prefix. */
export function normalizeRoutePrefix(raw: string): string | undefined {
  const compact = raw.replace(/[\s\-().]/g, "");
  let digits: string;
  if (compact.startsWith("+")) digits = compact.slice(1);
  else if (compact.startsWith("00")) digits = compact.slice(2);
  else digits = compact;
  if (compact === "") return undefined;
  if (!/^[0-9]{0,15}$/.test(digits)) return undefined;
  if (digits.startsWith("0")) return undefined;
  return `+${digits}`;
}

const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** "host", "host:port", "1.2.3.4:5060", "[2001:db8::1]:5060"; port 0 in the result means "none given" when defaultPort is 0. */
export function parseHostPort(text: string, defaultPort: number, fail: (what: string) => never): HostPort {
  const example = 'write host or host:port, e.g. "sip.carrier.example:5060" or "[2001:db8::1]:5060"';
  let host: string;
  let portText: string | undefined;
  if (text.startsWith("[")) {
    const close = text.indexOf("]");
    if (close === -1) return fail(`${JSON.stringify(text)} opens "[" for an IPv6 address but never closes it; ${example}`);
    host = text.slice(1, close);
    const rest = text.slice(close + 1);
    if (rest !== "" && !rest.startsWith(":")) return fail(`${JSON.stringify(text)} has text after the IPv6 address; ${example}`);
    portText = rest === "" ? undefined : rest.slice(1);
    if (!/^[0-9A-Fa-f:.]+$/.test(host) || !host.includes(":")) return fail(`${JSON.stringify(host)} is not an IPv6 address; ${example}`);
  } else {
    const parts = text.split(":");
    if (parts.length > 2) return fail(`${JSON.stringify(text)} has more than one ":"; put an IPv6 address in brackets; ${example}`);
    host = parts[0]!;
    portText = parts[1];
    if (!(IPV4.test(host) || (HOST_NAME.test(host) && !/^[0-9.]+$/.test(host)))) {
      return fail(`${JSON.stringify(host)} is not a host name or IPv4 address; ${example}`);
    }
  }
  if (portText === undefined) return { host, port: defaultPort, portGiven: false };
  if (!/^[0-9]{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
    return fail(`port ${JSON.stringify(portText)} must be a number from 1 to 65535; ${example}`);
  }
  return { host, port: Number(portText) };
}

/** An IPv6 host goes in brackets in a URI. */
export function formatHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

function describe(value: unknown): string {
  if (value === null) return "nothing";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return JSON.stringify(value);
}

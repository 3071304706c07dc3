/**
 * The dial plan: from a recipient's number to the trunk, the dial string and the SIP URIs of
 * one call. Pure: no I/O, no clock.
 *
 *  1. The number is normalised to E.164 with numbers/normalize-number.ts ("+49 89 1234-5",
 *     "0049 89 12345", national "089 12345" in the node's region all give "+498912345").
 *  2. The trunk is chosen by the longest route prefix that matches the E.164 number. Trunks
 *     that list the same longest prefix share it in file order: the first one with a free call
 *     slot (below its maxCalls) takes the call. A shorter prefix never takes overflow, so a
 *     number routed to a trunk for a reason never leaves by another.
 *  3. The trunk's dial rule writes the number (format, then strip, then prefix). That dial
 *     string is what the carrier receives in the request URI, and it is the report's
 *     `sentToNumber`: the number actually dialled.
 *
 * Test accounts never come here: their calls go to the simulated test line, as before.
 */
import { normalizeFaxNumber, type NumberContext } from "../../numbers/normalize-number.ts";
import type { FailureReasonCode } from "../../errors/failure-reasons.ts";
import { isIP } from "node:net";
import { formatHost, type HostPort, type TrunkConfig, type TrunkDialRule } from "./trunk-config.ts";

/** The trunks a number may leave by: all that list its longest matching prefix, in file order. */
export interface RouteMatch {
  /** The matching route prefix, e.g. "+4989". */
  prefix: string;
  trunks: readonly TrunkConfig[];
}

/** Finds the longest route prefix matching `e164` over all trunks; null when none matches. */
export function matchRoute(e164: string, trunks: readonly TrunkConfig[]): RouteMatch | null {
  let best: string | null = null;
  let bestTrunks: TrunkConfig[] = [];
  for (const trunk of trunks) {
    let own: string | null = null;
    for (const prefix of trunk.routes) {
      if (e164.startsWith(prefix) && (own === null || prefix.length > own.length)) own = prefix;
    }
    if (own === null) continue;
    if (best === null || own.length > best.length) {
      best = own;
      bestTrunks = [trunk];
    } else if (own.length === best.length) {
      bestTrunks.push(trunk);
    }
  }
  return best === null ? null : { prefix: best, trunks: bestTrunks };
}

export type TrunkSelection =
  | { kind: "trunk"; trunk: TrunkConfig; prefix: string }
  /** Every trunk of the route is at its maxCalls: wait for a call to end, then choose again. */
  | { kind: "full"; prefix: string; trunks: readonly TrunkConfig[] }
  | { kind: "no_route" };

/**
 * Chooses the trunk for `e164`: the first trunk of its route with a free slot. `activeCalls`
 * counts the calls running per trunk name (absent: none).
 */
export function selectTrunk(
  e164: string,
  trunks: readonly TrunkConfig[],
  activeCalls: ReadonlyMap<string, number> = new Map(),
): TrunkSelection {
  const route = matchRoute(e164, trunks);
  if (route === null) return { kind: "no_route" };
  const free = route.trunks.find((t) => (activeCalls.get(t.name) ?? 0) < t.maxCalls);
  return free === undefined ? { kind: "full", prefix: route.prefix, trunks: route.trunks } : { kind: "trunk", trunk: free, prefix: route.prefix };
}

/**
 * Writes an E.164 number as the trunk dials it. `region` reads the `national` format and gives
 * the international prefix the rule does not name.
 */
export function formatDialString(e164: string, rule: TrunkDialRule, region: NumberContext): string {
  if (!/^\+[1-9][0-9]{1,14}$/.test(e164)) {
    throw new RangeError(`formatDialString expects an E.164 number such as "+4989123456", got ${JSON.stringify(e164)}`);
  }
  const digits = e164.slice(1);
  const intl = rule.internationalPrefix ?? region.internationalPrefix;
  let written: string;
  switch (rule.format) {
    case "e164":
      written = e164;
      break;
    case "digits":
      written = digits;
      break;
    case "international":
      written = intl + digits;
      break;
    case "national":
      written = digits.startsWith(region.defaultCountryCode)
        ? region.nationalPrefix + digits.slice(region.defaultCountryCode.length)
        : intl + digits;
      break;
  }
  if (rule.strip !== "" && written.startsWith(rule.strip)) written = written.slice(rule.strip.length);
  return rule.prefix + written;
}

/** The user part of a SIP URI for a dial string: "#" must be escaped, digits, "*" and "+" may stand. */
function uriUser(dialString: string): string {
  return dialString.replace(/#/g, "%23");
}

/** Request URI (and To) of a call to `dialString` over `trunk`: sip:004989123456@carrier.example. */
export function requestUriFor(trunk: TrunkConfig, dialString: string): string {
  return `sip:${uriUser(dialString)}@${trunk.domain}`;
}

/** From URI of the trunk's calls: sip:+4989998877@carrier.example. */
export function fromUriFor(trunk: TrunkConfig): string {
  return `sip:${trunk.callerNumber}@${trunk.domain}`;
}

/** Where the trunk's requests go, as host:port for the transport layer (a host name alone when no port was written: DNS SRV first). */
export function proxyAddressFor(trunk: TrunkConfig): string {
  return hostPortAddress(trunk.proxy);
}

/**
 * `host:port`, or the host name alone when the configuration wrote no port, so that the user
 * agent looks it up by DNS SRV first and fails over between its targets (RFC 3263). An address
 * literal keeps the default port.
 */
export function hostPortAddress(hp: HostPort): string {
  if (hp.portGiven === false && isIP(hp.host) === 0) return hp.host;
  return `${formatHost(hp.host)}:${hp.port}`;
}

export interface DialPlan {
  e164: string;
  trunk: TrunkConfig;
  /** The route prefix that chose the trunk. */
  routePrefix: string;
  /** What the carrier receives as the called number. */
  dialString: string;
  /** The report's sentToNumber: the number actually dialled (the dial string). */
  sentToNumber: string;
  requestUri: string;
  toUri: string;
  fromUri: string;
  /** Our fax id: the job's, else the trunk's, else the node's sender.csid. */
  csid: string;
}

export type DialPlanResult =
  | ({ ok: true } & DialPlan)
  | { ok: false; reasonCode: Extract<FailureReasonCode, "invalid_number" | "no_route">; message: string }
  /** Every trunk of the route is busy with maxCalls calls: not a failure; try again when a call ends. */
  | { ok: false; reasonCode: null; full: true; routePrefix: string; message: string };

export interface DialPlanOptions {
  /** How numbers without "+" are read, and the country of the `national` format: the node's region. */
  region: NumberContext;
  /** The job's CSID, if it names one. */
  jobCsid?: string | null;
  /** sender.csid: the fallback fax id. */
  defaultCsid: string;
  activeCalls?: ReadonlyMap<string, number>;
}

/** Plans one call to `number` (any accepted form): the trunk, the dial string and the URIs. */
export function planDial(number: string, trunks: readonly TrunkConfig[], options: DialPlanOptions): DialPlanResult {
  const normalized = normalizeFaxNumber(number, options.region);
  if (!normalized.ok) return { ok: false, reasonCode: "invalid_number", message: normalized.message };
  const { e164 } = normalized;
  const selection = selectTrunk(e164, trunks, options.activeCalls);
  if (selection.kind === "no_route") {
    const known = [...new Set(trunks.flatMap((t) => t.routes))].join(", ") || "none";
    return {
      ok: false,
      reasonCode: "no_route",
      message: `No trunk routes ${e164}: no route prefix matches it (prefixes configured: ${known}). Add a prefix to a trunk's routes in lines.trunksFile, or "+" for every number.`,
    };
  }
  if (selection.kind === "full") {
    return {
      ok: false,
      reasonCode: null,
      full: true,
      routePrefix: selection.prefix,
      message: `Every trunk for ${selection.prefix} is at its call limit (${selection.trunks.map((t) => `${t.name}: ${t.maxCalls}`).join(", ")})`,
    };
  }
  const { trunk } = selection;
  const dialString = formatDialString(e164, trunk.dial, options.region);
  if (!/[0-9]/.test(dialString)) {
    return {
      ok: false,
      reasonCode: "no_route",
      message: `Trunk ${trunk.name}'s dial rule leaves no digits of ${e164} (dial.strip ${JSON.stringify(trunk.dial.strip)}); fix the rule in lines.trunksFile`,
    };
  }
  const requestUri = requestUriFor(trunk, dialString);
  const jobCsid = options.jobCsid ?? null;
  return {
    ok: true,
    e164,
    trunk,
    routePrefix: selection.prefix,
    dialString,
    sentToNumber: dialString,
    requestUri,
    toUri: requestUri,
    fromUri: fromUriFor(trunk),
    csid: jobCsid !== null && jobCsid !== "" ? jobCsid : (trunk.csid ?? options.defaultCsid),
  };
}

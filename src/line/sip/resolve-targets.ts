/**
 * Where a SIP request goes (RFC 3263 §4): the ordered list of next hops a call tries one after the
 * other (§4.3: on a transport error, a timeout or a 503).
 *
 * The transport (§4.1): when a trunk names one (`udp`, `tcp`, `tls`), that one. When it names none
 * (`auto`): an IP address or a host with a port is reached over UDP (TLS for a sips: URI); a host
 * name without a port is looked up by NAPTR: the records for services this line speaks (SIP+D2U
 * UDP, SIP+D2T TCP, SIPS+D2T TLS; only TLS for sips:) with flag "s", lowest order and then
 * preference first, each record's replacement looked up by SRV; the first record whose SRV
 * targets have addresses chooses the transport. No NAPTR records: SRV for `_sip._udp`, then
 * `_sip._tcp`, then `_sips._tcp` (the first that has targets with addresses). Neither: the host's
 * addresses over UDP on port 5060. The hops of one request all share the transport chosen;
 * failover (below) is among its targets.
 *
 * The hops for a transport:
 *  - An IP address, or a host with an explicit port: that address (the host's A/AAAA records, in
 *    the order the resolver gives them), on the port given or 5060/5061.
 *  - A host name without a port: its SRV records for the transport (`_sip._udp`, `_sip._tcp`,
 *    `_sips._tcp` for TLS, or the NAPTR record's replacement), lowest priority first and, within a
 *    priority, in the weighted random order of RFC 2782; each target's A/AAAA addresses in turn.
 *    No SRV records: the host's own addresses on the default port.
 *
 * TLS hops keep the host name (per §4.2 the domain) for certificate checks.
 */
import dns from "node:dns/promises";
import net from "node:net";
import type { SipUri } from "./sip-uri.ts";
import type { SipHop, SipTransportProtocol } from "./transports.ts";

export interface SrvRecord {
  name: string;
  port: number;
  priority: number;
  weight: number;
}

export interface NaptrRecord {
  flags: string;
  service: string;
  regexp: string;
  replacement: string;
  order: number;
  preference: number;
}

/** A transport named by the trunk, or "auto": RFC 3263 §4.1 chooses it (NAPTR, then SRV). */
export type SipTransportChoice = SipTransportProtocol | "auto";

/** What the lookups need from DNS; `systemResolver` is the real one. */
export interface SipResolver {
  /** NAPTR records of `name`; [] when there are none (NXDOMAIN, NODATA). */
  resolveNaptr(name: string): Promise<NaptrRecord[]>;
  /** SRV records of `name`; [] when there are none (NXDOMAIN, NODATA). */
  resolveSrv(name: string): Promise<SrvRecord[]>;
  /** A and AAAA addresses of `host`; throws when it has none. */
  lookup(host: string): Promise<string[]>;
}

/** DNS through Node's resolver, on the system's servers or on `servers` ("192.0.2.53", "127.0.0.1:5353"). */
export function systemResolver(servers: readonly string[] = []): SipResolver {
  const resolver = new dns.Resolver();
  if (servers.length > 0) resolver.setServers([...servers]);
  const noneWhenAbsent = async <T>(query: () => Promise<T[]>): Promise<T[]> => {
    try {
      return await query();
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === "ENODATA" || code === "ENOTFOUND" || code === "NXDOMAIN") return [];
      throw error;
    }
  };
  return {
    resolveNaptr: (name) => noneWhenAbsent(() => resolver.resolveNaptr(name)),
    resolveSrv: (name) => noneWhenAbsent(() => resolver.resolveSrv(name)),
    async lookup(host) {
      if (servers.length === 0) return (await dns.lookup(host, { all: true })).map((a) => a.address);
      const found: string[] = [];
      for (const query of [resolver.resolve4.bind(resolver), resolver.resolve6.bind(resolver)]) {
        try {
          found.push(...(await query(host)));
        } catch {
          // no records of this family
        }
      }
      if (found.length === 0) throw Object.assign(new Error(`${host} has no A or AAAA records`), { code: "ENOTFOUND" });
      return found;
    },
  };
}

const SRV_PREFIX: Readonly<Record<SipTransportProtocol, string>> = { udp: "_sip._udp.", tcp: "_sip._tcp.", tls: "_sips._tcp." };
/** NAPTR services (RFC 3263 §4.1) this line speaks. */
const NAPTR_SERVICES: Readonly<Record<string, SipTransportProtocol>> = { "SIP+D2U": "udp", "SIP+D2T": "tcp", "SIPS+D2T": "tls" };

/** The hops for `uri` over `protocol` (or the transport DNS chooses), in the order to try them (at least one, or it throws). */
export async function resolveTargets(uri: SipUri, protocol: SipTransportChoice, resolver: SipResolver, random: () => number = Math.random): Promise<SipHop[]> {
  if (protocol !== "auto") return hopsOver(uri, protocol, resolver, random);
  const secure = uri.scheme === "sips";
  const fallback: SipTransportProtocol = secure ? "tls" : "udp";
  if (net.isIP(uri.host) !== 0 || (uri.port !== null && uri.port !== undefined)) return hopsOver(uri, fallback, resolver, random);
  const naptr = (await resolver.resolveNaptr(uri.host))
    .map((r) => ({ ...r, replacement: r.replacement.replace(/\.$/, "") }))
    .filter((r) => r.flags.toLowerCase() === "s" && r.replacement !== "" && NAPTR_SERVICES[r.service.toUpperCase()] !== undefined && (!secure || NAPTR_SERVICES[r.service.toUpperCase()] === "tls"))
    .sort((a, b) => a.order - b.order || a.preference - b.preference);
  const candidates: { protocol: SipTransportProtocol; srvName: string }[] =
    naptr.length > 0
      ? naptr.map((r) => ({ protocol: NAPTR_SERVICES[r.service.toUpperCase()]!, srvName: r.replacement }))
      : (secure ? (["tls"] as const) : (["udp", "tcp", "tls"] as const)).map((p) => ({ protocol: p, srvName: `${SRV_PREFIX[p]}${uri.host}` }));
  for (const candidate of candidates) {
    const records = await resolver.resolveSrv(candidate.srvName);
    if (records.length === 0) continue;
    const hops = await srvHops(records, candidate.protocol, uri.host, resolver, random);
    if (hops.length > 0) return hops;
  }
  return (await resolver.lookup(uri.host)).map((address) => ({ protocol: fallback, address, port: fallback === "tls" ? 5061 : 5060, serverName: uri.host }));
}

async function hopsOver(uri: SipUri, protocol: SipTransportProtocol, resolver: SipResolver, random: () => number): Promise<SipHop[]> {
  const host = uri.host;
  const defaultPort = protocol === "tls" ? 5061 : 5060;
  const serverName = net.isIP(host) !== 0 ? {} : { serverName: host };
  if (net.isIP(host) !== 0) return [{ protocol, address: host, port: uri.port ?? defaultPort }];
  if (uri.port !== null && uri.port !== undefined) {
    return (await resolver.lookup(host)).map((address) => ({ protocol, address, port: uri.port!, ...serverName }));
  }
  const records = await resolver.resolveSrv(`${SRV_PREFIX[protocol]}${host}`);
  if (records.length === 0) return (await resolver.lookup(host)).map((address) => ({ protocol, address, port: defaultPort, ...serverName }));
  const hops = await srvHops(records, protocol, host, resolver, random);
  if (hops.length === 0) throw Object.assign(new Error(`no SRV target of ${host} has an address`), { code: "ENOTFOUND" });
  return hops;
}

/** The addresses of SRV `records`' targets in RFC 2782 order; [] when none has an address. */
async function srvHops(records: readonly SrvRecord[], protocol: SipTransportProtocol, domain: string, resolver: SipResolver, random: () => number): Promise<SipHop[]> {
  const hops: SipHop[] = [];
  for (const record of orderSrv(records, random)) {
    // "." as target: the service is decidedly not available at this domain (RFC 2782).
    if (record.name === "" || record.name === ".") continue;
    try {
      for (const address of await resolver.lookup(record.name)) hops.push({ protocol, address, port: record.port, serverName: domain });
    } catch {
      // A target without addresses is skipped; the others are still tried.
    }
  }
  return hops;
}

/** RFC 2782: lowest priority first; within one priority, repeatedly pick by weight (weight 0 last-ish but possible). */
export function orderSrv(records: readonly SrvRecord[], random: () => number): SrvRecord[] {
  const byPriority = new Map<number, SrvRecord[]>();
  for (const r of records) byPriority.set(r.priority, [...(byPriority.get(r.priority) ?? []), r]);
  const out: SrvRecord[] = [];
  for (const priority of [...byPriority.keys()].sort((a, b) => a - b)) {
    // Zero weights first in the list, as RFC 2782 asks, so they keep a small chance.
    const left = [...byPriority.get(priority)!].sort((a, b) => (a.weight === 0 ? -1 : 0) - (b.weight === 0 ? -1 : 0));
    while (left.length > 0) {
      const total = left.reduce((sum, r) => sum + r.weight, 0);
      // RFC 2782: a whole number from 0 to the sum of the weights; the first record whose running
      // sum reaches it is next (a weight-0 record, listed first, is taken only on a 0).
      const pick = Math.floor(random() * (total + 1));
      let running = 0;
      let index = left.length - 1;
      for (let i = 0; i < left.length; i++) {
        running += left[i]!.weight;
        if (running >= pick) {
          index = i;
          break;
        }
      }
      out.push(left.splice(index, 1)[0]!);
    }
  }
  return out;
}

/**
 * Where a SIP request goes (RFC 3263 §4, for a transport already chosen): the ordered list of
 * next hops a call tries one after the other (§4.3: on a transport error, a timeout or a 503).
 *
 *  - An IP address, or a host with an explicit port: that address (the host's A/AAAA records, in
 *    the order the resolver gives them), on the port given or 5060/5061.
 *  - A host name without a port: its SRV records for the transport (`_sip._udp`, `_sip._tcp`,
 *    `_sips._tcp` for TLS), lowest priority first and, within a priority, in the weighted random
 *    order of RFC 2782; each target's A/AAAA addresses in turn. No SRV records: the host's own
 *    addresses on the default port.
 *
 * NAPTR (which chooses the transport) is not consulted: a trunk names its transport. TLS hops
 * keep the host name (the SRV owner's, per §4.2 the domain) for certificate checks.
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

/** What the lookups need from DNS; `systemResolver` is the real one. */
export interface SipResolver {
  /** SRV records of `name`; [] when there are none (NXDOMAIN, NODATA). */
  resolveSrv(name: string): Promise<SrvRecord[]>;
  /** A and AAAA addresses of `host`; throws when it has none. */
  lookup(host: string): Promise<string[]>;
}

/** DNS through Node's resolver, on the system's servers or on `servers` ("192.0.2.53", "127.0.0.1:5353"). */
export function systemResolver(servers: readonly string[] = []): SipResolver {
  const resolver = new dns.Resolver();
  if (servers.length > 0) resolver.setServers([...servers]);
  return {
    async resolveSrv(name) {
      try {
        return await resolver.resolveSrv(name);
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code === "ENODATA" || code === "ENOTFOUND" || code === "NXDOMAIN") return [];
        throw error;
      }
    },
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

/** The hops for `uri` over `protocol`, in the order to try them (at least one, or it throws). */
export async function resolveTargets(uri: SipUri, protocol: SipTransportProtocol, resolver: SipResolver, random: () => number = Math.random): Promise<SipHop[]> {
  const host = uri.host;
  const defaultPort = protocol === "tls" ? 5061 : 5060;
  const serverName = net.isIP(host) !== 0 ? {} : { serverName: host };
  if (net.isIP(host) !== 0) return [{ protocol, address: host, port: uri.port ?? defaultPort }];
  if (uri.port !== null && uri.port !== undefined) {
    return (await resolver.lookup(host)).map((address) => ({ protocol, address, port: uri.port!, ...serverName }));
  }
  const records = await resolver.resolveSrv(`${SRV_PREFIX[protocol]}${host}`);
  if (records.length === 0) return (await resolver.lookup(host)).map((address) => ({ protocol, address, port: defaultPort, ...serverName }));
  const hops: SipHop[] = [];
  for (const record of orderSrv(records, random)) {
    // "." as target: the service is decidedly not available at this domain (RFC 2782).
    if (record.name === "" || record.name === ".") continue;
    try {
      for (const address of await resolver.lookup(record.name)) hops.push({ protocol, address, port: record.port, ...serverName });
    } catch {
      // A target without addresses is skipped; the others are still tried.
    }
  }
  if (hops.length === 0) throw Object.assign(new Error(`no SRV target of ${host} has an address`), { code: "ENOTFOUND" });
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

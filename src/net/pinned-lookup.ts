/**
 * Connections pinned to checked addresses. A guarded client (document fetches, status pushes)
 * resolves a host name itself, checks every address, and then connects through
 * `pinnedLookup`, which hands http.request only those addresses: a DNS answer that changes
 * between check and connect (DNS rebinding) cannot redirect the connection. Also the messages
 * for lookup and network errors, as sentences an operator can act on.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import type { LookupFunction } from "node:net";

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** A `lookup` for http.request that hands out only the addresses already checked. */
export function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    const family = lookupOptions.family === 4 || lookupOptions.family === "IPv4" ? 4 : lookupOptions.family === 6 || lookupOptions.family === "IPv6" ? 6 : 0;
    const candidates = family === 0 ? addresses : addresses.filter((a) => a.family === family);
    process.nextTick(() => {
      const first = candidates[0];
      if (first === undefined) {
        const error: NodeJS.ErrnoException = new Error(`${hostname} has no checked IPv${family} address`);
        error.code = "ENOTFOUND";
        callback(error, "", 0);
      } else if (lookupOptions.all === true) {
        callback(null, candidates.map((a) => ({ address: a.address, family: a.family })));
      } else {
        callback(null, first.address, first.family);
      }
    });
  };
}

export async function systemLookup(hostname: string): Promise<{ address: string; family: 4 | 6 }[]> {
  const answer = await dnsLookup(hostname, { all: true, verbatim: true });
  return answer.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
}

/** URL.hostname keeps brackets around IPv6 literals; sockets and the guard want them off. */
export function bareHostname(hostname: string): string {
  return hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
}

function errorCode(error: unknown): string | undefined {
  if (typeof error === "object" && error !== null && "code" in error && typeof error.code === "string") return error.code;
  return undefined;
}

export function describeLookupError(host: string, error: unknown): string {
  const code = errorCode(error);
  if (code === "ENOTFOUND" || code === "ENODATA") return `the host name ${host} does not exist in DNS (${code}); check the URL`;
  if (code === "EAI_AGAIN") return `looking up ${host} failed for now (EAI_AGAIN); check DNS on the Faxline host or try again`;
  const text = error instanceof Error ? error.message : String(error);
  return `looking up ${host} failed: ${text}`;
}

export function describeNetworkError(error: unknown): string {
  const code = errorCode(error);
  const text = error instanceof Error ? error.message : String(error);
  switch (code) {
    case "ECONNREFUSED":
      return "the server refused the connection (ECONNREFUSED); is it running on that port?";
    case "ECONNRESET":
      return "the server reset the connection (ECONNRESET)";
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `the server cannot be reached from the Faxline host (${code})`;
    case "ETIMEDOUT":
      return "connecting to the server timed out (ETIMEDOUT)";
    case "ENOTFOUND":
      return `${text} (ENOTFOUND)`;
    default:
      if (code !== undefined && (code.startsWith("ERR_TLS") || code.includes("CERT") || code.startsWith("ERR_SSL"))) {
        return `the server's TLS certificate was not accepted (${code}): ${text}`;
      }
      return code === undefined ? text : `${text} (${code})`;
  }
}

/**
 * Forbidden addresses: which IP addresses a fetched document reference may not lead to.
 *
 * A client names a document by URL and Faxline fetches it from inside the operator's network.
 * Without a guard, a client could make Faxline read internal services (an admin page on
 * localhost, a database on 10.x, the cloud metadata service on 169.254.169.254) and fax the
 * result to itself: server-side request forgery. This module classifies one address; it is
 * pure, does no I/O, and `fetch-reference.ts` applies it to every resolved address of every
 * hop.
 *
 * Refused: unspecified and "this network" (0.0.0.0/8, ::), loopback (127/8, ::1), private
 * (RFC 1918, fc00::/7), carrier-grade NAT (100.64/10), link-local (169.254/16 including the
 * metadata service, fe80::/10), multicast, broadcast, and the reserved / documentation /
 * benchmarking ranges that no document server lives in. IPv6 forms that carry an IPv4 address
 * (IPv4-mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16, Teredo 2001::/32) are judged
 * by the IPv4 address they carry.
 */
import { isIPv4, isIPv6 } from "node:net";

/**
 * Why `address` must not be fetched from, as the end of a sentence ("a loopback address"), or
 * null when it is an ordinary public address. Anything that is not an IP address is refused.
 * Accepts IPv6 with or without brackets and with a zone id (`fe80::1%eth0`).
 */
export function describeForbiddenAddress(address: string): string | null {
  let text = address.trim();
  if (text.startsWith("[") && text.endsWith("]")) text = text.slice(1, -1);
  const zone = text.indexOf("%");
  if (zone !== -1) text = text.slice(0, zone);

  const v4 = parseIPv4(text);
  if (v4 !== null) return describeIPv4(v4);
  const v6 = parseIPv6(text);
  if (v6 !== null) return describeIPv6(v6);
  return "not an IP address";
}

/** True when `address` is not an ordinary public IP address (see describeForbiddenAddress). */
export function isForbiddenAddress(address: string): boolean {
  return describeForbiddenAddress(address) !== null;
}

type Octets = readonly [number, number, number, number];

function describeIPv4([a, b, c, d]: Octets): string | null {
  if (a === 0) return b === 0 && c === 0 && d === 0 ? "an unspecified address" : 'a "this network" address (0.0.0.0/8)';
  if (a === 127) return "a loopback address";
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return "a private address";
  if (a === 100 && b >= 64 && b <= 127) return "a carrier-grade NAT address (100.64.0.0/10)";
  if (a === 169 && b === 254) {
    return c === 169 && d === 254 ? "a link-local address (the cloud metadata service)" : "a link-local address";
  }
  if (a === 192 && b === 0 && c === 0) return "a reserved address (192.0.0.0/24)";
  if ((a === 192 && b === 0 && c === 2) || (a === 198 && b === 51 && c === 100) || (a === 203 && b === 0 && c === 113)) {
    return "a documentation address";
  }
  if (a === 198 && (b === 18 || b === 19)) return "a benchmarking address (198.18.0.0/15)";
  if (a >= 224 && a <= 239) return "a multicast address";
  if (a === 255 && b === 255 && c === 255 && d === 255) return "the broadcast address";
  if (a >= 240) return "a reserved address (240.0.0.0/4)";
  return null;
}

type Groups = readonly number[]; // eight 16-bit groups

function describeIPv6(g: Groups): string | null {
  const at = (i: number): number => g[i] ?? 0;
  const zeroUpTo = (n: number): boolean => g.slice(0, n).every((x) => x === 0);
  const embedded = (hi: number, lo: number): Octets => [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff];
  const carried = (kind: string, v4: Octets): string | null => {
    const reason = describeIPv4(v4);
    return reason === null ? null : `${kind} for ${v4.join(".")}, which is ${reason}`;
  };

  if (zeroUpTo(8)) return "an unspecified address";
  if (zeroUpTo(7) && at(7) === 1) return "a loopback address";
  // ::ffff:a.b.c.d (IPv4-mapped) and ::ffff:0:a.b.c.d (IPv4-translated)
  if (zeroUpTo(5) && at(5) === 0xffff) return carried("an IPv4-mapped address", embedded(at(6), at(7)));
  if (zeroUpTo(4) && at(4) === 0xffff && at(5) === 0) return carried("an IPv4-translated address", embedded(at(6), at(7)));
  if (zeroUpTo(6)) return "a reserved address (IPv4-compatible, ::/96)";
  if (at(0) === 0x64 && at(1) === 0xff9b) {
    if (at(2) === 0 && at(3) === 0 && at(4) === 0 && at(5) === 0) return carried("a NAT64 address", embedded(at(6), at(7)));
    if (at(2) === 1) return "a local-use NAT64 address (64:ff9b:1::/48)";
  }
  if (at(0) === 0x100 && at(1) === 0 && at(2) === 0 && at(3) === 0) return "a discard-only address (100::/64)";
  if (at(0) === 0x2001 && at(1) === 0xdb8) return "a documentation address";
  if (at(0) === 0x2001 && at(1) === 0) {
    // Teredo: the client's IPv4 address is stored inverted in the last 32 bits.
    return carried("a Teredo address", embedded(~at(6) & 0xffff, ~at(7) & 0xffff));
  }
  if (at(0) === 0x2002) return carried("a 6to4 address", embedded(at(1), at(2)));
  if ((at(0) & 0xfe00) === 0xfc00) return "a unique local (private) address";
  if ((at(0) & 0xffc0) === 0xfe80) return "a link-local address";
  if ((at(0) & 0xffc0) === 0xfec0) return "a site-local address";
  if ((at(0) & 0xff00) === 0xff00) return "a multicast address";
  return null;
}

function parseIPv4(text: string): Octets | null {
  if (!isIPv4(text)) return null;
  const parts = text.split(".").map(Number);
  const [a, b, c, d] = parts;
  if (a === undefined || b === undefined || c === undefined || d === undefined) return null;
  return [a, b, c, d];
}

function parseIPv6(text: string): Groups | null {
  if (!isIPv6(text)) return null;
  let body = text.toLowerCase();
  // A dotted IPv4 tail (::ffff:127.0.0.1) becomes two hex groups.
  const lastColon = body.lastIndexOf(":");
  const tail = body.slice(lastColon + 1);
  if (tail.includes(".")) {
    const v4 = parseIPv4(tail);
    if (v4 === null) return null;
    body = `${body.slice(0, lastColon + 1)}${((v4[0] << 8) | v4[1]).toString(16)}:${((v4[2] << 8) | v4[3]).toString(16)}`;
  }
  const halves = body.split("::");
  if (halves.length > 2) return null;
  const split = (part: string | undefined): string[] => (part === undefined || part === "" ? [] : part.split(":"));
  const head = split(halves[0]);
  const rest = split(halves[1]);
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...rest].map((h) => Number.parseInt(h, 16));
  if (groups.length !== 8 || groups.some((x) => !Number.isInteger(x) || x < 0 || x > 0xffff)) return null;
  return groups;
}

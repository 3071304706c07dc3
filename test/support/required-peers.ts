/**
 * Test support: the programs and files the tests run against, each with the Debian package that
 * brings it. `bash scripts/install.sh --no-start` installs all of them (its tool check and package
 * mapping list the same names), so a test never skips for want of one: `requirePeer` fails it
 * with a message that says what to install.
 *
 * ### Examples
 * ```ts
 * before(() => requirePeer("sipp"));  // Error: sipp (SIPp) is not installed: install the Debian package sip-tester …
 * ```
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

interface Peer {
  /** What it is, for the message. */
  what: string;
  /** The Debian package scripts/install.sh installs it from. */
  debianPackage: string;
  present(): boolean;
}

/** Runs `command args`: true when it ran and (if given) printed `expect` on standard output or error. */
function runs(command: string, args: readonly string[], expect?: string): boolean {
  const result = spawnSync(command, args, { encoding: "utf8", timeout: 10_000 });
  if (result.error !== undefined) return false;
  return expect === undefined ? result.status === 0 : `${result.stdout}${result.stderr}`.includes(expect);
}

export const PEERS = {
  sipp: { what: "SIPp, the SIP peer of the line tests", debianPackage: "sip-tester", present: () => runs("sipp", ["-v"], "SIPp") },
  rtpengine: { what: "rtpengine, the T.38/G.711 gateway", debianPackage: "rtpengine-daemon", present: () => runs("rtpengine", ["--version"]) },
  dnsmasq: { what: "dnsmasq, the DNS server of the SRV and NAPTR tests", debianPackage: "dnsmasq-base", present: () => runs("dnsmasq", ["--version"], "Dnsmasq") },
  openssl: { what: "openssl, which makes the TLS tests' certificate", debianPackage: "openssl", present: () => runs("openssl", ["version"]) },
  kamailio: { what: "Kamailio with its dispatcher module, the SIP load balancer", debianPackage: "kamailio", present: () => runs("kamailio", ["-v"], "kamailio") },
  tiffinfo: { what: "tiffinfo, which checks fax images", debianPackage: "libtiff-tools", present: () => runs("tiffinfo", [], "LIBTIFF") },
  unshare: {
    what: "unshare with user and mount namespaces, which gives a node a small tmpfs of its own for the disk-full tests (the kernel must allow unprivileged user namespaces, or run the tests as root)",
    debianPackage: "util-linux",
    present: () => runs("unshare", ["--user", "--map-root-user", "--mount", "true"]),
  },
  "spandsp-headers": { what: "SpanDSP's headers (/usr/include/spandsp/t30.h)", debianPackage: "libspandsp-dev", present: () => existsSync("/usr/include/spandsp/t30.h") },
} satisfies Record<string, Peer>;

export type PeerName = keyof typeof PEERS;

const known = new Map<PeerName, boolean>();

/** Whether the peer is installed (checked once per process). */
export function havePeer(name: PeerName): boolean {
  let present = known.get(name);
  if (present === undefined) {
    present = PEERS[name].present();
    known.set(name, present);
  }
  return present;
}

/** Throws, naming the Debian package to install, unless the peer is installed. */
export function requirePeer(name: PeerName): void {
  if (havePeer(name)) return;
  const peer = PEERS[name];
  throw new Error(
    `${name} (${peer.what}) is not installed: install the Debian package ${peer.debianPackage} ` +
      `(apt-get install ${peer.debianPackage}), or run bash scripts/install.sh --no-start, which installs every package the tests need.`,
  );
}

/**
 * RFC 3263 against a real DNS server (dnsmasq) and SIPp: a trunk host named without a port is
 * looked up by SRV, its targets are tried in priority order, and the INVITE, and a trunk's
 * REGISTER, fail over to the next target when the first answers 503 or does not answer at all. The order within one
 * priority (RFC 2782 weights) is checked on the pure function with a fixed random sequence.
 * A trunk that names no transport gets the one DNS names (RFC 3263 §4.1): NAPTR records, else the
 * first SRV set of _sip._udp, _sip._tcp, _sips._tcp, else UDP; a call then goes over TCP to SIPp.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { orderSrv, resolveTargets, systemResolver } from "../../src/line/sip/resolve-targets.ts";
import { parseSipUri } from "../../src/line/sip/sip-uri.ts";
import { SipUserAgent } from "../../src/line/sip/sip-user-agent.ts";
import type { SipTraceEntry } from "../../src/line/sip/transports.ts";
import { SipFaxLine } from "../../src/line/sip-fax-line/sip-fax-line.ts";
import type { TrunkConfig } from "../../src/line/trunks/trunk-config.ts";
import { REGION_NUMBER_CONTEXT } from "../../src/numbers/normalize-number.ts";
import { testTrunk } from "../support/sip-trunk.ts";
import { requirePeer, twoPageLowCallRequest } from "./interop-support.ts";
import { cleanupPeers, startDnsmasq, startSipp } from "./peer-processes.ts";

after(() => cleanupPeers());

/** A SIP line with one trunk, its names looked up on `dnsServer`, its SIP messages kept in `trace`. */
function lineThrough(trunk: TrunkConfig, dnsServer: string, mediaPorts: { min: number; max: number }, trace: SipTraceEntry[]): SipFaxLine {
  return new SipFaxLine({
    trunks: [trunk],
    region: REGION_NUMBER_CONTEXT.DE,
    localAddress: "127.0.0.1",
    sipPort: 0,
    mediaPorts,
    capabilityMaxAgeMs: 86_400_000,
    dnsServers: [dnsServer],
    sipTimers: { D: 1000 },
    mediaProcess: false,
    trace: (e) => trace.push(e),
  });
}

/** One call of the two-page letter through `line` (the far end's scenario decides how it ends). */
async function callOnce(line: SipFaxLine): Promise<void> {
  const image = Buffer.alloc(0);
  await line.call({ ...twoPageLowCallRequest(image), loadImage: async () => image }, new AbortController().signal);
}

describe("SRV ordering (RFC 2782)", () => {
  it("lowest priority first; within a priority, the weighted draw decides, and every record comes once", () => {
    const records = [
      { name: "c", port: 3, priority: 20, weight: 0 },
      { name: "a", port: 1, priority: 10, weight: 90 },
      { name: "b", port: 2, priority: 10, weight: 10 },
    ];
    // A draw near 0 takes the first record of the running list, one near 1 the last.
    assert.deepEqual(orderSrv(records, () => 0).map((r) => r.name), ["a", "b", "c"]);
    assert.deepEqual(orderSrv(records, () => 0.99).map((r) => r.name), ["b", "a", "c"]);
  });
});

describe("trunk hosts by DNS SRV, with failover (RFC 3263)", () => {
  before(() => {
    requirePeer("sipp");
    requirePeer("dnsmasq");
  });
  it("resolves _sip._udp SRV targets in priority order to their addresses", async () => {
    const dns = await startDnsmasq({
      srv: [
        { name: "_sip._udp.trunk.test", target: "sbc2.trunk.test", port: 5070, priority: 20, weight: 10 },
        { name: "_sip._udp.trunk.test", target: "sbc1.trunk.test", port: 5060, priority: 10, weight: 10 },
      ],
      hosts: { "sbc1.trunk.test": "127.0.0.11", "sbc2.trunk.test": "127.0.0.12" },
    });
    try {
      const hops = await resolveTargets(parseSipUri("sip:+4930123456@trunk.test"), "udp", systemResolver([dns.server]));
      assert.deepEqual(hops.map((h) => `${h.address}:${h.port}`), ["127.0.0.11:5060", "127.0.0.12:5070"]);
      const direct = await resolveTargets(parseSipUri("sip:+4930123456@sbc1.trunk.test:5080"), "udp", systemResolver([dns.server]));
      assert.deepEqual(direct.map((h) => `${h.address}:${h.port}`), ["127.0.0.11:5080"], "an explicit port skips SRV");
    } finally {
      dns.kill();
    }
  });

  for (const first of ["answers 503", "does not answer"] as const) {
    it(`the first target ${first}: the INVITE goes to the next one, which takes the call`, { timeout: 30_000 }, async () => {
      const dead = first === "does not answer";
      const unavailable = dead ? null : await startSipp("uas-unavailable-503.xml", { timeoutSeconds: 20 });
      const working = await startSipp("uas-remote-bye.xml", { timeoutSeconds: 20 });
      // Nothing listens on port 9 (discard) on loopback: the INVITE there is never answered.
      const firstPort = unavailable?.port ?? 9;
      const dns = await startDnsmasq({
        srv: [
          { name: "_sip._udp.trunk.test", target: "sbc1.trunk.test", port: firstPort, priority: 10, weight: 10 },
          { name: "_sip._udp.trunk.test", target: "sbc2.trunk.test", port: working.port, priority: 20, weight: 10 },
        ],
        hosts: { "sbc1.trunk.test": "127.0.0.1", "sbc2.trunk.test": "127.0.0.1" },
      });
      const trace: SipTraceEntry[] = [];
      // T1 50 ms: timer B (64*T1) gives up on the silent target after 3.2 s instead of 32.
      const ua = new SipUserAgent({ localAddress: "127.0.0.1", dnsServers: [dns.server], trace: (e) => trace.push(e), timers: { T1: 50, D: 1000 } });
      await ua.start();
      try {
        const call = ua.placeCall({
          target: "sip:+4930123456@trunk.test",
          from: "sip:+4940999888@faxline.test",
          transport: "udp",
          t38: false,
          ringTimeoutMs: 20_000,
          localMedia: { address: "127.0.0.1", audioPort: 40_200, t38Port: 40_202 },
        });
        const answered = await call.next("answered");
        assert.ok(answered, `the call was answered; outcome ${JSON.stringify(await Promise.race([call.outcome, Promise.resolve(null)]))}`);
        const invites = trace.filter((e) => e.direction === "out" && e.text.startsWith("INVITE "));
        const ports = [...new Set(invites.map((e) => e.remote.port))];
        assert.deepEqual(ports, [firstPort, working.port], "first the priority-10 target, then the priority-20 one");
        const branches = new Set(invites.map((e) => /branch=([^;\s]+)/.exec(e.text)?.[1]));
        assert.ok(branches.size >= 2, "a new transaction (branch) for the next target");
        const outcome = await call.outcome;
        assert.equal(outcome.result, "completed");
        assert.equal((await working.exit).code, 0);
        if (unavailable) assert.equal((await unavailable.exit).code, 0);
      } finally {
        await ua.close(0);
        dns.kill();
      }
    });
  }

  for (const first of ["answers 503", "does not answer"] as const) {
    it(`the registrar's first target ${first}: the REGISTER goes to the next one, and the refresh stays there`, { timeout: 30_000 }, async () => {
      const dead = first === "does not answer";
      const unavailable = dead ? null : await startSipp("uas-register-503.xml", { timeoutSeconds: 20 });
      const registrar = await startSipp("uas-register.xml", { timeoutSeconds: 20 });
      const firstPort = unavailable?.port ?? 9;
      const dns = await startDnsmasq({
        srv: [
          { name: "_sip._udp.trunk.test", target: "reg1.trunk.test", port: firstPort, priority: 10, weight: 10 },
          { name: "_sip._udp.trunk.test", target: "reg2.trunk.test", port: registrar.port, priority: 20, weight: 10 },
        ],
        hosts: { "reg1.trunk.test": "127.0.0.1", "reg2.trunk.test": "127.0.0.1" },
      });
      const trace: SipTraceEntry[] = [];
      const ua = new SipUserAgent({ localAddress: "127.0.0.1", dnsServers: [dns.server], trace: (e) => trace.push(e), timers: { T1: 50, D: 1000 } });
      await ua.start();
      try {
        const registration = ua.register({
          registrar: "trunk.test",
          aor: "sip:+4940999888@faxline.test",
          credentials: { username: "faxuser", password: "s3cret" },
          transport: "udp",
          expiresMs: 2000,
        });
        assert.deepEqual(await registration.next(), { type: "registered", expiresMs: 2000 });
        assert.deepEqual(await registration.next(), { type: "registered", expiresMs: 2000 }, "refreshed");
        await registration.unregister();
        const registers = trace.filter((e) => e.direction === "out" && e.text.startsWith("REGISTER "));
        const ports = registers.map((e) => e.remote.port);
        // (A silent target gets the REGISTER's retransmissions until timer F.)
        const moved = ports.indexOf(registrar.port);
        assert.ok(moved >= 1 && ports.slice(0, moved).every((p) => p === firstPort), `first the priority-10 target: ${ports.join(", ")}`);
        assert.ok(ports.length - moved >= 4 && ports.slice(moved).every((p) => p === registrar.port), `then only the priority-20 one (challenge, 200, refresh, unregister): ${ports.join(", ")}`);
        assert.equal((await registrar.exit).code, 0);
        if (unavailable) assert.equal((await unavailable.exit).code, 0);
      } finally {
        await ua.close(0);
        dns.kill();
      }
    });
  }

 it("a trunk that names no transport: NAPTR chooses it (order, then preference), else the SRV records, else UDP", async () => {
    const dns = await startDnsmasq({
      naptr: [
        // Lowest order first: TCP, though the UDP record has the better preference at a later order.
        { name: "trunk.test", order: 20, preference: 1, flags: "s", service: "SIP+D2U", replacement: "_sip._udp.trunk.test" },
        { name: "trunk.test", order: 10, preference: 20, flags: "s", service: "SIP+D2T", replacement: "_sip._tcp.trunk.test" },
        // Not a service this line speaks, and a record without the "s" flag: both skipped.
        { name: "trunk.test", order: 5, preference: 1, flags: "s", service: "SIP+D2S", replacement: "_sip._sctp.trunk.test" },
        { name: "trunk.test", order: 5, preference: 1, flags: "a", service: "SIP+D2U", replacement: "sbc2.trunk.test" },
        // The preferred record's SRV name has no records: the next record is used.
        { name: "broken.test", order: 10, preference: 10, flags: "s", service: "SIP+D2T", replacement: "_sip._tcp.nowhere.test" },
        { name: "broken.test", order: 20, preference: 10, flags: "s", service: "SIP+D2U", replacement: "_sip._udp.trunk.test" },
      ],
      srv: [
        { name: "_sip._tcp.trunk.test", target: "sbc1.trunk.test", port: 5070, priority: 10, weight: 10 },
        { name: "_sip._udp.trunk.test", target: "sbc2.trunk.test", port: 5060, priority: 10, weight: 10 },
        { name: "_sip._tcp.tcponly.test", target: "sbc1.trunk.test", port: 5090, priority: 10, weight: 10 },
      ],
      hosts: { "sbc1.trunk.test": "127.0.0.11", "sbc2.trunk.test": "127.0.0.12", "plain.test": "127.0.0.13", "tcponly.test": "127.0.0.14" },
    });
    try {
      const resolver = systemResolver([dns.server]);
      const hops = async (uri: string) => (await resolveTargets(parseSipUri(uri), "auto", resolver)).map((h) => `${h.protocol} ${h.address}:${h.port}`);
      assert.deepEqual(await hops("sip:+4930123456@trunk.test"), ["tcp 127.0.0.11:5070"], "the NAPTR record of the lowest order");
      assert.deepEqual(await hops("sip:+4930123456@broken.test"), ["udp 127.0.0.12:5060"], "the next NAPTR record when the first one's SRV name has none");
      assert.deepEqual(await hops("sip:+4930123456@tcponly.test"), ["tcp 127.0.0.11:5090"], "no NAPTR: the first transport with SRV records");
      assert.deepEqual(await hops("sip:+4930123456@plain.test"), ["udp 127.0.0.13:5060"], "neither: UDP to the host's address");
      assert.deepEqual(await hops("sip:+4930123456@sbc1.trunk.test:5080"), ["udp 127.0.0.11:5080"], "a port written: UDP, no NAPTR or SRV");
      assert.deepEqual(await hops("sip:+4930123456@127.0.0.9"), ["udp 127.0.0.9:5060"], "an address: UDP");
      assert.deepEqual(await hops("sips:+4930123456@plain.test"), ["tls 127.0.0.13:5061"], "sips: only TLS");
    } finally {
      dns.kill();
    }
  });

  it("a trunk that names no transport, whose host's NAPTR names TCP: the line's call goes to SIPp over TCP", { timeout: 30_000 }, async () => {
    const working = await startSipp("uas-remote-bye.xml", { timeoutSeconds: 20, transport: "tcp" });
    const dns = await startDnsmasq({
      naptr: [
        { name: "trunk.test", order: 10, preference: 10, flags: "s", service: "SIP+D2T", replacement: "_sip._tcp.trunk.test" },
        { name: "trunk.test", order: 20, preference: 10, flags: "s", service: "SIP+D2U", replacement: "_sip._udp.trunk.test" },
      ],
      srv: [
        { name: "_sip._tcp.trunk.test", target: "sbc1.trunk.test", port: working.port, priority: 10, weight: 10 },
        // Nothing answers here over UDP (the discard port): a call that went by UDP would fail.
        { name: "_sip._udp.trunk.test", target: "sbc1.trunk.test", port: 9, priority: 10, weight: 10 },
      ],
      hosts: { "sbc1.trunk.test": "127.0.0.1" },
    });
    // As the trunks file makes it from `proxy: trunk.test` with no transport written.
    const trunk = testTrunk(5060, { proxy: { host: "trunk.test", port: 5060, portGiven: false }, domain: "trunk.test", transport: "auto", t38: false });
    const trace: SipTraceEntry[] = [];
    const line = lineThrough(trunk, dns.server, { min: 47_820, max: 47_859 }, trace);
    try {
      await callOnce(line);
      const sent = trace.filter((e) => e.direction === "out");
      const invites = sent.filter((e) => e.text.startsWith("INVITE "));
      assert.ok(invites.length > 0, "an INVITE was sent");
      assert.deepEqual([...new Set(invites.map((e) => `${e.protocol} ${e.remote.port}`))], [`tcp ${working.port}`], "over TCP to the NAPTR record's SRV target");
      assert.match(invites[0]!.text, /^Via: SIP\/2\.0\/TCP /m, "the Via names TCP");
      assert.ok(sent.filter((e) => /^(ACK|BYE) /.test(e.text) || e.text.startsWith("SIP/2.0 200")).every((e) => e.protocol === "tcp"), "the dialog's requests and answers stay on TCP");
      assert.equal((await working.exit).code, 0, "SIPp's scenario (INVITE, 200, ACK, its BYE, our 200) passed");
    } finally {
      await line.close();
      dns.kill();
    }
  });

  it("a trunk whose proxy is written without a port is looked up by SRV: the line's call fails over from a 503 target to the next", { timeout: 30_000 }, async () => {
    const unavailable = await startSipp("uas-unavailable-503.xml", { timeoutSeconds: 20 });
    const working = await startSipp("uas-remote-bye.xml", { timeoutSeconds: 20 });
    const dns = await startDnsmasq({
      srv: [
        { name: "_sip._udp.trunk.test", target: "sbc1.trunk.test", port: unavailable.port, priority: 10, weight: 10 },
        { name: "_sip._udp.trunk.test", target: "sbc2.trunk.test", port: working.port, priority: 20, weight: 10 },
      ],
      hosts: { "sbc1.trunk.test": "127.0.0.1", "sbc2.trunk.test": "127.0.0.1" },
    });
    // As the trunks file makes it from `proxy: trunk.test`.
    const trunk = testTrunk(5060, { proxy: { host: "trunk.test", port: 5060, portGiven: false }, domain: "trunk.test", t38: false });
    const trace: SipTraceEntry[] = [];
    const line = lineThrough(trunk, dns.server, { min: 47_860, max: 47_899 }, trace);
    try {
      await callOnce(line);
      const invites = trace.filter((e) => e.direction === "out" && e.text.startsWith("INVITE "));
      assert.deepEqual([...new Set(invites.map((e) => e.remote.port))], [unavailable.port, working.port], "the priority-10 target, then the priority-20 one");
      assert.equal((await unavailable.exit).code, 0);
    } finally {
      await line.close();
      dns.kill();
    }
  });
});

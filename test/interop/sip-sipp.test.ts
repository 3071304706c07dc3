/**
 * The SIP user agent against SIPp (Debian `sip-tester`) as the far end: one SIPp process per
 * scenario (test/interop/sipp/*.xml), on 127.0.0.1 with free ports. Each test asserts the UA's
 * events and outcome, and that SIPp exits 0 — SIPp checks our messages with its own regexps
 * (`check_it`), so exit 0 means the far end got what it expected from us.
 *
 * TLS: Debian's SIPp is built without OpenSSL (`sipp -t l1` → "To use a TLS transport you must
 * compile SIPp with OpenSSL"), so the TLS test puts a Node TLS server in front of SIPp's TCP
 * port, with a throw-away certificate made by `openssl` (a missing openssl fails the test: scripts/install.sh installs it).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import tls from "node:tls";
import { after, before, describe, it } from "node:test";
import { requirePeer } from "../support/required-peers.ts";
import { cleanupPeers, startSipp as startSippPeer, type SippRun } from "./peer-processes.ts";
import type { SipCall } from "../../src/line/sip/sip-call.ts";
import { SipUserAgent, type PlaceCallOptions } from "../../src/line/sip/sip-user-agent.ts";
import type { SipTraceEntry, SipTransportProtocol } from "../../src/line/sip/transports.ts";

/** Call setup times (INVITE sent → 2xx), for the summary line. */
const setupTimes: { scenario: string; transport: string; setupMs: number; wallMs: number }[] = [];

const cleanups: (() => void)[] = [];
after(() => {
  for (const c of cleanups.splice(0)) c();
  cleanupPeers();
});

/** SIPp for these scenarios: a call that is not over in 20 s is a failure. */
const startSipp = (scenario: string, options: { transport?: "udp" | "tcp" } = {}): Promise<SippRun> => startSippPeer(scenario, { ...options, timeoutSeconds: 20 });

interface Harness {
  ua: SipUserAgent;
  trace: SipTraceEntry[];
  call(overrides?: Partial<PlaceCallOptions>): SipCall;
}

async function harness(sipp: SippRun, transport: SipTransportProtocol = "udp", extra: { tls?: tls.ConnectionOptions; targetPort?: number; minSessionExpires?: number } = {}): Promise<Harness> {
  const trace: SipTraceEntry[] = [];
  const ua = new SipUserAgent({
    localAddress: "127.0.0.1",
    trace: (e) => trace.push(e),
    ...(extra.tls !== undefined ? { tls: extra.tls } : {}),
    // "localhost" (the TLS certificate's name) must not resolve to ::1: we bind 127.0.0.1.
    lookup: async () => "127.0.0.1",
    // Short timer D so transactions do not outlive the test; everything else as the RFC says.
    timers: { D: 1000 },
    ...(extra.minSessionExpires !== undefined ? { minSessionExpires: extra.minSessionExpires } : {}),
  });
  await ua.start();
  cleanups.push(() => void ua.close(0));
  const host = transport === "tls" ? "localhost" : "127.0.0.1";
  return {
    ua,
    trace,
    call: (overrides = {}) =>
      ua.placeCall({
        target: `sip:+4930123456@${host}:${extra.targetPort ?? sipp.port}`,
        from: "sip:+4940999888@faxline.test",
        transport,
        t38: true,
        ringTimeoutMs: 10_000,
        localMedia: { address: "127.0.0.1", audioPort: 40_000, t38Port: 40_002 },
        ...overrides,
      }),
  };
}

/** Runs `body`; on failure, adds the SIP trace and SIPp's output to the error. */
async function withDiagnostics(h: Harness, sipp: SippRun, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (error) {
    sipp.kill();
    const { output } = await sipp.exit;
    const trace = h.trace.map((e) => `--- ${e.direction} ${e.protocol} ${e.remote.address}:${e.remote.port}\n${e.text}`).join("\n");
    (error as Error).message += `\n\nSIP trace:\n${trace}\n\nSIPp output:\n${output.slice(-3000)}\nSIPp errors:\n${sipp.errors()}`;
    throw error;
  }
}

async function expectSippSuccess(sipp: SippRun): Promise<void> {
  const { code, output } = await sipp.exit;
  assert.equal(code, 0, `sipp exited ${code}:\n${output.slice(-3000)}\n${sipp.errors()}`);
}

function recordSetup(scenario: string, transport: string, setupMs: number, startedAt: number, answeredAt: number): void {
  setupTimes.push({ scenario, transport, setupMs, wallMs: answeredAt - startedAt });
}

/** Parses `Digest a="b", c=d` into a map. */
function digestParams(header: string): Map<string, string> {
  const params = new Map<string, string>();
  for (const m of header.matchAll(/([a-zA-Z0-9_-]+)\s*=\s*(?:"([^"]*)"|([^\s,]+))/g)) params.set(m[1]!.toLowerCase(), m[2] ?? m[3]!);
  return params;
}

/** RFC 2617/7616 response, computed here independently of src/. */
function expectedDigest(p: Map<string, string>, method: string, password: string): string {
  const alg = (p.get("algorithm") ?? "MD5").toUpperCase() === "SHA-256" ? "sha256" : "md5";
  const h = (s: string): string => createHash(alg).update(s).digest("hex");
  const ha1 = h(`${p.get("username")}:${p.get("realm")}:${password}`);
  const ha2 = h(`${method}:${p.get("uri")}`);
  return h(`${ha1}:${p.get("nonce")}:${p.get("nc")}:${p.get("cnonce")}:${p.get("qop")}:${ha2}`);
}

describe("SIP user agent against SIPp", { timeout: 90_000 }, () => {
  before(() => requirePeer("sipp"));
  after(() => {
    if (setupTimes.length === 0) return;
    const lines = setupTimes.map((s) => `${s.scenario} (${s.transport}): INVITE→2xx ${s.setupMs} ms, placeCall→answered ${s.wallMs.toFixed(1)} ms`);
    console.log(`# call setup against SIPp on loopback:\n#   ${lines.join("\n#   ")}`);
  });

  it("accepts the far end's re-INVITE to T.38 (UDP) and hangs up with BYE", async () => {
    const sipp = await startSipp("uas-remote-t38.xml");
    const h = await harness(sipp);
    await withDiagnostics(h, sipp, async () => {
      const started = performance.now();
      const call = h.call();
      const answered = await call.next("answered");
      const answeredAt = performance.now();
      assert.ok(answered, "answered");
      assert.deepEqual(answered.media, {
        kind: "audio",
        remote: { address: "127.0.0.1", port: sipp.mediaPort },
        codec: "PCMA",
        payloadType: 8,
        telephoneEventPayloadType: null,
        ptimeMs: 20,
      });
      recordSetup("remote T.38", "udp", answered.setupMs, started, answeredAt);
      const provisional = call.events.filter((e) => e.type === "provisional").map((e) => (e.type === "provisional" ? e.sipStatus : 0));
      assert.deepEqual(provisional, [100, 180]);
      const switched = await call.next("t38Switched");
      assert.ok(switched);
      assert.equal(switched.initiatedBy, "remote");
      assert.deepEqual(switched.media.remote, { address: "127.0.0.1", port: sipp.mediaPort });
      assert.deepEqual(switched.media.params, {
        version: 0,
        maxBitRate: 14_400,
        rateManagement: "transferredTCF",
        maxBuffer: 1800,
        maxDatagram: 512,
        errorCorrection: "t38UDPRedundancy",
        fillBitRemoval: false,
        transcodingMMR: false,
        transcodingJBIG: false,
      });
      assert.equal(call.media?.kind, "t38");
      const outcome = await call.hangup();
      assert.equal(outcome.result, "completed");
      assert.equal(outcome.result === "completed" && outcome.endedBy, "local");
      await expectSippSuccess(sipp);
    });
  });

  it("starts the T.38 re-INVITE itself and the far end accepts", async () => {
    const sipp = await startSipp("uas-accept-t38.xml");
    const h = await harness(sipp);
    await withDiagnostics(h, sipp, async () => {
      const call = h.call();
      assert.ok(await call.next("answered"));
      const result = await call.switchToT38();
      assert.equal(result.result, "switched");
      assert.equal(result.result === "switched" && result.media.params.maxDatagram, 512);
      const event = await call.next("t38Switched", { includePast: true });
      assert.equal(event?.initiatedBy, "local");
      assert.equal((await call.hangup()).result, "completed");
      await expectSippSuccess(sipp);
    });
  });

  it("starts T.38 itself on a timer after the answer (t38ReinviteDelayMs)", async () => {
    const sipp = await startSipp("uas-accept-t38.xml");
    const h = await harness(sipp);
    await withDiagnostics(h, sipp, async () => {
      const call = h.call({ t38ReinviteDelayMs: 50 });
      const switched = await call.next("t38Switched");
      assert.equal(switched?.initiatedBy, "local");
      await call.hangup();
      await expectSippSuccess(sipp);
    });
  });

  it("stays on audio when the far end answers 488 to our T.38 re-INVITE", async () => {
    const sipp = await startSipp("uas-refuse-t38.xml");
    const h = await harness(sipp);
    await withDiagnostics(h, sipp, async () => {
      const call = h.call();
      const answered = await call.next("answered");
      assert.ok(answered);
      const result = await call.switchToT38();
      assert.equal(result.result, "refused");
      assert.equal(result.result === "refused" && result.sipStatus, 488);
      const refused = await call.next("t38Refused", { includePast: true });
      assert.equal(refused?.sipStatus, 488);
      assert.deepEqual(refused?.media, answered.media, "the audio session is untouched");
      assert.equal(call.media?.kind, "audio");
      assert.equal(call.state, "confirmed");
      assert.equal((await call.hangup()).result, "completed");
      await expectSippSuccess(sipp);
    });
  });

  for (const [scenario, status, reason, cause] of [
    ["uas-busy-486.xml", 486, "Busy Here", 17],
    ["uas-not-found-404.xml", 404, "Not Found", 1],
    ["uas-address-incomplete-484.xml", 484, "Address Incomplete", 28],
  ] as const) {
    it(`reports ${status} ${reason} as a failure in phase "ring"`, async () => {
      const sipp = await startSipp(scenario);
      const h = await harness(sipp);
      await withDiagnostics(h, sipp, async () => {
        const call = h.call();
        const outcome = await call.outcome;
        assert.equal(outcome.result, "failed");
        if (outcome.result !== "failed") return;
        assert.equal(outcome.sipStatus, status);
        assert.equal(outcome.reasonPhrase, reason);
        assert.equal(outcome.phase, "ring");
        assert.equal(outcome.cause, "rejected");
        assert.equal(outcome.answered, false);
        assert.deepEqual(outcome.reason, { protocol: "Q.850", cause, text: reason });
        assert.deepEqual(
          call.events.map((e) => e.type),
          ["provisional", "provisional", "failed", "ended"],
        );
        await expectSippSuccess(sipp);
      });
    });
  }

  it("sends CANCEL when the ring timer runs out and reports the 487", async () => {
    const sipp = await startSipp("uas-no-answer.xml");
    const h = await harness(sipp);
    await withDiagnostics(h, sipp, async () => {
      const call = h.call({ ringTimeoutMs: 300 });
      const outcome = await call.outcome;
      assert.equal(outcome.result, "failed");
      if (outcome.result !== "failed") return;
      assert.equal(outcome.sipStatus, 487);
      assert.equal(outcome.phase, "ring");
      assert.equal(outcome.cause, "ring_timeout");
      await expectSippSuccess(sipp);
    });
  });

  it("cancels on abort before the answer", async () => {
    const sipp = await startSipp("uas-no-answer.xml");
    const h = await harness(sipp);
    await withDiagnostics(h, sipp, async () => {
      const controller = new AbortController();
      const call = h.call({ signal: controller.signal });
      while ((await call.next("provisional"))?.sipStatus === 100);
      controller.abort();
      const outcome = await call.outcome;
      assert.equal(outcome.result === "failed" && outcome.cause, "cancelled");
      assert.equal(outcome.result === "failed" && outcome.sipStatus, 487);
      await expectSippSuccess(sipp);
    });
  });

  it("answers a 401 digest challenge (MD5, qop=auth) that SIPp verifies", async () => {
    const sipp = await startSipp("uas-auth-401.xml");
    const h = await harness(sipp);
    await withDiagnostics(h, sipp, async () => {
      const call = h.call({ credentials: { username: "faxuser", password: "s3cret" } });
      const answered = await call.next("answered");
      assert.ok(answered, "answered after the challenge");
      await call.hangup();
      await expectSippSuccess(sipp);
      const header = /AUTH\s*(Digest .*)/.exec(sipp.logs())?.[1];
      assert.ok(header, `logged Authorization: ${sipp.logs()}`);
      const p = digestParams(header);
      assert.equal(p.get("algorithm"), "MD5");
      assert.equal(p.get("qop"), "auth");
      assert.equal(p.get("opaque"), "5ccc069c403ebaf9f0171e9517f40e41");
      assert.equal(p.get("response"), expectedDigest(p, "INVITE", "s3cret"));
    });
  });

  it("reports the 403 the far end sends for a wrong password", async () => {
    const sipp = await startSipp("uas-auth-401.xml");
    const h = await harness(sipp);
    await withDiagnostics(h, sipp, async () => {
      const call = h.call({ credentials: { username: "faxuser", password: "wrong" } });
      const outcome = await call.outcome;
      assert.equal(outcome.result === "failed" && outcome.sipStatus, 403);
      assert.equal(outcome.result === "failed" && outcome.phase, "ring");
      assert.equal(outcome.result === "failed" && outcome.credentialsSent, true);
      await expectSippSuccess(sipp);
    });
  });

  it("answers a 407 proxy challenge with SHA-256 when offered next to MD5", async () => {
    const sipp = await startSipp("uas-auth-407.xml");
    const h = await harness(sipp);
    await withDiagnostics(h, sipp, async () => {
      const call = h.call({ credentials: { username: "faxuser", password: "s3cret" } });
      assert.ok(await call.next("answered"));
      await call.hangup();
      await expectSippSuccess(sipp);
      const header = /AUTH\s*(Digest .*)/.exec(sipp.logs())?.[1];
      assert.ok(header, `logged Proxy-Authorization: ${sipp.logs()}`);
      const p = digestParams(header);
      assert.equal(p.get("algorithm"), "SHA-256");
      assert.equal(p.get("realm"), "proxy.faxline.test");
      assert.equal(p.get("response"), expectedDigest(p, "INVITE", "s3cret"));
    });
  });

  it("reports a BYE from the far end in the middle of the call", async () => {
    const sipp = await startSipp("uas-remote-bye.xml");
    const h = await harness(sipp);
    await withDiagnostics(h, sipp, async () => {
      const call = h.call();
      assert.ok(await call.next("answered"));
      const bye = await call.next("remoteBye");
      assert.deepEqual(bye?.reason, { protocol: "Q.850", cause: 16, text: "Normal call clearing" });
      const outcome = await call.outcome;
      assert.equal(outcome.result, "completed");
      assert.equal(outcome.result === "completed" && outcome.endedBy, "remote");
      await expectSippSuccess(sipp);
    });
  });

  it("keeps T.38 through a same-SDP refresh re-INVITE, UPDATE and OPTIONS in the dialog", async () => {
    const sipp = await startSipp("uas-session-refresh.xml");
    const h = await harness(sipp);
    await withDiagnostics(h, sipp, async () => {
      const call = h.call();
      const switched = await call.next("t38Switched");
      assert.ok(switched);
      const refresh = await call.next("sessionRefreshed");
      assert.deepEqual(refresh, { type: "sessionRefreshed", method: "INVITE", sdpChanged: false });
      const update = await call.next("sessionRefreshed");
      assert.deepEqual(update, { type: "sessionRefreshed", method: "UPDATE", sdpChanged: false });
      assert.ok(await call.next("requestReceived"));
      assert.deepEqual(call.media, switched.media, "the T.38 media is untouched by the refreshes");
      assert.ok(!call.events.some((e) => e.type === "mediaChanged" || (e.type === "t38Switched" && e !== switched)));
      const ping = await call.ping();
      assert.equal(ping.sipStatus, 200);
      assert.equal((await call.hangup()).result, "completed");
      await expectSippSuccess(sipp);
      const logs = sipp.logs();
      const o1 = /ORIGIN1(o=.*)/.exec(logs)?.[1];
      const o2 = /ORIGIN2(o=.*)/.exec(logs)?.[1];
      assert.ok(o1 && o2, logs);
      assert.equal(o2, o1, "the refresh is answered with the same o= version");
    });
  });

  it("refreshes the session with UPDATE at half the interval when the trunk makes it the refresher (RFC 4028)", async () => {
    const sipp = await startSipp("uas-session-timer.xml");
    const h = await harness(sipp, "udp", { minSessionExpires: 1 });
    await withDiagnostics(h, sipp, async () => {
      const call = h.call();
      assert.ok(await call.next("answered"));
      // Two refreshes fall due at 1 s and 2 s; SIPp fails the call if the BYE comes before both.
      await new Promise((r) => setTimeout(r, 2500));
      assert.equal(call.state, "confirmed");
      assert.equal((await call.hangup()).result, "completed");
      await expectSippSuccess(sipp);
    });
  });

  it("acknowledges a reliable 183 (100rel) with PRACK in the early dialog, then takes the answer (RFC 3262)", async () => {
    const sipp = await startSipp("uas-prack.xml");
    const h = await harness(sipp);
    await withDiagnostics(h, sipp, async () => {
      const call = h.call({ t38: false });
      const provisional = await call.next("provisional");
      assert.equal(provisional?.sipStatus, 183);
      assert.ok(await call.next("answered", { includePast: true }));
      const prack = h.trace.find((e) => e.direction === "out" && e.text.startsWith("PRACK "));
      assert.ok(prack, "a PRACK went out");
      assert.match(prack.text, /^CSeq: 2 PRACK$/m, "the PRACK takes the next sequence number of the early dialog");
      assert.equal((await call.hangup()).result, "completed");
      const bye = h.trace.find((e) => e.direction === "out" && e.text.startsWith("BYE "));
      assert.match(bye?.text ?? "", /^CSeq: 3 BYE$/m, "the BYE goes on after the PRACK's sequence number");
      assert.equal(h.trace.filter((e) => e.direction === "out" && e.text.startsWith("PRACK ")).length, 1, "retransmitted 183s are not PRACKed again");
      await expectSippSuccess(sipp);
    });
  });

  it("registers with a digest challenge, refreshes before expiry and unregisters", async () => {
    const sipp = await startSipp("uas-register.xml");
    const h = await harness(sipp);
    await withDiagnostics(h, sipp, async () => {
      const registration = h.ua.register({
        registrar: `127.0.0.1:${sipp.port}`,
        aor: "sip:+4940999888@faxline.test",
        credentials: { username: "faxuser", password: "s3cret" },
        transport: "udp",
        expiresMs: 2000,
      });
      assert.deepEqual(await registration.next(), { type: "registered", expiresMs: 2000 });
      // Granted 2 s: the refresh goes out after 1 s.
      const started = performance.now();
      assert.deepEqual(await registration.next(), { type: "registered", expiresMs: 2000 });
      assert.ok(performance.now() - started >= 900);
      await registration.unregister();
      assert.equal(registration.state, "unregistered");
      await expectSippSuccess(sipp);
      assert.match(sipp.logs(), /REFRESH3 REGISTER/, "the refresh keeps the Call-ID and raises the CSeq");
    });
  });

  it("works over TCP (far end starts T.38)", async () => {
    const sipp = await startSipp("uas-remote-t38.xml", { transport: "tcp" });
    const h = await harness(sipp, "tcp");
    await withDiagnostics(h, sipp, async () => {
      const started = performance.now();
      const call = h.call();
      const answered = await call.next("answered");
      assert.ok(answered);
      recordSetup("remote T.38", "tcp", answered.setupMs, started, performance.now());
      assert.ok(await call.next("t38Switched"));
      assert.equal((await call.hangup()).result, "completed");
      await expectSippSuccess(sipp);
      assert.ok(h.trace.some((e) => e.direction === "out" && e.text.includes("SIP/2.0/TCP")));
    });
  });

  it("works over TLS (Node TLS server in front of SIPp's TCP port)", async () => {
    requirePeer("openssl");
    const dir = mkdtempSync(path.join(tmpdir(), "faxline-tls-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const key = path.join(dir, "key.pem");
    const cert = path.join(dir, "cert.pem");
    const made = spawnSync(
      "openssl",
      ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost", "-keyout", key, "-out", cert],
      { encoding: "utf8" },
    );
    assert.equal(made.status, 0, made.stderr);
    const sipp = await startSipp("uas-accept-t38.xml", { transport: "tcp" });
    const server = tls.createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (secure) => {
      const plain = net.connect(sipp.port, "127.0.0.1");
      secure.pipe(plain).pipe(secure);
      secure.on("error", () => plain.destroy());
      plain.on("error", () => secure.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => server.close());
    const tlsPort = (server.address() as net.AddressInfo).port;
    const h = await harness(sipp, "tls", { tls: { ca: readFileSync(cert) }, targetPort: tlsPort });
    await withDiagnostics(h, sipp, async () => {
      const started = performance.now();
      // SIPp's Contact names its plain TCP port, so in-dialog requests must go to the TLS front
      // end: make it the outbound proxy (every request goes there, as to a trunk's proxy).
      const call = h.call({ outboundProxy: `localhost:${tlsPort}` });
      const answered = await call.next("answered");
      assert.ok(answered, "answered over TLS");
      recordSetup("accept T.38", "tls", answered.setupMs, started, performance.now());
      assert.equal((await call.switchToT38()).result, "switched");
      assert.equal((await call.hangup()).result, "completed");
      await expectSippSuccess(sipp);
      assert.ok(h.trace.some((e) => e.direction === "out" && e.protocol === "tls" && e.text.includes("SIP/2.0/TLS")));
    });
  });
});

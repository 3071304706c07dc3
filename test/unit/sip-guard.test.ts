/**
 * The SIP user agent's guard (issue 30) against hand-written hostile and broken requests over a
 * real UDP socket, a real TCP connection and a real TLS connection: nothing a message carries
 * throws out of the transport (a Via naming port 0 or 70000 used to end the process from
 * dgram.send), broken requests with a usable Via get the 4xx that names their fault, garbage is
 * dropped and counted by reason, a fault of Faxline's own answers 500 to that request alone, and
 * the bounds per source (rates, refusal budget, connection limits, idle connections) hold. The
 * far end is this test's sockets (the fake sits at the network edge); the agent is the real one.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import dgram from "node:dgram";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import tls from "node:tls";
import { after, before, describe, it } from "node:test";
import { SourceLimiter } from "../../src/line/sip/flood-limits.ts";
import { createResponse, readMessage, topVia, type SipResponse } from "../../src/line/sip/sip-message.ts";
import { SipUserAgent, type IncomingInvite, type InviteScreening } from "../../src/line/sip/sip-user-agent.ts";

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function makeCertificate(cn: string): { cert: Buffer; key: Buffer } {
  const dir = mkdtempSync(path.join(tmpdir(), "faxline-sip-tls-"));
  try {
    const key = path.join(dir, "key.pem");
    const cert = path.join(dir, "cert.pem");
    const made = spawnSync(
      "openssl",
      ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", `/CN=${cn}`, "-addext", `subjectAltName=DNS:${cn}`, "-keyout", key, "-out", cert],
      { encoding: "utf8" },
    );
    assert.equal(made.status, 0, `openssl (Debian package openssl, installed by scripts/install.sh): ${made.stderr}`);
    return { cert: readFileSync(cert), key: readFileSync(key) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

let seq = 0;
/** A request as a carrier would send it, with `edit` applied to its text. */
function request(method: string, port: number, edit: (text: string) => string = (t) => t, body = ""): string {
  seq++;
  const lines = [
    `${method} sip:+4930123456@127.0.0.1 SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${port};branch=z9hG4bK-guard-${seq};rport`,
    "Max-Forwards: 70",
    `From: <sip:+4940999@127.0.0.1>;tag=from${seq}`,
    "To: <sip:+4930123456@127.0.0.1>",
    `Call-ID: guard-${seq}@127.0.0.1`,
    `CSeq: 1 ${method}`,
    "Contact: <sip:+4940999@127.0.0.1:5099>",
    ...(body !== "" ? ["Content-Type: application/sdp"] : []),
    `Content-Length: ${Buffer.byteLength(body)}`,
    "",
    body,
  ];
  return edit(lines.join("\r\n"));
}

/** A UDP far end: sends datagrams and collects every response that comes back. */
class UdpPeer {
  readonly socket = dgram.createSocket("udp4");
  readonly responses: SipResponse[] = [];
  port = 0;
  async start(): Promise<void> {
    this.socket.on("message", (data) => {
      // Leniently: a 400 to a request without Call-ID has none either.
      const read = readMessage(data);
      if (read.kind === "message" && read.message.kind === "response") this.responses.push(read.message);
    });
    await new Promise<void>((r) => this.socket.bind(0, "127.0.0.1", r));
    this.port = this.socket.address().port;
    cleanups.push(() => new Promise<void>((r) => this.socket.close(() => r())));
  }
  send(text: string | Buffer, to: number): void {
    this.socket.send(typeof text === "string" ? Buffer.from(text, "latin1") : text, to, "127.0.0.1");
  }
  /** The final response to the request `text` (matched by its Via branch), waited for up to 2 s. */
  async finalFor(text: string): Promise<SipResponse> {
    const branch = branchOf(text);
    for (let i = 0; i < 200; i++) {
      const found = this.answerTo(text);
      if (found) return found;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`no final response for ${branch}`);
  }
  /** The final response to `text` received so far, or undefined. */
  answerTo(text: string): SipResponse | undefined {
    const branch = branchOf(text);
    return this.responses.find((r) => r.status >= 200 && topVia(r).params.get("branch") === branch);
  }
}

function branchOf(text: string): string {
  return /branch=([^;\s]+)/.exec(text)![1]!;
}

async function settle(ms = 100): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

describe("the SIP guard over UDP", () => {
  let ua: SipUserAgent;
  let peer: UdpPeer;
  const handled: IncomingInvite[] = [];
  let handler: (invite: IncomingInvite) => void = (invite) => handled.push(invite);

  before(async () => {
    ua = new SipUserAgent({ localAddress: "127.0.0.1" });
    await ua.start();
    ua.onIncomingCall((invite) => handler(invite));
    cleanups.push(() => ua.close(0));
    peer = new UdpPeer();
    await peer.start();
  });

  it("drops a request whose Via names port 0 or 70000 and answers the next one (it used to end the process)", async () => {
    const before = ua.drops.counts.unparsable;
    for (const bad of ["127.0.0.1:0", "127.0.0.1:70000", "127.0.0.1:-5", "127.0.0.1:abc", "exa mple", "[::1", "127.0.0.1:5060;rport=0", "127.0.0.1:5060;received=nowhere"]) {
      for (const method of ["OPTIONS", "INVITE"]) peer.send(request(method, peer.port, (t) => t.replace(/Via: [^\r]+/, `Via: SIP/2.0/UDP ${bad};branch=z9hG4bK-bad-${seq}`)), ua.udpLocal.port);
    }
    const ok = request("OPTIONS", peer.port);
    peer.send(ok, ua.udpLocal.port);
    assert.equal((await peer.finalFor((ok))).status, 200, "still answering");
    assert.equal(ua.drops.counts.unparsable - before, 16, "each counted");
    assert.equal(handled.length, 0, "none reached the line");
  });

  it("answers a broken request with a usable Via with the 4xx that names its fault", async () => {
    const cases: [string, number, RegExp][] = [
      [request("OPTIONS", peer.port, (t) => t.replace(/Call-ID: \S+\r\n/, "")), 400, /Missing Call-ID Header/],
      [request("OPTIONS", peer.port, (t) => t.replace("CSeq: 1 OPTIONS", "CSeq: one OPTIONS")), 400, /Bad CSeq Header/],
      [request("OPTIONS", peer.port, (t) => t.replace("CSeq: 1 OPTIONS", "CSeq: 1 INVITE")), 400, /CSeq Method Does Not Match/],
      [request("OPTIONS", peer.port, (t) => t.replace(/From: [^\r]+/, "From: <sip:+4940999@127.0.0.1;tag=x")), 400, /Bad From Header/],
      [request("OPTIONS", peer.port, (t) => t.replace("Content-Length: 0", "Content-Length: 40")), 400, /Bad Content-Length Header/],
      [request("OPTIONS", peer.port, (t) => t.replace("Content-Length: 0", "Content-Length: -1")), 400, /Bad Content-Length Header/],
      [request("OPTIONS", peer.port, (t) => t.replace("Max-Forwards: 70", "Max-Forwards: seventy")), 400, /Bad Max-Forwards Header/],
      [request("OPTIONS", peer.port, (t) => t.replace("Max-Forwards: 70", "Max Forwards 70")), 400, /Bad Header Line/],
      [request("OPTIONS", peer.port, (t) => t.replace("OPTIONS sip:", "OPTIONS http:")), 416, /Unsupported URI Scheme/],
      [request("OPTIONS", peer.port, (t) => t.replace("OPTIONS sip:+4930123456@127.0.0.1", "OPTIONS sip:+4930123456@127.0.0.1:0")), 400, /Bad Request-URI/],
      [request("OPTIONS", peer.port, (t) => t.replace("SIP/2.0\r\nVia", "SIP/3.0\r\nVia")), 505, /Version Not Supported/],
      [request("OPTIONS", peer.port, (t) => t.replace("Max-Forwards: 70", "Require: foo, timer")), 420, /Bad Extension/],
      [request("INVITE", peer.port, (t) => t.replace("Content-Type: application/sdp", "Content-Type: text/plain"), "hello"), 415, /Unsupported Media Type/],
      [request("INVITE", peer.port, (t) => t.replace("Content-Type: application/sdp", "Content-Type: application/sdp\r\nContent-Encoding: gzip"), "v=0"), 415, /Unsupported Media Type/],
      [request("INFO", peer.port, (t) => t, "x".repeat(20_000)), 413, /Request Entity Too Large/],
    ];
    for (const [text, status, phrase] of cases) {
      peer.send(text, ua.udpLocal.port);
      const response = await peer.finalFor((text));
      assert.equal(response.status, status, `${text.split("\r\n")[0]}: ${response.status} ${response.reason}`);
      assert.match(response.reason, phrase);
    }
    const unsupported = peer.responses.find((r) => r.status === 420)!;
    assert.equal(unsupported.headers.get("unsupported"), "foo", "420 names what is not supported");
    assert.equal(peer.responses.find((r) => r.status === 415)!.headers.get("accept"), "application/sdp");
    const missing = peer.responses.find((r) => /Missing Call-ID/.test(r.reason))!;
    assert.equal(missing.headers.get("call-id"), undefined, "no Call-ID invented");
    assert.equal(handled.length, 0, "none reached the line");
  });

  it("drops garbage, responses that match nothing and broken ACKs, counting each by reason", async () => {
    const counts = { ...ua.drops.counts };
    const garbage = [Buffer.from([0, 1, 2, 3, 255, 254]), Buffer.from("HELLO\r\n\r\n"), Buffer.from("INVITE sip:a@b SIP/2.0\r\n"), Buffer.from(request("OPTIONS", peer.port, (t) => t.replace(/Via: [^\r]+\r\n/, "")))];
    for (const g of garbage) peer.send(g, ua.udpLocal.port);
    peer.send("SIP/2.0 200 OK\r\nCall-ID: x\r\n\r\n", ua.udpLocal.port);
    peer.send(request("ACK", peer.port, (t) => t.replace(/Call-ID: \S+\r\n/, "")), ua.udpLocal.port);
    const ok = request("OPTIONS", peer.port);
    peer.send(ok, ua.udpLocal.port);
    await peer.finalFor((ok));
    assert.equal(ua.drops.counts.unparsable - counts.unparsable, garbage.length + 1, "garbage and the broken ACK");
    assert.equal(ua.drops.counts.bad_response - counts.bad_response, 1);
  });

  it("answers requests outside any call statelessly, keeping nothing: OPTIONS 200, BYE 481, REGISTER 405, unknown 501", async () => {
    const cases: [string, number][] = [
      [request("OPTIONS", peer.port), 200],
      [request("BYE", peer.port), 481],
      [request("INFO", peer.port), 481],
      [request("REGISTER", peer.port), 405],
      [request("FROB", peer.port), 501],
    ];
    for (const [text, status] of cases) {
      peer.send(text, ua.udpLocal.port);
      assert.equal((await peer.finalFor(text)).status, status, text.split(" ")[0]);
    }
    assert.equal(ua.stats.serverTransactions, 0, "no transaction kept for any of them");
    assert.match(peer.answerTo(cases[3]![0])!.headers.get("allow") ?? "", /INVITE/);
    // A retransmission gets the same answer, with the same To tag (§8.2.7).
    const bye = cases[1]![0];
    const before = peer.responses.length;
    peer.send(bye, ua.udpLocal.port);
    for (let i = 0; i < 100 && peer.responses.length === before; i++) await settle(10);
    const [first, again] = peer.responses.filter((r) => topVia(r).params.get("branch") === branchOf(bye));
    assert.equal(again!.headers.get("to"), first!.headers.get("to"));
  });

  it("answers 500 to a request whose handling fails inside Faxline, and only to it", async () => {
    handler = () => {
      throw new Error("a fault of Faxline's own");
    };
    const invite = request("INVITE", peer.port);
    peer.send(invite, ua.udpLocal.port);
    const response = await peer.finalFor((invite));
    assert.equal(response.status, 500);
    assert.equal(ua.drops.counts.internal, 1);
    handler = (i) => handled.push(i);
    const next = request("INVITE", peer.port);
    peer.send(next, ua.udpLocal.port);
    for (let i = 0; i < 100 && handled.length === 0; i++) await settle(10);
    assert.equal(handled.length, 1, "the next INVITE reaches the line");
    handled[0]!.tx.respond(parseResponse(handled[0]!, 486));
    assert.equal((await peer.finalFor((next))).status, 486);
    handled.splice(0);
  });

  it("drops an answer whose destination is no port, instead of throwing (a 486 to a Via naming port 0)", async () => {
    // The Via checks at reading stop such a request; this is the send path's own check behind them.
    handler = (invite) => {
      invite.request.headers.set("via", "SIP/2.0/UDP 127.0.0.1:0;branch=z9hG4bKlate");
      invite.tx.respond(parseResponse(invite, 486));
      handled.push(invite);
    };
    const before = ua.drops.counts.unroutable_response;
    peer.send(request("INVITE", peer.port), ua.udpLocal.port);
    for (let i = 0; i < 100 && handled.length === 0; i++) await settle(10);
    assert.equal(ua.drops.counts.unroutable_response - before, 1);
    handler = (i) => handled.push(i);
    handled.splice(0);
    const ok = request("OPTIONS", peer.port);
    peer.send(ok, ua.udpLocal.port);
    assert.equal((await peer.finalFor((ok))).status, 200);
  });
});

function parseResponse(invite: IncomingInvite, status: number): SipResponse {
  return createResponse(invite.request, status, "Refused", "t1");
}

describe("the SIP guard's bounds per source", () => {
  it("drops requests over the source's rate, refuses a source that is no trunk's statelessly within its budget, then ignores it", async () => {
    let screening: InviteScreening = "refuse";
    let now = 0;
    const limiter = new SourceLimiter({ requestsPerSecond: 10, requestBurst: 20, refusalsPerMinute: 3, invitesPerSecond: 1, inviteBurst: 2 }, () => now);
    const ua = new SipUserAgent({
      localAddress: "127.0.0.1",
      limiter,
      screenNewInvite: (source) => (screening === "refuse" ? (limiter.admitRefusal(source.address) ? "refuse" : "drop") : screening),
    });
    await ua.start();
    cleanups.push(() => ua.close(0));
    const handled: IncomingInvite[] = [];
    ua.onIncomingCall((invite) => handled.push(invite));
    const peer = new UdpPeer();
    await peer.start();

    const invites = Array.from({ length: 5 }, () => request("INVITE", peer.port));
    for (const i of invites) peer.send(i, ua.udpLocal.port);
    await peer.finalFor((invites[2]!));
    await settle();
    assert.deepEqual(invites.map((i) => peer.answerTo(i)?.status ?? null), [403, 403, 403, null, null], "three refusals, then silence");
    assert.equal(ua.stats.serverTransactions, 0, "nothing kept for them");
    assert.equal(ua.drops.counts.refused_source, 2);

    // A trunk's source over its INVITE rate gets 503 with Retry-After.
    screening = "trunk";
    const trunkInvites = Array.from({ length: 3 }, () => request("INVITE", peer.port));
    for (const i of trunkInvites) peer.send(i, ua.udpLocal.port);
    const busy = await peer.finalFor((trunkInvites[2]!));
    assert.equal(busy.status, 503);
    assert.equal(busy.headers.get("retry-after"), "5");
    assert.equal(handled.length, 2, "the two within the burst reach the line");

    // Past the request burst (20, 10 of them used above), requests are dropped unanswered.
    const before = ua.drops.counts.rate_limited;
    const options = Array.from({ length: 20 }, () => request("OPTIONS", peer.port));
    for (const o of options) peer.send(o, ua.udpLocal.port);
    await peer.finalFor((options[11]!));
    await settle(200);
    // 8 of the burst's 20 went to the INVITEs above: 12 answered, 8 dropped.
    assert.equal(ua.drops.counts.rate_limited - before, 8);
    now += 10_000; // ten seconds later the bucket is full again
    const later = request("OPTIONS", peer.port);
    peer.send(later, ua.udpLocal.port);
    assert.equal((await peer.finalFor((later))).status, 200);
    for (const invite of handled) invite.tx.dispose();
  });
});

describe("the SIP listeners: TCP and TLS in", () => {
  const first = makeCertificate("first.faxline.test");
  const second = makeCertificate("second.faxline.test");
  let ua: SipUserAgent;
  const handled: IncomingInvite[] = [];

  before(async () => {
    ua = new SipUserAgent({
      localAddress: "127.0.0.1",
      listen: { tcpPort: 0, tlsPort: 0, tlsServer: first },
      connectionLimits: { maxConnectionsPerSource: 3, firstMessageTimeoutMs: 300 },
    });
    await ua.start();
    ua.onIncomingCall((invite) => handled.push(invite));
    cleanups.push(() => ua.close(0));
  });

  /** Sends `text` over `socket` and resolves with the first response read back. */
  function exchange(socket: net.Socket, text: string): Promise<SipResponse> {
    return new Promise((resolve, reject) => {
      let buffer = "";
      const onData = (chunk: Buffer): void => {
        buffer += chunk.toString("latin1");
        const end = buffer.indexOf("\r\n\r\n");
        if (end === -1) return;
        socket.off("data", onData);
        const read = readMessage(buffer.slice(0, end + 4));
        if (read.kind === "message" && read.message.kind === "response") resolve(read.message);
        else reject(new Error(`not a response: ${buffer.slice(0, 80)}`));
      };
      socket.on("data", onData);
      socket.once("error", reject);
      socket.write(text);
    });
  }

  function tcpConnect(): Promise<net.Socket> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(ua.listening.tcp!.port, "127.0.0.1", () => resolve(socket));
      socket.once("error", reject);
      cleanups.push(() => void socket.destroy());
    });
  }

  function tlsConnect(ca: Buffer, servername: string): Promise<tls.TLSSocket> {
    return new Promise((resolve, reject) => {
      const socket = tls.connect({ port: ua.listening.tls!.port, host: "127.0.0.1", ca, servername }, () => resolve(socket));
      socket.once("error", reject);
      cleanups.push(() => void socket.destroy());
    });
  }

  async function closeAndSettle(socket: net.Socket): Promise<void> {
    socket.destroy();
    for (let i = 0; i < 100 && ua.stats.acceptedConnections > 0; i++) await settle(10);
    assert.equal(ua.stats.acceptedConnections, 0, "the listener let the connection go");
  }

  const over = (transport: string, text: string): string => text.replace("SIP/2.0/UDP", `SIP/2.0/${transport}`);

  it("answers requests over TCP on the same connection, and a broken one with its 4xx", async () => {
    const socket = await tcpConnect();
    const ok = await exchange(socket, over("TCP", request("OPTIONS", 5060)));
    assert.equal(ok.status, 200);
    const bad = await exchange(socket, over("TCP", request("OPTIONS", 5060, (t) => t.replace(/Call-ID: \S+\r\n/, ""))));
    assert.equal(bad.status, 400);
    assert.match(bad.reason, /Missing Call-ID/);
    assert.equal((await exchange(socket, over("TCP", request("OPTIONS", 5060)))).status, 200, "the connection stays usable");
    await closeAndSettle(socket);
  });

  it("ends an INVITE unanswered, without a fault, when its TCP connection closes while the line checks it (found by the robustness suite)", async () => {
    const socket = await tcpConnect();
    const before = ua.drops.counts.send_failed;
    socket.write(over("TCP", request("INVITE", 5060)));
    for (let i = 0; i < 100 && handled.length === 0; i++) await settle(10);
    assert.equal(handled.length, 1, "the INVITE reached the line");
    const invite = handled.splice(0)[0]!;
    await closeAndSettle(socket);
    // It used to throw SipTransportError ("TCP connection from … is closed"): the line logged a
    // fault of its own and tried a 500 that could not be sent either.
    const drops: string[] = [];
    ua.drops.onDrop((drop) => drops.push(drop.detail));
    const call = await ua.answerCall(invite, { t38: true, localMedia: { address: "127.0.0.1", audioPort: 9, t38Port: 9 } });
    assert.equal(call, null);
    assert.equal(ua.drops.counts.send_failed - before, 1, "counted");
    // Not by a new connection to the caller's side's ephemeral port, which failed (or, elsewhere, hung for the connect timeout).
    assert.match(drops.join("\n"), /TCP connection from 127\.0\.0\.1:\d+ is closed/);
    assert.equal(invite.tx.state, "terminated", "the INVITE's transaction is gone");
    assert.equal(ua.stats.serverTransactions, 0);
  });

  it("closes a TCP stream whose framing breaks, and counts it", async () => {
    const socket = await tcpConnect();
    const before = ua.drops.counts.stream_framing;
    const closed = new Promise<void>((r) => socket.once("close", () => r()));
    socket.write("OPTIONS sip:a@b SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1;branch=z9hG4bK1\r\n\r\n");
    await closed;
    assert.equal(ua.drops.counts.stream_framing - before, 1);
  });

  it("bounds connections per source and closes one that sends nothing", async () => {
    const before = ua.drops.counts.connection_limit;
    const idleBefore = ua.drops.counts.idle_connection;
    const sockets = await Promise.all(Array.from({ length: 5 }, () => tcpConnect()));
    const closed = await Promise.all(sockets.map((s) => new Promise<boolean>((r) => s.once("close", () => r(true)))));
    // Three were accepted and closed after 300 ms of silence; two were over the bound at once.
    assert.deepEqual(closed, [true, true, true, true, true]);
    assert.equal(ua.drops.counts.connection_limit - before, 2);
    assert.ok(ua.drops.counts.idle_connection - idleBefore >= 3);
  });

  it("takes calls over TLS, and a reloaded certificate serves new connections", async () => {
    const socket = await tlsConnect(first.cert, "first.faxline.test");
    assert.equal((await exchange(socket, over("TLS", request("OPTIONS", 5061)))).status, 200);
    const invite = over("TLS", request("INVITE", 5061));
    socket.write(invite);
    for (let i = 0; i < 100 && handled.length === 0; i++) await settle(10);
    assert.equal(handled.length, 1, "the INVITE reached the line");
    assert.equal(handled[0]!.source.protocol, "tls");
    handled[0]!.tx.dispose();
    await closeAndSettle(socket);
    ua.setTlsCredentials(second);
    await assert.rejects(tlsConnect(first.cert, "first.faxline.test"), /self.signed|certificate|altnames/i, "the old certificate is gone");
    const renewed = await tlsConnect(second.cert, "second.faxline.test");
    assert.equal((await exchange(renewed, over("TLS", request("OPTIONS", 5061)))).status, 200);
    await closeAndSettle(renewed);
  });
});

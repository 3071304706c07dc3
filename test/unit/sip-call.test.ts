/**
 * SipCall corner cases against a scripted far end: a UDP socket in this test that reads our
 * messages and answers with hand-written ones (the fake sits at the network edge, house style
 * §10.1 point 5). The user agent runs on a manual clock so the 491 back-off and the timers are
 * stepped, not waited for.
 */
import assert from "node:assert/strict";
import dgram from "node:dgram";
import { after, describe, it } from "node:test";
import { ManualClock } from "../../src/lib/clock.ts";
import type { SipCall } from "../../src/line/sip/sip-call.ts";
import { cseqOf, parseMessage, type SipMessage, type SipRequest, type SipResponse } from "../../src/line/sip/sip-message.ts";
import { SipUserAgent, type PlaceCallOptions } from "../../src/line/sip/sip-user-agent.ts";

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const AUDIO_ANSWER = (version: number, port = 30_000, pt = "8 PCMA"): string =>
  sdp(version, [`m=audio ${port} RTP/AVP ${pt.split(" ")[0]}`, `a=rtpmap:${pt.replace(" ", " ")}/8000`]);
const T38 = (version: number, port = 30_002): string =>
  sdp(version, [`m=image ${port} udptl t38`, "a=T38FaxVersion:0", "a=T38MaxBitRate:14400", "a=T38FaxRateManagement:transferredTCF", "a=T38FaxMaxDatagram:320", "a=T38FaxUdpEC:t38UDPRedundancy"]);

function sdp(version: number, media: string[]): string {
  return ["v=0", `o=peer 99 ${version} IN IP4 127.0.0.1`, "s=-", "c=IN IP4 127.0.0.1", "t=0 0", ...media, ""].join("\r\n");
}

/** The far end: receives our messages in order and sends what the test writes. */
class ScriptedPeer {
  readonly socket = dgram.createSocket("udp4");
  readonly #queue: { message: SipMessage; from: dgram.RemoteInfo }[] = [];
  readonly #waiters: ((m: { message: SipMessage; from: dgram.RemoteInfo }) => void)[] = [];
  port = 0;
  /** Our (the UA's) address as seen in its INVITE. */
  ua: { address: string; port: number } | null = null;
  invite: SipRequest | null = null;
  toTag = "peer-tag";
  #seq = 0;
  readonly #seen = new Set<string>();
  /** Drop retransmissions. (Default: true) */
  dedupe = true;

  async start(): Promise<void> {
    this.socket.on("message", (data, from) => {
      const message = parseMessage(data);
      // Retransmissions (timers A, E, G run as the test advances the clock) are not new messages.
      const key = `${message.kind === "request" ? message.method : message.status} ${message.headers.get("cseq")} ${message.headers.get("via")}`;
      if (this.dedupe && this.#seen.has(key)) return;
      this.#seen.add(key);
      const waiter = this.#waiters.shift();
      if (waiter) waiter({ message, from });
      else this.#queue.push({ message, from });
    });
    await new Promise<void>((r) => this.socket.bind(0, "127.0.0.1", r));
    this.port = this.socket.address().port;
    cleanups.push(() => new Promise<void>((r) => this.socket.close(() => r())));
  }

  next(): Promise<SipMessage> {
    const queued = this.#queue.shift();
    if (queued) {
      this.ua = { address: queued.from.address, port: queued.from.port };
      return Promise.resolve(queued.message);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("peer: nothing received")), 3000);
      this.#waiters.push(({ message, from }) => {
        clearTimeout(timer);
        this.ua = { address: from.address, port: from.port };
        resolve(message);
      });
    });
  }

  async expectRequest(method: string): Promise<SipRequest> {
    const m = await this.next();
    assert.equal(m.kind === "request" ? m.method : `response ${m.kind === "response" ? m.status : ""}`, method);
    return m as SipRequest;
  }

  async expectResponse(status: number): Promise<SipResponse> {
    const m = await this.next();
    assert.equal(m.kind === "response" ? m.status : `request ${m.kind === "request" ? m.method : ""}`, status);
    return m as SipResponse;
  }

  /** Nothing more arrives within `ms` of real time. */
  async expectSilence(ms: number): Promise<void> {
    await new Promise((r) => setTimeout(r, ms));
    assert.equal(this.#queue.length, 0, `unexpected: ${this.#queue.map((q) => (q.message.kind === "request" ? q.message.method : q.message.status)).join(", ")}`);
  }

  send(lines: string[], body = ""): void {
    const head = lines.filter((l) => l !== "");
    if (body !== "") head.push("Content-Type: application/sdp");
    head.push(`Content-Length: ${Buffer.byteLength(body)}`);
    this.socket.send(`${head.join("\r\n")}\r\n\r\n${body}`, this.ua!.port, this.ua!.address);
  }

  respond(request: SipRequest, status: number, reason: string, body = "", toTag: string | null = this.toTag, extra: string[] = []): void {
    const to = request.headers.get("to")!;
    this.send(
      [
        `SIP/2.0 ${status} ${reason}`,
        ...request.headers.getList("via").map((v) => `Via: ${v}`),
        `From: ${request.headers.get("from")}`,
        `To: ${toTag !== null && !/;tag=/.test(to) ? `${to};tag=${toTag}` : to}`,
        `Call-ID: ${request.headers.get("call-id")}`,
        `CSeq: ${request.headers.get("cseq")}`,
        `Contact: <sip:peer@127.0.0.1:${this.port}>`,
        ...extra,
      ],
      body,
    );
  }

  /** A request from the far end inside the dialog. */
  request(method: string, body = "", seq?: number, extra: string[] = []): void {
    const invite = this.invite!;
    this.#seq = seq ?? this.#seq + 1;
    this.send(
      [
        `${method} ${/<([^>]+)>/.exec(invite.headers.get("contact")!)![1]} SIP/2.0`,
        `Via: SIP/2.0/UDP 127.0.0.1:${this.port};branch=z9hG4bKpeer${method}${this.#seq}`,
        `From: <sip:peer@127.0.0.1:${this.port}>;tag=${this.toTag}`,
        `To: ${invite.headers.get("from")}`,
        `Call-ID: ${invite.headers.get("call-id")}`,
        `CSeq: ${this.#seq} ${method}`,
        `Contact: <sip:peer@127.0.0.1:${this.port}>`,
        "Max-Forwards: 70",
        ...extra,
      ],
      body,
    );
  }

  ack(seq: number, body = ""): void {
    const invite = this.invite!;
    this.send(
      [
        `ACK ${/<([^>]+)>/.exec(invite.headers.get("contact")!)![1]} SIP/2.0`,
        `Via: SIP/2.0/UDP 127.0.0.1:${this.port};branch=z9hG4bKpeerack${seq}`,
        `From: <sip:peer@127.0.0.1:${this.port}>;tag=${this.toTag}`,
        `To: ${invite.headers.get("from")}`,
        `Call-ID: ${invite.headers.get("call-id")}`,
        `CSeq: ${seq} ACK`,
        "Max-Forwards: 70",
      ],
      body,
    );
  }

  /** INVITE → 200 (audio) → ACK. */
  async answer(body = AUDIO_ANSWER(1), extra: string[] = []): Promise<void> {
    this.invite = await this.expectRequest("INVITE");
    this.respond(this.invite, 200, "OK", body, this.toTag, extra);
    await this.expectRequest("ACK");
  }
}

async function setup(overrides: Partial<PlaceCallOptions> = {}): Promise<{ peer: ScriptedPeer; ua: SipUserAgent; call: SipCall; clock: ManualClock }> {
  const peer = new ScriptedPeer();
  await peer.start();
  const clock = new ManualClock();
  const ua = new SipUserAgent({ localAddress: "127.0.0.1", clock, ...(process.env.SIP_TRACE ? { trace: (e: { direction: string; text: string }) => console.log(`---- ${e.direction}\n${e.text}`) } : {}) });
  await ua.start();
  cleanups.push(() => ua.close(0));
  const call = ua.placeCall({
    target: `sip:+4930123456@127.0.0.1:${peer.port}`,
    from: "sip:+4940999888@faxline.test",
    transport: "udp",
    t38: true,
    ringTimeoutMs: 60_000,
    localMedia: { address: "127.0.0.1", audioPort: 40_000, t38Port: 40_002 },
    ...overrides,
  });
  return { peer, ua, call, clock };
}

describe("sip call: re-INVITE corner cases", () => {
  it("retries its T.38 re-INVITE after a 491 (glare), after 2.1–4 s", async () => {
    const { peer, call, clock } = await setup();
    await peer.answer();
    const switching = call.switchToT38();
    const first = await peer.expectRequest("INVITE");
    peer.respond(first, 491, "Request Pending");
    await peer.expectRequest("ACK");
    await clock.advance(2000);
    await peer.expectSilence(50);
    await clock.advance(2000);
    const retry = await peer.expectRequest("INVITE");
    assert.ok(cseqOf(retry).seq > cseqOf(first).seq);
    peer.respond(retry, 200, "OK", T38(2));
    await peer.expectRequest("ACK");
    const result = await switching;
    assert.equal(result.result, "switched");
    assert.equal(result.result === "switched" && result.media.params.maxDatagram, 320);
  });

  it("takes the far end's T.38 re-INVITE while its own waits after a 491, and does not send it again", async () => {
    const { peer, call, clock } = await setup();
    await peer.answer();
    const switching = call.switchToT38();
    const ours = await peer.expectRequest("INVITE");
    peer.respond(ours, 491, "Request Pending");
    await peer.expectRequest("ACK");
    peer.request("INVITE", T38(2));
    await peer.expectResponse(200);
    peer.ack(1);
    const result = await switching;
    assert.equal(result.result, "switched");
    assert.equal((await call.next("t38Switched", { includePast: true }))?.initiatedBy, "remote");
    await new Promise((r) => setTimeout(r, 20));
    await clock.advance(5000);
    await peer.expectSilence(50);
  });

  it("answers the far end's re-INVITE with 491 while its own is pending", async () => {
    const { peer, call } = await setup();
    await peer.answer();
    const switching = call.switchToT38();
    const ours = await peer.expectRequest("INVITE");
    peer.request("INVITE", T38(2));
    await peer.expectResponse(491);
    peer.ack(1);
    peer.respond(ours, 200, "OK", T38(2));
    await peer.expectRequest("ACK");
    assert.equal((await switching).result, "switched");
  });

  it("goes back to audio when a 2xx rejects the image stream (port 0), then reports the refusal", async () => {
    const { peer, call } = await setup();
    await peer.answer();
    const switching = call.switchToT38();
    const ours = await peer.expectRequest("INVITE");
    peer.respond(ours, 200, "OK", T38(2, 0));
    await peer.expectRequest("ACK");
    const restore = await peer.expectRequest("INVITE");
    assert.match(restore.body, /m=audio 40000 RTP\/AVP 8 0/);
    peer.respond(restore, 200, "OK", AUDIO_ANSWER(3, 30_010));
    await peer.expectRequest("ACK");
    const result = await switching;
    assert.equal(result.result, "refused");
    assert.equal(result.result === "refused" && result.media.remote.port, 30_010);
    assert.equal(call.media?.kind, "audio");
  });

  it("answers a T.38 re-INVITE with 488 when T.38 is off for the call, and keeps the audio", async () => {
    const { peer, call } = await setup({ t38: false });
    await peer.answer();
    peer.request("INVITE", T38(2));
    await peer.expectResponse(488);
    peer.ack(1);
    assert.equal(call.media?.kind, "audio");
    assert.ok(!call.events.some((e) => e.type === "t38Switched"));
  });

  it("offers its current SDP in the 2xx to an offerless re-INVITE and takes the answer from the ACK", async () => {
    const { peer, call } = await setup();
    await peer.answer();
    peer.request("INVITE");
    const ok = await peer.expectResponse(200);
    assert.match(ok.body, /m=audio 40000 RTP\/AVP 8 0/, "the whole offer, both codecs");
    peer.ack(1, AUDIO_ANSWER(2, 30_020));
    const changed = await call.next("mediaChanged");
    assert.equal(changed?.media.remote.port, 30_020);
  });

  it("reports the far end's switch back to audio after T.38 as mediaChanged", async () => {
    const { peer, call } = await setup();
    await peer.answer();
    peer.request("INVITE", T38(2));
    const t38Answer = await peer.expectResponse(200);
    peer.ack(1);
    assert.match(t38Answer.body, /m=image 40002 udptl t38/);
    peer.request("INVITE", AUDIO_ANSWER(3));
    const audioAnswer = await peer.expectResponse(200);
    peer.ack(2);
    assert.match(audioAnswer.body, /m=audio 40000 RTP\/AVP 8\r\n/);
    const changed = await call.next("mediaChanged", { includePast: true });
    assert.equal(changed?.media.kind, "audio");
    const version = (b: string): number => Number(/o=\S+ \d+ (\d+)/.exec(b)![1]);
    assert.ok(version(audioAnswer.body) > version(t38Answer.body), "a new SDP, a new version");
  });

  it("answers a lower CSeq with 500 (RFC 3261 §12.2.2)", async () => {
    const { peer } = await setup();
    await peer.answer();
    peer.request("OPTIONS", "", 5);
    await peer.expectResponse(200);
    peer.request("OPTIONS", "", 4);
    await peer.expectResponse(500);
  });

  it("answers methods it does not implement with 501", async () => {
    const { peer } = await setup();
    await peer.answer();
    peer.request("REFER");
    await peer.expectResponse(501);
  });
});

describe("sip call: answers", () => {
  it("ACKs a retransmitted 2xx again (our ACK was lost)", async () => {
    const { peer, call } = await setup();
    peer.dedupe = false;
    peer.invite = await peer.expectRequest("INVITE");
    peer.respond(peer.invite, 200, "OK", AUDIO_ANSWER(1));
    await peer.expectRequest("ACK");
    peer.respond(peer.invite, 200, "OK", AUDIO_ANSWER(1));
    await peer.expectRequest("ACK");
    assert.equal(call.events.filter((e) => e.type === "answered").length, 1);
  });

  it("ACKs and ends a second 2xx from another fork", async () => {
    const { peer, call } = await setup();
    peer.invite = await peer.expectRequest("INVITE");
    peer.respond(peer.invite, 200, "OK", AUDIO_ANSWER(1));
    await peer.expectRequest("ACK");
    peer.respond(peer.invite, 200, "OK", AUDIO_ANSWER(1), "other-fork");
    const ack = await peer.expectRequest("ACK");
    assert.match(ack.headers.get("to")!, /tag=other-fork/);
    const bye = await peer.expectRequest("BYE");
    assert.match(bye.headers.get("to")!, /tag=other-fork/);
    assert.equal(call.state, "confirmed");
  });

  it("hangs up an answer without a codec in common: phase answer, cause media", async () => {
    const { peer, call } = await setup();
    peer.invite = await peer.expectRequest("INVITE");
    peer.respond(peer.invite, 200, "OK", AUDIO_ANSWER(1, 30_000, "18 G729"));
    await peer.expectRequest("ACK");
    const bye = await peer.expectRequest("BYE");
    peer.respond(bye, 200, "OK");
    const outcome = await call.outcome;
    assert.equal(outcome.result === "failed" && `${outcome.phase}/${outcome.cause}`, "answer/media");
  });

  it("answers OPTIONS outside any call with 200 and a new INVITE with 603", async () => {
    const { peer, ua } = await setup();
    peer.invite = await peer.expectRequest("INVITE");
    const local = ua.udpLocal;
    const base = (method: string): string[] => [
      `${method} sip:faxline@127.0.0.1:${local.port} SIP/2.0`,
      `Via: SIP/2.0/UDP 127.0.0.1:${peer.port};branch=z9hG4bKout${method}`,
      `From: <sip:carrier@127.0.0.1>;tag=x`,
      "To: <sip:faxline@127.0.0.1>",
      `Call-ID: other-${method}`,
      `CSeq: 1 ${method}`,
      "Max-Forwards: 70",
    ];
    peer.send(base("OPTIONS"));
    await peer.expectResponse(200);
    peer.send(base("INVITE"), AUDIO_ANSWER(1));
    await peer.expectResponse(603);
  });

  it("answers OPTIONS outside any call (a balancer's probe) with 503 while its availability check names a reason, 200 otherwise; both say what it takes", async () => {
    const { peer, ua } = await setup();
    peer.invite = await peer.expectRequest("INVITE");
    let reason: string | null = "the node is shutting down";
    ua.setAvailability(() => reason);
    const local = ua.udpLocal;
    let n = 0;
    const probe = (): void =>
      peer.send([
        `OPTIONS sip:127.0.0.1:${local.port} SIP/2.0`,
        `Via: SIP/2.0/UDP 127.0.0.1:${peer.port};branch=z9hG4bKprobe${++n}`,
        "From: <sip:balancer@127.0.0.2>;tag=probe",
        `To: <sip:127.0.0.1:${local.port}>`,
        `Call-ID: probe-${n}`,
        "CSeq: 10 OPTIONS",
        "Max-Forwards: 70",
      ]);
    probe();
    const refused = await peer.expectResponse(503);
    assert.equal(refused.reason, "Service Unavailable (the node is shutting down)");
    reason = null;
    probe();
    const ok = await peer.expectResponse(200);
    for (const answer of [refused, ok]) {
      assert.equal(answer.headers.get("allow"), "INVITE, ACK, CANCEL, BYE, OPTIONS, UPDATE, INFO");
      assert.equal(answer.headers.get("accept"), "application/sdp");
      assert.equal(answer.headers.get("supported"), "timer, 100rel");
      assert.equal(answer.headers.get("server"), "Faxline");
      assert.match(answer.headers.get("to") ?? "", /;tag=/);
    }
  });
});

describe("sip call: session timers (RFC 4028), placing the call", () => {
  it("offers timers; as the refresher it sends UPDATE at half the interval when the far end allows UPDATE, and again after each refresh", async () => {
    const { peer, call, clock } = await setup();
    peer.invite = await peer.expectRequest("INVITE");
    assert.match(peer.invite.headers.get("supported") ?? "", /\btimer\b/);
    peer.respond(peer.invite, 200, "OK", AUDIO_ANSWER(1), peer.toTag, ["Session-Expires: 120;refresher=uac", "Require: timer", "Allow: INVITE, ACK, BYE, CANCEL, UPDATE"]);
    await peer.expectRequest("ACK");
    await call.next("answered", { includePast: true });
    await clock.advance(59_000);
    await peer.expectSilence(30);
    await clock.advance(1_000);
    const update = await peer.expectRequest("UPDATE");
    assert.equal(update.headers.get("session-expires"), "120;refresher=uac");
    assert.equal(update.body, "");
    peer.respond(update, 200, "OK", "", peer.toTag, ["Session-Expires: 120;refresher=uac"]);
    // The 200 travels over UDP before the next clock step.
    await new Promise((r) => setTimeout(r, 30));
    await clock.advance(60_000);
    assert.equal((await peer.expectRequest("UPDATE")).headers.get("session-expires"), "120;refresher=uac");
  });

  it("refreshes with a re-INVITE carrying the same SDP (unchanged o= version) when UPDATE is not allowed", async () => {
    const { peer, call, clock } = await setup();
    peer.invite = await peer.expectRequest("INVITE");
    peer.respond(peer.invite, 200, "OK", AUDIO_ANSWER(1), peer.toTag, ["Session-Expires: 90;refresher=uac", "Allow: INVITE, ACK, BYE, CANCEL"]);
    await peer.expectRequest("ACK");
    await call.next("answered", { includePast: true });
    await clock.advance(45_000);
    const refresh = await peer.expectRequest("INVITE");
    const origin = (body: string) => /^o=.*$/m.exec(body)?.[0];
    assert.equal(origin(refresh.body), origin(peer.invite.body), "the same SDP, version included");
    assert.match(refresh.headers.get("session-expires") ?? "", /^90;refresher=uac$/);
    peer.respond(refresh, 200, "OK", AUDIO_ANSWER(1), peer.toTag, ["Session-Expires: 90;refresher=uac"]);
    await peer.expectRequest("ACK");
    assert.equal(call.state, "confirmed");
    assert.equal(call.media?.kind, "audio");
  });

  it("when the far end refreshes, answers its refresh with the timer, and hangs up when no refresh comes before the session expires", async () => {
    const { peer, call, clock } = await setup();
    await peer.answer(AUDIO_ANSWER(1), ["Session-Expires: 120;refresher=uas", "Require: timer", "Allow: INVITE, ACK, BYE, UPDATE"]);
    await call.next("answered", { includePast: true });
    await clock.advance(50_000);
    peer.request("UPDATE", "", undefined, ["Session-Expires: 120;refresher=uac", "Supported: timer"]);
    const ok = await peer.expectResponse(200);
    assert.equal(ok.headers.get("session-expires"), "120;refresher=uac");
    assert.equal(ok.headers.get("require"), "timer");
    // The refresh restarted the clock: 88 s after it (120 minus 32) the session is given up.
    await clock.advance(87_000);
    await peer.expectSilence(30);
    await clock.advance(1_000);
    const bye = await peer.expectRequest("BYE");
    peer.respond(bye, 200, "OK");
    const outcome = await call.outcome;
    assert.equal(outcome.result, "failed");
    assert.match(outcome.result === "failed" ? outcome.reasonPhrase : "", /Session expired/);
  });

  it("a far end (the refresher) whose re-INVITE or UPDATE carries no Session-Expires has turned the timer off: no BYE later", async () => {
    const { peer, call, clock } = await setup();
    await peer.answer(AUDIO_ANSWER(1), ["Session-Expires: 120;refresher=uas", "Require: timer"]);
    await call.next("answered", { includePast: true });
    peer.request("UPDATE");
    const ok = await peer.expectResponse(200);
    assert.equal(ok.headers.get("session-expires"), undefined, "our 2xx names no timer either");
    await clock.advance(300_000);
    await peer.expectSilence(30);
    assert.equal(call.state, "confirmed");
  });

  it("a 422 to its refresh raises the interval to the far end's Min-SE and refreshes again at once", async () => {
    const { peer, call, clock } = await setup();
    await peer.answer(AUDIO_ANSWER(1), ["Session-Expires: 90;refresher=uac", "Allow: INVITE, ACK, BYE, UPDATE"]);
    await call.next("answered", { includePast: true });
    await clock.advance(45_000);
    const first = await peer.expectRequest("UPDATE");
    peer.respond(first, 422, "Session Interval Too Small", "", peer.toTag, ["Min-SE: 180"]);
    const again = await peer.expectRequest("UPDATE");
    assert.equal(again.headers.get("session-expires"), "180;refresher=uac");
  });

  it("asks again with the far end's Min-SE after 422 Session Interval Too Small", async () => {
    const { peer } = await setup();
    const first = await peer.expectRequest("INVITE");
    peer.respond(first, 422, "Session Interval Too Small", "", peer.toTag, ["Min-SE: 1800"]);
    await peer.expectRequest("ACK");
    const again = await peer.expectRequest("INVITE");
    assert.equal(again.headers.get("session-expires"), "1800");
    assert.equal(again.headers.get("min-se"), "1800");
    assert.ok(cseqOf(again).seq > cseqOf(first).seq);
  });
});

/**
 * Answering calls (SipCall.answer through SipUserAgent.answerCall) against a scripted caller: a
 * UDP socket in this test that sends hand-written requests and reads our answers (the fake sits
 * at the network edge). The user agent runs on a manual clock, so the 200's retransmissions and
 * timer L (no ACK) are stepped, not waited for.
 */
import assert from "node:assert/strict";
import dgram from "node:dgram";
import { after, describe, it } from "node:test";
import { ManualClock } from "../../src/lib/clock.ts";
import type { SipCall } from "../../src/line/sip/sip-call.ts";
import { parseMessage, type SipMessage, type SipRequest, type SipResponse } from "../../src/line/sip/sip-message.ts";
import { SipUserAgent, type IncomingInvite } from "../../src/line/sip/sip-user-agent.ts";

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const c of cleanups.splice(0)) await c();
});

function sdp(version: number, media: string[]): string {
  return ["v=0", `o=caller 7 ${version} IN IP4 127.0.0.1`, "s=-", "c=IN IP4 127.0.0.1", "t=0 0", ...media, ""].join("\r\n");
}
const AUDIO_OFFER = (version = 1): string => sdp(version, ["m=audio 31000 RTP/AVP 0 8", "a=rtpmap:0 PCMU/8000", "a=rtpmap:8 PCMA/8000"]);
const T38_OFFER = (version = 2): string =>
  sdp(version, ["m=image 31002 udptl t38", "a=T38FaxVersion:0", "a=T38MaxBitRate:14400", "a=T38FaxRateManagement:transferredTCF", "a=T38FaxMaxDatagram:320", "a=T38FaxUdpEC:t38UDPRedundancy"]);

/** The caller: sends requests to the UA and reads what comes back, retransmissions dropped. */
class Caller {
  readonly socket = dgram.createSocket("udp4");
  readonly #queue: SipMessage[] = [];
  readonly #waiters: ((m: SipMessage) => void)[] = [];
  readonly #seen = new Set<string>();
  port = 0;
  callId = `call-${Math.random().toString(36).slice(2)}`;
  #seq = 0;
  toTag: string | null = null;
  contact: string | null = null;

  constructor(readonly ua: { address: string; port: number }) {}

  async start(): Promise<void> {
    this.socket.on("message", (data) => {
      const message = parseMessage(data);
      const key = `${message.kind === "request" ? message.method : message.status} ${message.headers.get("cseq")} ${message.headers.get("via")}`;
      if (this.#seen.has(key)) return;
      this.#seen.add(key);
      if (message.kind === "response" && message.status >= 101) {
        this.toTag ??= /;\s*tag=([^;\s]+)/.exec(message.headers.get("to") ?? "")?.[1] ?? null;
        this.contact ??= /<([^>]+)>/.exec(message.headers.get("contact") ?? "")?.[1] ?? null;
      }
      const waiter = this.#waiters.shift();
      if (waiter) waiter(message);
      else this.#queue.push(message);
    });
    await new Promise<void>((r) => this.socket.bind(0, "127.0.0.1", r));
    this.port = this.socket.address().port;
    cleanups.push(() => new Promise<void>((r) => this.socket.close(() => r())));
  }

  next(): Promise<SipMessage> {
    const queued = this.#queue.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("caller: nothing received")), 3000);
      this.#waiters.push((m) => {
        clearTimeout(timer);
        resolve(m);
      });
    });
  }

  async expectResponse(status: number): Promise<SipResponse> {
    const m = await this.next();
    assert.equal(m.kind === "response" ? m.status : `request ${m.kind === "request" ? m.method : ""}`, status);
    return m as SipResponse;
  }

  async expectRequest(method: string): Promise<SipRequest> {
    const m = await this.next();
    assert.equal(m.kind === "request" ? m.method : `response ${m.kind === "response" ? m.status : ""}`, method);
    return m as SipRequest;
  }

  async expectSilence(ms: number): Promise<void> {
    await new Promise((r) => setTimeout(r, ms));
    assert.equal(this.#queue.length, 0, `unexpected: ${this.#queue.map((q) => (q.kind === "request" ? q.method : q.status)).join(", ")}`);
  }

  #send(lines: string[], body = ""): void {
    if (body !== "") lines.push("Content-Type: application/sdp");
    lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
    this.socket.send(`${lines.join("\r\n")}\r\n\r\n${body}`, this.ua.port, this.ua.address);
  }

  #headers(method: string, seq: number, branch: string, inDialog: boolean): string[] {
    return [
      `Via: SIP/2.0/UDP 127.0.0.1:${this.port};branch=z9hG4bK${branch}`,
      `From: <sip:+4940123456@127.0.0.1:${this.port}>;tag=caller-tag`,
      `To: <sip:+4930123456@faxline.test>${inDialog && this.toTag ? `;tag=${this.toTag}` : ""}`,
      `Call-ID: ${this.callId}`,
      `CSeq: ${seq} ${method}`,
      `Contact: <sip:caller@127.0.0.1:${this.port}>`,
      "Max-Forwards: 70",
    ];
  }

  invite(body = AUDIO_OFFER(), extra: string[] = []): void {
    this.#seq = 1;
    this.#send([`INVITE sip:+4930123456@faxline.test SIP/2.0`, ...this.#headers("INVITE", 1, "inv1", false), ...extra], body);
  }

  ack(seq = 1, body = ""): void {
    this.#send([`ACK ${this.contact} SIP/2.0`, ...this.#headers("ACK", seq, `ack${seq}`, true)], body);
  }

  /** Non-2xx ACK: same branch as the INVITE (§17.1.1.3). */
  ackFailure(): void {
    this.#send([`ACK sip:+4930123456@faxline.test SIP/2.0`, ...this.#headers("ACK", 1, "inv1", true)]);
  }

  cancel(): void {
    this.#send([`CANCEL sip:+4930123456@faxline.test SIP/2.0`, ...this.#headers("CANCEL", 1, "inv1", false)]);
  }

  request(method: string, body = ""): void {
    this.#seq += 1;
    this.#send([`${method} ${this.contact} SIP/2.0`, ...this.#headers(method, this.#seq, `${method}${this.#seq}`, true)], body);
  }

  respond(request: SipRequest, status: number, reason: string, body = "", extra: string[] = []): void {
    this.#send(
      [
        `SIP/2.0 ${status} ${reason}`,
        ...request.headers.getList("via").map((v) => `Via: ${v}`),
        `From: ${request.headers.get("from")}`,
        `To: ${request.headers.get("to")}`,
        `Call-ID: ${request.headers.get("call-id")}`,
        `CSeq: ${request.headers.get("cseq")}`,
        ...extra,
      ],
      body,
    );
  }
}

async function setup(options: { answerDelayMs?: number; t38?: boolean } = {}): Promise<{ caller: Caller; ua: SipUserAgent; clock: ManualClock; call: () => Promise<SipCall> }> {
  const clock = new ManualClock();
  const ua = new SipUserAgent({ localAddress: "127.0.0.1", clock, minSessionExpires: 90, ...(process.env.SIP_TRACE ? { trace: (e: { direction: string; text: string }) => console.log(`---- ${e.direction}\n${e.text}`) } : {}) });
  await ua.start();
  cleanups.push(() => ua.close(0));
  let resolveCall!: (call: SipCall) => void;
  const answered = new Promise<SipCall>((r) => (resolveCall = r));
  ua.onIncomingCall((invite: IncomingInvite) => {
    void ua
      .answerCall(invite, {
        t38: options.t38 ?? true,
        t38ReinviteDelayMs: null,
        localMedia: { address: "127.0.0.1", audioPort: 40_100, t38Port: 40_102 },
        answerDelayMs: options.answerDelayMs ?? 0,
      })
      .then((call) => {
        assert.ok(call !== null, "the INVITE was answerable");
        resolveCall(call);
      });
  });
  const caller = new Caller(ua.udpLocal);
  await caller.start();
  return { caller, ua, clock, call: () => answered };
}

describe("sip call: answering the far end's INVITE", () => {
  it("rings, answers with the caller's first codec, is confirmed by the ACK, and takes the caller's T.38 re-INVITE", async () => {
    const { caller, call } = await setup();
    caller.invite();
    const ringing = await caller.expectResponse(180);
    assert.ok(caller.toTag, "180 carries our To tag");
    assert.match(ringing.headers.get("contact") ?? "", /^<sip:\+4930123456@127\.0\.0\.1:\d+>$/);
    const ok = await caller.expectResponse(200);
    assert.match(ok.body, /m=audio 40100 RTP\/AVP 0\r\n/);
    const answered = await call();
    assert.equal(answered.state, "early", "not confirmed before the ACK");
    caller.ack();
    const up = await answered.next("answered", { includePast: true });
    assert.equal(up?.media.kind, "audio");
    assert.equal(answered.state, "confirmed");
    caller.request("INVITE", T38_OFFER());
    const switched = await caller.expectResponse(200);
    assert.match(switched.body, /m=image 40102 udptl t38/);
    caller.ack(2);
    const t38 = await answered.next("t38Switched", { includePast: true });
    assert.equal(t38?.initiatedBy, "remote");
    assert.equal(t38?.media.params.maxDatagram, 320);
    caller.request("BYE");
    await caller.expectResponse(200);
    const outcome = await answered.outcome;
    assert.equal(outcome.result, "completed");
    assert.equal(outcome.result === "completed" && outcome.endedBy, "remote");
  });

  it("answers T.38 at once when the INVITE offers it", async () => {
    const { caller, call } = await setup();
    caller.invite(T38_OFFER(1));
    await caller.expectResponse(180);
    const ok = await caller.expectResponse(200);
    assert.match(ok.body, /m=image 40102 udptl t38/);
    caller.ack();
    const answered = await call();
    assert.equal((await answered.next("t38Switched", { includePast: true }))?.media.kind, "t38");
    const ending = answered.hangup();
    const bye = await caller.expectRequest("BYE");
    assert.equal(bye.headers.get("to"), "<sip:+4940123456@127.0.0.1:" + caller.port + ">;tag=caller-tag", "our BYE's To is the caller's From");
    caller.respond(bye, 200, "OK");
    assert.equal((await ending).result, "completed");
  });

  it("refuses an offer with nothing it can take (488), and T.38 only when the trunk allows it", async () => {
    const { caller, call } = await setup({ t38: false });
    caller.invite(T38_OFFER(1));
    await caller.expectResponse(488);
    caller.ackFailure();
    const refused = await call();
    const outcome = await refused.outcome;
    assert.equal(outcome.result === "failed" && outcome.cause, "media");
  });

  it("a CANCEL while it rings: 200 to the CANCEL, 487 to the INVITE, the call ends cancelled", async () => {
    const { caller, call, clock } = await setup({ answerDelayMs: 5000 });
    caller.invite();
    await caller.expectResponse(180);
    caller.cancel();
    await caller.expectResponse(200);
    await caller.expectResponse(487);
    caller.ackFailure();
    const cancelled = await call();
    const outcome = await cancelled.outcome;
    assert.equal(outcome.result === "failed" && outcome.cause, "cancelled");
    await clock.advance(5000);
    await caller.expectSilence(50);
  });

  it("an offerless INVITE gets our offer in the 200 and its answer from the ACK", async () => {
    const { caller, call } = await setup();
    caller.invite("");
    await caller.expectResponse(180);
    const ok = await caller.expectResponse(200);
    assert.match(ok.body, /m=audio 40100 RTP\/AVP 8 0/);
    caller.ack(1, sdp(1, ["m=audio 31000 RTP/AVP 8", "a=rtpmap:8 PCMA/8000"]));
    const answered = await call();
    const up = await answered.next("answered", { includePast: true });
    assert.equal(up?.media.kind === "audio" && up.media.codec, "PCMA");
  });

  it("no ACK for its 200 within 64*T1: ends with no_ack at once and sends BYE, without waiting for its answer (a half-open caller sends none)", async () => {
    const { caller, call, clock } = await setup();
    caller.invite();
    await caller.expectResponse(180);
    await caller.expectResponse(200);
    const answered = await call();
    await clock.advance(64 * 500);
    const bye = await caller.expectRequest("BYE");
    assert.equal(answered.state, "terminated", "ended before the BYE is answered");
    const outcome = await answered.outcome;
    assert.equal(outcome.result === "failed" && outcome.cause, "no_ack");
    caller.respond(bye, 200, "OK");
  });

  it("hangup() before the 200 declines with 480; after the 200 the BYE waits for the ACK", async () => {
    const ringing = await setup({ answerDelayMs: 5000 });
    ringing.caller.invite();
    await ringing.caller.expectResponse(180);
    const declined = await ringing.call();
    void declined.hangup();
    await ringing.caller.expectResponse(480);
    ringing.caller.ackFailure();
    assert.equal((await declined.outcome).result, "failed");

    const answering = await setup();
    answering.caller.invite();
    await answering.caller.expectResponse(180);
    await answering.caller.expectResponse(200);
    const call = await answering.call();
    const ending = call.hangup();
    await answering.clock.advance(3000);
    await answering.caller.expectSilence(50);
    answering.caller.ack();
    const bye = await answering.caller.expectRequest("BYE");
    answering.caller.respond(bye, 200, "OK");
    assert.equal((await ending).result, "completed");
  });

  it("a CANCEL while the line still checks the call: 200 and 487 at once, and the INVITE is not answered afterwards", async () => {
    const clock = new ManualClock();
    const ua = new SipUserAgent({ localAddress: "127.0.0.1", clock });
    await ua.start();
    cleanups.push(() => ua.close(0));
    let proceed!: () => void;
    const checked = new Promise<void>((r) => (proceed = r));
    const answered = new Promise<SipCall | null>((resolve) => {
      ua.onIncomingCall((invite) => {
        // The line looks the number up in the store meanwhile.
        void checked.then(() => ua.answerCall(invite, { t38: true, localMedia: { address: "127.0.0.1", audioPort: 40_100, t38Port: 40_102 } })).then(resolve);
      });
    });
    const caller = new Caller(ua.udpLocal);
    await caller.start();
    caller.invite();
    await new Promise((r) => setTimeout(r, 20));
    caller.cancel();
    await caller.expectResponse(200);
    await caller.expectResponse(487);
    caller.ackFailure();
    proceed();
    assert.equal(await answered, null);
    await caller.expectSilence(50);
  });

  it("a BYE before the 200 (early dialog): 200 to the BYE, 487 to the INVITE", async () => {
    const { caller, call } = await setup({ answerDelayMs: 5000 });
    caller.invite();
    await caller.expectResponse(180);
    caller.request("BYE");
    const first = await caller.next();
    const second = await caller.next();
    const statuses = [first, second].map((m) => (m.kind === "response" ? `${m.status} ${m.headers.get("cseq")}` : m.method)).sort();
    assert.deepEqual(statuses, ["200 2 BYE", "487 1 INVITE"]);
    caller.ackFailure();
    const outcome = await (await call()).outcome;
    assert.equal(outcome.result === "completed" && outcome.endedBy, "remote");
  });

  it("a re-INVITE before the ACK of its 200 gets 500 with Retry-After, and the call lives on", async () => {
    const { caller, call } = await setup();
    caller.invite();
    await caller.expectResponse(180);
    await caller.expectResponse(200);
    caller.request("INVITE", T38_OFFER());
    const busy = await caller.expectResponse(500);
    assert.equal(busy.headers.get("retry-after"), "1");
    caller.ack();
    const answered = await call();
    assert.equal((await answered.next("answered", { includePast: true }))?.media.kind, "audio");
    assert.equal(answered.state, "confirmed");
  });

  it("a caller that requires 100rel gets no provisional (none would be reliable) and the 200 at once; an unknown required extension gets 420", async () => {
    const reliable = await setup({ answerDelayMs: 5000 });
    reliable.caller.invite(AUDIO_OFFER(), ["Require: 100rel", "Supported: 100rel, timer"]);
    await reliable.caller.expectResponse(200);
    reliable.caller.ack();
    assert.equal((await (await reliable.call()).next("answered", { includePast: true }))?.media.kind, "audio");

    const strange = await setup();
    strange.caller.invite(AUDIO_OFFER(), ["Require: timer, foo"]);
    const bad = await strange.caller.expectResponse(420);
    assert.equal(bad.headers.get("unsupported"), "foo");
    strange.caller.ackFailure();
  });

  it("without an incoming-call handler a new INVITE is declined (603)", async () => {
    const clock = new ManualClock();
    const ua = new SipUserAgent({ localAddress: "127.0.0.1", clock });
    await ua.start();
    cleanups.push(() => ua.close(0));
    const caller = new Caller(ua.udpLocal);
    await caller.start();
    caller.invite();
    await caller.expectResponse(603);
  });
});

describe("sip call: session timers (RFC 4028), answering the call", () => {
  it("a caller that asks us to refresh: the 200 says refresher=uas with Require: timer, and we re-INVITE with the same SDP at half the interval", async () => {
    const { caller, call, clock } = await setup();
    caller.invite(AUDIO_OFFER(), ["Session-Expires: 120;refresher=uas", "Supported: timer"]);
    await caller.expectResponse(180);
    const ok = await caller.expectResponse(200);
    assert.equal(ok.headers.get("session-expires"), "120;refresher=uas");
    assert.equal(ok.headers.get("require"), "timer");
    caller.ack();
    const answered = await call();
    await answered.next("answered", { includePast: true });
    await clock.advance(60_000);
    const refresh = await caller.expectRequest("INVITE");
    assert.equal(/^o=.*$/m.exec(refresh.body)?.[0], /^o=.*$/m.exec(ok.body)?.[0], "the same SDP, version included");
    assert.equal(refresh.headers.get("session-expires"), "120;refresher=uac", "in our refresh we are its UAC");
    caller.respond(refresh, 200, "OK", AUDIO_OFFER(), ["Session-Expires: 120;refresher=uac"]);
    await caller.expectRequest("ACK");
    assert.equal(answered.state, "confirmed");
  });

  it("a caller without timer support behind a proxy that asked for one: we refresh (refresher=uas, no Require)", async () => {
    const { caller } = await setup();
    caller.invite(AUDIO_OFFER(), ["Session-Expires: 1800"]);
    await caller.expectResponse(180);
    const ok = await caller.expectResponse(200);
    assert.equal(ok.headers.get("session-expires"), "1800;refresher=uas");
    assert.equal(ok.headers.get("require"), undefined);
  });

  it("an interval below our minimum gets 422 with Min-SE", async () => {
    const { caller } = await setup();
    caller.invite(AUDIO_OFFER(), ["Session-Expires: 30", "Supported: timer"]);
    const tooSmall = await caller.expectResponse(422);
    assert.equal(tooSmall.headers.get("min-se"), "90");
    caller.ackFailure();
  });
});

/**
 * RFC 3261 §17 transactions on a manual clock: retransmission schedules (timers A, E, G), time-outs
 * (B, F, H/L), the ACK for non-2xx, and the linger timers (D, K, J, M).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ManualClock } from "../../src/lib/clock.ts";
import { InviteClientTransaction, NonInviteClientTransaction, type ClientTransactionUser } from "../../src/line/sip/client-transaction.ts";
import { ServerTransaction } from "../../src/line/sip/server-transaction.ts";
import { createResponse, parseMessage, type SipRequest, type SipResponse } from "../../src/line/sip/sip-message.ts";
import { DEFAULT_SIP_TIMERS } from "../../src/line/sip/sip-timers.ts";

function request(method: string): SipRequest {
  const m = parseMessage(
    [
      `${method} sip:+4930123@trunk.example SIP/2.0`,
      "Via: SIP/2.0/UDP 192.0.2.1:5070;branch=z9hG4bKtest1;rport",
      "Route: <sip:proxy.example;lr>",
      "Max-Forwards: 70",
      "From: <sip:fax@faxline.test>;tag=ours",
      "To: <sip:+4930123@trunk.example>",
      "Call-ID: call-1@192.0.2.1",
      `CSeq: 1 ${method}`,
      "Content-Length: 0",
      "",
      "",
    ].join("\r\n"),
  );
  assert.equal(m.kind, "request");
  return m as SipRequest;
}

function responseTo(req: SipRequest, status: number): SipResponse {
  return createResponse(req, status, "X", "theirs");
}

interface Recorder extends ClientTransactionUser {
  responses: number[];
  timeouts: number;
  transportErrors: number;
  terminated: number;
}

function recorder(): Recorder {
  const r: Recorder = {
    responses: [],
    timeouts: 0,
    transportErrors: 0,
    terminated: 0,
    onResponse: (resp) => r.responses.push(resp.status),
    onRequestTimeout: () => r.timeouts++,
    onTransportError: () => r.transportErrors++,
    onTerminated: () => r.terminated++,
  };
  return r;
}

/** Sends recorded with the manual clock's time relative to `start`. */
function wire(clock: ManualClock) {
  const start = clock.now();
  const sent: { at: number; message: SipRequest }[] = [];
  return { sent, send: (message: SipRequest) => sent.push({ at: clock.now() - start, message }) };
}

describe("sip: INVITE client transaction (RFC 3261 §17.1.1)", () => {
  it("retransmits over UDP at T1, 2T1, 4T1 … (timer A) and times out at 64*T1 (timer B)", async () => {
    const clock = new ManualClock();
    const w = wire(clock);
    const user = recorder();
    const tx = new InviteClientTransaction(request("INVITE"), { clock, timers: DEFAULT_SIP_TIMERS, reliable: false, send: w.send }, user);
    tx.start();
    await clock.advance(32_000);
    assert.deepEqual(
      w.sent.map((s) => s.at),
      [0, 500, 1500, 3500, 7500, 15_500, 31_500],
    );
    assert.equal(user.timeouts, 1);
    assert.equal(tx.state, "terminated");
  });

  it("stops retransmitting on a provisional and waits without a timeout in Proceeding", async () => {
    const clock = new ManualClock();
    const w = wire(clock);
    const user = recorder();
    const req = request("INVITE");
    const tx = new InviteClientTransaction(req, { clock, timers: DEFAULT_SIP_TIMERS, reliable: false, send: w.send }, user);
    tx.start();
    await clock.advance(600);
    tx.receiveResponse(responseTo(req, 180));
    await clock.advance(120_000);
    assert.equal(w.sent.length, 2);
    assert.equal(tx.state, "proceeding");
    assert.equal(user.timeouts, 0);
    assert.deepEqual(user.responses, [180]);
  });

  it("ACKs a non-2xx final itself, again for each retransmission, and lingers for timer D", async () => {
    const clock = new ManualClock();
    const w = wire(clock);
    const user = recorder();
    const req = request("INVITE");
    const tx = new InviteClientTransaction(req, { clock, timers: DEFAULT_SIP_TIMERS, reliable: false, send: w.send }, user);
    tx.start();
    const busy = responseTo(req, 486);
    tx.receiveResponse(busy);
    tx.receiveResponse(busy);
    assert.deepEqual(user.responses, [486], "the retransmission is absorbed");
    const acks = w.sent.filter((s) => s.message.method === "ACK").map((s) => s.message);
    assert.equal(acks.length, 2);
    const ack = acks[0]!;
    assert.equal(ack.uri, req.uri);
    assert.equal(ack.headers.get("via"), req.headers.get("via"), "same branch as the INVITE (§17.1.1.3)");
    assert.equal(ack.headers.get("to"), busy.headers.get("to"), "the response's To, with its tag");
    assert.equal(ack.headers.get("cseq"), "1 ACK");
    assert.equal(ack.headers.get("route"), "<sip:proxy.example;lr>");
    assert.equal(tx.state, "completed");
    await clock.advance(DEFAULT_SIP_TIMERS.D - 1);
    assert.equal(tx.state, "completed");
    await clock.advance(1);
    assert.equal(tx.state, "terminated");
    assert.equal(user.terminated, 1);
  });

  it("passes every 2xx up in Accepted (RFC 6026) and ends after timer M", async () => {
    const clock = new ManualClock();
    const w = wire(clock);
    const user = recorder();
    const req = request("INVITE");
    const tx = new InviteClientTransaction(req, { clock, timers: DEFAULT_SIP_TIMERS, reliable: false, send: w.send }, user);
    tx.start();
    tx.receiveResponse(responseTo(req, 200));
    tx.receiveResponse(responseTo(req, 200));
    assert.deepEqual(user.responses, [200, 200]);
    assert.equal(w.sent.filter((s) => s.message.method === "ACK").length, 0, "the TU ACKs a 2xx");
    await clock.advance(64 * DEFAULT_SIP_TIMERS.T1);
    assert.equal(tx.state, "terminated");
  });

  it("does not retransmit over TCP/TLS, and timer D is zero there", async () => {
    const clock = new ManualClock();
    const w = wire(clock);
    const req = request("INVITE");
    const tx = new InviteClientTransaction(req, { clock, timers: DEFAULT_SIP_TIMERS, reliable: true, send: w.send }, recorder());
    tx.start();
    await clock.advance(10_000);
    assert.equal(w.sent.length, 1);
    tx.receiveResponse(responseTo(req, 503));
    await clock.advance(0);
    assert.equal(tx.state, "terminated");
  });

  it("turns a transport error into onTransportError (treated as 503, §8.1.3.1)", () => {
    const clock = new ManualClock();
    const user = recorder();
    const tx = new InviteClientTransaction(request("INVITE"), { clock, timers: DEFAULT_SIP_TIMERS, reliable: true, send: () => undefined }, user);
    tx.start();
    tx.transportError(new Error("ECONNREFUSED"));
    assert.equal(user.transportErrors, 1);
    assert.equal(tx.state, "terminated");
  });

  it("cannot be started again once disposed", () => {
    const clock = new ManualClock();
    const tx = new InviteClientTransaction(request("INVITE"), { clock, timers: DEFAULT_SIP_TIMERS, reliable: true, send: () => undefined }, recorder());
    tx.dispose();
    assert.doesNotThrow(() => tx.dispose(), "disposing twice is a no-op");
    assert.throws(() => tx.start(), /Expected values to be strictly equal/);
  });
});

describe("sip: non-INVITE client transaction (RFC 3261 §17.1.2)", () => {
  it("retransmits at T1 doubling up to T2 (timer E) and times out at 64*T1 (timer F)", async () => {
    const clock = new ManualClock();
    const w = wire(clock);
    const user = recorder();
    const tx = new NonInviteClientTransaction(request("BYE"), { clock, timers: DEFAULT_SIP_TIMERS, reliable: false, send: w.send }, user);
    tx.start();
    await clock.advance(32_000);
    const at = w.sent.map((s) => s.at);
    assert.deepEqual(at.slice(0, 6), [0, 500, 1500, 3500, 7500, 11_500]);
    assert.ok(at.slice(4).every((t, i, a) => i === 0 || t - a[i - 1]! === 4000), "capped at T2");
    assert.equal(user.timeouts, 1);
  });

  it("retransmits at T2 in Proceeding, and timer F still runs", async () => {
    const clock = new ManualClock();
    const w = wire(clock);
    const user = recorder();
    const req = request("OPTIONS");
    const tx = new NonInviteClientTransaction(req, { clock, timers: DEFAULT_SIP_TIMERS, reliable: false, send: w.send }, user);
    tx.start();
    tx.receiveResponse(responseTo(req, 100));
    await clock.advance(32_000);
    assert.deepEqual(
      w.sent.map((s) => s.at).slice(0, 3),
      [0, 4000, 8000],
    );
    assert.equal(user.timeouts, 1);
  });

  it("lingers in Completed for timer K (T4) over UDP", async () => {
    const clock = new ManualClock();
    const w = wire(clock);
    const user = recorder();
    const req = request("BYE");
    const tx = new NonInviteClientTransaction(req, { clock, timers: DEFAULT_SIP_TIMERS, reliable: false, send: w.send }, user);
    tx.start();
    tx.receiveResponse(responseTo(req, 200));
    tx.receiveResponse(responseTo(req, 200));
    assert.deepEqual(user.responses, [200]);
    await clock.advance(DEFAULT_SIP_TIMERS.T4);
    assert.equal(tx.state, "terminated");
    assert.equal(w.sent.length, 1);
  });
});

describe("sip: server transactions (RFC 3261 §17.2, §13.3.1.4)", () => {
  it("retransmits a 2xx to INVITE at T1 doubling up to T2 until the ACK", async () => {
    const clock = new ManualClock();
    const start = clock.now();
    const sent: number[] = [];
    const req = request("INVITE");
    const tx = new ServerTransaction(req, { clock, timers: DEFAULT_SIP_TIMERS, reliable: false, send: () => sent.push(clock.now() - start) });
    tx.respond(responseTo(req, 200));
    await clock.advance(9000);
    assert.deepEqual(sent, [0, 500, 1500, 3500, 7500]);
    tx.ackReceived();
    await clock.advance(20_000);
    assert.equal(sent.length, 5);
  });

  it("reports a missing ACK after 64*T1 (timer L)", async () => {
    const clock = new ManualClock();
    let ackTimeouts = 0;
    const req = request("INVITE");
    const tx = new ServerTransaction(req, { clock, timers: DEFAULT_SIP_TIMERS, reliable: true, send: () => undefined, onAckTimeout: () => ackTimeouts++ });
    tx.respond(responseTo(req, 200));
    await clock.advance(64 * DEFAULT_SIP_TIMERS.T1);
    assert.equal(ackTimeouts, 1);
    assert.equal(tx.state, "terminated");
  });

  it("retransmits a non-2xx final (timer G), stops on the ACK and lingers for timer I", async () => {
    const clock = new ManualClock();
    let sent = 0;
    const req = request("INVITE");
    const tx = new ServerTransaction(req, { clock, timers: DEFAULT_SIP_TIMERS, reliable: false, send: () => sent++ });
    tx.respond(responseTo(req, 488));
    await clock.advance(1600);
    assert.equal(sent, 3);
    tx.ackReceived();
    assert.equal(tx.state, "confirmed");
    await clock.advance(DEFAULT_SIP_TIMERS.T4);
    assert.equal(tx.state, "terminated");
    assert.equal(sent, 3);
  });

  it("answers a retransmitted non-INVITE request with the last response until timer J", async () => {
    const clock = new ManualClock();
    let sent = 0;
    const req = request("BYE");
    const tx = new ServerTransaction(req, { clock, timers: DEFAULT_SIP_TIMERS, reliable: false, send: () => sent++ });
    tx.respond(responseTo(req, 200));
    tx.receiveRetransmission();
    assert.equal(sent, 2);
    await clock.advance(64 * DEFAULT_SIP_TIMERS.T1);
    assert.equal(tx.state, "terminated");
  });
});

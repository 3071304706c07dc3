/**
 * The SIP line's parts that need no far end: media port pairs, the T.30 progress tracker the
 * watchdog reads, how SIP failures become call ends, fax ids, and the line's own decisions
 * before and around a call (no route, bad number, no image, waiting for a call slot, what OPTIONS
 * probes are told), with a UDP socket that swallows every INVITE as the trunk's proxy.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import dgram from "node:dgram";
import type { Engine, EngineEvent } from "../../src/line/fax-engine/engine.ts";
import { Fcf } from "../../src/line/fax-engine/t30-fcf.ts";
import type { CallRequest } from "../../src/line/line.ts";
import { outcomeOfCall } from "../../src/line/outcomes/call-outcomes.ts";
import { endOfSipFailure } from "../../src/line/sip-fax-line/fax-call.ts";
import { FaxProgressTracker } from "../../src/line/sip-fax-line/fax-progress.ts";
import { MediaPortPool, NoFreeMediaPortError, parsePortRange } from "../../src/line/sip-fax-line/media-ports.ts";
import { faxIdent, SipFaxLine } from "../../src/line/sip-fax-line/sip-fax-line.ts";
import type { SipCallFailure } from "../../src/line/sip/sip-call-events.ts";
import type { TrunkConfig } from "../../src/line/trunks/trunk-config.ts";
import { REGION_NUMBER_CONTEXT } from "../../src/numbers/normalize-number.ts";
import { sipOptions } from "../support/sip-options.ts";
import { testTrunk } from "../support/sip-trunk.ts";

describe("media port pairs", () => {
  it("reads port ranges", () => {
    assert.deepEqual(parsePortRange("20000-29999"), { min: 20000, max: 29999 });
    assert.deepEqual(parsePortRange(" 40000 "), { min: 40000, max: 40003 });
    assert.match((parsePortRange("80-90") as { error: string }).error, /between 1024 and 65535/);
    assert.match((parsePortRange("40001-40002") as { error: string }).error, /too small/);
    assert.match((parsePortRange("forty") as { error: string }).error, /not a port range/);
  });

  it("binds an even RTP port and the next even one for T.38, skips ports others hold, and frees them", async () => {
    const blocker = dgram.createSocket("udp4");
    await new Promise<void>((resolve) => blocker.bind(47_602, "127.0.0.1", resolve));
    const pool = new MediaPortPool({ address: "127.0.0.1", range: { min: 47_599, max: 47_611 } });
    try {
      const first = await pool.acquire();
      assert.deepEqual([first.audioPort, first.t38Port], [47_604, 47_606], "47600/47602 is taken by another socket");
      const second = await pool.acquire();
      assert.deepEqual([second.audioPort, second.t38Port], [47_608, 47_610]);
      await assert.rejects(pool.acquire(), NoFreeMediaPortError);
      const socket = first.take("t38");
      assert.throws(() => first.take("t38"), /already taken/);
      socket.close();
      first.release();
      second.release();
      assert.equal(pool.inUse, 0);
      const again = await pool.acquire();
      assert.ok([47_604, 47_608].includes(again.audioPort));
      again.release();
    } finally {
      blocker.close();
    }
  });
});

describe("T.30 progress for the watchdog", () => {
  const frame = (direction: "rx" | "tx", fcf: number, name: string, atSample: number): EngineEvent => ({ type: "frame", atSample, direction, fcf, name, bytes: new Uint8Array([0xff, 0x13, fcf]) });

  it("follows a two-page fax from DIS to DCN", () => {
    const t = new FaxProgressTracker([30_000, 10_000], 5_000);
    assert.equal(t.phase, "answered");
    assert.deepEqual(t.watchdogState(), { phase: "answered", phaseStartedAt: 5_000, pageEncodedBytes: 30_000, pageNo: 1 });
    t.onEvent({ type: "phaseB", atSample: 8000, fcf: Fcf.DIS, name: "DIS", frame: null }, 6_000);
    assert.equal(t.phase, "phase_b");
    t.onEvent(frame("rx", Fcf.CFR, "CFR", 16_000), 7_000);
    assert.equal(t.phase, "phase_c");
    t.onEvent(frame("tx", Fcf.MPS | 1, "MPS", 24_000), 8_000);
    assert.equal(t.phase, "phase_d");
    t.onEvent({ type: "phaseD", atSample: 32_000, fcf: Fcf.MCF, name: "MCF" }, 9_000);
    assert.deepEqual(t.watchdogState(60_000), { phase: "phase_c", phaseStartedAt: 9_000, pageEncodedBytes: 30_000, pageNo: 2, callDeadlineAt: 60_000 });
    t.onEvent(frame("tx", Fcf.EOP | 1, "EOP", 40_000), 10_000);
    t.onEvent({ type: "phaseD", atSample: 48_000, fcf: Fcf.MCF, name: "MCF" }, 11_000);
    t.onEvent(frame("tx", Fcf.DCN | 1, "DCN", 56_000), 12_000);
    assert.equal(t.phase, "phase_e");
    t.onEvent({ type: "phaseE", atSample: 60_000, completionCode: 0, name: "T30_ERR_OK", text: "OK" }, 13_000);
    assert.ok(t.ended);
    assert.deepEqual(t.progress(2), { disReceived: true, transferStarted: true, pagesConfirmed: 2 });
  });

  it("goes back to phase B on FTT, and knows nothing of a DIS that never came", () => {
    const t = new FaxProgressTracker([1000], 0);
    assert.deepEqual(t.progress(0), { disReceived: false, transferStarted: false, pagesConfirmed: 0 });
    t.onEvent(frame("rx", Fcf.DIS, "DIS", 100), 100);
    t.onEvent(frame("rx", Fcf.FTT, "FTT", 200), 200);
    assert.equal(t.phase, "phase_b");
    assert.deepEqual(t.progress(0), { disReceived: true, transferStarted: false, pagesConfirmed: 0 });
  });
});

describe("SIP failures as call ends", () => {
  const failure = (f: Partial<SipCallFailure>): SipCallFailure => ({
    result: "failed",
    sipStatus: null,
    reasonPhrase: "",
    phase: "ring",
    cause: "rejected",
    reason: null,
    answered: false,
    credentialsSent: false,
    setupMs: null,
    ...f,
  });
  const reasonOf = (f: Partial<SipCallFailure>, provisional = true): string | null =>
    outcomeOfCall(endOfSipFailure(failure(f), 55_000, provisional), { pagesTotal: 1, transport: null }).reasonCode;

  it("maps busy, wrong numbers, refused credentials, ring timeouts and silence", () => {
    assert.equal(reasonOf({ sipStatus: 486, reasonPhrase: "Busy Here", reason: { protocol: "Q.850", cause: 17, text: null } }), "line_busy");
    assert.equal(reasonOf({ sipStatus: 404, reasonPhrase: "Not Found" }), "invalid_number");
    assert.equal(reasonOf({ sipStatus: 403, reasonPhrase: "Forbidden", credentialsSent: true }), "trunk_rejected");
    assert.equal(reasonOf({ sipStatus: 407, reasonPhrase: "Proxy Authentication Required", cause: "auth" }), "trunk_rejected");
    assert.equal(reasonOf({ sipStatus: 487, cause: "ring_timeout" }), "no_answer");
    assert.equal(reasonOf({ sipStatus: 408, cause: "ring_timeout" }, false), "call_failed", "no 1xx at all is no answer from the network, not an unanswered call");
    assert.equal(reasonOf({ sipStatus: 408, cause: "timeout" }), "call_failed");
    assert.equal(reasonOf({ sipStatus: 503, reasonPhrase: "Service Unavailable (ECONNREFUSED)", cause: "transport" }), "call_failed");
    assert.equal(reasonOf({ sipStatus: 480, reasonPhrase: "Temporarily Unavailable", reason: { protocol: "Q.850", cause: 1, text: null } }), "invalid_number", "the Q.850 cause wins");
  });

  it("an answered call whose re-INVITE ended the dialog is a hang-up before the fax", () => {
    const end = endOfSipFailure(failure({ sipStatus: 481, reasonPhrase: "Call/Transaction Does Not Exist", phase: "reinvite", answered: true }), 55_000);
    assert.equal(end.kind, "remote_hangup");
    assert.equal(outcomeOfCall(end, { pagesTotal: 1, transport: null }).reasonCode, "fax_disconnected");
  });
});

it("fax ids are printable ASCII and at most 20 characters", () => {
  assert.equal(faxIdent("+49 89 998877"), "+49 89 998877");
  assert.equal(faxIdent("Müller GmbH & Co. KG, München"), "M?ller GmbH & Co. KG");
});

describe("the SIP line before and around a call", () => {
  const noEngine: Engine = {
    name: "none",
    openT38Session: () => assert.fail("no fax may start"),
    openAudioSession: () => assert.fail("no fax may start"),
  };
  const trunk = (proxyPort: number, extra: Partial<TrunkConfig> = {}): TrunkConfig =>
    testTrunk(proxyPort, { name: "silent", csid: null, maxCalls: 1, routes: ["+49"], ringTimeoutMs: 150, ...extra });
  const request = (e164: string, image = true): CallRequest => ({
    jobId: "job",
    recipientId: "rcp",
    attemptNo: 1,
    e164,
    dialString: e164.replace("+", "00"),
    csid: "Faxline",
    jobCsid: null,
    resolution: "HIGH",
    pages: [{ encodedBytes: 1000 }],
    ...(image ? { loadImage: async () => new Uint8Array(8) } : {}),
  });
  const line = (trunks: TrunkConfig[]): SipFaxLine =>
    new SipFaxLine({
      trunks,
      region: REGION_NUMBER_CONTEXT.DE,
      localAddress: "127.0.0.1",
      sipPort: 0,
      mediaPorts: { min: 47_620, max: 47_699 },
      capabilityMaxAgeMs: 86_400_000,
      engine: noEngine,
      // T1 10 ms: the INVITE to the silent proxy gives up (timer B, 64·T1) in 640 ms.
      sipTimers: { T1: 10, T2: 40, T4: 50, D: 100 },
    });

  it("fails without a call when no trunk routes the number, the number is bad, or there is no image", async () => {
    const sip = line([trunk(9)]);
    try {
      const signal = new AbortController().signal;
      const noRoute = await sip.call(request("+12125551234"), signal);
      assert.equal(noRoute.result === "failed" && noRoute.reasonCode, "no_route");
      assert.equal(noRoute.result === "failed" && noRoute.dialled, false);
      const bad = await sip.call({ ...request("+49"), e164: "+49" }, signal);
      assert.equal(bad.result === "failed" && bad.reasonCode, "invalid_number");
      const noImage = await sip.call(request("+4930123456", false), signal);
      assert.equal(noImage.result === "failed" && noImage.reasonCode, "fax_image_error");
    } finally {
      await sip.close();
    }
  });

  it("waits for a call slot when the route's trunks are full, and reports silence from the proxy as call_failed", async () => {
    const proxy = dgram.createSocket("udp4");
    let invites = 0;
    proxy.on("message", (m) => {
      if (m.toString().startsWith("INVITE ")) invites += 1;
    });
    await new Promise<void>((resolve) => proxy.bind(0, "127.0.0.1", resolve));
    const sip = line([trunk(proxy.address().port)]);
    try {
      const signal = new AbortController().signal;
      const t0 = performance.now();
      const ends: number[] = [];
      const calls = [request("+4930111111"), request("+4930222222")].map((r) =>
        sip.call(r, signal).then((outcome) => {
          ends.push(performance.now() - t0);
          return outcome;
        }),
      );
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual([...sip.activeCalls], [["silent", 1]], "maxCalls 1: the second call waits");
      const outcomes = await Promise.all(calls);
      for (const outcome of outcomes) {
        assert.equal(outcome.result, "failed");
        if (outcome.result !== "failed") continue;
        assert.equal(outcome.reasonCode, "call_failed");
        assert.match(outcome.rawCause ?? "", /No response at all to the INVITE|No final response to the INVITE/);
        assert.equal(outcome.durationSecs, 0);
        assert.match(outcome.sentToNumber ?? "", /^004930(111111|222222)$/);
      }
      assert.ok(ends[1]! - ends[0]! > 100, `the second call ran after the first (${ends.map(Math.round).join(", ")} ms)`);
      assert.ok(invites >= 2);
      assert.equal(sip.activeCalls.size, 0);
    } finally {
      await sip.close();
      proxy.close();
    }
  });

  it("answers a balancer's OPTIONS probe 200, 503 while its availability check names a reason, and 503 from the start of a drain", async () => {
    const sip = line([trunk(9)]);
    try {
      await sip.start();
      const port = sip.sipLocal!.port;
      assert.deepEqual(await sipOptions("127.0.0.1", port), { status: 200, reason: "OK" });
      let store: string | null = "the node's store does not answer";
      sip.setAvailability(() => store);
      assert.deepEqual(await sipOptions("127.0.0.1", port), { status: 503, reason: "Service Unavailable (the node's store does not answer)" });
      store = null;
      assert.deepEqual(await sipOptions("127.0.0.1", port), { status: 200, reason: "OK" });
      await sip.drain(new AbortController().signal);
      assert.deepEqual(await sipOptions("127.0.0.1", port), { status: 503, reason: "Service Unavailable (the node is shutting down)" });
    } finally {
      await sip.close();
    }
  });

  it("aborting a waiting call rejects it", async () => {
    const proxy = dgram.createSocket("udp4");
    await new Promise<void>((resolve) => proxy.bind(0, "127.0.0.1", resolve));
    const sip = line([trunk(proxy.address().port, { ringTimeoutMs: 2_000 })]);
    try {
      const first = sip.call(request("+4930111111"), new AbortController().signal);
      const controller = new AbortController();
      const second = sip.call(request("+4930222222"), controller.signal);
      await new Promise((r) => setTimeout(r, 30));
      controller.abort(new Error("node stopping"));
      await assert.rejects(second, /node stopping/);
      await first;
    } finally {
      await sip.close();
      proxy.close();
    }
  });
});

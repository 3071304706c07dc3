/**
 * Receiving over real SIP: one SipFaxLine (the sender, as the sender role runs it) dials another
 * SipFaxLine's answering side over loopback, in T.38 and G.711, with and without ECM, and the
 * pages the receiving line hands to its sink equal the pages sent, pixel for pixel. Both engines
 * run on a virtual clock (lines.clockSpeed) at the same speed.
 *
 * The sink here collects what the line hands over (the store's side is tested end to end in
 * test/interop/sip-reception-node.test.ts); everything between the two lines is real: SIP over UDP,
 * the re-INVITE to T.38, UDPTL or RTP, SpanDSP at both ends.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { InboundSink, ReceivedCall } from "../../src/line/sip-fax-line/inbound-calls.ts";
import { SipFaxLine } from "../../src/line/sip-fax-line/sip-fax-line.ts";
import { REGION_NUMBER_CONTEXT } from "../../src/numbers/normalize-number.ts";
import type { TrunkConfig } from "../../src/line/trunks/trunk-config.ts";
import { testTrunk } from "../support/sip-trunk.ts";
import { comparePages, identical, renderTwoPageLetter, requireNativeBuild, twoPageLowCallRequest } from "./interop-support.ts";

const SPEED = 20;
const DID = "+4930123456";

class CollectingSink implements InboundSink {
  readonly received: ReceivedCall[] = [];
  readonly waiters: ((call: ReceivedCall) => void)[] = [];
  numbers = new Map([[DID, { custNr: "1234", topic: "orders" }]]);
  async lookup(e164: string) {
    return this.numbers.get(e164) ?? null;
  }
  async store(call: ReceivedCall): Promise<void> {
    this.received.push(call);
    for (const w of this.waiters.splice(0)) w(call);
  }
  next(): Promise<ReceivedCall> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

/** The receptions' directories in a spool (not its lock file). */
function receptionsIn(spoolDir: string): string[] {
  return readdirSync(spoolDir).filter((name) => !name.startsWith("."));
}

function receivingLine(sink: InboundSink, trunk: Partial<TrunkConfig> = {}, channels = 4, extra: { spoolDir?: string; storeRetryDelaysMs?: readonly number[] } = {}): SipFaxLine {
  return new SipFaxLine({
    // The receiving side's trunk: the carrier that delivers calls (here the sending line on 127.0.0.1).
    trunks: [testTrunk(9, { name: "carrier-in", inbound: true, inboundFrom: ["127.0.0.0/8"], csid: "FAXLINE RX", ...trunk })],
    region: REGION_NUMBER_CONTEXT.DE,
    localAddress: "127.0.0.1",
    sipPort: 0,
    mediaPorts: { min: 47_900, max: 47_949 },
    clockSpeed: SPEED,
    capabilityMaxAgeMs: 86_400_000,
    inbound: { sink, channels, defaultCsid: "Faxline", ...extra },
  });
}

function sendingLine(port: number, trunk: Partial<TrunkConfig> = {}): SipFaxLine {
  return new SipFaxLine({
    trunks: [testTrunk(port, { name: "carrier-out", dial: { format: "e164", internationalPrefix: null, strip: "", prefix: "" }, ...trunk })],
    region: REGION_NUMBER_CONTEXT.DE,
    localAddress: "127.0.0.1",
    sipPort: 0,
    mediaPorts: { min: 47_950, max: 47_999 },
    clockSpeed: SPEED,
    capabilityMaxAgeMs: 86_400_000,
    sipTimers: { D: 1000 },
  });
}

describe("receiving faxes over SIP: Faxline to Faxline over loopback", () => {
  let image: Buffer;
  before(async () => {
    requireNativeBuild();
    image = await renderTwoPageLetter("LOW");
  });

  const cases: { name: string; t38: boolean; ecm: boolean }[] = [
    { name: "T.38 with ECM", t38: true, ecm: true },
    { name: "T.38 without ECM", t38: true, ecm: false },
    { name: "G.711 with ECM", t38: false, ecm: true },
    { name: "G.711 without ECM", t38: false, ecm: false },
  ];
  for (const c of cases) {
    it(`${c.name}: both pages arrive pixel-identical, with the sender's TSI, the numbers and the transport`, { timeout: 90_000 }, async (t) => {
      const sink = new CollectingSink();
      const rx = receivingLine(sink, { t38: c.t38, ecm: c.ecm });
      await rx.start();
      const tx = sendingLine(rx.sipLocal!.port, { t38: c.t38, ecm: c.ecm, csid: "SENDER 0049 89 1" });
      try {
        const arrived = sink.next();
        const outcome = await tx.call({ ...twoPageLowCallRequest(image), e164: DID, dialString: "004930123456" }, new AbortController().signal);
        t.diagnostic(JSON.stringify(outcome));
        assert.equal(outcome.result, "delivered");
        assert.equal(outcome.remoteCsid, "FAXLINE RX", "the receiver's CSI reached the sender");
        const received = await arrived;
        t.diagnostic(JSON.stringify({ ...received, image: received.image?.length }));
        assert.equal(received.report.status, "OK");
        assert.equal(received.report.pages, 2);
        assert.equal(received.report.transport, c.t38 ? "t38" : "g711");
        assert.equal(received.report.ecm, c.ecm);
        assert.equal(received.report.remoteCsid, "SENDER 0049 89 1");
        assert.equal(received.report.resolution, "LOW");
        assert.equal(received.report.completion, "T30_ERR_OK");
        // Each page's signal quality as SpanDSP saw it at the page's end: a clean loopback line.
        assert.deepEqual(received.report.pageQuality?.map((q) => q.page), [1, 2]);
        for (const q of received.report.pageQuality!) {
          assert.equal(q.bitRate, received.report.bitRate);
          assert.equal(q.retrains, 0, JSON.stringify(q));
          assert.ok(Number.isInteger(q.badRows) && q.badRows >= 0 && q.longestBadRowRun <= q.badRows, JSON.stringify(q));
        }
        assert.equal(received.toNumber, DID);
        assert.equal(received.fromNumber, "+4989998877");
        assert.deepEqual(received.number, { custNr: "1234", topic: "orders" });
        assert.ok(received.image !== null);
        const pages = await comparePages(image, received.image!, 2);
        assert.ok(identical(pages), JSON.stringify(pages));
      } finally {
        await tx.close();
        await rx.close();
      }
    });
  }

  it("G.711 calls report to each other over RTCP: sender reports with a block about the other's stream, nothing lost on loopback", { timeout: 60_000 }, async () => {
    const sink = new CollectingSink();
    const rx = receivingLine(sink, { t38: false });
    await rx.start();
    const tx = sendingLine(rx.sipLocal!.port, { t38: false });
    try {
      const arrived = sink.next();
      const sent = await tx.send({ to: DID, defaultCsid: "RTCP", image, pageSizes: [20_000, 5_000], transport: "g711" });
      assert.equal(sent.report.attempt.result, "delivered");
      const ours = sent.report.media.rtcp!;
      assert.ok(ours.sent >= 2 && ours.received >= 2, JSON.stringify(ours));
      assert.ok(ours.lastRemoteView !== null, "the receiver's report block about our stream arrived");
      assert.equal(ours.lastRemoteView.cumulativeLost, 0);
      assert.equal(ours.malformed, 0);
      assert.ok(ours.remoteBye, "the receiver's RTCP BYE at its end of the call");
      const theirs = (await arrived).report.rtcp!;
      assert.ok(theirs.received >= 2 && theirs.lastRemoteView !== null, JSON.stringify(theirs));
    } finally {
      await tx.close();
      await rx.close();
    }
  });

  it("the caller hangs up in the middle of page 2: a PARTIAL reception keeps page 1, pixel-identical", { timeout: 60_000 }, async (t) => {
    const sink = new CollectingSink();
    const rx = receivingLine(sink);
    await rx.start();
    const tx = sendingLine(rx.sipLocal!.port);
    const abort = new AbortController();
    try {
      const arrived = sink.next();
      await tx
        .send({
          to: DID,
          defaultCsid: "HANGS UP",
          image,
          pageSizes: [20_000, 5_000],
          signal: abort.signal,
          // The receiver's MCF for page 1: page 2 starts now, and the caller hangs up during it.
          onEngineEvent: (event) => {
            if (event.type === "phaseD" && event.name === "MCF") abort.abort(new Error("the caller hangs up"));
          },
        })
        .catch((error: unknown) => assert.match(String(error), /the caller hangs up/));
      const received = await arrived;
      t.diagnostic(JSON.stringify({ ...received, image: received.image?.length }));
      assert.equal(received.report.status, "PARTIAL");
      assert.equal(received.report.pages, 1);
      assert.equal(received.report.remoteCsid, "+49 89 998877", "the trunk's own csid goes before the default");
      assert.match(received.report.rawCause ?? "", /hung up|T30_ERR/);
      const pages = await comparePages(image, received.image!, 1);
      assert.ok(identical(pages), JSON.stringify(pages));
    } finally {
      await tx.close();
      await rx.close();
    }
  });

  it("a reception the store refuses every time stays in the spool, record, pages and report, and the next start stores it once", { timeout: 60_000 }, async () => {
    const spoolDir = mkdtempSync(path.join(tmpdir(), "faxline-spool-"));
    let tries = 0;
    const failing: InboundSink = {
      lookup: async (e164) => (e164 === DID ? { custNr: "1234", topic: "orders" } : null),
      store: async () => {
        tries += 1;
        throw new Error("the store is down");
      },
    };
    const rx = receivingLine(failing, {}, 4, { spoolDir, storeRetryDelaysMs: [10, 10] });
    await rx.start();
    const tx = sendingLine(rx.sipLocal!.port);
    try {
      const outcome = await tx.call({ ...twoPageLowCallRequest(image), e164: DID, dialString: "004930123456" }, new AbortController().signal);
      assert.equal(outcome.result, "delivered", "the caller's fax went through: keeping it is our side's job");
      const dirs = await (async () => {
        for (let i = 0; i < 200; i++) {
          const found = receptionsIn(spoolDir);
          if (found.length === 1 && readdirSync(path.join(spoolDir, found[0]!)).includes("ended.json")) return found;
          await new Promise((r) => setTimeout(r, 25));
        }
        return receptionsIn(spoolDir);
      })();
      assert.equal(dirs.length, 1, "one reception directory in the spool");
      assert.equal(tries, 3, "the first try and two retries");
      const dir = path.join(spoolDir, dirs[0]!);
      assert.deepEqual(readdirSync(dir).sort(), ["ended.json", "progress.json", "received.tif", "reception.json"]);
      const record = JSON.parse(readFileSync(path.join(dir, "reception.json"), "utf8"));
      assert.equal(record.toNumber, DID);
      assert.equal(record.id, dirs[0]);
      const ended = JSON.parse(readFileSync(path.join(dir, "ended.json"), "utf8"));
      assert.equal(ended.report.status, "OK");
      assert.equal(ended.report.pages, 2);
      assert.equal(JSON.parse(readFileSync(path.join(dir, "progress.json"), "utf8")).completion, "T30_ERR_OK");
      assert.ok(identical(await comparePages(image, readFileSync(path.join(dir, "received.tif")), 2)));
    } finally {
      await tx.close();
      await rx.close();
    }
    // The next start of a line on this spool stores it, once, with the call's own report and id.
    const sink = new CollectingSink();
    const again = receivingLine(sink, {}, 4, { spoolDir });
    try {
      const stored = sink.next();
      await again.start();
      const call = await stored;
      assert.equal(call.report.status, "OK");
      assert.equal(call.report.pages, 2);
      assert.equal(call.report.transport, "t38");
      assert.equal(call.id?.startsWith("FI"), true);
      assert.ok(identical(await comparePages(image, call.image!, 2)));
      for (let i = 0; i < 200 && receptionsIn(spoolDir).length > 0; i++) await new Promise((r) => setTimeout(r, 25));
      assert.deepEqual(receptionsIn(spoolDir), [], "stored: its directory is gone");
      assert.deepEqual(readdirSync(spoolDir), [".lock"], "nothing else is left but the running line's lock");
      assert.equal(sink.received.length, 1);
    } finally {
      await again.close();
      rmSync(spoolDir, { recursive: true, force: true });
    }
  });

  it("a spool that cannot take the reception's record (a full or broken disk) refuses the call with 503 before answering, and nothing is stored", { timeout: 30_000 }, async () => {
    const blocked = mkdtempSync(path.join(tmpdir(), "faxline-spool-"));
    const spoolDir = path.join(blocked, "spool");
    const sink = new CollectingSink();
    const rx = receivingLine(sink, {}, 4, { spoolDir });
    let tx: SipFaxLine | undefined;
    try {
      await rx.start();
      // The disk breaks under the running line: the spool's path becomes a file, so no reception's
      // directory can be made in it (the same path as ENOSPC: the record is not written).
      rmSync(spoolDir, { recursive: true, force: true });
      writeFileSync(spoolDir, "");
      tx = sendingLine(rx.sipLocal!.port);
      const outcome = await tx.call({ ...twoPageLowCallRequest(image), e164: DID, dialString: "004930123456" }, new AbortController().signal);
      assert.equal(outcome.result, "failed");
      if (outcome.result !== "failed") return;
      assert.match(outcome.rawCause ?? "", /503/);
      assert.equal(sink.received.length, 0);
    } finally {
      await tx?.close();
      await rx.close();
      rmSync(blocked, { recursive: true, force: true });
    }
  });

  it("a call to a number of no topic is refused with 404 and nothing is stored", { timeout: 30_000 }, async () => {
    const sink = new CollectingSink();
    const rx = receivingLine(sink);
    await rx.start();
    const tx = sendingLine(rx.sipLocal!.port);
    try {
      const outcome = await tx.call({ ...twoPageLowCallRequest(image), e164: "+4930999999", dialString: "004930999999" }, new AbortController().signal);
      assert.equal(outcome.result, "failed");
      if (outcome.result !== "failed") return;
      assert.match(outcome.rawCause ?? "", /404/);
      assert.equal(sink.received.length, 0);
    } finally {
      await tx.close();
      await rx.close();
    }
  });

  it("a caller from an address of no inbound trunk is refused with 403", { timeout: 30_000 }, async () => {
    const sink = new CollectingSink();
    const rx = receivingLine(sink, { inboundFrom: ["192.0.2.0/24"] });
    await rx.start();
    const tx = sendingLine(rx.sipLocal!.port);
    try {
      const outcome = await tx.call({ ...twoPageLowCallRequest(image), e164: DID, dialString: "004930123456" }, new AbortController().signal);
      assert.equal(outcome.result, "failed");
      if (outcome.result !== "failed") return;
      assert.match(outcome.rawCause ?? "", /403/);
      assert.equal(sink.received.length, 0);
    } finally {
      await tx.close();
      await rx.close();
    }
  });

  it("a trunk known by digest credentials: its call is challenged (401), answers with the right password and is received; a wrong password gets 403", { timeout: 60_000 }, async () => {
    const sink = new CollectingSink();
    const rx = receivingLine(sink, { inboundFrom: [], inboundUsername: "carrier-a", inboundPassword: "s3cret" });
    await rx.start();
    const right = sendingLine(rx.sipLocal!.port, { username: "carrier-a", password: "s3cret" });
    const wrong = sendingLine(rx.sipLocal!.port, { name: "wrong", username: "carrier-a", password: "guess" });
    try {
      const request = { ...twoPageLowCallRequest(image), e164: DID, dialString: "004930123456" };
      const arrived = sink.next();
      const ok = await right.call(request, new AbortController().signal);
      assert.equal(ok.result, "delivered");
      assert.equal((await arrived).report.pages, 2);
      const refused = await wrong.call(request, new AbortController().signal);
      assert.equal(refused.result, "failed");
      if (refused.result !== "failed") return;
      assert.match(refused.rawCause ?? "", /403/);
      assert.equal(sink.received.length, 1);
    } finally {
      await right.close();
      await wrong.close();
      await rx.close();
    }
  });

  it("calls beyond the node's inbound channels are refused with 486 Busy Here", { timeout: 90_000 }, async () => {
    const sink = new CollectingSink();
    const rx = receivingLine(sink, {}, 1);
    await rx.start();
    const tx = sendingLine(rx.sipLocal!.port);
    try {
      // Started first, so that the second call follows the first by 300 ms, not by the start.
      await tx.start();
      const request = { ...twoPageLowCallRequest(image), e164: DID, dialString: "004930123456" };
      const [first, second] = await Promise.all([
        tx.call(request, new AbortController().signal),
        new Promise((r) => setTimeout(r, 300)).then(() => tx.call({ ...request, recipientId: "rcp2" }, new AbortController().signal)),
      ]);
      assert.equal(first.result, "delivered");
      assert.equal(second.result, "failed");
      if (second.result !== "failed") return;
      assert.match(second.rawCause ?? "", /486/);
    } finally {
      await tx.close();
      await rx.close();
    }
  });
});

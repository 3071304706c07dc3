/**
 * Receiving against SIPp as the carrier and SpanDSP's own T.38 terminal as the caller's fax
 * machine (test/peers/spandsp-receiver in its -t send mode): a caller's re-INVITE to T.38, T.38
 * offered in the first INVITE, a refused caller (403), a number of no topic (404) and a caller
 * who cancels while Faxline rings (487). The pages received equal the pages SpanDSP sent, pixel
 * for pixel. The answering side is a SipFaxLine as the sender role runs it, with a sink that
 * collects what it hands over (the store's side: test/interop/sip-reception-node.test.ts).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { InboundSink, ReceivedCall } from "../../src/line/sip-fax-line/inbound-calls.ts";
import { SipFaxLine } from "../../src/line/sip-fax-line/sip-fax-line.ts";
import type { TrunkConfig } from "../../src/line/trunks/trunk-config.ts";
import { REGION_NUMBER_CONTEXT } from "../../src/numbers/normalize-number.ts";
import { testTrunk } from "../support/sip-trunk.ts";
import { comparePages, identical, renderTwoPageLetter, requireNativeBuild, requirePeer } from "./interop-support.ts";
import { cleanupPeers, startSipp, startT38Sender } from "./peer-processes.ts";

const SPEED = 20;
const DID = "+4930123456";

class CollectingSink implements InboundSink {
  readonly received: ReceivedCall[] = [];
  async lookup(e164: string) {
    return e164 === DID ? { custNr: "1234", topic: "orders" } : null;
  }
  async store(call: ReceivedCall): Promise<void> {
    this.received.push(call);
  }
}

async function answeringLine(sink: CollectingSink, trunk: Partial<TrunkConfig> = {}): Promise<SipFaxLine> {
  const line = new SipFaxLine({
    trunks: [testTrunk(9, { name: "carrier-in", inbound: true, inboundFrom: ["127.0.0.1"], csid: "FAXLINE RX", ...trunk })],
    region: REGION_NUMBER_CONTEXT.DE,
    localAddress: "127.0.0.1",
    sipPort: 0,
    mediaPorts: { min: 47_800, max: 47_849 },
    clockSpeed: SPEED,
    capabilityMaxAgeMs: 86_400_000,
    inbound: { sink, channels: 4, defaultCsid: "Faxline" },
  });
  await line.start();
  return line;
}

/** Waits until the line has handed `count` receptions to the sink (the store runs after the BYE). */
async function receptions(sink: CollectingSink, count: number): Promise<ReceivedCall[]> {
  const deadline = Date.now() + 10_000;
  while (sink.received.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return sink.received;
}

describe("receiving faxes: SIPp as the carrier, SpanDSP as the caller's fax machine", () => {
  before(() => requirePeer("sipp"));
  let dir: string;
  let image: Buffer;
  let txFile: string;
  before(async () => {
    requireNativeBuild();
    dir = mkdtempSync(path.join(tmpdir(), "faxline-rx-sipp-"));
    image = await renderTwoPageLetter("HIGH");
    txFile = path.join(dir, "letter.tif");
    writeFileSync(txFile, image);
  });
  after(() => {
    cleanupPeers();
    rmSync(dir, { recursive: true, force: true });
  });

  const cases = [
    { scenario: "uac-fax-t38-reinvite.xml", how: "the caller re-INVITEs from G.711 to T.38, ECM (MMR)", ecm: true, compressions: undefined, encoding: "T.6" },
    { scenario: "uac-fax-t38-offer.xml", how: "T.38 is offered in the first INVITE, ECM (MMR)", ecm: true, compressions: undefined, encoding: "T.6" },
    { scenario: "uac-fax-t38-reinvite.xml", how: "a sender without ECM that codes only MH", ecm: false, compressions: ["MH"] as const, encoding: "T.4 1-D" },
    { scenario: "uac-fax-t38-offer.xml", how: "a sender without ECM that codes MH and MR", ecm: false, compressions: ["MH", "MR"] as const, encoding: "T.4 2-D" },
  ];
  for (const { scenario, how, ecm, compressions, encoding } of cases) {
    it(`${how}: both pages arrive pixel-identical and the reception is handed over as OK`, { timeout: 60_000 }, async (t) => {
      const sink = new CollectingSink();
      const line = await answeringLine(sink);
      const sender = await startT38Sender({ speed: SPEED, ecm, ident: "SPANDSP SENDER", txFile, ...(compressions !== undefined ? { compressions } : {}) });
      try {
        const sipp = await startSipp(scenario, {
          call: { remote: `127.0.0.1:${line.sipLocal!.port}`, service: "+4930123456" },
          keys: { rx_host: "127.0.0.1", rx_port: String(sender.port) },
        });
        const exit = await sipp.exit;
        assert.equal(exit.code, 0, `${exit.output}\n${sipp.errors()}`);
        const peer = await sender.result;
        t.diagnostic(JSON.stringify(peer.result));
        assert.equal(peer.result?.code, 0, peer.log.slice(-2000));
        assert.equal(peer.result?.pages_tx, 2);
        const [received] = await receptions(sink, 1);
        assert.ok(received !== undefined, "the reception was handed to the sink");
        assert.equal(received.report.status, "OK");
        assert.equal(received.report.pages, 2);
        assert.equal(received.report.transport, "t38");
        assert.equal(received.report.remoteCsid, "SPANDSP SENDER");
        assert.equal(received.report.ecm, ecm);
        assert.equal(received.report.encoding, encoding);
        assert.equal(received.report.resolution, "HIGH");
        assert.equal(received.toNumber, DID);
        assert.equal(received.fromNumber, "+4940123456");
        const pages = await comparePages(image, received.image!, 2);
        assert.ok(identical(pages), JSON.stringify(pages));
      } finally {
        sender.kill();
        await line.close();
      }
    });
  }

  it("a caller from an address no inbound trunk allows gets 403 Forbidden", { timeout: 30_000 }, async () => {
    const sink = new CollectingSink();
    const line = await answeringLine(sink, { inboundFrom: ["192.0.2.0/24"] });
    try {
      const sipp = await startSipp("uac-refused-403.xml", { call: { remote: `127.0.0.1:${line.sipLocal!.port}`, service: "+4930123456" } });
      const exit = await sipp.exit;
      assert.equal(exit.code, 0, `${exit.output}\n${sipp.errors()}`);
      assert.equal(sink.received.length, 0);
    } finally {
      await line.close();
    }
  });

  it("a call to a number of no topic gets 404 Not Found (the national form is read as a number of the node's region)", { timeout: 30_000 }, async () => {
    const sink = new CollectingSink();
    const line = await answeringLine(sink);
    try {
      const sipp = await startSipp("uac-unknown-number-404.xml", { call: { remote: `127.0.0.1:${line.sipLocal!.port}`, service: "030999999" } });
      const exit = await sipp.exit;
      assert.equal(exit.code, 0, `${exit.output}\n${sipp.errors()}`);
      assert.equal(sink.received.length, 0);
    } finally {
      await line.close();
    }
  });

  it("a caller who cancels while Faxline rings gets 200 for the CANCEL and 487 for the INVITE; nothing is stored", { timeout: 30_000 }, async () => {
    const sink = new CollectingSink();
    const line = await answeringLine(sink, { answerDelayMs: 5000 });
    try {
      const sipp = await startSipp("uac-cancel-487.xml", { call: { remote: `127.0.0.1:${line.sipLocal!.port}`, service: "030123456" } });
      const exit = await sipp.exit;
      assert.equal(exit.code, 0, `${exit.output}\n${sipp.errors()}`);
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(sink.received.length, 0);
      assert.equal(line.activeReceptions, 0);
    } finally {
      await line.close();
    }
  });
});

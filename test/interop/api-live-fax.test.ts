/**
 * End to end over a real line: a live account posts a two-page text fax through the REST API;
 * the node renders it, routes the number to a SIP trunk whose proxy is SIPp
 * (sipp/uas-fax-t38.xml), and the SIP line places the call. SIPp answers and re-INVITEs to T.38
 * with an SDP that points the UDPTL at a SpanDSP T.38 receiver in another process
 * (test/peers/spandsp-receiver), so the fax goes from Faxline's SpanDSP engine over our UDPTL to
 * an independent receiver, while SIPp holds the dialog until our BYE. The engine clocks of both
 * ends run 50 times faster than real time (`lines.clockSpeed: 50`, receiver `-s 50`).
 *
 * The report must carry what really happened: status OK, the pages, the number the trunk's dial
 * rule dialled (`sentToNumber`), the receiver's CSI as remote CSID, a duration; the receiver must
 * have taken both pages with T30_ERR_OK, pixel for pixel what was rendered.
 *
 * The same over G.711: a trunk with `t38: false`, SIPp answering with the SDP of a SpanDSP G.711
 * receiver over RTP (test/peers/spandsp-receiver/g711_receiver.c); and a far end that refuses our T.38
 * re-INVITE with 488, where the fax must go on as G.711 in the same call and the capability
 * cache must remember the refusal.
 *
 * The failure case: SIPp answers 486 Busy Here to both attempts; the recipient ends BUSY after
 * one retry of the busy class.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { failureReason } from "../../src/errors/failure-reasons.ts";
import { api, createTestLogin, startTestNode, tempDir, waitForFinalReport, type TestNode } from "../support/test-node.ts";
import { comparePages, LETTER, requireNativeBuild, requirePeer } from "./interop-support.ts";
import { cleanupPeers, startG711Receiver, startSipp, startT38Receiver, type ReceiverResult, type ReceiverRun, type SippRun } from "./peer-processes.ts";

const SPEED = 50;
/**
 * G.711 at 50× needs a playout delay of about a second (20 ms of wall-clock jitter × 50) at both
 * ends, which brings the T.30 round trip near its 3 s timer. 20× kept it at 0.4 s, but a 40 ms
 * stall of the loaded 2-core CI machine once cost the receiver the CSI frame (an OK report without
 * remote CSID); 10× gave twice the margin, until a stall while other tests ran on the machine cost
 * the TCF (T30_ERR_TX_PHBDEAD, RTP "missing_ticks" 12); 5× doubles it again for about 10 s more.
 */
const G711_SPEED = 5;
const RECEIVER_IDENT = "FAXLINE-TEST-RX";
const TRUNK_CSID = "+49 89 998877";

function trunksYaml(sippPort: number, t38: boolean): string {
  return [
    "trunks:",
    "  - name: sipp-carrier",
    `    proxy: "127.0.0.1:${sippPort}"`,
    '    callerNumber: "+4989998877"',
    `    csid: "${TRUNK_CSID}"`,
    "    dial:",
    "      format: digits",
    '    routes: ["+4930"]',
    "    ringTimeout: 20s",
    `    t38: ${t38}`,
    "",
  ].join("\n");
}

async function liveNode(dir: string, sippPort: number, overrides: Record<string, unknown> = {}, t38 = true): Promise<TestNode> {
  const trunksFile = path.join(dir, `trunks-${sippPort}.yaml`);
  writeFileSync(trunksFile, trunksYaml(sippPort, t38));
  return startTestNode({
    "lines.trunksFile": trunksFile,
    "lines.clockSpeed": SPEED,
    "lines.localAddress": "127.0.0.1",
    "lines.sipPort": 0,
    "lines.mediaPorts": "47000-47199",
    ...overrides,
  });
}

interface LetterRun {
  report: any;
  status: any;
  jobId: string;
  rx: ReceiverResult;
  rxExit: number | null;
  rxLog: string;
  rxFile: string;
  sippCode: number | null;
  sippOutput: string;
  sippLogs: string;
  sippErrors: string;
  wallMs: number;
}

/** Posts the two-page letter to +49 30 123456 as a live account and waits for the final report and both peers. */
async function faxLetter(node: TestNode, receiver: ReceiverRun, sipp: SippRun, custNr: string, login: string): Promise<LetterRun> {
  const creds = await createTestLogin(node, { custNr, login, isTest: false });
  const client = api(node.url, creds);
  const started = performance.now();
  const res = await client.post(`/${creds.custNr}/fax`, {
    recipients: [{ number: "+49 30 123456" }],
    documents: [{ name: "letter.txt", data: Buffer.from(LETTER).toString("base64") }],
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const report = await waitForFinalReport(client, creds.custNr, res.body.jobId, 150_000);
  const wallMs = performance.now() - started;
  // A receiver left waiting by a broken call ends on SIGTERM, still with its RESULT.
  const stop = setTimeout(() => receiver.kill(), 5_000);
  const { result: rx, exitCode, log } = await receiver.result;
  clearTimeout(stop);
  const stopSipp = setTimeout(() => sipp.kill(), 5_000);
  const { code, output } = await sipp.exit;
  clearTimeout(stopSipp);
  assert.ok(rx, `the receiver printed no RESULT (exit ${exitCode}):\n${log}`);
  return {
    report,
    status: report.recipientStatus[0],
    jobId: res.body.jobId,
    rx,
    rxExit: exitCode,
    rxLog: log,
    rxFile: receiver.rxFile,
    sippCode: code,
    sippOutput: output,
    sippLogs: sipp.logs(),
    sippErrors: sipp.errors(),
    wallMs,
  };
}

function describeRun(run: LetterRun): string {
  const media = run.rx.udptl ? `UDPTL ${JSON.stringify(run.rx.udptl)}` : `RTP ${JSON.stringify(run.rx.rtp)}`;
  const speed = run.rx.udptl ? SPEED : G711_SPEED;
  return (
    `report ${JSON.stringify(run.status)}; receiver ${run.rx.code} ${run.rx.text}, ${run.rx.pages_rx} pages, ${run.rx.bit_rate} bit/s, ` +
    `${run.rx.encoding}, ECM ${run.rx.ecm}, ${run.rx.virtual_s.toFixed(1)} s virtual; ${media}; ` +
    `${Math.round(run.wallMs)} ms of wall time from POST to the final report at ${speed}x`
  );
}

/** What every delivered letter must show, whatever carried it. */
async function assertDelivered(node: TestNode, run: LetterRun): Promise<void> {
  const db = node.node.context.store.db;
  const recipient = await db.selectFrom("recipients").selectAll().where("job_id", "=", run.jobId).executeTakeFirstOrThrow();
  const attempts = await db.selectFrom("attempts").selectAll().where("job_id", "=", run.jobId).execute();
  const context = `${run.status.reason}; attempts ${JSON.stringify(attempts.map((a) => [a.result, a.reason_code, a.raw_cause]))}; receiver log:\n${run.rxLog.slice(-3000)}`;
  assert.equal(run.status.status, "OK", context);
  assert.equal(run.report.pages, 2);
  assert.equal(recipient.pages_sent, 2);
  assert.equal(run.status.sentToNumber, "4930123456", "the trunk's dial rule (digits), not the intake's 00-style string");
  assert.equal(run.status.remoteCsid, RECEIVER_IDENT);
  assert.ok(run.status.durationInSecs > 0, `duration ${run.status.durationInSecs}`);
  assert.equal(attempts.length, 1);
  assert.equal(attempts[0]!.dial_string, "4930123456");
  assert.equal(attempts[0]!.result, "delivered");

  assert.equal(run.rx.code, 0, `receiver: ${run.rx.text}\n${context}`);
  assert.equal(run.rxExit, 0);
  assert.equal(run.rx.pages_rx, 2);
  assert.equal(run.rx.bad_rows, 0);
  assert.equal(run.rx.remote_ident, TRUNK_CSID, "the job names no CSID, so the trunk's is sent");
  assert.equal(run.rx.ecm, 1);

  const image = await db.selectFrom("fax_images").select("content").where("id", "=", recipient.fax_image_id!).executeTakeFirstOrThrow();
  const pages = await comparePages(image.content, readFileSync(run.rxFile), 2);
  for (const page of pages) {
    assert.equal(page.differingPixels, 0, `page ${page.page + 1}: ${page.differingPixels} pixels differ`);
    assert.equal(page.blackInExtraRows, 0, `page ${page.page + 1}: ${page.received.height} rows received, ${page.sent.height} sent`);
  }
  assert.equal(run.sippCode, 0, `sipp exited ${run.sippCode}:\n${run.sippOutput.slice(-2000)}\n${run.sippErrors}`);
  assert.match(run.sippLogs, /DIALLED 4930123456/);
}

describe("a live account's fax over a SIP trunk (SIPp) to a SpanDSP receiver, T.38 and G.711", () => {
  before(() => requirePeer("sipp"));
  const dir = tempDir("faxline-live-fax-");
  before(() => requireNativeBuild());
  after(() => {
    cleanupPeers();
    dir.remove();
  });

  it("over T.38: arrives pixel-identical, and the report carries pages, sentToNumber, remote CSID and duration", { timeout: 120_000 }, async (t) => {
    const receiver = await startT38Receiver({ speed: SPEED, ecm: true, ident: RECEIVER_IDENT });
    const sipp = await startSipp("uas-fax-t38.xml", { keys: { rx_host: "127.0.0.1", rx_port: String(receiver.port) } });
    const node = await liveNode(dir.path, sipp.port);
    try {
      const run = await faxLetter(node, receiver, sipp, "12345LV", "live-t38");
      t.diagnostic(describeRun(run));
      await assertDelivered(node, run);
      assert.equal(run.rx.encoding, "T.6", "ECM over T.38 keeps the G4 coding");
      const capability = await node.node.context.store.db.selectFrom("destination_capabilities").selectAll().where("e164", "=", "+4930123456").executeTakeFirst();
      assert.equal(capability?.worked_transport, "t38", "the capability cache remembers that T.38 worked");
      assert.equal(capability?.worked_ecm, 1);
      assert.equal(capability?.t38_refused_at, null);
    } finally {
      await node.stop();
    }
  });

  it("over G.711 (a trunk with t38: false): arrives pixel-identical", { timeout: 180_000 }, async (t) => {
    const receiver = await startG711Receiver({ speed: G711_SPEED, ecm: true, ident: RECEIVER_IDENT });
    const sipp = await startSipp("uas-fax-g711.xml", { keys: { rx_host: "127.0.0.1", rx_port: String(receiver.port) } });
    const node = await liveNode(dir.path, sipp.port, { "lines.clockSpeed": G711_SPEED, "retry.maxAttempts": 1 }, false);
    try {
      const run = await faxLetter(node, receiver, sipp, "12345LV", "live-g711");
      t.diagnostic(describeRun(run));
      await assertDelivered(node, run);
      const capability = await node.node.context.store.db.selectFrom("destination_capabilities").selectAll().where("e164", "=", "+4930123456").executeTakeFirst();
      assert.equal(capability?.worked_transport, "g711");
    } finally {
      await node.stop();
    }
  });

  it("T.38 refused (488): the fax goes on as G.711 in the same call, and the refusal is remembered", { timeout: 180_000 }, async (t) => {
    const receiver = await startG711Receiver({ speed: G711_SPEED, ecm: true, ident: RECEIVER_IDENT });
    const sipp = await startSipp("uas-fax-refuse-t38.xml", { keys: { rx_host: "127.0.0.1", rx_port: String(receiver.port) } });
    const node = await liveNode(dir.path, sipp.port, { "lines.clockSpeed": G711_SPEED, "retry.maxAttempts": 1 });
    try {
      const run = await faxLetter(node, receiver, sipp, "12345LV", "live-refused");
      t.diagnostic(describeRun(run));
      await assertDelivered(node, run);
      const capability = await node.node.context.store.db.selectFrom("destination_capabilities").selectAll().where("e164", "=", "+4930123456").executeTakeFirst();
      assert.equal(capability?.worked_transport, "g711", "what worked: G.711");
      assert.ok(capability?.t38_refused_at, "the refusal is remembered, so the next call skips T.38");
    } finally {
      await node.stop();
    }
  });

  it("ends BUSY when the trunk answers 486, after the busy class's retry", { timeout: 60_000 }, async () => {
    const sipp = await startSipp("uas-busy-486.xml", { calls: 2 });
    const node = await liveNode(dir.path, sipp.port, { "retry.busy": "10ms", "retry.maxAttempts": 5 });
    try {
      const creds = await createTestLogin(node, { custNr: "12345LV", login: "live-busy", isTest: false });
      const client = api(node.url, creds);
      const res = await client.post(`/${creds.custNr}/fax`, {
        recipients: [{ number: "+4930555000" }],
        documents: [{ name: "note.txt", data: Buffer.from("Busy line test\n").toString("base64") }],
      });
      assert.equal(res.status, 201);
      const report = await waitForFinalReport(client, creds.custNr, res.body.jobId, 45_000);
      const status = report.recipientStatus[0];
      assert.equal(status.status, "BUSY", status.reason);
      assert.equal(status.sentToNumber, "4930555000");

      const db = node.node.context.store.db;
      const attempts = await db.selectFrom("attempts").selectAll().where("job_id", "=", res.body.jobId).orderBy("attempt_no").execute();
      assert.equal(attempts.length, 2, "one call, then one busy retry");
      for (const a of attempts) {
        assert.equal(a.reason_code, "line_busy");
        assert.match(a.raw_cause ?? "", /^SIP 486 Busy Here \(Q\.850 cause 17 user busy\)/);
        assert.equal(a.duration_secs, 0);
      }
      assert.equal(failureReason("line_busy").retryClass, "busy");
      const recipient = await db.selectFrom("recipients").selectAll().where("job_id", "=", res.body.jobId).executeTakeFirstOrThrow();
      assert.deepEqual(JSON.parse(recipient.retries_used), { busy: 1 });
      const { code, output } = await sipp.exit;
      assert.equal(code, 0, output.slice(-2000));
      const capability = await db.selectFrom("destination_capabilities").selectAll().where("e164", "=", "+4930555000").executeTakeFirst();
      assert.equal(capability, undefined, "a busy line teaches nothing about the fax path");
    } finally {
      await node.stop();
    }
  });
});

/**
 * Stopping a node over SIP (issue 34; docs/operations.md "Stopping"): a node (`faxline serve`, a
 * child process) sends a live account's two-page fax over its SIP line to a trunk whose proxy is
 * SIPp (sipp/uas-fax-t38.xml), which points the T.38 media at SpanDSP's receiver in another
 * process (test/peers/spandsp-receiver). While that call runs, the node gets SIGTERM:
 *
 *  - a new inbound INVITE from the trunk, to a number the node receives on, is refused with
 *    503 Service Unavailable (SIPp as the carrier, uac-refused-503.xml) while the call still runs;
 *  - the call ends normally: both pages reach the receiver pixel for pixel, SIPp sees our BYE,
 *    the attempt is recorded delivered (once, not cut off and redialled);
 *  - the job's status push reaches a real HTTP receiver before the node exits with code 0.
 *
 * The engine clocks of both ends run 5 times faster than real time, so the call lasts several
 * seconds of wall time: the 503 needs a fraction of one.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import BetterSqlite3 from "better-sqlite3";
import { createAccountWithCli, freeUdpPort, runFaxlineCli, startChildNode, stopAllChildNodes, withChildLogs, type ChildNode } from "../support/child-node.ts";
import { PushReceiver } from "../support/push-receiver.ts";
import { api, eventually, tempDir } from "../support/test-node.ts";
import { comparePages, LETTER, requireNativeBuild, requirePeer } from "./interop-support.ts";
import { cleanupPeers, startSipp, startT38Receiver } from "./peer-processes.ts";

const SPEED = 5;
const ACCOUNT = { custNr: "34001LV", login: "drain-sip", password: "drain-sip-pass-1" };
const DID = "+4989123456";
const RECEIVER_IDENT = "FAXLINE-DRAIN-RX";

function readStore<T>(dataDir: string, read: (db: BetterSqlite3.Database) => T): T {
  const db = new BetterSqlite3(join(dataDir, "faxline.sqlite"), { readonly: true, fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

function attemptResults(dataDir: string): string[] {
  return readStore(dataDir, (db) => (db.prepare("SELECT result FROM attempts ORDER BY started_at").all() as Array<{ result: string }>).map((a) => a.result));
}

describe("a node stopped during a SIP fax call", { timeout: 180_000 }, () => {
  const dir = tempDir("faxline-sip-drain-");
  const push = new PushReceiver();
  let node: ChildNode | undefined;

  before(async () => {
    requireNativeBuild();
    requirePeer("sipp");
    await push.start();
    await createAccountWithCli(dir.path, ACCOUNT, { test: false });
    for (const args of [
      ["inbound", "topic", "create", "--customer", ACCOUNT.custNr, "--name", "main"],
      ["inbound", "number", "add", "--customer", ACCOUNT.custNr, "--topic", "main", "--number", DID],
    ]) {
      const result = await runFaxlineCli(args, { FAXLINE_DATA_DIR: dir.path, FAXLINE_LOG_LEVEL: "warn" });
      assert.equal(result.code, 0, result.stderr);
    }
  });
  after(async () => {
    cleanupPeers();
    await stopAllChildNodes();
    await push.stop();
    dir.remove();
  });

  it("finishes its call and pushes the report before it exits, and refuses a new inbound call with 503 meanwhile", async (t) => {
    const receiver = await startT38Receiver({ speed: SPEED, ecm: true, ident: RECEIVER_IDENT });
    const carrier = await startSipp("uas-fax-t38.xml", { keys: { rx_host: "127.0.0.1", rx_port: String(receiver.port) } });
    const trunks = join(dir.path, "trunks.yaml");
    writeFileSync(
      trunks,
      [
        "trunks:",
        "  - name: sipp-carrier",
        `    proxy: "127.0.0.1:${carrier.port}"`,
        '    callerNumber: "+4989998877"',
        "    dial:",
        "      format: digits",
        '    routes: ["+4930"]',
        "    inbound: true",
        '    inboundFrom: ["127.0.0.1"]',
        "",
      ].join("\n"),
    );
    const sipPort = await freeUdpPort();
    node = await startChildNode({
      name: "draining",
      dataDir: dir.path,
      logLevel: "info",
      env: {
        FAXLINE_LINES_TRUNKS_FILE: trunks,
        FAXLINE_LINES_LOCAL_ADDRESS: "127.0.0.1",
        FAXLINE_LINES_SIP_PORT: String(sipPort),
        FAXLINE_LINES_MEDIA_PORTS: "47200-47239",
        FAXLINE_LINES_CLOCK_SPEED: String(SPEED),
        FAXLINE_NODE_SHUTDOWN_GRACE: "90s",
        FAXLINE_PUSH_ALLOW_TARGETS: "127.0.0.1",
      },
    });
    await withChildLogs(() => [node], async () => {
      const res = await api(node!.url, ACCOUNT).post<{ jobId: string }>(`/${ACCOUNT.custNr}/fax`, {
        recipients: [{ number: "+49 30 123456" }],
        documents: [{ name: "letter.txt", data: Buffer.from(LETTER).toString("base64") }],
        statusReportOptions: { httpStatusPush: { targetUrl: push.url("/status") } },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const jobId = res.body.jobId;
      await eventually(async () => (attemptResults(dir.path).includes("in_progress") ? true : undefined), 60_000, "the call to start");

      const stoppedAt = performance.now();
      node!.kill("SIGTERM");
      await eventually(async () => ((await fetch(`${node!.url}/health/ready`)).status === 503 ? true : undefined), 10_000, "the node to drain");
      const refused = await startSipp("uac-refused-503.xml", { call: { remote: `127.0.0.1:${sipPort}`, service: DID }, timeoutSeconds: 20 });
      const refusal = await refused.exit;
      const refusedAfterMs = performance.now() - stoppedAt;
      assert.equal(refusal.code, 0, `the inbound INVITE was not refused with 503:\n${refusal.output.slice(-2000)}\n${refused.errors()}`);
      assert.equal(node!.running, true, "the node still drains");
      assert.deepEqual(attemptResults(dir.path), ["in_progress"], "the 503 came while the call ran");
      assert.equal(readStore(dir.path, (db) => (db.prepare("SELECT count(*) AS n FROM received_faxes").get() as { n: number }).n), 0, "the refused call left no reception");

      const exit = await node!.waitForExit(120_000);
      assert.deepEqual(exit, { code: 0, signal: null });
      t.diagnostic(`after SIGTERM: the INVITE refused within ${Math.round(refusedAfterMs)} ms, the node exited after ${Math.round(performance.now() - stoppedAt)} ms`);

      // The call ended normally, once.
      assert.deepEqual(attemptResults(dir.path), ["delivered"], "the call ran to its end and was not cut off");
      const { result: rx, exitCode, log } = await receiver.result;
      assert.equal(exitCode, 0, log.slice(-2000));
      assert.equal(rx?.code, 0, `${rx?.text}\n${log.slice(-2000)}`);
      assert.equal(rx?.pages_rx, 2);
      assert.equal(rx?.bad_rows, 0);
      const sent = readStore(dir.path, (db) => db.prepare("SELECT i.content FROM fax_images i JOIN recipients r ON r.fax_image_id = i.id WHERE r.job_id = ?").get(jobId) as { content: Buffer });
      for (const page of await comparePages(sent.content, readFileSync(receiver.rxFile), 2)) {
        assert.equal(page.differingPixels, 0, `page ${page.page + 1}: ${page.differingPixels} pixels differ`);
      }
      const carrierExit = await carrier.exit;
      assert.equal(carrierExit.code, 0, `the carrier's side of the call (our BYE):\n${carrierExit.output.slice(-2000)}\n${carrier.errors()}`);

      // Its report reached the receiver before the node exited (the receiver is still up; the node is gone).
      const pushed = push.received("/status");
      assert.equal(pushed.length, 1, `one push before the exit, got ${pushed.length}`);
      assert.equal(pushed[0]!.headers["x-faxline-job-id"], jobId);
      assert.match(pushed[0]!.body, /OK/);
      const states = readStore(dir.path, (db) => (db.prepare("SELECT state FROM notifications WHERE job_id = ?").all(jobId) as Array<{ state: string }>).map((n) => n.state));
      assert.deepEqual(states, ["delivered"], "the push's try was recorded before the exit");
    });
  });
});

/**
 * Durable reception (issue 31 item 1, docs/adr/0020-durable-reception.md): a page the caller's
 * fax machine was told was received (MCF) is never lost.
 *
 * The caller is SpanDSP's own T.38 terminal (test/peers/spandsp-receiver in its -t send mode)
 * behind SIPp as the carrier, sending a four-page letter; the node is `faxline serve` in a child
 * process (the compiled bundle), with its media process, on each store dialect.
 *
 *  1. SIGKILL: the node is killed the moment the sender has the MCF for page 1 (its "CONFIRMED"
 *     line). Restarted on the same data directory, it stores the reception from its spool: the
 *     pull API hands out a PARTIAL fax ("the node stopped during the reception") holding at least
 *     that page, each page pixel for pixel what was sent, and exactly the pages it says.
 *  2. Disk full: the node's reception spool is a small tmpfs (mounted in a user and mount
 *     namespace of the node's own: `unshare`, no root needed) that holds about two of the four
 *     pages. The node ends the call when a page cannot be kept, without confirming it; the pull
 *     API hands out a PARTIAL fax with the cause `spool_failed` and only the pages confirmed,
 *     whole and identical to what was sent. The sender saw as many MCFs as the fax has pages.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { wholePages } from "../../src/line/reception-spool/tiff-pages.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";
import { createAccountWithCli, freeUdpPort, runFaxlineCli, startChildNode, stopAllChildNodes, type ChildNode } from "../support/child-node.ts";
import { eventually, tempDir } from "../support/test-node.ts";
import { comparePages, identical, renderLetter, requireNativeBuild, requirePeer } from "./interop-support.ts";
import { cleanupPeers, startSipp, startT38Peers, type ReceiverRun, type SippRun } from "./peer-processes.ts";

// 10 times real time: four pages in about 6 s of wall time, with room for a loaded machine.
const SPEED = 10;
/** The topic and number of each test. */
const KILLED = { topic: "killed", did: "+4930123456" };
const FULL = { topic: "full", did: "+4930123457" };
const ACCOUNT = { custNr: "91031", login: "rx-durable", password: "rx-durable-1" };

for (const dialect of DIALECTS) {
  describe(`${dialect}: a confirmed page survives the receiving node's death and its full disk`, { timeout: 240_000 }, () => {
    const store = withDialect(dialect);
    const dir = tempDir("faxline-durable-rx-");
    let letter: { tiff: Buffer; pages: number };
    let txFile = "";
    let sipPort = 0;
    let pullPassword = "";
    let node: ChildNode | undefined;

    const env = (extra: Record<string, string> = {}): Record<string, string> => ({
      ...store.env(),
      FAXLINE_LINES_TRUNKS_FILE: join(dir.path, "trunks.yaml"),
      FAXLINE_LINES_LOCAL_ADDRESS: "127.0.0.1",
      FAXLINE_LINES_SIP_PORT: String(sipPort),
      FAXLINE_LINES_MEDIA_PORTS: "47500-47539",
      FAXLINE_LINES_CLOCK_SPEED: String(SPEED),
      ...extra,
    });
    const dataDir = join(dir.path, "node");

    async function startNode(name: string, options: { wrap?: string[]; env?: Record<string, string> } = {}): Promise<ChildNode> {
      node = await startChildNode({ name, dataDir, logLevel: "info", timeScale: "1", readyTimeoutMs: 90_000, env: env(options.env), ...(options.wrap ? { wrap: options.wrap } : {}) });
      return node;
    }

    /** The node's store with the account, a topic and number per test, and a pull password. */
    async function prepare(): Promise<void> {
      mkdirSync(dataDir, { recursive: true });
      const cli = { ...store.env(), FAXLINE_DATA_DIR: dataDir, FAXLINE_LOG_LEVEL: "warn" };
      await createAccountWithCli(dataDir, ACCOUNT, { env: store.env() });
      for (const { topic, did } of [KILLED, FULL]) {
        for (const args of [
          ["inbound", "topic", "create", "--customer", ACCOUNT.custNr, "--name", topic],
          ["inbound", "number", "add", "--customer", ACCOUNT.custNr, "--topic", topic, "--number", did],
        ]) {
          const result = await runFaxlineCli(args, cli);
          assert.equal(result.code, 0, result.stderr);
        }
      }
      const issued = await runFaxlineCli(["inbound", "credential", "issue", "--customer", ACCOUNT.custNr], cli);
      assert.equal(issued.code, 0, issued.stderr);
      pullPassword = issued.stdout.trim();
    }

    /** The caller: SpanDSP sending the letter behind SIPp, which re-INVITEs to T.38. */
    async function call(did: string): Promise<{ sender: ReceiverRun; sipp: SippRun; confirmed: number[] }> {
      const [sender] = await startT38Peers(1, { speed: SPEED, ecm: true, ident: "SPANDSP SENDER", txFile, wallSeconds: 90, ...(process.getuid?.() === 0 ? { nice: -20 } : {}) });
      const confirmed: number[] = [];
      sender!.onConfirmed((pages) => confirmed.push(pages));
      const sipp = await startSipp("uac-fax-t38-reinvite.xml", {
        call: { remote: `127.0.0.1:${sipPort}`, service: did },
        keys: { rx_host: "127.0.0.1", rx_port: String(sender!.port) },
        timeoutSeconds: 60,
      });
      return { sender: sender!, sipp, confirmed };
    }

    /** The topic's faxes as the pull API hands them out (with a login's lock), waiting for `count`. */
    async function pulled(url: string, topic: string, count: number): Promise<any[]> {
      const auth = `Basic ${Buffer.from(`${ACCOUNT.custNr}:${pullPassword}`).toString("base64")}`;
      const body = await eventually(
        async () => {
          const res = await fetch(`${url}/faxin/rest/v1/topics/${topic}?fetch=10`, { method: "POST", headers: { authorization: auth, "content-type": "application/json" }, body: "{}" });
          const json = (await res.json()) as any;
          return json.results?.length >= count ? json : undefined;
        },
        20_000,
        "the received fax in the topic",
      );
      for (const fax of body.results) {
        if (fax.pages === 0) continue;
        const tif = await fetch(fax.documents.find((d: any) => d.name.endsWith(".tif")).url, { headers: { authorization: auth } });
        assert.equal(tif.status, 200);
        fax.tiff = Buffer.from(await tif.arrayBuffer());
      }
      return body.results;
    }

    /** The fax holds exactly its pages, whole, each identical to the letter's page. */
    async function assertPagesAsSent(fax: { pages: number; tiff: Buffer }): Promise<void> {
      assert.equal((await wholePages(fax.tiff)).pages, fax.pages, "the image holds exactly the pages the fax says, each whole");
      const comparison = await comparePages(letter.tiff, fax.tiff, fax.pages);
      assert.ok(identical(comparison), JSON.stringify(comparison));
    }

    before(async () => {
      requireNativeBuild();
      requirePeer("sipp");
      requirePeer("unshare");
      letter = await renderLetter(200, "LOW");
      assert.equal(letter.pages, 4, "the letter has four pages");
      txFile = join(dir.path, "letter.tif");
      writeFileSync(txFile, letter.tiff);
      writeFileSync(
        join(dir.path, "trunks.yaml"),
        ["trunks:", "  - name: carrier", "    proxy: 127.0.0.1:9", '    callerNumber: "+4930555000"', '    routes: ["+"]', "    inbound: true", '    inboundFrom: ["127.0.0.1"]', ""].join("\n"),
      );
      sipPort = await freeUdpPort();
      await prepare();
    });

    after(async () => {
      cleanupPeers();
      await stopAllChildNodes();
      dir.remove();
    });

    it("SIGKILLed after page 1 of 4 is confirmed, the restarted node hands out a fax with every confirmed page, identical to what was sent", async () => {
      const first = await startNode("node");
      const { sender, sipp, confirmed } = await call(KILLED.did);
      let killedAfter = 0;
      sender.onConfirmed((pages) => {
        if (pages === 1 && first.running) {
          first.kill("SIGKILL");
          killedAfter = pages;
        }
      });
      // The sender ends on its own only when the fax did not get as far as page 1's MCF.
      const ended = await Promise.race([first.waitForExit(60_000).then(() => null), sender.result]);
      if (ended !== null) {
        first.kill("SIGKILL");
        await first.waitForExit();
        assert.fail(`the sender ended before page 1 was confirmed: ${JSON.stringify(ended.result)}\n${ended.log.slice(-2000)}\n${first.describe()}`);
      }
      assert.equal(first.exitStatus?.signal, "SIGKILL", first.describe());
      assert.equal(killedAfter, 1, "the node was killed when the sender had the MCF for page 1");
      sipp.kill();
      const sent = await sender.result;
      assert.ok((sent.result?.pages_tx ?? 0) < 4, `the fax did not get through: ${JSON.stringify(sent.result)}`);

      const second = await startNode("node, restarted");
      const [fax] = await pulled(second.url, KILLED.topic, 1);
      assert.ok(fax.pages >= 1 && fax.pages >= Math.max(...confirmed), `every page the sender had confirmed is kept: ${fax.pages} kept, MCFs for ${JSON.stringify(confirmed)}`);
      assert.equal(fax.status, "PARTIAL");
      assert.equal(fax.calledNumber, KILLED.did);
      assert.equal(fax.callingNumber, "+4940123456");
      assert.equal(fax.remoteCsid, "SPANDSP SENDER");
      await assertPagesAsSent(fax);
      const log = second.logLines().find((l) => l.msg === "storing a reception a previous run of this node left unfinished");
      assert.ok(log, second.describe());
      assert.match(String(log.status), /PARTIAL/);
      await second.stop();
    });

    it("with the disk of its reception spool full, the node ends the call without confirming the page it cannot keep, and hands out only the whole confirmed pages", async () => {
      const spool = join(dir.path, "full-spool");
      mkdirSync(spool, { recursive: true });
      // A tmpfs that holds the lock, the record, the progress file and about two pages: the third cannot be kept.
      const wrap = ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", 'mount -t tmpfs -o size=72k tmpfs "$0" && exec "$@"', spool];
      const full = await startNode("node, spool full", { wrap, env: { FAXLINE_INBOUND_SPOOL_DIR: spool } });
      const { sender, sipp, confirmed } = await call(FULL.did);
      const sent = await sender.result;
      const sippExit = await sipp.exit;
      assert.equal(sippExit.code, 0, `the node hung up the call (BYE): ${sippExit.output}\n${sipp.errors()}\n${full.describe()}`);
      assert.notEqual(sent.result?.code, 0, `the fax did not end well for the sender: ${JSON.stringify(sent.result)}`);
      const [fax] = await pulled(full.url, FULL.topic, 1);
      assert.equal(fax.status, "PARTIAL", JSON.stringify(fax));
      assert.ok(fax.pages >= 1 && fax.pages < 4, `some pages were kept, not all: ${fax.pages}`);
      assert.equal(fax.pages, Math.max(0, ...confirmed), `the fax holds exactly the pages the sender saw confirmed (${JSON.stringify(confirmed)}): ${JSON.stringify(sent.result)}\n${sent.log.slice(-3000)}\n${full.describe()}`);
      await assertPagesAsSent(fax);
      const ended = full.logLines().find((l) => l.msg === "fax reception ended");
      assert.ok(ended, full.describe());
      assert.match(String(ended.rawCause), /could not be kept on the node's disk|not whole in the spool file/, String(ended.rawCause));
      await full.stop();
    });
  });
}

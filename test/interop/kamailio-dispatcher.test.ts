/**
 * Receiving behind a SIP load balancer (issue 31, docs/deployment.md "Receiving behind a SIP load
 * balancer"): two Faxline nodes (`faxline serve`, child processes, each on its own data
 * directory) behind a real Kamailio running examples/kamailio/kamailio.cfg, the file the guide
 * ships (kamailio-peer.ts). The carrier is SIPp: for two real faxes with SpanDSP's T.38 terminal
 * behind it as the caller's fax machine (uac-fax-t38-via-proxy.xml: the caller re-INVITEs to
 * T.38; uac-fax-node-reinvite-via-proxy.xml: the node does), whose re-INVITE and BYE pass the
 * balancer by its Record-Route, both ways; for the rest, calls it hangs up as soon as they are
 * answered (uac-call-hangup-via-proxy.xml), which show where each call went and that none was
 * refused, at no cost of fax timing.
 *
 * Kamailio listens on 127.0.0.2, the carrier and the nodes on 127.0.0.1: the nodes' inbound trunk
 * trusts the balancer's address only (a call straight from the carrier is refused with 403).
 * Kamailio probes the nodes with OPTIONS every second and gives a node one second to answer.
 *
 *  1. Both nodes up: calls are spread over them (a fax, a call, to each).
 *  2. One node SIGKILLed: calls placed at once still reach the survivor (the balancer passes a
 *     call the dead node leaves unanswered to the next node); once the dispatcher has noticed,
 *     every call goes straight to the survivor.
 *  3. The node restarted on its port: the dispatcher puts it back, calls are spread again.
 *  4. A node told to stop (SIGTERM) drains: its OPTIONS answer 503 while a call of its own still
 *     runs, the dispatcher takes it out, and new calls go to the other node meanwhile.
 *  5. No node up: the balancer answers the carrier's OPTIONS and INVITEs with 503.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import BetterSqlite3 from "better-sqlite3";
import { createAccountWithCli, freeUdpPort, runFaxlineCli, startChildNode, stopAllChildNodes, withChildLogs, type ChildNode } from "../support/child-node.ts";
import { sipOptions } from "../support/sip-options.ts";
import { api, eventually, tempDir, TEXT_DOC } from "../support/test-node.ts";
import { renderTwoPageLetter, requireNativeBuild, requirePeer } from "./interop-support.ts";
import { startKamailio, type KamailioRun } from "./kamailio-peer.ts";
import { cleanupPeers, startSipp, startT38Peers, type SippRun } from "./peer-processes.ts";

const SPEED = 20;
const BALANCER = "127.0.0.2";
const DID = "+4930123456";
const ACCOUNT = { custNr: "91001", login: "rx-balanced", password: "rx-balanced-1" };

interface Reception {
  from_number: string;
  status: string;
  pages: number;
  transport: string | null;
}

/** The receptions a node stored (its SQLite file, read-only; also after the node died). */
function receptions(dataDir: string): Reception[] {
  const db = new BetterSqlite3(join(dataDir, "faxline.sqlite"), { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT from_number, status, pages, transport FROM received_faxes ORDER BY received_at").all() as Reception[];
  } finally {
    db.close();
  }
}

function inProgressCalls(dataDir: string): number {
  const db = new BetterSqlite3(join(dataDir, "faxline.sqlite"), { readonly: true, fileMustExist: true });
  try {
    return (db.prepare("SELECT count(*) AS n FROM attempts WHERE result = 'in_progress'").get() as { n: number }).n;
  } finally {
    db.close();
  }
}


interface NodeSlot {
  name: string;
  dir: { path: string; remove(): void };
  sipPort: number;
  mediaPorts: string;
  node?: ChildNode;
}

describe("inbound calls spread over two nodes by Kamailio's dispatcher", { timeout: 180_000 }, () => {
  const slots: NodeSlot[] = [
    { name: "node-a", dir: tempDir("faxline-balanced-a-"), sipPort: 0, mediaPorts: "47900-47939" },
    { name: "node-b", dir: tempDir("faxline-balanced-b-"), sipPort: 0, mediaPorts: "47940-47979" },
  ];
  const [a, b] = slots as [NodeSlot, NodeSlot];
  const files = tempDir("faxline-balanced-");
  let kamailio: KamailioRun | undefined;
  let txFile = "";
  let placed = 0;

  async function startNode(slot: NodeSlot): Promise<ChildNode> {
    slot.node = await startChildNode({
      name: slot.name,
      dataDir: slot.dir.path,
      logLevel: "info",
      // Step 4's drain waits for a test-line call in real time (about 17 s).
      timeScale: "1",
      env: {
        FAXLINE_LINES_TRUNKS_FILE: join(files.path, "trunks.yaml"),
        FAXLINE_LINES_LOCAL_ADDRESS: "127.0.0.1",
        FAXLINE_LINES_SIP_PORT: String(slot.sipPort),
        FAXLINE_LINES_MEDIA_PORTS: slot.mediaPorts,
        FAXLINE_LINES_CLOCK_SPEED: String(SPEED),
        FAXLINE_NODE_SHUTDOWN_GRACE: "60s",
      },
    });
    return slot.node;
  }

  const escaped = (text: string): string => text.replace(/\./g, "\\.");
  const nextCaller = (): string => `+49401234${String(++placed).padStart(3, "0")}`;

  /** Both nodes' logs and the balancer's, for a failure message. */
  function diagnostics(): string {
    const nodes = slots.flatMap((s) => (s.node ? [s.node.describe(6000)] : [])).join("\n");
    return `--- kamailio ---\n${kamailio!.log().slice(-4000)}\n${nodes}`;
  }

  async function sippEnded(run: SippRun, what: string): Promise<string> {
    const exit = await run.exit;
    if (exit.code !== 0) assert.fail(`${what}: SIPp exited with ${exit.code}\n${exit.output}\n${run.errors()}\n${diagnostics()}`);
    const logs = run.logs();
    assert.match(logs, new RegExp(`record-route\\s+<sip:${escaped(BALANCER)}:${kamailio!.port};lr`), `${what}: the 200 names the balancer in Record-Route`);
    return logs;
  }

  /**
   * One real fax through the balancer (two pages, T.38, SpanDSP's terminal behind SIPp): the caller
   * switches to T.38 itself, or with `nodeReinvite` waits for the node's re-INVITE. Checks that the
   * node's BYE (and re-INVITE) reached the carrier with the balancer's Via on top and that SpanDSP
   * sent both pages. Returns the caller's number.
   */
  async function fax(options: { nodeReinvite?: boolean } = {}): Promise<string> {
    // At the nodes' media processes' priority (root only): both ends of a fax at 20 times real time
    // keep their T.30 timing while the machine is busy with other work.
    const [sender] = await startT38Peers(1, { speed: SPEED, ecm: true, ident: "CARRIER FAX", txFile, ...(process.getuid?.() === 0 ? { nice: -20 } : {}) });
    const caller = nextCaller();
    const scenario = options.nodeReinvite ? "uac-fax-node-reinvite-via-proxy.xml" : "uac-fax-t38-via-proxy.xml";
    const run = await startSipp(scenario, {
      call: { remote: `${BALANCER}:${kamailio!.port}`, service: DID },
      keys: { caller, rx_host: "127.0.0.1", rx_port: String(sender!.port) },
      timeoutSeconds: 60,
    });
    const logs = await sippEnded(run, `the fax from ${caller} (${scenario})`);
    const viaBalancer = `\\s+SIP/2\\.0/UDP ${escaped(BALANCER)}:${kamailio!.port};`;
    assert.match(logs, new RegExp(`bye-via${viaBalancer}`), "the node's BYE came through the balancer");
    if (options.nodeReinvite) assert.match(logs, new RegExp(`reinvite-via${viaBalancer}`), "the node's re-INVITE came through the balancer");
    const sent = await sender!.result;
    assert.equal(sent.result?.code, 0, `the fax from ${caller}: ${JSON.stringify(sent.result)}\n${sent.log.slice(-2000)}\n${diagnostics()}`);
    assert.equal(sent.result?.pages_tx, 2);
    return caller;
  }

  /**
   * `count` calls at once through the balancer that the carrier hangs up as soon as they are
   * answered (SIPp alone): each must be answered, none refused. Returns the callers' numbers.
   */
  async function calls(count: number): Promise<string[]> {
    const callers = Array.from({ length: count }, nextCaller);
    const runs = await Promise.all(
      callers.map((caller) => startSipp("uac-call-hangup-via-proxy.xml", { call: { remote: `${BALANCER}:${kamailio!.port}`, service: DID }, keys: { caller }, timeoutSeconds: 30 })),
    );
    for (const [i, run] of runs.entries()) await sippEnded(run, `the call from ${callers[i]}`);
    return callers;
  }

  /**
   * Which node stored each caller's reception (each exactly once: a fax OK with both pages over
   * T.38, a call hung up at once FAILED without pages); waits for the stores.
   */
  async function whereReceived(callers: readonly string[], kind: "fax" | "hung up"): Promise<Map<string, string>> {
    const expected = kind === "fax" ? { status: "OK", pages: 2, transport: "t38" } : { status: "FAILED", pages: 0, transport: null };
    return eventually(
      async () => {
        const where = new Map<string, string>();
        for (const slot of slots) {
          for (const r of receptions(slot.dir.path)) {
            if (!callers.includes(r.from_number)) continue;
            assert.ok(!where.has(r.from_number), `the call from ${r.from_number} was stored twice`);
            assert.deepEqual({ status: r.status, pages: r.pages, transport: r.transport }, expected, `the call from ${r.from_number}\n${diagnostics()}`);
            where.set(r.from_number, slot.name);
          }
        }
        return where.size === callers.length ? where : undefined;
      },
      15_000,
      `the receptions of ${callers.join(", ")}`,
    );
  }

  const logs = (): ChildNode[] => slots.flatMap((s) => (s.node ? [s.node] : []));

  before(async () => {
    requireNativeBuild();
    requirePeer("sipp");
    requirePeer("kamailio");
    const image = await renderTwoPageLetter("LOW");
    txFile = join(files.path, "letter.tif");
    writeFileSync(txFile, image);
    // The nodes' trunk: calls come from the balancer only (its proxy is the carrier's, for sending).
    writeFileSync(
      join(files.path, "trunks.yaml"),
      ["trunks:", "  - name: carrier", "    proxy: 127.0.0.1:9", '    callerNumber: "+4930555000"', '    routes: ["+"]', "    inbound: true", `    inboundFrom: ["${BALANCER}"]`, ""].join("\n"),
    );
    await Promise.all(
      slots.map(async (slot) => {
        slot.sipPort = await freeUdpPort();
        await createAccountWithCli(slot.dir.path, ACCOUNT);
        for (const args of [
          ["inbound", "topic", "create", "--customer", ACCOUNT.custNr, "--name", "main"],
          ["inbound", "number", "add", "--customer", ACCOUNT.custNr, "--topic", "main", "--number", DID],
        ]) {
          const result = await runFaxlineCli(args, { FAXLINE_DATA_DIR: slot.dir.path, FAXLINE_LOG_LEVEL: "warn" });
          assert.equal(result.code, 0, result.stderr);
        }
      }),
    );
    await Promise.all(slots.map((slot) => startNode(slot)));
    kamailio = await startKamailio({
      address: BALANCER,
      nodes: slots.map((s) => ({ address: "127.0.0.1", port: s.sipPort })),
      carrierNets: ["127.0.0.1/32"],
      pingIntervalSeconds: 1,
      frTimerMs: 1000,
    });
  });

  after(async () => {
    await kamailio?.stop();
    cleanupPeers();
    await stopAllChildNodes();
    for (const slot of slots) slot.dir.remove();
    files.remove();
  });

  it("with both nodes up, calls are spread over them, and the caller's re-INVITE to T.38, the node's, and the BYE pass the balancer; a call straight from the carrier is refused (403)", async () => {
    await withChildLogs(logs, async () => {
      // One fax at a time: the caller switches to T.38, then the node does.
      const faxes = [await fax(), await fax({ nodeReinvite: true })];
      const where = await whereReceived(faxes, "fax");
      assert.deepEqual([...where.values()].sort(), ["node-a", "node-b"], `round robin: ${JSON.stringify([...where])}`);
      const both = await whereReceived(await calls(2), "hung up");
      assert.deepEqual([...both.values()].sort(), ["node-a", "node-b"], `round robin: ${JSON.stringify([...both])}`);

      // The balancer tells the carrier it is up while a node is.
      assert.deepEqual(await sipOptions(BALANCER, kamailio!.port), { status: 200, reason: "OK" });
      // The nodes trust the balancer's address, not the carrier's.
      const direct = await startSipp("uac-refused-403.xml", { call: { remote: `127.0.0.1:${a.sipPort}`, service: DID } });
      const exit = await direct.exit;
      assert.equal(exit.code, 0, `${exit.output}\n${direct.errors()}`);
    });
  });

  it("a node SIGKILLed: calls at once reach the survivor, and once the dispatcher noticed, every call goes straight to it", async () => {
    await withChildLogs(logs, async () => {
      const mark = kamailio!.log().length;
      b.node!.kill("SIGKILL");
      await b.node!.waitForExit();
      // Placed before the dispatcher can know: one of them is sent to the dead node first, which
      // leaves it unanswered; the balancer passes it on to the survivor.
      const early = await calls(2);
      assert.deepEqual([...(await whereReceived(early, "hung up")).values()], ["node-a", "node-a"]);
      await kamailio!.waitForLog(new RegExp(`FAXLINE-NODE-DOWN sip:127\\.0\\.0\\.1:${b.sipPort}\\b`), mark, 15_000);

      const noticed = kamailio!.log().length;
      const later = await calls(4);
      assert.deepEqual([...(await whereReceived(later, "hung up")).values()], ["node-a", "node-a", "node-a", "node-a"]);
      const routed = kamailio!.log().slice(noticed);
      assert.equal((routed.match(/to node sip:/g) ?? []).length, 4, routed);
      assert.doesNotMatch(routed, new RegExp(`node sip:127\\.0\\.0\\.1:${b.sipPort}\\b`), "no call tried the dead node after the dispatcher noticed");
      assert.doesNotMatch(routed, /to the next node/, "no call needed a second try");
    });
  });

  it("the node restarted on its port is put back, and calls are spread over both again", async () => {
    await withChildLogs(logs, async () => {
      const mark = kamailio!.log().length;
      await startNode(b);
      await kamailio!.waitForLog(new RegExp(`FAXLINE-NODE-UP sip:127\\.0\\.0\\.1:${b.sipPort}\\b`), mark, 15_000);
      const callers = await calls(2);
      assert.deepEqual([...(await whereReceived(callers, "hung up")).values()].sort(), ["node-a", "node-b"]);
    });
  });

  it("a node that drains answers the probe with 503 and is taken out while its own call still runs; new calls go to the other node", async () => {
    await withChildLogs(logs, async () => {
      // A call of node A's own (the test line, about 17 s) keeps it draining; the test does not
      // wait for its end (a second SIGTERM at the end cuts it short).
      const job = await api(a.node!.url, ACCOUNT).post(`/${ACCOUNT.custNr}/fax`, { recipients: [{ number: "+4930555000111" }], documents: [TEXT_DOC] });
      assert.equal(job.status, 201, JSON.stringify(job.body));
      await eventually(async () => (inProgressCalls(a.dir.path) === 1 ? true : undefined), 20_000, "node A's call to start");

      const mark = kamailio!.log().length;
      a.node!.kill("SIGTERM");
      await kamailio!.waitForLog(new RegExp(`FAXLINE-NODE-DOWN sip:127\\.0\\.0\\.1:${a.sipPort}\\b`), mark, 15_000);
      assert.equal(a.node!.running, true, "node A was taken out while it still ran (its probe answered 503, it was not silent)");

      const noticed = kamailio!.log().length;
      const callers = await calls(2);
      assert.deepEqual([...(await whereReceived(callers, "hung up")).values()], ["node-b", "node-b"]);
      assert.doesNotMatch(kamailio!.log().slice(noticed), new RegExp(`to node sip:127\\.0\\.0\\.1:${a.sipPort}\\b`), "no call went to the draining node");
      assert.equal(a.node!.running, true, "node A still drained meanwhile");
      assert.equal(inProgressCalls(a.dir.path), 1, "node A's own call still ran");
    });
  });

  it("with no node up, the balancer answers the carrier's OPTIONS and calls with 503, so that the carrier tries another route", async () => {
    await withChildLogs(logs, async () => {
      const mark = kamailio!.log().length;
      b.node!.kill("SIGKILL");
      await kamailio!.waitForLog(new RegExp(`FAXLINE-NODE-DOWN sip:127\\.0\\.0\\.1:${b.sipPort}\\b`), mark, 15_000);
      assert.deepEqual(await sipOptions(BALANCER, kamailio!.port), { status: 503, reason: "No Faxline node available" });
      const refused = await startSipp("uac-refused-503.xml", { call: { remote: `${BALANCER}:${kamailio!.port}`, service: DID } });
      const exit = await refused.exit;
      assert.equal(exit.code, 0, `${exit.output}\n${refused.errors()}`);
    });
  });
});

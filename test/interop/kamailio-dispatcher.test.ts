/**
 * Receiving behind a SIP load balancer (issue 31, docs/deployment.md "Receiving behind a SIP load
 * balancer"): two Faxline nodes (`faxline serve`, child processes, each on its own data
 * directory) behind a real Kamailio running examples/kamailio/kamailio.cfg, the file the guide
 * ships (kamailio-peer.ts). The carrier is SIPp with SpanDSP's T.38 terminal as the caller's fax
 * machine (test/interop/sipp/uac-fax-t38-via-proxy.xml): every call is a real fax whose T.38
 * re-INVITE and BYE pass the balancer by its Record-Route, both ways.
 *
 * Kamailio listens on 127.0.0.2, the carrier and the nodes on 127.0.0.1: the nodes' inbound trunk
 * trusts the balancer's address only (a call straight from the carrier is refused with 403).
 * Kamailio probes the nodes with OPTIONS every second and gives a node one second to answer.
 *
 *  1. Both nodes up: calls are spread over them.
 *  2. One node SIGKILLed: calls placed at once still reach the survivor (the balancer passes a
 *     call the dead node leaves unanswered to the next node); once the dispatcher has noticed,
 *     every call goes straight to the survivor.
 *  3. The node restarted on its port: the dispatcher puts it back, calls are spread again.
 *  4. A node told to stop (SIGTERM) drains: its OPTIONS answer 503 while a call of its own still
 *     runs, the dispatcher takes it out, new calls go to the other node.
 */
import assert from "node:assert/strict";
import dgram from "node:dgram";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import BetterSqlite3 from "better-sqlite3";
import { createAccountWithCli, runFaxlineCli, startChildNode, stopAllChildNodes, withChildLogs, type ChildNode } from "../support/child-node.ts";
import { api, eventually, tempDir, TEXT_DOC } from "../support/test-node.ts";
import { renderTwoPageLetter, requireNativeBuild, requirePeer } from "./interop-support.ts";
import { startKamailio, type KamailioRun } from "./kamailio-peer.ts";
import { cleanupPeers, startSipp, startT38Peers } from "./peer-processes.ts";

const SPEED = 20;
const BALANCER = "127.0.0.2";
const DID = "+4930123456";
const ACCOUNT = { custNr: "91001", login: "rx-balanced", password: "rx-balanced-1" };

interface Reception {
  from_number: string;
  status: string;
  pages: number;
  transport: string;
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

async function freeUdpPort(): Promise<number> {
  const socket = dgram.createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  const port = socket.address().port;
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
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
  let calls = 0;

  async function startNode(slot: NodeSlot, env: Record<string, string> = {}): Promise<ChildNode> {
    slot.node = await startChildNode({
      name: slot.name,
      dataDir: slot.dir.path,
      logLevel: "info",
      // The drain of step 4 waits for a test-line call of a few seconds.
      timeScale: "0.3",
      env: {
        FAXLINE_LINES_TRUNKS_FILE: join(files.path, "trunks.yaml"),
        FAXLINE_LINES_LOCAL_ADDRESS: "127.0.0.1",
        FAXLINE_LINES_SIP_PORT: String(slot.sipPort),
        FAXLINE_LINES_MEDIA_PORTS: slot.mediaPorts,
        FAXLINE_LINES_CLOCK_SPEED: String(SPEED),
        FAXLINE_LINES_MEDIA_NICE: "0",
        FAXLINE_NODE_SHUTDOWN_GRACE: "60s",
        ...env,
      },
    });
    return slot.node;
  }

  /**
   * Places `count` faxes at once through the balancer, each from a number of its own, and checks
   * each went through: SIPp's scenario ended well (the 200 carried the balancer's Record-Route, the
   * node's BYE came with the balancer's Via on top) and SpanDSP sent both pages. Returns the callers.
   */
  async function fax(count: number): Promise<string[]> {
    const senders = await startT38Peers(count, { speed: SPEED, ecm: true, ident: "CARRIER FAX", txFile });
    const callers = senders.map(() => `+49401234${String(++calls).padStart(3, "0")}`);
    const runs = await Promise.all(
      senders.map((sender, i) =>
        startSipp("uac-fax-t38-via-proxy.xml", {
          call: { remote: `${BALANCER}:${kamailio!.port}`, service: DID },
          keys: { caller: callers[i]!, rx_host: "127.0.0.1", rx_port: String(sender.port) },
          timeoutSeconds: 60,
        }),
      ),
    );
    for (const [i, run] of runs.entries()) {
      const exit = await run.exit;
      assert.equal(exit.code, 0, `call from ${callers[i]}: ${exit.output}\n${run.errors()}`);
      const logs = run.logs();
      assert.match(logs, new RegExp(`record-route\\s+<sip:${BALANCER.replace(/\./g, "\\.")}:${kamailio!.port};lr`), "the 200 names the balancer in Record-Route");
      assert.match(logs, new RegExp(`bye-via\\s+SIP/2\\.0/UDP ${BALANCER.replace(/\./g, "\\.")}:${kamailio!.port};`), "the node's BYE came through the balancer");
      const sent = await senders[i]!.result;
      assert.equal(sent.result?.code, 0, `the fax from ${callers[i]}: ${JSON.stringify(sent.result)}\n${sent.log.slice(-2000)}`);
      assert.equal(sent.result?.pages_tx, 2);
    }
    return callers;
  }

  /** Which node stored each caller's fax (each exactly once, OK, both pages, T.38); waits for the stores. */
  async function whereReceived(callers: readonly string[]): Promise<Map<string, string>> {
    return eventually(
      async () => {
        const where = new Map<string, string>();
        for (const slot of slots) {
          for (const r of receptions(slot.dir.path)) {
            if (!callers.includes(r.from_number)) continue;
            assert.ok(!where.has(r.from_number), `the fax from ${r.from_number} was stored twice`);
            assert.deepEqual({ status: r.status, pages: r.pages, transport: r.transport }, { status: "OK", pages: 2, transport: "t38" }, `the fax from ${r.from_number}`);
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

  it("with both nodes up, calls are spread over them; a call straight from the carrier is refused (403)", async () => {
    await withChildLogs(logs, async () => {
      const callers = await fax(2);
      const where = await whereReceived(callers);
      assert.deepEqual([...where.values()].sort(), ["node-a", "node-b"], `round robin: ${JSON.stringify([...where])}`);

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
      const early = await fax(2);
      assert.deepEqual([...(await whereReceived(early)).values()], ["node-a", "node-a"]);
      await kamailio!.waitForLog(new RegExp(`FAXLINE-NODE-DOWN sip:127\\.0\\.0\\.1:${b.sipPort}\\b`), mark, 15_000);

      const noticed = kamailio!.log().length;
      const later = await fax(2);
      assert.deepEqual([...(await whereReceived(later)).values()], ["node-a", "node-a"]);
      const routed = kamailio!.log().slice(noticed);
      assert.equal((routed.match(/to node sip:/g) ?? []).length, 2, routed);
      assert.doesNotMatch(routed, new RegExp(`:${b.sipPort}\\b`), "no call tried the dead node after the dispatcher noticed");
      assert.doesNotMatch(routed, /to the next node/, "no call needed a second try");
    });
  });

  it("the node restarted on its port is put back, and calls are spread over both again", async () => {
    await withChildLogs(logs, async () => {
      const mark = kamailio!.log().length;
      await startNode(b);
      await kamailio!.waitForLog(new RegExp(`FAXLINE-NODE-UP sip:127\\.0\\.0\\.1:${b.sipPort}\\b`), mark, 15_000);
      const callers = await fax(2);
      assert.deepEqual([...(await whereReceived(callers)).values()].sort(), ["node-a", "node-b"]);
    });
  });

  it("a node that drains answers the probe with 503 and is taken out while its own call ends; new calls go to the other node", async () => {
    await withChildLogs(logs, async () => {
      // A call of node A's own (the test line: a few seconds) keeps it draining.
      const job = await api(a.node!.url, ACCOUNT).post(`/${ACCOUNT.custNr}/fax`, { recipients: [{ number: "+4930555000111" }], documents: [TEXT_DOC] });
      assert.equal(job.status, 201, JSON.stringify(job.body));
      await eventually(async () => (inProgressCalls(a.dir.path) === 1 ? true : undefined), 20_000, "node A's call to start");

      const mark = kamailio!.log().length;
      a.node!.kill("SIGTERM");
      await kamailio!.waitForLog(new RegExp(`FAXLINE-NODE-DOWN sip:127\\.0\\.0\\.1:${a.sipPort}\\b`), mark, 15_000);
      assert.equal(a.node!.running, true, "node A was taken out while it still ran (its probe answered 503, it was not silent)");

      const noticed = kamailio!.log().length;
      const callers = await fax(2);
      assert.deepEqual([...(await whereReceived(callers)).values()], ["node-b", "node-b"]);
      assert.doesNotMatch(kamailio!.log().slice(noticed), new RegExp(`:${a.sipPort}\\b`), "no call went to the draining node");

      // Its own call ended and was recorded: a clean stop.
      assert.deepEqual(await a.node!.waitForExit(30_000), { code: 0, signal: null });
      assert.equal(inProgressCalls(a.dir.path), 0);
    });
  });
});

/**
 * The SIP line's standing robustness suite (issue 30): generated malformed SIP sent to a real
 * node (`faxline serve`, a child process) over UDP, TCP and TLS, after which the node must still
 * be alive, answer OPTIONS on every listener and receive a real fax intact.
 *
 * The messages (test/support/sip-mutations.ts) are carrier traces (test/fixtures/sip-traces:
 * INVITEs with T.38 and G.711 SDP, re-INVITE, UPDATE, PRACK, BYE, ACK, INFO, CANCEL, OPTIONS,
 * REGISTER, responses) mutated by fast-check, plus a sweep of every method with every header set
 * to an edge value. The far end (test/support/sip-fuzz-client.ts) sends them in windows of
 * WINDOW messages; each window also carries a live call (a clean INVITE answered 200 and ACKed)
 * that the in-dialog seeds aim at, and ends with a clean OPTIONS that must be answered within
 * 5 s (the node neither died nor stalled). Calls a mutation left well-formed are hung up as a
 * carrier would.
 *
 * After each batch (BATCH messages): the process runs; OPTIONS over UDP, TCP and TLS get 200;
 * no fault of Faxline's own was counted (faxline_sip_messages_dropped_total{reason="internal"})
 * or logged at error level; and a fax from SpanDSP's T.38 terminal behind SIPp (the caller's
 * gateway, T.38 offered in the INVITE) is stored OK with both pages equal to those sent, pixel
 * for pixel. At the end every reception has ended (the SIP timers bound the half-open ones) and
 * the listeners hold no connection of ours.
 *
 * FAXLINE_SIP_FUZZ_RUNS (messages per transport; 600 here), FAXLINE_SIP_FUZZ_BATCH (messages
 * per batch; all of a transport's here) and FAXLINE_SIP_FUZZ_SEED (fixed here, so a run repeats)
 * are set by `npm run fuzz:sip -- --runs N --seed S` for long runs (FAXLINE_SIP_FUZZ_TRANSPORTS,
 * `--transports udp`, runs the batches of some transports only). A failing window is printed
 * with its seed, index and cases, and written to FAXLINE_SIP_FUZZ_DUMP (a file) when set.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import BetterSqlite3 from "better-sqlite3";
import { createAccountWithCli, freePort, freeUdpPort, runFaxlineCli, startChildNode, stopAllChildNodes, type ChildNode } from "../support/child-node.ts";
import { parsePrometheusText, type PromFamily } from "../support/prometheus-text.ts";
import { SipFuzzClient, type FuzzProtocol, type FuzzTarget, type LiveCall } from "../support/sip-fuzz-client.ts";
import { drawCases, loadSeeds, METHODS, renderCase, sweepCases, type MutationCase } from "../support/sip-mutations.ts";
import { tempDir } from "../support/test-node.ts";
import { comparePages, identical, renderTwoPageLetter, requireNativeBuild, requirePeer } from "./interop-support.ts";
import { cleanupPeers, startSipp, startT38Peers } from "./peer-processes.ts";

const RUNS = Number(process.env.FAXLINE_SIP_FUZZ_RUNS ?? 600);
const BATCH = Number(process.env.FAXLINE_SIP_FUZZ_BATCH ?? RUNS);
const SEED = Number(process.env.FAXLINE_SIP_FUZZ_SEED ?? 20261129);
const DUMP = process.env.FAXLINE_SIP_FUZZ_DUMP;
const WINDOW = 25;
const SPEED = 20;
const DID = "+4930123456";
/** The caller of the real faxes (uac-fax-t38-offer.xml); the generated messages call from another number. */
const FAX_CALLER = "+4940123456";
const ACCOUNT = { custNr: "91030", login: "rx-fuzz", password: "rx-fuzz-password" };
const TRANSPORTS: FuzzProtocol[] = ["udp", "tcp", "tls"];
/** The transports whose batches run (FAXLINE_SIP_FUZZ_TRANSPORTS, e.g. "udp" to repeat a UDP failure); the checks use all three. */
const FUZZED = (process.env.FAXLINE_SIP_FUZZ_TRANSPORTS?.split(",") ?? TRANSPORTS) as FuzzProtocol[];

interface Reception {
  id: string;
  status: string;
  pages: number;
  transport: string | null;
  image: Buffer | null;
}

function faxesReceived(dataDir: string): Reception[] {
  const db = new BetterSqlite3(join(dataDir, "faxline.sqlite"), { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT id, status, pages, transport, image FROM received_faxes WHERE from_number = ? ORDER BY received_at").all(FAX_CALLER) as Reception[];
  } finally {
    db.close();
  }
}

function makeCertificate(dir: string, cn: string): { certFile: string; keyFile: string; cert: Buffer } {
  const keyFile = join(dir, "sip-key.pem");
  const certFile = join(dir, "sip-cert.pem");
  const made = spawnSync(
    "openssl",
    ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", `/CN=${cn}`, "-addext", `subjectAltName=DNS:${cn}`, "-keyout", keyFile, "-out", certFile],
    { encoding: "utf8" },
  );
  assert.equal(made.status, 0, `openssl (Debian package openssl, installed by scripts/install.sh): ${made.stderr}`);
  return { certFile, keyFile, cert: readFileSync(certFile) };
}

/** A 32-bit seed for one window, from the run's seed, the transport and the window's index. */
function windowSeed(transport: FuzzProtocol, window: number): number {
  return (SEED * 31 + TRANSPORTS.indexOf(transport) * 1_000_003 + window * 7919) | 0;
}

describe("the SIP line survives generated malformed SIP over UDP, TCP and TLS", { timeout: Math.max(600_000, RUNS * 60) }, () => {
  const seeds = loadSeeds();
  const inviteSeed = seeds.find((s) => s.name === "invite-t38-offer")!;
  const dir = tempDir("faxline-sip-fuzz-");
  let node: ChildNode | undefined;
  let target: FuzzTarget;
  let txFile = "";
  let image: Buffer;
  let faxes = 0;
  let sent = 0;
  /** Every log line the node writes (at warn and above), kept whatever its output buffer drops; those checked already. */
  const LOGGED = /./;
  let linesChecked = 0;

  before(async () => {
    requireNativeBuild();
    requirePeer("sipp");
    image = await renderTwoPageLetter("LOW");
    txFile = join(dir.path, "letter.tif");
    writeFileSync(txFile, image);
    const certificate = makeCertificate(dir.path, "sip.faxline.test");
    writeFileSync(
      join(dir.path, "trunks.yaml"),
      ["trunks:", "  - name: carrier", "    proxy: 127.0.0.1:9", '    callerNumber: "+4930555000"', '    routes: ["+1"]', "    inbound: true", '    inboundFrom: ["127.0.0.1"]', ""].join("\n"),
    );
    const dataDir = join(dir.path, "data");
    await createAccountWithCli(dataDir, ACCOUNT);
    for (const args of [
      ["inbound", "topic", "create", "--customer", ACCOUNT.custNr, "--name", "main"],
      ["inbound", "number", "add", "--customer", ACCOUNT.custNr, "--topic", "main", "--number", DID],
    ]) {
      const result = await runFaxlineCli(args, { FAXLINE_DATA_DIR: dataDir, FAXLINE_LOG_LEVEL: "warn" });
      assert.equal(result.code, 0, result.stderr);
    }
    const [udpPort, tcpPort, tlsPort] = [await freeUdpPort(), await freePort(), await freePort()];
    node = await startChildNode({
      name: "fuzzed",
      dataDir,
      // A loaded machine (the whole suite, other work) can take its time to start a node.
      readyTimeoutMs: 90_000,
      env: {
        FAXLINE_LINES_TRUNKS_FILE: join(dir.path, "trunks.yaml"),
        FAXLINE_LINES_LOCAL_ADDRESS: "127.0.0.1",
        FAXLINE_LINES_SIP_PORT: String(udpPort),
        FAXLINE_LINES_SIP_TCP_PORT: String(tcpPort),
        FAXLINE_LINES_SIP_TLS_PORT: String(tlsPort),
        FAXLINE_LINES_SIP_TLS_CERT_FILE: certificate.certFile,
        FAXLINE_LINES_SIP_TLS_KEY_FILE: certificate.keyFile,
        FAXLINE_LINES_MEDIA_PORTS: "46100-46299",
        FAXLINE_LINES_CLOCK_SPEED: String(SPEED),
        // Every message from this one address must reach the parser and the call code, not the
        // per-source bounds (test/unit/sip-guard.test.ts and sip-flood-limits.test.ts test those).
        FAXLINE_LINES_SIP_REQUEST_RATE: "100000",
        FAXLINE_LINES_SIP_INVITE_RATE: "10000",
      },
    });
    node.keepLines(LOGGED);
    target = { address: "127.0.0.1", udpPort, tcpPort, tlsPort, tlsCa: certificate.cert, tlsServerName: "sip.faxline.test" };
  });

  after(async () => {
    cleanupPeers();
    await stopAllChildNodes();
    dir.remove();
  });

  const diagnostics = (): string => node?.describe(8000) ?? "(no node)";

  async function metrics(): Promise<Map<string, PromFamily>> {
    return parsePrometheusText(await (await fetch(`${node!.url}/metrics`)).text());
  }

  /** The value of a metric's sample (with `labels`), or 0 when it has none. */
  function metricValue(m: Map<string, PromFamily>, name: string, labels: Record<string, string> = {}): number {
    const sample = m.get(name)?.samples.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
    return sample?.value ?? 0;
  }

  /** Sends one window of cases; fails, with the cases, when the node does not answer the OPTIONS after it. */
  async function sendWindow(client: SipFuzzClient, cases: readonly MutationCase[], where: string): Promise<void> {
    await client.openWindow();
    const live: LiveCall | null = await client.liveCall(inviteSeed, DID);
    for (const c of cases) {
      const seed = seeds[c.seed]!;
      const bytes = renderCase(seeds, c, client.values(DID, seed.inDialog && c.inLiveCall ? live : null));
      await client.send(bytes, c.chunks);
      sent++;
    }
    const status = await client.probe(5000);
    // Calls answered up to now are hung up; those answered later, after the next window.
    await client.hangUpAnswered(client.takeResponses());
    client.closeWindow();
    if (status !== 200 || !node!.running) {
      const report = JSON.stringify({ where, seed: SEED, cases }, null, 1);
      if (DUMP) writeFileSync(DUMP, report);
      assert.fail(`${where}: after this window the node ${node!.running ? `answered OPTIONS with ${status} (null: not within 5 s)` : "had exited"}\n${report.slice(0, 20_000)}\n${diagnostics()}`);
    }
  }

  /** The checks after a batch: alive, OPTIONS on every listener, no fault of our own, a real fax intact. */
  async function afterBatch(client: SipFuzzClient, where: string, t: { diagnostic(message: string): void }): Promise<void> {
    assert.ok(node!.running, `${where}: the node runs\n${diagnostics()}`);
    for (const protocol of TRANSPORTS) assert.equal(await client.probe(5000, protocol), 200, `${where}: OPTIONS over ${protocol}\n${diagnostics()}`);
    const m = await metrics();
    const dropped = Object.fromEntries((m.get("faxline_sip_messages_dropped_total")?.samples ?? []).filter((s) => s.value > 0).map((s) => [s.labels.reason, s.value]));
    t.diagnostic(`${where}: ${sent} messages sent so far (${client.reconnects} connections replaced after the node closed them); dropped by reason ${JSON.stringify(dropped)}`);
    assert.equal(metricValue(m, "faxline_sip_messages_dropped_total", { reason: "internal" }), 0, `${where}: no fault of Faxline's own\n${diagnostics()}`);
    const logged = node!.keptLines(LOGGED);
    const errors = logged.slice(linesChecked).filter((l) => typeof l.level === "number" && l.level >= 50);
    linesChecked = logged.length;
    assert.equal(errors.length, 0, `${where}: nothing logged at error level: ${JSON.stringify(errors, null, 1).slice(0, 6000)}`);

    // A real fax, after the batch, over UDP: SpanDSP's T.38 terminal behind SIPp as the caller.
    const [sender] = await startT38Peers(1, { speed: SPEED, ecm: true, ident: "FUZZ SENDER", txFile, ...(process.getuid?.() === 0 ? { nice: -20 } : {}) });
    const sipp = await startSipp("uac-fax-t38-offer.xml", {
      call: { remote: `127.0.0.1:${target.udpPort}`, service: DID },
      keys: { rx_host: "127.0.0.1", rx_port: String(sender!.port) },
      timeoutSeconds: 60,
    });
    const exit = await sipp.exit;
    assert.equal(exit.code, 0, `${where}: the fax call\n${exit.output}\n${sipp.errors()}\n${diagnostics()}`);
    const peer = await sender!.result;
    assert.equal(peer.result?.code, 0, `${where}: ${peer.log.slice(-2000)}`);
    assert.equal(peer.result?.pages_tx, 2);
    faxes++;
    let stored: Reception[] = [];
    for (let i = 0; i < 200 && stored.length < faxes; i++) {
      stored = faxesReceived(node!.dataDir);
      if (stored.length < faxes) await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(stored.length, faxes, `${where}: the fax was stored once\n${diagnostics()}`);
    const fax = stored[faxes - 1]!;
    assert.deepEqual({ status: fax.status, pages: fax.pages, transport: fax.transport }, { status: "OK", pages: 2, transport: "t38" }, where);
    const pages = await comparePages(image, fax.image!, 2);
    assert.ok(identical(pages), `${where}: ${JSON.stringify(pages)}`);
  }

  it(`every method with every header set to an edge value, over UDP (${"sweep"})`, async (t) => {
    const client = new SipFuzzClient("udp", target);
    await client.start();
    try {
      const cases = sweepCases(seeds, SEED);
      for (let w = 0; w * WINDOW < cases.length; w++) await sendWindow(client, cases.slice(w * WINDOW, (w + 1) * WINDOW), `sweep window ${w}`);
      t.diagnostic(`${cases.length} messages: ${METHODS.length} methods × ${cases.length / METHODS.length} headers (long and compact forms)`);
      assert.ok(node!.running);
      for (const protocol of TRANSPORTS) assert.equal(await client.probe(5000, protocol), 200, `OPTIONS over ${protocol} after the sweep\n${diagnostics()}`);
    } finally {
      client.close();
    }
  });

  for (const protocol of FUZZED) {
    it(`${protocol.toUpperCase()}: ${RUNS} mutated carrier messages (seed ${SEED}); after each batch of ${BATCH} the node lives, answers OPTIONS and receives a fax intact`, async (t) => {
      const client = new SipFuzzClient(protocol, target);
      await client.start();
      try {
        let window = 0;
        for (let done = 0; done < RUNS; ) {
          const batchEnd = Math.min(RUNS, done + BATCH);
          for (; done < batchEnd; window++) {
            const count = Math.min(WINDOW, batchEnd - done);
            const cases = drawCases(seeds.length, count, windowSeed(protocol, window));
            await sendWindow(client, cases, `${protocol} window ${window} (seed ${windowSeed(protocol, window)})`);
            done += count;
          }
          await afterBatch(client, `${protocol} after ${done} messages`, t);
        }
      } finally {
        client.close();
      }
    });
  }

  it("afterwards every reception has ended (the SIP timers bound the half-open calls) and no connection of ours is held", async () => {
    const deadline = Date.now() + 45_000;
    let m = await metrics();
    while (Date.now() < deadline && (metricValue(m, "faxline_receptions_active") > 0 || metricValue(m, "faxline_sip_connections_accepted") > 0)) {
      await new Promise((r) => setTimeout(r, 250));
      m = await metrics();
    }
    assert.equal(metricValue(m, "faxline_receptions_active"), 0, `receptions still active\n${diagnostics()}`);
    assert.equal(metricValue(m, "faxline_sip_connections_accepted"), 0, `connections still held\n${diagnostics()}`);
    assert.ok(node!.running);
  });
});

/**
 * `npm run bench:sip-flood` — what a node's SIP line absorbs (issue 30), on a real node
 * (`faxline serve`, a child process, SQLite) over loopback:
 *
 * 1. **Malformed messages per second.** `--messages` generated messages (the robustness suite's:
 *    carrier traces from test/fixtures/sip-traces mutated by fast-check, test/support/
 *    sip-mutations.ts, a fixed seed) sent over UDP from one address (the trunk's) in windows of
 *    25, each window followed by a clean OPTIONS from another address that must be answered (so
 *    the node has read every message of the window; datagrams the kernel dropped for a full
 *    receive buffer are counted from /proc/net/snmp). Figures: messages per second, and per
 *    CPU second of the node (user + system from /proc, media process not included). Twice: with
 *    the per-source bounds raised out of the way (`lines.sipRequestRate` 100 000: every message
 *    goes through the parser and the call code) and with the default bounds (one source: past the
 *    burst, requests are dropped as `rate_limited` before they are parsed further).
 *
 * 2. **Hostile INVITEs per second while 20 real receptions run.** A node with the default bounds
 *    receives `--receptions` real faxes at once in real time (SIPp as the carrier, SpanDSP's T.38
 *    terminal as the callers' machines, two pages each; 20 is well within the node's pacing
 *    budget, `lines.pacingCapacity` 100) while hostile INVITEs arrive from `--sources` addresses
 *    that are no trunk's (127.0.0.2, …): well-formed INVITEs with T.38 to the topic's number,
 *    never ACKed, each with a new Call-ID, at `--rates` per second in all (one step per rate).
 *    The node answers each source's first `lines.sipRefusalsPerMinute` with 403 and ignores the
 *    rest (`refused_source`). A step passes when every reception is stored OK with both pages
 *    equal to those sent, pixel for pixel. Figures: INVITEs sent and absorbed per second (those
 *    the node answered or counted as dropped; the rest the kernel dropped before the node read
 *    them), the node's CPU, and the round trip of an OPTIONS from the carrier's address every
 *    100 ms meanwhile (p50, p99, max).
 *
 * Options: --messages N (20000)  --receptions N (20)  --rates 1000,5000,20000  --sources N (8)
 *          --seed N (1)  --skip-malformed  --skip-invites
 */
import { readFileSync, writeFileSync } from "node:fs";
import dgram from "node:dgram";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import BetterSqlite3 from "better-sqlite3";
import { createAccountWithCli, freeUdpPort, runFaxlineCli, startChildNode, stopAllChildNodes, type ChildNode } from "../test/support/child-node.ts";
import { parsePrometheusText } from "../test/support/prometheus-text.ts";
import { SipFuzzClient } from "../test/support/sip-fuzz-client.ts";
import { drawCases, fillSeed, loadSeeds, renderCase, serializeEditable } from "../test/support/sip-mutations.ts";
import { tempDir } from "../test/support/test-node.ts";
import { comparePages, identical, renderTwoPageLetter } from "../test/interop/interop-support.ts";
import { cleanupPeers, startSipp, startT38Peers } from "../test/interop/peer-processes.ts";

const { values: opts } = parseArgs({
  options: {
    messages: { type: "string", default: "20000" },
    receptions: { type: "string", default: "20" },
    rates: { type: "string", default: "1000,5000,20000" },
    sources: { type: "string", default: "8" },
    seed: { type: "string", default: "1" },
    "skip-malformed": { type: "boolean", default: false },
    "skip-invites": { type: "boolean", default: false },
  },
});
const MESSAGES = Number(opts.messages);
const RECEPTIONS = Number(opts.receptions);
const RATES = opts.rates.split(",").map(Number);
const SOURCES = Number(opts.sources);
const SEED = Number(opts.seed);
const DID = "+4930123456";
const FAX_CALLER = "+4940123456";
const ACCOUNT = { custNr: "91031", login: "rx-flood", password: "rx-flood-password" };
const seeds = loadSeeds();

/** Messages per window, each window closed by an answered OPTIONS: small enough that the node's receive buffer (212 992 bytes by default) holds a window of long messages. */
const WINDOW = 25;

/** UDP datagrams the kernel dropped for full receive buffers, machine-wide (/proc/net/snmp RcvbufErrors). */
function udpReceiveErrors(): number {
  const lines = readFileSync("/proc/net/snmp", "utf8").split("\n").filter((l) => l.startsWith("Udp:"));
  const names = lines[0]!.split(/\s+/);
  const values = lines[1]!.split(/\s+/);
  return Number(values[names.indexOf("RcvbufErrors")]);
}

/** The node's CPU seconds so far (user + system, its own process only). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function dropped(node: ChildNode): Promise<Record<string, number>> {
  const m = parsePrometheusText(await (await fetch(`${node.url}/metrics`)).text());
  return Object.fromEntries((m.get("faxline_sip_messages_dropped_total")?.samples ?? []).map((s) => [s.labels.reason!, s.value]));
}

const diff = (after: Record<string, number>, before: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]).filter(([, v]) => (v as number) > 0));

async function startFloodNode(dir: string, env: Record<string, string>): Promise<{ node: ChildNode; udpPort: number }> {
  writeFileSync(
    join(dir, "trunks.yaml"),
    ["trunks:", "  - name: carrier", "    proxy: 127.0.0.1:9", '    callerNumber: "+4930555000"', '    routes: ["+1"]', "    inbound: true", '    inboundFrom: ["127.0.0.1"]', ""].join("\n"),
  );
  const dataDir = join(dir, "data");
  await createAccountWithCli(dataDir, ACCOUNT);
  for (const args of [
    ["inbound", "topic", "create", "--customer", ACCOUNT.custNr, "--name", "main"],
    ["inbound", "number", "add", "--customer", ACCOUNT.custNr, "--topic", "main", "--number", DID],
  ]) {
    const result = await runFaxlineCli(args, { FAXLINE_DATA_DIR: dataDir, FAXLINE_LOG_LEVEL: "warn" });
    if (result.code !== 0) throw new Error(result.stderr);
  }
  const udpPort = await freeUdpPort();
  const node = await startChildNode({
    name: "flooded",
    dataDir,
    env: {
      FAXLINE_LINES_TRUNKS_FILE: join(dir, "trunks.yaml"),
      FAXLINE_LINES_LOCAL_ADDRESS: "127.0.0.1",
      FAXLINE_LINES_SIP_PORT: String(udpPort),
      FAXLINE_LINES_MEDIA_PORTS: "46400-46799",
      ...env,
    },
  });
  return { node, udpPort };
}

async function malformed(label: string, env: Record<string, string>): Promise<void> {
  const dir = tempDir("faxline-sip-flood-");
  const { node, udpPort } = await startFloodNode(dir.path, env);
  const target = { address: "127.0.0.1", udpPort };
  const client = new SipFuzzClient("udp", target);
  // The OPTIONS that close each window come from another address, whose bucket the flood does not empty.
  const prober = new SipFuzzClient("udp", target, "127.0.0.3");
  await client.start();
  await prober.start();
  try {
    const cases = drawCases(seeds.length, MESSAGES, SEED);
    const rendered = cases.map((c) => renderCase(seeds, c, client.values(DID, null)));
    const before = await dropped(node);
    const cpu0 = cpuSeconds(node.pid);
    const t0 = performance.now();
    let unanswered = 0;
    const kernel0 = udpReceiveErrors();
    for (let i = 0; i < rendered.length; i += WINDOW) {
      for (const bytes of rendered.slice(i, i + WINDOW)) await client.send(bytes);
      // A probe the kernel dropped (a full receive buffer) is sent again; a node that stalled fails.
      let tries = 0;
      while ((await prober.probe(1000)) !== 200) {
        unanswered++;
        if (++tries === 10) throw new Error(`the node did not answer OPTIONS for 10 s\n${node.describe()}`);
      }
      client.takeResponses();
      prober.takeResponses();
    }
    const kernelDrops = udpReceiveErrors() - kernel0;
    const seconds = (performance.now() - t0) / 1000;
    const cpu = cpuSeconds(node.pid) - cpu0;
    const drops = diff(await dropped(node), before);
    console.log(
      `${label}: ${MESSAGES} messages in ${seconds.toFixed(2)} s = ${Math.round(MESSAGES / seconds)} messages/s; node CPU ${cpu.toFixed(2)} s = ${Math.round(MESSAGES / cpu)} messages per CPU second; ` +
        `dropped ${JSON.stringify(drops)}; datagrams the kernel dropped (full receive buffers, whole machine) ${kernelDrops}, OPTIONS sent again ${unanswered}; node running: ${node.running}`,
    );
    if (!node.running) throw new Error(node.describe());
  } finally {
    client.close();
    prober.close();
    await node.stop();
    dir.remove();
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function hostileInvites(rate: number, image: Buffer, txFile: string): Promise<boolean> {
  const dir = tempDir("faxline-sip-flood-");
  const { node, udpPort } = await startFloodNode(dir.path, {});
  const flooders = await Promise.all(
    Array.from({ length: SOURCES }, async (_, i) => {
      const socket = dgram.createSocket("udp4");
      let answers = 0;
      socket.on("message", () => answers++);
      await new Promise<void>((r) => socket.bind(0, `127.0.0.${i + 2}`, r));
      return { socket, address: `127.0.0.${i + 2}`, port: socket.address().port, answers: () => answers };
    }),
  );
  const probe = new SipFuzzClient("udp", { address: "127.0.0.1", udpPort });
  await probe.start();
  const invite = seeds.find((s) => s.name === "invite-t38-offer")!;
  try {
    const before = await dropped(node);
    const cpu0 = cpuSeconds(node.pid);
    const kernel0 = udpReceiveErrors();
    const senders = await startT38Peers(RECEPTIONS, { speed: 1, ecm: true, ident: "FLOOD FAX", txFile, wallSeconds: 240, ...(process.getuid?.() === 0 ? { nice: -5 } : {}) });
    const calls = await Promise.all(
      senders.map((s) => startSipp("uac-fax-t38-offer.xml", { call: { remote: `127.0.0.1:${udpPort}`, service: DID }, keys: { rx_host: "127.0.0.1", rx_port: String(s.port) }, timeoutSeconds: 240 })),
    );
    // The flood: open loop, `rate` INVITEs per second in all, spread over the sources, until the faxes end.
    let sent = 0;
    let flooding = true;
    const t0 = performance.now();
    const templates = flooders.map((f) => fillSeed(invite, { transport: "UDP", localIp: f.address, localPort: f.port, node: `127.0.0.1:${udpPort}`, did: DID, caller: "+4989666000", branch: "z9hG4bKFLOOD", callId: "FLOOD", fromTag: "FLOODTAG", toTag: "", mediaPort: 9 }));
    const texts = templates.map((t) => serializeEditable(t).toString("latin1"));
    const flood = (async () => {
      while (flooding) {
        const due = Math.floor(((performance.now() - t0) / 1000) * rate);
        while (sent < due) {
          const k = sent % flooders.length;
          const text = texts[k]!.replace("z9hG4bKFLOOD", `z9hG4bKflood${sent}`).replace("Call-ID: FLOOD", `Call-ID: flood${sent}@${flooders[k]!.address}`).replace("tag=FLOODTAG", `tag=f${sent}`);
          flooders[k]!.socket.send(Buffer.from(text, "latin1"), udpPort, "127.0.0.1");
          sent++;
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const rtts: number[] = [];
    let probesLost = 0;
    const probing = (async () => {
      while (flooding) {
        const p0 = performance.now();
        if ((await probe.probe(2000)) === null) probesLost++;
        else rtts.push(performance.now() - p0);
        probe.takeResponses();
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const exits = await Promise.all(calls.map((c) => c.exit));
    const results = await Promise.all(senders.map((s) => s.result));
    flooding = false;
    await Promise.all([flood, probing]);
    const seconds = (performance.now() - t0) / 1000;
    await new Promise((r) => setTimeout(r, 500));
    const cpu = cpuSeconds(node.pid) - cpu0;
    const drops = diff(await dropped(node), before);
    const kernelDrops = udpReceiveErrors() - kernel0;
    const answered = flooders.reduce((t, f) => t + f.answers(), 0);
    const absorbed = answered + (drops.refused_source ?? 0) + (drops.rate_limited ?? 0) + (drops.locked_out ?? 0);
    // The receptions, from the node's store: each call ends (BYE), then is stored; a node that
    // worked through a flood may store its last ones well after the senders ended, so wait up to 60 s.
    let stored: { status: string; pages: number; image: Buffer | null }[] = [];
    const waitStart = performance.now();
    for (let i = 0; i < 600; i++) {
      const db = new BetterSqlite3(join(node.dataDir, "faxline.sqlite"), { readonly: true, fileMustExist: true });
      try {
        stored = db.prepare("SELECT status, pages, image FROM received_faxes WHERE from_number = ?").all(FAX_CALLER) as typeof stored;
      } finally {
        db.close();
      }
      if (stored.length >= RECEPTIONS) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const storedAfter = (performance.now() - waitStart) / 1000;
    let intact = 0;
    for (const s of stored) if (s.status === "OK" && s.pages === 2 && s.image !== null && identical(await comparePages(image, s.image, 2))) intact++;
    const notIntact = stored.filter((s) => !(s.status === "OK" && s.pages === 2)).map((s) => `${s.status}/${s.pages}`);
    const sippOk = exits.filter((e) => e.code === 0).length;
    const sendersOk = results.filter((r) => r.exitCode === 0 && r.result?.pages_tx === 2).length;
    rtts.sort((a, b) => a - b);
    const pass = intact === RECEPTIONS && node.running;
    console.log(
      `${String(rate).padStart(6)}/s offered | ${Math.round(sent / seconds)}/s sent, ${Math.round(absorbed / seconds)}/s absorbed (${answered} answered 403, ${JSON.stringify(drops)}; the kernel dropped ${kernelDrops} datagrams machine-wide) over ${seconds.toFixed(1)} s | ` +
        `node CPU ${((cpu / seconds) * 100).toFixed(0)} % of a core | receptions intact ${intact}/${RECEPTIONS} (stored ${stored.length}, the last ${storedAfter.toFixed(1)} s after the senders ended${notIntact.length > 0 ? `; not OK with 2 pages: ${notIntact.join(" ")}` : ""}; SIPp ok ${sippOk}, SpanDSP senders ok ${sendersOk}) | ` +
        `OPTIONS rtt p50 ${percentile(rtts, 50).toFixed(1)} ms p99 ${percentile(rtts, 99).toFixed(1)} ms max ${(rtts.at(-1) ?? NaN).toFixed(1)} ms, ${probesLost} lost | ${pass ? "PASS" : "FAIL"}`,
    );
    if (!pass) console.log(node.describe(3000));
    return pass;
  } finally {
    cleanupPeers();
    probe.close();
    for (const f of flooders) f.socket.close();
    await node.stop();
    dir.remove();
  }
}

async function main(): Promise<void> {
  console.log(`bench:sip-flood ${new Date().toISOString()}, ${cpus()[0]?.model ?? "?"} x${cpus().length}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  if (!opts["skip-malformed"]) {
    console.log(`\n1. Malformed messages (${MESSAGES}, seed ${SEED}) over UDP from one address, windows of ${WINDOW} each closed by an answered OPTIONS`);
    await malformed("bounds raised (lines.sipRequestRate 100000, sipInviteRate 10000)", { FAXLINE_LINES_SIP_REQUEST_RATE: "100000", FAXLINE_LINES_SIP_INVITE_RATE: "10000" });
    await malformed("default bounds (100 requests/s per source, bursts of 400)", {});
  }
  if (!opts["skip-invites"]) {
    console.log(`\n2. Hostile INVITEs (never ACKed) from ${SOURCES} addresses that are no trunk's, while ${RECEPTIONS} real T.38 receptions (2 pages each, real time) run; default bounds`);
    const dir = tempDir("faxline-sip-flood-fax-");
    const image = await renderTwoPageLetter("LOW");
    const txFile = join(dir.path, "letter.tif");
    writeFileSync(txFile, image);
    try {
      for (const rate of RATES) await hostileInvites(rate, image, txFile);
    } finally {
      dir.remove();
    }
  }
  console.log(`\nload average at the end ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(async () => {
    cleanupPeers();
    await stopAllChildNodes();
  });

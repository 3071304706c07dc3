/**
 * Interop: Faxline's T.38 sender (the SpanDSP addon behind the Engine interface, UDPTL in
 * TypeScript, over a real UDP socket) faxes a two-page letter rendered by Faxline to a SpanDSP
 * T.38 receiver running as a separate process with its own UDPTL code
 * (test/peers/spandsp-receiver/t38_receiver.c). Both run on one virtual clock in lockstep (20 ms
 * ticks; each side hears what the other sent in a tick before its next one), so every run of a
 * case is the same on every machine, however loaded: earlier both ends ran 50 times faster than
 * the wall clock each on its own, and a stall of a tenth of a second on a busy machine once cost a
 * page's answer. Every received page is compared pixel by pixel with the page sent.
 *
 * The matrix: ECM on/off × HIGH/LOW × redundancy 0/3 × loss 0 %/5 % (each direction, seeded);
 * then the compressions the receiver offers (MH; MH+MR; MH+MR+MMR with ECM) × A4/Letter, which
 * decide the coding on the line; and redundancy 1 and 2 under 5 % loss.
 * Redundancy 3 carries both 5 % cases through. At 5 % loss without redundancy the fax does not
 * arrive intact, as the feasibility study found (fax-transport.md). Over 8 loss seeds (2-page LOW
 * letter): with ECM the call failed 8 times out of 8 (T30_ERR_TX_PHDDEAD mostly, also TX_BADDCS,
 * TX_GOTDCN); without ECM 3 calls failed and 5 ended with T30_ERR_OK on both sides while the
 * receiver counted 1 to 7 bad rows: lost image data is silent in non-ECM mode, which is why a line
 * must send with redundancy.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { T38Session } from "../../src/line/fax-engine/engine.ts";
import { SpandspEngine } from "../../src/line/fax-engine/spandsp-engine.ts";
import { runT38Session, type T38SessionResult } from "../../src/line/fax-engine/run-t38-session.ts";
import { isFcf } from "../../src/line/fax-engine/t30-fcf.ts";
import { UdptlSocket, type UdptlSocketStats } from "../../src/line/media/udptl-socket.ts";
import type { Resolution } from "../../src/render/pages/grey-page.ts";
import { comparePages, identical, renderTwoPageLetter, requireNativeBuild, seededRandom, type PageComparison } from "./interop-support.ts";
import { cleanupPeers, lockstepPacer, startT38Peers, startT38Receiver, type ReceiverResult, type ReceiverRun } from "./peer-processes.ts";

const OUR_IDENT = "+49 89 1234567";
const RECEIVER_IDENT = "FAXLINE-TEST-RX";

/** The receiver's RESULT line, with the T.38 harness's UDPTL counters. */
type T38ReceiverResult = ReceiverResult & { udptl: NonNullable<ReceiverResult["udptl"]> };

interface FaxCase {
  ecm: boolean;
  resolution: Resolution;
  redundancy: number;
  lossPercent: number;
  /** (Default: A4) */
  paper?: Paper;
  /** What the receiver's DIS offers. (Default: MH, MR and MMR) */
  compressions?: readonly Compression[];
}

type Paper = "A4" | "LETTER";
type Compression = "MH" | "MR" | "MMR";

interface FaxRun {
  sender: T38SessionResult;
  senderUdptl: UdptlSocketStats;
  receiver: T38ReceiverResult;
  receiverExit: number | null;
  receiverLog: string;
  pages: PageComparison[];
  wallMs: number;
}

let workDir: string;
/** The two-page letter per `${resolution} ${paper}`. */
const sentTiff = new Map<string, { path: string; bytes: Buffer }>();

async function faxToReceiver(c: FaxCase, seed: number): Promise<FaxRun> {
  return faxTo(await startT38Receiver({
    speed: 1,
    lockstep: true,
    ecm: c.ecm,
    ident: RECEIVER_IDENT,
    redundancy: c.redundancy,
    lossPercent: c.lossPercent,
    seed,
    ...(c.compressions !== undefined ? { compressions: c.compressions } : {}),
    virtualSeconds: 240,
    wallSeconds: 60,
  }), c, seed);
}

/** Faxes the case's letter to a harness call already started in lockstep (our side's loss seeded by `seed`). */
async function faxTo(receiverRun: ReceiverRun, c: FaxCase, seed: number): Promise<FaxRun> {
  let socket: UdptlSocket | null = null;
  let session: T38Session | null = null;
  try {
    // Our side of the loss: the same seeded pattern on every run of a case.
    const random = seededRandom(seed * 7919);
    const lossRate = c.lossPercent / 100;
    socket = await UdptlSocket.open({
      localAddress: "127.0.0.1",
      remote: { address: "127.0.0.1", port: receiverRun.port },
      redundancy: c.redundancy,
      maxDatagram: 400,
      dropOutgoing: () => random() < lossRate,
    });
    const sent = sentTiff.get(`${c.resolution} ${c.paper ?? "A4"}`)!;
    session = SpandspEngine.load().openT38Session({ tiffPath: sent.path, localIdent: OUR_IDENT, ecm: c.ecm, t38Version: 0, maxDatagram: 400 });
    const started = performance.now();
    const sender = await runT38Session(session, socket, { pacer: lockstepPacer(receiverRun, socket), maxSeconds: 240 });
    // The receiver runs on alone to its end (phase E and its linger, or its virtual watchdog). One
    // left waiting by a broken call (its last frames lost) may sit in a T.30 state without a
    // timer; give it 2 s of wall time after we are done, then end it (it still reports).
    receiverRun.endLockstep();
    const stopReceiver = setTimeout(() => receiverRun.kill(), 2_000);
    const { result, exitCode, log } = await receiverRun.result;
    clearTimeout(stopReceiver);
    const wallMs = performance.now() - started;
    if (result === null) assert.fail(`the receiver printed no RESULT line (exit ${exitCode}):\n${log}`);
    if (result.udptl === undefined) assert.fail(`the T.38 receiver reported no UDPTL counters: ${JSON.stringify(result)}`);
    const receiver: T38ReceiverResult = { ...result, udptl: result.udptl };
    const pages = receiver.pages_rx > 0 ? await comparePages(sent.bytes, readFileSync(receiverRun.rxFile), receiver.pages_rx) : [];
    return { sender, senderUdptl: socket.stats, receiver, receiverExit: exitCode, receiverLog: log, pages, wallMs };
  } finally {
    session?.close();
    await socket?.close();
    receiverRun.kill();
  }
}

function describeRun(run: FaxRun): string {
  const e = run.sender.phaseE;
  return (
    `sender ${e ? `${e.name} (${e.text})` : "no phase E"}, ${run.sender.statistics.pagesTx} pages, ${run.sender.statistics.encoding}; ` +
    `receiver ${run.receiver.code} (${run.receiver.text}), ${run.receiver.pages_rx} pages, bad rows ${run.receiver.bad_rows}; ` +
    `UDPTL: we recovered ${run.senderUdptl.receiver.recovered} and lost ${run.senderUdptl.receiver.lost}, ` +
    `the receiver recovered ${run.receiver.udptl.rx_recovered} and lost ${run.receiver.udptl.rx_lost}; ` +
    `${run.sender.engineSeconds.toFixed(1)} s virtual in ${Math.round(run.wallMs)} ms`
  );
}

describe("T.38 over UDPTL to a SpanDSP receiver in another process (lockstep virtual clock)", () => {
  before(async () => {
    requireNativeBuild();
    workDir = mkdtempSync(path.join(tmpdir(), "faxline-t38-interop-"));
    for (const resolution of ["HIGH", "LOW"] as const) {
      for (const paper of ["A4", "LETTER"] as const) {
        const bytes = await renderTwoPageLetter(resolution, paper);
        const file = path.join(workDir, `letter-${resolution}-${paper}.tif`);
        writeFileSync(file, bytes);
        sentTiff.set(`${resolution} ${paper}`, { path: file, bytes });
      }
    }
  });

  after(() => {
    cleanupPeers();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  const cases: FaxCase[] = [];
  for (const ecm of [true, false]) {
    for (const resolution of ["HIGH", "LOW"] as const) {
      for (const redundancy of [0, 3]) for (const lossPercent of [0, 5]) cases.push({ ecm, resolution, redundancy, lossPercent });
    }
  }

  for (const [index, c] of cases.entries()) {
    const name = `${c.ecm ? "ECM" : "non-ECM"}, ${c.resolution}, redundancy ${c.redundancy}, ${c.lossPercent} % loss each way`;
    const survives = c.lossPercent === 0 || c.redundancy > 0;
    it(`${name}: ${survives ? "both pages arrive pixel-identical" : "the fax does not arrive intact"}`, { timeout: 30_000 }, async (t) => {
      const run = await faxToReceiver(c, index + 1);
      t.diagnostic(describeRun(run));
      if (survives) {
        assert.equal(run.sender.phaseE?.name, "T30_ERR_OK", describeRun(run) + "\n" + run.receiverLog);
        assert.equal(run.receiver.code, 0, describeRun(run));
        assert.equal(run.receiverExit, 0);
        assert.equal(run.sender.statistics.pagesTx, 2);
        assert.equal(run.receiver.pages_rx, 2);
        assert.equal(run.receiver.bad_rows, 0);
        assert.equal(run.sender.statistics.ecm, c.ecm);
        // T.6 needs ECM; without it SpanDSP re-encodes the G4 pages as T.4 2-D.
        assert.equal(run.sender.statistics.encoding, c.ecm ? "T.6" : "T.4 2-D");
        assert.equal(run.receiver.encoding, run.sender.statistics.encoding);
        assert.equal(run.sender.statistics.bitRate, 14_400);
        assert.equal(run.sender.statistics.yDpi, c.resolution === "HIGH" ? 196 : 98);
        assert.equal(run.sender.statistics.remoteIdent, RECEIVER_IDENT);
        assert.equal(run.receiver.remote_ident, OUR_IDENT);
        assert.equal(run.pages.length, 2);
        for (const page of run.pages) {
          assert.equal(page.received.width, 1728);
          assert.equal(page.differingPixels, 0, `page ${page.page + 1}: ${page.differingPixels} pixels differ`);
          assert.equal(page.blackInExtraRows, 0, `page ${page.page + 1} is ${page.received.height} rows, sent ${page.sent.height}`);
        }
        if (c.lossPercent > 0) assert.ok(run.receiver.udptl.rx_recovered > 0, "the receiver recovered nothing from the redundancy");
      } else {
        const clean =
          run.sender.phaseE?.name === "T30_ERR_OK" && run.receiver.code === 0 && run.receiver.pages_rx === 2 && run.receiver.bad_rows === 0 && identical(run.pages);
        assert.ok(!clean, `expected the loss to damage the fax: ${describeRun(run)}`);
        assert.ok(run.receiver.udptl.rx_lost + run.senderUdptl.receiver.lost > 0, "nothing was lost");
        if (c.ecm) assert.notEqual(run.sender.phaseE?.name, "T30_ERR_OK", "ECM without redundancy is expected to fail the call");
      }
    });
  }

  // The compressions the receiver offers decide the coding on the line (MMR needs ECM), on A4
  // and on US Letter pages (1728 pixels wide either way; Letter is shorter).
  const codings: { compressions: Compression[]; ecm: boolean; encoding: string }[] = [
    { compressions: ["MH"], ecm: false, encoding: "T.4 1-D" },
    { compressions: ["MH", "MR"], ecm: false, encoding: "T.4 2-D" },
    { compressions: ["MH"], ecm: true, encoding: "T.4 1-D" },
    { compressions: ["MH", "MR"], ecm: true, encoding: "T.4 2-D" },
    { compressions: ["MH", "MR", "MMR"], ecm: true, encoding: "T.6" },
  ];
  for (const paper of ["A4", "LETTER"] as const) {
    for (const [index, coding] of codings.entries()) {
      it(`receiver offers ${coding.compressions.join("+")}, ${coding.ecm ? "ECM" : "non-ECM"}, ${paper}, HIGH: sent as ${coding.encoding}, pixel-identical`, { timeout: 30_000 }, async (t) => {
        const run = await faxToReceiver({ ecm: coding.ecm, resolution: "HIGH", redundancy: 3, lossPercent: 0, paper, compressions: coding.compressions }, 200 + index);
        t.diagnostic(describeRun(run));
        assert.equal(run.sender.phaseE?.name, "T30_ERR_OK", describeRun(run));
        assert.equal(run.receiver.code, 0);
        assert.equal(run.sender.statistics.encoding, coding.encoding);
        assert.equal(run.receiver.encoding, coding.encoding);
        assert.equal(run.receiver.pages_rx, 2);
        assert.equal(run.receiver.bad_rows, 0);
        assert.equal(run.pages[0]?.received.height, paper === "A4" ? 2292 : 2156, "the page length of the paper");
        assert.ok(identical(run.pages), JSON.stringify(run.pages));
      });
    }
  }

  // Redundancy depths between 0 and 3 under loss: any depth carries an ECM fax through 5 %.
  for (const redundancy of [1, 2]) {
    it(`ECM, LOW, redundancy ${redundancy}, 5 % loss each way: both pages arrive pixel-identical`, { timeout: 30_000 }, async (t) => {
      const run = await faxToReceiver({ ecm: true, resolution: "LOW", redundancy, lossPercent: 5 }, 300 + redundancy);
      t.diagnostic(describeRun(run));
      assert.equal(run.sender.phaseE?.name, "T30_ERR_OK", describeRun(run));
      assert.equal(run.receiver.pages_rx, 2);
      assert.ok(run.receiver.udptl.rx_recovered > 0, "the receiver recovered nothing from the redundancy");
      assert.ok(identical(run.pages), JSON.stringify(run.pages));
    });
  }

  // The bench's peers: several calls in one harness process (its -n), each on its own socket and
  // clock. Each call must behave exactly as it does alone in a process of its own: the same UDPTL
  // counters, the same virtual time, the same pages; a state shared between the calls would show.
  it("three calls in one harness process, at 5 % loss: each as it is alone, pixel-identical", { timeout: 60_000 }, async (t) => {
    const group: FaxCase[] = [
      { ecm: true, resolution: "HIGH", redundancy: 3, lossPercent: 5 },
      { ecm: true, resolution: "LOW", redundancy: 3, lossPercent: 5 },
      { ecm: true, resolution: "HIGH", redundancy: 3, lossPercent: 5, paper: "LETTER" },
    ];
    const seed = 40;
    const peers = await startT38Peers(group.length, { speed: 1, lockstep: true, ecm: true, ident: RECEIVER_IDENT, redundancy: 3, lossPercent: 5, seed, wallSeconds: 60 });
    assert.equal(new Set(peers.map((p) => p.port)).size, group.length, "a socket per call");
    const together = await Promise.all(group.map((c, i) => faxTo(peers[i]!, c, seed + i)));
    for (const [i, run] of together.entries()) {
      t.diagnostic(`call ${i}: ${describeRun(run)}`);
      assert.equal(run.sender.phaseE?.name, "T30_ERR_OK", describeRun(run) + "\n" + run.receiverLog);
      assert.equal(run.receiver.code, 0);
      assert.equal(run.receiverExit, 0);
      assert.equal(run.receiver.session, i);
      assert.equal(run.sender.statistics.remoteIdent, `${RECEIVER_IDENT}-${i}`);
      assert.equal(run.receiver.pages_rx, 2);
      assert.ok(run.receiver.udptl.rx_recovered > 0, "the receiver recovered nothing from the redundancy");
      assert.ok(identical(run.pages), JSON.stringify(run.pages));
    }
    // Alone, with the same seeds and a CSI of the same length (the ident is in the frames).
    for (const [i, c] of group.entries()) {
      const alone = await faxTo(
        await startT38Receiver({ speed: 1, lockstep: true, ecm: true, ident: `${RECEIVER_IDENT}-${i}`, redundancy: 3, lossPercent: 5, seed: seed + i, virtualSeconds: 240, wallSeconds: 60 }),
        c,
        seed + i,
      );
      assert.deepEqual(together[i]!.receiver.udptl, alone.receiver.udptl, `call ${i}: UDPTL counters together and alone`);
      assert.equal(together[i]!.receiver.virtual_s, alone.receiver.virtual_s, `call ${i}: virtual time together and alone`);
      assert.equal(together[i]!.sender.engineSeconds, alone.sender.engineSeconds);
      assert.deepEqual(together[i]!.pages, alone.pages);
    }
  });

  // The bench's own mode: calls in one harness process each paced by the wall clock (here 10x),
  // not stepped; STOP ends one call of the group and leaves the others alone.
  it("two wall-clock calls in one harness process at 10x both arrive; STOP ends a third alone", { timeout: 60_000 }, async () => {
    const speed = 10;
    const peers = await startT38Peers(3, { speed, ecm: true, ident: RECEIVER_IDENT, wallSeconds: 50 });
    const sent = sentTiff.get("LOW A4")!;
    const sockets: UdptlSocket[] = [];
    const sessions: T38Session[] = [];
    try {
      const third = await peers[2]!.step(0); // not in lockstep: nothing to step
      assert.equal(third, null);
      peers[2]!.kill();
      const stopped = await peers[2]!.result;
      assert.equal(stopped.exitCode, 3, "the stopped call reports exit 3");
      assert.equal(stopped.result?.session, 2);
      const runs = await Promise.all(
        [0, 1].map(async (i) => {
          const socket = await UdptlSocket.open({ localAddress: "127.0.0.1", remote: { address: "127.0.0.1", port: peers[i]!.port }, redundancy: 3, maxDatagram: 400 });
          sockets.push(socket);
          const session = SpandspEngine.load().openT38Session({ tiffPath: sent.path, localIdent: OUR_IDENT, ecm: true, t38Version: 0, maxDatagram: 400 });
          sessions.push(session);
          const sender = await runT38Session(session, socket, { speed, maxSeconds: 240 });
          const { result, exitCode } = await peers[i]!.result;
          return { sender, result, exitCode, rx: peers[i]!.rxFile };
        }),
      );
      for (const [i, run] of runs.entries()) {
        assert.equal(run.sender.phaseE?.name, "T30_ERR_OK", `call ${i}: ${JSON.stringify(run.result)}`);
        assert.equal(run.exitCode, 0);
        assert.equal(run.result?.session, i);
        assert.equal(run.sender.statistics.remoteIdent, `${RECEIVER_IDENT}-${i}`);
        assert.equal(run.result?.pages_rx, 2);
        assert.ok(identical(await comparePages(sent.bytes, readFileSync(run.rx), 2)), `call ${i}: the pages differ`);
      }
    } finally {
      for (const session of sessions) session.close();
      for (const socket of sockets) await socket.close();
    }
  });

  it("reports phase B with the receiver's DIS, the DCS sent, and phase D after each page", { timeout: 30_000 }, async () => {
    const run = await faxToReceiver({ ecm: true, resolution: "LOW", redundancy: 3, lossPercent: 0 }, 99);
    const events = run.sender.events;
    const phaseB = events.find((e) => e.type === "phaseB");
    assert.ok(phaseB && isFcf(phaseB.fcf, "DIS"), "phase B on the receiver's DIS");
    assert.equal(phaseB.name, "DIS");
    assert.ok(phaseB.frame && phaseB.frame[0] === 0xff && phaseB.frame[2] === phaseB.fcf, "phase B carries the DIS frame");
    const dcs = events.find((e) => e.type === "frame" && e.direction === "tx" && isFcf(e.fcf, "DCS"));
    assert.ok(dcs, "a DCS was sent");
    const csi = events.find((e) => e.type === "frame" && e.direction === "rx" && isFcf(e.fcf, "CSI"));
    assert.ok(csi && csi.type === "frame");
    const phaseD = events.filter((e) => e.type === "phaseD");
    assert.deepEqual(phaseD.map((e) => e.name), ["MCF", "MCF"]);
    assert.equal(events.filter((e) => e.type === "phaseE").length, 1);
    const dcnAt = events.findIndex((e) => e.type === "frame" && e.direction === "tx" && isFcf(e.fcf, "DCN"));
    assert.ok(dcnAt >= 0 && dcnAt < events.findIndex((e) => e.type === "phaseE"), "DCN sent before phase E");
  });
});

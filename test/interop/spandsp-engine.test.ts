/**
 * The SpanDSP engine addon on its own, in process: its catalogue of completion codes against the
 * installed t30.h and library, the error when the addon is missing, and audio faxes (16-bit linear
 * samples; G.711 companding belongs to the RTP work) between two audio sessions, a sender and a
 * receiving test terminal, run in lockstep, 20 ms frame for 20 ms frame, as fast as the CPU
 * allows. Every received page is compared pixel by pixel.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { AudioSession, EngineEvent, PhaseEEvent } from "../../src/line/fax-engine/engine.ts";
import { runT38Session, type IfpTransport } from "../../src/line/fax-engine/run-t38-session.ts";
import { SpandspAddonError, SpandspEngine, uncompressFaxTiff } from "../../src/line/fax-engine/spandsp-engine.ts";
import { readTiffPages } from "../../src/render/fax-image/tiff-structure.ts";
import { T30_ERR, t30ErrName, describeT30Completion, type T30ErrName } from "../../src/line/fax-engine/t30-completion-codes.ts";
import type { Resolution } from "../../src/render/pages/grey-page.ts";
import { comparePages, identical, renderTwoPageLetter, requireNativeBuild, requirePeer } from "./interop-support.ts";

const T30_HEADER = "/usr/include/spandsp/t30.h";
const FRAME_SAMPLES = 160;

let workDir: string;
let engine: SpandspEngine;
const letters = new Map<Resolution, { path: string; bytes: Buffer }>();

interface LockstepResult {
  sender: PhaseEEvent | null;
  receiver: PhaseEEvent | null;
  senderEvents: EngineEvent[];
  seconds: number;
  wallMs: number;
}

/** Runs two audio sessions back to back: what one transmits in a frame, the other receives in the next. */
function runLockstep(sender: AudioSession, receiver: AudioSession, maxSeconds = 300): LockstepResult {
  const started = performance.now();
  let toReceiver: Int16Array = new Int16Array(FRAME_SAMPLES);
  let toSender: Int16Array = new Int16Array(FRAME_SAMPLES);
  let senderEnd: PhaseEEvent | null = null;
  let receiverEnd: PhaseEEvent | null = null;
  const senderEvents: EngineEvent[] = [];
  let samples = 0;
  while (samples < maxSeconds * 8000 && (senderEnd === null || receiverEnd === null)) {
    const fromSender = sender.process(toSender);
    const fromReceiver = receiver.process(toReceiver);
    toReceiver = fromSender.audio;
    toSender = fromReceiver.audio;
    samples += FRAME_SAMPLES;
    senderEvents.push(...fromSender.events);
    senderEnd ??= fromSender.events.find((e): e is PhaseEEvent => e.type === "phaseE") ?? null;
    receiverEnd ??= fromReceiver.events.find((e): e is PhaseEEvent => e.type === "phaseE") ?? null;
  }
  return { sender: senderEnd, receiver: receiverEnd, senderEvents, seconds: samples / 8000, wallMs: performance.now() - started };
}

describe("SpanDSP engine addon", () => {
  before(async () => {
    requireNativeBuild();
    engine = SpandspEngine.load();
    workDir = mkdtempSync(path.join(tmpdir(), "faxline-spandsp-engine-"));
    for (const resolution of ["HIGH", "LOW"] as const) {
      const bytes = await renderTwoPageLetter(resolution);
      const file = path.join(workDir, `letter-${resolution}.tif`);
      writeFileSync(file, bytes);
      letters.set(resolution, { path: file, bytes });
    }
  });

  after(() => {
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it("lists every T30_ERR_* code of the installed t30.h, in order, with the library's text", () => {
    requirePeer("spandsp-headers");
    const header = readFileSync(T30_HEADER, "utf8");
    const block = /enum\s*\{\s*(T30_ERR_OK\s*=\s*0,[\s\S]*?)\};/.exec(header)?.[1];
    assert.ok(block, "the T30_ERR_ enum in t30.h");
    const names = [...block.matchAll(/^\s*(T30_ERR_[A-Z0-9_]+)/gm)].map((m) => m[1]!);
    assert.deepEqual(Object.keys(T30_ERR), names);
    for (const [code, name] of names.entries()) {
      assert.equal(T30_ERR[name as T30ErrName].code, code, name);
      assert.equal(T30_ERR[name as T30ErrName].text, engine.completionCodeText(code), name);
    }
    assert.equal(t30ErrName(999), "T30_ERR_UNKNOWN_999");
    assert.equal(describeT30Completion(17), "T30_ERR_TX_GOTDCN: Received a DCN while waiting for a DIS");
  });

  it("says how to build the addon when it is missing", () => {
    assert.throws(
      () => SpandspEngine.load({ addonPath: path.join(workDir, "missing", "spandsp_engine.node") }),
      (error: unknown) =>
        error instanceof SpandspAddonError && /scripts\/build-native\.sh/.test(error.message) && /libspandsp-dev/.test(error.message) && /libtiff-dev/.test(error.message),
    );
  });

  it("refuses bad options and a closed session", () => {
    const file = letters.get("LOW")!.path;
    assert.throws(() => engine.openT38Session({ tiffPath: file, localIdent: "x".repeat(21) }), /longer than 20/);
    assert.throws(() => engine.openT38Session({ tiffPath: file, localIdent: "ok", compressions: [] }), /at least one compression/);
    assert.throws(() => engine.openAudioSession({ tiffPath: file, localIdent: "ok", maxBitRate: 12_000 as 9_600 }), /maxBitRate must be one of 14400, 9600, 4800/);
    const session = engine.openT38Session({ tiffPath: file, localIdent: "ok" });
    assert.throws(() => session.receiveIfp(Uint8Array.of(0), 70_000), RangeError);
    session.close();
    session.close();
    assert.throws(() => session.advance(160), /closed/);
  });

  it("uncompresses a fax TIFF for the engine: the same pages, resolution and page numbers; nothing past the size limit", async () => {
    const source = letters.get("HIGH")!;
    const out = path.join(workDir, "letter-HIGH-uncompressed.tif");
    assert.equal(await uncompressFaxTiff(source.path, out, 64 * 1024 * 1024), true);
    const pages = readTiffPages(readFileSync(out));
    assert.equal(pages.length, 2);
    for (const page of pages) {
      assert.equal(page.compression, 1, "uncompressed");
      assert.deepEqual([page.width, page.height, page.xResolution, page.yResolution, page.photometric], [1728, 2292, 204, 196, 0]);
    }
    assert.ok(identical(await comparePages(source.bytes, readFileSync(out), 2)), "every pixel as in the G4 file");
    const tooBig = path.join(workDir, "too-big.tif");
    assert.equal(await uncompressFaxTiff(source.path, tooBig, 2 * 216 * 2292 - 1), false, "two pages of 216 × 2292 bytes need one byte more");
    assert.equal(existsSync(tooBig), false);
    const notTiff = path.join(workDir, "not.tif");
    writeFileSync(notTiff, "not a TIFF file");
    await assert.rejects(uncompressFaxTiff(notTiff, path.join(workDir, "out.tif"), 1e9), /cannot open/);
  });

  it("handles an IFP off the event loop: the session is busy meanwhile, and a close then waits for it", async () => {
    const session = engine.openT38Session({ tiffPath: letters.get("LOW")!.path, localIdent: "ok" });
    // A T.38 indicator (no signal): any IFP the core parses.
    const step = session.receiveIfpAsync!(Uint8Array.of(0x00), 0);
    assert.throws(() => session.advance(160), /ERR_SPANDSP_ENGINE_BUSY|another thread/, "no other call while the IFP is handled");
    assert.deepEqual(Object.keys(await step).sort(), ["events", "finished", "packets", "samples"]);
    session.advance(160);
    const pending = session.receiveIfpAsync!(Uint8Array.of(0x00), 1);
    session.close();
    await assert.rejects(pending, /freed while it handled an IFP/);
    assert.throws(() => session.advance(160), /closed/);
  });

  it("starts a T.38 call with CNG: indicators sent 3 times each, before any answer", () => {
    const session = engine.openT38Session({ tiffPath: letters.get("LOW")!.path, localIdent: "ok" });
    try {
      const step = session.advance(8000);
      assert.ok(step.packets.length > 0);
      assert.ok(step.packets.every((p) => p.count === 3 && p.ifp.length >= 1), JSON.stringify(step.packets));
      assert.equal(step.samples, 8000);
      assert.equal(step.finished, false);
    } finally {
      session.close();
    }
  });

  for (const [resolution, ecm] of [
    ["HIGH", true],
    ["HIGH", false],
    ["LOW", true],
    ["LOW", false],
  ] as const) {
    it(`sends a 2-page ${resolution} letter over audio (16-bit linear), ${ecm ? "ECM" : "non-ECM"}, pixel-identical`, async (t) => {
      const letter = letters.get(resolution)!;
      const rxPath = path.join(workDir, `audio-${resolution}-${ecm}.tif`);
      const sender = engine.openAudioSession({ tiffPath: letter.path, localIdent: "+49 89 1234567", ecm });
      const receiver = engine.openAudioSession({ mode: "receive", calling: false, tiffPath: rxPath, localIdent: "AUDIO-RX", ecm });
      try {
        const result = runLockstep(sender, receiver);
        t.diagnostic(`${result.seconds.toFixed(1)} s of audio in ${Math.round(result.wallMs)} ms`);
        assert.equal(result.sender?.name, "T30_ERR_OK");
        assert.equal(result.receiver?.name, "T30_ERR_OK");
        const stats = sender.statistics();
        assert.equal(stats.pagesTx, 2);
        assert.equal(stats.bitRate, 14_400, "V.17 at its top rate when nothing caps it");
        assert.equal(stats.ecm, ecm);
        assert.equal(stats.encoding, ecm ? "T.6" : "T.4 2-D");
        assert.equal(stats.remoteIdent, "AUDIO-RX");
        assert.equal(receiver.statistics().remoteIdent, "+49 89 1234567");
        assert.deepEqual(
          result.senderEvents.filter((e) => e.type === "phaseD").map((e) => e.name),
          ["MCF", "MCF"],
        );
        const pages = await comparePages(letter.bytes, readFileSync(rxPath), 2);
        assert.ok(identical(pages), JSON.stringify(pages));
      } finally {
        sender.close();
        receiver.close();
      }
    });
  }

  it("T.38 ticks through t38AdvanceInto send the very IFPs t38Advance sends: a 2-page ECM fax in lockstep, pixel-identical", async () => {
    const letter = letters.get("HIGH")!;
    /** Sender and receiver in one loop, 20 ms for 20 ms, each IFP handed over once; the sender's IFPs as hex. */
    const run = (engineToUse: SpandspEngine, rxPath: string): { sent: string[]; sender: string | undefined; receiver: string | undefined; pages: number } => {
      const sender = engineToUse.openT38Session({ tiffPath: letter.path, localIdent: "+49 89 1234567", ecm: true });
      const receiver = engineToUse.openT38Session({ mode: "receive", calling: false, tiffPath: rxPath, localIdent: "T38-RX", ecm: true });
      const sent: string[] = [];
      let txSeq = 0;
      let rxSeq = 0;
      let senderEnd: string | undefined;
      let receiverEnd: string | undefined;
      try {
        for (let tick = 0; tick < 15_000 && (senderEnd === undefined || receiverEnd === undefined); tick++) {
          const fromSender = sender.advance(160);
          for (const e of fromSender.events) if (e.type === "phaseE") senderEnd = e.name;
          for (const p of fromSender.packets) {
            sent.push(`${p.count}:${Buffer.from(p.ifp).toString("hex")}`);
            for (const e of receiver.receiveIfp(p.ifp, txSeq++ & 0xffff).events) if (e.type === "phaseE") receiverEnd = e.name;
          }
          const fromReceiver = receiver.advance(160);
          for (const e of fromReceiver.events) if (e.type === "phaseE") receiverEnd = e.name;
          for (const p of fromReceiver.packets) {
            for (const e of sender.receiveIfp(p.ifp, rxSeq++ & 0xffff).events) if (e.type === "phaseE") senderEnd = e.name;
          }
        }
        return { sent, sender: senderEnd, receiver: receiverEnd, pages: sender.statistics().pagesTx };
      } finally {
        sender.close();
        receiver.close();
      }
    };
    assert.equal(engine.packedTicks, true, "the addon has t38AdvanceInto (rebuild it: scripts/build-native.sh)");
    const packedPath = path.join(workDir, "t38-packed.tif");
    const objectsPath = path.join(workDir, "t38-objects.tif");
    const packed = run(engine, packedPath);
    const objects = run(SpandspEngine.load({ packedTicks: false }), objectsPath);
    assert.equal(packed.sender, "T30_ERR_OK");
    assert.equal(packed.receiver, "T30_ERR_OK");
    assert.equal(packed.pages, 2);
    assert.equal(objects.sender, "T30_ERR_OK");
    assert.equal(objects.receiver, "T30_ERR_OK");
    assert.ok(packed.sent.length > 1000, `${packed.sent.length} IFPs`);
    assert.deepEqual(packed.sent, objects.sent, "the same IFPs, in the same order");
    const pages = await comparePages(letter.bytes, readFileSync(packedPath), 2);
    assert.ok(identical(pages), JSON.stringify(pages));
  });

  for (const maxBitRate of [9_600, 4_800] as const) {
    it(`caps the modem at ${maxBitRate} bit/s when asked (the ladder's lower rungs), pages still identical`, async () => {
      const letter = letters.get("LOW")!;
      const rxPath = path.join(workDir, `audio-cap-${maxBitRate}.tif`);
      const sender = engine.openAudioSession({ tiffPath: letter.path, localIdent: "+49 89 1234567", ecm: false, maxBitRate });
      const receiver = engine.openAudioSession({ mode: "receive", calling: false, tiffPath: rxPath, localIdent: "AUDIO-RX", ecm: false });
      try {
        const result = runLockstep(sender, receiver);
        assert.equal(result.sender?.name, "T30_ERR_OK");
        assert.equal(sender.statistics().bitRate, maxBitRate);
        assert.equal(receiver.statistics().bitRate, maxBitRate);
        const pages = await comparePages(letter.bytes, readFileSync(rxPath), 2);
        assert.ok(identical(pages), JSON.stringify(pages));
      } finally {
        sender.close();
        receiver.close();
      }
    });
  }

  describe("runT38Session without a far end", () => {
    /** A network that answers nothing: it only counts what is sent. */
    const silence = (): IfpTransport & { sent: number } => ({ sent: 0, sendIfp(_ifp, count) { this.sent += count; }, onIfp() {} });

    it("ends a call nobody answers with T30_ERR_T0_EXPIRED after 60 s of engine time", async () => {
      const session = engine.openT38Session({ tiffPath: letters.get("LOW")!.path, localIdent: "ok" });
      try {
        const network = silence();
        const result = await runT38Session(session, network, { speed: 1000 });
        assert.equal(result.phaseE?.name, "T30_ERR_T0_EXPIRED");
        assert.ok(Math.abs(result.phaseE.atSample / 8000 - 60) < 1, `phase E at ${result.phaseE.atSample / 8000} s`);
        assert.ok(network.sent > 0, "CNG indicators were sent");
        assert.equal(result.statistics.pagesTx, 0);
      } finally {
        session.close();
      }
    });

    it("gives up at maxSeconds of engine time with no phase E", async () => {
      const session = engine.openT38Session({ tiffPath: letters.get("LOW")!.path, localIdent: "ok" });
      try {
        const result = await runT38Session(session, silence(), { speed: 1000, maxSeconds: 10 });
        assert.equal(result.phaseE, null);
        assert.equal(result.engineSeconds, 10);
      } finally {
        session.close();
      }
    });

    it("rejects with the signal's reason when aborted", async () => {
      const session = engine.openT38Session({ tiffPath: letters.get("LOW")!.path, localIdent: "ok" });
      try {
        const controller = new AbortController();
        const running = runT38Session(session, silence(), { speed: 1, signal: controller.signal });
        setTimeout(() => controller.abort(new Error("node shutting down")), 20);
        await assert.rejects(running, /node shutting down/);
      } finally {
        session.close();
      }
    });
  });

  it("ends a call whose TIFF cannot be opened with T30_ERR_FILEERROR, as data", () => {
    const sender = engine.openAudioSession({ tiffPath: path.join(workDir, "no-such-file.tif"), localIdent: "SENDER" });
    const receiver = engine.openAudioSession({ mode: "receive", calling: false, tiffPath: path.join(workDir, "never.tif"), localIdent: "RX" });
    try {
      const result = runLockstep(sender, receiver, 60);
      assert.equal(result.sender?.name, "T30_ERR_FILEERROR");
      assert.equal(result.sender?.text, "TIFF/F file cannot be opened");
      assert.notEqual(result.receiver?.name, "T30_ERR_OK");
      assert.equal(sender.statistics().pagesTx, 0);
    } finally {
      sender.close();
      receiver.close();
    }
  });
});

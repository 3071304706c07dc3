/**
 * `npm run bench:engine-tick`: what one 20 ms engine tick of a T.38 session costs on the event
 * loop, through the addon's two ways of handing out a tick's packets: `t38Advance` (the addon builds
 * a step object, an array and a Buffer per packet) and `t38AdvanceInto` (the packets as bytes in a
 * buffer the session owns; objects only for ticks with events). A sender and a receiver session
 * run a 2-page A4 HIGH ECM fax in lockstep in this process, as fast as the CPU allows; only the
 * `advance` calls are timed. Six rounds, both ways in each (the first rounds include V8's warm-up).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import type { T38Session, T38Step } from "../src/line/fax-engine/engine.ts";
import { SpandspEngine } from "../src/line/fax-engine/spandsp-engine.ts";
import { renderTwoPageLetter } from "../test/interop/interop-support.ts";

/** Hands a step's packets to the other session, each once; true when it carried phase E. */
function deliver(step: T38Step, to: T38Session, seq: { next: number }): number {
  let ended = step.events.filter((e) => e.type === "phaseE").length;
  for (const packet of step.packets) {
    ended += to.receiveIfp(packet.ifp, seq.next++ & 0xffff).events.filter((e) => e.type === "phaseE").length;
  }
  return ended;
}

/** One fax in lockstep; the mean time of an `advance` call, microseconds, and how many there were. */
function oneFax(engine: SpandspEngine, tiffPath: string, rxPath: string): { usPerTick: number; ticks: number } {
  const sender = engine.openT38Session({ tiffPath, localIdent: "TX", ecm: true });
  const receiver = engine.openT38Session({ mode: "receive", calling: false, tiffPath: rxPath, localIdent: "RX", ecm: true });
  const toReceiver = { next: 0 };
  const toSender = { next: 0 };
  let advanceMs = 0;
  let ticks = 0;
  let ended = 0;
  try {
    for (let tick = 0; tick < 15_000 && ended < 2; tick++) {
      for (const [session, peer, seq] of [[sender, receiver, toReceiver], [receiver, sender, toSender]] as const) {
        const started = performance.now();
        const step = session.advance(160);
        advanceMs += performance.now() - started;
        ticks += 1;
        ended += deliver(step, peer, seq);
      }
    }
    if (ended < 2) throw new Error("the fax did not end within 300 s of engine time");
    return { usPerTick: (advanceMs * 1000) / ticks, ticks };
  } finally {
    sender.close();
    receiver.close();
  }
}

const objects = SpandspEngine.load({ packedTicks: false });
const packed = SpandspEngine.load();
if (!packed.packedTicks) throw new Error("the SpanDSP addon has no t38AdvanceInto: rebuild it (scripts/build-native.sh)");
const dir = mkdtempSync(join(tmpdir(), "faxline-bench-engine-tick-"));
try {
  const tiffPath = join(dir, "letter.tif");
  writeFileSync(tiffPath, await renderTwoPageLetter("HIGH"));
  console.log(`bench:engine-tick  ${new Date().toISOString()}  ${cpus()[0]?.model.trim() ?? "unknown CPU"}, Node ${process.versions.node}`);
  console.log("round  ticks (both ways)  t38Advance µs/tick  t38AdvanceInto µs/tick  ratio");
  for (let round = 1; round <= 6; round++) {
    const o = oneFax(objects, tiffPath, join(dir, "rx-objects.tif"));
    const p = oneFax(packed, tiffPath, join(dir, "rx-packed.tif"));
    console.log(`${String(round).padStart(5)}  ${`${o.ticks} / ${p.ticks}`.padStart(17)}  ${o.usPerTick.toFixed(2).padStart(18)}  ${p.usPerTick.toFixed(2).padStart(22)}  ${(p.usPerTick / o.usPerTick).toFixed(2).padStart(5)}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

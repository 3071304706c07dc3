/**
 * `npm run bench:engine-tick`: what one 20 ms engine tick of a T.38 session costs on the event
 * loop, through the addon's two ways of handing out a tick's packets: `t38Advance` (the addon builds
 * a step object, an array and a Buffer per packet) and `t38AdvanceInto` (the packets as bytes in a
 * buffer the session owns; objects only for ticks with events). A sender and a receiver session
 * run a 2-page A4 HIGH ECM fax in lockstep in this process, as fast as the CPU allows; only the
 * `advance` calls are timed. Six rounds, both ways in each (the first rounds include V8's warm-up).
 */
import { SpandspEngine } from "../src/line/fax-engine/spandsp-engine.ts";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { renderTwoPageLetter } from "../test/interop/interop-support.ts";
const dir = mkdtempSync(join(tmpdir(), "faxline-bench-engine-tick-"));
const tiff = join(dir, "l.tif");
writeFileSync(tiff, await renderTwoPageLetter("HIGH"));
const packed = SpandspEngine.load();
const objects = SpandspEngine.load({ packedTicks: false });
function run(engine: SpandspEngine): { usPerTick: number; ticks: number } {
  const sender = engine.openT38Session({ tiffPath: tiff, localIdent: "x", ecm: true });
  const receiver = engine.openT38Session({ mode: "receive", calling: false, tiffPath: join(dir, "rx.tif"), localIdent: "y", ecm: true });
  let tx = 0, rx = 0, ticks = 0, done = 0, adv = 0;
  for (let t = 0; t < 15000 && done < 2; t++) {
    let t0 = performance.now();
    const a = sender.advance(160);
    adv += performance.now() - t0;
    ticks++;
    for (const e of a.events) if (e.type === "phaseE") done++;
    for (const p of a.packets) for (const e of receiver.receiveIfp(p.ifp, tx++ & 0xffff).events) if (e.type === "phaseE") done++;
    t0 = performance.now();
    const b = receiver.advance(160);
    adv += performance.now() - t0;
    ticks++;
    for (const e of b.events) if (e.type === "phaseE") done++;
    for (const p of b.packets) for (const e of sender.receiveIfp(p.ifp, rx++ & 0xffff).events) if (e.type === "phaseE") done++;
  }
  sender.close(); receiver.close();
  return { usPerTick: (adv * 1000) / ticks, ticks };
}
console.log(`bench:engine-tick  ${new Date().toISOString()}  ${cpus()[0]?.model.trim() ?? "unknown CPU"}, Node ${process.versions.node}`);
console.log("round  ticks  t38Advance µs/tick  t38AdvanceInto µs/tick  ratio");
for (let r = 1; r <= 6; r++) {
  const o = run(objects);
  const p = run(packed);
  console.log(`${String(r).padStart(5)}  ${String(o.ticks).padStart(5)}  ${o.usPerTick.toFixed(2).padStart(18)}  ${p.usPerTick.toFixed(2).padStart(22)}  ${(p.usPerTick / o.usPerTick).toFixed(2).padStart(5)}`);
}
rmSync(dir, { recursive: true, force: true });

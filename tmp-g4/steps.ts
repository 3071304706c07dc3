import { writeFileSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { performance } from "node:perf_hooks";
import { SpandspEngine } from "../src/line/fax-engine/spandsp-engine.ts";
import { renderFaxJob } from "../src/render/render-fax-job.ts";

const engine = SpandspEngine.load();
const dir = mkdtempSync(join(tmpdir(), "steps-"));
const text = Array.from({ length: 60 }, (_, i) => `${String(i + 1).padStart(2)} The quick brown fox jumps over the lazy dog. Pack my box with five jugs.`).join("\n");
const rendered = await renderFaxJob({ documents: [{ name: "page.txt", bytes: Buffer.from(text) }], paperFormat: "A4", resolution: "HIGH", header: null, cover: null, overlay: null, recipients: [{ id: "r", number: "+4989123456", properties: {} }], limits: { maxPages: 5, maxSourcePixels: 50_000_000, converterTimeoutMs: 30_000 } } as any);
if (!rendered.ok) throw new Error("render");
const tiffPath = join(dir, "page.tif");
writeFileSync(tiffPath, rendered.images[0]!.tiff);
if (process.argv[3] === "raw") { const { uncompressFaxTiff } = await import("../src/line/fax-engine/spandsp-engine.ts"); await uncompressFaxTiff(tiffPath, tiffPath + ".raw.tif", Infinity); (await import("node:fs")).renameSync(tiffPath + ".raw.tif", tiffPath); }
const ecm = process.argv[2] !== "noecm";
const tx = engine.openT38Session({ tiffPath, localIdent: "TX", ecm } as any);
const rx = engine.openT38Session({ mode: "receive", calling: false, tiffPath: join(dir, "rx.tif"), localIdent: "RX", ecm } as any);
const calls: { who: string; what: string; ms: number; tick: number; events: string }[] = [];
let txSeq = 0, rxSeq = 0;
const toRx: [Uint8Array, number][] = [];
const toTx: [Uint8Array, number][] = [];
function timed(who: string, what: string, tick: number, f: () => any) {
  const t = performance.now();
  const step = f();
  const ms = performance.now() - t;
  calls.push({ who, what, ms, tick, events: step.events.map((e: any) => e.type === "frame" ? `${e.direction}:${e.name ?? e.fcf}` : `${e.type}${e.phase ?? ""}${e.name ? ":" + e.name : ""}`).join(",") });
  return step;
}
let done = 0;
for (let tick = 0; tick < 60 * 50 * 3 && done < 2; tick++) {
  const a = timed("tx", "advance", tick, () => tx.advance(160));
  for (const p of a.packets) toRx.push([p.ifp, txSeq++ & 0xffff]);
  const b = timed("rx", "advance", tick, () => rx.advance(160));
  for (const p of b.packets) toTx.push([p.ifp, rxSeq++ & 0xffff]);
  while (toRx.length || toTx.length) {
    const r = toRx.shift(); if (r) { const s = timed("rx", "ifp", tick, () => rx.receiveIfp(r[0], r[1])); for (const p of s.packets) toTx.push([p.ifp, rxSeq++ & 0xffff]); if (s.finished) done |= 1; }
    const t = toTx.shift(); if (t) { const s = timed("tx", "ifp", tick, () => tx.receiveIfp(t[0], t[1])); for (const p of s.packets) toRx.push([p.ifp, txSeq++ & 0xffff]); if (s.finished) done |= 2; }
  }
  if (a.finished && b.finished) break;
}
calls.sort((x, y) => y.ms - x.ms);
console.log("calls", calls.length, "total ms", calls.reduce((s, c) => s + c.ms, 0).toFixed(1));
for (const c of calls.slice(0, 8)) console.log(c.ms.toFixed(2).padStart(7), c.who, c.what, "tick", c.tick, c.events.slice(0, 200));
console.log(JSON.stringify(tx.statistics()));
const count = (who: string, what: string) => calls.filter((c) => c.who === who && c.what === what).length;
console.log("tx ifp", count("tx", "ifp"), "rx ifp", count("rx", "ifp"), "tx advance", count("tx", "advance"));

// Runs many sender sessions up to their DIS step, to profile that step.
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
if (process.argv[3]) { const { execFileSync } = await import("node:child_process"); execFileSync("tiffcp", ["-c", process.argv[3], tiffPath, tiffPath + ".x.tif"]); execFileSync("mv", [tiffPath + ".x.tif", tiffPath]); }
let total = 0; const N = Number(process.argv[2] ?? 50);
for (let n = 0; n < N; n++) {
  const tx = engine.openT38Session({ tiffPath, localIdent: "TX", ecm: true } as any);
  const rx = engine.openT38Session({ mode: "receive", calling: false, tiffPath: join(dir, `rx.tif`), localIdent: "RX", ecm: true } as any);
  let txSeq = 0, rxSeq = 0; const toRx: any[] = [], toTx: any[] = [];
  let hit = false;
  for (let tick = 0; tick < 600 && !hit; tick++) {
    for (const p of tx.advance(160).packets) toRx.push([p.ifp, txSeq++ & 0xffff]);
    for (const p of rx.advance(160).packets) toTx.push([p.ifp, rxSeq++ & 0xffff]);
    while ((toRx.length || toTx.length) && !hit) {
      const r = toRx.shift(); if (r) for (const p of rx.receiveIfp(r[0], r[1]).packets) toTx.push([p.ifp, rxSeq++ & 0xffff]);
      const t = toTx.shift(); if (t) { const t0 = performance.now(); const s = tx.receiveIfp(t[0], t[1]); const ms = performance.now() - t0; if (s.events.some((e: any) => e.type === "phaseB")) { total += ms; hit = true; } for (const p of s.packets) toRx.push([p.ifp, txSeq++ & 0xffff]); }
    }
  }
  tx.close(); rx.close();
}
console.log("mean DIS step ms", (total / N).toFixed(2));

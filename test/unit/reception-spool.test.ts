/**
 * The reception spool's files (src/line/reception-spool/): counting the whole pages of a TIFF as
 * it is being written and cut off, keeping its first pages, the page confirmation after fsync
 * (PageSpool) with its progress file, and the listing a node reads at start. Real files in a
 * temporary directory; the TIFF is a real multi-page TIFF-F from Faxline's writer.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { PageSpool } from "../../src/line/reception-spool/page-spool.ts";
import { createReceptionDir, lockLine, lockSpool, spooledReceptions, SpoolInUseError, writeJsonDurably, type ReceptionProgress } from "../../src/line/reception-spool/reception-spool.ts";
import { spawn } from "node:child_process";
import { keepFirstPages, wholePages, wholePagesOfFile } from "../../src/line/reception-spool/tiff-pages.ts";
import { writeTiffF, type G4Page } from "../../src/render/fax-image/write-tiff-f.ts";
import type { TransferStatistics } from "../../src/line/fax-engine/engine.ts";

/** A page whose single strip holds `bytes` bytes of (not decodable, not needed here) data. */
function page(bytes: number): G4Page {
  return { width: 1728, height: 100, rowsPerStrip: 100, strips: [new Uint8Array(bytes).fill(0x55)] };
}

function statistics(pagesRx: number): TransferStatistics {
  return { pagesTx: 0, pagesRx, pagesInFile: 0, bitRate: 14400, ecm: true, ecmRetries: 0, encoding: "T.6", width: 1728, length: 100, xDpi: 204, yDpi: 98, imageBytes: 0, badRows: 0, longestBadRowRun: 0, currentStatus: 0, remoteIdent: "SENDER", localIdent: "RX", samples: 0 };
}

const dir = mkdtempSync(path.join(tmpdir(), "faxline-spool-unit-"));
after(() => rmSync(dir, { recursive: true, force: true }));

describe("tiff-pages", () => {
  const tiff = writeTiffF([page(3000), page(2000), page(4000)], { xDpi: 204, yDpi: 98 });

  it("counts the whole pages of a file, and fewer of a file cut anywhere in the last page", async () => {
    assert.equal((await wholePages(tiff)).pages, 3);
    assert.equal((await wholePages(tiff, 2)).pages, 2, "up to the count asked for");
    // Cut at every 97th byte: never more pages than the cut leaves whole, never an error.
    const found = await wholePages(tiff);
    for (let cut = 0; cut < tiff.length; cut += 97) {
      const counted = (await wholePages(tiff.subarray(0, cut))).pages;
      assert.ok(counted <= 3);
      if (counted > 0) assert.ok(found.ifdOffsets[counted - 1]! < cut, `cut at ${cut}: page ${counted}'s directory lies before it`);
    }
    assert.equal((await wholePages(Buffer.from("not a tiff at all"))).stoppedBecause, "not a TIFF file");
  });

  it("keepFirstPages ends the chain after the pages kept; the file's bytes are otherwise the same", async () => {
    const two = await keepFirstPages(tiff, 2);
    assert.equal((await wholePages(two)).pages, 2);
    assert.equal(two.length, tiff.length);
    await assert.rejects(keepFirstPages(tiff.subarray(0, tiff.length - 10), 3), /holds 2 whole pages, not 3/);
  });

  it("reads a file through its handle with positioned reads", async () => {
    const file = path.join(dir, "three.tif");
    writeFileSync(file, tiff);
    const handle = await open(file, "r");
    try {
      assert.equal((await wholePagesOfFile(handle)).pages, 3);
    } finally {
      await handle.close();
    }
  });
});

describe("PageSpool and the spool's directory", () => {
  it("confirms a page only once it is whole in the file, records it durably, and refuses one that is not", async () => {
    const reception = await createReceptionDir(path.join(dir, "spool"), { id: "FIMX1TEST00000000000A1", custNr: "1", topic: "t", trunk: "c", toNumber: "+4930123456", fromNumber: null, startedAt: 1000 });
    const tiffPath = path.join(reception, "received.tif");
    const progressPath = path.join(reception, "progress.json");
    const tiff = writeTiffF([page(3000), page(2000)], { xDpi: 204, yDpi: 98 });
    const spool = new PageSpool({ tiffPath, progressPath, transport: "t38", now: () => 5000 });
    writeFileSync(tiffPath, tiff);
    assert.equal(spool.pageEnded(statistics(0)), null, "no new page: nothing to hold");
    await spool.pageEnded(statistics(1));
    assert.equal(spool.confirmed, 1);
    assert.equal(spool.pageEnded(statistics(1)), null, "the same page again (a repeated MPS): nothing to hold");
    const progress = JSON.parse(readFileSync(progressPath, "utf8")) as ReceptionProgress;
    assert.deepEqual(progress, { pages: 1, transport: "t38", remoteCsid: "SENDER", yDpi: 98, bitRate: 14400, ecm: true, encoding: "T.6", completion: null, updatedAt: 5000 });
    // Page 3 is not in the file: the engine could not write it.
    await assert.rejects(spool.pageEnded(statistics(3))!, /page 3 is not whole in the spool file/);
    assert.equal(spool.confirmed, 1);
    assert.match(spool.failure?.message ?? "", /is the disk full/);
    await assert.rejects(spool.pageEnded(statistics(4))!, /page 3/, "after a failure every page is refused");

    const [found] = await spooledReceptions(path.join(dir, "spool"));
    assert.equal(found?.record?.id, "FIMX1TEST00000000000A1");
    assert.equal(found?.progress?.pages, 1);
    assert.equal(found?.ended, null);
  });

  it("a progress file that cannot be written (its directory gone) fails the page with the system's error", async () => {
    const gone = path.join(dir, "gone");
    const tiffPath = path.join(dir, "alone.tif");
    writeFileSync(tiffPath, writeTiffF([page(100)], { xDpi: 204, yDpi: 98 }));
    const spool = new PageSpool({ tiffPath, progressPath: path.join(gone, "progress.json"), transport: "g711" });
    await assert.rejects(spool.pageEnded(statistics(1))!, (error: Error & { code?: string }) => error.name === "PageSpoolError" && error.code === "ENOENT" && /could not be kept on the node's disk/.test(error.message));
  });

  it("writeJsonDurably replaces a file whole", async () => {
    const file = path.join(dir, "x.json");
    await writeJsonDurably(file, { a: 1 });
    await writeJsonDurably(file, { a: 2 });
    assert.deepEqual(JSON.parse(readFileSync(file, "utf8")), { a: 2 });
    assert.deepEqual(await spooledReceptions(path.join(dir, "no-such-spool")), []);
  });
});

describe("the spool as a node reads it at start", () => {
  it("a damaged entry is reported as damaged and the others are read; directories that are no reception's are left alone", async () => {
    const spool = path.join(dir, "mixed");
    const good = await createReceptionDir(spool, { id: "FIMX1GOOD00000000000B1", custNr: "1", topic: "t", trunk: "c", toNumber: "+4930123456", fromNumber: null, startedAt: 1 });
    await writeJsonDurably(path.join(good, "progress.json"), { pages: 1 });
    const bad = await createReceptionDir(spool, { id: "FIMX1BAD000000000000A1", custNr: "1", topic: "t", trunk: "c", toNumber: "+4930123456", fromNumber: null, startedAt: 1 });
    writeFileSync(path.join(bad, "progress.json"), "{ cut off");
    mkdirSync(path.join(spool, "lost+found"));
    const found = await spooledReceptions(spool);
    assert.deepEqual(found.map((f) => path.basename(f.dir)), ["FIMX1BAD000000000000A1", "FIMX1GOOD00000000000B1"]);
    assert.match(found[0]!.damaged ?? "", /JSON/);
    assert.equal(found[1]!.damaged, null);
    assert.equal(found[1]!.progress?.pages, 1);
  });

  it("one process at a time holds a spool; a lock its process left behind is taken over", async () => {
    const spool = path.join(dir, "locked");
    const release = await lockSpool(spool);
    // Another process that runs holds it: refused.
    const other = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    try {
      await release();
      writeFileSync(path.join(spool, ".lock"), `${other.pid}\n`);
      await assert.rejects(lockSpool(spool), (error: Error) => error instanceof SpoolInUseError && error.message.includes(String(other.pid)));
    } finally {
      other.kill("SIGKILL");
      await new Promise((r) => other.once("exit", r));
    }
    // Its process has ended: the lock is taken over.
    const again = await lockSpool(spool);
    assert.equal(readFileSync(path.join(spool, ".lock"), "utf8").trim(), lockLine(process.pid));
    assert.match(lockLine(process.pid), new RegExp(`^${process.pid} [0-9]+$`), "the pid and its start time (Linux)");
    await again();
  });

  it("a lock whose pid runs but is another process now (a pid reused after a crash and reboot) is taken over", async () => {
    const spool = path.join(dir, "reused");
    const other = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    try {
      await new Promise((r) => other.once("spawn", r));
      const [pid, started] = lockLine(other.pid!).split(" ");
      mkdirSync(spool, { recursive: true });
      // The lock names the running pid with another start time: the holder was an earlier process of that pid.
      writeFileSync(path.join(spool, ".lock"), `${pid} ${Number(started) - 1}\n`);
      const release = await lockSpool(spool);
      assert.equal(readFileSync(path.join(spool, ".lock"), "utf8").trim(), lockLine(process.pid));
      await release();
      // With its own start time it is the holder: refused.
      writeFileSync(path.join(spool, ".lock"), `${pid} ${started}\n`);
      await assert.rejects(lockSpool(spool), (error: Error) => error instanceof SpoolInUseError);
    } finally {
      other.kill("SIGKILL");
      await new Promise((r) => other.once("exit", r));
    }
  });
});

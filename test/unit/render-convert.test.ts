/**
 * Converters to PDF: run-converter.ts kills whole process groups (on its time limit, on abort,
 * and when the thread or process that started them goes away), LibreOffice converts every office
 * type and HTML with the right pages and text and cannot reach the network or local images,
 * password-protected and garbage files fail with their reasons, and Ghostscript converts
 * PostScript and EPS.
 *
 * Office inputs are the committed fixtures of test/fixtures/office/ (scripts/generate-office-
 * fixtures.sh); RTF, HTML and PostScript are written here. Page counts come from pdf-lib, text
 * from pdftotext (poppler-utils). The LibreOffice and Ghostscript tests are skipped on a machine
 * without them.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { PDFDocument } from "pdf-lib";
import sharp from "sharp";
import { converterAvailability, findExecutable, forgetConverterAvailability, missingConverterMessage } from "../../src/render/convert/converter-availability.ts";
import { postscriptToPdf } from "../../src/render/convert/ghostscript-to-pdf.ts";
import { isPasswordProtected, officeToPdf } from "../../src/render/convert/libreoffice-to-pdf.ts";
import { ConverterStartError, liveConverterCount, networkIsolationPrefix, runConverter } from "../../src/render/convert/run-converter.ts";
import { DocumentRenderError, type RenderLimits } from "../../src/render/pages/grey-page.ts";

const FIXTURES = new URL("../fixtures/office/", import.meta.url);
const LIMITS: RenderLimits = { maxPages: 500, maxSourcePixels: 200_000_000, converterTimeoutMs: 60_000 };
const RUN_CONVERTER_URL = new URL("../../src/render/convert/run-converter.ts", import.meta.url).href;

const noLibreOffice = converterAvailability().libreoffice === null && "LibreOffice is not installed";
const noGhostscript = converterAvailability().ghostscript === null && "Ghostscript is not installed";
const noPoppler = (findExecutable(["pdftotext"]) === null || findExecutable(["pdfimages"]) === null) && "pdftotext/pdfimages (poppler-utils) are not installed";

let scratch: string;
before(() => {
  scratch = mkdtempSync(join(tmpdir(), "faxline-convert-test-"));
});
after(() => rmSync(scratch, { recursive: true, force: true }));

function fixture(name: string): Uint8Array {
  return readFileSync(new URL(name, FIXTURES));
}

async function pageCount(pdf: Uint8Array): Promise<number> {
  return (await PDFDocument.load(pdf, { updateMetadata: false })).getPageCount();
}

/** The PDF's text, whitespace collapsed. */
function pdfText(pdf: Uint8Array): string {
  return execFileSync("pdftotext", ["-q", "-", "-"], { input: pdf }).toString("utf8").replace(/\s+/g, " ");
}

/** Width x height of every image in the PDF. */
function pdfImageSizes(pdf: Uint8Array): string[] {
  const path = join(scratch, `images-${Date.now()}.pdf`);
  writeFileSync(path, pdf);
  const listing = execFileSync("pdfimages", ["-list", path]).toString("utf8").split("\n").slice(2);
  return listing.filter((line) => line.trim() !== "").map((line) => {
    const columns = line.trim().split(/\s+/);
    return `${columns[3]}x${columns[4]}`;
  });
}

/** Processes whose command line contains `marker` (zombies have none and do not count), but `except`. */
function processesWith(marker: string, except: number[] = []): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid || except.includes(Number(pid))) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "latin1");
      if (cmdline.includes(marker)) found.push(`${pid}: ${cmdline.replace(/\0/g, " ")}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Waits until no process has `marker` in its command line; returns those left after `ms`. */
async function processesGone(marker: string, ms = 3000): Promise<string[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const left = processesWith(marker);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A unique `sleep` duration to find a test's processes by. */
function sleepMarker(): string {
  return `41.${Math.floor(Math.random() * 1e9)}`;
}

/** A shell that forks a grandchild sleep and waits in a second one: three processes in the group. */
function forkingShell(marker: string): { executable: string; args: string[] } {
  return { executable: "/bin/sh", args: ["-c", `sleep ${marker} & sleep ${marker}; wait`] };
}

async function expectRenderError(promise: Promise<unknown>, reasonCode: string, message: RegExp): Promise<DocumentRenderError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof DocumentRenderError, `expected DocumentRenderError, got ${String(err)}`);
    assert.equal(err.reasonCode, reasonCode, err.message);
    assert.match(err.message, message);
    return err;
  }
  assert.fail(`expected ${reasonCode}, but it succeeded`);
}

describe("runConverter", () => {
  it("returns the exit code and the output, and passes only the environment it is given", async () => {
    process.env.FAXLINE_TEST_SECRET = "do-not-leak";
    try {
      const result = await runConverter({
        executable: "/bin/sh",
        args: ["-c", 'echo "out $FAXLINE_TEST_SECRET|$GIVEN"; echo err >&2; exit 3'],
        cwd: scratch,
        env: { GIVEN: "given" },
        timeoutMs: 10_000,
      });
      assert.equal(result.exitCode, 3);
      assert.equal(result.signal, null);
      assert.equal(result.timedOut, false);
      assert.equal(result.stdout, "out |given\n");
      assert.equal(result.stderr, "err\n");
      assert.equal(result.stderrTail, "err\n");
      assert.equal(liveConverterCount(), 0);
    } finally {
      delete process.env.FAXLINE_TEST_SECRET;
    }
  });

  it("keeps at most maxOutputBytes of each stream, and always the tail of stderr", async () => {
    const result = await runConverter({
      executable: "/bin/sh",
      args: ["-c", "i=0; while [ $i -lt 2000 ]; do echo line-$i; echo err-$i >&2; i=$((i+1)); done"],
      cwd: scratch,
      timeoutMs: 10_000,
      maxOutputBytes: 1000,
    });
    assert.equal(result.exitCode, 0);
    assert.equal(result.stdout.length, 1000);
    assert.equal(result.stderr.length, 1000);
    assert.ok(result.outputTruncated);
    assert.ok(result.stderrTail.endsWith("err-1999\n"), result.stderrTail.slice(-50));
  });

  it("kills a hanging converter at its time limit", async () => {
    const marker = sleepMarker();
    const started = Date.now();
    const result = await runConverter({ executable: findExecutable(["sleep"])!, args: [marker], cwd: scratch, timeoutMs: 300 });
    assert.equal(result.timedOut, true);
    assert.equal(result.signal, "SIGKILL");
    assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
    assert.deepEqual(await processesGone(marker), []);
  });

  it("kills the whole process group, grandchildren included, at the time limit", async () => {
    const marker = sleepMarker();
    const result = await runConverter({ ...forkingShell(marker), cwd: scratch, timeoutMs: 500 });
    assert.equal(result.timedOut, true);
    assert.deepEqual(await processesGone(marker), []);
  });

  it("kills the process group when its AbortSignal fires", async () => {
    const marker = sleepMarker();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const result = await runConverter({ ...forkingShell(marker), cwd: scratch, timeoutMs: 30_000, signal: controller.signal });
    assert.equal(result.aborted, true);
    assert.equal(result.timedOut, false);
    assert.deepEqual(await processesGone(marker), []);
  });

  it("kills the process group when the worker thread that started it is terminated", async () => {
    const marker = sleepMarker();
    const { executable, args } = forkingShell(marker);
    const worker = new Worker(
      `import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))})` +
        `.then((tsx) => { tsx.register(); return import(${JSON.stringify(RUN_CONVERTER_URL)}); })` +
        `.then((m) => { m.runConverter(${JSON.stringify({ executable, args, cwd: scratch, timeoutMs: 60_000 })});` +
        ` setTimeout(() => require("node:worker_threads").parentPort.postMessage("started"), 300); })`,
      { eval: true },
    );
    await new Promise((resolve, reject) => worker.once("message", resolve).once("error", reject));
    assert.equal(processesWith(marker).length, 3, "the shell and its two sleeps run");
    await worker.terminate();
    assert.deepEqual(await processesGone(marker), []);
  });

  it("kills the process group when the Node process that started it is killed with SIGKILL", async () => {
    const marker = sleepMarker();
    const { executable, args } = forkingShell(marker);
    const node = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "-e",
        `import(${JSON.stringify(RUN_CONVERTER_URL)}).then((m) => { m.runConverter(${JSON.stringify({ executable, args, cwd: scratch, timeoutMs: 60_000 })});` +
          ` setTimeout(() => console.log("started"), 300); })`,
      ],
      { cwd: new URL("../..", import.meta.url), stdio: ["ignore", "pipe", "inherit"] },
    );
    await new Promise<void>((resolve, reject) => {
      node.stdout.on("data", (chunk: Buffer) => chunk.toString().includes("started") && resolve());
      node.once("exit", (code) => reject(new Error(`the node process ended early (${code})`)));
    });
    assert.equal(processesWith(marker, [node.pid!]).length, 3, "the shell and its two sleeps run");
    node.kill("SIGKILL");
    assert.deepEqual(await processesGone(marker), []);
  });

  it("runs without network where user namespaces are allowed", async (t) => {
    if ((await networkIsolationPrefix()).length === 0) {
      t.skip("unprivileged user namespaces are not available here");
      return;
    }
    const result = await runConverter({ executable: "/bin/sh", args: ["-c", "cat /proc/net/dev"], cwd: scratch, timeoutMs: 10_000, isolateNetwork: true });
    assert.equal(result.networkIsolated, true);
    const interfaces = result.stdout.split("\n").slice(2).map((line) => line.split(":")[0]!.trim()).filter((name) => name !== "");
    assert.deepEqual(interfaces, ["lo"]);
  });

  it("rejects with ConverterStartError when the program does not exist", async () => {
    await assert.rejects(runConverter({ executable: join(scratch, "no-such-program"), args: [], cwd: scratch, timeoutMs: 1000 }), (err: unknown) => {
      assert.ok(err instanceof ConverterStartError);
      assert.equal(err.code, "ENOENT");
      return true;
    });
  });
});

describe("converter availability", () => {
  it("names the Debian package to install when a converter is missing", async () => {
    const path = process.env.PATH;
    process.env.PATH = join(scratch, "empty-path");
    forgetConverterAvailability();
    try {
      assert.deepEqual(converterAvailability(), { libreoffice: null, ghostscript: null });
      assert.match(missingConverterMessage("office") ?? "", /install the Debian package libreoffice-writer-nogui \(and libreoffice-calc-nogui .*libreoffice-impress-nogui/);
      assert.match(missingConverterMessage("html") ?? "", /libreoffice-writer-nogui/);
      assert.match(missingConverterMessage("postscript") ?? "", /install the Debian package ghostscript$/);
      await expectRenderError(officeToPdf({ name: "brief.docx", bytes: fixture("letter.docx") }, LIMITS), "document_type_unavailable", /^brief\.docx: Office documents need LibreOffice/);
      await expectRenderError(postscriptToPdf({ name: "a.ps", bytes: Buffer.from("%!PS\nshowpage\n") }, LIMITS), "document_type_unavailable", /ghostscript/);
    } finally {
      process.env.PATH = path;
      forgetConverterAvailability();
    }
  });

  it("names the package of a LibreOffice module that is missing (Writer only installed)", () => {
    const program = join(scratch, "writer-only", "lib", "libreoffice", "program");
    mkdirSync(program, { recursive: true });
    for (const file of ["soffice", "soffice.bin", "libswlo.so"]) writeFileSync(join(program, file), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    const path = process.env.PATH;
    process.env.PATH = program;
    forgetConverterAvailability();
    try {
      assert.equal(converterAvailability().libreoffice, join(program, "soffice"));
      assert.equal(missingConverterMessage("office", "brief.docx"), null);
      assert.equal(missingConverterMessage("html", "page.html"), null);
      assert.equal(
        missingConverterMessage("office", "Zahlen.XLSX"),
        "Spreadsheets (.xlsx) need LibreOffice Calc, which is not installed on this Faxline node: install the Debian package libreoffice-calc-nogui",
      );
      assert.match(missingConverterMessage("office", "folien.ppt") ?? "", /^Presentations \(\.ppt\) need LibreOffice Impress, .*libreoffice-impress-nogui$/);
    } finally {
      process.env.PATH = path;
      forgetConverterAvailability();
    }
  });

  it("finds soffice and gs on PATH", { skip: noLibreOffice || noGhostscript }, () => {
    const { libreoffice, ghostscript } = converterAvailability();
    assert.match(libreoffice ?? "", /\/(soffice|libreoffice)$/);
    assert.match(ghostscript ?? "", /\/gs$/);
    for (const [type, name] of [["office", "a.docx"], ["office", "a.xlsx"], ["office", "a.pptx"], ["html", "a.html"], ["postscript", "a.ps"]] as const) {
      assert.equal(missingConverterMessage(type, name), null, `${type} ${name}`);
    }
  });
});

describe("password protection", () => {
  it("is found in the structure of DOC, XLS, ODT, ODS and encrypted OOXML files, and not in plain ones", () => {
    for (const name of ["encrypted.doc", "encrypted.xls", "encrypted.odt", "encrypted.ods"]) {
      assert.equal(isPasswordProtected(fixture(name), name.split(".")[1]!), true, name);
    }
    for (const name of ["letter.docx", "two-pages.odt", "two-pages.doc", "two-sheets.ods", "two-sheets.xlsx", "two-sheets.xls", "three-slides.pptx", "three-slides.ppt"]) {
      assert.equal(isPasswordProtected(fixture(name), name.split(".")[1]!), false, name);
    }
    assert.equal(isPasswordProtected(encryptedOoxml(), "docx"), true, "OLE container with EncryptedPackage");
    assert.equal(isPasswordProtected(fixture("two-pages.doc"), "docx"), false, "a .doc named .docx is not encrypted");
    assert.equal(isPasswordProtected(Buffer.from("garbage"), "xlsx"), false);
  });
});

describe("officeToPdf", { skip: noLibreOffice || noPoppler }, () => {
  it("reports a conversion that exceeds the time limit as unreadable, and the next conversion works", async () => {
    await expectRenderError(
      officeToPdf({ name: "slow.docx", bytes: fixture("letter.docx") }, { ...LIMITS, converterTimeoutMs: 1 }),
      "document_unreadable",
      /^slow\.docx could not be converted: LibreOffice did not finish within 1ms \(render\.converterTimeout\) and was stopped/,
    );
  });

  const cases: { name: string; pages: number; texts: string[] }[] = [
    { name: "letter.docx", pages: 1, texts: ["Faxline fixture: letter", "Grüße, 5 €"] },
    { name: "two-pages.odt", pages: 2, texts: ["This is page one. Grüße, 5 €.", "This is page two."] },
    { name: "two-pages.doc", pages: 2, texts: ["This is page one. Grüße, 5 €.", "This is page two."] },
    { name: "two-sheets.xlsx", pages: 2, texts: ["Faxline fixture sheet one", "4711"] },
    { name: "two-sheets.ods", pages: 2, texts: ["Faxline fixture sheet one", "4711"] },
    { name: "two-sheets.xls", pages: 2, texts: ["Faxline fixture sheet two", "42"] },
    { name: "three-slides.pptx", pages: 3, texts: ["Faxline fixture slide 1 of 3", "Faxline fixture slide 3 of 3"] },
    { name: "three-slides.ppt", pages: 3, texts: ["Faxline fixture slide 2 of 3"] },
  ];
  for (const { name, pages, texts } of cases) {
    it(`converts ${name}: ${pages} page(s) with its text`, async () => {
      const pdf = await officeToPdf({ name: `Kunde ${name}`, bytes: fixture(name) }, LIMITS);
      assert.equal(await pageCount(pdf), pages);
      const text = pdfText(pdf);
      for (const expected of texts) assert.ok(text.includes(expected), `${JSON.stringify(expected)} in ${JSON.stringify(text)}`);
    });
  }

  it("converts RTF and HTML (page breaks, a declared charset), two at once in one thread", async () => {
    const rtf = String.raw`{\rtf1\ansi\deff0{\fonttbl{\f0 Liberation Serif;}}\f0\fs24 RTF page one, Gr\u252?\u223?e\page RTF page two\par}`;
    const html = '<html><head><meta charset="iso-8859-1"></head><body><p>HTML Seite eins, Grüße</p><p style="page-break-before: always">HTML Seite zwei</p></body></html>';
    const [rtfPdf, htmlPdf] = await Promise.all([
      officeToPdf({ name: "memo.rtf", bytes: Buffer.from(rtf, "latin1") }, LIMITS),
      officeToPdf({ name: "PAGE.HTM", charset: "ISO-8859-1", bytes: Buffer.from(html, "latin1") }, LIMITS),
    ]);
    assert.equal(await pageCount(rtfPdf), 2);
    assert.match(pdfText(rtfPdf), /RTF page one, Grüße RTF page two/);
    assert.equal(await pageCount(htmlPdf), 2);
    assert.match(pdfText(htmlPdf), /HTML Seite eins, Grüße HTML Seite zwei/);
  });

  it("lets HTML reach neither the network nor local images, and does not wait for unreachable hosts", async () => {
    const requests: string[] = [];
    const server: Server = createServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const localImage = join(scratch, "local-secret.png");
      writeFileSync(localImage, await sharp({ create: { width: 123, height: 45, channels: 3, background: "#000" } }).png().toBuffer());
      const dataImage = (await sharp({ create: { width: 7, height: 5, channels: 3, background: "#000" } }).png().toBuffer()).toString("base64");
      const html = `<!DOCTYPE html><html><head><meta charset="utf-8">
<link rel="stylesheet" href="${base}/style.css"><link rel="stylesheet" href="${pathToFileURL(join(scratch, "local.css")).href}">
<style>@import url("${base}/imported.css"); body { background: url("${base}/background.png"); }</style></head>
<body><p>Lockdown probe</p>
<p><img src="${base}/remote.png"> <img src="${base}/sized.png" width="50" height="20"> <img src="http://10.255.255.1/unreachable.png"></p>
<p><img src="${pathToFileURL(localImage).href}"> <img src="${localImage}"></p>
<p><iframe src="${base}/frame.html"></iframe> <object data="${base}/object.png" type="image/png"></object></p>
<p><img src="data:image/png;base64,${dataImage}" width="7" height="5"></p>
<script>document.write("script ran")</script>
</body></html>`;
      const started = Date.now();
      const pdf = await officeToPdf({ name: "probe.html", bytes: Buffer.from(html, "utf8") }, LIMITS);
      assert.ok(Date.now() - started < 20_000, `took ${Date.now() - started} ms`);
      assert.deepEqual(requests, []);
      const images = pdfImageSizes(pdf);
      assert.ok(!images.includes("123x45"), `the local image is not embedded: ${images.join(", ")}`);
      assert.ok(images.includes("7x5"), `the data: image is: ${images.join(", ")}`);
      const text = pdfText(pdf);
      assert.match(text, /Lockdown probe/);
      assert.doesNotMatch(text, /script ran/);
    } finally {
      server.close();
    }
  });

  it("reports garbage named .docx as unreadable", async () => {
    await expectRenderError(
      officeToPdf({ name: "broken.docx", bytes: Buffer.from("this is not a word document \u0000\u0001\u0002 at all", "latin1") }, LIMITS),
      "document_unreadable",
      /^broken\.docx could not be converted: LibreOffice cannot open it; it is damaged, password-protected, or not really a \.docx file$/,
    );
  });

  it("reports password-protected documents as encrypted without starting LibreOffice", async () => {
    for (const name of ["encrypted.doc", "encrypted.xls", "encrypted.odt", "encrypted.ods"]) {
      const started = Date.now();
      await expectRenderError(officeToPdf({ name, bytes: fixture(name) }, LIMITS), "document_encrypted", new RegExp(`^${name} is password-protected; send it without a password$`));
      assert.ok(Date.now() - started < 500, `${name}: ${Date.now() - started} ms`);
    }
    await expectRenderError(officeToPdf({ name: "secret.xlsx", bytes: encryptedOoxml() }, LIMITS), "document_encrypted", /secret\.xlsx is password-protected/);
  });

  it("reports an empty document as unreadable", async () => {
    await expectRenderError(officeToPdf({ name: "empty.odt", bytes: new Uint8Array(0) }, LIMITS), "document_unreadable", /^empty\.odt is empty$/);
  });
});

describe("postscriptToPdf", { skip: noGhostscript || noPoppler }, () => {
  const pages = (count: number): string =>
    `%!PS\n/Helvetica findfont 24 scalefont setfont\n1 1 ${count} { 72 700 moveto (PostScript page ) show 3 string cvs show showpage } for\n`;

  it("converts a PostScript file with three showpage to three pages", async () => {
    const pdf = await postscriptToPdf({ name: "three.ps", bytes: Buffer.from(pages(3)) }, LIMITS);
    assert.equal(await pageCount(pdf), 3);
    assert.match(pdfText(pdf), /PostScript page 1 PostScript page 2 PostScript page 3/);
  });

  it("crops EPS to its bounding box", async () => {
    const eps = "%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 200 100\n/Helvetica findfont 20 scalefont setfont\n10 40 moveto (EPS figure) show\n";
    const pdf = await postscriptToPdf({ name: "figure.EPS", bytes: Buffer.from(eps) }, LIMITS);
    const doc = await PDFDocument.load(pdf);
    assert.equal(doc.getPageCount(), 1);
    const { width, height } = doc.getPage(0).getSize();
    assert.deepEqual([Math.round(width), Math.round(height)], [200, 100]);
    assert.match(pdfText(pdf), /EPS figure/);
  });

  it("reports garbage as unreadable with Ghostscript's first error line", async () => {
    await expectRenderError(
      postscriptToPdf({ name: "broken.ps", bytes: Buffer.from("garbage \u0000\u0001 not postscript {{{ ]]\n", "latin1") }, LIMITS),
      "document_unreadable",
      /^broken\.ps cannot be read as PostScript: Ghostscript failed \(Error: \/undefined in garbage\)$/,
    );
  });

  it("stops a PostScript program that loops forever at the time limit", async () => {
    const loop = "%!PS\n{ 1 pop } loop\n";
    await expectRenderError(
      postscriptToPdf({ name: "loop.ps", bytes: Buffer.from(loop) }, { ...LIMITS, converterTimeoutMs: 1500 }),
      "document_unreadable",
      /^loop\.ps could not be converted: Ghostscript did not finish within 1500ms/,
    );
  });

  it("refuses more pages than the limit", async () => {
    await expectRenderError(postscriptToPdf({ name: "many.ps", bytes: Buffer.from(pages(5)) }, { ...LIMITS, maxPages: 2 }), "document_too_large", /^many\.ps has more than 2 pages, the limit$/);
  });
});

/**
 * A minimal OLE compound file like the one an encrypted DOCX/XLSX/PPTX is ([MS-OFFCRYPTO]): a
 * root storage with the streams EncryptionInfo and EncryptedPackage (contents random here), each
 * 4096 bytes so that they live in regular sectors. 512-byte sectors: 0 FAT, 1 directory, 2-9 and
 * 10-17 the streams.
 */
function encryptedOoxml(): Buffer {
  const SECTOR = 512;
  const END = 0xfffffffe;
  const FREE = 0xffffffff;
  const file = Buffer.alloc(SECTOR * 19, 0);
  Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(file, 0);
  file.writeUInt16LE(0x3e, 24);
  file.writeUInt16LE(3, 26);
  file.writeUInt16LE(0xfffe, 28);
  file.writeUInt16LE(9, 30);
  file.writeUInt16LE(6, 32);
  file.writeUInt32LE(1, 44); // FAT sectors
  file.writeUInt32LE(1, 48); // first directory sector
  file.writeUInt32LE(4096, 56); // mini stream cutoff
  file.writeUInt32LE(END, 60); // no mini FAT
  file.writeUInt32LE(END, 68); // no DIFAT sectors
  for (let i = 0; i < 109; i++) file.writeUInt32LE(i === 0 ? 0 : FREE, 76 + 4 * i);
  const fat = (index: number, value: number): number => file.writeUInt32LE(value, SECTOR + 4 * index);
  for (let i = 0; i < SECTOR / 4; i++) fat(i, FREE);
  fat(0, 0xfffffffd);
  fat(1, END);
  for (let i = 2; i < 18; i++) fat(i, i === 9 || i === 17 ? END : i + 1);
  const entry = (index: number, name: string, type: number, start: number, size: number, child: number, right: number): void => {
    const at = 2 * SECTOR + 128 * index;
    file.write(`${name}\u0000`, at, "utf16le");
    file.writeUInt16LE((name.length + 1) * 2, at + 64);
    file[at + 66] = type;
    file[at + 67] = 1;
    file.writeUInt32LE(FREE, at + 68);
    file.writeUInt32LE(right, at + 72);
    file.writeUInt32LE(child, at + 76);
    file.writeUInt32LE(start, at + 116);
    file.writeUInt32LE(size, at + 120);
  };
  entry(0, "Root Entry", 5, END, 0, 1, FREE);
  entry(1, "EncryptionInfo", 2, 2, 4096, FREE, 2);
  entry(2, "EncryptedPackage", 2, 10, 4096, FREE, FREE);
  for (let i = 3 * SECTOR; i < file.length; i++) file[i] = (i * 7919) & 0xff;
  return file;
}

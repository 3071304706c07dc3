/**
 * Office documents (DOC, DOCX, ODT, RTF, XLS, XLSX, ODS, PPT, PPTX) and HTML to PDF with
 * LibreOffice headless (`soffice --convert-to pdf`), for the PDF renderer to draw.
 *
 * How a conversion runs:
 * - One LibreOffice user profile per calling thread (the render worker, or the main thread in
 *   tools and tests), made on first use in the temp dir (about 600 KB) and reused: a warm start
 *   is faster. Measured on this project's 2-core machine with LibreOffice 7.4.7: a bare soffice
 *   run on an idle machine 1.24 s first, 1.1 s warm; through officeToPdf with the machine busy
 *   (load 5) 1.8-2.9 s for a thread's first document and 1.4-2.5 s warm, any type
 *   (node-stack.md section 4 measured 1.21 s / 0.86 s elsewhere). Two LibreOffice processes on
 *   one profile do not work (the second silently writes nothing), so the conversions of a
 *   thread run one after the other. A thread's profile is removed when the thread exits by
 *   itself or the process exits; one of a worker ended by `terminate()`, or of a process that
 *   was killed, stays until a later Faxline process makes its first profile and removes those
 *   of processes that are gone.
 * - A temp work dir per conversion (input, output and LibreOffice's TMPDIR), always removed.
 *   The input is written as `document.<ext>`: the client's file name never reaches a command
 *   line or a path.
 * - The subprocess runs through run-converter.ts: its own process group, killed as a whole
 *   after `limits.converterTimeoutMs`, a clean environment, and no network where the system
 *   allows user namespaces.
 *
 * Which failure is which:
 * - LibreOffice not installed, or not the module the type needs (Calc for spreadsheets, Impress
 *   for presentations) -> document_type_unavailable naming the Debian package
 *   (converter-availability.ts).
 * - Password-protected -> document_encrypted. Found before LibreOffice runs, from the file's
 *   structure: an OOXML file that is an OLE container with an EncryptedPackage stream, an ODF
 *   package whose manifest has encryption data, a .doc with the FIB's fEncrypted flag, an .xls
 *   with a FILEPASS record, a .ppt whose CurrentUserAtom has the encrypted header token. Headless
 *   conversion never asks for a password (the document is loaded without an interaction handler
 *   and stdin is /dev/null); an encrypted file this check misses simply fails to load, which
 *   gives document_unreadable.
 * - LibreOffice cannot load the file (it prints "Error: source file could not be loaded", exits
 *   with 0 and writes no PDF; this is what garbage gives) or ends without a PDF ->
 *   document_unreadable.
 * - The time limit -> document_unreadable, not document_too_large: a conversion that hangs is
 *   mostly a damaged or hostile file, and the page limit is checked on the PDF anyway. The
 *   message says both ("damaged, or too large or complex to convert within ...").
 *
 * HTML is imported with Writer's "HTML (StarWriter)" filter into a normal text document and
 * exported with writer_pdf_Export, so it paginates like a printed page. (LibreOffice's default
 * for .html is Writer/Web with writer_web_pdf_Export; in 7.4 that lost the first heading of a
 * test page and added an empty page.) A `charset` given with the document is applied: the HTML is
 * decoded by it and handed to LibreOffice as UTF-8, with its own <meta> charset declarations
 * rewritten to UTF-8 (as a browser lets the HTTP charset win over <meta>). Without one, the bytes
 * stay as they are (a UTF-16 BOM is honoured), and LibreOffice follows the BOM or <meta> and
 * otherwise reads UTF-8 (measured: Latin-1 without <meta> comes out garbled).
 *
 * What a document can reach (measured with LibreOffice 7.4.7 and a probe page with remote and
 * local <img>, <link rel=stylesheet>, @import, CSS and table backgrounds, <iframe>, <object>,
 * <embed>, <script> and a data: image):
 * - Without lockdown, LibreOffice fetched the stylesheet and the remote images over HTTP and
 *   embedded local image files (file:///..., ../x.png, /abs/x.png) into the PDF.
 * - `BlockUntrustedRefererLinks` (set in the profile below, with no trusted locations) stops
 *   every linked image, local or remote, and linked media and documents; it does not stop
 *   <link rel=stylesheet>: LibreOffice still fetched a remote one and read a local one (seen by
 *   its access time). So `<link>` elements are removed from the HTML before LibreOffice sees it
 *   (nothing is lost: a stylesheet could only be remote or local, and both are refused).
 *   @import, CSS url() backgrounds and <iframe> contents were not loaded even without lockdown.
 * - A manual proxy at 127.0.0.1:1 for HTTP, HTTPS and FTP (LibreOffice's only remote protocols
 *   in the -nogui packages; there is no gio/smb content provider) makes every remaining request
 *   fail at once, without a DNS lookup.
 * - Where unprivileged user namespaces work (Debian 12 default), the process also runs without
 *   any network (run-converter.ts `isolateNetwork`); in a container that forbids them, the two
 *   settings above are the protection.
 * - Together: no request reaches the network, no local image is embedded, data: images work,
 *   scripts do not run, and an <img> pointing at an unreachable host costs nothing.
 * - Also set: macros never run (MacroSecurityLevel 3 "very high" and DisableMacrosExecution;
 *   headless conversion loads without macro execution anyway), and links in documents are not
 *   updated on load (Writer and Calc "update links: never"; the conversion loads with
 *   UpdateDocMode NO_UPDATE too), so DDE, OLE, WEBSERVICE() and external cell references keep
 *   their stored values.
 * Not locked down: LibreOffice runs as the Faxline user and could read whatever that user can,
 * through any import feature that is not behind the referer check and that this probe did not
 * find (office formats have many: OLE links, DDE fields, linked sections are behind it or behind
 * "update links: never"). A mount namespace or a dedicated user would close that; not done here.
 * A read of an endless file (/dev/zero) would only hang the conversion until its time limit.
 *
 * Paper size: LibreOffice keeps a document's own page size; HTML gets LibreOffice's default for
 * the locale (A4 under C.UTF-8). The PDF renderer scales every page onto the fax page.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { threadId } from "node:worker_threads";
import { inflateRawSync } from "node:zlib";
import { formatDurationMs } from "../../lib/durations.ts";
import { decodeText } from "../decode-text.ts";
import { fileNameExtension } from "../document-types.ts";
import { DocumentRenderError, type DocumentInput, type RenderLimits } from "../pages/grey-page.ts";
import { converterAvailability, forgetConverterAvailability, missingConverterMessage } from "./converter-availability.ts";
import { ConverterStartError, runConverter, type ConverterResult } from "./run-converter.ts";

/** The extensions officeToPdf converts. */
export const LIBREOFFICE_EXTENSIONS: ReadonlySet<string> = new Set(["doc", "docx", "odt", "rtf", "xls", "xlsx", "ods", "ppt", "pptx", "htm", "html"]);

const HTML_EXTENSIONS: ReadonlySet<string> = new Set(["htm", "html"]);

/** What LibreOffice prints (and exits 0) when it cannot load the input. */
const LOAD_FAILURE = "source file could not be loaded";

/**
 * The profile's configuration (registrymodifications.xcu), written before every conversion so
 * that a profile LibreOffice rewrote, or left half-written when it was killed, is always locked
 * down again. Values: Writer's link update mode 0 = never (1 on request, 2 always); Calc's 1 =
 * never (0 always, 2 on request); proxy type 1 = manual.
 */
const LOCKDOWN_CONFIGURATION = `<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
${[
  ["/org.openoffice.Office.Common/Security/Scripting", "BlockUntrustedRefererLinks", "true"],
  ["/org.openoffice.Office.Common/Security/Scripting", "MacroSecurityLevel", "3"],
  ["/org.openoffice.Office.Common/Security/Scripting", "DisableMacrosExecution", "true"],
  ["/org.openoffice.Office.Writer/Content/Update", "Link", "0"],
  ["/org.openoffice.Office.Calc/Content/Update", "Link", "1"],
  ["/org.openoffice.Inet/Settings", "ooInetProxyType", "1"],
  ["/org.openoffice.Inet/Settings", "ooInetHTTPProxyName", "127.0.0.1"],
  ["/org.openoffice.Inet/Settings", "ooInetHTTPProxyPort", "1"],
  ["/org.openoffice.Inet/Settings", "ooInetHTTPSProxyName", "127.0.0.1"],
  ["/org.openoffice.Inet/Settings", "ooInetHTTPSProxyPort", "1"],
  ["/org.openoffice.Inet/Settings", "ooInetFTPProxyName", "127.0.0.1"],
  ["/org.openoffice.Inet/Settings", "ooInetFTPProxyPort", "1"],
  ["/org.openoffice.Inet/Settings", "ooInetNoProxy", ""],
  ["/org.openoffice.Office.Common/Misc", "FirstRun", "false"],
]
  .map(([path, name, value]) => `<item oor:path="${path}"><prop oor:name="${name}" oor:op="fuse"><value>${value}</value></prop></item>`)
  .join("\n")}
</oor:items>
`;

const PROFILE_PREFIX = "faxline-libreoffice-";

/** This thread's profile directory (holds `profile/` and `home/`), made on first use. */
let threadDir: string | null = null;
/** The conversions of this thread, one after the other. */
let queue: Promise<unknown> = Promise.resolve();

/**
 * Converts an office or HTML document to PDF. Throws DocumentRenderError for documents that
 * cannot be converted (see the module comment); anything else thrown is an internal error.
 */
export async function officeToPdf(doc: DocumentInput, limits: RenderLimits, options: { signal?: AbortSignal } = {}): Promise<Uint8Array> {
  const extension = fileNameExtension(doc.name);
  if (extension === null || !LIBREOFFICE_EXTENSIONS.has(extension)) {
    throw new Error(`officeToPdf cannot convert ${doc.name}: LibreOffice converts .${[...LIBREOFFICE_EXTENSIONS].join(", .")}`);
  }
  const html = HTML_EXTENSIONS.has(extension);
  const missing = missingConverterMessage(html ? "html" : "office", doc.name);
  if (missing !== null) throw new DocumentRenderError("document_type_unavailable", `${doc.name}: ${missing}`);
  if (doc.bytes.length === 0) throw new DocumentRenderError("document_unreadable", `${doc.name} is empty`);
  if (!html && isPasswordProtected(doc.bytes, extension)) {
    throw new DocumentRenderError("document_encrypted", `${doc.name} is password-protected; send it without a password`);
  }
  const input = html ? htmlInput(doc) : doc.bytes;

  const conversion = queue.then(() => convert(doc.name, extension, input, limits, options.signal));
  queue = conversion.catch(() => {});
  return conversion;
}

async function convert(name: string, extension: string, input: Uint8Array, limits: RenderLimits, signal: AbortSignal | undefined): Promise<Uint8Array> {
  const soffice = converterAvailability().libreoffice;
  if (soffice === null) throw new DocumentRenderError("document_type_unavailable", `${name}: ${missingConverterMessage("office")}`);
  const dir = ensureThreadDir();
  const profile = join(dir, "profile");
  await mkdir(join(profile, "user"), { recursive: true });
  await writeFile(join(profile, "user", "registrymodifications.xcu"), LOCKDOWN_CONFIGURATION);

  const work = await mkdtemp(join(tmpdir(), "faxline-convert-"));
  try {
    const inputPath = join(work, `document.${extension}`);
    const outDir = join(work, "out");
    await writeFile(inputPath, input);
    const html = HTML_EXTENSIONS.has(extension);
    let result: ConverterResult;
    try {
      result = await runConverter({
        executable: soffice,
        args: [
          `-env:UserInstallation=${pathToFileURL(profile).href}`,
          "--headless",
          "--invisible",
          "--nologo",
          "--nodefault",
          "--nolockcheck",
          "--norestore",
          ...(html ? ["--infilter=HTML (StarWriter)"] : []),
          "--convert-to",
          html ? "pdf:writer_pdf_Export" : "pdf",
          "--outdir",
          outDir,
          inputPath,
        ],
        cwd: work,
        env: { HOME: join(dir, "home"), TMPDIR: work, SAL_USE_VCLPLUGIN: "svp" },
        timeoutMs: limits.converterTimeoutMs,
        isolateNetwork: true,
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (err) {
      if (err instanceof ConverterStartError && (err.code === "ENOENT" || err.code === "EACCES")) {
        forgetConverterAvailability();
        throw new DocumentRenderError("document_type_unavailable", `${name}: ${missingConverterMessage("office") ?? err.message}`);
      }
      throw err;
    }
    if (result.timedOut || result.aborted || result.signal !== null) {
      // A killed LibreOffice leaves its lock file; 7.4 starts anyway, but leave nothing to chance.
      await rm(join(profile, ".lock"), { force: true });
    }
    if (result.aborted) throw abortError(signal);
    if (result.timedOut) {
      throw new DocumentRenderError(
        "document_unreadable",
        `${name} could not be converted: LibreOffice did not finish within ${formatDurationMs(limits.converterTimeoutMs)} ` +
          `(render.converterTimeout) and was stopped; the document is damaged, or too large or complex to convert in that time`,
      );
    }
    const pdf = await readFile(join(outDir, "document.pdf")).catch(() => null);
    if (pdf !== null && pdf.length > 0 && result.exitCode === 0 && pdf.subarray(0, 5).toString("latin1") === "%PDF-") {
      return new Uint8Array(pdf.buffer, pdf.byteOffset, pdf.length);
    }
    throw new DocumentRenderError("document_unreadable", `${name} could not be converted: ${libreOfficeFailure(result, extension)}`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Why LibreOffice wrote no PDF, for a person. */
function libreOfficeFailure(result: ConverterResult, extension: string): string {
  if (result.signal !== null) return `LibreOffice stopped with signal ${result.signal} while converting it (the file may be damaged)`;
  if (result.exitCode !== 0) return `LibreOffice failed with exit code ${result.exitCode} (the file may be damaged)`;
  if (`${result.stdout}\n${result.stderr}`.includes(LOAD_FAILURE)) {
    return `LibreOffice cannot open it; it is damaged, password-protected, or not really a .${extension} file`;
  }
  return "LibreOffice wrote no PDF (the file may be damaged or empty)";
}

function abortError(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new DOMException("The conversion was aborted", "AbortError");
}

/**
 * The HTML to hand to LibreOffice: without <link> elements, and, with a charset given (or a
 * UTF-16 BOM), decoded by it and encoded as UTF-8 with <meta> charsets saying so. Without a
 * charset the bytes are edited as Latin-1, which leaves every byte but the removed tags as it was
 * in any ASCII-compatible encoding.
 */
function htmlInput(doc: DocumentInput): Uint8Array {
  const utf16Bom = doc.bytes.length >= 2 && ((doc.bytes[0] === 0xfe && doc.bytes[1] === 0xff) || (doc.bytes[0] === 0xff && doc.bytes[1] === 0xfe));
  const charset = doc.charset?.trim() || (utf16Bom ? "UTF-16" : null);
  if (charset === null) return Buffer.from(withoutLinkElements(Buffer.from(doc.bytes).toString("latin1")), "latin1");
  const decoded = decodeText(doc.bytes, charset);
  if (!decoded.ok) throw new DocumentRenderError("document_unreadable", `${doc.name}: ${decoded.message}`);
  const text = decoded.text.replace(/<meta\b[^>]*>/gi, (tag) => tag.replace(/charset\s*=\s*(["']?)[\w.:-]+\1/i, "charset=$1utf-8$1"));
  return Buffer.from(withoutLinkElements(text), "utf8");
}

/** The HTML without its <link> elements (stylesheets LibreOffice would fetch or read). */
function withoutLinkElements(html: string): string {
  return html.replace(/<link\b[^>]*>/gi, "");
}

/**
 * This thread's directory for its LibreOffice profile and HOME, made on first use, removed when
 * the thread or process exits. Making it also removes the directories of processes that are gone.
 */
function ensureThreadDir(): string {
  if (threadDir !== null) return threadDir;
  removeProfilesOfDeadProcesses();
  const dir = mkdtempSync(join(tmpdir(), `${PROFILE_PREFIX}${process.pid}-${threadId}-`));
  threadDir = dir;
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function removeProfilesOfDeadProcesses(): void {
  let names: string[];
  try {
    names = readdirSync(tmpdir());
  } catch {
    return;
  }
  const pattern = new RegExp(`^${PROFILE_PREFIX}(\\d+)-\\d+-`);
  for (const name of names) {
    const match = pattern.exec(name);
    if (match === null) continue;
    const pid = Number(match[1]);
    if (pid === process.pid || processExists(pid)) continue;
    try {
      rmSync(join(tmpdir(), name), { recursive: true, force: true });
    } catch {
      // Another user's, or being removed by someone else.
    }
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

// ---------------------------------------------------------------------------------------------
// Password protection, from the file's structure.

/** Whether an office file is password-protected (encrypted), as far as its structure shows. */
export function isPasswordProtected(bytes: Uint8Array, extension: string): boolean {
  const compound = readCompoundFile(bytes);
  if (compound !== null) {
    // An encrypted OOXML file (any name) is an OLE container holding the encrypted package.
    if (compound.entry("EncryptedPackage") !== null || compound.entry("EncryptionInfo") !== null) return true;
    switch (extension) {
      case "doc": {
        const fib = compound.streamStart("WordDocument", 12);
        // FibBase: wIdent 0xA5EC, then at offset 10 the flags word whose bit 8 is fEncrypted.
        return fib !== null && fib.length >= 12 && readU16(fib, 0) === 0xa5ec && (readU16(fib, 10) & 0x0100) !== 0;
      }
      case "xls":
        return hasFilePassRecord(compound.streamStart("Workbook", 4096) ?? compound.streamStart("Book", 4096));
      case "ppt": {
        if (compound.entry("EncryptedSummary") !== null) return true;
        const user = compound.streamStart("Current User", 16);
        // CurrentUserAtom: record header (8), size (4), headerToken (4): 0xF3D1C4DF when encrypted.
        return user !== null && user.length >= 16 && readU32(user, 12) === 0xf3d1c4df;
      }
      default:
        return false;
    }
  }
  if (extension === "odt" || extension === "ods") {
    const manifest = readZipEntry(bytes, "META-INF/manifest.xml", 4 * 1024 * 1024);
    return manifest !== null && /<manifest:encryption-data\b/.test(manifest.toString("utf8"));
  }
  return false;
}

/** Whether a BIFF workbook stream has a FILEPASS record among its first records (it follows the BOF). */
function hasFilePassRecord(stream: Uint8Array | null): boolean {
  if (stream === null) return false;
  let offset = 0;
  for (let record = 0; record < 32 && offset + 4 <= stream.length; record++) {
    const type = readU16(stream, offset);
    if (type === 0x002f) return true;
    if (record === 0 && (type & 0xff) !== 0x09) return false; // not a BOF: not a workbook we know
    offset += 4 + readU16(stream, offset + 2);
  }
  return false;
}

interface CompoundEntry {
  name: string;
  /** 1 storage, 2 stream, 5 root. */
  type: number;
  start: number;
  size: number;
}

interface CompoundFile {
  entry(name: string): CompoundEntry | null;
  /** The first `length` bytes of a stream (fewer if it is shorter), or null if it is missing or unreadable. */
  streamStart(name: string, length: number): Uint8Array | null;
}

const END_OF_CHAIN = 0xfffffffe;
const MAX_SECTOR_ID = 0xfffffffa;

/**
 * A minimal reader of OLE compound files ([MS-CFB]): the directory, and the start of a stream
 * through the FAT or the mini FAT. Null for anything that is not one or is inconsistent; every
 * chain walk is bounded, so hostile files cost at most one pass over their sectors.
 */
function readCompoundFile(bytes: Uint8Array): CompoundFile | null {
  const magic = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];
  if (bytes.length < 512 || magic.some((b, i) => bytes[i] !== b)) return null;
  const sectorShift = readU16(bytes, 30);
  const miniShift = readU16(bytes, 32);
  if ((sectorShift !== 9 && sectorShift !== 12) || miniShift !== 6) return null;
  const sectorSize = 1 << sectorShift;
  const miniSectorSize = 1 << miniShift;
  const sectorCount = Math.floor(bytes.length / sectorSize);
  const sector = (id: number): Uint8Array | null => {
    const offset = (id + 1) * sectorSize;
    return id < MAX_SECTOR_ID && offset + sectorSize <= bytes.length ? bytes.subarray(offset, offset + sectorSize) : null;
  };

  // The FAT: sector ids from the header's DIFAT, then the DIFAT chain.
  const fatSectorIds: number[] = [];
  const fatSectorCount = readU32(bytes, 44);
  for (let i = 0; i < 109 && fatSectorIds.length < fatSectorCount; i++) fatSectorIds.push(readU32(bytes, 76 + 4 * i));
  let difat = readU32(bytes, 68);
  for (let hops = 0; difat < MAX_SECTOR_ID && fatSectorIds.length < fatSectorCount && hops < sectorCount; hops++) {
    const data = sector(difat);
    if (data === null) return null;
    for (let i = 0; i < sectorSize / 4 - 1 && fatSectorIds.length < fatSectorCount; i++) fatSectorIds.push(readU32(data, 4 * i));
    difat = readU32(data, sectorSize - 4);
  }
  const fat: number[] = [];
  for (const id of fatSectorIds) {
    const data = sector(id);
    if (data === null) return null;
    for (let i = 0; i < sectorSize / 4; i++) fat.push(readU32(data, 4 * i));
  }
  const chain = (start: number, table: readonly number[], limit: number): number[] => {
    const ids: number[] = [];
    for (let id = start; id < MAX_SECTOR_ID && id < table.length && ids.length < limit; id = table[id]!) ids.push(id);
    return ids;
  };

  const entries: CompoundEntry[] = [];
  for (const id of chain(readU32(bytes, 48), fat, sectorCount)) {
    const data = sector(id);
    if (data === null) return null;
    for (let offset = 0; offset + 128 <= data.length; offset += 128) {
      const type = data[offset + 66]!;
      if (type === 0) continue;
      const nameBytes = Math.min(readU16(data, offset + 64), 64);
      const name = Buffer.from(data.subarray(offset, offset + Math.max(nameBytes - 2, 0))).toString("utf16le");
      entries.push({ name, type, start: readU32(data, offset + 116), size: readU32(data, offset + 120) });
    }
  }
  const entry = (name: string): CompoundEntry | null => entries.find((e) => e.name === name && (e.type === 2 || e.type === 5)) ?? null;
  const miniCutoff = readU32(bytes, 56);

  const streamStart = (name: string, length: number): Uint8Array | null => {
    const found = entry(name);
    if (found === null || found.type !== 2) return null;
    const wanted = Math.min(length, found.size);
    const parts: Uint8Array[] = [];
    let have = 0;
    if (found.size >= miniCutoff) {
      for (const id of chain(found.start, fat, Math.ceil(wanted / sectorSize))) {
        const data = sector(id);
        if (data === null) return null;
        parts.push(data);
        have += data.length;
      }
    } else {
      // Small streams live in the mini stream (the root entry's stream), in 64-byte mini sectors.
      const root = entries.find((e) => e.type === 5);
      if (root === undefined) return null;
      const container = chain(root.start, fat, sectorCount);
      const miniFat: number[] = [];
      for (const id of chain(readU32(bytes, 60), fat, sectorCount)) {
        const data = sector(id);
        if (data === null) return null;
        for (let i = 0; i < sectorSize / 4; i++) miniFat.push(readU32(data, 4 * i));
      }
      for (const mini of chain(found.start, miniFat, Math.ceil(wanted / miniSectorSize))) {
        const position = mini * miniSectorSize;
        const data = sector(container[Math.floor(position / sectorSize)] ?? END_OF_CHAIN);
        if (data === null) return null;
        const inSector = position % sectorSize;
        parts.push(data.subarray(inSector, inSector + miniSectorSize));
        have += miniSectorSize;
      }
    }
    return have === 0 ? null : Buffer.concat(parts).subarray(0, wanted);
  };
  return { entry, streamStart };
}

/**
 * One entry of a ZIP archive, inflated (stored and deflate only), at most `maxBytes`; null if
 * the archive or the entry cannot be read.
 */
function readZipEntry(bytes: Uint8Array, wanted: string, maxBytes: number): Buffer | null {
  if (bytes.length < 22 || readU32(bytes, 0) !== 0x04034b50) return null;
  // The end of central directory record, within the last 64 KiB + 22 bytes (the comment's room).
  let end = -1;
  for (let offset = bytes.length - 22; offset >= Math.max(0, bytes.length - 22 - 0xffff); offset--) {
    if (readU32(bytes, offset) === 0x06054b50) {
      end = offset;
      break;
    }
  }
  if (end < 0) return null;
  const count = readU16(bytes, end + 10);
  let offset = readU32(bytes, end + 16);
  for (let i = 0; i < count && offset + 46 <= bytes.length && readU32(bytes, offset) === 0x02014b50; i++) {
    const method = readU16(bytes, offset + 10);
    const compressedSize = readU32(bytes, offset + 20);
    const nameLength = readU16(bytes, offset + 28);
    const localOffset = readU32(bytes, offset + 42);
    const name = Buffer.from(bytes.subarray(offset + 46, offset + 46 + nameLength)).toString("utf8");
    offset += 46 + nameLength + readU16(bytes, offset + 30) + readU16(bytes, offset + 32);
    if (name !== wanted) continue;
    if (localOffset + 30 > bytes.length || readU32(bytes, localOffset) !== 0x04034b50) return null;
    const dataStart = localOffset + 30 + readU16(bytes, localOffset + 26) + readU16(bytes, localOffset + 28);
    const data = bytes.subarray(dataStart, dataStart + compressedSize);
    try {
      if (method === 0) return Buffer.from(data.subarray(0, maxBytes));
      if (method === 8) return inflateRawSync(data, { maxOutputLength: maxBytes });
    } catch {
      return null;
    }
    return null;
  }
  return null;
}

function readU16(bytes: Uint8Array, offset: number): number {
  return (bytes[offset] ?? 0) | ((bytes[offset + 1] ?? 0) << 8);
}

function readU32(bytes: Uint8Array, offset: number): number {
  return ((bytes[offset] ?? 0) | ((bytes[offset + 1] ?? 0) << 8) | ((bytes[offset + 2] ?? 0) << 16)) + (bytes[offset + 3] ?? 0) * 0x1000000;
}

/**
 * PostScript and EPS documents to PDF with Ghostscript's pdfwrite device, for the PDF renderer
 * to draw.
 *
 * `gs -dSAFER -dBATCH -dNOPAUSE -sDEVICE=pdfwrite` runs in a temp work dir (always removed) on
 * the input written as `document.ps` / `document.eps`, so the client's file name never reaches
 * the command line; EPS adds `-dEPSCrop` (the page is the bounding box, not a sheet of paper
 * with a small figure in a corner). -dSAFER (Ghostscript's default since 9.50, given anyway)
 * keeps the program from opening files other than its input, output and fonts, and from running
 * commands. The subprocess runs through run-converter.ts (its own process group, killed after
 * `limits.converterTimeoutMs`, no network where possible).
 *
 * PostScript is a program: it can loop forever, or print pages without end. The time limit ends
 * the first (document_unreadable, as for LibreOffice); `-dLastPage` stops writing after one page
 * more than `limits.maxPages`, so the second cannot fill the disk, and such a document fails with
 * document_too_large.
 *
 * Failures:
 * - gs not on PATH -> document_type_unavailable naming the Debian package ghostscript;
 * - Ghostscript cannot interpret the file (exit code 1, "Error: /undefined in ...", which it
 *   prints on stdout) -> document_unreadable with that first error line;
 * - no page -> document_unreadable.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatDurationMs } from "../../lib/durations.ts";
import { fileNameExtension } from "../document-types.ts";
import { DocumentRenderError, type DocumentInput, type RenderLimits } from "../pages/grey-page.ts";
import { converterAvailability, forgetConverterAvailability, missingConverterMessage } from "./converter-availability.ts";
import { ConverterStartError, runConverter, type ConverterResult } from "./run-converter.ts";

/** The extensions postscriptToPdf converts. */
export const GHOSTSCRIPT_EXTENSIONS: ReadonlySet<string> = new Set(["ps", "eps"]);

/** Converts a PostScript or EPS document to PDF; throws DocumentRenderError for one that cannot be. */
export async function postscriptToPdf(doc: DocumentInput, limits: RenderLimits, options: { signal?: AbortSignal } = {}): Promise<Uint8Array> {
  const extension = fileNameExtension(doc.name);
  if (extension === null || !GHOSTSCRIPT_EXTENSIONS.has(extension)) {
    throw new Error(`postscriptToPdf cannot convert ${doc.name}: Ghostscript converts .ps and .eps`);
  }
  const gs = converterAvailability().ghostscript;
  if (gs === null) throw new DocumentRenderError("document_type_unavailable", `${doc.name}: ${missingConverterMessage("postscript")}`);
  if (doc.bytes.length === 0) throw new DocumentRenderError("document_unreadable", `${doc.name} is empty`);

  const work = await mkdtemp(join(tmpdir(), "faxline-convert-"));
  try {
    const inputPath = join(work, `document.${extension}`);
    const outputPath = join(work, "document.pdf");
    await writeFile(inputPath, doc.bytes);
    let result: ConverterResult;
    try {
      result = await runConverter({
        executable: gs,
        args: [
          "-q",
          "-dSAFER",
          "-dBATCH",
          "-dNOPAUSE",
          "-sDEVICE=pdfwrite",
          ...(extension === "eps" ? ["-dEPSCrop"] : []),
          `-dLastPage=${limits.maxPages + 1}`,
          `-sOutputFile=${outputPath}`,
          "-f",
          inputPath,
        ],
        cwd: work,
        env: { HOME: work, TMPDIR: work },
        timeoutMs: limits.converterTimeoutMs,
        isolateNetwork: true,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
    } catch (err) {
      if (err instanceof ConverterStartError && (err.code === "ENOENT" || err.code === "EACCES")) {
        forgetConverterAvailability();
        throw new DocumentRenderError("document_type_unavailable", `${doc.name}: ${missingConverterMessage("postscript") ?? err.message}`);
      }
      throw err;
    }
    if (result.aborted) {
      const reason: unknown = options.signal?.reason;
      throw reason instanceof Error ? reason : new DOMException("The conversion was aborted", "AbortError");
    }
    if (result.timedOut) {
      throw new DocumentRenderError(
        "document_unreadable",
        `${doc.name} could not be converted: Ghostscript did not finish within ${formatDurationMs(limits.converterTimeoutMs)} ` +
          `(render.converterTimeout) and was stopped; the PostScript program may loop forever, or be too large or complex to convert in that time`,
      );
    }
    if (result.exitCode !== 0) {
      throw new DocumentRenderError("document_unreadable", `${doc.name} cannot be read as PostScript: ${ghostscriptFailure(result)}`);
    }
    const pdf = await readFile(outputPath).catch(() => null);
    const pageCount = pdf === null ? 0 : await countPages(pdf);
    if (pdf === null || pageCount === 0) throw new DocumentRenderError("document_unreadable", `${doc.name} has no pages (Ghostscript drew nothing)`);
    if (pageCount > limits.maxPages) {
      throw new DocumentRenderError("document_too_large", `${doc.name} has more than ${limits.maxPages} pages, the limit`);
    }
    return new Uint8Array(pdf.buffer, pdf.byteOffset, pdf.length);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Ghostscript's first error line ("Error: /undefined in foo"), or its exit, for a person. */
function ghostscriptFailure(result: ConverterResult): string {
  const lines = `${result.stdout}\n${result.stderr}`.split(/\r?\n/).map((line) => line.trim());
  const error = lines.find((line) => line.startsWith("Error:")) ?? lines.find((line) => line !== "" && !line.startsWith("GPL Ghostscript"));
  const exit = result.signal !== null ? `signal ${result.signal}` : `exit code ${result.exitCode}`;
  return error === undefined ? `Ghostscript failed with ${exit}` : `Ghostscript failed (${printable(error)})`;
}

/** The line without control characters and cut to 200 characters: it may quote the document. */
function printable(line: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = line.replace(/[\u0000-\u001f\u007f-\u009f]/g, "?");
  return clean.length > 200 ? `${clean.slice(0, 200)}...` : clean;
}

async function countPages(pdf: Uint8Array): Promise<number> {
  try {
    // pdf-lib loads on first use (about 0.2 s): only PostScript documents need it here.
    const { countPdfPages } = await import("./count-pdf-pages.ts");
    return await countPdfPages(pdf);
  } catch {
    return 0;
  }
}

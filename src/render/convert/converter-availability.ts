/**
 * Which document converters this node has: LibreOffice (office documents and HTML) and
 * Ghostscript (PostScript), found on PATH once and remembered.
 *
 * The API asks `missingConverterMessage` when a job is created, so that a document whose type
 * cannot be rendered on this node is refused at once (400 document_type_unavailable) with the
 * Debian package to install, instead of failing later in the render stage. The converters ask
 * the same question before they start (libreoffice-to-pdf.ts, ghostscript-to-pdf.ts).
 *
 * LibreOffice is found as `soffice` or `libreoffice`. The Debian "-nogui" packages install its
 * parts separately (Writer, Calc, Impress share one `soffice`), so for a given document the
 * module that imports it is checked as well, by its library in LibreOffice's program directory
 * (libswlo.so Writer, libsclo.so Calc, libsdlo.so plus the Impress filter registry for
 * Impress). An installation laid out differently is taken to have every module.
 *
 * The lookup reads the file system only (no subprocess) and is cached for the life of the
 * process; `forgetConverterAvailability` drops the cache (tests, or a package installed while
 * Faxline runs).
 */
import { accessSync, constants, existsSync, realpathSync, statSync } from "node:fs";
import { delimiter, dirname, isAbsolute, join } from "node:path";
import { fileNameExtension } from "../document-types.ts";

export interface ConverterAvailability {
  /** Absolute path of `soffice` (or `libreoffice`), or null. */
  libreoffice: string | null;
  /** Absolute path of `gs`, or null. */
  ghostscript: string | null;
}

/** The document kinds that need a converter, as document-types.ts names them. */
export type ConvertedDocumentType = "office" | "html" | "postscript";

/** A LibreOffice module and the Debian package that installs it. */
export type LibreOfficeModule = "writer" | "calc" | "impress";

const MODULE_PACKAGES: Readonly<Record<LibreOfficeModule, string>> = {
  writer: "libreoffice-writer-nogui",
  calc: "libreoffice-calc-nogui",
  impress: "libreoffice-impress-nogui",
};

const MODULE_LABELS: Readonly<Record<LibreOfficeModule, string>> = {
  writer: "Text documents",
  calc: "Spreadsheets",
  impress: "Presentations",
};

/** Which module imports each extension LibreOffice converts for Faxline. */
const MODULE_BY_EXTENSION: ReadonlyMap<string, LibreOfficeModule> = new Map<string, LibreOfficeModule>([
  ["doc", "writer"],
  ["docx", "writer"],
  ["odt", "writer"],
  ["rtf", "writer"],
  ["htm", "writer"],
  ["html", "writer"],
  ["xls", "calc"],
  ["xlsx", "calc"],
  ["ods", "calc"],
  ["ppt", "impress"],
  ["pptx", "impress"],
]);

/**
 * Files in LibreOffice's program directory (and relative to it) that show a module is installed;
 * any one of each list is enough. Impress's own library name differs between builds, so its
 * filter registry (written by libreoffice-impress-nogui) is checked as well.
 */
const MODULE_MARKERS: Readonly<Record<LibreOfficeModule, readonly string[]>> = {
  writer: ["libswlo.so"],
  calc: ["libsclo.so"],
  impress: ["../share/registry/impress.xcd", "../share/.registry/impress.xcd"],
};

let cachedAvailability: ConverterAvailability | null = null;
const cachedModules = new Map<LibreOfficeModule, boolean>();

/** The converters on this node (paths, or null where missing). Cached. */
export function converterAvailability(): ConverterAvailability {
  cachedAvailability ??= {
    libreoffice: findExecutable(["soffice", "libreoffice"]),
    ghostscript: findExecutable(["gs"]),
  };
  return cachedAvailability;
}

/** Drops the cached lookups; the next question looks at PATH again. */
export function forgetConverterAvailability(): void {
  cachedAvailability = null;
  cachedModules.clear();
}

/** The LibreOffice module that imports a document of this name, or null if LibreOffice does not convert it. */
export function libreOfficeModuleFor(documentName: string): LibreOfficeModule | null {
  const extension = fileNameExtension(documentName);
  return extension === null ? null : (MODULE_BY_EXTENSION.get(extension) ?? null);
}

/**
 * Why documents of `type` cannot be rendered on this node, as a sentence naming the Debian
 * package to install; null when they can. With `documentName`, an office document is also checked
 * for its LibreOffice module (a spreadsheet needs libreoffice-calc-nogui even where Writer is
 * installed); without it, "office" asks for LibreOffice itself.
 */
export function missingConverterMessage(type: ConvertedDocumentType, documentName?: string): string | null {
  const { libreoffice, ghostscript } = converterAvailability();
  switch (type) {
    case "postscript":
      return ghostscript === null
        ? "PostScript documents need Ghostscript, which is not installed on this Faxline node: install the Debian package ghostscript"
        : null;
    case "html":
      if (libreoffice === null) {
        return "HTML documents need LibreOffice, which is not installed on this Faxline node: install the Debian package libreoffice-writer-nogui";
      }
      return libreOfficeModuleInstalled(libreoffice, "writer")
        ? null
        : "HTML documents need LibreOffice Writer, which is not installed on this Faxline node: install the Debian package libreoffice-writer-nogui";
    case "office": {
      if (libreoffice === null) {
        return (
          "Office documents need LibreOffice, which is not installed on this Faxline node: install the Debian package " +
          "libreoffice-writer-nogui (and libreoffice-calc-nogui for spreadsheets, libreoffice-impress-nogui for presentations)"
        );
      }
      const module = documentName === undefined ? null : libreOfficeModuleFor(documentName);
      if (module === null || libreOfficeModuleInstalled(libreoffice, module)) return null;
      const extension = fileNameExtension(documentName ?? "") ?? "";
      return (
        `${MODULE_LABELS[module]} (.${extension}) need LibreOffice ${module[0]!.toUpperCase()}${module.slice(1)}, which is not installed ` +
        `on this Faxline node: install the Debian package ${MODULE_PACKAGES[module]}`
      );
    }
  }
}

/** Whether the LibreOffice installation of `soffice` has `module`. Cached. */
function libreOfficeModuleInstalled(soffice: string, module: LibreOfficeModule): boolean {
  let installed = cachedModules.get(module);
  if (installed === undefined) {
    installed = checkLibreOfficeModule(soffice, module);
    cachedModules.set(module, installed);
  }
  return installed;
}

function checkLibreOfficeModule(soffice: string, module: LibreOfficeModule): boolean {
  let programDir: string;
  try {
    programDir = dirname(realpathSync(soffice));
  } catch {
    return true;
  }
  // Only judge a layout we know: the program directory holds soffice.bin and Writer's library
  // or Calc's. Anything else (a wrapper script elsewhere, an unusual build) is given the benefit.
  const known = existsSync(join(programDir, "soffice.bin")) && Object.values(MODULE_MARKERS).some((markers) => markers.some((m) => existsSync(join(programDir, m))));
  if (!known) return true;
  return MODULE_MARKERS[module].some((marker) => existsSync(join(programDir, marker)));
}

/**
 * The first of `names` that is an executable regular file in a directory of PATH, as an absolute
 * path; null if none is. Relative PATH entries are ignored (they would depend on the working
 * directory).
 */
export function findExecutable(names: readonly string[], path: string = process.env.PATH ?? ""): string | null {
  const dirs = path.split(delimiter).filter((dir) => dir !== "" && isAbsolute(dir));
  for (const name of names) {
    for (const dir of dirs) {
      const candidate = join(dir, name);
      try {
        if (!statSync(candidate).isFile()) continue;
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // not here
      }
    }
  }
  return null;
}

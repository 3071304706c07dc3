/**
 * File names of fax-to-SFTP: the pattern a topic's delivery sets, its placeholders, and the
 * names it gives a received fax's document and metadata file. Pure; no I/O.
 *
 * A pattern is text of letters, digits, ".", "_" and "-" with placeholders in braces:
 *
 *   {id}        the received fax's id (FI + 20 letters and digits); every pattern must hold it,
 *               so that two faxes never get one name
 *   {called}    the number called, E.164 digits without "+" (4930123456780)
 *   {calling}   the caller's number, digits without "+"; "unknown" when withheld
 *   {topic}     the topic's name
 *   {date}      the day the fax was received, UTC, YYYYMMDD (20261129)
 *   {time}      the time it was received, UTC, HHMMSS (091403)
 *   {pages}     the number of pages
 *
 * The document gets `.pdf` or `.tif`, the metadata file `.json` or `.xml`. Every value put in is
 * reduced to the same safe characters (anything else becomes "_"), so a name never holds a path
 * separator, a "..", a control character or a character Windows or a mainframe's SFTP server
 * cannot take, and never starts with a dot. While a file is written it is named
 * `.<name>.part` (hidden from consumers that skip dot files, and without the final extension),
 * then renamed.
 */
export const DEFAULT_FILE_PATTERN = "{date}-{time}_{called}_{id}";
export const FILE_PLACEHOLDERS = ["id", "called", "calling", "topic", "date", "time", "pages"] as const;
export type FilePlaceholder = (typeof FILE_PLACEHOLDERS)[number];
const MAX_PATTERN_LENGTH = 120;
const SAFE = /^[A-Za-z0-9._-]*$/;

export class FilePatternError extends Error {}

/** Checks a pattern; returns it trimmed, or throws a FilePatternError that says what to change. */
export function checkFilePattern(pattern: string): string {
  const text = pattern.trim();
  if (text === "") throw new FilePatternError(`A file name pattern is needed, e.g. ${DEFAULT_FILE_PATTERN}`);
  if (text.length > MAX_PATTERN_LENGTH) throw new FilePatternError(`The file name pattern is ${text.length} characters long; at most ${MAX_PATTERN_LENGTH}`);
  const parts = text.split(/(\{[^{}]*\})/);
  let hasId = false;
  for (const part of parts) {
    if (part.startsWith("{") && part.endsWith("}")) {
      const name = part.slice(1, -1);
      if (!(FILE_PLACEHOLDERS as readonly string[]).includes(name)) {
        throw new FilePatternError(`The file name pattern has an unknown placeholder ${part}; use ${FILE_PLACEHOLDERS.map((p) => `{${p}}`).join(", ")}`);
      }
      if (name === "id") hasId = true;
    } else if (!SAFE.test(part)) {
      const bad = [...part].find((c) => !SAFE.test(c)) ?? part;
      throw new FilePatternError(`The file name pattern may hold only letters, digits, ".", "_", "-" and placeholders in braces, not ${JSON.stringify(bad)}`);
    }
  }
  if (!hasId) throw new FilePatternError("The file name pattern must hold {id}, so that two faxes never get the same name");
  if (text.startsWith(".")) throw new FilePatternError("The file name pattern must not start with a dot (hidden files are the ones still being written)");
  return text;
}

export interface FileNameFacts {
  id: string;
  calledNumber: string;
  callingNumber: string | null;
  topic: string;
  receivedAt: number;
  pages: number;
}

function safe(value: string): string {
  const cleaned = value.replace(/[^A-Za-z0-9._-]/g, "_").replace(/\.{2,}/g, "_");
  return cleaned === "" ? "_" : cleaned;
}

/** The base name (without extension) that a pattern gives a fax. */
export function expandFilePattern(pattern: string, fax: FileNameFacts): string {
  const at = new Date(fax.receivedAt).toISOString(); // 2026-11-29T09:14:03.000Z
  const values: Record<FilePlaceholder, string> = {
    id: fax.id,
    called: fax.calledNumber.replace(/^\+/, ""),
    calling: fax.callingNumber ? fax.callingNumber.replace(/^\+/, "") : "unknown",
    topic: fax.topic,
    date: at.slice(0, 10).replace(/-/g, ""),
    time: at.slice(11, 19).replace(/:/g, ""),
    pages: String(fax.pages),
  };
  const name = pattern.replace(/\{([a-z]+)\}/g, (whole, key: string) => ((FILE_PLACEHOLDERS as readonly string[]).includes(key) ? safe(values[key as FilePlaceholder]) : whole));
  // checkFilePattern keeps these out of a stored pattern; a value cannot bring them in.
  return name.replace(/^\.+/, "_").replace(/\.{2,}/g, "_");
}

export interface FaxFileNames {
  document: string;
  metadata: string;
}

export function faxFileNames(pattern: string, fax: FileNameFacts, documentFormat: "PDF" | "TIFF", metadataFormat: "JSON" | "XML"): FaxFileNames {
  const base = expandFilePattern(pattern, fax);
  return { document: `${base}.${documentFormat === "PDF" ? "pdf" : "tif"}`, metadata: `${base}.${metadataFormat === "JSON" ? "json" : "xml"}` };
}

/** The name a file has while it is written. */
export function partName(name: string): string {
  return `.${name}.part`;
}

/**
 * Checks a remote directory: "" (the login's directory), or a path of segments separated by
 * "/", absolute or relative to the login's directory; no "." or ".." segment, no backslash, no
 * control character. Returns it without a trailing "/".
 */
export function checkRemoteDirectory(directory: string): string {
  const text = directory.trim();
  if (text === "" || text === ".") return "";
  if (text.length > 400) throw new FilePatternError(`The directory is ${text.length} characters long; at most 400`);
  if (/[\u0000-\u001f\u007f\\]/.test(text)) throw new FilePatternError("The directory must not hold control characters or backslashes; separate its parts with /");
  const absolute = text.startsWith("/");
  const segments = text.split("/").filter((s) => s !== "");
  if (segments.length === 0) return "/";
  for (const s of segments) if (s === "." || s === "..") throw new FilePatternError(`The directory must not hold "${s}" as a part (give the path as the server shows it, e.g. /incoming/fax)`);
  return `${absolute ? "/" : ""}${segments.join("/")}`;
}

/** A file's path in a checked directory. */
export function remotePath(directory: string, name: string): string {
  if (directory === "") return name;
  return directory === "/" ? `/${name}` : `${directory}/${name}`;
}

/**
 * Where Faxline's code and files are, from source (tests and `node --import tsx`: this module is
 * src/lib/code-location.ts) and compiled alike (`npm run build`: an esbuild bundle, ADR 0012, in
 * which this module's code sits in some chunk of dist/, at a depth nobody should count on).
 *
 *  - `packageRoot`: the directory of Faxline's package.json (native/, packages/console/dist/).
 *  - `entryPath("render/fax-image/render-worker")`: the file that starts a separate entry of the
 *    code (a worker thread, the media process): src/…/render-worker.ts from source, the bundle's
 *    …/render-worker.js compiled. The bundle is the directory above this chunk holding
 *    `faxline-bundle.json`, which scripts/bundle.ts writes beside the entries.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The marker file at the top of a bundle (scripts/bundle.ts). */
export const BUNDLE_MARKER = "faxline-bundle.json";

const here = fileURLToPath(import.meta.url);

/** True when running from source through tsx, false in the bundle. */
export const runningFromSource = here.endsWith(".ts");

/** The nearest directory at or above `start` for which `test` holds. */
function findUp(start: string, test: (dir: string) => boolean, what: string): string {
  for (let dir = start; ; ) {
    if (test(dir)) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`${what} not found above ${start}: Faxline's files are not where they were installed`);
    dir = parent;
  }
}

function isFaxlinePackage(dir: string): boolean {
  const file = join(dir, "package.json");
  if (!existsSync(file)) return false;
  try {
    return (JSON.parse(readFileSync(file, "utf8")) as { name?: unknown }).name === "faxline";
  } catch {
    return false;
  }
}

let root: string | undefined;
let codeRoot: string | undefined;

/** The directory of Faxline's package.json. */
export function packageRoot(): string {
  root ??= findUp(dirname(here), isFaxlinePackage, "Faxline's package.json");
  return root;
}

/** src/ from source; the bundle's top directory compiled. */
function codeRootDir(): string {
  codeRoot ??= runningFromSource ? join(dirname(here), "..") : findUp(dirname(here), (dir) => existsSync(join(dir, BUNDLE_MARKER)), BUNDLE_MARKER);
  return codeRoot;
}

/** The file of an entry given as its path below src/ without extension, e.g. "line/media-host/media-host-process". */
export function entryPath(entry: string): string {
  return join(codeRootDir(), `${entry}${runningFromSource ? ".ts" : ".js"}`);
}

/**
 * Test support: the compiled Faxline, i.e. the esbuild bundle that `npm run build` writes to dist/
 * (scripts/bundle.ts, ADR 0012). Child-process tests run it, so that they test what users run:
 * the chunks, the entries of worker threads and media processes, the files found from the bundle.
 *
 * It is built afresh from the current source once per test process (about half a second), into
 * .faxline-test/bundle-PID/ below the repository (where src/lib/code-location.ts finds the package
 * root above it), never dist/, which may be stale while one works on the source; removed at exit.
 * Bundles left by test processes that died are removed when the next one builds.
 */
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { bundleFaxline } from "../../scripts/bundle.ts";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const BUNDLES = join(REPO_ROOT, ".faxline-test");
const OWN = join(BUNDLES, `bundle-${process.pid}`);

let built: Promise<string> | undefined;

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Removes the bundles of test processes that no longer run. */
function removeOrphans(): void {
  if (!existsSync(BUNDLES)) return;
  for (const name of readdirSync(BUNDLES)) {
    const pid = /^bundle-(\d+)$/.exec(name)?.[1];
    if (pid !== undefined && Number(pid) !== process.pid && !processExists(Number(pid))) rmSync(join(BUNDLES, name), { recursive: true, force: true });
  }
}

/** The compiled `faxline` command's entry (cli/main.js of this process's bundle), built on first use. */
export function compiledCli(): Promise<string> {
  built ??= (async () => {
    removeOrphans();
    mkdirSync(BUNDLES, { recursive: true });
    process.once("exit", () => rmSync(OWN, { recursive: true, force: true }));
    await bundleFaxline(OWN, { quiet: true });
    return join(OWN, "cli", "main.js");
  })();
  return built;
}

/**
 * The node options a compiled child runs with: none, as in production (source maps would cost an
 * idle node about 45 MiB; a stack trace names chunk files, whose code is not minified and carries
 * the source file names as comments).
 */
export const COMPILED_NODE_OPTIONS: readonly string[] = [];

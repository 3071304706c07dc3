/**
 * Starts a module of Faxline as a worker thread, under tsx (tests, `node --import tsx`) and
 * compiled (the dist/ bundle) alike.
 *
 * From source the entry is a .ts file. Node 20 does not start a .ts worker even with
 * `execArgv: ["--import", "tsx"]` (ERR_UNKNOWN_FILE_EXTENSION), so the worker is started from a
 * small evaluated script that registers tsx and then imports the entry. Compiled, the entry is
 * plain JavaScript and is started directly.
 */
import { pathToFileURL } from "node:url";
import { Worker, type WorkerOptions } from "node:worker_threads";
import { entryPath, runningFromSource } from "./code-location.ts";

/**
 * Starts `entry` (its path below src/ without extension: "render/fax-image/render-worker"; the
 * bundle has an entry of the same path, scripts/bundle.ts) as a worker thread.
 */
export function startWorkerThread(entry: string, options: Omit<WorkerOptions, "eval"> = {}): Worker {
  const file = entryPath(entry);
  if (runningFromSource) {
    return new Worker(
      `import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))})` +
        `.then((tsx) => { tsx.register(); return import(${JSON.stringify(pathToFileURL(file).href)}); })`,
      { ...options, eval: true },
    );
  }
  return new Worker(file, options);
}

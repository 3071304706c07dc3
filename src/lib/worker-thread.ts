/**
 * Starts a module of Faxline as a worker thread, under tsx (tests, `node --import tsx`) and
 * compiled (dist/) alike.
 *
 * Under tsx the calling module is a .ts file. Node 20 does not start a .ts worker even with
 * `execArgv: ["--import", "tsx"]` (ERR_UNKNOWN_FILE_EXTENSION), so the worker is started from a
 * small evaluated script that registers tsx and then imports the entry. Compiled, the entry is
 * plain JavaScript and is started directly.
 */
import { Worker, type WorkerOptions } from "node:worker_threads";

/**
 * Starts `entry` (a path relative to the calling module `here`, without extension: "./render-worker")
 * as a worker thread.
 */
export function startWorkerThread(here: string, entry: string, options: Omit<WorkerOptions, "eval"> = {}): Worker {
  if (here.endsWith(".ts")) {
    return new Worker(
      `import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))})` +
        `.then((tsx) => { tsx.register(); return import(${JSON.stringify(new URL(`${entry}.ts`, here).href)}); })`,
      { ...options, eval: true },
    );
  }
  return new Worker(new URL(`${entry}.js`, here), options);
}

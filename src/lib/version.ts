/** Faxline's version, from its package.json. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "./code-location.ts";

let cached: string | undefined;

export function faxlineVersion(): string {
  if (cached === undefined) {
    try {
      cached = (JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8")) as { version?: string }).version ?? "unknown";
    } catch {
      cached = "unknown";
    }
  }
  return cached;
}

/** Faxline's version, from package.json (two levels up from src/lib and from dist/lib). */
import { readFileSync } from "node:fs";

let cached: string | undefined;

export function faxlineVersion(): string {
  if (cached === undefined) {
    try {
      cached = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: string }).version ?? "unknown";
    } catch {
      cached = "unknown";
    }
  }
  return cached;
}

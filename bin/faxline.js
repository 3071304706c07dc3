#!/usr/bin/env node
// Entry point of the `faxline` command: runs the compiled CLI (npm run build writes dist/).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const compiled = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));
if (!existsSync(compiled)) {
  console.error("faxline: dist/ is missing; run `npm run build` in the Faxline directory first");
  process.exit(1);
}
const { runCli } = await import(compiled);
await runCli(process.argv.slice(2));

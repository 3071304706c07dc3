#!/usr/bin/env node
// Entry point of the `faxline` command: runs the compiled CLI (npm run build writes dist/).
import { existsSync } from "node:fs";
import module from "node:module";
import { fileURLToPath } from "node:url";

// Node 22.1 and later keep the compiled code of the modules on disk (in the system's temporary
// directory) for the next command; Node 20 has no such cache and skips this.
module.enableCompileCache?.();

// @napi-rs/canvas scans every system font directory when it loads (about 100 ms, a third of a
// one-page `faxline render` of a text); Faxline draws with fonts it registers by path and loads
// the system fonts only for a text with a character those lack (src/render/fonts/system-fonts.ts).
// Set here, before anything loads the package, and inherited by the render workers. A value
// already in the environment (an empty one loads them at start) is kept.
process.env.DISABLE_SYSTEM_FONTS_LOAD ??= "1";

const compiled = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));
if (!existsSync(compiled)) {
  console.error("faxline: dist/ is missing; run `npm run build` in the Faxline directory first");
  process.exit(1);
}
const { runCli } = await import(compiled);
await runCli(process.argv.slice(2));

/**
 * Builds the compiled Faxline (ADR 0012): one esbuild bundle of src/ and the pure-JavaScript
 * packages it uses, split into chunks so that each command and role loads only what it imports
 * (the lazy `await import(...)`s of the source stay lazy). Entries keep their path below src/:
 *
 *   cli/main.js                              the `faxline` command (bin/faxline.js runs it)
 *   render/fax-image/render-worker.js        a render worker thread
 *   render/page-helpers/page-helper-thread.js a page helper thread
 *   line/media-host/media-host-process.js    a media process
 *
 * and src/lib/code-location.ts finds them through the marker file written beside them. Packages
 * with native code or files of their own (a WebAssembly module, static assets, a package.json read
 * at run time) stay outside the bundle and load from node_modules.
 *
 *   node --import tsx scripts/bundle.ts [OUTDIR]     (default dist/; npm run build)
 */
import { existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { build } from "esbuild";
import { BUNDLE_MARKER } from "../src/lib/code-location.ts";

export const BUNDLE_ENTRIES = ["cli/main", "render/fax-image/render-worker", "render/page-helpers/page-helper-thread", "line/media-host/media-host-process"];

/** Loaded from node_modules, not bundled: native addons, packages that read their own files, and yaml (loaded lazily). */
export const BUNDLE_EXTERNAL = [
  "better-sqlite3",
  "sharp",
  "@napi-rs/canvas",
  "@hyzyla/pdfium",
  "pg-native",
  // Loads its optional native crypto binding (and cpu-features) by relative path when built.
  "ssh2",
  "@fastify/swagger-ui",
  "tsx",
  "tsx/*",
  // Required on first use (src/lib/yaml.ts): inside the bundle every command would compile it.
  "yaml",
];

const ROOT = resolve(import.meta.dirname, "..");

/**
 * Writes the bundle into `outdir`, which must lie inside the repository and be absent, empty, an
 * earlier bundle or dist/ (the build's own output, also as an older build left it); it is emptied
 * first, and no other directory is ever deleted.
 */
export async function bundleFaxline(outdir: string, options: { quiet?: boolean } = {}): Promise<void> {
  const inside = relative(ROOT, resolve(outdir));
  if (inside === "" || inside.startsWith("..") || resolve(outdir) !== resolve(ROOT, inside)) {
    throw new Error(`the bundle goes into a directory inside ${ROOT} (code-location.ts finds the package root above it), not ${outdir}`);
  }
  if (inside !== "dist" && existsSync(outdir) && readdirSync(outdir).length > 0 && !existsSync(join(outdir, BUNDLE_MARKER))) {
    throw new Error(`${outdir} holds files but no ${BUNDLE_MARKER}: not an earlier bundle, so it is left alone`);
  }
  rmSync(outdir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: BUNDLE_ENTRIES.map((entry) => `src/${entry}.ts`),
    outbase: "src",
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    chunkNames: "chunks/[name]-[hash]",
    external: BUNDLE_EXTERNAL,
    sourcemap: "linked",
    // CommonJS packages inside an ES module bundle still call require() for Node's own modules.
    banner: { js: "import { createRequire as __faxlineRequire } from 'node:module'; const require = __faxlineRequire(import.meta.url);" },
    logLevel: options.quiet === true ? "error" : "warning",
    // Not minified: a stack trace of an internal error stays readable without the source maps.
  });
  if (result.errors.length > 0) throw new Error(`bundling failed: ${result.errors.map((e) => e.text).join("; ")}`);
  writeFileSync(join(outdir, BUNDLE_MARKER), `${JSON.stringify({ entries: BUNDLE_ENTRIES.map((e) => `${e}.js`) }, null, 2)}\n`);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(ROOT, "scripts", "bundle.ts")) {
  await bundleFaxline(resolve(ROOT, process.argv[2] ?? "dist"));
}

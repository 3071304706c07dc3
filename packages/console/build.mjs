// Builds the console into dist/: one JavaScript and one CSS bundle with content hashes in
// their names (cached for a year by the node), and index.html naming them. No CDN, no inline
// script: the node's Content-Security-Policy allows only its own files.
import { build } from "esbuild";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(fileURLToPath(import.meta.url));
const dist = join(root, "dist");
rmSync(dist, { recursive: true, force: true });
mkdirSync(join(dist, "assets"), { recursive: true });

const result = await build({
  entryPoints: { app: join(root, "src/main.tsx"), styles: join(root, "src/styles.css") },
  bundle: true,
  minify: true,
  sourcemap: true,
  format: "esm",
  target: ["es2022", "chrome110", "firefox115", "safari16"],
  jsx: "automatic",
  jsxImportSource: "preact",
  entryNames: "[name]-[hash]",
  outdir: join(dist, "assets"),
  metafile: true,
  legalComments: "linked",
  logLevel: "warning",
});

const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
const js = outputs.find((p) => /^app-.*\.js$/.test(p));
const css = outputs.find((p) => /^styles-.*\.css$/.test(p));
if (!js || !css) throw new Error(`esbuild produced no app bundle or stylesheet: ${outputs.join(", ")}`);

writeFileSync(
  join(dist, "index.html"),
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>Faxline</title>
<link rel="icon" href="/console/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/console/assets/${css}">
<script type="module" src="/console/assets/${js}"></script>
</head>
<body>
<div id="app"><noscript>The Faxline console needs JavaScript. The REST API works without it: see /docs.</noscript></div>
</body>
</html>
`,
);
writeFileSync(
  join(dist, "favicon.svg"),
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#0b4f6c"/><path d="M8 9h16v3H11v4h10v3H11v6H8z" fill="#fff"/></svg>\n`,
);
console.log(`console: built ${js} and ${css} into ${dist}`);

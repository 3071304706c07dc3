/**
 * Serves the console's built files (packages/console/dist, made by `npm run build`) under
 * /console/. Files under assets/ carry a content hash in their names and are cached for a year;
 * every other path below /console/ is a page of the single-page application and gets index.html
 * (never cached), so a reload or a bookmarked link opens the right page.
 *
 * Headers: a Content-Security-Policy that allows only the console's own files and the node's own
 * API (no inline script, no other origin, no framing), nosniff, same-origin referrers.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join } from "node:path";
import type { FastifyInstance, FastifyReply } from "fastify";
import { ApiError } from "../errors/api-errors.ts";
import { packageRoot } from "../lib/code-location.ts";

/** packages/console/dist below Faxline's package root. */
export const CONSOLE_DIST = join(packageRoot(), "packages", "console", "dist");

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json; charset=utf-8",
  ".woff2": "font/woff2",
  ".map": "application/json; charset=utf-8",
};

const SECURITY_HEADERS = {
  "Content-Security-Policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "same-origin",
  "X-Frame-Options": "DENY",
};

interface StaticFile {
  body: Buffer;
  type: string;
}

function loadFiles(dir: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  const walk = (sub: string) => {
    for (const name of readdirSync(join(dir, sub))) {
      const rel = sub === "" ? name : `${sub}/${name}`;
      const full = join(dir, rel);
      if (statSync(full).isDirectory()) walk(rel);
      else files.set(rel, { body: readFileSync(full), type: TYPES[extname(name)] ?? "application/octet-stream" });
    }
  };
  walk("");
  return files;
}

export function registerStaticFiles(app: FastifyInstance, dist = CONSOLE_DIST): void {
  // Read once at start: the bundle is a few hundred KiB.
  const files = existsSync(join(dist, "index.html")) ? loadFiles(dist) : null;

  const send = (reply: FastifyReply, file: StaticFile, cache: string) =>
    reply.headers({ ...SECURITY_HEADERS, "Content-Type": file.type, "Cache-Control": cache }).send(file.body);

  app.get("/", { schema: { hide: true } }, async (_request, reply) => reply.redirect("/console/", 302));
  app.get("/console", { schema: { hide: true } }, async (_request, reply) => reply.redirect("/console/", 301));
  app.get("/console/*", { schema: { hide: true } }, async (request, reply) => {
    if (!files) {
      request.log.error({ dist }, "the console's files are not built: index.html is missing; run npm run build");
      throw new ApiError("service_unavailable", "The console's files are not built on this node; its operator runs npm run build");
    }
    const path = (request.params as { "*": string })["*"];
    if (path.startsWith("api/")) throw new ApiError("route_not_found", `No endpoint ${request.method} /console/${path.split("?")[0]}`);
    const asset = files.get(path);
    if (asset && path.startsWith("assets/")) return send(reply, asset, "public, max-age=31536000, immutable");
    if (asset && path !== "index.html") return send(reply, asset, "no-cache");
    // A missing asset is a 404, not the page: a stale index.html would otherwise load as script.
    if (path.startsWith("assets/")) throw new ApiError("route_not_found", `No console file ${path}`);
    return send(reply, files.get("index.html")!, "no-cache");
  });
}

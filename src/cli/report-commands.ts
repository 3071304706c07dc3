/**
 * `faxline report …`: the reporting interface from the command line (docs/reporting.md "CLI").
 *
 *   faxline report out|in --from DATE --to DATE [--filter COLUMN=V1,V2]... [--sort ASC|DESC]
 *   faxline report summary out|calls|in|failing --from DATE --to DATE [--group-by DAY,COUNTRY]
 *                  [--filter NAME=V1,V2]... [--limit N]
 *        both: [--format csv|json] [--out FILE] [--url URL] [--customer C] [--login L] [--password P]
 *   faxline report rebuild-rollups [--from DAY --to DAY]
 *
 * `out`, `in` and `summary` go through a running node's export downloads with
 * @faxline/client (FaxlineReports), streamed to standard output or --out FILE, as any client
 * would get them: the node, credentials and errors as for `faxline send`. `rebuild-rollups` works
 * on the store itself: without a range it counts what was never counted (the backfill a node's
 * retention role also does); with one it counts those UTC days again from the rows still there.
 */
import { createWriteStream } from "node:fs";
import { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { FaxlineApiError, FaxlineConnectionError, FaxlineReports, type ReportExportKind } from "../../packages/client/src/index.ts";
import type { FaxlineConfig } from "../config/schema.ts";
import type { Store } from "../store/store.ts";
import { DAY_MS, resetRollupDays, rollUpPending } from "../store/queries/report-rollups.ts";

export class ReportCommandError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 2) {
    super(message);
    this.name = "ReportCommandError";
    this.exitCode = exitCode;
  }
}

export interface ReportRequest {
  /** out | in | summary */
  what: string;
  /** For summary: out | calls | in | failing. */
  summary: string | undefined;
  from: string | undefined;
  to: string | undefined;
  format: string | undefined;
  out: string | undefined;
  filters: readonly string[];
  groupBy: string | undefined;
  sort: string | undefined;
  limit: string | undefined;
  url: string | null;
  custNr: string;
  login: string;
  password: string;
}

const SUMMARY_KINDS: Record<string, ReportExportKind> = {
  out: "fax-out/summary",
  calls: "fax-out/calls",
  in: "fax-in/summary",
  failing: "fax-out/failing-destinations",
};

function parseFilters(filters: readonly string[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const f of filters) {
    const eq = f.indexOf("=");
    if (eq <= 0) throw new ReportCommandError(`--filter ${JSON.stringify(f)}: write COLUMN=VALUE[,VALUE…], e.g. statusName=OK,BUSY`);
    out[f.slice(0, eq)] = f.slice(eq + 1).split(",").map((v) => v.trim()).filter((v) => v !== "");
  }
  return out;
}

/** Streams the report to standard output or a file; returns the exit code. */
export async function runReport(config: FaxlineConfig, req: ReportRequest, stdout: NodeJS.WritableStream = process.stdout): Promise<number> {
  const kind: ReportExportKind | undefined = req.what === "out" ? "fax-out/records" : req.what === "in" ? "fax-in/records" : req.what === "summary" ? SUMMARY_KINDS[req.summary ?? ""] : undefined;
  if (kind === undefined) throw new ReportCommandError(req.what === "summary" ? `faxline report summary needs out, calls, in or failing (not "${req.summary ?? ""}")` : `Unknown report "${req.what}" (faxline report out|in|summary|rebuild-rollups)`);
  if (!req.from || !req.to) throw new ReportCommandError("faxline report needs --from and --to (ISO dates or instants in UTC, e.g. --from 2026-11-01 --to 2026-12-01)");
  const format = (req.format ?? "csv").toLowerCase();
  if (format !== "csv" && format !== "json") throw new ReportCommandError(`--format must be csv or json, not "${req.format}"`);
  const baseUrl = (req.url ?? process.env.FAXLINE_API_URL ?? `http://127.0.0.1:${config.http.port}`).replace(/\/+$/, "");
  const reports = new FaxlineReports({ baseUrl, customerNumber: req.custNr, login: req.login, password: req.password });
  let body: ReadableStream<Uint8Array>;
  try {
    body = await reports.export(kind, {
      from: req.from,
      to: req.to,
      format,
      ...(req.sort ? { sort: req.sort.toUpperCase() as "ASC" | "DESC" } : {}),
      ...(req.groupBy ? { groupBy: req.groupBy.split(",").map((g) => g.trim().toUpperCase()) } : {}),
      ...(req.limit ? { limit: Number(req.limit) } : {}),
      filter: parseFilters(req.filters),
    });
  } catch (err) {
    if (err instanceof FaxlineApiError) throw new ReportCommandError(`The node refused the report (${err.status} ${err.code}): ${err.message}`);
    if (err instanceof FaxlineConnectionError) throw new ReportCommandError(err.message, 1);
    throw err;
  }
  const target: NodeJS.WritableStream = req.out ? createWriteStream(req.out) : stdout;
  // Standard output stays open after the report; a file is closed.
  const sink = req.out ? (target as Writable) : new Writable({ write: (chunk, _enc, done) => (target.write(chunk) ? done() : target.once("drain", () => done())) });
  await pipeline(Readable.fromWeb(body as import("node:stream/web").ReadableStream<Uint8Array>), sink);
  return 0;
}

/** `faxline report rebuild-rollups [--from DAY --to DAY]` on the store; prints what it counted. */
export async function rebuildRollups(store: Store, range: { from?: string | undefined; to?: string | undefined }, print: (line: string) => void): Promise<number> {
  if ((range.from === undefined) !== (range.to === undefined)) throw new ReportCommandError("rebuild-rollups needs both --from and --to, or neither");
  if (range.from !== undefined && range.to !== undefined) {
    const from = Date.parse(range.from);
    const to = Date.parse(range.to);
    if (!Number.isFinite(from) || !Number.isFinite(to) || from % DAY_MS !== 0 || to % DAY_MS !== 0 || to <= from) {
      throw new ReportCommandError("--from and --to must be UTC days (YYYY-MM-DD), --from before --to");
    }
    await resetRollupDays(store.db, from, to);
    print(`counting ${(to - from) / DAY_MS} days again from the rows still in the store (what a purge deleted from them is gone from their counts)`);
  }
  const total = { jobs: 0, calls: 0, faxes: 0, receptions: 0 };
  for (;;) {
    const n = await rollUpPending(store.db, 1000);
    total.jobs += n.jobs;
    total.calls += n.calls;
    total.faxes += n.faxes;
    total.receptions += n.receptions;
    if (n.jobs === 0 && n.receptions === 0) break;
  }
  print(`counted ${total.faxes} faxes and ${total.calls} calls of ${total.jobs} jobs, and ${total.receptions} receptions`);
  return 0;
}

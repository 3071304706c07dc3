/**
 * `faxline send FILE... --to NUMBER[,NUMBER...] [--url URL] [--customer CUSTNR] [--login LOGIN]
 * [--password PASSWORD] [--charset CHARSET] [--detach] [--json]`: sends a fax job through a running
 * node's REST API, exactly as a client would (POST /rest/v1/{custNr}/fax), then follows the job's
 * report and prints each recipient's progress (rendering, dialling, retries and when they are due)
 * until the job is final, and the final report.
 *
 * The node: --url, else FAXLINE_API_URL, else http://127.0.0.1:<http.port>. Credentials: the
 * options, else FAXLINE_API_CUSTOMER / FAXLINE_API_LOGIN / FAXLINE_API_PASSWORD. With --detach it
 * prints the job id and returns at once. Exit code 0 when every recipient was delivered (or, with
 * --detach, when the job was accepted), 1 when not, 2 for a request the node refused.
 *
 * Unlike `faxline fax send` (one call straight over the SIP line, no store), this goes through the
 * job engine: retries, alternative numbers, reports and notifications as for any client's job.
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import type { FaxlineConfig } from "../config/schema.ts";

export interface SendThroughNodeRequest {
  files: string[];
  to: string[];
  url: string | null;
  custNr: string;
  login: string;
  password: string;
  charset: string | null;
  detach: boolean;
  json: boolean;
  /** How often the report is read; tests shorten it. */
  pollMs?: number;
}

export class SendRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SendRequestError";
  }
}

interface RecipientReport {
  number: string;
  status: string;
  reason: string;
  sentTs?: string;
  durationInSecs?: number;
  remoteCsid?: string;
}
interface Report {
  jobId: string;
  pages: number;
  recipientStatus: RecipientReport[];
}

const PENDING = "PENDING";

/** A document name the contract accepts, from a file name ("Q3 Report (final).pdf" → "Q3_Report_final_.pdf"). */
export function documentNameFor(file: string): string {
  const base = basename(file);
  const dot = base.lastIndexOf(".");
  const ext = dot > 0 ? base.slice(dot).replace(/[^a-zA-Z0-9.]/g, "") : "";
  const stem = (dot > 0 ? base.slice(0, dot) : base).replace(/[^a-zA-Z0-9_-]+/g, "_") || "document";
  return `${stem.slice(0, Math.max(1, 32 - ext.length))}${ext}`.slice(0, 32);
}

export async function sendThroughNode(config: FaxlineConfig, req: SendThroughNodeRequest): Promise<number> {
  const base = (req.url ?? process.env.FAXLINE_API_URL ?? `http://127.0.0.1:${config.http.port}`).replace(/\/+$/, "");
  const auth = `Basic ${Buffer.from(`${req.login}:${req.password}`).toString("base64")}`;
  const documents = req.files.map((file) => {
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (err) {
      throw new SendRequestError(`Cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    return { name: documentNameFor(file), data: bytes.toString("base64"), ...(req.charset ? { charset: req.charset } : {}) };
  });
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    let res: Response;
    try {
      res = await fetch(`${base}/rest/v1/${encodeURIComponent(req.custNr)}${path}`, {
        method,
        headers: { authorization: auth, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new SendRequestError(`No Faxline node answers at ${base} (${cause?.code ?? cause?.message ?? (err as Error).message}); start one with \`faxline serve\` or name it with --url`);
    }
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text === "" ? null : JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed };
  };

  const log = (line: string) => {
    if (!req.json) console.log(line);
  };
  const sent = await call("POST", "/fax", { recipients: req.to.map((number) => ({ number })), documents });
  if (sent.status !== 201 && sent.status !== 200) {
    const message = typeof sent.body === "object" && sent.body !== null && "message" in sent.body ? String(sent.body.message) : JSON.stringify(sent.body);
    console.error(`faxline: the node refused the job (${sent.status}${sent.body?.error ? ` ${sent.body.error}` : ""}): ${message}`);
    return 2;
  }
  const jobId = String(sent.body.jobId);
  const startedAt = Date.now();
  const reportUrl = `${base}/rest/v1/${req.custNr}/fax/reports/${jobId}`;
  if (req.detach) {
    if (req.json) console.log(JSON.stringify({ jobId }));
    else console.log(`Accepted: job ${jobId}. Its report: ${reportUrl}`);
    return 0;
  }
  log(`Accepted: job ${jobId} for ${req.to.join(", ")}. Following its report (Ctrl-C stops following; the job goes on).`);

  const seen = new Map<string, string>();
  const pollMs = req.pollMs ?? 1000;
  for (;;) {
    const got = await call("GET", `/fax/reports/${jobId}`);
    if (got.status === 200) {
      const report = got.body as Report;
      const jobFinal = report.recipientStatus.every((r) => r.status !== PENDING);
      for (const [i, r] of report.recipientStatus.entries()) {
        const key = `${i}`;
        const line = `${r.status === PENDING ? "…" : r.status} ${r.reason}`;
        if (seen.get(key) !== line) {
          seen.set(key, line);
          if (r.status === PENDING) log(`[${elapsed(startedAt)}] ${r.number}: ${r.reason}`);
          // A recipient that is done while others go on (their retries may take hours): said now;
          // the summary below says it again once the whole job is final.
          else if (!jobFinal) log(`[${elapsed(startedAt)}] ${r.number}: ${r.status}${r.reason && r.reason !== r.status ? ` (${r.reason})` : ""}, final`);
        }
      }
      if (jobFinal) {
        if (req.json) console.log(JSON.stringify(report, null, 2));
        else {
          log(`[${elapsed(startedAt)}] job ${jobId} is final, ${report.pages} page${report.pages === 1 ? "" : "s"}:`);
          for (const r of report.recipientStatus) {
            const detail = [r.sentTs && `sent ${r.sentTs}`, r.durationInSecs !== undefined && `${r.durationInSecs} s on the line`, r.remoteCsid && `remote ${r.remoteCsid}`].filter(Boolean).join(", ");
            const reason = r.reason && r.reason !== r.status ? ` (${r.reason})` : "";
            log(`  ${r.number}: ${r.status}${reason}${detail ? `; ${detail}` : ""}`);
          }
        }
        return report.recipientStatus.every((r) => r.status === "OK") ? 0 : 1;
      }
    } else if (got.status !== 503) {
      console.error(`faxline: reading the report of ${jobId} failed (${got.status}): ${JSON.stringify(got.body)}`);
      return 1;
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

function elapsed(since: number): string {
  const s = Math.floor((Date.now() - since) / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

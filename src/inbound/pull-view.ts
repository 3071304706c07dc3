/**
 * The pull API's JSON (docs/inbound-api.md): a received fax as a result entry, and the `meta`
 * part with the `next` and `exit` URLs. No store or HTTP I/O here; the route builds the URLs'
 * base from the request.
 */
import { toIsoSeconds } from "../lib/clock.ts";
import type { ReceivedFaxRow } from "../store/database.ts";

export interface PullDocument {
  name: string;
  contentType: string;
  url: string;
}

/** A received fax's metadata: the pull API's result (with its documents), the web service notice, the console. */
export interface ReceivedFaxSummary {
  id: string;
  topic: string;
  receivedTs: string;
  calledNumber: string;
  callingNumber: string | null;
  remoteCsid: string | null;
  pages: number;
  status: string;
  durationInSecs: number;
  resolution: string | null;
}

type SummaryColumns = "id" | "topic" | "received_at" | "to_number" | "pages" | "status" | "duration_secs";
type OptionalColumns = "from_number" | "remote_csid" | "resolution";

export function receivedFaxSummary(
  row: Pick<ReceivedFaxRow, SummaryColumns> & Partial<Pick<ReceivedFaxRow, OptionalColumns>>,
): ReceivedFaxSummary {
  return {
    id: row.id,
    topic: row.topic,
    receivedTs: toIsoSeconds(Number(row.received_at)),
    calledNumber: row.to_number,
    callingNumber: row.from_number ?? null,
    remoteCsid: row.remote_csid ?? null,
    pages: row.pages,
    status: row.status,
    durationInSecs: row.duration_secs,
    resolution: row.resolution ?? null,
  };
}

export interface PullResult extends ReceivedFaxSummary {
  documents: PullDocument[];
}

export function pullResult(row: ReceivedFaxRow, filesBase: string): PullResult {
  return {
    ...receivedFaxSummary(row),
    documents:
      row.pages > 0
        ? [
            { name: `${row.id}.pdf`, contentType: "application/pdf", url: `${filesBase}/${row.id}.pdf` },
            { name: `${row.id}.tif`, contentType: "image/tiff", url: `${filesBase}/${row.id}.tif` },
          ]
        : [],
  };
}

/** `next`: fetch again and acknowledge these; `exit`: the same with fetch=0 (acknowledge only). */
export function pullMeta(topicUrl: string, args: { topic: string; fetch: number; timeoutSeconds: number; acknowledged: number; handedOut: readonly string[] }) {
  const query = (fetch: number) => {
    const params = new URLSearchParams({ fetch: String(fetch), timeout: String(args.timeoutSeconds) });
    if (args.handedOut.length > 0) params.set("ids", args.handedOut.join(","));
    return `${topicUrl}?${params.toString()}`;
  };
  return {
    topic: args.topic,
    fetch: args.fetch,
    timeout: args.timeoutSeconds,
    acknowledged: args.acknowledged,
    count: args.handedOut.length,
    next: query(args.fetch),
    exit: query(0),
  };
}

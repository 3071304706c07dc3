/**
 * The line interface: what a sender hands a transmission line, and what it gets back.
 *
 * A `Line` places one call: it dials `dialString`, transmits the rendered pages and returns an
 * `AttemptOutcome`. Outcomes are data, never exceptions: a busy line or a protocol failure is a
 * `failed` outcome with a failure reason from errors/failure-reasons.ts and the raw cause (SIP
 * response, Q.850 cause or SpanDSP `T30_ERR_*` name). A Line throws only for internal faults.
 *
 * Lines: `TestLine` (simulated, for test accounts: line/test-line.ts). The SIP/T.38 line of a
 * later issue implements the same interface.
 */
import type { FailureReasonCode } from "../errors/failure-reasons.ts";

export interface LinePage {
  /** CCITT G4 encoded size of the page in the job's fax image; with the bit rate it gives the page's line time. */
  encodedBytes: number;
}

export interface CallRequest {
  jobId: string;
  recipientId: string;
  /** 1 for the recipient's first attempt, over all of its numbers. */
  attemptNo: number;
  e164: string;
  dialString: string;
  /** Our fax id (TSI/CSID) sent to the far end. */
  csid: string;
  resolution: "HIGH" | "LOW";
  pages: readonly LinePage[];
}

export type AttemptOutcome =
  | {
      result: "delivered";
      pagesSent: number;
      durationSecs: number;
      remoteCsid: string;
      /** Bit rate the pages were sent at. */
      bitRate: number;
    }
  | {
      result: "failed";
      reasonCode: FailureReasonCode;
      pagesSent: number;
      durationSecs: number;
      remoteCsid: string | null;
      rawCause: string | null;
      /** False when no call was placed (do-not-fax list, no line): the report then shows no sentTs. */
      dialled?: boolean;
    };

export interface Line {
  readonly name: string;
  /** Places one call. `signal` aborts it (node shutting down, lease lost); the promise then rejects. */
  call(request: CallRequest, signal: AbortSignal): Promise<AttemptOutcome>;
}

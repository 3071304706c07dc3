/**
 * The line interface: what a sender hands a transmission line, and what it gets back.
 *
 * A `Line` places one call: it dials `dialString`, transmits the rendered pages and returns an
 * `AttemptOutcome`. Outcomes are data, never exceptions: a busy line or a protocol failure is a
 * `failed` outcome with a failure reason from errors/failure-reasons.ts and the raw cause (SIP
 * response, Q.850 cause or SpanDSP `T30_ERR_*` name). A Line throws only for internal faults.
 *
 * Lines: `TestLine` (simulated, for test accounts: line/test-line.ts) and `SipFaxLine` (real
 * calls over the SIP trunks, T.38 or G.711, with SpanDSP: line/sip-fax-line/).
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
  /** The dial string stored at intake (00-style); a SIP line dials its trunk's own dial string instead. */
  dialString: string;
  /** Our fax id (TSI/CSID) sent to the far end: the job's, else the node's `sender.csid`. */
  csid: string;
  /** The job's own CSID, null when it names none: a SIP line then uses its trunk's `csid`, else `csid`. (Default: null) */
  jobCsid?: string | null;
  resolution: "HIGH" | "LOW";
  pages: readonly LinePage[];
  /**
   * Loads the recipient's fax image (TIFF-F, the bytes of its `fax_images` row). Real lines need
   * it; the test line does not call it. Absent: the line has no image and fails the attempt.
   */
  loadImage?: () => Promise<Uint8Array>;
}

export type AttemptTransport = "t38" | "g711" | "test";

export type AttemptOutcome =
  | {
      result: "delivered";
      pagesSent: number;
      durationSecs: number;
      remoteCsid: string;
      /** Bit rate the pages were sent at. */
      bitRate: number;
      /** The number actually dialled (the trunk's dial string): the report's sentToNumber. Absent: the stored dial string. */
      sentToNumber?: string;
      /** What carried the fax: t38, g711, or test (the simulated test line). Absent: not known. */
      transport?: AttemptTransport;
      /** The SIP trunk the call went out on; absent: the test line. */
      trunk?: string;
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
      /** The number actually dialled, as for a delivered outcome. */
      sentToNumber?: string;
      /** What carried the fax when the call ended; absent when no fax exchange began. */
      transport?: AttemptTransport;
      /** The SIP trunk the call went out on; absent: the test line, or no call was placed. */
      trunk?: string;
    };

/** A call running on a line: the trunk it went out on and what carries the fax (as planned when it started). */
export interface RunningCallInfo {
  trunk: string;
  transport: string;
}

export interface Line {
  readonly name: string;
  /** Places one call. `signal` aborts it (node shutting down, lease lost); the promise then rejects. */
  call(request: CallRequest, signal: AbortSignal): Promise<AttemptOutcome>;
  /** The calls running now, for metrics and the node's heartbeat. */
  runningCalls(): RunningCallInfo[];
}

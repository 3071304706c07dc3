/**
 * Test numbers: deterministic outcomes of the simulated test line, one per status the contract
 * names and a few sequences (fails first, then succeeds). Any number not listed here is
 * delivered. docs/test-numbers.md is generated from this table (`faxline test-numbers`), and a
 * test checks that the doc and the table agree.
 *
 * The scheme: +49 0000 000NN. `+4900000000` answers REM_DIS on every attempt, which is exactly
 * what the provider's own test accounts were seen to report for it.
 */
import type { FailureReasonCode } from "../errors/failure-reasons.ts";

/** What one simulated call does. */
export type TestCallScript =
  | { kind: "deliver" }
  | { kind: "fail"; reasonCode: FailureReasonCode; rawCause: string; answered: boolean; secondsBeforeFailure: number }
  /** Sends about half of the pages (at least one unless the job has one page), then fails. */
  | { kind: "partial"; reasonCode: FailureReasonCode; rawCause: string };

export interface TestNumber {
  number: string;
  status: string;
  reason: FailureReasonCode | "delivered";
  description: string;
  /** The script of the attempt with the given 1-based number (over all attempts of the recipient). */
  script(attemptNo: number): TestCallScript;
}

const deliver: TestCallScript = { kind: "deliver" };
const busy: TestCallScript = { kind: "fail", reasonCode: "line_busy", rawCause: "SIP 486 Busy Here (Q.850 cause 17 user busy)", answered: false, secondsBeforeFailure: 4 };
const ringTimeout: TestCallScript = { kind: "fail", reasonCode: "no_answer", rawCause: "CANCEL after 55 s of ringing (SIP 487 Request Terminated)", answered: false, secondsBeforeFailure: 58 };

export const TEST_NUMBERS: readonly TestNumber[] = [
  {
    number: "+4900000000",
    status: "REM_DIS",
    reason: "remote_disconnect",
    description: "Remote disconnect during the first page, on every attempt (as the provider's test accounts report)",
    script: () => ({ kind: "partial", reasonCode: "remote_disconnect", rawCause: "T30_ERR_CALLDROPPED: the call dropped prematurely" }),
  },
  {
    number: "+4900000001",
    status: "BUSY",
    reason: "line_busy",
    description: "Busy on every attempt; retried on the busy schedule, then BUSY",
    script: () => busy,
  },
  {
    number: "+4900000002",
    status: "NOFAX",
    reason: "not_a_fax",
    description: "Answered by a person: no fax tones; retried on the no-fax schedule, then NOFAX",
    script: () => ({ kind: "fail", reasonCode: "not_a_fax", rawCause: "voice answer, no CED or V.21 flags (T30_ERR_T0_EXPIRED)", answered: true, secondsBeforeFailure: 40 }),
  },
  {
    number: "+4900000003",
    status: "NOFAX_DIS",
    reason: "fax_disconnected",
    description: "The remote fax sends DCN before the transfer starts, on every attempt",
    script: () => ({ kind: "fail", reasonCode: "fax_disconnected", rawCause: "T30_ERR_TX_GOTDCN: received a DCN while waiting for a DIS", answered: true, secondsBeforeFailure: 12 }),
  },
  {
    number: "+4900000004",
    status: "NOFAX_TO",
    reason: "fax_timeout",
    description: "Answered, then silence: no fax signal within T0, on every attempt",
    script: () => ({ kind: "fail", reasonCode: "fax_timeout", rawCause: "T30_ERR_T0_EXPIRED: timed out waiting for initial communication", answered: true, secondsBeforeFailure: 62 }),
  },
  {
    number: "+4900000005",
    status: "RING_TO",
    reason: "no_answer",
    description: "Rings without answer on every attempt",
    script: () => ringTimeout,
  },
  {
    number: "+4900000006",
    status: "INCOMPLETE",
    reason: "partial_transmission",
    description: "Half of the pages are confirmed, then the receiver gives up (RTN, DCN), on every attempt",
    script: () => ({ kind: "partial", reasonCode: "partial_transmission", rawCause: "T30_ERR_RETRYDCN: disconnected after permitted retries" }),
  },
  {
    number: "+4900000007",
    status: "OK",
    reason: "delivered",
    description: "No answer on the first attempt, delivered on the retry",
    script: (n) => (n <= 1 ? ringTimeout : deliver),
  },
  {
    number: "+4900000008",
    status: "OK",
    reason: "delivered",
    description: "Busy on the first two attempts, delivered on the third",
    script: (n) => (n <= 2 ? busy : deliver),
  },
  {
    number: "+4900000009",
    status: "WRONG_NUMBER",
    reason: "invalid_number",
    description: "Unallocated number: fails at once and is not retried",
    script: () => ({ kind: "fail", reasonCode: "invalid_number", rawCause: "SIP 404 Not Found (Q.850 cause 1 unallocated number)", answered: false, secondsBeforeFailure: 2 }),
  },
  {
    number: "+4900000010",
    status: "LINE_ERROR",
    reason: "call_failed",
    description: "The carrier refuses the call on every attempt (SIP 503)",
    script: () => ({ kind: "fail", reasonCode: "call_failed", rawCause: "SIP 503 Service Unavailable", answered: false, secondsBeforeFailure: 1 }),
  },
  {
    number: "+4900000020",
    status: "OK",
    reason: "delivered",
    description: "Delivered at 14 400 bit/s (as is every number not listed)",
    script: () => deliver,
  },
];

const BY_NUMBER = new Map(TEST_NUMBERS.map((t) => [t.number, t]));

export function testNumberFor(e164: string): TestNumber | undefined {
  return BY_NUMBER.get(e164);
}

/** The `faxline test-numbers --json` view. */
export function testNumbersForDisplay(): { number: string; status: string; reason: string; description: string }[] {
  return TEST_NUMBERS.map(({ number, status, reason, description }) => ({ number, status, reason, description }));
}

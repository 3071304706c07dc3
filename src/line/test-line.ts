/**
 * The test line: simulates calls for test accounts, with the timing of a real fax call and the
 * outcome the test number table (line/test-numbers.ts) prescribes. It never reaches a network.
 *
 * Simulated time of a delivered call:
 *   call set-up and two rings        6 s
 *   phase B (DIS/DCS, TCF, CFR)      7 s
 *   each page: bytes × 8 / 14 400 s  + 2.5 s for end-of-page and MCF
 *   phase E (DCN)                    1 s
 * A one-page text letter (~30 KB at 204x196) takes about 33 s, a typical figure for V.17.
 * `timeScale` shrinks the wall-clock wait (0.001 in tests); the reported duration stays the
 * simulated one, so reports look like real ones.
 */
import type { Clock } from "../lib/clock.ts";
import type { AttemptOutcome, CallRequest, Line, RunningCallInfo } from "./line.ts";
import { testNumberFor, type TestCallScript } from "./test-numbers.ts";

export const TEST_LINE_BIT_RATE = 14_400;
const SETUP_SECONDS = 6;
const PHASE_B_SECONDS = 7;
const PER_PAGE_OVERHEAD_SECONDS = 2.5;
const PHASE_E_SECONDS = 1;

export function pageSeconds(encodedBytes: number): number {
  return (encodedBytes * 8) / TEST_LINE_BIT_RATE + PER_PAGE_OVERHEAD_SECONDS;
}

export class TestLine implements Line {
  readonly name = "test";
  readonly #clock: Clock;
  readonly #timeScale: number;

  constructor(options: { clock: Clock; timeScale: number }) {
    this.#clock = options.clock;
    this.#timeScale = options.timeScale;
  }

  #running = 0;

  runningCalls(): RunningCallInfo[] {
    return Array.from({ length: this.#running }, () => ({ trunk: "test", transport: "test" }));
  }

  async call(request: CallRequest, signal: AbortSignal): Promise<AttemptOutcome> {
    this.#running += 1;
    try {
      return await this.#call(request, signal);
    } finally {
      this.#running -= 1;
    }
  }

  async #call(request: CallRequest, signal: AbortSignal): Promise<AttemptOutcome> {
    const script: TestCallScript = testNumberFor(request.e164)?.script(request.attemptNo) ?? { kind: "deliver" };
    const remoteCsid = request.e164;
    switch (script.kind) {
      case "deliver": {
        const seconds =
          SETUP_SECONDS + PHASE_B_SECONDS + request.pages.reduce((s, p) => s + pageSeconds(p.encodedBytes), 0) + PHASE_E_SECONDS;
        await this.#wait(seconds, signal);
        return { result: "delivered", pagesSent: request.pages.length, durationSecs: Math.round(seconds), remoteCsid, bitRate: TEST_LINE_BIT_RATE, transport: "test" };
      }
      case "fail": {
        await this.#wait(script.secondsBeforeFailure, signal);
        return {
          result: "failed",
          reasonCode: script.reasonCode,
          pagesSent: 0,
          durationSecs: script.answered ? Math.round(script.secondsBeforeFailure) : 0,
          remoteCsid: null,
          rawCause: script.rawCause,
          ...(script.answered ? { transport: "test" as const } : {}),
        };
      }
      case "partial": {
        const confirmed = request.pages.length <= 1 ? 0 : Math.ceil(request.pages.length / 2);
        const sentPages = request.pages.slice(0, confirmed);
        // The failing page is half sent when the remote end gives up.
        const failingPage = request.pages[confirmed];
        const seconds =
          SETUP_SECONDS +
          PHASE_B_SECONDS +
          sentPages.reduce((s, p) => s + pageSeconds(p.encodedBytes), 0) +
          (failingPage ? pageSeconds(failingPage.encodedBytes) / 2 : 0);
        await this.#wait(seconds, signal);
        return {
          result: "failed",
          reasonCode: script.reasonCode,
          pagesSent: confirmed,
          durationSecs: Math.round(seconds),
          remoteCsid,
          rawCause: script.rawCause,
          transport: "test",
        };
      }
    }
  }

  #wait(simulatedSeconds: number, signal: AbortSignal): Promise<void> {
    return this.#clock.sleep(simulatedSeconds * 1000 * this.#timeScale, signal);
  }
}

/**
 * The media runner's half of the reception spool (reception-spool.ts): it makes each received
 * page durable before the receiver's answer to it (MCF) goes out.
 *
 * SpanDSP writes a page into the TIFF when the sender's post-page command (MPS, EOP, EOM) has
 * come and the page is good, in the same engine call that reports phase D and queues the MCF.
 * The session runners (run-t38-session.ts, run-audio-session.ts) ask `pageEnded` at every phase
 * D event and hold what the engine gives them to send until its promise settles: the TIFF is
 * fsynced, its new page checked whole on disk (tiff-pages.ts), and `progress.json` written
 * durably with the new count. All of it runs on libuv's thread pool (fs promises), so no media
 * tick waits for the disk. A page that cannot be made durable (the disk full, an I/O error)
 * rejects with `PageSpoolError`: its MCF is never sent and the runner ends the session.
 */
import { open } from "node:fs/promises";
import type { PhaseEEvent, TransferStatistics } from "../fax-engine/engine.ts";
import { writeJsonDurably, type ReceptionProgress } from "./reception-spool.ts";
import { wholePagesOfFile } from "./tiff-pages.ts";

/** A received page could not be made durable; the call must end without confirming it. */
export class PageSpoolError extends Error {
  constructor(message: string, readonly code: string | null) {
    super(message);
    this.name = "PageSpoolError";
  }
}

export class PageSpool {
  readonly #tiffPath: string;
  readonly #progressPath: string;
  readonly #now: () => number;
  readonly #transport: "t38" | "g711";
  #confirmed = 0;
  #progress: ReceptionProgress | null = null;
  #chain: Promise<void> = Promise.resolve();
  #failure: PageSpoolError | null = null;

  constructor(options: { tiffPath: string; progressPath: string; transport: "t38" | "g711"; now?: () => number }) {
    this.#transport = options.transport;
    this.#tiffPath = options.tiffPath;
    this.#progressPath = options.progressPath;
    this.#now = options.now ?? Date.now;
  }

  /** Pages whole on disk and recorded in progress.json. */
  get confirmed(): number {
    return this.#confirmed;
  }

  /** Why a page could not be kept; null while all went well. */
  get failure(): PageSpoolError | null {
    return this.#failure;
  }

  /**
   * At a phase D event, with the session's statistics then: when a new page arrived, a promise
   * that resolves once it is durable (hold the engine's output until then); else null.
   */
  pageEnded(statistics: TransferStatistics): Promise<void> | null {
    if (this.#failure !== null) return Promise.reject(this.#failure);
    const pages = statistics.pagesRx;
    if (pages <= this.#confirmed) return null;
    const progress = progressOf(statistics, pages, this.#transport, this.#now());
    const step = this.#chain.then(() => this.#confirm(progress));
    this.#chain = step.catch(() => undefined);
    return step;
  }

  /** At phase E: records its completion code (an OK fax is then stored as OK after a crash). */
  phaseE(event: PhaseEEvent, statistics: TransferStatistics): Promise<void> {
    const step = this.#chain.then(async () => {
      if (this.#failure !== null) return;
      const last = this.#progress ?? progressOf(statistics, this.#confirmed, this.#transport, this.#now());
      await this.#write({ ...last, pages: this.#confirmed, completion: event.name, updatedAt: this.#now() });
    });
    this.#chain = step.catch(() => undefined);
    return step;
  }

  /** Resolves when every write asked for so far has ended (well or not). */
  settled(): Promise<void> {
    return this.#chain;
  }

  async #confirm(progress: ReceptionProgress): Promise<void> {
    if (this.#failure !== null) throw this.#failure;
    try {
      const handle = await open(this.#tiffPath, "r");
      try {
        await handle.datasync();
        const whole = await wholePagesOfFile(handle, progress.pages);
        if (whole.pages < progress.pages) {
          throw new PageSpoolError(`page ${progress.pages} is not whole in the spool file (${whole.stoppedBecause ?? "its directory is missing"}): the engine could not write it (is the disk full?)`, null);
        }
      } finally {
        await handle.close();
      }
      await this.#write(progress);
      this.#confirmed = progress.pages;
    } catch (error) {
      const failure =
        error instanceof PageSpoolError
          ? error
          : new PageSpoolError(`page ${progress.pages} could not be kept on the node's disk: ${(error as Error).message}`, (error as NodeJS.ErrnoException).code ?? null);
      this.#failure = failure;
      throw failure;
    }
  }

  async #write(progress: ReceptionProgress): Promise<void> {
    await writeJsonDurably(this.#progressPath, progress);
    this.#progress = progress;
  }
}

function progressOf(statistics: TransferStatistics, pages: number, transport: "t38" | "g711", now: number): ReceptionProgress {
  return {
    pages,
    transport,
    remoteCsid: statistics.remoteIdent !== "" ? statistics.remoteIdent : null,
    yDpi: statistics.yDpi,
    bitRate: statistics.bitRate,
    ecm: statistics.ecm,
    encoding: statistics.encoding === "none" || statistics.encoding === "unknown" ? null : statistics.encoding,
    completion: null,
    updatedAt: now,
  };
}

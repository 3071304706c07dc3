import pino, { type Logger } from "pino";

export type { Logger };

export function createLogger(options: { level: string; name?: string }): Logger {
  return pino({
    level: options.level,
    name: options.name ?? "faxline",
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}

/** The parts of pino's standard output stream (sonic-boom) that flushLogs looks at. */
interface LogStream {
  _writing?: boolean;
  _len?: number;
  flushSync?: () => void;
  once?(event: "drain" | "error", listener: () => void): unknown;
  off?(event: "drain" | "error", listener: () => void): unknown;
}

/**
 * Waits until the logger's lines have been written (at most `timeoutMs`); call it before
 * process.exit. The log library writes what is left at exit synchronously, and retries that
 * write for ever when standard output is a pipe whose reader has gone (EPIPE: `faxline serve |
 * head`, a log shipper that died): a process that exited with lines pending would never end.
 * Written asynchronously, the same lines meet the broken pipe as an error, after which the
 * library stops writing; and a stream still stuck after `timeoutMs` is not written at exit.
 */
export function flushLogs(logger: Logger, timeoutMs = 1_000): Promise<void> {
  const stream = (logger as unknown as Record<symbol, LogStream | undefined>)[pino.symbols.streamSym];
  if (stream === undefined || typeof stream.once !== "function" || typeof stream.off !== "function") return Promise.resolve();
  if (!stream._writing && (stream._len ?? 0) === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      stream.off!("drain", done);
      stream.off!("error", done);
      resolve();
    };
    const timer = setTimeout(() => {
      // Still writing: standard output is stuck, not only slow. The lines left are dropped.
      stream.flushSync = () => {};
      done();
    }, timeoutMs);
    stream.once!("drain", done);
    stream.once!("error", done);
  });
}

/** A logger that drops everything, for tests that do not look at logs. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}

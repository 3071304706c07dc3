/**
 * postgres.js's errors, read (https://www.postgresql.org/docs/current/errcodes-appendix.html).
 *
 * Unavailable (the API answers 503, roles retry):
 *  - no connection: the socket errors of Node (ECONNREFUSED, ECONNRESET, ETIMEDOUT, …) and
 *    postgres.js's own (CONNECTION_CLOSED, CONNECTION_ENDED, CONNECTION_DESTROYED,
 *    CONNECT_TIMEOUT);
 *  - SQLSTATE class 08 (connection exception), 57P01/57P02/57P03 (the server is shutting down,
 *    crashed or still starting), 53300 (too many connections), 25006 (a read-only transaction:
 *    we reached a standby, e.g. just after a failover), 57014 (statement timeout), 40001 and
 *    40P01 (serialization failure, deadlock: the transaction may simply be run again), 55P03
 *    (lock not available).
 */
import type { StoreFaults } from "../../store.ts";

const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EPIPE",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
]);
const UNAVAILABLE_SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300", "25006", "57014", "40001", "40P01", "55P03"]);

function codes(err: unknown): string[] {
  const out: string[] = [];
  let e = err as { code?: unknown; cause?: unknown; errors?: unknown } | undefined;
  for (let depth = 0; e && typeof e === "object" && depth < 5; depth++) {
    if (typeof e.code === "string") out.push(e.code);
    if (Array.isArray(e.errors)) for (const inner of e.errors) out.push(...codes(inner));
    e = e.cause as typeof e;
  }
  return out;
}

export const postgresFaults: StoreFaults = {
  isUnavailable(err) {
    return codes(err).some((code) => SOCKET_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code));
  },
  isUniqueViolation(err) {
    return codes(err).includes("23505");
  },
};

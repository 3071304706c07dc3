/**
 * node-postgres's errors, read (https://www.postgresql.org/docs/current/errcodes-appendix.html).
 *
 * Unavailable (the API answers 503, roles retry):
 *  - no connection: the socket errors of Node (ECONNREFUSED, ECONNRESET, ETIMEDOUT, …), pg's
 *    own messages without a code ("Connection terminated unexpectedly", "timeout expired",
 *    "Client has encountered a connection error and is not queryable", "Query read timeout": no
 *    answer within statement_timeout + 5 s), and no server of the
 *    kind store.url asks for (WrongServerError, e.g. only standbys during a failover);
 *  - every pooled connection busy for store.connectTimeout (pg-pool's "timeout exceeded when
 *    trying to connect"; the host selector does not move for it);
 *  - SQLSTATE class 08 (connection exception), 57P01/57P02/57P03 (the server is shutting down,
 *    crashed or still starting), 53300 (too many connections), 25006 (a read-only transaction:
 *    we reached a standby, e.g. just after a failover), 57014 (statement timeout), 40001 and
 *    40P01 (serialization failure, deadlock: the transaction may simply be run again), 55P03
 *    (lock not available).
 */
import type { StoreFaults } from "../../store.ts";

const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ECONNABORTED", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "EPIPE"]);
const UNAVAILABLE_SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300", "25006", "57014", "40001", "40P01", "55P03"]);
const LOST_CONNECTION_MESSAGES = /Connection terminated|timeout expired|not queryable|Client was closed|Query read timeout|the database system is (starting up|shutting down)/i;

function errorsOf(err: unknown): { code?: unknown; message?: unknown }[] {
  const out: { code?: unknown; message?: unknown }[] = [];
  let e = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown } | undefined;
  for (let depth = 0; e && typeof e === "object" && depth < 5; depth++) {
    out.push(e);
    if (Array.isArray(e.errors)) for (const inner of e.errors) out.push(...errorsOf(inner));
    e = e.cause as typeof e;
  }
  return out;
}

/** The connection (or every host of store.url) is unreachable or was lost. */
export function isConnectionLost(err: unknown): boolean {
  return errorsOf(err).some((e) => {
    if (typeof e.code === "string") return SOCKET_CODES.has(e.code) || /^08[0-9A-Z]{3}$/.test(e.code) || e.code === "57P01" || e.code === "57P02" || e.code === "57P03";
    return typeof e.message === "string" && LOST_CONNECTION_MESSAGES.test(e.message);
  });
}

/** Every connection of the pool is busy (pg-pool waited store.connectTimeout for one). */
const POOL_EXHAUSTED = /timeout exceeded when trying to connect/i;

export const postgresFaults: StoreFaults = {
  isUnavailable(err) {
    return (
      isConnectionLost(err) ||
      errorsOf(err).some((e) => (typeof e.code === "string" && UNAVAILABLE_SQLSTATES.has(e.code)) || (typeof e.message === "string" && POOL_EXHAUSTED.test(e.message)))
    );
  },
  isUniqueViolation(err) {
    return errorsOf(err).some((e) => e.code === "23505");
  },
};

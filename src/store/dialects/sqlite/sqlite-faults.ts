/**
 * better-sqlite3's errors, read. SQLITE_BUSY and SQLITE_LOCKED (another process holds the
 * file's write lock beyond busy_timeout), SQLITE_FULL and SQLITE_IOERR (the disk) are passing
 * conditions: the API answers 503 and roles retry. Constraint codes name refused writes.
 */
import type { StoreFaults } from "../../store.ts";

function sqliteCode(err: unknown): string {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === "string" && e.code.startsWith("SQLITE_")) return e.code;
  }
  return "";
}

export const sqliteFaults: StoreFaults = {
  isUnavailable(err) {
    const code = sqliteCode(err);
    return /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|PROTOCOL)/.test(code);
  },
  isUniqueViolation(err) {
    const code = sqliteCode(err);
    return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY";
  },
};

/**
 * Internal errors: bugs, broken invariants and infrastructure faults. They are thrown, logged
 * with context and, when nothing can handle them, crash the process so that a supervisor
 * restarts it (and leases let another node carry on). Clients only ever see a generic 500.
 *
 * Each "should never happen" site passes a unique, searchable id.
 */
export class InternalError extends Error {
  readonly id: string;
  constructor(id: string, message: string, options?: { cause?: unknown }) {
    super(`[${id}] ${message}`, options);
    this.name = "InternalError";
    this.id = id;
  }
}

export function assertInvariant(condition: unknown, id: string, message: string): asserts condition {
  if (!condition) throw new InternalError(id, message);
}

/** Turns any thrown value into an Error, keeping the original as `cause`. */
export function coerceError(value: unknown): Error {
  if (value instanceof Error) return value;
  return new Error(typeof value === "string" ? value : JSON.stringify(value), { cause: value });
}

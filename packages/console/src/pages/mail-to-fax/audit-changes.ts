/**
 * What an audit entry changed, as lines a person reads: every field whose value differs
 * between `before` and `after` ("fax.csid: – → ACME"). Pure.
 */

function flatten(value: unknown, prefix: string, out: Map<string, string>): void {
  if (value === null || value === undefined) return;
  if (typeof value === "object" && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) flatten(v, prefix === "" ? k : `${prefix}.${k}`, out);
    return;
  }
  out.set(prefix, typeof value === "string" ? value : JSON.stringify(value));
}

export interface ChangeLine {
  field: string;
  before: string | null;
  after: string | null;
}

export function changedFields(before: unknown, after: unknown): ChangeLine[] {
  const a = new Map<string, string>();
  const b = new Map<string, string>();
  flatten(before, "", a);
  flatten(after, "", b);
  const fields = [...new Set([...a.keys(), ...b.keys()])].sort();
  return fields.filter((f) => a.get(f) !== b.get(f)).map((f) => ({ field: f, before: a.get(f) ?? null, after: b.get(f) ?? null }));
}

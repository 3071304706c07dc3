/**
 * The capability cache in the store: read one destination's entry, write it back, record an
 * attempt (read, decide with fallback-ladder.ts's pure `updateCapability`, write, in one
 * transaction), forget one destination, purge old entries. Rows ↔ DestinationCapability here
 * and nowhere else.
 */
import type { Kysely } from "kysely";
import type { Database, DestinationCapabilityRow } from "../database.ts";
import {
  updateCapability,
  type AttemptModeReport,
  type DestinationCapability,
  type FaxMode,
} from "../../line/outcomes/fallback-ladder.ts";
import type { FaxTransport } from "../../line/outcomes/call-outcomes.ts";

function modeFrom(transport: string | null, ecm: number | null, maxBitRate: number | null): FaxMode | null {
  if (transport === null || ecm === null || maxBitRate === null) return null;
  if (transport !== "t38" && transport !== "g711") return null;
  return { transport: transport as FaxTransport, ecm: ecm === 1, maxBitRate: Number(maxBitRate) };
}

const num = (v: number | null): number | null => (v === null ? null : Number(v));

export function capabilityFromRow(row: DestinationCapabilityRow): DestinationCapability {
  return {
    e164: row.e164,
    worked: modeFrom(row.worked_transport, row.worked_ecm, row.worked_max_bit_rate),
    workedBitRate: num(row.worked_bit_rate),
    workedAt: num(row.worked_at),
    failed: modeFrom(row.failed_transport, row.failed_ecm, row.failed_max_bit_rate),
    failedAt: num(row.failed_at),
    failedReason: row.failed_reason,
    failuresInRow: Number(row.failures_in_row),
    t38RefusedAt: num(row.t38_refused_at),
    updatedAt: Number(row.updated_at),
  };
}

function rowFrom(c: DestinationCapability) {
  return {
    e164: c.e164,
    worked_transport: c.worked?.transport ?? null,
    worked_ecm: c.worked === null ? null : c.worked.ecm ? 1 : 0,
    worked_max_bit_rate: c.worked?.maxBitRate ?? null,
    worked_bit_rate: c.workedBitRate,
    worked_at: c.workedAt,
    failed_transport: c.failed?.transport ?? null,
    failed_ecm: c.failed === null ? null : c.failed.ecm ? 1 : 0,
    failed_max_bit_rate: c.failed?.maxBitRate ?? null,
    failed_at: c.failedAt,
    failed_reason: c.failedReason,
    failures_in_row: c.failuresInRow,
    t38_refused_at: c.t38RefusedAt,
    updated_at: c.updatedAt,
  };
}

/** The cache entry of one E.164 destination, or null. */
export async function getDestinationCapability(db: Kysely<Database>, e164: string): Promise<DestinationCapability | null> {
  const row = await db.selectFrom("destination_capabilities").selectAll().where("e164", "=", e164).executeTakeFirst();
  return row === undefined ? null : capabilityFromRow(row);
}

/** Writes an entry, replacing the destination's previous one. */
export async function saveDestinationCapability(db: Kysely<Database>, capability: DestinationCapability): Promise<void> {
  const row = rowFrom(capability);
  const { e164: _key, ...rest } = row;
  await db
    .insertInto("destination_capabilities")
    .values(row)
    .onConflict((oc) => oc.column("e164").doUpdateSet(rest))
    .execute();
}

/**
 * Records what one attempt taught about its destination. Returns the entry as it now stands
 * (unchanged when the attempt taught nothing, null when there is none).
 */
export async function recordAttemptCapability(
  db: Kysely<Database>,
  e164: string,
  report: AttemptModeReport,
  now: number,
): Promise<DestinationCapability | null> {
  return db.transaction().execute(async (trx) => {
    const current = await getDestinationCapability(trx, e164);
    const next = updateCapability(e164, current, report, now);
    if (next === null) return current;
    await saveDestinationCapability(trx, next);
    return next;
  });
}

/** Forgets a destination (an operator knows its machine changed). True when there was an entry. */
export async function deleteDestinationCapability(db: Kysely<Database>, e164: string): Promise<boolean> {
  const result = await db.deleteFrom("destination_capabilities").where("e164", "=", e164).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Deletes up to `limit` entries last updated before `before`; returns how many went. */
export async function purgeDestinationCapabilities(db: Kysely<Database>, before: number, limit: number): Promise<number> {
  const result = await db
    .deleteFrom("destination_capabilities")
    .where("e164", "in", (eb) =>
      eb.selectFrom("destination_capabilities").select("e164").where("updated_at", "<", before).orderBy("updated_at", "asc").limit(limit),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

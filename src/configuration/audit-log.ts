/**
 * The configuration API's audit log: every change made through the API (and every change of a
 * topic or number made with `faxline inbound …`, configuration/audited-inbound.ts) is one `config_audit` row
 * (who, in which role, when, which customer, resource and key, create/update/delete, and the
 * resource before and after as JSON), written in the transaction of the change itself, so there
 * is no change without its entry and no entry without its change.
 *
 * Every change goes through `auditedChange`:
 *
 *   const view = await auditedChange(db, actor, { resource: "inbound/numbers", key: e164 }, now, async (trx) => {
 *     const before = await readView(trx, …);          // null: it did not exist
 *     … change it, through trx only …
 *     const after = await readView(trx, …);           // null: it was deleted
 *     return { before, after, result: after };
 *   });
 *
 * `work` must use `trx` for every read and write (SQLite has one connection: a read on `db`
 * inside would wait for the transaction forever). The views must hold no secrets: give
 * write-only values as "(set)" or leave them out. A change that changes nothing (before equals
 * after) writes no entry. An AccountError thrown by `work` rolls everything back; routes turn it
 * into 400 setting_invalid (config-errors.ts).
 */
import { isDeepStrictEqual } from "node:util";
import type { Kysely } from "kysely";
import { newAuditId } from "../lib/ids.ts";
import type { Database } from "../store/database.ts";
import type { ConfigActor } from "./config-actor.ts";

export interface AuditTarget {
  /** The resource's path under the API's base, e.g. "inbound/numbers", "outbound/users". */
  resource: string;
  /** Its key: a number, a profile's name, a user's e-mail address; "" for the customer's settings. */
  key: string;
}

export interface AuditedWork<T> {
  before: unknown;
  after: unknown;
  result: T;
}

export type AuditAction = "create" | "update" | "delete";

export async function auditedChange<T>(
  db: Kysely<Database>,
  actor: ConfigActor,
  target: AuditTarget,
  now: number,
  work: (trx: Kysely<Database>) => Promise<AuditedWork<T>>,
): Promise<T> {
  return db.transaction().execute(async (trx) => {
    const { before, after, result } = await work(trx);
    const b = before ?? null;
    const a = after ?? null;
    if (isDeepStrictEqual(b, a)) return result;
    const action: AuditAction = b === null ? "create" : a === null ? "delete" : "update";
    await trx
      .insertInto("config_audit")
      .values({
        id: newAuditId(now),
        cust_nr: actor.custNr,
        at: now,
        actor_login: actor.login,
        actor_role: actor.role,
        resource: target.resource,
        resource_key: target.key,
        action,
        before_json: b === null ? null : JSON.stringify(b),
        after_json: a === null ? null : JSON.stringify(a),
      })
      .execute();
    return result;
  });
}

export interface AuditEntry {
  id: string;
  at: string;
  login: string;
  role: string;
  resource: string;
  key: string;
  action: string;
  before: unknown;
  after: unknown;
}

export interface AuditQuery {
  limit: number;
  offset: number;
  resource?: string | undefined;
  key?: string | undefined;
}

/** A customer's audit entries, newest first, one page. */
export async function listAudit(db: Kysely<Database>, custNr: string, query: AuditQuery): Promise<{ entries: AuditEntry[]; hasMore: boolean }> {
  let q = db.selectFrom("config_audit").selectAll().where("cust_nr", "=", custNr);
  if (query.resource !== undefined) q = q.where("resource", "=", query.resource);
  if (query.key !== undefined) q = q.where("resource_key", "=", query.key);
  const rows = await q.orderBy("at", "desc").orderBy("id", "desc").limit(query.limit + 1).offset(query.offset).execute();
  return {
    hasMore: rows.length > query.limit,
    entries: rows.slice(0, query.limit).map((r) => ({
      id: r.id,
      at: new Date(Number(r.at)).toISOString(),
      login: r.actor_login,
      role: r.actor_role,
      resource: r.resource,
      key: r.resource_key,
      action: r.action,
      before: r.before_json === null ? null : (JSON.parse(r.before_json) as unknown),
      after: r.after_json === null ? null : (JSON.parse(r.after_json) as unknown),
    })),
  };
}

/**
 * One audited change of a customer's inbound configuration, for the configuration API's routes
 * (inbound-routes.ts) and for the operator's `faxline inbound …` on a node's machine
 * (cli/inbound-commands.ts), so that every change is in the one audit log whichever way it was
 * made: the resource's view of the tree before and after `change` is what the log keeps (null:
 * it does not exist); `change` sees the view before (to refuse a create-only PUT).
 */
import type { Kysely } from "kysely";
import type { Database } from "../store/database.ts";
import { auditedChange, type AuditTarget } from "./audit-log.ts";
import type { ConfigActor } from "./config-actor.ts";
import { loadInboundTree, type InboundTree } from "./inbound-views.ts";

export function auditedInboundChange<T>(
  db: Kysely<Database>,
  actor: ConfigActor,
  target: AuditTarget,
  now: number,
  view: (tree: InboundTree) => Record<string, unknown> | null,
  change: (trx: Kysely<Database>, before: Record<string, unknown> | null) => Promise<T>,
): Promise<T> {
  return auditedChange(db, actor, target, now, async (trx) => {
    const before = view(await loadInboundTree(trx, actor.custNr));
    const result = await change(trx, before);
    return { before, after: view(await loadInboundTree(trx, actor.custNr)), result };
  });
}

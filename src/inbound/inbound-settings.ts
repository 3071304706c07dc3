/**
 * The inbound settings hierarchy, customer → profile (topic) → number, and the one function that
 * says what a called number is (`inboundNumberState`): the SIP line's answering asks it through
 * sip-reception-sink.ts, the configuration API (src/configuration/) shows the same values.
 *
 * Settings on each level (migration 0030): the fax id (the CSID our side sends to callers),
 * the cost center and `active`; a lower level overrides, anything unset (null) comes from the
 * level above. `active` is different: a number is active only when its customer, its profile
 * and the number itself are all active (the provider's rule: deactivating a customer deactivates
 * its profiles and numbers). A number without a profile (unassigned) answers no call.
 *
 * What a call to a number that is not active, or not assigned, gets is decided by the line from
 * the state: a wrong number (SIP 404), as for a number that is none of ours.
 */
import type { Kysely } from "kysely";
import type { Database } from "../store/database.ts";

/** One level's own settings: null is "not set here". */
export interface InboundLevelSettings {
  faxId: string | null;
  costCenter: string | null;
  active: boolean | null;
}

export interface EffectiveInboundSettings {
  /** The CSID sent to callers; null: none set anywhere (the trunk's, else lines.csid). */
  faxId: string | null;
  costCenter: string | null;
  active: boolean;
  /** The highest level that is deactivated, when not active. */
  inactiveAt: "customer" | "profile" | "number" | null;
}

export const NO_SETTINGS: InboundLevelSettings = Object.freeze({ faxId: null, costCenter: null, active: null });

/** customer → profile → number: the lowest level that sets a value wins; `active` needs every level. */
export function effectiveInboundSettings(customer: InboundLevelSettings, profile: InboundLevelSettings | null, number: InboundLevelSettings): EffectiveInboundSettings {
  const levels = [customer, profile ?? NO_SETTINGS, number];
  const lowest = <K extends "faxId" | "costCenter">(key: K) => levels.reduce<string | null>((value, level) => level[key] ?? value, null);
  const inactiveAt = customer.active === false ? "customer" : profile?.active === false ? "profile" : number.active === false ? "number" : null;
  return { faxId: lowest("faxId"), costCenter: lowest("costCenter"), active: inactiveAt === null, inactiveAt };
}

export function levelSettings(row: { fax_id: string | null; cost_center: string | null; active: number | null } | undefined | null): InboundLevelSettings {
  if (!row) return NO_SETTINGS;
  return { faxId: row.fax_id, costCenter: row.cost_center, active: row.active === null ? null : row.active === 1 };
}

/** What a called number is. */
export type InboundNumberState =
  /** None of ours. */
  | { state: "unknown" }
  /** A customer's number without a profile: no topic to receive into. */
  | { state: "unassigned"; custNr: string }
  /** Deactivated on its customer, its profile or itself. */
  | { state: "inactive"; custNr: string; topic: string; inactiveAt: "customer" | "profile" | "number" }
  /** Receives into its topic; `faxId` is the CSID to send (null: the trunk's). */
  | { state: "active"; custNr: string; topic: string; faxId: string | null; costCenter: string | null };

/** The one lookup of a called number (E.164) for answering a call. */
export async function inboundNumberState(db: Kysely<Database>, e164: string): Promise<InboundNumberState> {
  const assigned = await db
    .selectFrom("inbound_numbers as n")
    .innerJoin("inbound_topics as t", (j) => j.onRef("t.cust_nr", "=", "n.cust_nr").onRef("t.name", "=", "n.topic"))
    .leftJoin("inbound_number_settings as s", "s.e164", "n.e164")
    .leftJoin("inbound_customer_settings as c", "c.cust_nr", "n.cust_nr")
    .select([
      "n.cust_nr",
      "n.topic",
      "t.fax_id as t_fax_id",
      "t.cost_center as t_cost_center",
      "t.active as t_active",
      "s.fax_id as s_fax_id",
      "s.cost_center as s_cost_center",
      "s.active as s_active",
      "c.fax_id as c_fax_id",
      "c.cost_center as c_cost_center",
      "c.active as c_active",
    ])
    .where("n.e164", "=", e164)
    .executeTakeFirst();
  if (!assigned) {
    const own = await db.selectFrom("inbound_number_settings").select("cust_nr").where("e164", "=", e164).executeTakeFirst();
    return own ? { state: "unassigned", custNr: own.cust_nr } : { state: "unknown" };
  }
  const r = assigned;
  const effective = effectiveInboundSettings(
    levelSettings({ fax_id: r.c_fax_id, cost_center: r.c_cost_center, active: r.c_active }),
    levelSettings({ fax_id: r.t_fax_id, cost_center: r.t_cost_center, active: r.t_active }),
    levelSettings({ fax_id: r.s_fax_id, cost_center: r.s_cost_center, active: r.s_active }),
  );
  if (!effective.active) return { state: "inactive", custNr: r.cust_nr, topic: r.topic, inactiveAt: effective.inactiveAt! };
  return { state: "active", custNr: r.cust_nr, topic: r.topic, faxId: effective.faxId, costCenter: effective.costCenter };
}

/**
 * The inbound settings hierarchy, customer → profile (topic) → number, and the one function that
 * says what a called number is (`inboundNumberState`): the SIP line's answering asks it through
 * sip-reception-sink.ts, the configuration API (src/configuration/) shows the same values.
 *
 * Settings on each level (migration 0030): the fax id (the CSID our side sends to callers),
 * the cost center and `active`; a lower level overrides, anything unset (null) comes from the
 * level above. `active` is different: a number is active only when its customer, its profile
 * and the number itself are all active (the provider's rule: deactivating a customer deactivates
 * its profiles and numbers). A number without a profile (unassigned) answers no call. `paused`
 * (Faxline, migration 0044) works like `active`: pausing any level pauses the numbers below it.
 * A profile may limit the received faxes that wait for its customer (`max_waiting`, waitingFaxes).
 *
 * What a call gets is decided by the line from the state (line/sip-fax-line/inbound-calls.ts):
 * a number that is not active, or not assigned, is a wrong number (SIP 404), as one that is none
 * of ours, and the caller's fax machine gives up; a paused number answers 480 Temporarily
 * Unavailable and a profile holding its most unacknowledged faxes 486 Busy Here, and the
 * caller's fax machine tries again later.
 */
import type { Kysely } from "kysely";
import type { Database } from "../store/database.ts";

/** One level's own settings: null is "not set here". */
export interface InboundLevelSettings {
  faxId: string | null;
  costCenter: string | null;
  active: boolean | null;
  /** Faxline: callers get 480 Temporarily Unavailable while paused. */
  paused: boolean | null;
}

export interface EffectiveInboundSettings {
  /** The CSID sent to callers; null: none set anywhere (the trunk's, else lines.csid). */
  faxId: string | null;
  costCenter: string | null;
  active: boolean;
  /** The highest level that is deactivated, when not active. */
  inactiveAt: "customer" | "profile" | "number" | null;
  paused: boolean;
  /** The highest level that is paused, when paused. */
  pausedAt: "customer" | "profile" | "number" | null;
}

export const NO_SETTINGS: InboundLevelSettings = Object.freeze({ faxId: null, costCenter: null, active: null, paused: null });

/** customer → profile → number: the lowest level that sets a value wins; `active` needs every level, `paused` any. */
export function effectiveInboundSettings(customer: InboundLevelSettings, profile: InboundLevelSettings | null, number: InboundLevelSettings): EffectiveInboundSettings {
  const levels = [customer, profile ?? NO_SETTINGS, number];
  const lowest = <K extends "faxId" | "costCenter">(key: K) => levels.reduce<string | null>((value, level) => level[key] ?? value, null);
  const inactiveAt = customer.active === false ? "customer" : profile?.active === false ? "profile" : number.active === false ? "number" : null;
  const pausedAt = customer.paused === true ? "customer" : profile?.paused === true ? "profile" : number.paused === true ? "number" : null;
  return { faxId: lowest("faxId"), costCenter: lowest("costCenter"), active: inactiveAt === null, inactiveAt, paused: pausedAt !== null, pausedAt };
}

type LevelRow = { fax_id: string | null; cost_center: string | null; active: number | null; paused: number | null };

const flag = (value: number | null): boolean | null => (value === null ? null : value === 1);

export function levelSettings(row: LevelRow | undefined | null): InboundLevelSettings {
  if (!row) return NO_SETTINGS;
  return { faxId: row.fax_id, costCenter: row.cost_center, active: flag(row.active), paused: flag(row.paused) };
}

/** What a called number is. */
export type InboundNumberState =
  /** None of ours. */
  | { state: "unknown" }
  /** A customer's number without a profile: no topic to receive into. */
  | { state: "unassigned"; custNr: string }
  /** Deactivated on its customer, its profile or itself. */
  | { state: "inactive"; custNr: string; topic: string; inactiveAt: "customer" | "profile" | "number" }
  /** Active, but paused on its customer, its profile or itself: callers are to try again later. */
  | { state: "paused"; custNr: string; topic: string; pausedAt: "customer" | "profile" | "number" }
  /** Active, but `maxWaiting` received faxes of its profile wait for the customer (waitingFaxes). */
  | { state: "full"; custNr: string; topic: string; waiting: number; maxWaiting: number }
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
      "t.paused as t_paused",
      "t.max_waiting as t_max_waiting",
      "s.fax_id as s_fax_id",
      "s.cost_center as s_cost_center",
      "s.active as s_active",
      "s.paused as s_paused",
      "c.fax_id as c_fax_id",
      "c.cost_center as c_cost_center",
      "c.active as c_active",
      "c.paused as c_paused",
    ])
    .where("n.e164", "=", e164)
    .executeTakeFirst();
  if (!assigned) {
    const own = await db.selectFrom("inbound_number_settings").select("cust_nr").where("e164", "=", e164).executeTakeFirst();
    return own ? { state: "unassigned", custNr: own.cust_nr } : { state: "unknown" };
  }
  const r = assigned;
  const effective = effectiveInboundSettings(
    levelSettings({ fax_id: r.c_fax_id, cost_center: r.c_cost_center, active: r.c_active, paused: r.c_paused }),
    levelSettings({ fax_id: r.t_fax_id, cost_center: r.t_cost_center, active: r.t_active, paused: r.t_paused }),
    levelSettings({ fax_id: r.s_fax_id, cost_center: r.s_cost_center, active: r.s_active, paused: r.s_paused }),
  );
  if (!effective.active) return { state: "inactive", custNr: r.cust_nr, topic: r.topic, inactiveAt: effective.inactiveAt! };
  if (effective.paused) return { state: "paused", custNr: r.cust_nr, topic: r.topic, pausedAt: effective.pausedAt! };
  if (r.t_max_waiting !== null) {
    const waiting = await waitingFaxes(db, r.cust_nr, r.topic, r.t_max_waiting);
    if (waiting >= r.t_max_waiting) return { state: "full", custNr: r.cust_nr, topic: r.topic, waiting, maxWaiting: r.t_max_waiting };
  }
  return { state: "active", custNr: r.cust_nr, topic: r.topic, faxId: effective.faxId, costCenter: effective.costCenter };
}

/**
 * The received faxes of a profile that wait for its customer, counted up to `atMost`: neither
 * acknowledged through the pull API, nor delivered by any of its deliveries (mail, web service,
 * SFTP: a `fax.received` notification of the fax in state delivered), nor purged. A profile that
 * delivers by mail so counts only the faxes its mail did not (yet) reach; one read through the pull
 * API, those not yet acknowledged. Read through the pull index's prefix and the notifications'
 * job index, so a large backlog costs no more than the limit.
 */
export async function waitingFaxes(db: Kysely<Database>, custNr: string, topic: string, atMost: number): Promise<number> {
  const row = await db
    .selectFrom((eb) =>
      eb
        .selectFrom("received_faxes as r")
        .select("r.id")
        .where("r.cust_nr", "=", custNr)
        .where("r.topic", "=", topic)
        .where("r.acknowledged_at", "is", null)
        .where("r.purged_at", "is", null)
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom("notifications as n").select("n.id").whereRef("n.job_id", "=", "r.id").where("n.state", "=", "delivered"))),
        )
        .limit(atMost)
        .as("w"),
    )
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Reading a customer's inbound configuration as the API shows it (docs/config-api.md): the
 * customer's settings, its profiles (topics) with their deliveries, and its numbers, each with
 * its own settings or (`inherit`) the effective ones of customer → profile → number
 * (inbound/inbound-settings.ts). Views hold no secrets.
 */
import type { Kysely } from "kysely";
import { effectiveInboundSettings, levelSettings, NO_SETTINGS, type InboundLevelSettings } from "../inbound/inbound-settings.ts";
import { listTopics, type TopicSummary } from "../inbound/topics.ts";
import { shownUrl } from "../net/url-display.ts";
import type { Database } from "../store/database.ts";
import type { InboundNumberView, InboundProfileView, InboundSettingsView } from "./config-schemas.ts";

export interface InboundTree {
  custNr: string;
  customer: InboundLevelSettings;
  profiles: Map<string, TopicSummary>;
  numbers: NumberRow[];
}

export interface NumberRow {
  e164: string;
  profile: string | null;
  displayNumber: string | null;
  comments: string | null;
  own: InboundLevelSettings;
}

/** Everything of a customer's inbound configuration, read with `db` (a transaction inside a change). */
export async function loadInboundTree(db: Kysely<Database>, custNr: string): Promise<InboundTree> {
  const [customer, topics, assigned, settings] = await Promise.all([
    db.selectFrom("inbound_customer_settings").selectAll().where("cust_nr", "=", custNr).executeTakeFirst(),
    listTopics(db, custNr),
    db.selectFrom("inbound_numbers").select(["e164", "topic"]).where("cust_nr", "=", custNr).execute(),
    db.selectFrom("inbound_number_settings").selectAll().where("cust_nr", "=", custNr).execute(),
  ]);
  const byNumber = new Map<string, NumberRow>();
  for (const s of settings) {
    byNumber.set(s.e164, { e164: s.e164, profile: null, displayNumber: s.display_number, comments: s.comments, own: levelSettings(s) });
  }
  for (const a of assigned) {
    const row = byNumber.get(a.e164) ?? { e164: a.e164, profile: null, displayNumber: null, comments: null, own: NO_SETTINGS };
    row.profile = a.topic;
    byNumber.set(a.e164, row);
  }
  return {
    custNr,
    customer: levelSettings(customer),
    profiles: new Map(topics.map((t) => [t.name, t])),
    numbers: [...byNumber.values()].sort((a, b) => (a.e164 < b.e164 ? -1 : a.e164 > b.e164 ? 1 : 0)),
  };
}

type Deliveries = { [K in "email" | "ftp" | "webservice"]?: NonNullable<InboundProfileView[K]> };

/** A profile's deliveries in the API's shape (none of their secrets). */
export function deliveriesOf(topic: TopicSummary): Deliveries {
  const out: Deliveries = {};
  if (topic.mailTo.length > 0) out.email = { recipients: topic.mailTo, attachment: topic.mailAttachment };
  if (topic.pushUrl !== null) out.webservice = { url: shownUrl(topic.pushUrl)! };
  if (topic.sftp !== null) {
    const s = topic.sftp;
    out.ftp = {
      protocol: "SFTP",
      host: s.host,
      port: s.port,
      username: s.username,
      authMethod: s.authMethod,
      publicKey: s.publicKey,
      hostKeys: s.hostKeys,
      directory: s.directory,
      filePattern: s.filePattern,
      documentFormat: s.documentFormat,
      metadataFormat: s.metadataFormat,
      target: s.target,
    };
  }
  return out;
}

/** A number: its own settings, or with `inherit` the effective ones; deliveries are always its profile's. */
export function numberView(tree: InboundTree, row: NumberRow, inherit: boolean): InboundNumberView {
  const profile = row.profile === null ? null : (tree.profiles.get(row.profile) ?? null);
  const view: InboundNumberView = { number: row.e164, displayNumber: row.displayNumber, comments: row.comments, faxId: row.own.faxId, costCenter: row.own.costCenter, active: row.own.active, paused: row.own.paused, profile: row.profile };
  if (inherit) {
    const effective = effectiveInboundSettings(tree.customer, profile?.settings ?? null, row.own);
    view.displayNumber = row.displayNumber ?? row.e164;
    view.faxId = effective.faxId;
    view.costCenter = effective.costCenter;
    // A number without a profile answers no call.
    view.active = effective.active && profile !== null;
    view.paused = effective.paused;
  }
  return profile === null ? view : { ...view, ...deliveriesOf(profile) };
}

/** What a number does: the values the filters look at. */
export function effectiveOfNumber(tree: InboundTree, row: NumberRow) {
  const profile = row.profile === null ? null : (tree.profiles.get(row.profile) ?? null);
  const effective = effectiveInboundSettings(tree.customer, profile?.settings ?? null, row.own);
  return { ...effective, active: effective.active && profile !== null };
}

export function profileView(tree: InboundTree, topic: TopicSummary, inherit: boolean): InboundProfileView {
  const own = topic.settings;
  const shown = inherit ? effectiveInboundSettings(tree.customer, own, NO_SETTINGS) : null;
  return {
    name: topic.name,
    comments: topic.comments,
    faxId: shown ? shown.faxId : own.faxId,
    costCenter: shown ? shown.costCenter : own.costCenter,
    active: shown ? shown.active : own.active,
    paused: shown ? shown.paused : own.paused,
    maxWaitingFaxes: topic.maxWaiting,
    retentionDays: topic.retentionDays,
    ...deliveriesOf(topic),
    numbers: topic.numbers,
  };
}

export function settingsView(tree: InboundTree): InboundSettingsView {
  return { customer: tree.custNr, faxId: tree.customer.faxId, costCenter: tree.customer.costCenter, active: tree.customer.active, paused: tree.customer.paused };
}

/** The audit log's view of a number: its own settings and profile (what a change changes). */
export function auditedNumber(tree: InboundTree, e164: string): Record<string, unknown> | null {
  const row = tree.numbers.find((n) => n.e164 === e164);
  return row ? { number: row.e164, displayNumber: row.displayNumber, comments: row.comments, faxId: row.own.faxId, costCenter: row.own.costCenter, active: row.own.active, paused: row.own.paused, profile: row.profile } : null;
}

/** The audit log's view of a profile: its own settings and deliveries ("(set)" for a written secret is not needed: views hold none). */
export function auditedProfile(tree: InboundTree, name: string): Record<string, unknown> | null {
  const topic = tree.profiles.get(name);
  if (!topic) return null;
  const { numbers: _numbers, ...view } = profileView(tree, topic, false);
  return view;
}

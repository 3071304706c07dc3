/**
 * The reporting interface's usage records (UDRs), read from the rows themselves:
 *  - outbound: one record per call (attempt) that ended, with its fax (recipient) and job, keyed
 *    by the call's end (`keyTimestamp`); calls still running have no record yet;
 *  - inbound: one record per reception, keyed by its arrival, with the deliveries queued for it.
 * So they exist as long as their rows (retention.defaultDays, inbound.retentionDays, or until the
 * client deletes the report). Pages are read by offset (the provider's page/size); exports walk a
 * keyset cursor (key, id) in batches, never a month in memory and never one statement holding
 * SQLite's one connection for the whole export.
 */
import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool } from "kysely";
import type { Database } from "../database.ts";

export interface UdrScope {
  custNr: string;
  /** null: every login of the customer. */
  login: string | null;
  /** Data centers whose rows are read (the region's). */
  datacenters: readonly string[];
}

export interface UdrPeriod {
  from: number;
  to: number;
}

/** A page by offset, or a batch after a keyset position. */
export type UdrWindow = { kind: "page"; offset: number; limit: number } | { kind: "after"; key: number | null; id: string | null; limit: number };

/** The SQL-side filters of outbound records: each a list of allowed values of one column. */
export interface OutUdrFilters {
  /** Delivered calls ("OK") or the reason codes of failed ones: built by the caller from statusName/statusCode. */
  outcome?: { delivered: boolean; reasonCodes: readonly string[] };
  billingCode?: readonly string[];
  customerRef?: readonly string[];
  jobId?: readonly string[];
  faxId?: readonly string[];
  login?: readonly string[];
  service?: readonly string[];
  number?: readonly string[];
  country?: readonly string[];
  submissionDc?: readonly string[];
  trunk?: readonly string[];
}

export interface InUdrFilters {
  status?: readonly string[];
  service?: readonly string[];
  calledNumber?: readonly string[];
  callingNumber?: readonly string[];
  topic?: readonly string[];
}

const OUT_COLUMNS = [
  "a.id as attempt_id",
  "a.attempt_no",
  "a.e164",
  "a.dial_string",
  "a.node",
  "a.started_at",
  "a.ended_at",
  "a.result",
  "a.reason_code",
  "a.raw_cause",
  "a.pages_sent",
  "a.duration_secs",
  "a.remote_csid",
  "a.transport",
  "a.bit_rate",
  "a.trunk",
  "a.country",
  "r.id as recipient_id",
  "r.state as recipient_state",
  "r.status as recipient_status",
  "r.attempt_count",
  "r.finished_at",
  "r.properties",
  "j.id as job_id",
  "j.cust_nr",
  "j.login",
  "j.datacenter",
  "j.accepted_datacenter",
  "j.source",
  "j.csid",
  "j.pages as doc_pages",
  "j.billing_code",
  "j.billing_info",
  "j.customer_defined_id",
  "j.customer_reference",
  "j.resolution",
  "j.valid_from",
  "j.is_express",
  "j.created_at",
  "j.completed_at",
] as const;

type AnyEb = ExpressionBuilder<any, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function inList(eb: AnyEb, column: string, values: readonly string[] | undefined): Expression<SqlBool> | null {
  if (values === undefined) return null;
  // An empty list matches nothing, as a filter with no allowed value must.
  if (values.length === 0) return sql<SqlBool>`1 = 0`;
  return eb(column, "in", [...values]);
}

function outConditions(eb: AnyEb, scope: UdrScope, period: UdrPeriod, f: OutUdrFilters): Expression<SqlBool> {
  const parts: (Expression<SqlBool> | null)[] = [
    eb("j.cust_nr", "=", scope.custNr),
    scope.login === null ? null : eb("j.login", "=", scope.login),
    eb("j.datacenter", "in", [...scope.datacenters]),
    eb("a.ended_at", ">=", period.from),
    eb("a.ended_at", "<", period.to),
    eb("a.result", "!=", "in_progress"),
  ];
  if (f.outcome) {
    const either: Expression<SqlBool>[] = [];
    if (f.outcome.delivered) either.push(eb("a.result", "=", "delivered"));
    if (f.outcome.reasonCodes.length > 0) either.push(eb.and([eb("a.result", "!=", "delivered"), eb("a.reason_code", "in", [...f.outcome.reasonCodes])]));
    parts.push(either.length === 0 ? sql<SqlBool>`1 = 0` : eb.or(either));
  }
  parts.push(
    inList(eb, "j.billing_code", f.billingCode),
    inList(eb, "j.customer_defined_id", f.customerRef),
    inList(eb, "j.id", f.jobId),
    inList(eb, "r.id", f.faxId),
    inList(eb, "j.login", f.login),
    inList(eb, "j.source", f.service),
    inList(eb, "a.e164", f.number),
    inList(eb, "a.country", f.country),
    f.submissionDc === undefined ? null : f.submissionDc.length === 0 ? sql<SqlBool>`1 = 0` : eb(eb.fn.coalesce("j.accepted_datacenter", "j.datacenter"), "in", [...f.submissionDc]),
    inList(eb, "a.trunk", f.trunk),
  );
  return eb.and(parts.filter((p): p is Expression<SqlBool> => p !== null));
}

/** Outbound records (one per ended call), ordered by the call's end and id. */
export async function readOutUdrs(db: Kysely<Database>, scope: UdrScope, period: UdrPeriod, filters: OutUdrFilters, sort: "asc" | "desc", window: UdrWindow): Promise<Record<string, unknown>[]> {
  let query = (db as unknown as Kysely<any>) // eslint-disable-line @typescript-eslint/no-explicit-any
    .selectFrom("attempts as a")
    .innerJoin("recipients as r", "r.id", "a.recipient_id")
    // CROSS JOIN with the condition in WHERE: the same join, but SQLite's planner then keeps the
    // calls (attempts_ended_idx over the period, in order) as the outer loop. With an inner join it
    // started from the customer's jobs in the data centers (jobs_state_idx) and sorted all their
    // calls: 18 to 32 s for a page of a day in a store of a million faxes, 10 ms this way
    // (docs/benchmarks.md). PostgreSQL plans both the same.
    .crossJoin("jobs as j")
    .whereRef("j.id", "=", "a.job_id")
    .select([...OUT_COLUMNS])
    .where((eb: AnyEb) => outConditions(eb, scope, period, filters));
  if (window.kind === "after" && window.key !== null && window.id !== null) {
    const { key, id } = window;
    query = query.where((eb: AnyEb) =>
      sort === "asc"
        ? eb.or([eb("a.ended_at", ">", key), eb.and([eb("a.ended_at", "=", key), eb("a.id", ">", id)])])
        : eb.or([eb("a.ended_at", "<", key), eb.and([eb("a.ended_at", "=", key), eb("a.id", "<", id)])]),
    );
  }
  query = query.orderBy("a.ended_at", sort).orderBy("a.id", sort).limit(window.limit);
  if (window.kind === "page") query = query.offset(window.offset);
  return (await query.execute()) as Record<string, unknown>[];
}

export interface FaxAttemptTotals {
  attempts: number;
  firstStartedAt: number;
  lastEndedAt: number | null;
  lastAttemptNo: number;
  durationSecs: number;
  pages: number;
  maxPages: number;
}

/** Per fax (recipient): what its calls add up to, for the records' sum and last-attempt fields. */
export async function faxAttemptTotals(db: Kysely<Database>, recipientIds: readonly string[]): Promise<Map<string, FaxAttemptTotals>> {
  const totals = new Map<string, FaxAttemptTotals>();
  const unique = [...new Set(recipientIds)];
  for (let i = 0; i < unique.length; i += 500) {
    const rows = await db
      .selectFrom("attempts")
      .select((eb) => [
        "recipient_id",
        eb.fn.countAll().as("n"),
        eb.fn.min("started_at").as("first_started"),
        eb.fn.max("ended_at").as("last_ended"),
        eb.fn.max("attempt_no").as("last_no"),
        eb.fn.sum<number>("duration_secs").as("secs"),
        eb.fn.sum<number>("pages_sent").as("pages"),
        eb.fn.max("pages_sent").as("max_pages"),
      ])
      .where("recipient_id", "in", unique.slice(i, i + 500))
      .where("result", "!=", "in_progress")
      .groupBy("recipient_id")
      .execute();
    for (const r of rows) {
      totals.set(r.recipient_id, {
        attempts: Number(r.n),
        firstStartedAt: Number(r.first_started),
        lastEndedAt: r.last_ended === null ? null : Number(r.last_ended),
        lastAttemptNo: Number(r.last_no),
        durationSecs: Number(r.secs ?? 0),
        pages: Number(r.pages ?? 0),
        maxPages: Number(r.max_pages ?? 0),
      });
    }
  }
  return totals;
}

/** Retention days of customers (null: the default), for jobArchivePurgeAt. */
export async function customerRetentionDays(db: Kysely<Database>, custNrs: readonly string[]): Promise<Map<string, number | null>> {
  const out = new Map<string, number | null>();
  if (custNrs.length === 0) return out;
  const rows = await db.selectFrom("customers").select(["cust_nr", "retention_days"]).where("cust_nr", "in", [...new Set(custNrs)]).execute();
  for (const r of rows) out.set(r.cust_nr, r.retention_days);
  return out;
}

const IN_COLUMNS = [
  "id",
  "cust_nr",
  "topic",
  "datacenter",
  "received_datacenter",
  "accounting_service",
  "to_number",
  "from_number",
  "remote_csid",
  "pages",
  "pages_announced",
  "resolution",
  "transport",
  "bit_rate",
  "duration_secs",
  "status",
  "reason_code",
  "raw_cause",
  "received_at",
  "image_bytes",
  "acknowledged_at",
  "handed_out",
  "purged_at",
] as const;

/** Inbound records (one per reception), ordered by arrival and id. */
export async function readInUdrs(db: Kysely<Database>, scope: UdrScope, period: UdrPeriod, f: InUdrFilters, sort: "asc" | "desc", window: UdrWindow): Promise<Record<string, unknown>[]> {
  let query = (db as unknown as Kysely<any>) // eslint-disable-line @typescript-eslint/no-explicit-any
    .selectFrom("received_faxes")
    .select([...IN_COLUMNS])
    .where((eb: AnyEb) =>
      eb.and(
        [
          eb("cust_nr", "=", scope.custNr),
          eb("datacenter", "in", [...scope.datacenters]),
          eb("received_at", ">=", period.from),
          eb("received_at", "<", period.to),
          inList(eb, "status", f.status),
          inList(eb, "accounting_service", f.service),
          inList(eb, "to_number", f.calledNumber),
          inList(eb, "from_number", f.callingNumber),
          inList(eb, "topic", f.topic),
        ].filter((p): p is Expression<SqlBool> => p !== null),
      ),
    );
  if (window.kind === "after" && window.key !== null && window.id !== null) {
    const { key, id } = window;
    query = query.where((eb: AnyEb) =>
      sort === "asc"
        ? eb.or([eb("received_at", ">", key), eb.and([eb("received_at", "=", key), eb("id", ">", id)])])
        : eb.or([eb("received_at", "<", key), eb.and([eb("received_at", "=", key), eb("id", "<", id)])]),
    );
  }
  query = query.orderBy("received_at", sort).orderBy("id", sort).limit(window.limit);
  if (window.kind === "page") query = query.offset(window.offset);
  return (await query.execute()) as Record<string, unknown>[];
}

export interface ReceptionDelivery {
  channel: string;
  target: string;
  state: string;
}

/** The deliveries queued for receptions (fax.received notifications), by reception. */
export async function receptionDeliveries(db: Kysely<Database>, faxIds: readonly string[]): Promise<Map<string, ReceptionDelivery[]>> {
  const out = new Map<string, ReceptionDelivery[]>();
  for (let i = 0; i < faxIds.length; i += 500) {
    const rows = await db
      .selectFrom("notifications")
      .select(["job_id", "channel", "target", "state"])
      .where("job_id", "in", faxIds.slice(i, i + 500))
      .orderBy("created_at")
      .execute();
    for (const r of rows) {
      const list = out.get(r.job_id) ?? [];
      list.push({ channel: r.channel, target: r.target, state: r.state });
      out.set(r.job_id, list);
    }
  }
  return out;
}

/** Retention days of topics (null: inbound.retentionDays), for archivePurgeAt. */
export async function topicRetentionDays(db: Kysely<Database>, topics: readonly { custNr: string; topic: string }[]): Promise<Map<string, number | null>> {
  const out = new Map<string, number | null>();
  const custNrs = [...new Set(topics.map((t) => t.custNr))];
  if (custNrs.length === 0) return out;
  const rows = await db.selectFrom("inbound_topics").select(["cust_nr", "name", "retention_days"]).where("cust_nr", "in", custNrs).execute();
  for (const r of rows) out.set(`${r.cust_nr}\u0000${r.name}`, r.retention_days);
  return out;
}

/**
 * The provider's two usage-record queries, `faxOutUdrReport` and `faxInUdrReport`, and the
 * same records as a stream for exports. Arguments as the provider documents them: `customerId`,
 * `datePeriod {fromIncluded, toExcluded}`, `filter` (per column `{values: [...]}`: a record
 * matches when its column is one of the values; several columns: all of them), `page` (0-based),
 * `size`, `sort` (ASC/DESC by keyTimestamp). Result `{content, pageIndex, pageSize,
 * hasMoreElements}`.
 */
import type { Kysely } from "kysely";
import type { FaxlineConfig } from "../config/schema.ts";
import { ApiError } from "../errors/api-errors.ts";
import { homeCountryOfRegion } from "../numbers/country-of-number.ts";
import type { Database } from "../store/database.ts";
import {
  customerRetentionDays,
  faxAttemptTotals,
  readInUdrs,
  readOutUdrs,
  receptionDeliveries,
  topicRetentionDays,
  type InUdrFilters,
  type OutUdrFilters,
  type UdrPeriod,
  type UdrScope,
  type UdrWindow,
} from "../store/queries/report-udrs.ts";
import { DELIVERED_CODE, inUdr, outUdr, reasonCodesOfStatusNames, type InUdr, type OutUdr, type RecordContext } from "./udr-records.ts";

/** A column filter as the provider writes it: `{values: [...]}`. */
export interface ColumnFilter {
  values?: readonly (string | null)[] | null;
}

export type FilterInput = Readonly<Record<string, ColumnFilter | null | undefined>>;

export type SortDirection = "ASC" | "DESC";

export interface UdrPage<T> {
  content: T[];
  pageIndex: number;
  pageSize: number;
  hasMoreElements: boolean;
}

export function recordContext(config: FaxlineConfig): RecordContext {
  return {
    defaultCsid: config.sender.csid,
    homeCountry: homeCountryOfRegion(config.node.region),
    reportRetentionDays: config.retention.defaultDays,
    receptionRetentionDays: config.inbound.retentionDays,
    mailFrom: config.mail.from,
  };
}

function values(filter: FilterInput | null | undefined, column: string): string[] | undefined {
  const f = filter?.[column];
  if (f === null || f === undefined || f.values === null || f.values === undefined) return undefined;
  return f.values.filter((v): v is string => typeof v === "string");
}

/** The outbound filter's columns (FaxOutColumnUdrFilters) to SQL filters. */
export function outFilters(filter: FilterInput | null | undefined): OutUdrFilters {
  const f: OutUdrFilters = {};
  const statusNames = values(filter, "statusName");
  const statusCodes = values(filter, "statusCode");
  if (statusNames !== undefined || statusCodes !== undefined) {
    // Both given: a call must match both, which is the codes among the names' codes.
    const byName = statusNames === undefined ? null : reasonCodesOfStatusNames(statusNames);
    const byCode = statusCodes === undefined ? null : { delivered: statusCodes.includes(DELIVERED_CODE), reasonCodes: statusCodes.filter((c) => c !== DELIVERED_CODE) };
    f.outcome =
      byName && byCode
        ? { delivered: byName.delivered && byCode.delivered, reasonCodes: byName.reasonCodes.filter((c) => byCode.reasonCodes.includes(c)) }
        : (byName ?? byCode)!;
  }
  const map: [keyof OutUdrFilters, string][] = [
    ["billingCode", "jobBillingCode"],
    ["customerRef", "jobCustomerRef"],
    ["jobId", "jobId"],
    ["faxId", "faxId"],
    ["service", "accountService"],
    ["number", "calledNumber"],
    ["country", "calledCountry"],
    ["submissionDc", "jobSubmissionDc"],
    ["trunk", "trunk"],
  ];
  for (const [key, column] of map) {
    const v = values(filter, column);
    if (v !== undefined) (f as Record<string, readonly string[]>)[key] = column === "calledCountry" || column === "jobSubmissionDc" ? v.map((x) => x.toUpperCase()) : v;
  }
  const accounts = [values(filter, "accountId"), values(filter, "accountName")].filter((v): v is string[] => v !== undefined);
  if (accounts.length > 0) f.login = accounts.length === 2 ? accounts[0]!.filter((a) => accounts[1]!.includes(a)) : accounts[0]!;
  return f;
}

/** The inbound filter's columns (FaxInColumnUdrFilters) to SQL filters. */
export function inFilters(filter: FilterInput | null | undefined): InUdrFilters {
  const f: InUdrFilters = {};
  const status = values(filter, "faxTransmitStatus");
  if (status !== undefined) f.status = status.map((s) => s.toUpperCase());
  const service = values(filter, "accountingService");
  if (service !== undefined) f.service = service;
  const called = [...(values(filter, "calledNumber") ?? []), ...(values(filter, "calledNumberDisplay") ?? [])];
  if (values(filter, "calledNumber") !== undefined || values(filter, "calledNumberDisplay") !== undefined) f.calledNumber = called;
  const calling = values(filter, "callingNumber");
  if (calling !== undefined) f.callingNumber = calling;
  const topic = values(filter, "topic");
  if (topic !== undefined) f.topic = topic;
  return f;
}

export interface PageArgs {
  page?: number | null;
  size?: number | null;
  sort?: SortDirection | null;
}

export function pageWindow(args: PageArgs, config: FaxlineConfig): { page: number; size: number; sort: "asc" | "desc" } {
  const page = args.page ?? 0;
  const size = args.size ?? config.reporting.defaultPageSize;
  if (!Number.isInteger(page) || page < 0) throw new ApiError("page_invalid", `page is ${page}; pages count from 0`);
  if (!Number.isInteger(size) || size < 1 || size > config.reporting.maxPageSize) {
    throw new ApiError("page_invalid", `size is ${size}; a page holds 1 to ${config.reporting.maxPageSize} records (reporting.maxPageSize)`);
  }
  return { page, size, sort: args.sort === "DESC" ? "desc" : "asc" };
}

/** Reads outbound rows in a window and turns them into records. */
async function outRecords(db: Kysely<Database>, scope: UdrScope, period: UdrPeriod, filters: OutUdrFilters, sort: "asc" | "desc", window: UdrWindow, ctx: RecordContext) {
  const rows = await readOutUdrs(db, scope, period, filters, sort, window);
  const totals = await faxAttemptTotals(db, rows.map((r) => r.recipient_id as string));
  const retention = await customerRetentionDays(db, rows.map((r) => r.cust_nr as string));
  return rows.map((r) => ({ row: r, record: outUdr(r, totals.get(r.recipient_id as string), retention.get(r.cust_nr as string), ctx) }));
}

async function inRecords(db: Kysely<Database>, scope: UdrScope, period: UdrPeriod, filters: InUdrFilters, sort: "asc" | "desc", window: UdrWindow, ctx: RecordContext) {
  const rows = await readInUdrs(db, scope, period, filters, sort, window);
  const deliveries = await receptionDeliveries(db, rows.map((r) => r.id as string));
  const retention = await topicRetentionDays(db, rows.map((r) => ({ custNr: r.cust_nr as string, topic: r.topic as string })));
  return rows.map((r) => ({ row: r, record: inUdr(r, deliveries.get(r.id as string) ?? [], retention.get(`${r.cust_nr as string}\u0000${r.topic as string}`), ctx) }));
}

export async function faxOutUdrPage(db: Kysely<Database>, scope: UdrScope, period: UdrPeriod, filter: FilterInput | null | undefined, args: PageArgs, config: FaxlineConfig): Promise<UdrPage<OutUdr>> {
  const { page, size, sort } = pageWindow(args, config);
  // One more than asked: whether another page follows.
  const got = await outRecords(db, scope, period, outFilters(filter), sort, { kind: "page", offset: page * size, limit: size + 1 }, recordContext(config));
  return { content: got.slice(0, size).map((g) => g.record), pageIndex: page, pageSize: size, hasMoreElements: got.length > size };
}

export async function faxInUdrPage(db: Kysely<Database>, scope: UdrScope, period: UdrPeriod, filter: FilterInput | null | undefined, args: PageArgs, config: FaxlineConfig): Promise<UdrPage<InUdr>> {
  const { page, size, sort } = pageWindow(args, config);
  const got = await inRecords(db, scope, period, inFilters(filter), sort, { kind: "page", offset: page * size, limit: size + 1 }, recordContext(config));
  return { content: got.slice(0, size).map((g) => g.record), pageIndex: page, pageSize: size, hasMoreElements: got.length > size };
}

/** Rows per statement of an export: small enough to keep SQLite's connection free between them. */
export const EXPORT_BATCH = 1000;

/** Every outbound record of the period, in batches along a keyset cursor (exports). */
export async function* faxOutUdrStream(db: Kysely<Database>, scope: UdrScope, period: UdrPeriod, filter: FilterInput | null | undefined, sort: SortDirection, config: FaxlineConfig): AsyncGenerator<OutUdr[]> {
  const ctx = recordContext(config);
  const filters = outFilters(filter);
  const direction = sort === "DESC" ? "desc" : "asc";
  let key: number | null = null;
  let id: string | null = null;
  for (;;) {
    const got = await outRecords(db, scope, period, filters, direction, { kind: "after", key, id, limit: EXPORT_BATCH }, ctx);
    if (got.length === 0) return;
    yield got.map((g) => g.record);
    const last = got[got.length - 1]!.row;
    key = Number(last.ended_at);
    id = last.attempt_id as string;
    if (got.length < EXPORT_BATCH) return;
  }
}

export async function* faxInUdrStream(db: Kysely<Database>, scope: UdrScope, period: UdrPeriod, filter: FilterInput | null | undefined, sort: SortDirection, config: FaxlineConfig): AsyncGenerator<InUdr[]> {
  const ctx = recordContext(config);
  const filters = inFilters(filter);
  const direction = sort === "DESC" ? "desc" : "asc";
  let key: number | null = null;
  let id: string | null = null;
  for (;;) {
    const got = await inRecords(db, scope, period, filters, direction, { kind: "after", key, id, limit: EXPORT_BATCH }, ctx);
    if (got.length === 0) return;
    yield got.map((g) => g.record);
    const last = got[got.length - 1]!.row;
    key = Number(last.received_at);
    id = last.id as string;
    if (got.length < EXPORT_BATCH) return;
  }
}

/**
 * The resolvers of the reporting schema (graphql-schema.ts): each checks who may see what
 * (reporting-scope.ts) and the period, then reads usage records (udr-reports.ts) or rollups
 * (aggregate-reports.ts). Errors are ApiErrors of the catalogue; graphql-route.ts puts their code
 * into `extensions.code`.
 */
import type { FaxlineConfig } from "../config/schema.ts";
import { ApiError } from "../errors/api-errors.ts";
import type { Clock } from "../lib/clock.ts";
import type { Store } from "../store/store.ts";
import { failingDestinations, summarize, type Grouping, type SummaryName } from "./aggregate-reports.ts";
import { summaryPeriod, udrPeriod, type DatePeriodInput } from "./date-period.ts";
import { inUdrScope, outUdrScope, rollupScope, type ReportingViewer } from "./reporting-scope.ts";
import { faxInUdrPage, faxOutUdrPage, type FilterInput, type SortDirection } from "./udr-reports.ts";

export interface ReportingDeps {
  config: FaxlineConfig;
  store: Store;
  clock: Clock;
}

export interface ReportingContext {
  viewer: ReportingViewer;
}

interface UdrArgs {
  customerId: string;
  datePeriod: DatePeriodInput;
  filter?: FilterInput | null;
  page?: number | null;
  size?: number | null;
  sort?: SortDirection | null;
}

interface SummaryArgs {
  customerId?: string | null;
  datePeriod: DatePeriodInput;
  filter?: FilterInput | null;
  groupBy?: Grouping[] | null;
  limit?: number | null;
}

/** An aggregate's `limit`: 1 to reporting.maxPageSize. */
export function rowLimit(limit: number | null | undefined, fallback: number, config: FaxlineConfig): number {
  const n = limit ?? fallback;
  if (!Number.isInteger(n) || n < 1 || n > config.reporting.maxPageSize) throw new ApiError("page_invalid", `limit is ${n}; give 1 to ${config.reporting.maxPageSize} (reporting.maxPageSize)`);
  return n;
}

export function reportingRoot(deps: ReportingDeps) {
  const { config } = deps;
  const db = deps.store.db;
  const udrLimits = () => ({ maxSpanMs: config.reporting.maxQuerySpan, historyMs: config.reporting.history, now: deps.clock.now() });
  const summary = (name: SummaryName, direction: "out" | "in") => async (args: SummaryArgs, ctx: ReportingContext) =>
    summarize(db, name, {
      scope: rollupScope(ctx.viewer, args.customerId ?? null, direction),
      period: summaryPeriod(args.datePeriod, config.reporting.maxSummarySpan),
      filter: args.filter,
      groupBy: args.groupBy ?? [],
      limit: rowLimit(args.limit, 1000, config),
    });
  return {
    faxOutUdrReport: async (args: UdrArgs, ctx: ReportingContext) =>
      faxOutUdrPage(db, outUdrScope(ctx.viewer, args.customerId), udrPeriod(args.datePeriod, udrLimits()), args.filter, args, config),
    faxInUdrReport: async (args: UdrArgs, ctx: ReportingContext) =>
      faxInUdrPage(db, inUdrScope(ctx.viewer, args.customerId), udrPeriod(args.datePeriod, udrLimits()), args.filter, args, config),
    faxOutSummary: summary("faxOut", "out"),
    faxOutCallSummary: summary("faxOutCalls", "out"),
    faxInSummary: summary("faxIn", "in"),
    faxOutFailingDestinations: async (args: SummaryArgs, ctx: ReportingContext) =>
      failingDestinations(db, {
        scope: rollupScope(ctx.viewer, args.customerId ?? null, "out"),
        period: summaryPeriod(args.datePeriod, config.reporting.maxSummarySpan),
        filter: args.filter,
        limit: rowLimit(args.limit, 10, config),
      }),
  };
}

/**
 * What the Reports page asks the reporting interface (/graphql, docs/reporting.md): one request
 * with an alias per chart, over whole UTC days, with the page's filters; the periods a chart's
 * x axis walks through; and the export links (/reporting/v1, streamed by the node).
 */
import { call } from "../api.ts";

export type Grouping = "DAY" | "WEEK" | "MONTH";

/** The page's filters, as they stand in its URL. */
export interface ReportFilters {
  /** First and last day shown (YYYY-MM-DD, UTC), both included. */
  from: string;
  to: string;
  group: Grouping;
  /** Operators: one customer, or "" for every customer. Others: ignored (their own). */
  customer: string;
  /** Managers and operators: one login's faxes, or "". */
  login: string;
  datacenter: string;
  /** ISO 3166-1 alpha-3 codes, comma-separated (DEU,FRA), or "". */
  countries: string;
}

const DAY = 86_400_000;

export const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
export const dayMs = (day: string) => Date.parse(`${day}T00:00:00Z`);

/** The last 30 UTC days up to today, per day. */
export function defaultFilters(now = Date.now()): ReportFilters {
  const today = Math.floor(now / DAY) * DAY;
  return { from: isoDay(today - 29 * DAY), to: isoDay(today), group: "DAY", customer: "", login: "", datacenter: "", countries: "" };
}

export function filtersFromQuery(query: URLSearchParams): ReportFilters {
  const d = defaultFilters();
  const day = (v: string | null, fallback: string) => (v !== null && /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(dayMs(v)) ? v : fallback);
  const group = query.get("group");
  return {
    from: day(query.get("from"), d.from),
    to: day(query.get("to"), d.to),
    group: group === "WEEK" || group === "MONTH" ? group : "DAY",
    customer: query.get("customer") ?? "",
    login: query.get("login") ?? "",
    datacenter: query.get("dc") ?? "",
    countries: query.get("countries") ?? "",
  };
}

export function filtersToQuery(f: ReportFilters): string {
  const q = new URLSearchParams({ from: f.from, to: f.to });
  if (f.group !== "DAY") q.set("group", f.group);
  if (f.customer) q.set("customer", f.customer);
  if (f.login) q.set("login", f.login);
  if (f.datacenter) q.set("dc", f.datacenter);
  if (f.countries) q.set("countries", f.countries);
  return q.toString();
}

/** The first day of the period (day, ISO week from Monday, month) that holds `day`, as the API names it. */
export function periodOf(day: string, group: Grouping): string {
  const ms = dayMs(day);
  if (group === "DAY") return day;
  if (group === "MONTH") return `${day.slice(0, 7)}-01`;
  const weekday = (new Date(ms).getUTCDay() + 6) % 7;
  return isoDay(ms - weekday * DAY);
}

/** Every period from the one holding `from` to the one holding `to`, oldest first. */
export function periodsBetween(from: string, to: string, group: Grouping): string[] {
  const out: string[] = [];
  const end = dayMs(to);
  let p = periodOf(from, group);
  while (dayMs(p) <= end) {
    out.push(p);
    if (group === "DAY") p = isoDay(dayMs(p) + DAY);
    else if (group === "WEEK") p = isoDay(dayMs(p) + 7 * DAY);
    else {
      const [y, m] = p.split("-").map(Number);
      p = isoDay(Date.UTC(y!, m!, 1));
    }
  }
  return out;
}

export interface OutRow {
  period: string;
  faxes: number;
  delivered: number;
  failed: number;
  pages: number;
  attempts: number;
  lineSeconds: number;
  successRate: number | null;
}

export interface InRow {
  period: string;
  faxes: number;
  ok: number;
  partial: number;
  failed: number;
  pages: number;
  lineSeconds: number;
  successRate: number | null;
}

export interface ReportData {
  sent: { totals: Omit<OutRow, "period"> & { attemptsPerDeliveredFax: number | null }; rows: OutRow[]; truncated: boolean };
  received: { totals: Omit<InRow, "period">; rows: InRow[]; truncated: boolean };
  reasons: { rows: { reason: string | null; faxes: number }[] };
  countries: { rows: { country: string | null; faxes: number; delivered: number }[] };
  failing: { number: string; country: string; failedFaxes: number; attempts: number; reasons: { reason: string; faxes: number }[] }[];
}

const OUT = "faxes delivered failed pages attempts lineSeconds successRate";
const IN = "faxes ok partial failed pages lineSeconds successRate";

export const REPORTS_QUERY = `query ConsoleReports($period: DatePeriod!, $customerId: String, $groupBy: [FaxOutSummaryGrouping!], $groupIn: [FaxInSummaryGrouping!], $out: FaxOutSummaryFilter, $in: FaxInSummaryFilter, $failures: FaxOutFailureFilter) {
  sent: faxOutSummary(customerId: $customerId, datePeriod: $period, filter: $out, groupBy: $groupBy) { totals { ${OUT} attemptsPerDeliveredFax } rows { period ${OUT} } truncated }
  received: faxInSummary(customerId: $customerId, datePeriod: $period, filter: $in, groupBy: $groupIn) { totals { ${IN} } rows { period ${IN} } truncated }
  reasons: faxOutSummary(customerId: $customerId, datePeriod: $period, filter: $out, groupBy: [REASON]) { rows { reason faxes } }
  countries: faxOutSummary(customerId: $customerId, datePeriod: $period, filter: $out, groupBy: [COUNTRY], limit: 20) { rows { country faxes delivered } }
  failing: faxOutFailingDestinations(customerId: $customerId, datePeriod: $period, filter: $failures, limit: 10) { number country failedFaxes attempts reasons { reason faxes } }
}`;

const list = (text: string) =>
  text
    .split(/[\s,;]+/)
    .map((v) => v.trim().toUpperCase())
    .filter((v) => v !== "");

/** The query's variables for the filters; `operator` may name a customer or none. */
export function reportVariables(f: ReportFilters, viewer: { operator: boolean; manager: boolean }) {
  const values = (v: string[]) => ({ values: v });
  const common: Record<string, { values: string[] }> = {};
  if (f.datacenter) common.datacenters = values([f.datacenter]);
  const countries = list(f.countries);
  if (countries.length > 0) common.countries = values(countries);
  const out = { ...common };
  if (f.login && (viewer.operator || viewer.manager)) out.logins = values([f.login.trim()]);
  return {
    period: { fromIncluded: `${f.from}T00:00:00.000Z`, toExcluded: `${isoDay(dayMs(f.to) + DAY)}T00:00:00.000Z` },
    customerId: viewer.operator && f.customer.trim() !== "" ? f.customer.trim() : null,
    groupBy: [f.group],
    groupIn: [f.group],
    out,
    in: { ...common },
    failures: out,
  };
}

export class ReportFailure extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/** Runs the query; a refusal (a period too long, another customer) throws with the catalogue's words. */
export async function loadReports(variables: ReturnType<typeof reportVariables>): Promise<ReportData> {
  // A refused request answers its error's status, which call() throws with the first error's words.
  const answer = await call<{ data?: ReportData | null; errors?: { message: string; extensions?: { code?: string } }[] }>("POST", "/graphql", { query: REPORTS_QUERY, variables, operationName: "ConsoleReports" });
  if (answer.errors && answer.errors.length > 0) throw new ReportFailure(answer.errors[0]!.message, answer.errors[0]!.extensions?.code ?? "error");
  return answer.data!;
}

/** Links to the node's streaming exports of the filtered usage records and summaries. */
export function exportLinks(f: ReportFilters, custNr: string | null) {
  const period = { from: `${f.from}T00:00:00.000Z`, to: `${isoDay(dayMs(f.to) + DAY)}T00:00:00.000Z` };
  const countries = list(f.countries);
  const base = (customer: string, path: string, params: Record<string, string>, format: "csv" | "json") =>
    `/reporting/v1/${encodeURIComponent(customer)}${path}?${new URLSearchParams({ ...period, ...params, format }).toString()}`;
  const out: Record<string, string> = {};
  if (f.login) out.accountId = f.login.trim();
  if (f.datacenter) out.jobSubmissionDc = f.datacenter;
  if (countries.length > 0) out.calledCountry = countries.join(",");
  const summary: Record<string, string> = { groupBy: f.group };
  if (f.login) summary.logins = f.login.trim();
  if (f.datacenter) summary.datacenters = f.datacenter;
  if (countries.length > 0) summary.countries = countries.join(",");
  const summaryIn: Record<string, string> = { groupBy: f.group };
  if (f.datacenter) summaryIn.datacenters = f.datacenter;
  if (countries.length > 0) summaryIn.countries = countries.join(",");
  const customer = custNr ?? "*";
  return {
    outRecords: custNr === null ? null : (format: "csv" | "json") => base(custNr, "/fax-out/records", out, format),
    inRecords: custNr === null ? null : (format: "csv" | "json") => base(custNr, "/fax-in/records", {}, format),
    outSummary: (format: "csv" | "json") => base(customer, "/fax-out/summary", summary, format),
    inSummary: (format: "csv" | "json") => base(customer, "/fax-in/summary", summaryIn, format),
  };
}

/**
 * Who sees what in the reporting interface: the REST API's tenancy, widened to the region.
 *  - a plain login: its own jobs, and its customer's receptions (receptions belong to the
 *    customer's topics, not to a login, as in the pull API);
 *  - a manager (logins.is_manager): every login's jobs of its customer;
 *  - an operator (logins.is_admin): any customer, and in the aggregates all customers at once
 *    (customerId omitted).
 * Another customer's number is refused as the REST API refuses it in the path (401
 * customer_mismatch). Every report covers both data centers of the node's region: on a shared
 * region store that is both data centers' jobs and receptions; with a store per data center, the
 * rows of this store (docs/reporting.md "Data centers").
 */
import type { AuthenticatedAccount } from "../api/plugins/authenticate.ts";
import { ApiError } from "../errors/api-errors.ts";
import type { RollupScope } from "../store/queries/report-aggregates.ts";
import type { UdrScope } from "../store/queries/report-udrs.ts";

export interface ReportingViewer {
  account: AuthenticatedAccount;
  /** The region's data centers. */
  datacenters: readonly string[];
}

function checkCustomer(viewer: ReportingViewer, customerId: string): void {
  if (!viewer.account.isAdmin && customerId !== viewer.account.custNr) {
    throw new ApiError("customer_mismatch", `Login "${viewer.account.login}" belongs to customer ${viewer.account.custNr}, not ${customerId}`);
  }
}

/** The login whose jobs a viewer sees: its own, or null (every login) for managers and operators. */
function ownLogin(viewer: ReportingViewer): string | null {
  return viewer.account.isAdmin || viewer.account.isManager ? null : viewer.account.login;
}

/** Outbound usage records of a customer. */
export function outUdrScope(viewer: ReportingViewer, customerId: string): UdrScope {
  checkCustomer(viewer, customerId);
  return { custNr: customerId, login: ownLogin(viewer), datacenters: viewer.datacenters };
}

/** Inbound usage records of a customer (every login of it sees them). */
export function inUdrScope(viewer: ReportingViewer, customerId: string): UdrScope {
  checkCustomer(viewer, customerId);
  return { custNr: customerId, login: null, datacenters: viewer.datacenters };
}

/** Aggregates: customerId null means the viewer's own customer, or every customer for an operator. */
export function rollupScope(viewer: ReportingViewer, customerId: string | null, direction: "out" | "in"): RollupScope {
  if (customerId !== null) checkCustomer(viewer, customerId);
  const custNr = customerId ?? (viewer.account.isAdmin ? null : viewer.account.custNr);
  return { custNr, login: direction === "in" ? null : ownLogin(viewer), datacenters: viewer.datacenters };
}

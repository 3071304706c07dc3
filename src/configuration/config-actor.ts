/**
 * Who may use the configuration API, and on which customer (docs/config-api.md "Access"):
 *  - a login that manages its customer's account (logins.is_manager): its own customer only; a
 *    `customer` query parameter naming another is refused as the REST API refuses a foreign
 *    customer number (401 customer_mismatch);
 *  - an operator (logins.is_admin): any customer, which it names in every request with the
 *    `customer` query parameter (400 customer_required without it, 404 customer_not_found for
 *    one that does not exist);
 *  - any other login: 403 config_access_denied.
 * Authentication is the REST API's (HTTP Basic, or the console's session with its CSRF header).
 */
import type { FastifyRequest } from "fastify";
import type { Kysely } from "kysely";
import { ApiError } from "../errors/api-errors.ts";
import type { Database } from "../store/database.ts";

export type ConfigRole = "manager" | "operator";

/** The login acting, its role, and the customer it acts on. */
export interface ConfigActor {
  login: string;
  role: ConfigRole;
  custNr: string;
}

export async function configActor(db: Kysely<Database>, request: FastifyRequest): Promise<ConfigActor> {
  const account = request.account;
  if (!account) throw new ApiError("authentication_failed");
  if (!account.isAdmin && !account.isManager) {
    throw new ApiError(
      "config_access_denied",
      `Login "${account.login}" may not use the configuration API: it is for logins that manage their customer's account (faxline accounts set-manager) and for operators`,
    );
  }
  const named = (request.query as { customer?: unknown } | undefined)?.customer;
  const customer = typeof named === "string" && named.trim() !== "" ? named.trim() : undefined;
  if (!account.isAdmin) {
    if (customer !== undefined && customer !== account.custNr) {
      throw new ApiError("customer_mismatch", `Login "${account.login}" belongs to customer ${account.custNr}, not ${customer}`);
    }
    return { login: account.login, role: "manager", custNr: account.custNr };
  }
  if (customer === undefined) throw new ApiError("customer_required", "An operator names the customer it configures: add ?customer=<customer number> to the request");
  const found = await db.selectFrom("customers").select("cust_nr").where("cust_nr", "=", customer).executeTakeFirst();
  if (!found) throw new ApiError("customer_not_found", `There is no customer "${customer}"`);
  return { login: account.login, role: "operator", custNr: customer };
}

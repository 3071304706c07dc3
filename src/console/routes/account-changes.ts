/**
 * What the console's routes that change a customer's account share: only a login that manages the
 * account may (403 manager_only), and an accounts/* check that refuses a value (AccountError)
 * becomes a 400 setting_invalid whose message the page shows beside the form.
 */
import type { FastifyRequest } from "fastify";
import { AccountError } from "../../accounts/accounts.ts";
import { ApiError } from "../../errors/api-errors.ts";
import type { ConsoleDeps } from "../console-deps.ts";

/** The session of a login that manages its customer's account, or 403 manager_only. */
export async function requireManager(deps: ConsoleDeps, request: FastifyRequest) {
  const session = await deps.sessions.require(request);
  if (!session.isManager) {
    throw new ApiError("manager_only", `Login "${session.login}" may not change the settings of customer ${session.custNr}; a login that manages the account can, or an operator with faxline accounts set-manager`);
  }
  return session;
}

/** Runs an accounts/* change; its AccountError becomes a 400 setting_invalid. */
export async function accountChange<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof AccountError) throw new ApiError("setting_invalid", err.message);
    throw err;
  }
}

/**
 * The configuration API (/config/v2) as the console speaks it: through @faxline/client's
 * FaxlineConfiguration with the signed-in session (its cookie and CSRF token), so the pages
 * are checked, refused and audited exactly as any client is. A 401 other than
 * customer_mismatch means the session is gone: the shell shows the sign-in page.
 */
import { FaxlineApiError, FaxlineConfiguration, FaxlineConnectionError } from "@faxline/client/configuration";
import { currentCsrfToken, sessionEnded } from "./api.ts";

export { FaxlineApiError, FaxlineConfiguration };

const watchedFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  if (response.status === 401) {
    const body = (await response.clone().json().catch(() => ({}))) as { error?: string; message?: string };
    if (body.error !== "customer_mismatch") sessionEnded(body.message ?? "The session has ended");
  }
  return response;
};

/** A client of the configuration API for `custNr` (a manager's own customer; any for an operator). */
export function configurationOf(custNr: string): FaxlineConfiguration {
  return new FaxlineConfiguration({ baseUrl: "", customerNumber: custNr, session: { csrfToken: currentCsrfToken }, fetch: watchedFetch });
}

/** What a failed call says to the person: the API's message, or that the node cannot be reached. */
export function messageOf(err: unknown): string {
  if (err instanceof FaxlineApiError) return err.message;
  if (err instanceof FaxlineConnectionError) return "The Faxline node cannot be reached. Check your connection and try again.";
  return err instanceof Error ? err.message : String(err);
}

/**
 * FaxlineConfiguration: the configuration API (/config/v2; docs/config-api.md). No Node.js
 * module is used here, so it runs in Node.js 20 and later and in a browser: a program signs in
 * with a login and password (HTTP Basic); the web console, already signed in, passes its
 * session's CSRF token instead (`session`), and its cookie goes along (same origin).
 */
import { requestJson } from "./errors.ts";
import type { operations } from "./openapi.ts";

export { FaxlineApiError, FaxlineConnectionError } from "./errors.ts";

type JsonBody<O extends keyof operations, S extends keyof operations[O]["responses"]> = operations[O]["responses"][S] extends { content: { "application/json": infer T } } ? T : never;

/** An inbound number as the configuration API shows it (the provider's field names). */
export type InboundNumber = JsonBody<"getInboundNumber", 200>;
export type InboundNumberChange = NonNullable<operations["putInboundNumber"]["requestBody"]>["content"]["application/json"];
export type InboundProfile = JsonBody<"getInboundProfile", 200>;
export type InboundProfileChange = NonNullable<operations["putInboundProfile"]["requestBody"]>["content"]["application/json"];
export type InboundSettings = JsonBody<"getInboundSettings", 200>;
export type InboundSettingsChange = NonNullable<operations["putInboundSettings"]["requestBody"]>["content"]["application/json"];
export type ConfigAuditPage = JsonBody<"listConfigAudit", 200>;
/** A mail-to-fax user (docs/mail-to-fax.md; the provider's Mail to Fax group). */
export type OutboundUser = JsonBody<"getOutboundUser", 200>;
export type OutboundUserChange = NonNullable<operations["putOutboundUser"]["requestBody"]>["content"]["application/json"];
export type OutboundProfile = JsonBody<"getOutboundProfile", 200>;
export type OutboundProfileChange = NonNullable<operations["putOutboundProfile"]["requestBody"]>["content"]["application/json"];
export type OutboundSettings = JsonBody<"getOutboundSettings", 200>;
export type OutboundSettingsChange = NonNullable<operations["putOutboundSettings"]["requestBody"]>["content"]["application/json"];
export type OutboundDomain = JsonBody<"putOutboundDomain", 200>;

export interface InboundNumberFilters {
  /** Only numbers with (true) or without (false) a profile. */
  assigned?: boolean;
  /** Only numbers starting with this, e.g. "+4989". */
  prefix?: string;
  active?: boolean;
  costCenter?: string;
  /** Show the effective values of customer → profile → number. */
  inherit?: boolean;
  limit?: number;
  offset?: number;
}

/** Where and as whom: a login and password (HTTP Basic), or the console's signed-in session. */
export type FaxlineConfigurationOptions = {
  /** The node, e.g. http://127.0.0.1:8080 (without /config/v2); "" in a page the node serves. */
  baseUrl: string;
  /** The customer configured: a manager's own, or any customer for an operator. */
  customerNumber: string;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
} & ({ login: string; password: string } | { session: { csrfToken: () => string } });

/** UTF-8 text as base64, without Node's Buffer (for Basic credentials in any runtime). */
function base64(text: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * The configuration API (/config/v2; docs/config-api.md), for logins that manage their
 * customer's account and for operators. `customerNumber` is the customer configured: a
 * manager's own, or any customer for an operator (sent as the `customer` parameter).
 *
 *   const config = new FaxlineConfiguration({ baseUrl, customerNumber: "99999TE", login: "demo", password: "demo-password" });
 *   await config.putInboundProfile("orders", { email: { recipients: ["orders@example.com"] } });
 *   await config.patchInboundNumber("+4940555020", { profile: "orders", faxId: "+49 40 555020" });
 *
 * In a page of the node's own console (same origin, signed in):
 *
 *   const config = new FaxlineConfiguration({ baseUrl: "", customerNumber: "99999TE", session: { csrfToken: () => token } });
 */
export class FaxlineConfiguration {
  readonly #base: string;
  readonly #custNr: string;
  readonly #headers: (method: string) => Record<string, string>;
  readonly #fetch: typeof fetch;

  constructor(options: FaxlineConfigurationOptions) {
    this.#base = options.baseUrl.replace(/\/+$/, "");
    this.#custNr = options.customerNumber;
    if ("session" in options) {
      const session = options.session;
      this.#headers = (method): Record<string, string> => (method === "GET" ? {} : { "x-csrf-token": session.csrfToken() });
    } else {
      const basic = `Basic ${base64(`${options.login}:${options.password}`)}`;
      this.#headers = () => ({ authorization: basic });
    }
    // A bare `fetch` reference called as a method of this object would throw "Illegal invocation" in a browser.
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  /** The customer configured (the `customer` parameter of every request). */
  get customerNumber(): string {
    return this.#custNr;
  }

  /**
   * Any request to the configuration API: `path` below /config/v2 (e.g. "/inbound/numbers"),
   * query parameters (undefined ones left out; `customer` added), a JSON body. Non-2xx answers
   * throw FaxlineApiError with the catalogue's code.
   */
  async request<T>(method: string, path: string, query: Record<string, string | number | boolean | undefined> = {}, body?: unknown): Promise<T> {
    const params = new URLSearchParams({ customer: this.#custNr });
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
    return requestJson<T>(this.#fetch, this.#base, `${this.#base}/config/v2${path}?${params}`, {
      method,
      headers: { accept: "application/json", ...this.#headers(method), ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "same-origin",
    });
  }

  listInboundNumbers(filters: InboundNumberFilters = {}): Promise<InboundNumber[]> {
    const { costCenter, ...rest } = filters;
    return this.request("GET", "/inbound/numbers", { ...rest, "cost-center": costCenter });
  }
  getInboundNumber(number: string, options: { inherit?: boolean } = {}): Promise<InboundNumber> {
    return this.request("GET", `/inbound/numbers/${encodeURIComponent(number)}`, options);
  }
  /** Sets the number's own settings and profile; fields left out are not set. */
  putInboundNumber(number: string, change: InboundNumberChange): Promise<InboundNumber> {
    return this.request("PUT", `/inbound/numbers/${encodeURIComponent(number)}`, {}, change);
  }
  /** Changes the fields given. */
  patchInboundNumber(number: string, change: InboundNumberChange): Promise<InboundNumber> {
    return this.request("PATCH", `/inbound/numbers/${encodeURIComponent(number)}`, {}, change);
  }
  /** Takes the number away from the customer (operators). */
  async deleteInboundNumber(number: string): Promise<void> {
    await this.request("DELETE", `/inbound/numbers/${encodeURIComponent(number)}`);
  }
  listInboundProfiles(options: { inherit?: boolean; limit?: number; offset?: number } = {}): Promise<InboundProfile[]> {
    return this.request("GET", "/inbound/profiles", options);
  }
  getInboundProfile(name: string, options: { inherit?: boolean } = {}): Promise<InboundProfile> {
    return this.request("GET", `/inbound/profiles/${encodeURIComponent(name)}`, options);
  }
  /** Creates or replaces a profile; deliveries left out are removed (secrets stay unless new ones are given). */
  putInboundProfile(name: string, change: InboundProfileChange): Promise<InboundProfile> {
    return this.request("PUT", `/inbound/profiles/${encodeURIComponent(name)}`, {}, change);
  }
  patchInboundProfile(name: string, change: InboundProfileChange): Promise<InboundProfile> {
    return this.request("PATCH", `/inbound/profiles/${encodeURIComponent(name)}`, {}, change);
  }
  async deleteInboundProfile(name: string): Promise<void> {
    await this.request("DELETE", `/inbound/profiles/${encodeURIComponent(name)}`);
  }
  getInboundSettings(): Promise<InboundSettings> {
    return this.request("GET", "/inbound/settings");
  }
  putInboundSettings(change: InboundSettingsChange): Promise<InboundSettings> {
    return this.request("PUT", "/inbound/settings", {}, change);
  }
  patchInboundSettings(change: InboundSettingsChange): Promise<InboundSettings> {
    return this.request("PATCH", "/inbound/settings", {}, change);
  }
  listOutboundUsers(options: { inherit?: boolean; limit?: number; offset?: number } = {}): Promise<OutboundUser[]> {
    return this.request("GET", "/outbound/users", options);
  }
  getOutboundUser(email: string, options: { inherit?: boolean } = {}): Promise<OutboundUser> {
    return this.request("GET", `/outbound/users/${encodeURIComponent(email)}`, options);
  }
  /** Creates or replaces a mail-to-fax user (the provider's upsert); `pin` is write-only. */
  putOutboundUser(email: string, user: OutboundUserChange): Promise<OutboundUser> {
    return this.request("PUT", `/outbound/users/${encodeURIComponent(email)}`, {}, user);
  }
  async deleteOutboundUser(email: string): Promise<void> {
    await this.request("DELETE", `/outbound/users/${encodeURIComponent(email)}`);
  }
  listOutboundProfiles(options: { inherit?: boolean; limit?: number; offset?: number } = {}): Promise<OutboundProfile[]> {
    return this.request("GET", "/outbound/profiles", options);
  }
  getOutboundProfile(name: string, options: { inherit?: boolean } = {}): Promise<OutboundProfile> {
    return this.request("GET", `/outbound/profiles/${encodeURIComponent(name)}`, options);
  }
  putOutboundProfile(name: string, profile: OutboundProfileChange): Promise<OutboundProfile> {
    return this.request("PUT", `/outbound/profiles/${encodeURIComponent(name)}`, {}, profile);
  }
  async deleteOutboundProfile(name: string): Promise<void> {
    await this.request("DELETE", `/outbound/profiles/${encodeURIComponent(name)}`);
  }
  getOutboundSettings(options: { inherit?: boolean } = {}): Promise<OutboundSettings> {
    return this.request("GET", "/outbound/settings", options);
  }
  putOutboundSettings(settings: OutboundSettingsChange): Promise<OutboundSettings> {
    return this.request("PUT", "/outbound/settings", {}, settings);
  }
  listOutboundDomains(): Promise<OutboundDomain[]> {
    return this.request("GET", "/outbound/domains");
  }
  /** Allows a sender domain; `pin` (write-only) lets its senders authorise with PIN=… in the subject. */
  putOutboundDomain(domain: string, options: { pin?: string | null } = {}): Promise<OutboundDomain> {
    return this.request("PUT", `/outbound/domains/${encodeURIComponent(domain)}`, {}, options);
  }
  async deleteOutboundDomain(domain: string): Promise<void> {
    await this.request("DELETE", `/outbound/domains/${encodeURIComponent(domain)}`);
  }
  /** The audit log, newest first. */
  audit(options: { limit?: number; offset?: number; resource?: string; key?: string } = {}): Promise<ConfigAuditPage> {
    return this.request("GET", "/audit", options);
  }
}

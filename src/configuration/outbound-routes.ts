/**
 * The configuration API's mail-to-fax resources (docs/config-api.md "Mail-to-fax"; the
 * provider's "Mail to Fax" and "Mail to Fax Profiles" groups), under the API's base path:
 *
 *   GET    /outbound/users              ?limit ?offset ?inherit (Faxline: the provider's listing is not public)
 *   GET    /outbound/users/{email}      ?inherit
 *   PUT    /outbound/users/{email}      create or replace (the provider's upsert)
 *   DELETE /outbound/users/{email}
 *   GET    /outbound/profiles           ?limit ?offset ?inherit
 *   GET    /outbound/profiles/{name}    ?inherit
 *   PUT    /outbound/profiles/{name}    create or replace
 *   DELETE /outbound/profiles/{name}    refused while users have it (409 profile_in_use)
 *   GET    /outbound/settings           the customer's level, its booking login and domains (Faxline)
 *   PUT    /outbound/settings
 *   GET    /outbound/domains            the sender domains the customer allows (Faxline)
 *   PUT    /outbound/domains/{domain}   allow one (with an optional PIN)
 *   DELETE /outbound/domains/{domain}
 *
 * `inherit=true` shows the effective values of customer → profile → user
 * (mail-to-fax/settings.ts effectiveSettings). Every change goes through auditedChange; PINs are
 * write-only and appear in the audit log as "(set)".
 */
import type { FastifyInstance } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import type { Kysely } from "kysely";
import { hashPassword } from "../accounts/passwords.ts";
import { ApiErrorBodySchema } from "../api/schemas/reports.ts";
import { ApiError } from "../errors/api-errors.ts";
import { checkSettings, effectiveSettings, type MailToFaxSettings } from "../mail-to-fax/settings.ts";
import type { Database } from "../store/database.ts";
import {
  deleteMailToFaxDomain,
  deleteMailToFaxProfile,
  deleteMailToFaxUser,
  getMailToFaxCustomer,
  getMailToFaxProfile,
  getMailToFaxUser,
  listMailToFaxDomains,
  listMailToFaxProfiles,
  listMailToFaxUsers,
  normalizeEmail,
  putMailToFaxCustomer,
  putMailToFaxDomain,
  putMailToFaxProfile,
  putMailToFaxUser,
  type MailToFaxUser,
} from "../store/queries/mail-to-fax.ts";
import { auditedChange } from "./audit-log.ts";
import { configActor } from "./config-actor.ts";
import { BooleanText, CustomerQuery, PageQuery } from "./config-schemas.ts";
import { pageOf, type ConfigRouteDeps } from "./inbound-routes.ts";
import {
  OutboundDomainChangeSchema,
  OutboundDomainSchema,
  OutboundProfileChangeSchema,
  OutboundProfileSchema,
  OutboundSettingsChangeSchema,
  OutboundSettingsSchema,
  OutboundUserChangeSchema,
  OutboundUserSchema,
  type OutboundProfileView,
  type OutboundSettingsView,
  type OutboundUserView,
} from "./outbound-schemas.ts";

const ERRORS = { 400: ApiErrorBodySchema, 401: ApiErrorBodySchema, 403: ApiErrorBodySchema, 404: ApiErrorBodySchema };
const CHANGE_ERRORS = { ...ERRORS, 409: ApiErrorBodySchema };
const GROUPS = ["general", "fax", "dialing", "reportEmail", "coverSheet", "personalization"] as const;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DOMAIN = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/;
const PROFILE_NAME = /^[A-Za-z0-9._-]{1,64}$/;
const PIN = /^[0-9]{6,12}$/;

/** The settings groups of a body, checked; 400 setting_invalid naming the first wrong field. */
function settingsOf(body: Record<string, unknown>): MailToFaxSettings {
  const groups: Record<string, unknown> = {};
  for (const g of GROUPS) if (body[g] !== undefined && body[g] !== null) groups[g] = body[g];
  const { settings, problems } = checkSettings(groups);
  const first = problems[0];
  if (first !== undefined) throw new ApiError("setting_invalid", `${first.path} ${first.message}`);
  return settings;
}

/** The groups as shown: each level's own (inherit=false), or the effective ones. */
function groupsView(own: MailToFaxSettings, effective: ReturnType<typeof effectiveSettings> | null) {
  const source = (effective ?? own) as Record<string, unknown>;
  return {
    general: { ...((source.general as object | undefined) ?? {}) },
    fax: { ...((source.fax as object | undefined) ?? {}) },
    dialing: { ...((source.dialing as object | undefined) ?? {}) },
    reportEmail: { ...((source.reportEmail as object | undefined) ?? {}) },
    coverSheet: { ...((source.coverSheet as object | undefined) ?? {}) },
    personalization: { ...((source.personalization as Record<string, string> | undefined) ?? {}) },
  };
}

async function userView(db: Kysely<Database>, user: MailToFaxUser, inherit: boolean): Promise<OutboundUserView> {
  let effective = null;
  if (inherit) {
    const customer = await getMailToFaxCustomer(db, user.custNr);
    const profile = user.profile === null ? null : await getMailToFaxProfile(db, user.custNr, user.profile);
    effective = effectiveSettings(customer?.settings ?? null, profile?.settings ?? null, user.settings);
  }
  const groups = groupsView(user.settings, effective);
  return { email: user.email, ...groups, general: { client: "default", profile: user.profile, ...groups.general }, hasPin: user.hasPin };
}

async function profileView(db: Kysely<Database>, custNr: string, name: string, settings: MailToFaxSettings, inherit: boolean): Promise<OutboundProfileView> {
  const customer = inherit ? await getMailToFaxCustomer(db, custNr) : null;
  const effective = inherit ? effectiveSettings(customer?.settings ?? null, settings, null) : null;
  const users = await db.selectFrom("m2f_users").select((eb) => eb.fn.countAll<string | number>().as("n")).where("cust_nr", "=", custNr).where("profile", "=", name).executeTakeFirst();
  return { name, ...groupsView(settings, effective), users: Number(users?.n ?? 0) };
}

async function settingsView(db: Kysely<Database>, custNr: string, inherit: boolean): Promise<OutboundSettingsView> {
  const customer = await getMailToFaxCustomer(db, custNr);
  const settings = customer?.settings ?? {};
  return {
    customer: custNr,
    login: customer?.login ?? null,
    ...groupsView(settings, inherit ? effectiveSettings(settings, null, null) : null),
    domains: await listMailToFaxDomains(db, custNr),
  };
}

/** The audit log's view of a user: its settings and whether it has a PIN; null when absent. */
async function auditedUser(db: Kysely<Database>, custNr: string, email: string): Promise<Record<string, unknown> | null> {
  const user = await getMailToFaxUser(db, email);
  return user === null || user.custNr !== custNr ? null : { ...(await userView(db, user, false)) };
}

export function registerOutboundConfigRoutes(root: FastifyInstance, deps: ConfigRouteDeps): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const { db } = deps.store;
  const Inherit = { inherit: Type.Optional(BooleanText) };
  const UserParams = Type.Object({ email: Type.String({ maxLength: 320, description: "The user's e-mail address" }) });
  const ProfileParams = Type.Object({ name: Type.String({ maxLength: 64 }) });
  const DomainParams = Type.Object({ domain: Type.String({ maxLength: 253 }) });

  const emailOf = (text: string): string => {
    const email = normalizeEmail(text);
    if (!EMAIL.test(email)) throw new ApiError("setting_invalid", `"${text}" is not an e-mail address`);
    return email;
  };

  async function ownUser(custNr: string, email: string): Promise<MailToFaxUser> {
    const user = await getMailToFaxUser(db, email);
    if (user === null || user.custNr !== custNr) throw new ApiError("user_not_found", `Customer ${custNr} has no mail-to-fax user ${email}`);
    return user;
  }

  app.get(
    "/outbound/users",
    {
      schema: {
        summary: "The customer's mail-to-fax users",
        description: "Sorted by address. inherit=true shows the effective settings of customer → profile → user. (Faxline: the provider's listing is not public.)",
        operationId: "listOutboundUsers",
        tags: ["configuration"],
        querystring: Type.Object({ ...CustomerQuery, ...PageQuery, ...Inherit }),
        response: { 200: Type.Array(OutboundUserSchema), ...ERRORS },
      },
    },
    async (request) => {
      const actor = await configActor(db, request);
      const users = await listMailToFaxUsers(db, actor.custNr, pageOf(request.query));
      return Promise.all(users.map((u) => userView(db, u, request.query.inherit === "true")));
    },
  );

  app.get(
    "/outbound/users/:email",
    {
      schema: {
        summary: "One mail-to-fax user",
        operationId: "getOutboundUser",
        tags: ["configuration"],
        params: UserParams,
        querystring: Type.Object({ ...CustomerQuery, ...Inherit }),
        response: { 200: OutboundUserSchema, ...ERRORS },
      },
    },
    async (request) => {
      const actor = await configActor(db, request);
      return userView(db, await ownUser(actor.custNr, emailOf(request.params.email)), request.query.inherit === "true");
    },
  );

  app.put(
    "/outbound/users/:email",
    {
      schema: {
        summary: "Create or replace a mail-to-fax user (the provider's upsert; groups left out are not set)",
        operationId: "putOutboundUser",
        tags: ["configuration"],
        params: UserParams,
        querystring: Type.Object(CustomerQuery),
        body: OutboundUserChangeSchema,
        response: { 200: OutboundUserSchema, ...CHANGE_ERRORS },
      },
    },
    async (request) => {
      const actor = await configActor(db, request);
      const email = emailOf(request.params.email);
      const body = request.body;
      if (body.email !== undefined && normalizeEmail(body.email) !== email) {
        throw new ApiError("setting_invalid", `email "${body.email}" is not the address in the path (${email}); a user's address is its key`);
      }
      const general = { ...(body.general ?? {}) } as Record<string, unknown>;
      const client = general.client;
      if (client !== undefined && client !== null && client !== "default") {
        throw new ApiError("setting_invalid", `general.client "${String(client)}": Faxline has no clients below the customer; leave it out or write "default"`);
      }
      const profile = typeof general.profile === "string" && general.profile !== "" ? general.profile : null;
      delete general.client;
      delete general.profile;
      const settings = settingsOf({ ...body, general });
      if (profile !== null && (await getMailToFaxProfile(db, actor.custNr, profile)) === null) {
        throw new ApiError("profile_not_found", `Customer ${actor.custNr} has no mail-to-fax profile "${profile}"; create it first (PUT /outbound/profiles/${profile})`);
      }
      if (body.pin !== undefined && body.pin !== null && !PIN.test(body.pin)) throw new ApiError("setting_invalid", "pin must be 6 to 12 digits");
      const holder = await getMailToFaxUser(db, email);
      if (holder !== null && holder.custNr !== actor.custNr) throw new ApiError("user_taken", `${email} is a mail-to-fax user of another customer; an address sends for one customer`);
      const pinHash = body.pin === undefined ? undefined : body.pin === null ? null : await hashPassword(body.pin);
      const now = deps.clock.now();
      await auditedChange(db, actor, { resource: "outbound/users", key: email }, now, async (trx) => {
        const before = await auditedUser(trx, actor.custNr, email);
        await putMailToFaxUser(trx, { email, custNr: actor.custNr, profile, active: settings.general?.active !== false, settings, ...(pinHash === undefined ? {} : { pinHash }) }, now);
        const after = await auditedUser(trx, actor.custNr, email);
        if (after !== null && typeof body.pin === "string") after.pin = "(set)";
        return { before, after, result: undefined };
      });
      return userView(db, await ownUser(actor.custNr, email), false);
    },
  );

  app.delete(
    "/outbound/users/:email",
    {
      schema: {
        summary: "Remove a mail-to-fax user",
        operationId: "deleteOutboundUser",
        tags: ["configuration"],
        params: UserParams,
        querystring: Type.Object(CustomerQuery),
        response: { 204: Type.Null(), ...ERRORS },
      },
    },
    async (request, reply) => {
      const actor = await configActor(db, request);
      const email = emailOf(request.params.email);
      await ownUser(actor.custNr, email);
      await auditedChange(db, actor, { resource: "outbound/users", key: email }, deps.clock.now(), async (trx) => {
        const before = await auditedUser(trx, actor.custNr, email);
        await deleteMailToFaxUser(trx, actor.custNr, email);
        return { before, after: null, result: undefined };
      });
      return reply.code(204).send(null);
    },
  );

  app.get(
    "/outbound/profiles",
    {
      schema: {
        summary: "The customer's mail-to-fax profiles",
        description: "Sorted by name; limit (default 100) and offset (default 0) as the provider's. inherit=true shows the effective settings of customer → profile.",
        operationId: "listOutboundProfiles",
        tags: ["configuration"],
        querystring: Type.Object({ ...CustomerQuery, ...PageQuery, ...Inherit }),
        response: { 200: Type.Array(OutboundProfileSchema), ...ERRORS },
      },
    },
    async (request) => {
      const actor = await configActor(db, request);
      const profiles = await listMailToFaxProfiles(db, actor.custNr, pageOf(request.query));
      return Promise.all(profiles.map((p) => profileView(db, actor.custNr, p.name, p.settings, request.query.inherit === "true")));
    },
  );

  app.get(
    "/outbound/profiles/:name",
    {
      schema: {
        summary: "One mail-to-fax profile",
        operationId: "getOutboundProfile",
        tags: ["configuration"],
        params: ProfileParams,
        querystring: Type.Object({ ...CustomerQuery, ...Inherit }),
        response: { 200: OutboundProfileSchema, ...ERRORS },
      },
    },
    async (request) => {
      const actor = await configActor(db, request);
      const profile = await getMailToFaxProfile(db, actor.custNr, request.params.name);
      if (profile === null) throw new ApiError("profile_not_found", `Customer ${actor.custNr} has no mail-to-fax profile "${request.params.name}"`);
      return profileView(db, actor.custNr, profile.name, profile.settings, request.query.inherit === "true");
    },
  );

  app.put(
    "/outbound/profiles/:name",
    {
      schema: {
        summary: "Create or replace a mail-to-fax profile (groups left out are not set)",
        operationId: "putOutboundProfile",
        tags: ["configuration"],
        params: ProfileParams,
        querystring: Type.Object(CustomerQuery),
        body: OutboundProfileChangeSchema,
        response: { 200: OutboundProfileSchema, ...CHANGE_ERRORS },
      },
    },
    async (request) => {
      const actor = await configActor(db, request);
      const { name } = request.params;
      if (!PROFILE_NAME.test(name)) throw new ApiError("setting_invalid", `profile name "${name}" must be 1 to 64 letters, digits, ".", "_" or "-"`);
      if (request.body.name !== undefined && request.body.name !== name) throw new ApiError("setting_invalid", `name "${request.body.name}" is not the name in the path (${name})`);
      const settings = settingsOf(request.body as Record<string, unknown>);
      const now = deps.clock.now();
      await auditedChange(db, actor, { resource: "outbound/profiles", key: name }, now, async (trx) => {
        const old = await getMailToFaxProfile(trx, actor.custNr, name);
        await putMailToFaxProfile(trx, { custNr: actor.custNr, name, settings }, now);
        return { before: old === null ? null : { name, ...groupsView(old.settings, null) }, after: { name, ...groupsView(settings, null) }, result: undefined };
      });
      return profileView(db, actor.custNr, name, settings, false);
    },
  );

  app.delete(
    "/outbound/profiles/:name",
    {
      schema: {
        summary: "Remove a mail-to-fax profile no user has",
        operationId: "deleteOutboundProfile",
        tags: ["configuration"],
        params: ProfileParams,
        querystring: Type.Object(CustomerQuery),
        response: { 204: Type.Null(), ...CHANGE_ERRORS },
      },
    },
    async (request, reply) => {
      const actor = await configActor(db, request);
      const { name } = request.params;
      const profile = await getMailToFaxProfile(db, actor.custNr, name);
      if (profile === null) throw new ApiError("profile_not_found", `Customer ${actor.custNr} has no mail-to-fax profile "${name}"`);
      const { users } = await profileView(db, actor.custNr, name, profile.settings, false);
      if (users > 0) throw new ApiError("profile_in_use", `${users} user${users === 1 ? " has" : "s have"} the profile "${name}"; give them another profile (or none) first`);
      await auditedChange(db, actor, { resource: "outbound/profiles", key: name }, deps.clock.now(), async (trx) => {
        await deleteMailToFaxProfile(trx, actor.custNr, name);
        return { before: { name, ...groupsView(profile.settings, null) }, after: null, result: undefined };
      });
      return reply.code(204).send(null);
    },
  );

  app.get(
    "/outbound/settings",
    {
      schema: {
        summary: "The customer's mail-to-fax settings, the top of the hierarchy (with the booking login and allowed domains; Faxline)",
        operationId: "getOutboundSettings",
        tags: ["configuration"],
        querystring: Type.Object({ ...CustomerQuery, ...Inherit }),
        response: { 200: OutboundSettingsSchema, ...ERRORS },
      },
    },
    async (request) => {
      const actor = await configActor(db, request);
      return settingsView(db, actor.custNr, request.query.inherit === "true");
    },
  );

  app.put(
    "/outbound/settings",
    {
      schema: {
        summary: "Set the customer's mail-to-fax settings and the login its mail-to-fax jobs are booked on",
        operationId: "putOutboundSettings",
        tags: ["configuration"],
        querystring: Type.Object(CustomerQuery),
        body: OutboundSettingsChangeSchema,
        response: { 200: OutboundSettingsSchema, ...CHANGE_ERRORS },
      },
    },
    async (request) => {
      const actor = await configActor(db, request);
      const body = request.body;
      if (body.customer !== undefined && body.customer !== actor.custNr) throw new ApiError("setting_invalid", `customer "${body.customer}" is not the customer configured (${actor.custNr})`);
      const login = await db.selectFrom("logins").select(["login", "disabled_at"]).where("login", "=", body.login).where("cust_nr", "=", actor.custNr).executeTakeFirst();
      if (!login) throw new ApiError("setting_invalid", `login "${body.login}" is not a login of customer ${actor.custNr}; mail-to-fax jobs are booked on one of the customer's logins`);
      const settings = settingsOf(body as Record<string, unknown>);
      const now = deps.clock.now();
      await auditedChange(db, actor, { resource: "outbound/settings", key: "" }, now, async (trx) => {
        const old = await getMailToFaxCustomer(trx, actor.custNr);
        await putMailToFaxCustomer(trx, { custNr: actor.custNr, login: body.login, settings }, now);
        return {
          before: old === null ? null : { login: old.login, ...groupsView(old.settings, null) },
          after: { login: body.login, ...groupsView(settings, null) },
          result: undefined,
        };
      });
      return settingsView(db, actor.custNr, false);
    },
  );

  app.get(
    "/outbound/domains",
    {
      schema: {
        summary: "The sender domains the customer allows (Faxline)",
        operationId: "listOutboundDomains",
        tags: ["configuration"],
        querystring: Type.Object(CustomerQuery),
        response: { 200: Type.Array(OutboundDomainSchema), ...ERRORS },
      },
    },
    async (request) => {
      const actor = await configActor(db, request);
      return listMailToFaxDomains(db, actor.custNr);
    },
  );

  app.put(
    "/outbound/domains/:domain",
    {
      schema: {
        summary: "Allow a sender domain, with an optional PIN (Faxline; docs/mail-to-fax.md \"Who may send\")",
        operationId: "putOutboundDomain",
        tags: ["configuration"],
        params: DomainParams,
        querystring: Type.Object(CustomerQuery),
        body: OutboundDomainChangeSchema,
        response: { 200: OutboundDomainSchema, ...CHANGE_ERRORS },
      },
    },
    async (request) => {
      const actor = await configActor(db, request);
      const domain = request.params.domain.trim().toLowerCase().replace(/\.$/, "");
      if (!DOMAIN.test(domain)) throw new ApiError("setting_invalid", `"${request.params.domain}" is not a domain name such as example.com`);
      const pin = request.body.pin;
      if (pin !== undefined && pin !== null && !PIN.test(pin)) throw new ApiError("setting_invalid", "pin must be 6 to 12 digits");
      const pinHash = typeof pin === "string" ? await hashPassword(pin) : null;
      const now = deps.clock.now();
      await auditedChange(db, actor, { resource: "outbound/domains", key: domain }, now, async (trx) => {
        const before = (await listMailToFaxDomains(trx, actor.custNr)).find((d) => d.domain === domain) ?? null;
        if (!(await putMailToFaxDomain(trx, { custNr: actor.custNr, domain, pinHash }, now))) {
          throw new ApiError("domain_taken", `Another customer allows ${domain}; a domain sends for one customer`);
        }
        const after: Record<string, unknown> = { domain, hasPin: pinHash !== null, ...(pinHash !== null ? { pin: "(set)" } : {}) };
        return { before, after, result: undefined };
      });
      return { domain, hasPin: pinHash !== null };
    },
  );

  app.delete(
    "/outbound/domains/:domain",
    {
      schema: {
        summary: "Stop allowing a sender domain (Faxline)",
        operationId: "deleteOutboundDomain",
        tags: ["configuration"],
        params: DomainParams,
        querystring: Type.Object(CustomerQuery),
        response: { 204: Type.Null(), ...ERRORS },
      },
    },
    async (request, reply) => {
      const actor = await configActor(db, request);
      const domain = request.params.domain.trim().toLowerCase().replace(/\.$/, "");
      const before = (await listMailToFaxDomains(db, actor.custNr)).find((d) => d.domain === domain) ?? null;
      if (before === null) throw new ApiError("domain_not_found", `Customer ${actor.custNr} does not allow ${domain}`);
      await auditedChange(db, actor, { resource: "outbound/domains", key: domain }, deps.clock.now(), async (trx) => {
        await deleteMailToFaxDomain(trx, actor.custNr, domain);
        return { before, after: null, result: undefined };
      });
      return reply.code(204).send(null);
    },
  );
}

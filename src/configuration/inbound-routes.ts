/**
 * The configuration API's inbound resources (docs/config-api.md), under the API's base path:
 *
 *   GET    /inbound/numbers            ?assigned ?prefix ?active ?cost-center ?inherit (the provider's filters) ?limit ?offset
 *   GET    /inbound/numbers/{number}   ?inherit
 *   PUT    /inbound/numbers/{number}   replace the number's own settings (and its profile)
 *   PATCH  /inbound/numbers/{number}   change the fields given
 *   DELETE /inbound/numbers/{number}   take the number away from the customer (operators)
 *   GET    /inbound/profiles           ?limit ?offset ?inherit
 *   GET    /inbound/profiles/{name}    ?inherit
 *   PUT    /inbound/profiles/{name}    create or replace
 *   PATCH  /inbound/profiles/{name}    change the fields given
 *   DELETE /inbound/profiles/{name}    its numbers stay the customer's, without a profile
 *   GET    /inbound/settings           the customer's level
 *   PUT    /inbound/settings, PATCH    change it
 *
 * Every request: the actor and customer of config-actor.ts (`?customer=` for operators); every
 * change through auditedChange (audit-log.ts).
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Kysely } from "kysely";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { AccountError } from "../accounts/accounts.ts";
import { ApiErrorBodySchema } from "../api/schemas/reports.ts";
import type { FaxlineConfig } from "../config/schema.ts";
import { ApiError } from "../errors/api-errors.ts";
import type { Clock } from "../lib/clock.ts";
import { normalizeFaxNumber, REGION_NUMBER_CONTEXT } from "../numbers/normalize-number.ts";
import type { Database } from "../store/database.ts";
import type { Store } from "../store/store.ts";
import type { AuditTarget } from "./audit-log.ts";
import { auditedInboundChange } from "./audited-inbound.ts";
import { configActor, type ConfigActor } from "./config-actor.ts";
import {
  BooleanText,
  CustomerQuery,
  InboundNumberChangeSchema,
  InboundNumberSchema,
  InboundProfileChangeSchema,
  InboundProfileSchema,
  InboundSettingsChangeSchema,
  InboundSettingsSchema,
  PageQuery,
} from "./config-schemas.ts";
import { changeCustomerSettings, changeNumber, changeProfile, deleteNumber, deleteProfile, writesSecret, type ChangeMode } from "./inbound-changes.ts";
import { auditedNumber, auditedProfile, effectiveOfNumber, loadInboundTree, numberView, profileView, settingsView, type InboundTree } from "./inbound-views.ts";

export interface ConfigRouteDeps {
  config: FaxlineConfig;
  store: Store;
  clock: Clock;
}

const ERRORS = { 400: ApiErrorBodySchema, 401: ApiErrorBodySchema, 403: ApiErrorBodySchema, 404: ApiErrorBodySchema };
const CHANGE_ERRORS = { ...ERRORS, 409: ApiErrorBodySchema };

/** A value refused by the inbound checks is a 400 setting_invalid whose message says why. */
export async function settingChange<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof AccountError) throw new ApiError("setting_invalid", err.message);
    throw err;
  }
}

/** limit and offset of a listing: limit 1 to 1000 (default 100), offset from 0. */
export function pageOf(query: { limit?: string | undefined; offset?: string | undefined }): { limit: number; offset: number } {
  const limit = query.limit === undefined ? 100 : Number(query.limit);
  const offset = query.offset === undefined ? 0 : Number(query.offset);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new ApiError("page_invalid", `limit is ${query.limit}; give 1 to 1000`);
  if (!Number.isInteger(offset) || offset < 0) throw new ApiError("page_invalid", `offset is ${query.offset}; give 0 or more`);
  return { limit, offset };
}

const flag = (text: string | undefined): boolean | undefined => (text === undefined ? undefined : text === "true");

export function registerInboundConfigRoutes(root: FastifyInstance, deps: ConfigRouteDeps): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const { db } = deps.store;
  const region = REGION_NUMBER_CONTEXT[deps.config.node.region];

  function e164Of(text: string): string {
    const n = normalizeFaxNumber(text, region);
    if (!n.ok) throw new ApiError("number_invalid", `"${text}" is not a fax number: ${n.message}`);
    return n.e164;
  }

  async function numberAnswer(custNr: string, e164: string, inherit: boolean) {
    const tree = await loadInboundTree(db, custNr);
    const row = tree.numbers.find((n) => n.e164 === e164);
    if (!row) throw new ApiError("number_not_found", `Customer ${custNr} has no inbound number ${e164}`);
    return numberView(tree, row, inherit);
  }

  async function profileAnswer(custNr: string, name: string, inherit: boolean) {
    const tree = await loadInboundTree(db, custNr);
    const topic = tree.profiles.get(name);
    if (!topic) throw new ApiError("profile_not_found", `Customer ${custNr} has no profile "${name}"`);
    return profileView(tree, topic, inherit);
  }

  const auditedEdit = (
    actor: ConfigActor,
    target: AuditTarget,
    view: (tree: InboundTree) => Record<string, unknown> | null,
    change: (trx: Kysely<Database>, before: Record<string, unknown> | null) => Promise<void>,
  ): Promise<void> => auditedInboundChange(db, actor, target, deps.clock.now(), view, change);

  const NumberParams = Type.Object({ number: Type.String({ maxLength: 40, description: "The number, E.164 (+4940…) or as the region dials it" }) });
  const ProfileParams = Type.Object({ name: Type.String({ maxLength: 64 }) });
  const Inherit = { inherit: Type.Optional(BooleanText) };

  app.get(
    "/inbound/numbers",
    {
      schema: {
        summary: "The customer's inbound numbers, filtered",
        description: "Filters look at what a number does (its effective settings). inherit=true shows the effective values of customer → profile → number.",
        operationId: "listInboundNumbers",
        tags: ["configuration"],
        querystring: Type.Object({
          ...CustomerQuery,
          ...PageQuery,
          ...Inherit,
          assigned: Type.Optional(BooleanText),
          prefix: Type.Optional(Type.String({ maxLength: 32, description: "Only numbers starting with this, e.g. +4989" })),
          active: Type.Optional(BooleanText),
          "cost-center": Type.Optional(Type.String({ maxLength: 64 })),
        }),
        response: { 200: Type.Array(InboundNumberSchema), ...ERRORS },
      },
    },
    async (request) => {
      const actor = await configActor(db, request);
      const q = request.query;
      const page = pageOf(q);
      let prefix: string | undefined;
      if (q.prefix !== undefined && q.prefix.trim() !== "") {
        prefix = q.prefix.replace(/[\s()./-]/g, "");
        if (prefix.startsWith("00")) prefix = `+${prefix.slice(2)}`;
        if (!/^\+?[0-9]*$/.test(prefix)) throw new ApiError("invalid_request", `prefix "${q.prefix}" is not the start of a number, e.g. +4989`);
        if (!prefix.startsWith("+")) prefix = `+${prefix}`;
      }
      const assigned = flag(q.assigned);
      const active = flag(q.active);
      const costCenter = q["cost-center"];
      const tree = await loadInboundTree(db, actor.custNr);
      const rows = tree.numbers.filter((row) => {
        if (prefix !== undefined && !row.e164.startsWith(prefix)) return false;
        if (assigned !== undefined && (row.profile !== null) !== assigned) return false;
        if (active === undefined && costCenter === undefined) return true;
        const effective = effectiveOfNumber(tree, row);
        if (active !== undefined && effective.active !== active) return false;
        return costCenter === undefined || effective.costCenter === costCenter;
      });
      return rows.slice(page.offset, page.offset + page.limit).map((row) => numberView(tree, row, q.inherit === "true"));
    },
  );

  app.get(
    "/inbound/numbers/:number",
    {
      schema: {
        summary: "One inbound number",
        operationId: "getInboundNumber",
        tags: ["configuration"],
        params: NumberParams,
        querystring: Type.Object({ ...CustomerQuery, ...Inherit }),
        response: { 200: InboundNumberSchema, ...ERRORS },
      },
    },
    async (request) => {
      const actor = await configActor(db, request);
      return numberAnswer(actor.custNr, e164Of(request.params.number), request.query.inherit === "true");
    },
  );

  async function changeNumberRoute(request: FastifyRequest<{ Params: { number: string }; Body: Record<string, unknown> }>, mode: ChangeMode) {
    const actor = await configActor(db, request);
    const e164 = e164Of(request.params.number);
    const body = request.body as Parameters<typeof changeNumber>[3];
    if (body.number !== undefined && body.number !== null && e164Of(body.number) !== e164) {
      throw new ApiError("setting_invalid", `number is ${body.number} but the path names ${e164}; a number cannot be renamed`);
    }
    await settingChange(() =>
      auditedEdit(
        actor,
        { resource: "inbound/numbers", key: e164 },
        (tree) => auditedNumber(tree, e164),
        (trx) => changeNumber(trx, actor.custNr, e164, body, mode, actor.role, deps.clock.now()),
      ),
    );
    return numberAnswer(actor.custNr, e164, false);
  }

  for (const [method, mode] of [
    ["PUT", "replace"],
    ["PATCH", "merge"],
  ] as const) {
    app.route({
      method,
      url: "/inbound/numbers/:number",
      schema: {
        summary: mode === "replace" ? "Set a number's own settings and profile (fields left out are not set)" : "Change some of a number's settings",
        description: "A manager changes numbers its customer has; an operator's change of a number that is nobody's gives it to the customer.",
        operationId: mode === "replace" ? "putInboundNumber" : "patchInboundNumber",
        tags: ["configuration"],
        params: NumberParams,
        querystring: Type.Object(CustomerQuery),
        body: InboundNumberChangeSchema,
        response: { 200: InboundNumberSchema, ...CHANGE_ERRORS },
      },
      handler: (request) => changeNumberRoute(request as FastifyRequest<{ Params: { number: string }; Body: Record<string, unknown> }>, mode),
    });
  }

  app.delete(
    "/inbound/numbers/:number",
    {
      schema: {
        summary: "Take a number away from the customer (operators)",
        operationId: "deleteInboundNumber",
        tags: ["configuration"],
        params: NumberParams,
        querystring: Type.Object(CustomerQuery),
        response: { 204: Type.Null(), ...ERRORS },
      },
    },
    async (request, reply) => {
      const actor = await configActor(db, request);
      if (actor.role !== "operator") throw new ApiError("config_operator_only", "Only an operator takes a number away from a customer; to stop it answering, set active to false");
      const e164 = e164Of(request.params.number);
      await auditedEdit(
        actor,
        { resource: "inbound/numbers", key: e164 },
        (tree) => auditedNumber(tree, e164),
        (trx) => deleteNumber(trx, actor.custNr, e164),
      );
      return reply.code(204).send(null);
    },
  );

  app.get(
    "/inbound/profiles",
    {
      schema: {
        summary: "The customer's inbound profiles (Faxline: topics)",
        operationId: "listInboundProfiles",
        tags: ["configuration"],
        querystring: Type.Object({ ...CustomerQuery, ...PageQuery, ...Inherit }),
        response: { 200: Type.Array(InboundProfileSchema), ...ERRORS },
      },
    },
    async (request) => {
      const actor = await configActor(db, request);
      const page = pageOf(request.query);
      const tree = await loadInboundTree(db, actor.custNr);
      return [...tree.profiles.values()].slice(page.offset, page.offset + page.limit).map((t) => profileView(tree, t, request.query.inherit === "true"));
    },
  );

  app.get(
    "/inbound/profiles/:name",
    {
      schema: {
        summary: "One inbound profile",
        operationId: "getInboundProfile",
        tags: ["configuration"],
        params: ProfileParams,
        querystring: Type.Object({ ...CustomerQuery, ...Inherit }),
        response: { 200: InboundProfileSchema, ...ERRORS },
      },
    },
    async (request) => {
      const actor = await configActor(db, request);
      return profileAnswer(actor.custNr, request.params.name, request.query.inherit === "true");
    },
  );

  for (const [method, mode] of [
    ["PUT", "replace"],
    ["PATCH", "merge"],
  ] as const) {
    app.route({
      method,
      url: "/inbound/profiles/:name",
      schema: {
        summary: mode === "replace" ? "Create or replace a profile (fields left out are not set; deliveries left out are removed)" : "Change some of a profile's settings or deliveries (null removes one)",
        operationId: mode === "replace" ? "putInboundProfile" : "patchInboundProfile",
        tags: ["configuration"],
        params: ProfileParams,
        querystring: Type.Object(CustomerQuery),
        body: InboundProfileChangeSchema,
        response: { 200: InboundProfileSchema, ...CHANGE_ERRORS, ...(mode === "replace" ? { 412: ApiErrorBodySchema } : {}) },
      },
      handler: async (request) => {
        const actor = await configActor(db, request);
        const { name } = request.params as { name: string };
        const body = request.body as Parameters<typeof changeProfile>[3];
        if (mode === "merge") await profileAnswer(actor.custNr, name, false);
        // Create only (RFC 9110 If-None-Match: *): a form that makes a new profile must not replace one.
        const createOnly = mode === "replace" && request.headers["if-none-match"]?.trim() === "*";
        // Secrets are never shown, not even in the log: that one was written is (in the view after it).
        let written = false;
        await settingChange(() =>
          auditedEdit(
            actor,
            { resource: "inbound/profiles", key: name },
            (tree) => {
              const view = auditedProfile(tree, name);
              return view !== null && written ? { ...view, ftpCredentials: "(set)" } : view;
            },
            async (trx, before) => {
              if (createOnly && before !== null) throw new ApiError("resource_exists", `Customer ${actor.custNr} has a profile "${name}" already`);
              await changeProfile(trx, actor.custNr, name, body, mode, deps.clock.now());
              written = writesSecret(body);
            },
          ),
        );
        return profileAnswer(actor.custNr, name, false);
      },
    });
  }

  app.delete(
    "/inbound/profiles/:name",
    {
      schema: {
        summary: "Remove a profile; its numbers stay the customer's, without a profile",
        operationId: "deleteInboundProfile",
        tags: ["configuration"],
        params: ProfileParams,
        querystring: Type.Object(CustomerQuery),
        response: { 204: Type.Null(), ...ERRORS },
      },
    },
    async (request, reply) => {
      const actor = await configActor(db, request);
      const { name } = request.params;
      await auditedEdit(
        actor,
        { resource: "inbound/profiles", key: name },
        (tree) => auditedProfile(tree, name),
        (trx) => deleteProfile(trx, actor.custNr, name, deps.clock.now()),
      );
      return reply.code(204).send(null);
    },
  );

  app.get(
    "/inbound/settings",
    {
      schema: {
        summary: "The customer's own inbound settings (the top of customer → profile → number)",
        operationId: "getInboundSettings",
        tags: ["configuration"],
        querystring: Type.Object(CustomerQuery),
        response: { 200: InboundSettingsSchema, ...ERRORS },
      },
    },
    async (request) => {
      const actor = await configActor(db, request);
      return settingsView(await loadInboundTree(db, actor.custNr));
    },
  );

  for (const [method, mode] of [
    ["PUT", "replace"],
    ["PATCH", "merge"],
  ] as const) {
    app.route({
      method,
      url: "/inbound/settings",
      schema: {
        summary: mode === "replace" ? "Set the customer's inbound settings (fields left out are not set)" : "Change some of the customer's inbound settings",
        operationId: mode === "replace" ? "putInboundSettings" : "patchInboundSettings",
        tags: ["configuration"],
        querystring: Type.Object(CustomerQuery),
        body: InboundSettingsChangeSchema,
        response: { 200: InboundSettingsSchema, ...ERRORS },
      },
      handler: async (request) => {
        const actor = await configActor(db, request);
        const body = request.body as Parameters<typeof changeCustomerSettings>[2];
        await settingChange(() =>
          auditedEdit(
            actor,
            { resource: "inbound/settings", key: "" },
            (tree) => settingsView(tree),
            (trx) => changeCustomerSettings(trx, actor.custNr, body, mode, deps.clock.now()),
          ),
        );
        return settingsView(await loadInboundTree(db, actor.custNr));
      },
    });
  }
}

/**
 * The configuration API (/config/v2, src/configuration/; docs/config-api.md) on a real node, on
 * both dialects: who may use it (managers and operators; a customer sees and changes only its
 * own), the inbound numbers with the provider's filters and the settings hierarchy customer →
 * profile → number, profiles with their deliveries (secrets write-only), validation errors from
 * the catalogue, the audit log with paging, and that an inactive number receives nothing.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { FaxlineApiError, FaxlineConfiguration } from "../../packages/client/src/index.ts";
import { ApiErrors } from "../../src/errors/api-errors.ts";
import { inboundNumberState } from "../../src/inbound/inbound-settings.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";
import { api, createTestLogin, eventually, startTestNode, TEXT_DOC, waitForFinalReport, type TestNode } from "../support/test-node.ts";

interface Creds {
  login: string;
  password: string;
}

function config(baseUrl: string, creds: Creds | null) {
  const request = async (method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers["content-type"] = "application/json";
    if (creds) headers.authorization = `Basic ${Buffer.from(`${creds.login}:${creds.password}`).toString("base64")}`;
    const res = await fetch(`${baseUrl}/config/v2${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: (text === "" ? null : JSON.parse(text)) as any };
  };
  return {
    get: (path: string) => request("GET", path),
    put: (path: string, body: unknown) => request("PUT", path, body),
    patch: (path: string, body: unknown) => request("PATCH", path, body),
    delete: (path: string) => request("DELETE", path),
  };
}

/** An error answer: its status and body come from the catalogue. */
function assertError(res: { status: number; body: any }, code: keyof typeof ApiErrors, message?: RegExp): void {
  assert.equal(res.body?.error, code, JSON.stringify(res.body));
  assert.equal(res.status, ApiErrors[code].status);
  assert.equal(res.body.code, ApiErrors[code].status);
  if (message) assert.match(res.body.message, message);
}

const fingerprint = () => `SHA256:${randomBytes(32).toString("base64").replace(/=+$/, "")}`;

for (const dialect of DIALECTS) {
  describe(`${dialect}: the configuration API`, () => {
    const store = withDialect(dialect);
    let node: TestNode;
    const acmeAdmin = { custNr: "93001", login: "acme-admin", password: "acme-admin-pw" };
    const acmeClerk = { custNr: "93001", login: "acme-clerk", password: "acme-clerk-pw" };
    const globexAdmin = { custNr: "93002", login: "globex-admin", password: "globex-admin-pw" };
    const operator = { custNr: "93000", login: "ops", password: "operator-pw" };
    let acme: ReturnType<typeof config>;
    let globex: ReturnType<typeof config>;
    let ops: ReturnType<typeof config>;

    before(async () => {
      node = await startTestNode(store.overrides());
      await createTestLogin(node, { ...acmeAdmin, isManager: true });
      await createTestLogin(node, acmeClerk);
      await createTestLogin(node, { ...globexAdmin, isManager: true });
      await createTestLogin(node, { ...operator, isAdmin: true });
      acme = config(node.url, acmeAdmin);
      globex = config(node.url, globexAdmin);
      ops = config(node.url, operator);
    });
    after(async () => {
      await node.stop();
      await store.store().drop();
    });

    it("is for managers and operators: others are refused, an operator names the customer, a manager only its own", async () => {
      assertError(await config(node.url, null).get("/inbound/numbers"), "authentication_failed");
      assertError(await config(node.url, { login: "acme-admin", password: "wrong-password" }).get("/inbound/numbers"), "authentication_failed");
      assertError(await config(node.url, acmeClerk).get("/inbound/numbers"), "config_access_denied", /manage/);
      assertError(await config(node.url, acmeClerk).put("/inbound/settings", { faxId: "X" }), "config_access_denied");
      assertError(await ops.get("/inbound/numbers"), "customer_required", /\?customer=/);
      assertError(await ops.get("/inbound/numbers?customer=NOSUCH"), "customer_not_found");
      assertError(await acme.get("/inbound/numbers?customer=93002"), "customer_mismatch");
      const own = await acme.get("/inbound/numbers?customer=93001");
      assert.equal(own.status, 200);
      assert.deepEqual(own.body, []);
    });

    it("numbers: an operator gives a customer numbers; a manager sets them up; another customer neither sees nor takes them", async () => {
      for (const n of ["+49 40 5550 2001", "+4940555020 02", "+4989555030 01"]) {
        const res = await ops.put(`/inbound/numbers/${encodeURIComponent(n)}?customer=93001`, {});
        assert.equal(res.status, 200, JSON.stringify(res.body));
      }
      assertError(await acme.put("/inbound/numbers/+4940555029999", { comments: "mine now" }), "number_not_found", /operator/);
      assertError(await ops.put("/inbound/numbers/+49405550200 1?customer=93002".replace(" ", ""), {}), "number_taken", /93001/);
      assertError(await globex.get("/inbound/numbers/+494055502001"), "number_not_found");
      assertError(await globex.patch("/inbound/numbers/+494055502001", { active: false }), "number_not_found");
      assert.deepEqual((await globex.get("/inbound/numbers")).body, []);
      assertError(await globex.delete("/inbound/numbers/+494055502001"), "config_operator_only");

      const listed = await acme.get("/inbound/numbers");
      assert.deepEqual(
        listed.body.map((n: any) => n.number),
        ["+494055502001", "+494055502002", "+498955503001"],
      );
      assert.deepEqual(listed.body[0], { number: "+494055502001", displayNumber: null, comments: null, faxId: null, costCenter: null, active: null, paused: null, profile: null });
    });

    it("profiles and the hierarchy: customer → profile → number, lower levels override, inherit=true shows what a number does", async () => {
      const settings = await acme.put("/inbound/settings", { faxId: "+49 40 5550 ACME", costCenter: "HQ" });
      assert.equal(settings.status, 200, JSON.stringify(settings.body));
      assert.deepEqual(settings.body, { customer: "93001", faxId: "+49 40 5550 ACME", costCenter: "HQ", active: null, paused: null });

      const profile = await acme.put("/inbound/profiles/orders", {
        comments: "Order desk",
        faxId: "+49 40 5550 2000",
        email: { recipients: ["orders@example.com", "archive@example.com"], attachment: "tiff" },
        webservice: { url: "https://hooks.example.com/fax?token=1" },
      });
      assert.equal(profile.status, 200, JSON.stringify(profile.body));
      assert.deepEqual(profile.body, {
        name: "orders",
        comments: "Order desk",
        faxId: "+49 40 5550 2000",
        costCenter: null,
        active: null,
        paused: null,
        maxWaitingFaxes: null,
        retentionDays: null,
        email: { recipients: ["orders@example.com", "archive@example.com"], attachment: "TIFF" },
        webservice: { url: "https://hooks.example.com/fax?token=1" },
        numbers: [],
      });
      assert.equal((await acme.put("/inbound/profiles/lab", { costCenter: "LAB" })).status, 200);

      const assigned = await acme.put("/inbound/numbers/+494055502001", { profile: "orders", displayNumber: "040 5550 2001", costCenter: "Sales" });
      assert.equal(assigned.status, 200, JSON.stringify(assigned.body));
      assert.equal(assigned.body.profile, "orders");
      assert.deepEqual(assigned.body.email, { recipients: ["orders@example.com", "archive@example.com"], attachment: "TIFF" }, "a number shows its profile's delivery");
      assert.equal((await acme.patch("/inbound/numbers/+494055502002", { profile: "lab", faxId: "LAB 2" })).status, 200);

      const own = (await acme.get("/inbound/numbers/+494055502001")).body;
      assert.equal(own.faxId, null, "without inherit: the number's own value");
      assert.equal(own.costCenter, "Sales");
      const effective = (await acme.get("/inbound/numbers/+494055502001?inherit=true")).body;
      assert.equal(effective.faxId, "+49 40 5550 2000", "from the profile");
      assert.equal(effective.costCenter, "Sales", "the number's own");
      assert.equal(effective.active, true);
      assert.equal(effective.displayNumber, "040 5550 2001");
      const lab = (await acme.get("/inbound/numbers/+494055502002?inherit=true")).body;
      assert.equal(lab.faxId, "LAB 2");
      assert.equal(lab.costCenter, "LAB", "from the profile");
      const unassigned = (await acme.get("/inbound/numbers/+498955503001?inherit=true")).body;
      assert.equal(unassigned.faxId, "+49 40 5550 ACME", "from the customer");
      assert.equal(unassigned.costCenter, "HQ");
      assert.equal(unassigned.active, false, "no profile: it answers no call");
      assert.equal(unassigned.displayNumber, "+498955503001");
      const orders = (await acme.get("/inbound/profiles/orders?inherit=true")).body;
      assert.equal(orders.costCenter, "HQ");
      assert.deepEqual(orders.numbers, ["+494055502001"]);

      // What the SIP line asks: the same hierarchy.
      const db = node.node.context.store.db;
      assert.deepEqual(await inboundNumberState(db, "+494055502001"), { state: "active", custNr: "93001", topic: "orders", faxId: "+49 40 5550 2000", costCenter: "Sales" });
      assert.deepEqual(await inboundNumberState(db, "+498955503001"), { state: "unassigned", custNr: "93001" });
      assert.deepEqual(await inboundNumberState(db, "+491111111111"), { state: "unknown" });
    });

    it("paused (Faxline): pausing any level pauses the numbers below it, inherit=true shows it, inactive goes before paused; a profile's quota", async () => {
      const db = node.node.context.store.db;
      const state = () => inboundNumberState(db, "+494055502001");
      const inherited = async () => (await acme.get("/inbound/numbers/+494055502001?inherit=true")).body.paused;
      assert.equal((await state()).state, "active");
      assert.equal(await inherited(), false);
      for (const [resource, level] of [
        ["/inbound/settings", "customer"],
        ["/inbound/profiles/orders", "profile"],
        ["/inbound/numbers/+494055502001", "number"],
      ] as const) {
        const paused = await acme.patch(resource, { paused: true });
        assert.equal(paused.status, 200, JSON.stringify(paused.body));
        assert.equal(paused.body.paused, true);
        assert.deepEqual(await state(), { state: "paused", custNr: "93001", topic: "orders", pausedAt: level });
        assert.equal(await inherited(), true, `paused on the ${level}`);
        assert.equal((await acme.patch(resource, { paused: null })).status, 200);
        assert.equal((await state()).state, "active");
      }
      assert.equal((await acme.patch("/inbound/numbers/+494055502001", { paused: true, active: false })).status, 200);
      assert.equal((await state()).state, "inactive", "a wrong number, not a busy one");
      assert.equal((await acme.patch("/inbound/numbers/+494055502001", { paused: null, active: null })).status, 200);

      assertError(await acme.patch("/inbound/profiles/orders", { maxWaitingFaxes: 0 }), "invalid_request", /maxWaitingFaxes/);
      assertError(await acme.patch("/inbound/profiles/orders", { maxWaitingFaxes: "many" }), "invalid_request", /maxWaitingFaxes/);
      const limited = await acme.patch("/inbound/profiles/orders", { maxWaitingFaxes: 2 });
      assert.equal(limited.status, 200, JSON.stringify(limited.body));
      assert.equal(limited.body.maxWaitingFaxes, 2);
      assert.equal((await state()).state, "active", "nothing waits: room for two");
      assert.equal((await acme.patch("/inbound/profiles/orders", { maxWaitingFaxes: null })).status, 200);
      const audit = (await acme.get("/audit?limit=1")).body;
      assert.deepEqual([audit.entries[0].before.maxWaitingFaxes, audit.entries[0].after.maxWaitingFaxes], [2, null], "audited like any setting");
    });

    it("the provider's filters: assigned, prefix, active, cost-center (on what a number does), with paging", async () => {
      const numbers = async (query: string) => ((await acme.get(`/inbound/numbers?${query}`)).body as any[]).map((n) => n.number);
      assert.deepEqual(await numbers("assigned=true"), ["+494055502001", "+494055502002"]);
      assert.deepEqual(await numbers("assigned=false"), ["+498955503001"]);
      assert.deepEqual(await numbers("prefix=%2B4989"), ["+498955503001"]);
      assert.deepEqual(await numbers("prefix=004940"), ["+494055502001", "+494055502002"]);
      assert.deepEqual(await numbers("cost-center=LAB"), ["+494055502002"]);
      assert.deepEqual(await numbers("cost-center=HQ"), ["+498955503001"]);
      assert.deepEqual(await numbers("active=true"), ["+494055502001", "+494055502002"]);
      assert.deepEqual(await numbers("active=false"), ["+498955503001"]);
      assert.deepEqual(await numbers("limit=1&offset=1"), ["+494055502002"]);
      const inherited = (await acme.get("/inbound/numbers?inherit=true&cost-center=LAB")).body;
      assert.equal(inherited[0].costCenter, "LAB");

      assert.equal((await acme.patch("/inbound/profiles/lab", { active: false })).status, 200);
      assert.deepEqual(await numbers("active=false"), ["+494055502002", "+498955503001"], "a deactivated profile deactivates its numbers");
      assert.equal((await acme.patch("/inbound/profiles/lab", { active: null })).status, 200);
      assert.equal((await acme.patch("/inbound/settings", { active: false })).status, 200);
      assert.deepEqual(await numbers("active=true"), [], "a deactivated customer deactivates everything");
      assert.equal((await acme.patch("/inbound/settings", { active: true })).status, 200);
      assert.deepEqual(await numbers("active=true"), ["+494055502001", "+494055502002"]);
    });

    it("refuses what it cannot use with the catalogue's errors", async () => {
      assertError(await acme.patch("/inbound/numbers/+494055502001", { faxId: "Bäckerei" }), "setting_invalid", /printable ASCII/);
      assertError(await acme.patch("/inbound/numbers/+494055502001", { faxId: "123456789012345678901" }), "field_too_long", /faxId/);
      assertError(await acme.patch("/inbound/numbers/+494055502001", { colour: "blue" }), "invalid_request");
      assertError(await acme.patch("/inbound/numbers/+494055502001", { active: "yes" }), "invalid_request", /active/);
      assertError(await acme.patch("/inbound/numbers/+494055502001", { profile: "nosuch" }), "setting_invalid", /no profile "nosuch"/);
      assertError(await acme.patch("/inbound/numbers/+494055502001", { email: { recipients: ["a@example.com"] } }), "setting_invalid", /profile/);
      assertError(await acme.put("/inbound/numbers/+494055502001", { number: "+494055502002" }), "setting_invalid", /renamed/);
      assertError(await acme.get("/inbound/numbers/not-a-number"), "number_invalid");
      assertError(await acme.get("/inbound/numbers?active=maybe"), "invalid_request");
      assertError(await acme.get("/inbound/numbers?prefix=abc"), "invalid_request", /prefix/);
      assertError(await acme.get("/inbound/profiles?limit=0"), "page_invalid");
      assertError(await acme.get("/inbound/profiles/nosuch"), "profile_not_found");
      assertError(await acme.patch("/inbound/profiles/nosuch", { comments: "x" }), "profile_not_found");
      assertError(await acme.put("/inbound/profiles/bad name!", {}), "setting_invalid", /topic name/);
      assertError(await acme.patch("/inbound/profiles/orders", { email: { recipients: ["not-an-address"] } }), "setting_invalid", /e-mail address/);
      assertError(await acme.patch("/inbound/profiles/orders", { webservice: { url: "ftp://x.example.com" } }), "setting_invalid", /http/);
      assertError(await acme.patch("/inbound/profiles/orders", { ftp: { host: "sftp.example.com", username: "fax", hostKeys: ["nonsense"], password: "pw" } }), "setting_invalid", /fingerprint/);
      // Nothing of a refused change was kept.
      const orders = (await acme.get("/inbound/profiles/orders")).body;
      assert.deepEqual(orders.email.recipients, ["orders@example.com", "archive@example.com"]);
      assert.equal(orders.ftp, undefined);
    });

    it("fax-to-SFTP on a profile: the secret is write-only, kept when the view is sent back, and never in the audit log", async () => {
      const key = fingerprint();
      const set = await acme.patch("/inbound/profiles/orders", { ftp: { host: "sftp.example.com", username: "fax", hostKeys: [key], password: "s3cret-sftp-pw", directory: "in" } });
      assert.equal(set.status, 200, JSON.stringify(set.body));
      assert.deepEqual(set.body.ftp, {
        protocol: "SFTP",
        host: "sftp.example.com",
        port: 22,
        username: "fax",
        authMethod: "password",
        publicKey: null,
        hostKeys: [key],
        directory: "in",
        filePattern: set.body.ftp.filePattern,
        documentFormat: "PDF",
        metadataFormat: "JSON",
        target: "sftp://fax@sftp.example.com:22/~/in",
      });
      // The view sent back as it is (PUT replaces): the password stays.
      const { numbers: _n, name: _name, ...view } = (await acme.get("/inbound/profiles/orders")).body;
      const again = await acme.put("/inbound/profiles/orders", view);
      assert.equal(again.status, 200, JSON.stringify(again.body));
      const row = await node.node.context.store.db.selectFrom("inbound_sftp_deliveries").select(["password", "auth_method"]).where("cust_nr", "=", "93001").where("topic", "=", "orders").executeTakeFirstOrThrow();
      assert.deepEqual(row, { password: "s3cret-sftp-pw", auth_method: "password" });

      const log = (await acme.get("/audit?resource=inbound/profiles&key=orders&limit=1000")).body;
      assert.ok(!JSON.stringify(log).includes("s3cret-sftp-pw"), "no secret in the audit log");
      const secretWritten = log.entries.find((e: any) => e.after?.ftpCredentials === "(set)");
      assert.ok(secretWritten, "the log says a secret was written");
      assert.equal(secretWritten.before.ftp, undefined);
      assert.equal(secretWritten.after.ftp.host, "sftp.example.com");
    });

    it("audits every change: who, in which role, when, before and after, newest first, paged, per customer", async () => {
      const started = Date.now();
      assert.equal((await ops.patch("/inbound/numbers/+498955503001?customer=93001", { comments: "Munich office" })).status, 200);
      assert.equal((await acme.patch("/inbound/numbers/+498955503001", { comments: "Munich office" })).status, 200, "no change: no entry");
      assert.equal((await acme.patch("/inbound/numbers/+498955503001", { active: false })).status, 200);

      const page1 = (await acme.get("/audit?limit=2")).body;
      assert.equal(page1.limit, 2);
      assert.equal(page1.hasMore, true);
      const [latest, previous] = page1.entries;
      assert.equal(latest.login, "acme-admin");
      assert.equal(latest.role, "manager");
      assert.equal(latest.resource, "inbound/numbers");
      assert.equal(latest.key, "+498955503001");
      assert.equal(latest.action, "update");
      assert.equal(latest.before.active, null);
      assert.equal(latest.after.active, false);
      assert.equal(latest.before.comments, "Munich office");
      assert.ok(Date.parse(latest.at) >= started - 1000);
      assert.equal(previous.login, "ops");
      assert.equal(previous.role, "operator");
      assert.equal(previous.before.comments, null);
      assert.equal(previous.after.comments, "Munich office");

      const all = (await acme.get("/audit?limit=1000")).body.entries as any[];
      const page2 = (await acme.get("/audit?limit=2&offset=2")).body.entries as any[];
      assert.deepEqual(page2.map((e) => e.id), all.slice(2, 4).map((e) => e.id));
      const created = all.filter((e) => e.resource === "inbound/numbers" && e.action === "create").map((e) => e.key).sort();
      assert.deepEqual(created, ["+494055502001", "+494055502002", "+498955503001"], "the operator's numbers, one entry each");
      assert.ok(all.some((e) => e.resource === "inbound/settings" && e.key === "" && e.after.faxId === "+49 40 5550 ACME"));
      assert.ok(all.some((e) => e.resource === "inbound/profiles" && e.key === "lab" && e.action === "create"));
      assert.deepEqual((await ops.get("/audit?customer=93001&limit=1000")).body.entries, all, "an operator reads the customer's log");
      assert.deepEqual((await globex.get("/audit")).body.entries, [], "another customer sees none of it");
    });

    it("an inactive number receives nothing; active again, it receives (the test line faxing the customer's own number)", async () => {
      const client = api(node.url, acmeAdmin);
      const received = () => node.node.context.store.db.selectFrom("received_faxes").select("id").where("to_number", "=", "+494055502001").execute();
      assert.equal((await acme.patch("/inbound/numbers/+494055502001", { active: false })).status, 200);
      const first = await client.post(`/${acmeAdmin.custNr}/fax`, { recipients: [{ number: "+494055502001" }], documents: [TEXT_DOC] });
      await waitForFinalReport(client, acmeAdmin.custNr, first.body.jobId);
      assert.equal((await received()).length, 0);

      assert.equal((await acme.patch("/inbound/numbers/+494055502001", { active: true })).status, 200);
      const second = await client.post(`/${acmeAdmin.custNr}/fax`, { recipients: [{ number: "+494055502001" }], documents: [TEXT_DOC] });
      await waitForFinalReport(client, acmeAdmin.custNr, second.body.jobId);
      await eventually(async () => ((await received()).length === 1 ? true : undefined), 10_000, "the reception");
    });

    it("removing a profile keeps its numbers with the customer; an operator takes a number away", async () => {
      assert.equal((await acme.delete("/inbound/profiles/lab")).status, 204);
      const number = (await acme.get("/inbound/numbers/+494055502002")).body;
      assert.equal(number.profile, null);
      assert.equal(number.faxId, "LAB 2", "its own settings stay");
      assertError(await acme.delete("/inbound/numbers/+494055502002"), "config_operator_only");
      assert.equal((await ops.delete("/inbound/numbers/+494055502002?customer=93001")).status, 204);
      assertError(await acme.get("/inbound/numbers/+494055502002"), "number_not_found");
      assertError(await ops.delete("/inbound/numbers/+494055502002?customer=93001"), "number_not_found");
      const log = (await acme.get("/audit?key=%2B494055502002")).body.entries;
      assert.equal(log[0].action, "delete");
      assert.equal(log[0].after, null);
      assert.equal(log[0].before.faxId, "LAB 2");
      // Now nobody's: another customer can be given it.
      assert.equal((await ops.put("/inbound/numbers/+494055502002?customer=93002", {})).status, 200);
      assert.deepEqual(((await globex.get("/inbound/numbers")).body as any[]).map((n) => n.number), ["+494055502002"]);
    });

    it("the typed client (@faxline/client FaxlineConfiguration) speaks it, errors with the catalogue's codes", async () => {
      const asOperator = new FaxlineConfiguration({ baseUrl: node.url, customerNumber: "93002", ...operator });
      const asManager = new FaxlineConfiguration({ baseUrl: node.url, customerNumber: "93002", ...globexAdmin });
      await asOperator.putInboundNumber("+4930555040", {});
      const profile = await asManager.putInboundProfile("main", { webservice: { url: "https://erp.example.com/fax" }, faxId: "GLOBEX" });
      assert.equal(profile.webservice?.url, "https://erp.example.com/fax");
      const number = await asManager.patchInboundNumber("+4930555040", { profile: "main" });
      assert.equal(number.profile, "main");
      assert.deepEqual((await asManager.listInboundNumbers({ prefix: "+4930", inherit: true })).map((n) => [n.number, n.faxId, n.active]), [["+4930555040", "GLOBEX", true]]);
      assert.deepEqual((await asManager.getInboundSettings()).customer, "93002");
      const audit = await asManager.audit({ limit: 1 });
      assert.equal(audit.entries[0]!.key, "+4930555040");
      await assert.rejects(asManager.deleteInboundNumber("+4930555040"), (err: unknown) => err instanceof FaxlineApiError && err.code === "config_operator_only" && err.status === 403);
      await assert.rejects(new FaxlineConfiguration({ baseUrl: node.url, customerNumber: "93001", ...globexAdmin }).listInboundNumbers(), (err: unknown) => err instanceof FaxlineApiError && err.code === "customer_mismatch");
    });
  });
}

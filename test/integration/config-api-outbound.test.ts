/**
 * The configuration API's mail-to-fax part (/config/v2/outbound, src/configuration/outbound-routes.ts;
 * docs/config-api.md "Mail-to-fax") on a real node, on both dialects: users with the provider's
 * upsert by PUT, profiles with limit/offset, the customer's level with its booking login and the
 * allowed domains; the hierarchy customer → profile → user with inherit=true; tenancy; the
 * catalogue's errors; the audit log (PINs never shown); and that what the API sets is what the
 * SMTP listener applies (a user configured here sends a fax by mail with its profile's CSID).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { FaxlineApiError, FaxlineConfiguration } from "../../packages/client/src/index.ts";
import { ApiErrors } from "../../src/errors/api-errors.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";
import { createTestLogin, startTestNode, tempDir, type TestNode } from "../support/test-node.ts";
import { makeCertificate, sendMail } from "../support/mail-to-fax-client.ts";

const FAX_DOMAIN = "fax.example.test";

async function refused(work: Promise<unknown>, code: keyof typeof ApiErrors, message?: RegExp): Promise<void> {
  await assert.rejects(work, (err: unknown) => {
    assert.ok(err instanceof FaxlineApiError, String(err));
    assert.equal(err.code, code, err.message);
    assert.equal(err.status, ApiErrors[code].status);
    if (message) assert.match(err.message, message);
    return true;
  });
}

for (const dialect of DIALECTS) {
  describe(`${dialect}: the configuration API's mail-to-fax resources`, () => {
    const store = withDialect(dialect);
    const dir = tempDir("faxline-m2f-config-");
    let node: TestNode;
    let ca: Buffer;
    const acmeAdmin = { custNr: "94001", login: "acme-m2f-admin", password: "acme-admin-pw" };
    const acmeJobs = { custNr: "94001", login: "acme-m2f-jobs", password: "acme-jobs-pw" };
    const acmeClerk = { custNr: "94001", login: "acme-m2f-clerk", password: "acme-clerk-pw" };
    const globexAdmin = { custNr: "94002", login: "globex-m2f-admin", password: "globex-admin-pw" };
    const operator = { custNr: "94000", login: "m2f-ops", password: "operator-pw" };
    const client = (creds: { custNr: string; login: string; password: string }, customer = creds.custNr) =>
      new FaxlineConfiguration({ baseUrl: node.url, customerNumber: customer, login: creds.login, password: creds.password });

    before(async () => {
      const tls = makeCertificate(dir.path);
      ca = readFileSync(tls.cert);
      node = await startTestNode({
        ...store.overrides(),
        "node.roles": "api,scheduler,sender,notifier,retention,mail-to-fax",
        "mailToFax.port": 0,
        "mailToFax.host": "127.0.0.1",
        "mailToFax.domains": FAX_DOMAIN,
        "mailToFax.tlsCertFile": tls.cert,
        "mailToFax.tlsKeyFile": tls.key,
        // A listener only the organisation's server reaches (docs/mail-to-fax.md "Who may send").
        "mailToFax.usersWithoutProof": true,
      });
      await createTestLogin(node, { ...acmeAdmin, isManager: true });
      await createTestLogin(node, { ...acmeJobs, isTest: true });
      await createTestLogin(node, acmeClerk);
      await createTestLogin(node, { ...globexAdmin, isManager: true });
      await createTestLogin(node, { ...operator, isAdmin: true });
    });
    after(async () => {
      await node.stop();
      dir.remove();
    });

    it("sets up a customer, a profile and a user, shows each level's own values and, with inherit, the effective ones", async () => {
      const acme = client(acmeAdmin);
      assert.equal((await acme.getOutboundSettings()).login, null, "not set up yet");
      const settings = await acme.putOutboundSettings({ login: acmeJobs.login, fax: { csid: "ACME", resolution: "LOW" }, personalization: { FromCompanyName: "ACME Corp" } });
      assert.equal(settings.login, acmeJobs.login);
      assert.equal(settings.fax?.csid, "ACME");

      const profile = await acme.putOutboundProfile("sales", { general: { language: "de" }, fax: { resolution: "HIGH", paperFormat: "LETTER" }, reportEmail: { attachFaxImage: "ALWAYS" } });
      assert.deepEqual(profile.fax, { resolution: "HIGH", paperFormat: "LETTER" });
      assert.equal(profile.users, 0);

      const user = await acme.putOutboundUser("Alice@Example.org", { email: "alice@example.org", general: { client: "default", profile: "sales" }, fax: { csid: "ALICE" }, personalization: { department: "Purchasing" } });
      assert.equal(user.email, "alice@example.org");
      assert.deepEqual(user.general, { client: "default", profile: "sales" });
      assert.deepEqual(user.fax, { csid: "ALICE" });
      assert.equal(user.hasPin, false);

      const effective = await acme.getOutboundUser("alice@example.org", { inherit: true });
      assert.equal(effective.fax?.csid, "ALICE", "the user's own");
      assert.equal(effective.fax?.resolution, "HIGH", "the profile's over the customer's");
      assert.equal(effective.fax?.paperFormat, "LETTER");
      assert.equal(effective.general?.language, "de");
      assert.equal(effective.reportEmail?.attachFaxImage, "ALWAYS");
      assert.equal(effective.coverSheet?.bodyAs, "FIRST_PAGE", "the built-in default");
      assert.deepEqual(effective.personalization, { FromCompanyName: "ACME Corp", department: "Purchasing" });
      assert.equal((await acme.getOutboundProfile("sales", { inherit: true })).fax?.csid, "ACME");
      assert.equal((await acme.getOutboundProfile("sales")).users, 1);
    });

    it("replaces a user on PUT (the provider's upsert), keeps its PIN unless one is given, and lists users and profiles by page", async () => {
      const acme = client(acmeAdmin);
      await acme.putOutboundUser("bob@example.org", { pin: "123456" });
      assert.equal((await acme.getOutboundUser("bob@example.org")).hasPin, true);
      const replaced = await acme.putOutboundUser("bob@example.org", { fax: { isExpress: true } });
      assert.deepEqual(replaced.fax, { isExpress: true });
      assert.equal(replaced.hasPin, true, "absent pin: kept");
      assert.equal((await acme.putOutboundUser("bob@example.org", { pin: null })).hasPin, false);

      for (const name of ["a-profile", "b-profile", "c-profile"]) await acme.putOutboundProfile(name, {});
      const page = await acme.listOutboundProfiles({ limit: 2, offset: 1 });
      assert.deepEqual(page.map((p) => p.name), ["b-profile", "c-profile"]);
      assert.deepEqual((await acme.listOutboundProfiles()).map((p) => p.name), ["a-profile", "b-profile", "c-profile", "sales"]);
      assert.deepEqual((await acme.listOutboundUsers()).map((u) => u.email), ["alice@example.org", "bob@example.org"]);
      assert.deepEqual((await acme.listOutboundUsers({ limit: 1, offset: 1 })).map((u) => u.email), ["bob@example.org"]);
    });

    it("takes the typed client's Basic credentials as UTF-8 (the client uses no Node.js Buffer, so it runs in a browser too)", async () => {
      const umlaut = { custNr: "94001", login: "acme-m2f-utf8", password: "Pässwort-ÿ-€-1" };
      await createTestLogin(node, { ...umlaut, isManager: true });
      assert.equal((await client(umlaut).getOutboundSettings()).customer, "94001");
      await refused(client({ ...umlaut, password: "Passwort-y-E-1" }).getOutboundSettings(), "authentication_failed");
    });

    it("refuses wrong values with the catalogue's errors", async () => {
      const acme = client(acmeAdmin);
      await refused(acme.putOutboundUser("carol@example.org", { fax: { resolution: "FINE" } }), "setting_invalid", /fax\.resolution must be one of HIGH, LOW/);
      await refused(acme.putOutboundUser("carol@example.org", { fax: { csid: "x".repeat(20) }, reportEmail: { address: "nobody" } }), "setting_invalid", /reportEmail\.address/);
      await refused(acme.putOutboundUser("carol@example.org", { general: { profile: "nope" } }), "profile_not_found", /create it first/);
      await refused(acme.putOutboundUser("carol@example.org", { general: { client: "berlin" } }), "setting_invalid", /no clients below the customer/);
      await refused(acme.putOutboundUser("carol@example.org", { email: "dave@example.org" }), "setting_invalid", /not the address in the path/);
      await refused(acme.putOutboundUser("carol@example.org", { pin: "12" }), "setting_invalid", /6 to 12 digits/);
      await refused(acme.putOutboundUser("not-an-address", {}), "setting_invalid");
      await refused(acme.request("PUT", "/outbound/users/carol@example.org", {}, { fax: { colour: true } }), "invalid_request");
      await refused(acme.getOutboundUser("nobody@example.org"), "user_not_found");
      await refused(acme.putOutboundSettings({ login: globexAdmin.login }), "setting_invalid", /not a login of customer 94001/);
      await refused(acme.listOutboundProfiles({ limit: 0 }), "page_invalid");
      await refused(acme.deleteOutboundProfile("sales"), "profile_in_use", /1 user has the profile "sales"/);
      await refused(acme.putOutboundProfile("bad name!", {}), "setting_invalid");
    });

    it("keeps each customer to its own users, profiles and domains", async () => {
      const globex = client(globexAdmin);
      await refused(globex.getOutboundUser("alice@example.org"), "user_not_found");
      await refused(globex.putOutboundUser("alice@example.org", {}), "user_taken");
      await refused(globex.deleteOutboundUser("alice@example.org"), "user_not_found");
      assert.deepEqual(await globex.listOutboundUsers(), []);
      assert.deepEqual(await globex.listOutboundProfiles(), []);
      await refused(client(globexAdmin, acmeAdmin.custNr).listOutboundUsers(), "customer_mismatch");
      await refused(client(acmeClerk).listOutboundUsers(), "config_access_denied");

      const acme = client(acmeAdmin);
      assert.deepEqual(await acme.putOutboundDomain("Example.NET", { pin: "471147" }), { domain: "example.net", hasPin: true });
      await refused(globex.putOutboundDomain("example.net"), "domain_taken");
      await refused(globex.deleteOutboundDomain("example.net"), "domain_not_found");
      assert.deepEqual((await acme.getOutboundSettings()).domains, [{ domain: "example.net", hasPin: true }]);

      // An operator configures any customer it names.
      const ops = client(operator, acmeAdmin.custNr);
      assert.deepEqual((await ops.listOutboundUsers()).map((u) => u.email), ["alice@example.org", "bob@example.org"]);
      await refused(client(operator, "nobody").listOutboundUsers(), "customer_not_found");
    });

    it("writes every change to the audit log, a PIN only as (set)", async () => {
      const acme = client(acmeAdmin);
      await acme.putOutboundUser("erin@example.org", { pin: "987654", fax: { csid: "ERIN" } });
      await acme.deleteOutboundUser("erin@example.org");
      const { entries } = await acme.audit({ resource: "outbound/users", key: "erin@example.org" });
      assert.deepEqual(entries.map((e) => e.action), ["delete", "create"]);
      const created = entries[1]!;
      assert.equal(created.login, acmeAdmin.login);
      assert.equal(created.role, "manager");
      assert.equal((created.after as { pin: string }).pin, "(set)");
      assert.ok(!JSON.stringify(entries).includes("987654"), "the PIN itself is never in the log");
      const domains = await acme.audit({ resource: "outbound/domains" });
      assert.ok(!JSON.stringify(domains).includes("471147"));
      const settings = await acme.audit({ resource: "outbound/settings" });
      assert.equal(settings.entries[0]?.action, "create");
      // A PUT that changes nothing writes nothing.
      const before = (await acme.audit({ resource: "outbound/profiles", key: "a-profile" })).entries.length;
      await acme.putOutboundProfile("a-profile", {});
      assert.equal((await acme.audit({ resource: "outbound/profiles", key: "a-profile" })).entries.length, before);
    });

    it("is what the SMTP listener applies: a user set up here faxes by mail with its settings", async () => {
      const sent = await sendMail(node.node.mailToFaxPort!, ca, { from: "alice@example.org", to: `+4930555010@${FAX_DOMAIN}`, subject: "Hallo", text: "Test" });
      assert.ok(sent.ok, sent.response);
      const jobId = /fax job (FJ\S+)/.exec(sent.response)![1]!;
      const job = await node.node.context.store.db.selectFrom("jobs").selectAll().where("id", "=", jobId).executeTakeFirstOrThrow();
      assert.equal(job.csid, "ALICE");
      assert.equal(job.resolution, "HIGH");
      assert.equal(job.paper_format, "LETTER");
      assert.equal(job.login, acmeJobs.login);
      assert.equal(JSON.parse(job.mail_origin!).language, "de", "the profile's language, the mail naming none");

      // Switched off through the API: refused at RCPT.
      await client(acmeAdmin).putOutboundUser("alice@example.org", { general: { profile: "sales", active: false } });
      const off = await sendMail(node.node.mailToFaxPort!, ca, { from: "alice@example.org", to: `+4930555010@${FAX_DOMAIN}`, subject: "x", text: "x" });
      assert.equal(off.responseCode, 550);
      assert.match(off.response, /switched off/);
    });
  });
}

/**
 * Tenancy and access control over HTTP against a real in-process node: logins see only their
 * own jobs (even within one customer), the path's custNr must be the login's, disabled logins
 * and addresses outside a login's allow-list are refused, repeated wrong passwords lock a
 * login out for a while (429), and only test logins reach the test line.
 *
 * The main node runs with a short lockout (3 failures, 2 s) and the usual 60 s password cache;
 * the disabled-login tests use a second node with auth.cacheTtl 0s, so that disabling a login
 * takes effect at once (with the cache every request would otherwise pay for a slow hash).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { setLoginDisabled } from "../../src/accounts/accounts.ts";
import { api, createTestLogin, startTestNode, TEXT_DOC, waitForFinalReport, type TestNode } from "../support/test-node.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";

const NUMBER = "+4989000000000";
const job = { recipients: [{ number: NUMBER }], documents: [TEXT_DOC] };

for (const dialect of DIALECTS) describe(`${dialect}: tenancy and access control`, () => {
  const store = withDialect(dialect);
  let node: TestNode;
  let loginNo = 0;

  const newAccount = async (input: { custNr?: string; isTest?: boolean; ipAllowList?: string[] } = {}, on: TestNode = node) => {
    loginNo += 1;
    const creds = await createTestLogin(on, {
      custNr: input.custNr ?? "99999TE",
      login: `tenant-${loginNo}`,
      password: `secret-pass-${loginNo}`,
      ...(input.isTest === undefined ? {} : { isTest: input.isTest }),
      ...(input.ipAllowList === undefined ? {} : { ipAllowList: input.ipAllowList }),
    });
    return { creds, client: api(on.url, creds), custNr: creds.custNr };
  };

  const sendFinished = async (account: Awaited<ReturnType<typeof newAccount>>) => {
    const res = await account.client.post(`/${account.custNr}/fax`, job);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return waitForFinalReport(account.client, account.custNr, res.body.jobId);
  };

  before(async () => {
    node = await startTestNode({ ...store.overrides(), "auth.maxFailures": 3, "auth.lockout": "2s" });
  });
  after(async () => {
    await node.stop();
  });

  it("the test config is what this file relies on", () => {
    assert.equal(node.config.auth.maxFailures, 3);
    assert.equal(node.config.auth.lockout, 2000);
  });

  describe("job isolation between logins", () => {
    it("login A cannot read or delete login B's jobs, even within the same customer", async () => {
      const a = await newAccount({ custNr: "77777AA" });
      const b = await newAccount({ custNr: "77777AA" });
      const bReport = await sendFinished(b);
      const bJob = bReport.jobId as string;

      const get = await a.client.get(`/${a.custNr}/fax/reports/${bJob}`);
      assert.equal(get.status, 404);
      assert.equal(get.body.error, "report_not_found");

      const del = await a.client.delete(`/${a.custNr}/fax/reports/${bJob}`);
      assert.equal(del.status, 404);
      assert.equal(del.body.reason, "NOT_FOUND");

      const list = await a.client.get(`/${a.custNr}/fax/reports`);
      assert.deepEqual(list.body, { reports: [] });

      const bulkGet = await a.client.post(`/${a.custNr}/fax/reports`, { action: "GET", jobIds: [bJob] });
      assert.deepEqual(bulkGet.body, { reports: [] });

      const bulkDel = await a.client.post(`/${a.custNr}/fax/reports`, { action: "DELETE", jobIds: [bJob] });
      assert.deepEqual(bulkDel.body, { reports: [{ jobId: bJob, deleted: false, reason: "NOT_FOUND" }] });

      const deleteOldest = await a.client.delete(`/${a.custNr}/fax/reports`);
      assert.deepEqual(deleteOldest.body, { reports: [] });

      // B's job is untouched by all of that.
      const own = await b.client.get(`/${b.custNr}/fax/reports/${bJob}`);
      assert.equal(own.status, 200);
      assert.deepEqual(own.body, bReport);
      const ownList = await b.client.get(`/${b.custNr}/fax/reports`);
      assert.deepEqual(ownList.body.reports.map((r: { jobId: string }) => r.jobId), [bJob]);
    });

    it("a login of another customer cannot reach the job through its own customer number either", async () => {
      const owner = await newAccount({ custNr: "11111OW" });
      const other = await newAccount({ custNr: "22222OT" });
      const report = await sendFinished(owner);
      const res = await other.client.get(`/${other.custNr}/fax/reports/${report.jobId}`);
      assert.equal(res.status, 404);
      const viaOwnersPath = await other.client.get(`/${owner.custNr}/fax/reports/${report.jobId}`);
      assert.equal(viaOwnersPath.status, 401);
      assert.equal(viaOwnersPath.body.error, "customer_mismatch");
    });
  });

  describe("customer number in the path", () => {
    it("a custNr that is not the login's → 401 customer_mismatch on every operation, nothing stored", async () => {
      const a = await newAccount({ custNr: "33333CM" });
      await newAccount({ custNr: "44444CM" });
      for (const custNr of ["44444CM", "NOSUCHCUST", "33333cm"]) {
        const calls = [
          a.client.post(`/${custNr}/fax`, job),
          a.client.get(`/${custNr}/fax/reports`),
          a.client.get(`/${custNr}/fax/reports/FJ0000000000000000000X`),
          a.client.delete(`/${custNr}/fax/reports`),
          a.client.delete(`/${custNr}/fax/reports/FJ0000000000000000000X`),
          a.client.post(`/${custNr}/fax/reports`, { action: "GET", jobIds: [] }),
        ];
        for (const res of await Promise.all(calls)) {
          assert.equal(res.status, 401, `${custNr}: ${JSON.stringify(res.body)}`);
          assert.equal(res.body.code, 401);
          assert.equal(res.body.error, "customer_mismatch");
          assert.match(res.headers.get("www-authenticate") ?? "", /^Basic realm=/, "every 401 carries a challenge");
          assert.match(res.body.message, /33333CM/);
          assert.match(res.body.message, new RegExp(custNr));
        }
      }
      const list = await a.client.get(`/${a.custNr}/fax/reports`);
      assert.equal(list.status, 200);
      const all = await node.node.context.store.db.selectFrom("jobs").select("id").where("login", "=", a.creds.login).execute();
      assert.equal(all.length, 0, "the refused send stored no job");
    });
  });

  describe("disabled logins (node with auth.cacheTtl 0s)", () => {
    let strict: TestNode;
    before(async () => {
      strict = await startTestNode({ ...store.overrides(), "auth.cacheTtl": "0s" });
    });
    after(async () => {
      await strict.stop();
    });

    it("auth.cacheTtl 0s passes config validation", () => {
      assert.equal(strict.config.auth.cacheTtl, 0);
    });

    it("a disabled login is refused at once with 401, and works again when re-enabled", async () => {
      const a = await newAccount({}, strict);
      const before = await a.client.get(`/${a.custNr}/fax/reports`);
      assert.equal(before.status, 200);

      await setLoginDisabled(strict.node.context.store.db, a.creds.login, true, Date.now());
      for (const res of [await a.client.get(`/${a.custNr}/fax/reports`), await a.client.post(`/${a.custNr}/fax`, job)]) {
        assert.equal(res.status, 401);
        assert.equal(res.body.error, "authentication_failed");
        assert.match(res.body.message, /disabled/);
        assert.match(res.headers.get("www-authenticate") ?? "", /^Basic/);
      }
      const stored = await strict.node.context.store.db.selectFrom("jobs").select("id").where("login", "=", a.creds.login).execute();
      assert.equal(stored.length, 0);

      await setLoginDisabled(strict.node.context.store.db, a.creds.login, false, Date.now());
      const again = await a.client.get(`/${a.custNr}/fax/reports`);
      assert.equal(again.status, 200);
      assert.deepEqual(again.body, { reports: [] });
    });

    it("a disabled login with a wrong password does not learn that it is disabled", async () => {
      const a = await newAccount({}, strict);
      await setLoginDisabled(strict.node.context.store.db, a.creds.login, true, Date.now());
      const res = await api(strict.url, { login: a.creds.login, password: "not-the-password" }).get(`/${a.custNr}/fax/reports`);
      assert.equal(res.status, 401);
      assert.equal(res.body.error, "authentication_failed");
      assert.doesNotMatch(res.body.message, /disabled/);
    });
  });

  describe("IP allow-lists", () => {
    it("a login restricted to 10.0.0.0/8 is refused from 127.0.0.1 with 401 ip_not_allowed", async () => {
      const a = await newAccount({ ipAllowList: ["10.0.0.0/8"] });
      for (const res of [await a.client.get(`/${a.custNr}/fax/reports`), await a.client.post(`/${a.custNr}/fax`, job)]) {
        assert.equal(res.status, 401);
        assert.equal(res.body.code, 401);
        assert.equal(res.body.error, "ip_not_allowed");
        assert.match(res.headers.get("www-authenticate") ?? "", /^Basic realm=/, "every 401 carries a challenge");
        assert.match(res.body.message, /127\.0\.0\.1/);
        assert.match(res.body.message, new RegExp(a.creds.login));
      }
      const stored = await node.node.context.store.db.selectFrom("jobs").select("id").where("login", "=", a.creds.login).execute();
      assert.equal(stored.length, 0);
    });

    it("a login allowed 127.0.0.1/32 (among others) is accepted", async () => {
      const a = await newAccount({ ipAllowList: ["10.0.0.0/8", "127.0.0.1/32"] });
      const report = await sendFinished(a);
      assert.equal(report.recipientStatus[0].status, "OK");
    });

    it("the allow-list is checked after the password: a wrong password from outside is an authentication failure", async () => {
      const a = await newAccount({ ipAllowList: ["10.0.0.0/8"] });
      const res = await api(node.url, { login: a.creds.login, password: "wrong-password" }).get(`/${a.custNr}/fax/reports`);
      assert.equal(res.status, 401);
      assert.equal(res.body.error, "authentication_failed");
    });
  });

  describe("throttling of failed logins", () => {
    it("after auth.maxFailures wrong passwords even the right one answers 429 with Retry-After, until the lockout passes", async () => {
      const a = await newAccount();
      const bystander = await newAccount();
      assert.equal((await a.client.get(`/${a.custNr}/fax/reports`)).status, 200);
      const wrong = api(node.url, { login: a.creds.login, password: "wrong-password" });
      for (let i = 0; i < 3; i++) {
        const res = await wrong.get(`/${a.custNr}/fax/reports`);
        assert.equal(res.status, 401, `failure ${i + 1}`);
        assert.equal(res.body.error, "authentication_failed");
      }
      const lockedAt = Date.now();
      // The right password, although its check is cached from before, is refused too.
      const locked = await a.client.get(`/${a.custNr}/fax/reports`);
      assert.equal(locked.status, 429, JSON.stringify(locked.body));
      assert.equal(locked.body.code, 429);
      assert.equal(locked.body.error, "too_many_auth_failures");
      assert.match(locked.body.message, new RegExp(a.creds.login));
      const retryAfter = Number(locked.headers.get("retry-after"));
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 2, `Retry-After ${locked.headers.get("retry-after")}`);

      const lockedSend = await a.client.post(`/${a.custNr}/fax`, job);
      assert.equal(lockedSend.status, 429);
      const lockedWrong = await wrong.get(`/${a.custNr}/fax/reports`);
      assert.equal(lockedWrong.status, 429, "wrong passwords during the lockout are refused without a check");

      // Other logins from the same address are not affected.
      const other = await bystander.client.get(`/${bystander.custNr}/fax/reports`);
      assert.equal(other.status, 200);

      await new Promise((r) => setTimeout(r, Math.max(0, lockedAt + 2100 - Date.now())));
      const after = await a.client.get(`/${a.custNr}/fax/reports`);
      assert.equal(after.status, 200, JSON.stringify(after.body));
      assert.deepEqual(after.body, { reports: [] });
    });

    it("a success resets the failure count", async () => {
      const a = await newAccount();
      const wrong = api(node.url, { login: a.creds.login, password: "wrong-password" });
      for (let round = 0; round < 2; round++) {
        for (let i = 0; i < 2; i++) assert.equal((await wrong.get(`/${a.custNr}/fax/reports`)).status, 401);
        assert.equal((await a.client.get(`/${a.custNr}/fax/reports`)).status, 200, `round ${round}`);
      }
    });

    it("unknown logins are throttled the same way", async () => {
      const ghost = api(node.url, { login: "ghost-login", password: "whatever-pass" });
      for (let i = 0; i < 3; i++) assert.equal((await ghost.get(`/99999TE/fax/reports`)).status, 401);
      const res = await ghost.get(`/99999TE/fax/reports`);
      assert.equal(res.status, 429);
      assert.ok(res.headers.get("retry-after"));
    });
  });

  describe("test line versus production", () => {
    it("a test login's job goes to the test line and completes", async () => {
      const a = await newAccount({ isTest: true });
      const report = await sendFinished(a);
      const r = report.recipientStatus[0];
      assert.equal(r.status, "OK");
      assert.equal(r.reason, "OK");
      assert.equal(r.sentToNumber, "004989000000000");
      assert.ok(r.durationInSecs > 0);
    });

    it("a test login's job follows the test numbers (+4900000001 → BUSY after retries)", async () => {
      const a = await newAccount({ isTest: true });
      const res = await a.client.post(`/${a.custNr}/fax`, { recipients: [{ number: "+4900000001" }], documents: [TEXT_DOC] });
      assert.equal(res.status, 201);
      const report = await waitForFinalReport(a.client, a.custNr, res.body.jobId);
      assert.equal(report.recipientStatus[0].status, "BUSY");
    });

    it("a non-test login's job ends with LINE_ERROR: no line is configured", async () => {
      const a = await newAccount({ isTest: false });
      const res = await a.client.post(`/${a.custNr}/fax`, { recipients: [{ number: NUMBER }, { number: "+4900000000" }], documents: [TEXT_DOC] });
      assert.equal(res.status, 201);
      const report = await waitForFinalReport(a.client, a.custNr, res.body.jobId);
      assert.equal(report.recipientStatus.length, 2);
      for (const r of report.recipientStatus) {
        assert.equal(r.status, "LINE_ERROR", "test numbers mean nothing to a production login");
        assert.match(r.reason, /no transmission line is configured/i);
        assert.equal(r.durationInSecs, 0);
        assert.equal(r.sentTs, undefined, "nothing was dialled");
      }
      const row = await node.node.context.store.db.selectFrom("recipients").select(["reason_code"]).where("job_id", "=", res.body.jobId).execute();
      assert.deepEqual(row.map((x) => x.reason_code), ["no_line_configured", "no_line_configured"]);
      const list = await a.client.get(`/${a.custNr}/fax/reports`);
      assert.deepEqual(list.body.reports.map((x: { jobId: string }) => x.jobId), [res.body.jobId]);
    });
  });
});

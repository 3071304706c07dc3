/**
 * The console's server side over HTTP, on both store dialects: sign-in with the API's checks,
 * the session cookie and its CSRF token, sessions that end (sign-out, idle expiry, password
 * change, disabled login), the job list's filters and paging, the job detail with attempts,
 * live updates as server-sent events, settings that take effect through the API, cancel, PDF
 * download, the operator-only Operations view, and one customer never seeing another's jobs.
 * The browser itself is driven in test/browser/console.test.ts.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { DIALECTS, testStore, type TestStore } from "../support/dialects.ts";
import { PushReceiver } from "../support/push-receiver.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import { startNode, type RunningNode } from "../../src/roles/start-node.ts";
import { api, createTestLogin, eventually, startTestNode, tempDir, testConfig, TEXT_DOC, waitForFinalReport, type TestNode } from "../support/test-node.ts";

/** A browser-like session: keeps the cookie and sends the CSRF token on changes. */
class Browser {
  cookie = "";
  csrf = "";
  constructor(readonly base: string) {}

  async request(method: string, path: string, body?: unknown, options: { csrf?: boolean; headers?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { ...options.headers };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.cookie) headers.cookie = this.cookie;
    if (method !== "GET" && options.csrf !== false && this.csrf) headers["x-csrf-token"] = this.csrf;
    const res = await fetch(`${this.base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), redirect: "manual" });
    const setCookie = res.headers.get("set-cookie");
    if (setCookie) {
      const value = /faxline_session=([^;]*)/.exec(setCookie)?.[1] ?? "";
      this.cookie = value ? `faxline_session=${value}` : "";
    }
    const text = await res.text();
    let parsed: any = text;
    try {
      parsed = text === "" ? null : JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed, headers: res.headers, setCookie };
  }

  async signIn(login: string, password: string) {
    const res = await this.request("POST", "/console/api/session", { login, password });
    if (res.status === 200) this.csrf = res.body.csrfToken;
    return res;
  }
}

for (const dialect of DIALECTS) {
  describe(`${dialect}: console server`, () => {
    let store: TestStore;
    let node: TestNode;
    const receiver = new PushReceiver();
    const alice = { custNr: "70001", login: "alice@example.com", password: "alice-password" };
    const bob = { custNr: "70002", login: "bob", password: "bob-password-1" };
    const ops = { custNr: "70009", login: "operator", password: "operator-password" };

    before(async () => {
      await receiver.start();
      store = await testStore(dialect);
      node = await startTestNode({ ...store.overrides, "push.allowTargets": "127.0.0.1", "auth.maxFailures": 3 });
      await createTestLogin(node, alice);
      await createTestLogin(node, bob);
      await createTestLogin(node, { ...ops, isAdmin: true });
    });
    after(async () => {
      await node.stop();
      await store.drop();
      await receiver.stop();
    });

    it("serves the console at /console/ with a strict CSP, and / redirects there", async () => {
      const b = new Browser(node.url);
      const root = await b.request("GET", "/");
      assert.equal(root.status, 302);
      assert.equal(root.headers.get("location"), "/console/");
      for (const path of ["/console/", "/console/jobs/FJ123", "/console/settings"]) {
        const page = await b.request("GET", path);
        assert.equal(page.status, 200, path);
        assert.match(page.headers.get("content-type") ?? "", /text\/html/);
        assert.match(page.body, /<script type="module" src="\/console\/assets\/app-[A-Z0-9]+\.js">/);
        assert.match(page.headers.get("content-security-policy") ?? "", /script-src 'self'/);
        assert.equal(page.headers.get("cache-control"), "no-cache");
      }
      const script = /src="(\/console\/assets\/app-[A-Z0-9]+\.js)"/.exec((await b.request("GET", "/console/")).body)![1]!;
      const asset = await fetch(`${node.url}${script}`);
      assert.equal(asset.status, 200);
      assert.match(asset.headers.get("cache-control") ?? "", /immutable/);
      assert.equal((await b.request("GET", "/console/assets/app-MISSING.js")).status, 404, "a missing asset is no page");
      const unknownApi = await b.request("GET", "/console/api/nothing-here");
      assert.equal(unknownApi.status, 404);
      assert.equal(unknownApi.body.error, "route_not_found");
    });

    it("signs in with the API's checks and sets an HttpOnly SameSite cookie; wrong passwords are refused and locked out", async () => {
      const b = new Browser(node.url);
      const wrong = await b.signIn(alice.login, "not-the-password");
      assert.equal(wrong.status, 401);
      assert.equal(wrong.body.error, "authentication_failed");
      assert.equal(wrong.body.message, "Wrong login or password");
      assert.equal(b.cookie, "", "no cookie for a failed sign-in");

      const ok = await b.signIn(alice.login, alice.password);
      assert.equal(ok.status, 200);
      assert.match(ok.setCookie ?? "", /^faxline_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
      assert.equal(ok.body.login, alice.login);
      assert.equal(ok.body.custNr, alice.custNr);
      assert.equal(ok.body.operator, false);
      assert.equal((await b.request("GET", "/console/api/session")).body.login, alice.login);

      // The same lockout as the API: three failures of one login from one address.
      const locked = new Browser(node.url);
      for (let i = 0; i < 3; i++) assert.equal((await locked.signIn(bob.login, "wrong-password")).status, 401);
      const tooMany = await locked.signIn(bob.login, bob.password);
      assert.equal(tooMany.status, 429);
      assert.equal(tooMany.body.error, "too_many_auth_failures");
      const basic = await api(node.url, { login: bob.login, password: bob.password }).get(`/${bob.custNr}/fax/reports`);
      assert.equal(basic.status, 429, "the API's Basic auth shares the lockout");
    });

    it("needs the CSRF token for every change, over /console/api and /rest/v1 alike", async () => {
      const b = new Browser(node.url);
      await b.signIn(alice.login, alice.password);
      const noToken = await b.request("POST", `/rest/v1/${alice.custNr}/fax`, { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC] }, { csrf: false });
      assert.equal(noToken.status, 403);
      assert.equal(noToken.body.error, "csrf_token_invalid");
      const wrongToken = await b.request("PUT", "/console/api/settings/header", { header: "x" }, { csrf: false, headers: { "x-csrf-token": "forged" } });
      assert.equal(wrongToken.status, 403);
      const sent = await b.request("POST", `/rest/v1/${alice.custNr}/fax`, { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC] });
      assert.equal(sent.status, 201, "the session sends through the REST API");
      const otherCustomer = await b.request("GET", `/rest/v1/${bob.custNr}/fax/reports`);
      assert.equal(otherCustomer.status, 401);
      assert.equal(otherCustomer.body.error, "customer_mismatch");
      const form = await fetch(`${node.url}/console/api/settings/password`, { method: "POST", headers: { cookie: b.cookie, "content-type": "text/plain", "x-csrf-token": b.csrf }, body: "currentPassword=x&newPassword=y" });
      assert.equal(form.status, 415, "a cross-site form's text/plain body is refused (unsupported_media_type)");
      assert.equal(((await form.json()) as { error: string }).error, "unsupported_media_type");
    });

    it("ends sessions on sign-out, on a password change (others only) and when the login is disabled", async () => {
      const one = new Browser(node.url);
      const two = new Browser(node.url);
      await one.signIn(alice.login, alice.password);
      await two.signIn(alice.login, alice.password);
      const weak = await one.request("POST", "/console/api/settings/password", { currentPassword: alice.password, newPassword: "short" });
      assert.equal(weak.status, 400);
      assert.equal(weak.body.error, "setting_invalid");
      const wrongCurrent = await one.request("POST", "/console/api/settings/password", { currentPassword: "nope-nope", newPassword: "a-new-password" });
      assert.equal(wrongCurrent.status, 400);
      assert.equal(wrongCurrent.body.message, "The current password is wrong");
      const changed = await one.request("POST", "/console/api/settings/password", { currentPassword: alice.password, newPassword: "alice-password-2" });
      assert.equal(changed.status, 200);
      assert.equal((await one.request("GET", "/console/api/session")).status, 200, "the session that changed it stays");
      const ended = await two.request("GET", "/console/api/session");
      assert.equal(ended.status, 401, "other sessions end");
      assert.match(ended.body.message, /session has ended/);
      assert.equal((await api(node.url, { login: alice.login, password: alice.password }).get(`/${alice.custNr}/fax/reports`)).status, 401, "the old password no longer works");
      assert.equal((await api(node.url, { login: alice.login, password: "alice-password-2" }).get(`/${alice.custNr}/fax/reports`)).status, 200);
      // Back, for the other tests.
      assert.equal((await one.request("POST", "/console/api/settings/password", { currentPassword: "alice-password-2", newPassword: alice.password })).status, 200);

      const signOut = await one.request("DELETE", "/console/api/session");
      assert.equal(signOut.status, 204);
      assert.match(signOut.setCookie ?? "", /Max-Age=0/);
      assert.equal((await one.request("GET", "/console/api/session")).status, 401);

      const c = new Browser(node.url);
      await c.signIn(ops.login, ops.password);
      const { setLoginDisabled } = await import("../../src/accounts/accounts.ts");
      await setLoginDisabled(node.node.context.store.db, ops.login, true, Date.now());
      const disabled = await c.request("GET", "/console/api/jobs");
      assert.equal(disabled.status, 401);
      assert.match(disabled.body.message, /disabled/);
      await setLoginDisabled(node.node.context.store.db, ops.login, false, Date.now());
    });

    it("lists the login's jobs newest first with filters and cursor paging, and never another customer's", async () => {
      const carol = { custNr: "70003", login: "carol", password: "carol-password" };
      await createTestLogin(node, carol);
      const client = api(node.url, carol);
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) {
        const number = i % 3 === 2 ? "+4900000009" : "+4900000020";
        const res = await client.post(`/${carol.custNr}/fax`, { recipients: [{ number }], documents: [TEXT_DOC], reference: { customerDefinedId: `order_${i}%` } });
        assert.equal(res.status, 201);
        ids.push(res.body.jobId);
        await new Promise((r) => setTimeout(r, 3)); // distinct created_at
      }
      for (const id of ids) await waitForFinalReport(client, carol.custNr, id);
      const b = new Browser(node.url);
      assert.equal((await b.signIn(carol.login, carol.password)).status, 200);

      const all = await b.request("GET", "/console/api/jobs?limit=10");
      assert.deepEqual(all.body.jobs.map((j: any) => j.jobId), [...ids].reverse(), "newest first");
      assert.equal(all.body.next, null);
      const first = await b.request("GET", "/console/api/jobs?limit=10&status=failed");
      assert.deepEqual(first.body.jobs.map((j: any) => j.jobId), [ids[5], ids[2]]);
      assert.equal(first.body.jobs[0].recipients[0].status, "WRONG_NUMBER");
      const delivered = await b.request("GET", "/console/api/jobs?limit=10&status=delivered");
      assert.equal(delivered.body.jobs.length, 5);

      // Paging: 3 per page would be 10 here; the API takes 10, 25, 50, 100.
      const pageSize = await b.request("GET", "/console/api/jobs?limit=3");
      assert.equal(pageSize.status, 400);
      const more = [];
      for (let i = 0; i < 6; i++) {
        const res = await client.post(`/${carol.custNr}/fax`, { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC] });
        more.push(res.body.jobId as string);
        await new Promise((r) => setTimeout(r, 3));
      }
      const newest = [...ids, ...more].reverse();
      const page1 = await b.request("GET", "/console/api/jobs?limit=10");
      assert.deepEqual(page1.body.jobs.map((j: any) => j.jobId), newest.slice(0, 10));
      assert.ok(page1.body.next);
      const page2 = await b.request("GET", `/console/api/jobs?limit=10&before=${encodeURIComponent(page1.body.next)}`);
      assert.deepEqual(page2.body.jobs.map((j: any) => j.jobId), newest.slice(10));
      assert.equal(page2.body.next, null);
      assert.equal((await b.request("GET", "/console/api/jobs?before=garbage")).status, 400);

      // Reference (wildcards in it are literal), number digits, free search, dates, data center.
      const byRef = await b.request("GET", `/console/api/jobs?reference=${encodeURIComponent("ORDER_4%")}`);
      assert.deepEqual(byRef.body.jobs.map((j: any) => j.jobId), [ids[4]]);
      const likeWildcard = await b.request("GET", `/console/api/jobs?reference=${encodeURIComponent("order%4")}`);
      assert.deepEqual(likeWildcard.body.jobs, [], "% is not a wildcard");
      const byNumber = await b.request("GET", `/console/api/jobs?limit=25&number=${encodeURIComponent("0000-0009")}`);
      assert.deepEqual(byNumber.body.jobs.map((j: any) => j.jobId), [ids[5], ids[2]]);
      assert.deepEqual((await b.request("GET", `/console/api/jobs?q=${ids[3]}`)).body.jobs.map((j: any) => j.jobId), [ids[3]]);
      assert.deepEqual((await b.request("GET", `/console/api/jobs?q=order_6`)).body.jobs.map((j: any) => j.jobId), [ids[6]]);
      const today = new Date().toISOString().slice(0, 10);
      assert.equal((await b.request("GET", `/console/api/jobs?limit=25&from=${today}&to=${today}`)).body.jobs.length, 13);
      assert.equal((await b.request("GET", "/console/api/jobs?limit=25&to=2000-01-01")).body.jobs.length, 0);
      assert.equal((await b.request("GET", "/console/api/jobs?from=yesterday")).status, 400);
      const dc = node.config.node.datacenter;
      assert.equal((await b.request("GET", `/console/api/jobs?limit=25&datacenter=${dc}`)).body.jobs.length, 13);
      assert.equal((await b.request("GET", "/console/api/jobs?datacenter=XX9")).status, 400);

      // Tenancy: another customer's login sees none of these, by list, detail or REST.
      const other = new Browser(node.url);
      await other.signIn(alice.login, alice.password);
      const theirs = await other.request("GET", "/console/api/jobs?limit=100");
      assert.ok(theirs.body.jobs.every((j: any) => !newest.includes(j.jobId)));
      assert.equal((await other.request("GET", `/console/api/jobs/${ids[0]}`)).status, 404);
      assert.equal((await other.request("GET", `/rest/v1/${alice.custNr}/fax/reports/${ids[0]}`)).status, 404);
      assert.equal((await other.request("POST", `/rest/v1/${alice.custNr}/fax/reports/${ids[0]}/cancel`)).status, 404);
    });

    it("shows a job's recipients with every attempt, its reason, category, retry class and cause", async () => {
      const b = new Browser(node.url);
      await b.signIn(alice.login, alice.password);
      const client = api(node.url, alice);
      const res = await client.post(`/${alice.custNr}/fax`, { recipients: [{ number: "+4900000020" }, { number: "+4900000009" }], documents: [TEXT_DOC] });
      await waitForFinalReport(client, alice.custNr, res.body.jobId);
      const detail = await b.request("GET", `/console/api/jobs/${res.body.jobId}`);
      assert.equal(detail.status, 200);
      assert.equal(detail.body.state, "completed");
      assert.equal(detail.body.local, true);
      assert.equal(detail.body.images.length, 1);
      assert.equal(detail.body.options.toneMode, "AUTO", "a job that names no tone mode");
      // Documents go soon after the job is final (retention); the pages stay.
      if (detail.body.documentsPurged) assert.deepEqual(detail.body.documents, []);
      else assert.deepEqual(detail.body.documents.map((d: any) => d.name), ["test.txt"]);
      const [ok, wrong] = detail.body.recipients;
      assert.equal(ok.status, "OK");
      assert.equal(ok.tries.length, 1);
      assert.equal(ok.tries[0].result, "delivered");
      assert.equal(ok.tries[0].transport, "test");
      assert.ok(ok.tries[0].bitRate > 0);
      assert.equal(wrong.status, "WRONG_NUMBER");
      assert.equal(wrong.tries[0].reason.code, "invalid_number");
      assert.equal(wrong.tries[0].reason.category, "destination");
      assert.equal(wrong.tries[0].reason.retryClass, "never");
      assert.ok(wrong.tries[0].rawCause, "the raw cause is shown");
      assert.equal((await b.request("GET", "/console/api/jobs/FJNOSUCHJOB")).status, 404);
      const plain = await client.post(`/${alice.custNr}/fax`, { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC], renderingOptions: { toneMode: "threshold" } });
      assert.equal(plain.status, 201, JSON.stringify(plain.body));
      assert.equal((await b.request("GET", `/console/api/jobs/${plain.body.jobId}`)).body.options.toneMode, "THRESHOLD", "the job's tone mode, as the API took it");

      const pdf = await fetch(`${node.url}/rest/v1/${alice.custNr}/fax/reports/${res.body.jobId}/fax-images/${detail.body.images[0].imageId}?format=pdf`, { headers: { cookie: b.cookie } });
      assert.equal(pdf.status, 200);
      assert.equal(pdf.headers.get("content-type"), "application/pdf");
      assert.equal(Buffer.from(await pdf.arrayBuffer()).subarray(0, 5).toString(), "%PDF-");
      const png = await fetch(`${node.url}/rest/v1/${alice.custNr}/fax/reports/${res.body.jobId}/fax-images/${detail.body.images[0].imageId}/pages/1`, { headers: { cookie: b.cookie } });
      assert.equal(png.headers.get("content-type"), "image/png");
    });

    it("streams live updates: a job created and finished by the API arrives as an event", async () => {
      const b = new Browser(node.url);
      await b.signIn(alice.login, alice.password);
      const controller = new AbortController();
      const res = await fetch(`${node.url}/console/api/events`, { headers: { cookie: b.cookie }, signal: controller.signal });
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-type") ?? "", /text\/event-stream/);
      const reader = res.body!.getReader();
      let text = "";
      const created = await api(node.url, alice).post(`/${alice.custNr}/fax`, { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC] });
      await eventually(async () => {
        const { value } = await reader.read();
        text += Buffer.from(value ?? new Uint8Array()).toString();
        return text.includes(created.body.jobId) ? true : undefined;
      }, 10_000, "the job's event");
      assert.match(text, /event: jobs\ndata: \{"ids":\[[^\]]*"FJ/);
      controller.abort();
      const anonymous = await fetch(`${node.url}/console/api/events`);
      assert.equal(anonymous.status, 401);
      await anonymous.text();
    });

    it("streams live updates: a job that leaves the open set is flagged, even when its completion time lies before the poll's window", async () => {
      // The completing node takes its clock before a commit that may wait on the job's lock;
      // the stream must not depend on completed_at falling into its one second of overlap.
      const b = new Browser(node.url);
      await b.signIn(alice.login, alice.password);
      const start = new Date(Date.now() + 3_600_000).toISOString();
      const job = await b.request("POST", `/rest/v1/${alice.custNr}/fax`, { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC], meta: { jobValid: { start } } });
      assert.equal(job.status, 201);
      const jobId = job.body.jobId as string;
      const db = node.node.context.store.db;
      const before = await db.selectFrom("jobs").select(["state", "created_at"]).where("id", "=", jobId).executeTakeFirstOrThrow();
      assert.notEqual(before.state, "completed");
      await new Promise((r) => setTimeout(r, 2_200)); // its creation now lies before the stream's window
      const controller = new AbortController();
      const res = await fetch(`${node.url}/console/api/events`, { headers: { cookie: b.cookie }, signal: controller.signal });
      const reader = res.body!.getReader();
      let text = "";
      void (async () => {
        for (;;) {
          const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
          if (done) return;
          text += Buffer.from(value ?? new Uint8Array()).toString();
        }
      })();
      await new Promise((r) => setTimeout(r, 2_500)); // two polls: the job is known as open
      assert.ok(!text.includes(jobId), "not flagged while nothing changed");
      await db.updateTable("jobs").set({ state: "completed", completed_at: Number(before.created_at) }).where("id", "=", jobId).execute();
      try {
        await eventually(async () => (text.includes(jobId) ? true : undefined), 5_000, "the job's event");
      } finally {
        controller.abort();
        await db.updateTable("jobs").set({ state: before.state, completed_at: null }).where("id", "=", jobId).execute();
        assert.equal((await b.request("POST", `/rest/v1/${alice.custNr}/fax/reports/${jobId}/cancel`)).status, 200);
      }
    });

    it("cancels a job's waiting recipients with CANCELLED, and refuses to cancel a completed job", async () => {
      const b = new Browser(node.url);
      await b.signIn(alice.login, alice.password);
      const start = new Date(Date.now() + 3_600_000).toISOString();
      const later = await b.request("POST", `/rest/v1/${alice.custNr}/fax`, { recipients: [{ number: "+4900000020" }, { number: "+4900000021" }], documents: [TEXT_DOC], meta: { jobValid: { start } } });
      assert.equal(later.status, 201);
      const cancelled = await b.request("POST", `/rest/v1/${alice.custNr}/fax/reports/${later.body.jobId}/cancel`);
      assert.equal(cancelled.status, 200);
      assert.deepEqual(cancelled.body.recipientStatus.map((r: any) => r.status), ["CANCELLED", "CANCELLED"]);
      assert.match(cancelled.body.recipientStatus[0].reason, /cancelled.*by login alice@example.com/);
      const again = await b.request("POST", `/rest/v1/${alice.custNr}/fax/reports/${later.body.jobId}/cancel`);
      assert.equal(again.status, 409);
      assert.equal(again.body.error, "job_already_completed");
      const detail = await b.request("GET", `/console/api/jobs/${later.body.jobId}`);
      assert.equal(detail.body.state, "completed");
      assert.equal(detail.body.recipients[0].reasonDetail.category, "policy");
      const basic = await api(node.url, alice).post(`/${alice.custNr}/fax/reports/FJNOTHERE/cancel`, undefined);
      assert.equal(basic.status, 404);
    });

    it("changes settings that take effect through the API: default push, signing, e-mail report, header, tone mode, retention, allow-list", async () => {
      const dave = { custNr: "70004", login: "dave", password: "dave-password" };
      await createTestLogin(node, { ...dave, isManager: true });
      // A login of the same customer that does not manage the account reads the settings, changes none.
      await createTestLogin(node, { custNr: dave.custNr, login: "dave-clerk", password: "clerk-password" });
      const clerk = new Browser(node.url);
      await clerk.signIn("dave-clerk", "clerk-password");
      for (const [method, path, body] of [
        ["PUT", "/console/api/settings/push", { url: "https://attacker.example/" }],
        ["POST", "/console/api/settings/signing-secret", { action: "rotate" }],
        ["PUT", "/console/api/settings/report-mail", { successAddress: "me@example.com" }],
        ["PUT", "/console/api/settings/retention", { days: 1 }],
        ["PUT", "/console/api/settings/tone-mode", { toneMode: "PHOTO" }],
        ["PUT", "/console/api/settings/allow-list", { entries: [] }],
        ["DELETE", "/console/api/settings/cover-templates/default", undefined],
      ] as const) {
        const refused = await clerk.request(method, path, body);
        assert.equal(refused.status, 403, `${method} ${path}`);
        assert.equal(refused.body.error, "manager_only");
      }
      assert.equal((await clerk.request("GET", "/console/api/settings")).body.canManage, false);
      const b = new Browser(node.url);
      await b.signIn(dave.login, dave.password);
      assert.equal((await b.request("GET", "/console/api/settings")).body.canManage, true);
      const bad = await b.request("PUT", "/console/api/settings/push", { url: "ftp://example.com/x" });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error, "setting_invalid");
      assert.match(bad.body.message, /http:\/\/ or https:\/\//);
      assert.equal((await b.request("PUT", "/console/api/settings/push", { url: receiver.url("/dave"), format: "JSON", events: [] })).status, 200);
      const rotated = await b.request("POST", "/console/api/settings/signing-secret", { action: "rotate" });
      assert.match(rotated.body.secret, /^whsec_/);
      assert.equal((await b.request("PUT", "/console/api/settings/report-mail", { successAddress: "not-an-address" })).status, 400);
      const mail = await b.request("PUT", "/console/api/settings/report-mail", { successAddress: "ok@example.com", failureAddress: "", attachedFaxImageMode: "always", attachedFaxImageFormat: "pdf" });
      assert.deepEqual(mail.body.reportMail, { successAddress: "ok@example.com", failureAddress: null, attachedFaxImageMode: "ALWAYS", attachedFaxImageFormat: "PDF" });
      assert.equal((await b.request("PUT", "/console/api/settings/header", { header: "100%" })).status, 400, "a header that cannot be used");
      assert.equal((await b.request("PUT", "/console/api/settings/header", { header: "From Dave %page/%pages" })).status, 200);
      // The account's default tone mode: refused unless it is one; then a job that names none shows it.
      const badMode = await b.request("PUT", "/console/api/settings/tone-mode", { toneMode: "SEPIA" });
      assert.equal(badMode.status, 400);
      assert.match(badMode.body.message, /AUTO, TEXT, PHOTO, THRESHOLD/);
      assert.equal((await b.request("PUT", "/console/api/settings/tone-mode", { toneMode: "PHOTO" })).status, 200);
      const withMode = await b.request("GET", "/console/api/settings");
      assert.equal(withMode.body.defaultToneMode, "PHOTO");
      assert.deepEqual(withMode.body.choices.toneModes, ["AUTO", "TEXT", "PHOTO", "THRESHOLD"]);
      const daveClient = api(node.url, dave);
      const noMode = await daveClient.post(`/${dave.custNr}/fax`, { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC] });
      const ownMode = await daveClient.post(`/${dave.custNr}/fax`, { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC], renderingOptions: { toneMode: "TEXT" } });
      assert.equal((await b.request("GET", `/console/api/jobs/${noMode.body.jobId}`)).body.options.toneMode, "PHOTO", "the account's default");
      assert.equal((await b.request("GET", `/console/api/jobs/${ownMode.body.jobId}`)).body.options.toneMode, "TEXT", "the job's own");
      // Rendered, a job keeps the mode it was rendered with when the default changes afterwards.
      await waitForFinalReport(daveClient, dave.custNr, noMode.body.jobId);
      assert.equal((await b.request("PUT", "/console/api/settings/tone-mode", { toneMode: "auto" })).status, 200);
      assert.equal((await b.request("GET", "/console/api/settings")).body.defaultToneMode, null, "AUTO is no default");
      assert.equal((await b.request("GET", `/console/api/jobs/${noMode.body.jobId}`)).body.options.toneMode, "PHOTO", "as it was rendered");
      const afterwards = await daveClient.post(`/${dave.custNr}/fax`, { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC] });
      assert.equal((await b.request("GET", `/console/api/jobs/${afterwards.body.jobId}`)).body.options.toneMode, "AUTO", "no default: AUTO");
      assert.equal((await b.request("PUT", "/console/api/settings/retention", { days: 0 })).status, 400);
      assert.equal((await b.request("PUT", "/console/api/settings/retention", { days: 9 })).status, 200);
      // A URL's credentials are kept but never shown, and saving the shown URL keeps them.
      assert.equal((await b.request("PUT", "/console/api/settings/push", { url: "https://user:secret@erp.example.com/fax" })).status, 200);
      const withCredentials = await b.request("GET", "/console/api/settings");
      assert.equal(withCredentials.body.push.url, "https://erp.example.com/fax");
      assert.equal(withCredentials.body.push.urlHasCredentials, true);
      assert.equal((await b.request("PUT", "/console/api/settings/push", { url: "https://erp.example.com/fax" })).status, 200);
      const { getNotificationSettings } = await import("../../src/accounts/notification-settings.ts");
      assert.equal((await getNotificationSettings(node.node.context.store.db, dave.custNr)).pushUrl, "https://user:secret@erp.example.com/fax");
      assert.equal((await b.request("PUT", "/console/api/settings/push", { url: receiver.url("/dave") })).status, 200);
      const settings = await b.request("GET", "/console/api/settings");
      assert.equal(settings.body.push.url, receiver.url("/dave"));
      assert.equal(settings.body.push.format, "JSON");
      assert.equal(settings.body.push.signingSecrets, 1);
      assert.equal(settings.body.defaultHeader, "From Dave %page/%pages");
      assert.equal(settings.body.retentionDays, 9);

      // Through the API: a job naming no push goes to the account's URL, as JSON, signed.
      const client = api(node.url, dave);
      const job = await client.post(`/${dave.custNr}/fax`, { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC] });
      // (The jobs sent above to check the default tone mode push there too.)
      const jobIdOf = (p: { body: string }): string | undefined => JSON.parse(p.body).jobId ?? JSON.parse(p.body).data?.jobId;
      const push = await eventually(async () => receiver.received("/dave").find((p) => jobIdOf(p) === job.body.jobId), 15_000, "the push");
      assert.equal(jobIdOf(push), job.body.jobId);
      assert.ok(push.headers["webhook-signature"], "signed");
      const notifications = await client.get(`/${dave.custNr}/fax/reports/${job.body.jobId}/notifications`);
      assert.deepEqual(notifications.body.notifications.map((n: any) => [n.channel, n.target]).sort(), [["email", "ok@example.com"], ["http", receiver.url("/dave")]]);

      // Allow-list: one that would lock this browser out is refused; a fitting one takes effect.
      const lockout = await b.request("PUT", "/console/api/settings/allow-list", { entries: ["203.0.113.0/24"] });
      assert.equal(lockout.status, 400);
      assert.match(lockout.body.message, /does not include your own address/);
      assert.equal((await b.request("PUT", "/console/api/settings/allow-list", { entries: ["127.0.0.1", "203.0.113.0/24"] })).status, 200);
      assert.deepEqual((await b.request("GET", "/console/api/settings")).body.ipAllowList, ["127.0.0.1/32", "203.0.113.0/24"]);
      assert.equal((await b.request("PUT", "/console/api/settings/allow-list", { entries: [] })).status, 200);
    });

    it("shows Operations to operators only: nodes, queues, running calls, failure reasons and failing destinations", async () => {
      const user = new Browser(node.url);
      await user.signIn(alice.login, alice.password);
      const refused = await user.request("GET", "/console/api/operations");
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error, "operator_only");

      const client = api(node.url, alice);
      for (let i = 0; i < 3; i++) {
        const res = await client.post(`/${alice.custNr}/fax`, { recipients: [{ number: "+4900000009" }], documents: [TEXT_DOC] });
        await waitForFinalReport(client, alice.custNr, res.body.jobId);
      }
      const operator = new Browser(node.url);
      await operator.signIn(ops.login, ops.password);
      const view = await operator.request("GET", "/console/api/operations");
      assert.equal(view.status, 200);
      assert.ok(view.body.nodes.some((n: any) => n.state === "running" && n.datacenter === node.config.node.datacenter));
      assert.ok(view.body.queues.some((q: any) => q.counts.some((c: any) => c.kind === "job" && c.state === "completed" && c.count > 0)));
      const invalid = view.body.failureReasons.find((r: any) => r.reasonCode === "invalid_number");
      assert.ok(invalid && invalid.count >= 3 && invalid.category === "destination", JSON.stringify(view.body.failureReasons));
      assert.ok(view.body.failingDestinations.some((d: any) => d.e164 === "+4900000009" && d.failures >= 3 && d.lastReasonCode === "invalid_number"));
      assert.deepEqual(view.body.runningCalls, []);
    });
  });
}

describe("console sessions expire (on the node's clock, advanced by hand)", () => {
  const clock = new ManualClock(Date.now());
  const dir = tempDir();
  let node: RunningNode;
  before(async () => {
    node = await startNode(testConfig(dir.path, { "node.roles": "api", "console.sessionIdle": "30m", "console.sessionMax": "12h" }), silentLogger(), { clock });
    await createTestLogin(node, { custNr: "70100", login: "idle", password: "idle-password" });
  });
  after(async () => {
    await node.stop();
    dir.remove();
  });

  it("after console.sessionIdle without a request, and console.sessionMax after sign-in however active", async () => {
    const idle = new Browser(node.url!);
    await idle.signIn("idle", "idle-password");
    await clock.advance(29 * 60_000);
    assert.equal((await idle.request("GET", "/console/api/session")).status, 200, "29 minutes idle");
    await clock.advance(29 * 60_000);
    assert.equal((await idle.request("GET", "/console/api/session")).status, 200, "the request before moved the end");
    await clock.advance(31 * 60_000);
    const ended = await idle.request("GET", "/console/api/session");
    assert.equal(ended.status, 401, "31 minutes idle");
    assert.match(ended.body.message, /session has ended/);

    const busy = new Browser(node.url!);
    await busy.signIn("idle", "idle-password");
    // A request every 20 minutes keeps it alive, up to 12 hours after sign-in.
    for (let minutes = 20; minutes < 12 * 60; minutes += 20) {
      await clock.advance(20 * 60_000);
      assert.equal((await busy.request("GET", "/console/api/session")).status, 200, `alive after ${minutes} minutes`);
    }
    await clock.advance(20 * 60_000);
    assert.equal((await busy.request("GET", "/console/api/session")).status, 401, "ended at console.sessionMax");
  });

  it("an open live-update stream does not keep its session alive, and a login may hold only so many", async () => {
    const tab = new Browser(node.url!);
    await tab.signIn("idle", "idle-password");
    const controller = new AbortController();
    const streams = [];
    for (let i = 0; i < 8; i++) {
      const res = await fetch(`${node.url}/console/api/events`, { headers: { cookie: tab.cookie }, signal: controller.signal });
      assert.equal(res.status, 200);
      streams.push(res);
    }
    const ninth = await fetch(`${node.url}/console/api/events`, { headers: { cookie: tab.cookie } });
    assert.equal(ninth.status, 429);
    assert.equal(((await ninth.json()) as { error: string }).error, "too_many_streams");
    // The streams poll every second; let them poll a few times, then the idle time passes.
    const reader = streams[0]!.body!.getReader();
    await new Promise((r) => setTimeout(r, 2500));
    await clock.advance(31 * 60_000);
    let text = "";
    await eventually(async () => {
      const { value, done } = await reader.read();
      text += Buffer.from(value ?? new Uint8Array()).toString();
      return done || text.includes("event: session") ? true : undefined;
    }, 10_000, "the stream to say the session ended");
    assert.match(text, /event: session\ndata: \{"error":"authentication_failed"/);
    assert.equal((await tab.request("GET", "/console/api/session")).status, 401, "the stream did not count as use");
    controller.abort();
  });
});

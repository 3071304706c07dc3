/**
 * Status push end to end: real nodes, real HTTP receivers on loopback (allowed through
 * push.allowTargets), each authentication method against a real challenge or token endpoint,
 * signatures verified as a receiver would, a receiver that is down across a node restart, and
 * the delivery log and redelivery through the API.
 */
import { after, afterEach, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { XMLParser } from "fast-xml-parser";
import { api, createTestLogin, eventually, startTestNode, tempDir, TEXT_DOC, waitForFinalReport, type TestNode } from "../support/test-node.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";
import { PushReceiver, type ReceivedRequest } from "../support/push-receiver.ts";
import { installTemplate, rotateSigningSecret, setPushSettings } from "../../src/accounts/notification-settings.ts";
import { verifyWebhook } from "../../src/notifications/push/sign-webhook.ts";

const PUSH_FAST = {
  "push.allowTargets": "127.0.0.1",
  "push.retrySchedule": "100ms,100ms,100ms,100ms,100ms,100ms,100ms,100ms,100ms,100ms",
  "push.jitterPercent": 0,
  "push.timeout": "5s",
};
const OK_NUMBER = "+4900000020";

interface Job {
  jobId: string;
}

async function sendJob(t: TestNode, creds: { custNr: string; login: string; password: string }, push: Record<string, unknown> | null, number = OK_NUMBER): Promise<string> {
  const client = api(t.url, creds);
  const res = await client.post<Job>(`/${creds.custNr}/fax`, {
    recipients: [{ number }],
    documents: [TEXT_DOC],
    statusReportOptions: push === null ? null : { httpStatusPush: push },
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.jobId;
}

async function deliveryLog(t: TestNode, creds: { custNr: string; login: string; password: string }, jobId: string): Promise<any> {
  const res = await api(t.url, creds).get(`/${creds.custNr}/fax/reports/${jobId}/notifications`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

async function waitForNotificationState(t: TestNode, creds: { custNr: string; login: string; password: string }, jobId: string, state: string): Promise<any> {
  return eventually(
    async () => {
      const log = await deliveryLog(t, creds, jobId);
      return log.notifications.length > 0 && log.notifications.every((n: any) => n.state === state) ? log : undefined;
    },
    15_000,
    `notifications of ${jobId} to be ${state}`,
  );
}

const xml = new XMLParser({ parseTagValue: false, isArray: (name) => ["faxRecipient", "document"].includes(name) });

for (const dialect of DIALECTS) describe(`${dialect}: HTTP status push`, () => {
  const store = withDialect(dialect);
  let receiver: PushReceiver;
  let node: TestNode;
  let creds: { custNr: string; login: string; password: string };

  before(async () => {
    receiver = new PushReceiver();
    await receiver.start();
    node = await startTestNode({ ...store.overrides(), ...PUSH_FAST });
    creds = await createTestLogin(node);
  });
  after(async () => {
    await node.stop();
    await receiver.stop();
  });

  it("pushes the contract's XML report with HTTP Basic authentication once the job completes", async () => {
    const seen: string[] = [];
    receiver.on("/basic", (req) => {
      seen.push(req.headers.authorization ?? "");
      return req.headers.authorization === `Basic ${Buffer.from("push-user:push-pass").toString("base64")}` ? { status: 200 } : { status: 401 };
    });
    const jobId = await sendJob(node, creds, { targetUrl: receiver.url("/basic"), authMethod: "HTTP_BASIC", principal: "push-user", credentials: "push-pass" });
    const report = await waitForFinalReport(api(node.url, creds), creds.custNr, jobId);
    const log = await waitForNotificationState(node, creds, jobId, "delivered");

    const [push] = receiver.received("/basic");
    assert.ok(push);
    assert.equal(push.method, "POST");
    assert.equal(push.headers["content-type"], "text/xml; charset=utf-8");
    assert.equal(push.headers["x-faxline-event"], "job.completed");
    const body = xml.parse(push.body).faxJobReport;
    assert.equal(body.jobId, jobId);
    assert.deepEqual(body.httpStatusPush, { url: receiver.url("/basic"), authMethod: "HTTP_BASIC" });
    assert.equal(body.reportMail, undefined, "no reportMail element: the request had none");
    assert.equal(body.faxRecipient.length, 1);
    const r = body.faxRecipient[0];
    assert.equal(r.number, OK_NUMBER);
    assert.match(r.numId, /^FN/);
    assert.equal(r.status, "OK");
    assert.equal(r.sentTS, report.recipientStatus[0].sentTs);
    assert.equal(r.sentToNumber, report.recipientStatus[0].sentToNumber);
    assert.equal(r.durationInSecs, String(report.recipientStatus[0].durationInSecs));
    assert.deepEqual(body.document, [{ name: "test.txt", isText: "true" }]);
    assert.equal(body.pages, String(report.pages));

    assert.equal(log.notifications.length, 1);
    const n = log.notifications[0];
    assert.equal(push.headers["webhook-id"], n.id);
    assert.equal(n.channel, "http");
    assert.equal(n.target, receiver.url("/basic"));
    assert.equal(n.attempts, 1);
    assert.equal(n.tries[0].outcome, "delivered");
    assert.equal(n.tries[0].statusCode, 200);
    assert.equal(JSON.stringify(log).includes("push-pass"), false, "credentials never appear in the log");
  });

  it("answers a real Digest challenge", async () => {
    const realm = "faxline-test";
    const nonce = "n-" + Date.now();
    receiver.on("/digest", (req) => {
      const auth = req.headers.authorization;
      if (!auth || !verifyDigest(auth, req, "dig-user", "dig-pass", realm, nonce)) {
        return { status: 401, headers: { "www-authenticate": `Digest realm="${realm}", qop="auth", nonce="${nonce}", opaque="op", algorithm=MD5` } };
      }
      return { status: 204 };
    });
    const jobId = await sendJob(node, creds, { targetUrl: receiver.url("/digest"), authMethod: "HTTP_DIGEST", principal: "dig-user", credentials: "dig-pass" });
    const log = await waitForNotificationState(node, creds, jobId, "delivered");
    assert.equal(receiver.received("/digest").length, 2, "challenge, then the answer");
    assert.equal(log.notifications[0].tries.length, 1, "one try, two requests");
  });

  it("gets an OAuth2 client-credentials token, reuses it, and renews it after a 401", async () => {
    let issued = 0;
    let valid = "";
    receiver.on("/token", (req) => {
      const clientOk = req.headers.authorization === `Basic ${Buffer.from("client-1:s3cret%21").toString("base64")}`;
      if (req.body !== "grant_type=client_credentials" || !clientOk) return { status: 401, body: '{"error":"invalid_client"}' };
      issued += 1;
      valid = `tok-${issued}`;
      return { status: 200, headers: { "content-type": "application/json" }, body: JSON.stringify({ access_token: valid, token_type: "Bearer", expires_in: 3600 }) };
    });
    receiver.on("/oauth", (req) => (req.headers.authorization === `Bearer ${valid}` ? { status: 200 } : { status: 401 }));
    await setPushSettings(node.node.context.store.db, creds.custNr, { oauth2TokenUrl: receiver.url("/token") });
    const push = { targetUrl: receiver.url("/oauth"), authMethod: "OAUTH2", principal: "client-1", credentials: "s3cret!" };

    const first = await sendJob(node, creds, push);
    await waitForNotificationState(node, creds, first, "delivered");
    const second = await sendJob(node, creds, push);
    await waitForNotificationState(node, creds, second, "delivered");
    assert.equal(issued, 1, "the cached token served the second push");

    valid = "revoked-elsewhere"; // the receiver no longer accepts tok-1
    const third = await sendJob(node, creds, push);
    await waitForNotificationState(node, creds, third, "delivered");
    assert.equal(issued, 2);
    const oauthPushes = receiver.received("/oauth");
    assert.equal(oauthPushes.at(-1)!.headers.authorization, "Bearer tok-2");
    assert.equal(oauthPushes.at(-2)!.headers.authorization, "Bearer tok-1");
  });

  it("uses the account's default URL and JSON format, signed so that a receiver can verify it", async () => {
    const { db } = node.node.context.store;
    const account = await createTestLogin(node, { custNr: "SIGNED1", login: "signed" });
    await setPushSettings(db, "SIGNED1", { url: receiver.url("/signed"), format: "JSON" });
    const { secret } = await rotateSigningSecret(db, "SIGNED1");
    const jobId = await sendJob(node, account, null);
    await waitForNotificationState(node, account, jobId, "delivered");
    const [push] = receiver.received("/signed");
    assert.ok(push);
    assert.equal(push.headers["content-type"], "application/json");
    const headers = { id: String(push.headers["webhook-id"]), timestamp: String(push.headers["webhook-timestamp"]), signature: String(push.headers["webhook-signature"]) };
    assert.equal(verifyWebhook(secret, headers, push.body, Math.floor(Date.now() / 1000)), true);
    assert.equal(verifyWebhook(secret, headers, push.body.replace("OK", "KO"), Math.floor(Date.now() / 1000)), false);
    const body = JSON.parse(push.body);
    assert.equal(body.jobId, jobId);
    assert.equal(body.faxRecipient[0].status, "OK");
    assert.equal(body.httpStatusPush, undefined, "the request named no push; the account's URL was used");
  });

  it("waits at least Retry-After after a 429 and then delivers", async () => {
    let calls = 0;
    receiver.on("/busy", () => (++calls === 1 ? { status: 429, headers: { "retry-after": "1" }, body: "slow down" } : { status: 200 }));
    const jobId = await sendJob(node, creds, { targetUrl: receiver.url("/busy") });
    const log = await waitForNotificationState(node, creds, jobId, "delivered");
    const tries = log.notifications[0].tries;
    assert.deepEqual(tries.map((t: any) => [t.outcome, t.statusCode]), [["retry", 429], ["delivered", 200]]);
    assert.equal(tries[0].responseExcerpt, "slow down");
    const rows = await node.node.context.store.db.selectFrom("notification_attempts").select(["started_at", "duration_ms"]).where("notification_id", "=", log.notifications[0].id).orderBy("attempt_no").execute();
    assert.ok(Number(rows[1]!.started_at) - (Number(rows[0]!.started_at) + rows[0]!.duration_ms) >= 1000, "the second try waited for Retry-After");
  });

  it("stops at 410 Gone and can be redelivered by the client", async () => {
    let gone = true;
    receiver.on("/gone", () => (gone ? { status: 410 } : { status: 200 }));
    const jobId = await sendJob(node, creds, { targetUrl: receiver.url("/gone") });
    const failed = await waitForNotificationState(node, creds, jobId, "failed");
    const n = failed.notifications[0];
    assert.equal(n.tries.length, 1);
    assert.match(n.lastError, /410/);

    gone = false;
    const client = api(node.url, creds);
    const again = await client.post(`/${creds.custNr}/fax/reports/${jobId}/notifications/${n.id}/redeliver`, {});
    assert.equal(again.status, 202);
    assert.equal(again.body.id, n.id);
    const delivered = await waitForNotificationState(node, creds, jobId, "delivered");
    assert.deepEqual(delivered.notifications[0].tries.map((t: any) => t.attemptNo), [1, 2]);
    const pushes = receiver.received("/gone");
    assert.equal(pushes[0]!.headers["webhook-id"], pushes[1]!.headers["webhook-id"], "a redelivery keeps the id, so receivers can de-duplicate");

    const unknown = await client.post(`/${creds.custNr}/fax/reports/${jobId}/notifications/msg_nope/redeliver`, {});
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error, "notification_not_found");
    const otherJob = await client.get(`/${creds.custNr}/fax/reports/FJNOSUCHJOB0000000000A/notifications`);
    assert.equal(otherJob.status, 404);
  });

  it("renders the account's installed push template, and gives up on one that no longer parses", async () => {
    const { db } = node.node.context.store;
    const account = await createTestLogin(node, { custNr: "LAYOUT1", login: "layout" });
    await setPushSettings(db, "LAYOUT1", { url: receiver.url("/layout"), format: "TEMPLATE" });
    await installTemplate(db, { custNr: "LAYOUT1", kind: "push", content: '{"job":"{{jobId}}","numbers":[{{#faxRecipient}}"{{number}}"{{/faxRecipient}}]}', contentType: "application/json" }, Date.now());
    const jobId = await sendJob(node, account, null);
    await waitForNotificationState(node, account, jobId, "delivered");
    const [push] = receiver.received("/layout");
    assert.equal(push!.headers["content-type"], "application/json");
    assert.deepEqual(JSON.parse(push!.body), { job: jobId, numbers: [OK_NUMBER] });

    // Changed behind the install check: the push fails for good with a message, not forever.
    await db.updateTable("customer_templates").set({ content: "{{#faxRecipient}}" }).where("cust_nr", "=", "LAYOUT1").execute();
    const broken = await sendJob(node, account, null);
    const log = await waitForNotificationState(node, account, broken, "failed");
    assert.match(log.notifications[0].lastError, /push template cannot be used.*never closed/);
  });

  it("pushes opt-in intermediate events for each failed call before the final report", async () => {
    const { db } = node.node.context.store;
    const account = await createTestLogin(node, { custNr: "EVENTS1", login: "events" });
    await setPushSettings(db, "EVENTS1", { events: ["attempt.failed"] });
    const jobId = await sendJob(node, account, { targetUrl: receiver.url("/events") }, "+4900000008");
    await waitForFinalReport(api(node.url, account), account.custNr, jobId);
    await waitForNotificationState(node, account, jobId, "delivered");
    const events = receiver.received("/events").map((r) => r.headers["x-faxline-event"]).sort();
    assert.deepEqual(events, ["attempt.failed", "attempt.failed", "job.completed"]);
  });
});

for (const dialect of DIALECTS) describe(`${dialect}: HTTP status push: guard, outage and restart`, () => {
  const store = withDialect(dialect, { fresh: "test" });
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!();
  });

  it("refuses a loopback receiver unless the operator allows it", async () => {
    const receiver = new PushReceiver();
    await receiver.start();
    cleanups.push(() => receiver.stop());
    const node = await startTestNode({ ...store.overrides(), ...PUSH_FAST, "push.allowTargets": "" });
    cleanups.push(() => node.stop());
    const creds = await createTestLogin(node);
    const jobId = await sendJob(node, creds, { targetUrl: receiver.url("/hook") });
    const log = await waitForNotificationState(node, creds, jobId, "failed");
    assert.match(log.notifications[0].lastError, /Refusing to push to http:\/\/127\.0\.0\.1:\d+\/hook: 127\.0\.0\.1 is a loopback address \(allow it in push\.allowTargets\)/);
    assert.equal(receiver.requests.length, 0);
  });

  it("keeps retrying while the receiver is down, across a node restart, and delivers once it is back", async () => {
    const receiver = new PushReceiver();
    await receiver.start();
    const port = receiver.port;
    await receiver.stop(); // down: connections are refused
    cleanups.push(() => receiver.stop());
    const dir = tempDir();
    cleanups.push(async () => dir.remove());

    const first = await startTestNode({ ...store.overrides(), ...PUSH_FAST, "node.id": "push-node" }, dir.path);
    const creds = await createTestLogin(first);
    const jobId = await sendJob(first, creds, { targetUrl: `http://127.0.0.1:${port}/hook` });
    await eventually(
      async () => {
        const log = await deliveryLog(first, creds, jobId);
        return log.notifications[0]?.tries.length >= 2 ? log : undefined;
      },
      15_000,
      "two failed tries",
    );
    await first.stop();
    const before = await (async () => {
      const node = await startTestNode({ ...store.overrides(), ...PUSH_FAST, "node.id": "push-node", "node.roles": "api" }, dir.path);
      try {
        return await deliveryLog(node, creds, jobId);
      } finally {
        await node.stop();
      }
    })();
    const n = before.notifications[0];
    assert.notEqual(n.state, "delivered");
    assert.ok(n.tries.every((t: any) => t.outcome === "retry" && /ECONNREFUSED/.test(t.error)), JSON.stringify(n.tries));

    await receiver.start(port);
    const second = await startTestNode({ ...store.overrides(), ...PUSH_FAST, "node.id": "push-node" }, dir.path);
    cleanups.push(() => second.stop());
    const after = await waitForNotificationState(second, creds, jobId, "delivered");
    assert.equal(receiver.received("/hook").length, 1, "delivered once");
    assert.equal(after.notifications[0].tries.at(-1).outcome, "delivered");
    assert.ok(after.notifications[0].tries.length > n.tries.length);
  });
});

/** The receiver's own Digest check (RFC 7616, MD5, qop=auth), independent of Faxline's client. */
function verifyDigest(header: string, req: ReceivedRequest, user: string, pass: string, realm: string, nonce: string): boolean {
  const p = Object.fromEntries([...header.slice(7).matchAll(/(\w+)=(?:"([^"]*)"|([^,\s]+))/g)].map((m) => [m[1], m[2] ?? m[3]]));
  const md5 = (s: string) => createHash("md5").update(s).digest("hex");
  if (p.username !== user || p.realm !== realm || p.nonce !== nonce || p.uri !== req.path || p.opaque !== "op") return false;
  const expected = md5(`${md5(`${user}:${realm}:${pass}`)}:${nonce}:${p.nc}:${p.cnonce}:${p.qop}:${md5(`${req.method}:${req.path}`)}`);
  return p.response === expected;
}

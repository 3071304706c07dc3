/**
 * Receiving: each reception is delivered besides the pull API, per topic: fax-to-email (a
 * summary and the fax as PDF or TIFF) and fax-to-webservice (a signed JSON notice), through the
 * status pushes' outbox, so a receiver that is down for a while loses nothing. On both dialects.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { rotateSigningSecret } from "../../src/accounts/notification-settings.ts";
import { addTopicNumber, createTopic, setTopicDeliveries } from "../../src/inbound/topics.ts";
import { REGION_NUMBER_CONTEXT } from "../../src/numbers/normalize-number.ts";
import { verifyPushSignature } from "../../packages/client/src/index.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";
import { PushReceiver } from "../support/push-receiver.ts";
import { attachments, SmtpSink } from "../support/smtp-sink.ts";
import { api, createTestLogin, eventually, startTestNode, TEXT_DOC, waitForFinalReport, type TestNode } from "../support/test-node.ts";

for (const dialect of DIALECTS) {
  describe(`${dialect}: inbound deliveries`, () => {
    const store = withDialect(dialect);
    let node: TestNode;
    const smtp = new SmtpSink();
    const receiver = new PushReceiver();
    const acme = { custNr: "91001", login: "acme-in", password: "acme-password" };
    let secret = "";

    before(async () => {
      await smtp.start();
      await receiver.start();
      node = await startTestNode({
        ...store.overrides(),
        "mail.host": "127.0.0.1",
        "mail.port": smtp.port,
        "mail.security": "none",
        "mail.from": "Faxline <fax@example.test>",
        "push.allowTargets": "127.0.0.1",
        "push.retrySchedule": "200ms,200ms,200ms",
        "push.jitterPercent": 0,
      });
      await createTestLogin(node, acme);
      const db = node.node.context.store.db;
      const now = Date.now();
      await createTopic(db, { custNr: acme.custNr, name: "office" }, now);
      await addTopicNumber(db, { custNr: acme.custNr, topic: "office", number: "+49 40 555 0100" }, REGION_NUMBER_CONTEXT.DE, now);
      await setTopicDeliveries(db, acme.custNr, "office", { mailTo: ["inbox@example.com", "archive@example.com"], mailAttachment: "pdf", pushUrl: receiver.url("/received") });
      secret = (await rotateSigningSecret(db, acme.custNr)).secret;
    });
    after(async () => {
      await node.stop();
      await store.store().drop();
      await smtp.stop();
      await receiver.stop();
    });

    it("mails each address the fax as PDF, and posts a signed notice once the receiver is back up", async () => {
      // The web service is down (503) for its first two tries.
      let tries = 0;
      receiver.on("/received", () => (++tries <= 2 ? { status: 503, body: "down for maintenance" } : { status: 204 }));
      const client = api(node.url, acme);
      const sent = await client.post(`/${acme.custNr}/fax`, { recipients: [{ number: "+49 40 555 0100" }], documents: [TEXT_DOC] });
      await waitForFinalReport(client, acme.custNr, sent.body.jobId);

      const mails = await eventually(async () => (smtp.mails.length >= 2 ? smtp.mails : undefined), 15_000, "two mails");
      assert.deepEqual(mails.map((m) => m.to[0]).sort(), ["archive@example.com", "inbox@example.com"]);
      const mail = mails[0]!;
      assert.match(mail.raw, /Subject: Fax from .* to \+49405550100: 1 page/);
      const [pdf] = attachments(mail.raw);
      assert.equal(pdf!.contentType, "application/pdf");
      assert.equal(pdf!.content.subarray(0, 5).toString(), "%PDF-");

      const delivered = await eventually(async () => receiver.received("/received").find((r) => r.method === "POST" && tries >= 3), 20_000, "the notice after the outage");
      const pushes = receiver.received("/received");
      assert.equal(pushes.length, 3, "two refused tries, then delivered");
      const notice = JSON.parse(delivered.body);
      assert.equal(notice.event, "fax.received");
      assert.match(notice.receivedFax.id, /^FI[A-Z0-9]{20}$/);
      assert.equal(notice.receivedFax.calledNumber, "+49405550100");
      assert.equal(notice.receivedFax.topic, "office");
      assert.equal(notice.receivedFax.pages, 1);
      assert.equal(new Set(pushes.map((p) => p.headers["webhook-id"])).size, 1, "one message, retried");
      assert.equal(verifyPushSignature(secret, delivered.headers, delivered.body), true, "signed with the customer's secret");
    });
  });
}

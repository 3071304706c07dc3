/**
 * E-mail status reports end to end: a node with a real SMTP server, jobs asking for success
 * and failure mails with the fax image attached, a temporary SMTP failure retried, and the
 * "Done when" of the notifications issue: one job with push and mail options produces the
 * contract's XML push and a mail with the right attachment.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import sharp from "sharp";
import { PDFDocument } from "pdf-lib";
import { XMLParser } from "fast-xml-parser";
import { api, createTestLogin, eventually, startTestNode, TEXT_DOC, waitForFinalReport, type TestNode } from "../support/test-node.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";
import { attachments, mimePartOfType, parseMime, SmtpSink } from "../support/smtp-sink.ts";
import { PushReceiver } from "../support/push-receiver.ts";

const LONG_TEXT = { name: "letter.txt", data: Buffer.from(Array.from({ length: 150 }, (_, i) => `Line ${i + 1} of a three-page letter.`).join("\n")).toString("base64") };

for (const dialect of DIALECTS) describe(`${dialect}: e-mail status reports`, () => {
  const store = withDialect(dialect);
  let smtp: SmtpSink;
  let receiver: PushReceiver;
  let node: TestNode;
  let creds: { custNr: string; login: string; password: string };

  before(async () => {
    smtp = new SmtpSink();
    await smtp.start();
    receiver = new PushReceiver();
    await receiver.start();
    node = await startTestNode({ ...store.overrides(),
      "mail.host": "127.0.0.1",
      "mail.port": smtp.port,
      "mail.security": "none",
      "mail.from": "Faxline Test <fax@example.test>",
      "mail.retrySchedule": "100ms,100ms,100ms",
      "push.allowTargets": "127.0.0.1",
      "push.jitterPercent": 0,
    });
    creds = await createTestLogin(node);
  });
  after(async () => {
    await node.stop();
    await smtp.stop();
    await receiver.stop();
  });

  async function notificationsSettled(jobId: string): Promise<any[]> {
    return eventually(
      async () => {
        const res = await api(node.url, creds).get(`/${creds.custNr}/fax/reports/${jobId}/notifications`);
        const list = res.body.notifications as any[];
        return list.length > 0 && list.every((n) => n.state === "delivered" || n.state === "failed") ? list : undefined;
      },
      20_000,
      `notifications of ${jobId}`,
    );
  }

  it("pushes the XML report and mails the success report with the TIFF attached, for one job", async () => {
    const client = api(node.url, creds);
    const res = await client.post(`/${creds.custNr}/fax`, {
      recipients: [{ number: "+4900000020" }],
      documents: [LONG_TEXT],
      statusReportOptions: {
        reportMail: { successAddress: "ok@example.test", failureAddress: "failed@example.test", attachedFaxImageMode: "ALWAYS", attachedFaxImageFormat: "TIFF" },
        httpStatusPush: { targetUrl: receiver.url("/both"), authMethod: "NONE" },
      },
    });
    assert.equal(res.status, 201);
    const jobId = res.body.jobId as string;
    const report = await waitForFinalReport(client, creds.custNr, jobId);
    const list = await notificationsSettled(jobId);
    assert.deepEqual(list.map((n) => [n.channel, n.state, n.target]).sort(), [
      ["email", "delivered", "ok@example.test"],
      ["http", "delivered", receiver.url("/both")],
    ]);

    const push = new XMLParser({ parseTagValue: false }).parse(receiver.received("/both")[0]!.body).faxJobReport;
    assert.deepEqual(push.reportMail, { successAddress: "ok@example.test", failureAddress: "failed@example.test", attachedFaxImageMode: "ALWAYS", attachedFaxImageFormat: "TIFF" });
    assert.equal(push.pages, String(report.pages));

    const mail = smtp.mails.find((m) => m.raw.includes(jobId));
    assert.ok(mail, "the success mail arrived");
    assert.deepEqual(mail.to, ["ok@example.test"]);
    assert.equal(mail.from, "fax@example.test");
    const message = parseMime(mail.raw);
    const files = attachments(message);
    assert.equal(files.length, 1);
    assert.equal(files[0]!.contentType, "image/tiff");
    assert.equal(files[0]!.filename, `fax-${jobId}.tif`);
    const meta = await sharp(files[0]!.content, { pages: -1 }).metadata();
    assert.equal(meta.pages, report.pages);
    assert.equal(report.pages, 3);
    assert.equal(meta.width, 1728);
    assert.ok(mimePartOfType(message, "text/plain").body.toString("utf8").includes("+4900000020"));
    mimePartOfType(message, "text/html"); // an HTML part too
  });

  it("mails a failed fax to the failure address with a PDF of the fax image", async () => {
    const client = api(node.url, creds);
    const res = await client.post(`/${creds.custNr}/fax`, {
      recipients: [{ number: "+4900000009" }],
      documents: [TEXT_DOC],
      statusReportOptions: { reportMail: { successAddress: "ok@example.test", failureAddress: "failed@example.test", attachedFaxImageMode: "FAILURE_ONLY", attachedFaxImageFormat: "PDF" } },
    });
    const jobId = res.body.jobId as string;
    const report = await waitForFinalReport(client, creds.custNr, jobId);
    assert.notEqual(report.recipientStatus[0].status, "OK");
    const list = await notificationsSettled(jobId);
    assert.deepEqual(list.map((n) => [n.channel, n.target, n.state]), [["email", "failed@example.test", "delivered"]]);
    const mail = smtp.mails.find((m) => m.raw.includes(jobId))!;
    const [pdf] = attachments(mail.raw);
    assert.equal(pdf!.contentType, "application/pdf");
    const doc = await PDFDocument.load(pdf!.content);
    assert.equal(doc.getPageCount(), report.pages);
  });

  it("retries after a temporary SMTP refusal and logs a permanent one on the job", async () => {
    const client = api(node.url, creds);
    smtp.failWith = { code: 451, message: "Try again later" };
    const send = async (address: string) => {
      const res = await client.post(`/${creds.custNr}/fax`, {
        recipients: [{ number: "+4900000020" }],
        documents: [TEXT_DOC],
        statusReportOptions: { reportMail: { successAddress: address, attachedFaxImageMode: "NEVER" } },
      });
      return res.body.jobId as string;
    };
    const temporary = await send("later@example.test");
    await eventually(async () => {
      const res = await client.get(`/${creds.custNr}/fax/reports/${temporary}/notifications`);
      return res.body.notifications[0]?.tries.length >= 1 ? true : undefined;
    }, 20_000, "a refused try");
    smtp.failWith = null;
    const [delivered] = await notificationsSettled(temporary);
    assert.equal(delivered.state, "delivered");
    assert.equal(delivered.tries[0].outcome, "retry");
    assert.equal(delivered.tries[0].statusCode, 451);

    smtp.failWith = { code: 550, message: "No such user" };
    const permanent = await send("nobody@example.test");
    const [failed] = await notificationsSettled(permanent);
    smtp.failWith = null;
    assert.equal(failed.state, "failed");
    assert.equal(failed.tries.length, 1, "a permanent refusal is not retried");
    assert.equal(failed.tries[0].statusCode, 550);
    assert.match(failed.lastError, /550/);
  });
});

/**
 * Mail-to-fax's fax.suppressBlankPages (docs/mail-to-fax.md) through the node's real SMTP
 * listener (Nodemailer with STARTTLS, as test/integration/mail-to-fax.test.ts sends): a PDF
 * attachment whose middle page is blank is faxed as 2 pages by a sender whose settings suppress
 * blank pages (the default) and as 3 pages by one whose profile does not; the job row carries
 * the setting (jobs.suppress_blank_pages), the report and the test line's delivery count the
 * pages sent, and an attachment of blank pages only fails the job with document_blank and a
 * failure report to the sender instead of an empty fax. Both store dialects.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import type { SendMailOptions } from "nodemailer";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { putMailToFaxCustomer, putMailToFaxProfile, putMailToFaxUser } from "../../src/store/queries/mail-to-fax.ts";
import { readTiffPages } from "../../src/render/fax-image/tiff-structure.ts";
import { api, createTestLogin, eventually, startTestNode, tempDir, waitForFinalReport, type TestNode } from "../support/test-node.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";
import { parseMime, SmtpSink } from "../support/smtp-sink.ts";
import { makeCertificate, sendMail } from "../support/mail-to-fax-client.ts";

const FAX_DOMAIN = "fax.example.test";
const RELAY_ID = "mx.example.test";

/** A mail through the trusted relay, which confirmed the sender's domain (users without PIN need it). */
function sendRelayed(port: number, ca: Buffer, mail: SendMailOptions & { from: string }): ReturnType<typeof sendMail> {
  const domain = mail.from.replace(/^.*<|>$/g, "").split("@")[1];
  return sendMail(port, ca, { ...mail, headers: { "Authentication-Results": `${RELAY_ID}; spf=pass smtp.mailfrom=${domain}; dmarc=pass header.from=${domain}` } });
}

/** An A4 PDF with a page per text; an empty text leaves its page blank. */
async function letterPdf(texts: string[]): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const text of texts) {
    const page = doc.addPage([595, 842]);
    if (text !== "") page.drawText(text, { x: 72, y: 760, size: 14, font });
  }
  return Buffer.from(await doc.save());
}

const jobIdOf = (response: string): string => {
  const m = /fax job (FJ[A-Za-z0-9]+)/.exec(response);
  assert.ok(m, `no job id in "${response}"`);
  return m[1]!;
};

for (const dialect of DIALECTS) describe(`${dialect}: mail-to-fax leaves blank pages out`, () => {
  const store = withDialect(dialect);
  let node: TestNode;
  let sink: SmtpSink;
  let ca: Buffer;
  let creds: { custNr: string; login: string; password: string };
  const dir = tempDir("faxline-m2f-blank-");
  after(() => dir.remove());

  before(async () => {
    const tls = makeCertificate(dir.path);
    ca = readFileSync(tls.cert);
    sink = new SmtpSink();
    await sink.start();
    node = await startTestNode({
      ...store.overrides(),
      "node.roles": "api,scheduler,sender,notifier,mail-to-fax",
      "mailToFax.port": 0,
      "mailToFax.host": "127.0.0.1",
      "mailToFax.domains": FAX_DOMAIN,
      "mailToFax.tlsCertFile": tls.cert,
      "mailToFax.tlsKeyFile": tls.key,
      "mailToFax.requireTls": true,
      "mailToFax.trustedRelays": "127.0.0.1",
      "mailToFax.authservId": RELAY_ID,
      "mail.host": "127.0.0.1",
      "mail.port": sink.port,
      "mail.security": "none",
      "mail.from": "Faxline <fax@example.test>",
      "mail.retrySchedule": "100ms,100ms",
    });
    creds = await createTestLogin(node, { login: "m2f-blank", isTest: true });
    const db = node.node.context.store.db;
    const now = Date.now();
    // Attachments only, so that the pages are the PDF's; suppressBlankPages is left to its default (true).
    await putMailToFaxCustomer(db, { custNr: creds.custNr, login: creds.login, settings: { fax: { sendAttachmentsOnly: true }, reportEmail: { attachFaxImage: "NEVER" } } }, now);
    await putMailToFaxProfile(db, { custNr: creds.custNr, name: "every-page", settings: { fax: { suppressBlankPages: false } } }, now);
    await putMailToFaxUser(db, { email: "carol@example.org", custNr: creds.custNr, profile: null, active: true, settings: {} }, now);
    await putMailToFaxUser(db, { email: "erin@example.org", custNr: creds.custNr, profile: "every-page", active: true, settings: {} }, now);
  });
  after(async () => {
    await node?.stop();
    await sink?.stop();
  });

  const port = () => node.node.mailToFaxPort!;
  const client = () => api(node.url, creds);
  const db = () => node.node.context.store.db;

  /** Sends the PDF from `from`; the job id. */
  async function faxPdf(from: string, pdf: Buffer, subject: string): Promise<string> {
    const sent = await sendRelayed(port(), ca, { from, to: `+4930555100@${FAX_DOMAIN}`, subject, text: "See the attachment.", attachments: [{ filename: "order.pdf", content: pdf, contentType: "application/pdf" }] });
    assert.ok(sent.ok, `the mail was refused: ${sent.response}`);
    return jobIdOf(sent.response);
  }

  /** The pages of the job's fax image and the pages its recipient was sent. */
  async function sentPages(jobId: string): Promise<{ image: number; sent: number }> {
    const image = await db().selectFrom("fax_images").select("content").where("job_id", "=", jobId).executeTakeFirstOrThrow();
    const recipient = await db().selectFrom("recipients").select("pages_sent").where("job_id", "=", jobId).executeTakeFirstOrThrow();
    return { image: readTiffPages(image.content).length, sent: Number(recipient.pages_sent) };
  }

  it("faxes a PDF with a blank middle page as 2 pages, and as 3 for a sender whose settings keep blank pages", async () => {
    const pdf = await letterPdf(["Order 4711, page 1", "", "Order 4711, page 3"]);

    const suppressed = await faxPdf("Carol <carol@example.org>", pdf, "Order 4711");
    const job = await db().selectFrom("jobs").select(["suppress_blank_pages", "source"]).where("id", "=", suppressed).executeTakeFirstOrThrow();
    assert.deepEqual({ ...job, suppress_blank_pages: Number(job.suppress_blank_pages) }, { suppress_blank_pages: 1, source: "M2F" });
    const report = await waitForFinalReport(client(), creds.custNr, suppressed, 60_000);
    assert.deepEqual(report.recipientStatus.map((r: { status: string }) => r.status), ["OK"]);
    assert.equal(report.pages, 2, "the blank page is not sent");
    assert.deepEqual(await sentPages(suppressed), { image: 2, sent: 2 });

    const kept = await faxPdf("Erin <erin@example.org>", pdf, "Order 4712");
    const keptJob = await db().selectFrom("jobs").select("suppress_blank_pages").where("id", "=", kept).executeTakeFirstOrThrow();
    assert.equal(Number(keptJob.suppress_blank_pages), 0);
    const keptReport = await waitForFinalReport(client(), creds.custNr, kept, 60_000);
    assert.deepEqual(keptReport.recipientStatus.map((r: { status: string }) => r.status), ["OK"]);
    assert.equal(keptReport.pages, 3, "suppressBlankPages false: every page is sent");
    assert.deepEqual(await sentPages(kept), { image: 3, sent: 3 });
  });

  it("fails a mail whose attachment has only blank pages with document_blank and reports it to the sender, sending no fax", async () => {
    const jobId = await faxPdf("carol@example.org", await letterPdf(["", ""]), "Empty scan");
    const report = await waitForFinalReport(client(), creds.custNr, jobId, 60_000);
    assert.equal(report.recipientStatus[0].status, "DOC_ERROR");
    assert.match(report.recipientStatus[0].reason, /Every page is blank \(2 pages of order\.pdf\), and blank pages are left out: there is nothing to fax/);
    const job = await db().selectFrom("jobs").select(["failure_code", "pages"]).where("id", "=", jobId).executeTakeFirstOrThrow();
    assert.equal(job.failure_code, "document_blank");
    assert.equal(job.pages, null, "nothing was rendered to send");
    const attempts = await db().selectFrom("attempts").select("id").where("job_id", "=", jobId).execute();
    assert.equal(attempts.length, 0, "no call was made");
    const mail = await eventually(async () => sink.mails.find((m) => m.raw.includes(jobId)), 90_000, "the failure report mail");
    assert.deepEqual(mail.to, ["carol@example.org"]);
    assert.equal(parseMime(mail.raw).headers.get("x-faxline-report"), "failure");
  });
});

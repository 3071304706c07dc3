/**
 * Status mails against a real SMTP server (smtp-server) in this process: what arrives, and how
 * refusals and unreachable servers are classified.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type AddressInfo } from "node:net";
import { PDFDocument } from "pdf-lib";
import sharp from "sharp";
import type { FaxlineConfig } from "../../src/config/schema.ts";
import { composeStatusMail, type StatusMailMessage } from "../../src/notifications/email/compose-status-mail.ts";
import { createMailTransport, sendStatusMail, type SendStatusMailResult } from "../../src/notifications/email/send-status-mail.ts";
import type { AttachedImageFormat, ReportSnapshot } from "../../src/notifications/report-snapshot.ts";
import { faxTiff } from "../support/fax-tiff.ts";
import { decodeHeader, mimePartOfType, parseMime, SmtpSink, type SmtpSinkOptions } from "../support/smtp-sink.ts";

/** Starts an SmtpSink on a free loopback port, stopped after the test; `options` override its defaults. */
async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const sink = new SmtpSink(options);
  await sink.start();
  after(() => sink.stop());
  return sink;
}

function smtpError(responseCode: number, text: string): Error {
  return Object.assign(new Error(text), { responseCode });
}

function mailConfig(port: number, overrides: Partial<FaxlineConfig["mail"]> = {}): FaxlineConfig["mail"] {
  return { host: "127.0.0.1", port, security: "none", user: "", password: "", from: "Faxline <fax@example.com>", timeout: 10_000, retrySchedule: [], ...overrides };
}

function snapshot(format: AttachedImageFormat): ReportSnapshot {
  return {
    jobId: "FJSMTPTEST000000000001",
    custNr: "12345",
    event: "job.completed",
    eventTS: "2026-03-02T10:21:00Z",
    reportMail: { successAddress: "ok@example.com", failureAddress: null, attachedFaxImageMode: "ALWAYS", attachedFaxImageFormat: format },
    httpStatusPush: null,
    recipients: [
      {
        number: "+49891234567",
        numId: "FNSMTPTEST000000000001",
        status: "OK",
        reason: "OK",
        sentTS: "2026-03-02T10:15:30Z",
        durationInSecs: 42,
        sentToNumber: "0049891234567",
        remoteCsid: "ACME",
        pagesSent: 2,
        properties: [{ key: "ToName", value: "Jürgen Müller <Einkauf>" }],
        delivered: true,
      },
    ],
    documents: [{ name: "invoice.txt", isText: true }],
    options: {
      resolution: "LOW",
      paperFormat: "A4",
      csid: null,
      header: null,
      isBlacklistEnabled: false,
      isExpress: false,
      overlay: null,
      coverpageTemplateName: null,
      jobReference: null,
    },
    reference: { customerDefinedId: "Rechnung Müller", billingCode: null, billingInfo: null },
    pages: 2,
  };
}

async function statusMail(format: AttachedImageFormat, pages: number): Promise<StatusMailMessage> {
  return composeStatusMail({
    snapshot: snapshot(format),
    kind: "success",
    to: "ok@example.com",
    from: "Faxline <fax@example.com>",
    templates: {},
    faxImage: { tiff: await faxTiff(pages), pages },
  });
}

function assertSent(result: SendStatusMailResult): asserts result is SendStatusMailResult & { ok: true } {
  assert.ok(result.ok, `not sent: ${result.ok ? "" : result.message}`);
}

function assertFailed(result: SendStatusMailResult): asserts result is SendStatusMailResult & { ok: false } {
  assert.equal(result.ok, false, "sent although the server refused");
}

describe("status mails over SMTP", () => {
  it("delivers a UTF-8 mail with text, HTML and the fax image as TIFF", async () => {
    const { port, mails } = await startSmtpSink();
    const result = await sendStatusMail(createMailTransport(mailConfig(port)), await statusMail("TIFF", 2));
    assertSent(result);
    assert.match(result.messageId, /^<.+@.+>$/);
    assert.match(result.response, /^250 /);

    assert.equal(mails.length, 1);
    const [mail] = mails;
    assert.equal(mail?.from, "fax@example.com");
    assert.deepEqual(mail?.to, ["ok@example.com"]);
    const message = parseMime(mail!.raw);
    assert.equal(decodeHeader(message.headers.get("subject")!), "Fax delivered: Rechnung Müller, job FJSMTPTEST000000000001");
    assert.equal(message.headers.get("auto-submitted"), "auto-generated");
    assert.equal(message.headers.get("x-faxline-job-id"), "FJSMTPTEST000000000001");

    const text = mimePartOfType(message, "text/plain");
    assert.match(text.headers.get("content-type")!, /charset=utf-8/i);
    assert.match(text.body.toString("utf8"), /ToName: Jürgen Müller <Einkauf>/);
    const html = mimePartOfType(message, "text/html").body.toString("utf8");
    assert.match(html, /ToName: Jürgen Müller &lt;Einkauf&gt;/);

    const tiff = mimePartOfType(message, "image/tiff");
    assert.match(tiff.headers.get("content-disposition")!, /^attachment; filename="?fax-FJSMTPTEST000000000001\.tif"?$/);
    const metadata = await sharp(tiff.body).metadata();
    assert.equal(metadata.format, "tiff");
    assert.equal(metadata.pages, 2);
    assert.equal(metadata.width, 1728);
  });

  it("logs in over opportunistic STARTTLS with a self-signed certificate and attaches a PDF", async () => {
    const { port, mails } = await startSmtpSink({
      disabledCommands: [],
      authMethods: ["PLAIN", "LOGIN"],
      onAuth(auth, _session, callback) {
        if (auth.username === "faxline" && auth.password === "s3cret") callback(null, { user: auth.username });
        else callback(smtpError(535, "5.7.8 Authentication credentials invalid"));
      },
    });
    const transport = createMailTransport(mailConfig(port, { security: "opportunistic", user: "faxline", password: "s3cret" }));
    assertSent(await sendStatusMail(transport, await statusMail("PDF", 3)));

    assert.equal(mails[0]?.secure, true, "the session was encrypted");
    assert.equal(mails[0]?.user, "faxline");
    const pdf = mimePartOfType(parseMime(mails[0]!.raw), "application/pdf");
    assert.match(pdf.headers.get("content-disposition")!, /filename="?fax-FJSMTPTEST000000000001\.pdf"?$/);
    assert.equal((await PDFDocument.load(pdf.body)).getPageCount(), 3);
  });

  it("gives a temporary failure naming the login when the password is wrong", async () => {
    const { port, mails } = await startSmtpSink({
      disabledCommands: [],
      onAuth: (_auth, _session, callback) => callback(smtpError(535, "5.7.8 Authentication credentials invalid")),
    });
    const transport = createMailTransport(mailConfig(port, { security: "opportunistic", user: "faxline", password: "wrong" }));
    const result = await sendStatusMail(transport, await statusMail("TIFF", 1));
    assertFailed(result);
    assert.equal(result.temporary, true);
    assert.equal(result.responseCode, 535);
    assert.match(result.message, /^Logging in to the mail server 127\.0\.0\.1:\d+ as "faxline" failed \(it answered "535 5\.7\.8 Authentication credentials invalid" to AUTH PLAIN\)\. Check mail\.user and mail\.password\.$/);
    assert.equal(mails.length, 0);
  });

  it("gives a temporary failure when starttls is required and the certificate is not trusted", async () => {
    const { port } = await startSmtpSink({ disabledCommands: [] });
    const result = await sendStatusMail(createMailTransport(mailConfig(port, { security: "starttls" })), await statusMail("TIFF", 1));
    assertFailed(result);
    assert.equal(result.temporary, true);
    assert.match(result.message, /^TLS with the mail server 127\.0\.0\.1:\d+ failed \(.+\)\. Check that the server's certificate is valid for 127\.0\.0\.1/);
  });

  it("gives a temporary failure naming mail.security when tls meets a server without TLS", async () => {
    const { port } = await startSmtpSink();
    const result = await sendStatusMail(createMailTransport(mailConfig(port, { security: "tls" })), await statusMail("TIFF", 1));
    assertFailed(result);
    assert.deepEqual({ temporary: result.temporary, responseCode: result.responseCode }, { temporary: true, responseCode: null });
    assert.match(result.message, /^TLS with the mail server 127\.0\.0\.1:\d+ failed \(.+\)\. Check mail\.security: "tls" needs a server that speaks TLS from the first byte/s);
  });

  it("gives a temporary failure for a 451 answer", async () => {
    const { port, mails } = await startSmtpSink({ onRcptTo: (_address, _session, callback) => callback(smtpError(451, "4.3.0 Try again later")) });
    const result = await sendStatusMail(createMailTransport(mailConfig(port)), await statusMail("TIFF", 1));
    assertFailed(result);
    assert.deepEqual({ temporary: result.temporary, responseCode: result.responseCode }, { temporary: true, responseCode: 451 });
    assert.match(result.message, /^The mail server 127\.0\.0\.1:\d+ refused the mail for now \(it answered "451 4\.3\.0 Try again later" to RCPT TO\)\. A later try may succeed\.$/);
    assert.equal(mails.length, 0);
  });

  it("gives a permanent failure for a 550 answer", async () => {
    const { port } = await startSmtpSink({ onRcptTo: (_address, _session, callback) => callback(smtpError(550, "5.1.1 No such user")) });
    const result = await sendStatusMail(createMailTransport(mailConfig(port)), await statusMail("TIFF", 1));
    assertFailed(result);
    assert.deepEqual({ temporary: result.temporary, responseCode: result.responseCode }, { temporary: false, responseCode: 550 });
    assert.match(result.message, /rejected the mail to ok@example\.com for good \(it answered "550 5\.1\.1 No such user" to RCPT TO\)\. Check the address ok@example\.com/);
  });

  it("gives a permanent failure when the server refuses the message after DATA", async () => {
    const sink = await startSmtpSink();
    sink.failWith = { code: 554, message: "5.6.0 Message content rejected" };
    const { port } = sink;
    const result = await sendStatusMail(createMailTransport(mailConfig(port)), await statusMail("TIFF", 1));
    assertFailed(result);
    assert.deepEqual({ temporary: result.temporary, responseCode: result.responseCode }, { temporary: false, responseCode: 554 });
    assert.match(result.message, /\(it answered "554 5\.6\.0 Message content rejected"[^)]*\)\. The server refused the mail itself/);
  });

  it("gives a temporary failure when no server listens on the port", async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const free = (probe.address() as AddressInfo).port;
        probe.close(() => resolve(free));
      });
    });
    const result = await sendStatusMail(createMailTransport(mailConfig(port)), await statusMail("TIFF", 1));
    assertFailed(result);
    assert.deepEqual({ temporary: result.temporary, responseCode: result.responseCode }, { temporary: true, responseCode: null });
    assert.match(result.message, new RegExp(`^Could not talk to the mail server 127\\.0\\.0\\.1:${port} \\(.*ECONNREFUSED.*\\)\\. Check mail\\.host and mail\\.port`));
  });
});

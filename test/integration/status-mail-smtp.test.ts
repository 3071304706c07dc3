/**
 * Status mails against a real SMTP server (smtp-server) in this process: what arrives, and how
 * refusals and unreachable servers are classified.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type AddressInfo } from "node:net";
import { PDFDocument } from "pdf-lib";
import sharp from "sharp";
import { SMTPServer, type SMTPServerOptions } from "smtp-server";
import type { FaxlineConfig } from "../../src/config/schema.ts";
import { composeStatusMail, type StatusMailMessage } from "../../src/notifications/email/compose-status-mail.ts";
import { createMailTransport, sendStatusMail, type SendStatusMailResult } from "../../src/notifications/email/send-status-mail.ts";
import type { AttachedImageFormat, ReportSnapshot } from "../../src/notifications/report-snapshot.ts";

interface ReceivedMail {
  raw: string;
  mailFrom: string;
  rcptTo: string[];
  secure: boolean;
  user: string | undefined;
}

/** Starts an SMTP server on a free loopback port; `handlers` override its defaults. */
async function startSmtpServer(handlers: Partial<SMTPServerOptions> = {}): Promise<{ port: number; received: ReceivedMail[] }> {
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    logger: false,
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        received.push({
          raw: Buffer.concat(chunks).toString("latin1"),
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          rcptTo: session.envelope.rcptTo.map((r) => r.address),
          secure: session.secure,
          user: session.user as string | undefined,
        });
        callback();
      });
    },
    ...handlers,
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.server.address() as AddressInfo).port, received };
}

function smtpError(responseCode: number, text: string): Error {
  return Object.assign(new Error(text), { responseCode });
}

function mailConfig(port: number, overrides: Partial<FaxlineConfig["mail"]> = {}): FaxlineConfig["mail"] {
  return { host: "127.0.0.1", port, security: "none", user: "", password: "", from: "Faxline <fax@example.com>", timeout: 10_000, retrySchedule: [], ...overrides };
}

async function faxTiff(pages: number): Promise<Buffer> {
  const height = 1146;
  const raw = Buffer.alloc(1728 * height * pages, 255);
  raw.fill(0, 0, 1728 * 20);
  return sharp(raw, { raw: { width: 1728, height: height * pages, channels: 1, pageHeight: height } })
    .toColourspace("b-w")
    .tiff({ compression: "ccittfax4", bitdepth: 1, miniswhite: true, xres: 204 / 25.4, yres: 98 / 25.4, resolutionUnit: "inch" })
    .toBuffer();
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

// --- a minimal MIME reader: enough for what nodemailer writes ---

interface MimePart {
  headers: Map<string, string>;
  body: Buffer;
  parts: MimePart[];
}

function parseMime(raw: string): MimePart {
  const split = raw.indexOf("\r\n\r\n");
  const headers = new Map<string, string>();
  for (const line of raw.slice(0, split).replace(/\r\n[ \t]+/g, " ").split("\r\n")) {
    const colon = line.indexOf(":");
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const content = raw.slice(split + 4);
  const boundary = /^multipart\/.*boundary="?([^";]+)"?/i.exec(headers.get("content-type") ?? "")?.[1];
  if (boundary !== undefined) {
    const pieces = content.split(`--${boundary}`).slice(1, -1);
    return { headers, body: Buffer.alloc(0), parts: pieces.map((piece) => parseMime(piece.replace(/^\r\n/, "").replace(/\r\n$/, ""))) };
  }
  const encoding = (headers.get("content-transfer-encoding") ?? "7bit").toLowerCase();
  const body =
    encoding === "base64" ? Buffer.from(content.replace(/\s+/g, ""), "base64") : encoding === "quoted-printable" ? decodeQuotedPrintable(content) : Buffer.from(content, "latin1");
  return { headers, body, parts: [] };
}

function decodeQuotedPrintable(text: string): Buffer {
  const unfolded = text.replace(/=\r\n/g, "");
  const bytes: number[] = [];
  for (let i = 0; i < unfolded.length; i++) {
    if (unfolded[i] === "=" && /^[0-9A-F]{2}$/i.test(unfolded.slice(i + 1, i + 3))) {
      bytes.push(parseInt(unfolded.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(unfolded.charCodeAt(i));
    }
  }
  return Buffer.from(bytes);
}

/** Decodes RFC 2047 encoded words (UTF-8, B or Q), as in a Subject header. */
function decodeHeader(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, "?==?")
    .replace(/=\?utf-8\?([BQ])\?([^?]*)\?=/gi, (_, kind: string, text: string) =>
      (kind.toUpperCase() === "B" ? Buffer.from(text, "base64") : decodeQuotedPrintable(text.replace(/_/g, " "))).toString("utf8"),
    );
}

function leaves(part: MimePart): MimePart[] {
  return part.parts.length === 0 ? [part] : part.parts.flatMap(leaves);
}

function leafOfType(message: MimePart, type: string): MimePart {
  const leaf = leaves(message).find((p) => (p.headers.get("content-type") ?? "").toLowerCase().startsWith(type));
  assert.ok(leaf, `no ${type} part`);
  return leaf;
}

function assertSent(result: SendStatusMailResult): asserts result is SendStatusMailResult & { ok: true } {
  assert.ok(result.ok, `not sent: ${result.ok ? "" : result.message}`);
}

function assertFailed(result: SendStatusMailResult): asserts result is SendStatusMailResult & { ok: false } {
  assert.equal(result.ok, false, "sent although the server refused");
}

describe("status mails over SMTP", () => {
  it("delivers a UTF-8 mail with text, HTML and the fax image as TIFF", async () => {
    const { port, received } = await startSmtpServer();
    const result = await sendStatusMail(createMailTransport(mailConfig(port)), await statusMail("TIFF", 2));
    assertSent(result);
    assert.match(result.messageId, /^<.+@.+>$/);
    assert.match(result.response, /^250 /);

    assert.equal(received.length, 1);
    const [mail] = received;
    assert.equal(mail?.mailFrom, "fax@example.com");
    assert.deepEqual(mail?.rcptTo, ["ok@example.com"]);
    const message = parseMime(mail!.raw);
    assert.equal(decodeHeader(message.headers.get("subject")!), "Fax delivered: Rechnung Müller, job FJSMTPTEST000000000001");
    assert.equal(message.headers.get("auto-submitted"), "auto-generated");
    assert.equal(message.headers.get("x-faxline-job-id"), "FJSMTPTEST000000000001");

    const text = leafOfType(message, "text/plain");
    assert.match(text.headers.get("content-type")!, /charset=utf-8/i);
    assert.match(text.body.toString("utf8"), /ToName: Jürgen Müller <Einkauf>/);
    const html = leafOfType(message, "text/html").body.toString("utf8");
    assert.match(html, /ToName: Jürgen Müller &lt;Einkauf&gt;/);

    const tiff = leafOfType(message, "image/tiff");
    assert.match(tiff.headers.get("content-disposition")!, /^attachment; filename="?fax-FJSMTPTEST000000000001\.tif"?$/);
    const metadata = await sharp(tiff.body).metadata();
    assert.equal(metadata.format, "tiff");
    assert.equal(metadata.pages, 2);
    assert.equal(metadata.width, 1728);
  });

  it("logs in over opportunistic STARTTLS with a self-signed certificate and attaches a PDF", async () => {
    const { port, received } = await startSmtpServer({
      disabledCommands: [],
      authMethods: ["PLAIN", "LOGIN"],
      onAuth(auth, _session, callback) {
        if (auth.username === "faxline" && auth.password === "s3cret") callback(null, { user: auth.username });
        else callback(smtpError(535, "5.7.8 Authentication credentials invalid"));
      },
    });
    const transport = createMailTransport(mailConfig(port, { security: "opportunistic", user: "faxline", password: "s3cret" }));
    assertSent(await sendStatusMail(transport, await statusMail("PDF", 3)));

    assert.equal(received[0]?.secure, true, "the session was encrypted");
    assert.equal(received[0]?.user, "faxline");
    const pdf = leafOfType(parseMime(received[0]!.raw), "application/pdf");
    assert.match(pdf.headers.get("content-disposition")!, /filename="?fax-FJSMTPTEST000000000001\.pdf"?$/);
    assert.equal((await PDFDocument.load(pdf.body)).getPageCount(), 3);
  });

  it("gives a temporary failure naming the login when the password is wrong", async () => {
    const { port, received } = await startSmtpServer({
      disabledCommands: [],
      onAuth: (_auth, _session, callback) => callback(smtpError(535, "5.7.8 Authentication credentials invalid")),
    });
    const transport = createMailTransport(mailConfig(port, { security: "opportunistic", user: "faxline", password: "wrong" }));
    const result = await sendStatusMail(transport, await statusMail("TIFF", 1));
    assertFailed(result);
    assert.equal(result.temporary, true);
    assert.equal(result.responseCode, 535);
    assert.match(result.message, /^Logging in to the mail server 127\.0\.0\.1:\d+ as "faxline" failed \(it answered "535 5\.7\.8 Authentication credentials invalid" to AUTH PLAIN\)\. Check mail\.user and mail\.password\.$/);
    assert.equal(received.length, 0);
  });

  it("gives a temporary failure when starttls is required and the certificate is not trusted", async () => {
    const { port } = await startSmtpServer({ disabledCommands: [] });
    const result = await sendStatusMail(createMailTransport(mailConfig(port, { security: "starttls" })), await statusMail("TIFF", 1));
    assertFailed(result);
    assert.equal(result.temporary, true);
    assert.match(result.message, /^TLS with the mail server 127\.0\.0\.1:\d+ failed \(.+\)\. Check that the server's certificate is valid for 127\.0\.0\.1/);
  });

  it("gives a temporary failure naming mail.security when tls meets a server without TLS", async () => {
    const { port } = await startSmtpServer();
    const result = await sendStatusMail(createMailTransport(mailConfig(port, { security: "tls" })), await statusMail("TIFF", 1));
    assertFailed(result);
    assert.deepEqual({ temporary: result.temporary, responseCode: result.responseCode }, { temporary: true, responseCode: null });
    assert.match(result.message, /^TLS with the mail server 127\.0\.0\.1:\d+ failed \(.+\)\. Check mail\.security: "tls" needs a server that speaks TLS from the first byte/s);
  });

  it("gives a temporary failure for a 451 answer", async () => {
    const { port, received } = await startSmtpServer({ onRcptTo: (_address, _session, callback) => callback(smtpError(451, "4.3.0 Try again later")) });
    const result = await sendStatusMail(createMailTransport(mailConfig(port)), await statusMail("TIFF", 1));
    assertFailed(result);
    assert.deepEqual({ temporary: result.temporary, responseCode: result.responseCode }, { temporary: true, responseCode: 451 });
    assert.match(result.message, /^The mail server 127\.0\.0\.1:\d+ refused the mail for now \(it answered "451 4\.3\.0 Try again later" to RCPT TO\)\. A later try may succeed\.$/);
    assert.equal(received.length, 0);
  });

  it("gives a permanent failure for a 550 answer", async () => {
    const { port } = await startSmtpServer({ onRcptTo: (_address, _session, callback) => callback(smtpError(550, "5.1.1 No such user")) });
    const result = await sendStatusMail(createMailTransport(mailConfig(port)), await statusMail("TIFF", 1));
    assertFailed(result);
    assert.deepEqual({ temporary: result.temporary, responseCode: result.responseCode }, { temporary: false, responseCode: 550 });
    assert.match(result.message, /rejected the mail to ok@example\.com for good \(it answered "550 5\.1\.1 No such user" to RCPT TO\)\. Check the address ok@example\.com/);
  });

  it("gives a permanent failure when the server refuses the message after DATA", async () => {
    const { port } = await startSmtpServer({
      onData(stream, _session, callback) {
        stream.resume();
        stream.on("end", () => callback(smtpError(554, "5.6.0 Message content rejected")));
      },
    });
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

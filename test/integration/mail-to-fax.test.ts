/**
 * Mail-to-fax against the node's real SMTP listener (docs/mail-to-fax.md): Nodemailer as the
 * sending server, with STARTTLS against a throw-away certificate (openssl); the status reports
 * go to a real SMTP server (test/support/smtp-sink.ts). Every refusal of the documented table is
 * asked for with a mail that deserves it and checked for its code and text.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import nodemailer, { type SendMailOptions } from "nodemailer";
import { hashPassword } from "../../src/accounts/passwords.ts";
import { putMailToFaxCustomer, putMailToFaxDomain, putMailToFaxProfile, putMailToFaxUser } from "../../src/store/queries/mail-to-fax.ts";
import { SMTP_REPLIES } from "../../src/mail-to-fax/smtp-replies.ts";
import { api, createTestLogin, eventually, startTestNode, tempDir, waitForFinalReport, type TestNode } from "../support/test-node.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";
import { decodeHeader, parseMime, SmtpSink } from "../support/smtp-sink.ts";
import { GOLDEN_DOCX } from "../fixtures/golden/golden-fax-pages.ts";
import { makeCertificate, sendMail, twoPagePdf } from "../support/mail-to-fax-client.ts";

const FAX_DOMAIN = "fax.example.test";
const RELAY_ID = "mx.example.test";

/** What the trusted relay writes into a mail of `from` whose domain it checked. */
const relayed = (from: string) => ({ "Authentication-Results": `${RELAY_ID}; spf=pass smtp.mailfrom=${from.split("@")[1]}; dmarc=pass header.from=${from.split("@")[1]}` });

/** A mail through the trusted relay, which confirmed the sender's domain (users without PIN need it). */
function sendRelayed(port: number, ca: Buffer, mail: SendMailOptions): ReturnType<typeof sendMail> {
  const from = typeof mail.envelope === "object" && mail.envelope?.from ? String(mail.envelope.from) : String(mail.from).replace(/^.*<|>$/g, "");
  return sendMail(port, ca, mail.raw ? mail : { ...mail, headers: { ...relayed(from), ...(mail.headers as Record<string, string> | undefined) } });
}

const jobIdOf = (response: string): string => {
  const m = /fax job (FJ[A-Za-z0-9]+)/.exec(response);
  assert.ok(m, `no job id in "${response}"`);
  return m[1]!;
};

for (const dialect of DIALECTS) describe(`${dialect}: mail-to-fax over SMTP`, () => {
  const store = withDialect(dialect);
  let node: TestNode;
  let sink: SmtpSink;
  let ca: Buffer;
  let creds: { custNr: string; login: string; password: string };
  const dir = tempDir("faxline-m2f-");
  after(() => dir.remove());

  before(async () => {
    const tls = makeCertificate(dir.path);
    ca = readFileSync(tls.cert);
    sink = new SmtpSink();
    await sink.start();
    node = await startTestNode({
      ...store.overrides(),
      "node.roles": "api,scheduler,sender,notifier,retention,mail-to-fax",
      "mailToFax.port": 0,
      "mailToFax.host": "127.0.0.1",
      "mailToFax.domains": FAX_DOMAIN,
      "mailToFax.tlsCertFile": tls.cert,
      "mailToFax.tlsKeyFile": tls.key,
      "mailToFax.requireTls": true,
      "mailToFax.trustedRelays": "127.0.0.1",
      "mailToFax.authservId": RELAY_ID,
      "mailToFax.pinMaxFailures": 3,
      "mail.host": "127.0.0.1",
      "mail.port": sink.port,
      "mail.security": "none",
      "mail.from": "Faxline <fax@example.test>",
      "mail.retrySchedule": "100ms,100ms",
    });
    creds = await createTestLogin(node, { login: "m2f-jobs", isTest: true });
    const db = node.node.context.store.db;
    const now = Date.now();
    await putMailToFaxCustomer(db, { custNr: creds.custNr, login: creds.login, settings: { fax: { csid: "ACME SALES" }, reportEmail: { attachFaxImage: "NEVER" } } }, now);
    await putMailToFaxProfile(db, { custNr: creds.custNr, name: "attachments-only", settings: { fax: { sendAttachmentsOnly: true } } }, now);
    await putMailToFaxUser(db, { email: "Alice@Example.org", custNr: creds.custNr, profile: null, active: true, settings: {} }, now);
    await putMailToFaxUser(db, { email: "bob@example.org", custNr: creds.custNr, profile: "attachments-only", active: true, settings: {} }, now);
    await putMailToFaxUser(db, { email: "dave@example.org", custNr: creds.custNr, profile: null, active: false, settings: {} }, now);
    await putMailToFaxDomain(db, { custNr: creds.custNr, domain: "example.net", pinHash: await hashPassword("471147") }, now);
  });
  after(async () => {
    await node?.stop();
    await sink?.stop();
  });

  const port = () => node.node.mailToFaxPort!;
  const client = () => api(node.url, creds);
  const jobRow = (jobId: string) => node.node.context.store.db.selectFrom("jobs").selectAll().where("id", "=", jobId).executeTakeFirstOrThrow();

  it("turns a mail with a PDF and a DOCX into one job that the test line delivers, and reports it to the sender in the mail's thread", async () => {
    const pdf = await twoPagePdf();
    const messageId = `<order-1-${dialect}@example.org>`;
    const sent = await sendRelayed(port(), ca, {
      from: "Alice Example <alice@example.org>",
      to: [`+49 30 1234567@${FAX_DOMAIN}`.replace(/ /g, ""), `0301234568@${FAX_DOMAIN}`],
      subject: "Order 4711",
      messageId,
      text: "Please find our order attached.\n\nAlice",
      attachments: [
        { filename: "order.pdf", content: pdf, contentType: "application/pdf" },
        { filename: "letter.docx", content: readFileSync(GOLDEN_DOCX) },
      ],
    });
    assert.ok(sent.ok, `the mail was refused: ${sent.response}`);
    assert.match(sent.response, /^250 2\.0\.0 Accepted as fax job FJ\S+ to 2 recipients/);
    const jobId = jobIdOf(sent.response);

    const job = await jobRow(jobId);
    assert.equal(job.source, "M2F");
    assert.equal(job.cust_nr, creds.custNr);
    assert.equal(job.login, creds.login);
    assert.equal(job.csid, "ACME SALES");
    assert.equal(job.customer_reference, "Order 4711");
    assert.deepEqual(JSON.parse(job.mail_origin!), { messageId, sender: "alice@example.org", subject: "Order 4711", language: "en" });
    const docs = await node.node.context.store.db.selectFrom("job_documents").select(["ordinal", "name"]).where("job_id", "=", jobId).orderBy("ordinal").execute();
    assert.deepEqual(docs.map((d) => d.name), ["mail.txt", "order.pdf", "letter.docx"]);

    // Visible through the REST API like any job of the login, and delivered by the test line.
    const report = await waitForFinalReport(client(), creds.custNr, jobId, 60_000);
    assert.deepEqual(report.recipientStatus.map((r: { number: string; status: string }) => [r.number, r.status]), [["+49301234567", "OK"], ["0301234568", "OK"]]);
    assert.equal(report.pages, 4, "the mail's text, the PDF's two pages and the one-page letter");

    const mail = await eventually(async () => sink.mails.find((m) => m.raw.includes(jobId)), 90_000, "the report mail");
    assert.deepEqual(mail.to, ["alice@example.org"]);
    const headers = parseMime(mail.raw).headers;
    assert.equal(headers.get("x-faxline-report"), "success");
    assert.equal(headers.get("in-reply-to"), messageId);
    assert.equal(headers.get("references"), messageId);
  });

  it("faxes a mail without attachments as its text, and refuses one with nothing to fax", async () => {
    // Written in German (Content-Language): the report is German too.
    const textOnly = await sendRelayed(port(), ca, { from: "alice@example.org", to: `+4930555000@${FAX_DOMAIN}`, subject: "Notiz", text: "Bitte zurückrufen.", headers: { "Content-Language": "de-DE" } });
    assert.ok(textOnly.ok, textOnly.response);
    const jobId = jobIdOf(textOnly.response);
    const docs = await node.node.context.store.db.selectFrom("job_documents").select("name").where("job_id", "=", jobId).execute();
    assert.deepEqual(docs.map((d) => d.name), ["mail.txt"]);
    const report = await eventually(async () => sink.mails.find((m) => m.raw.includes(jobId)), 90_000, "the German report mail");
    assert.equal(decodeHeader(parseMime(report.raw).headers.get("subject")!), `Fax zugestellt: Auftrag ${jobId}`);

    const empty = await sendRelayed(port(), ca, { from: "alice@example.org", to: `+4930555000@${FAX_DOMAIN}`, subject: "Nothing", text: "" });
    assert.equal(empty.responseCode, 554);
    assert.match(empty.response, /5\.6\.0 The mail has nothing to fax: it has no attachment and no text/);

    // bob's profile faxes attachments only: his text is not faxed, so his mail has nothing to fax.
    const bob = await sendRelayed(port(), ca, { from: "bob@example.org", to: `+4930555000@${FAX_DOMAIN}`, subject: "Text", text: "Only text." });
    assert.equal(bob.responseCode, 554);
    assert.match(bob.response, /your settings fax only attachments/);
  });

  it("refuses unknown and switched-off senders, other domains and addresses that are no fax numbers at RCPT", async () => {
    const stranger = await sendMail(port(), ca, { from: "mallory@evil.test", to: `+4930555000@${FAX_DOMAIN}`, subject: "x", text: "x" });
    assert.equal(stranger.responseCode, 550);
    assert.equal(stranger.command, "RCPT TO");
    assert.match(stranger.response, /5\.7\.1 The sender may not send faxes through this service: mallory@evil\.test is neither a mail-to-fax user/);

    const dave = await sendRelayed(port(), ca, { from: "dave@example.org", to: `+4930555000@${FAX_DOMAIN}`, subject: "x", text: "x" });
    assert.equal(dave.responseCode, 550);
    assert.match(dave.response, /5\.7\.1 The sender's mail-to-fax access is switched off/);

    const relay = await sendRelayed(port(), ca, { from: "alice@example.org", to: "someone@example.com", subject: "x", text: "x" });
    assert.equal(relay.responseCode, 550);
    assert.match(relay.response, /5\.7\.1 Relaying denied: this server takes mail only for fax numbers at fax\.example\.test/);

    const notNumber = await sendRelayed(port(), ca, { from: "alice@example.org", to: `sales@${FAX_DOMAIN}`, subject: "x", text: "x" });
    assert.equal(notNumber.responseCode, 550);
    assert.match(notNumber.response, /5\.1\.1 Not a fax number: "sales" is not a fax number/);

    const nullSender = await sendMail(port(), ca, { envelope: { from: "", to: `+4930555000@${FAX_DOMAIN}` }, from: "alice@example.org", subject: "x", text: "x" });
    assert.equal(nullSender.responseCode, 550);
    assert.match(nullSender.response, /empty sender/);
  });

  it("authorises a sender of an allowed domain by the trusted relay's DMARC result or by the domain's PIN, and refuses it otherwise", async () => {
    const to = `+4930555001@${FAX_DOMAIN}`;
    const plain = await sendMail(port(), ca, { from: "carol@example.net", to, subject: "Invoice", text: "x" });
    assert.equal(plain.responseCode, 550);
    assert.equal(plain.command, "DATA");
    assert.match(plain.response, /5\.7\.23 .*the mail carries no SPF, DKIM or DMARC results of a trusted relay for example\.net.*PIN=123456/);

    const dmarc = await sendMail(port(), ca, {
      from: "carol@example.net",
      to,
      subject: "Invoice",
      text: "x",
      headers: { "Authentication-Results": `${RELAY_ID}; spf=pass smtp.mailfrom=example.net; dkim=pass header.d=example.net; dmarc=pass (p=reject) header.from=example.net` },
    });
    assert.ok(dmarc.ok, dmarc.response);

    // A header of another authserv-id (one the sender wrote himself) is not believed.
    const forged = await sendMail(port(), ca, { from: "carol@example.net", to, subject: "Invoice", text: "x", headers: { "Authentication-Results": "forged.example; dmarc=pass header.from=example.net" } });
    assert.equal(forged.responseCode, 550);

    const failed = await sendRelayed(port(), ca, { from: "alice@example.org", to, subject: "x", text: "x", headers: { "Authentication-Results": `${RELAY_ID}; dmarc=fail header.from=example.org` } });
    assert.equal(failed.responseCode, 550);
    assert.match(failed.response, /5\.7\.23 .*DMARC check failed/);

    const pin = await sendMail(port(), ca, { from: "carol@example.net", to, subject: "Invoice PIN=471147", text: "x" });
    assert.ok(pin.ok, pin.response);
    const job = await jobRow(jobIdOf(pin.response));
    assert.equal(job.customer_reference, "Invoice", "the PIN is taken out of the subject");

    const wrong = await sendMail(port(), ca, { from: "carol@example.net", to, subject: "Invoice PIN=123456", text: "x" });
    assert.equal(wrong.responseCode, 550);
    assert.match(wrong.response, /5\.7\.8 The PIN in the subject is wrong or missing/);
  });

  it("refuses a user without PIN whose mail the trusted relay did not confirm: an address alone is forged in one line", async () => {
    const forged = await sendMail(port(), ca, { from: "alice@example.org", to: `+4930555000@${FAX_DOMAIN}`, subject: "Pay this", text: "x" });
    assert.equal(forged.responseCode, 550);
    assert.equal(forged.command, "DATA");
    assert.match(forged.response, /5\.7\.23 .*no SPF, DKIM or DMARC results of a trusted relay for example\.org/);
    // From an address that is none of mailToFax.trustedRelays (127.0.0.1): not even taken, with
    // or without a header that looks like the relay's.
    const outsider = await sendMail(port(), ca, { from: "alice@example.org", to: `+4930555000@${FAX_DOMAIN}`, subject: "x", text: "x", headers: relayed("alice@example.org") }, "127.0.0.2");
    assert.equal(outsider.responseCode, 550);
    assert.equal(outsider.command, "RCPT TO");
    assert.match(outsider.response, /5\.7\.1 This server takes mail only from the organisation's mail servers: 127\.0\.0\.2 is none of/);
    const otherDomain = await sendMail(port(), ca, { from: "alice@example.org", to: `+4930555000@${FAX_DOMAIN}`, subject: "x", text: "x", headers: { "Authentication-Results": `${RELAY_ID}; dmarc=pass header.from=evil.test` } });
    assert.equal(otherDomain.responseCode, 550, "a DMARC pass for another domain confirms nothing");
  });

  it("locks a PIN out after mailToFax.pinMaxFailures wrong guesses from one address, counted per PIN owner (a domain's over all its addresses)", async () => {
    const to = `+4930555003@${FAX_DOMAIN}`;
    // A right PIN forgives earlier wrong ones (the tests above left one for example.net).
    const right = await sendMail(port(), ca, { from: "carol@example.net", to, subject: "Fine PIN=471147", text: "x" });
    assert.ok(right.ok, right.response);
    // Guesses spread over made-up addresses of the allowed domain count together.
    for (let i = 0; i < 3; i++) {
      const wrong = await sendMail(port(), ca, { from: `erin${i}@example.net`, to, subject: `Try PIN=${100000 + i}`, text: "x" });
      assert.match(wrong.response, /5\.7\.8 The PIN in the subject is wrong/);
    }
    const locked = await sendMail(port(), ca, { from: "erin9@example.net", to, subject: "Right PIN=471147", text: "x" });
    assert.equal(locked.responseCode, 450, locked.response);
    assert.match(locked.response, /4\.7\.1 Too many wrong PINs from this sender; try again later/);
    // Kept in the store, where every mail-to-fax node of the region reads it, under the domain.
    const row = await node.node.context.store.db.selectFrom("m2f_pin_failures").selectAll().where("sender", "=", "@example.net").executeTakeFirstOrThrow();
    assert.equal(row.failures, 3);
    assert.ok(row.locked_until !== null && row.locked_until > Date.now());
  });

  it("refuses a different mail that reuses a Message-ID instead of dropping it", async () => {
    const base = { from: "alice@example.org", to: `+4930555004@${FAX_DOMAIN}`, subject: "Reused", messageId: `<reused-${dialect}@example.org>` };
    const first = await sendRelayed(port(), ca, { ...base, text: "first letter" });
    assert.ok(first.ok, first.response);
    const other = await sendRelayed(port(), ca, { ...base, text: "a different letter" });
    assert.equal(other.responseCode, 554);
    assert.match(other.response, /5\.6\.0 A different mail with this Message-ID was already faxed: job FJ\S+ was made from a mail with Message-ID/);
  });

  it("refuses a mail whose From is not its sender", async () => {
    const sent = await sendRelayed(port(), ca, { envelope: { from: "alice@example.org", to: `+4930555000@${FAX_DOMAIN}` }, from: "boss@example.org", subject: "x", text: "x" });
    assert.equal(sent.responseCode, 550);
    assert.match(sent.response, /5\.7\.1 The From address of the mail differs from its sender/);
  });

  it("refuses a 30 MB mail with 552 without keeping it", async () => {
    const big = Buffer.alloc(30 * 1024 * 1024, 0x41);
    const sent = await sendRelayed(port(), ca, { from: "alice@example.org", to: `+4930555000@${FAX_DOMAIN}`, subject: "big", text: "x", attachments: [{ filename: "big.pdf", content: big, contentType: "application/pdf" }] });
    assert.equal(sent.responseCode, 552);
    assert.match(sent.response, /5\.3\.4 The mail is too big to fax/);
  });

  it("refuses malformed MIME and attachments that cannot be faxed with 554", async () => {
    const envelope = { from: "alice@example.org", to: [`+4930555000@${FAX_DOMAIN}`] };
    const wrongBoundary = [
      "From: alice@example.org",
      `To: +4930555000@${FAX_DOMAIN}`,
      "Subject: broken",
      "MIME-Version: 1.0",
      'Content-Type: multipart/mixed; boundary="declared"',
      "",
      "--other",
      "Content-Type: application/pdf; name=order.pdf",
      "Content-Transfer-Encoding: base64",
      "",
      "JVBERi0xLjQK",
      "--other--",
      "",
    ].join("\r\n");
    const broken = await sendMail(port(), ca, { envelope, raw: wrongBoundary });
    assert.equal(broken.responseCode, 554);
    assert.match(broken.response, /5\.6\.0 The mail cannot be read: the MIME boundary "declared" never occurs/);

    const noBoundary = wrongBoundary.replace('multipart/mixed; boundary="declared"', "multipart/mixed");
    const missing = await sendMail(port(), ca, { envelope, raw: noBoundary });
    assert.equal(missing.responseCode, 554);
    assert.match(missing.response, /names no boundary/);

    const zip = await sendRelayed(port(), ca, { from: "alice@example.org", to: envelope.to, subject: "zip", text: "x", attachments: [{ filename: "orders.zip", content: Buffer.from("PK\u0003\u0004"), contentType: "application/zip" }] });
    assert.equal(zip.responseCode, 554);
    assert.match(zip.response, /5\.6\.1 An attachment cannot be faxed: "orders\.zip" \(application\/zip\)/);
  });

  it("does not fax a report sent back to a fax address, an auto-reply, or a mail that went round in circles", async () => {
    const report = sink.mails[0];
    assert.ok(report, "the first test left a report mail");
    const bounced = await sendMail(port(), ca, { envelope: { from: "alice@example.org", to: [`+4930555000@${FAX_DOMAIN}`] }, raw: report.raw.replace(/^From: .*$/m, "From: alice@example.org") });
    assert.equal(bounced.responseCode, 550);
    assert.match(bounced.response, /Automatic mail \(a report or an auto-reply\) is not faxed: this is a report of the fax service itself/);

    const auto = await sendRelayed(port(), ca, { from: "alice@example.org", to: `+4930555000@${FAX_DOMAIN}`, subject: "Out of office", text: "away", headers: { "Auto-Submitted": "auto-replied" } });
    assert.equal(auto.responseCode, 550);
    assert.match(auto.response, /Auto-Submitted: auto-replied/);

    const hops = Array.from({ length: 31 }, (_, i) => `Received: from relay${i}.example.org by relay${i + 1}.example.org; Mon, 2 Mar 2026 10:00:00 +0000`).join("\r\n");
    const raw = `${hops}\r\nFrom: alice@example.org\r\nTo: +4930555000@${FAX_DOMAIN}\r\nSubject: loop\r\n\r\nround and round\r\n`;
    const loop = await sendMail(port(), ca, { envelope: { from: "alice@example.org", to: [`+4930555000@${FAX_DOMAIN}`] }, raw });
    assert.equal(loop.responseCode, 554);
    assert.match(loop.response, /5\.4\.6 Mail loop detected: the mail has passed 31 mail servers/);

    const fromFaxAddress = await sendMail(port(), ca, { from: `+4930555000@${FAX_DOMAIN}`, to: `+4930555001@${FAX_DOMAIN}`, subject: "x", text: "x" });
    assert.equal(fromFaxAddress.responseCode, 554);
  });

  it("answers a mail delivered again (its 250 lost) with the job it already made", async () => {
    const mail = { from: "alice@example.org", to: `+4930555002@${FAX_DOMAIN}`, subject: "Twice", text: "once only", messageId: `<twice-${dialect}@example.org>` };
    const first = await sendRelayed(port(), ca, mail);
    const second = await sendRelayed(port(), ca, mail);
    assert.ok(first.ok && second.ok, `${first.response} / ${second.response}`);
    assert.match(second.response, /Already accepted as fax job/);
    assert.equal(jobIdOf(second.response), jobIdOf(first.response));
    const jobs = await node.node.context.store.db.selectFrom("jobs").select("id").where("customer_reference", "=", "Twice").execute();
    assert.equal(jobs.length, 1);
  });

  it("requires STARTTLS before MAIL FROM", async () => {
    const transport = nodemailer.createTransport({ host: "127.0.0.1", port: port(), secure: false, ignoreTLS: true });
    try {
      await assert.rejects(transport.sendMail({ from: "alice@example.org", to: `+4930555000@${FAX_DOMAIN}`, subject: "x", text: "x" }), (e: { responseCode?: number; response?: string }) => {
        assert.equal(e.responseCode, 530);
        assert.match(e.response ?? "", /5\.7\.0 Must issue a STARTTLS command first/);
        return true;
      });
    } finally {
      transport.close();
    }
  });

  it("names every reply of the table in docs/mail-to-fax.md", () => {
    const doc = readFileSync(new URL("../../docs/mail-to-fax.md", import.meta.url), "utf8");
    for (const [kind, reply] of Object.entries(SMTP_REPLIES)) {
      assert.ok(doc.includes(`\`${kind}\``) && doc.includes(`${reply.code} ${reply.status}`), `docs/mail-to-fax.md lacks ${kind} (${reply.code} ${reply.status})`);
    }
  });
});

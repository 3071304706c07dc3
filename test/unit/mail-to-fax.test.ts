/**
 * The pure parts of mail-to-fax (src/mail-to-fax/): the settings hierarchy, fax addresses, the
 * relay's Authentication-Results, who may send, loops, the subject's PIN and the mail as a
 * send request.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { checkSettings, effectiveSettings, MAIL_TO_FAX_DEFAULTS } from "../../src/mail-to-fax/settings.ts";
import { readFaxAddress } from "../../src/mail-to-fax/fax-address.ts";
import { confirmsDomain, parseAuthenticationResults, trustedVerdicts } from "../../src/mail-to-fax/authentication-results.ts";
import { authorizeEnvelopeSender, authorizeMail, type SenderRecord } from "../../src/mail-to-fax/authorize-sender.ts";
import { detectLoop, MAX_RECEIVED_HEADERS } from "../../src/mail-to-fax/loop-detection.ts";
import { documentName, extractPin, mailToJobRequest } from "../../src/mail-to-fax/mail-to-job.ts";
import { mailLanguage } from "../../src/mail-to-fax/mail-origin.ts";
import { REGION_NUMBER_CONTEXT } from "../../src/numbers/normalize-number.ts";

describe("mail-to-fax settings", () => {
  it("merges customer, profile and user field by field, the lower level winning", () => {
    const s = effectiveSettings(
      { fax: { csid: "ACME", resolution: "LOW" }, personalization: { FromCompanyName: "ACME" }, reportEmail: { attachFaxImage: "ALWAYS" } },
      { fax: { resolution: "HIGH", paperFormat: "LETTER" }, personalization: { department: "Sales" } },
      { fax: { csid: "ALICE" }, personalization: { department: "Purchasing" } },
    );
    assert.equal(s.fax.csid, "ALICE");
    assert.equal(s.fax.resolution, "HIGH");
    assert.equal(s.fax.paperFormat, "LETTER");
    assert.equal(s.reportEmail.attachFaxImage, "ALWAYS");
    assert.equal(s.reportEmail.imageFormat, MAIL_TO_FAX_DEFAULTS.reportEmail.imageFormat);
    assert.deepEqual(s.personalization, { FromCompanyName: "ACME", department: "Purchasing" });
  });

  it("is inactive when any level switches it off, even when a lower level says active", () => {
    assert.equal(effectiveSettings({ general: { active: false } }, null, { general: { active: true } }).general.active, false);
    assert.equal(effectiveSettings(null, { general: { active: false } }, null).general.active, false);
    assert.equal(effectiveSettings({}, {}, {}).general.active, true);
  });

  it("checks settings as clients send them, naming each wrong field", () => {
    const { settings, problems } = checkSettings({ fax: { csid: "x".repeat(21), resolution: "FINE", costCenter: null, color: true }, dialing: { removePrefix: "0" }, extras: {} });
    assert.deepEqual(
      problems.map((p) => p.path),
      ["fax.csid", "fax.resolution", "fax.color", "extras"],
    );
    assert.deepEqual(settings.dialing, { removePrefix: "0" });
    assert.equal(checkSettings({ reportEmail: { address: "not-an-address" } }).problems[0]?.message, "must be an e-mail address (or empty: the sender)");
  });
});

describe("fax addresses", () => {
  const de = REGION_NUMBER_CONTEXT.DE;
  const domains = ["fax.example.com"];
  it("reads international, prefixed and national numbers with separators", () => {
    for (const [address, e164] of [
      ["+4930123456@fax.example.com", "+4930123456"],
      ["004930123456@FAX.example.com", "+4930123456"],
      ["030123456@fax.example.com", "+4930123456"],
      ["+49-30-123.456@fax.example.com", "+4930123456"],
      ["(030)123456@fax.example.com", "+4930123456"],
    ] as const) {
      const r = readFaxAddress(address, domains, de);
      assert.ok(r.ok, address);
      assert.equal(r.e164, e164, address);
    }
  });
  it("removes a user's outside-line prefix", () => {
    const r = readFaxAddress("0030123456@fax.example.com", domains, de, "0");
    assert.ok(r.ok);
    assert.equal(r.e164, "+4930123456");
  });
  it("refuses other domains and local parts that are no numbers", () => {
    const other = readFaxAddress("+4930123456@example.com", domains, de);
    assert.ok(!other.ok && other.kind === "domain");
    const word = readFaxAddress("sales@fax.example.com", domains, de);
    assert.ok(!word.ok && word.kind === "number");
    const short = readFaxAddress("123@fax.example.com", domains, de);
    assert.ok(!short.ok && short.kind === "number");
  });
});

describe("Authentication-Results", () => {
  const header = "mx.example.com; spf=pass (sender IP is 192.0.2.1) smtp.mailfrom=sender@example.net; dkim=pass header.d=example.net header.s=s1; dmarc=pass (p=reject dis=none) header.from=example.net";
  it("reads the verdicts with their domains, comments removed", () => {
    const parsed = parseAuthenticationResults(header);
    assert.equal(parsed?.authservId, "mx.example.com");
    assert.deepEqual(parsed?.verdicts, { spf: { result: "pass", domain: "example.net" }, dkim: [{ result: "pass", domain: "example.net" }], dmarc: { result: "pass", domain: "example.net" } });
  });
  it("believes only the topmost header of the trusted authserv-id", () => {
    assert.equal(trustedVerdicts(["forged.example; dmarc=pass header.from=example.net"], "mx.example.com"), null);
    const v = trustedVerdicts(["mx.example.com; dmarc=fail header.from=example.net", header], "mx.example.com");
    assert.equal(v?.dmarc?.result, "fail");
    assert.equal(trustedVerdicts([header], ""), null);
  });
  it("confirms a domain by DMARC, DKIM or SPF for that domain, and never against a DMARC fail", () => {
    assert.ok(confirmsDomain(parseAuthenticationResults("r; dkim=pass header.d=example.net")!.verdicts, "example.net").confirmed);
    assert.ok(!confirmsDomain(parseAuthenticationResults("r; dkim=pass header.d=other.example")!.verdicts, "example.net").confirmed);
    assert.ok(!confirmsDomain(parseAuthenticationResults("r; spf=pass smtp.mailfrom=example.net; dmarc=fail header.from=example.net")!.verdicts, "example.net").confirmed);
  });
});

describe("who may send", () => {
  const user: SenderRecord = { via: "user", custNr: "C1", profile: null, active: true, hasPin: false };
  const domain: SenderRecord = { via: "domain", custNr: "C1", profile: null, active: true, hasPin: true };
  const facts = { envelopeSender: "a@example.net", fromAddresses: ["a@example.net"], verdicts: null, pin: "none" as const, usersWithoutProof: false };
  const dmarcPass = parseAuthenticationResults("r; dmarc=pass header.from=example.net")!.verdicts;
  it("refuses the null sender, strangers and inactive senders at RCPT", () => {
    assert.equal((authorizeEnvelopeSender("", user) as { refusal: { kind: string } }).refusal.kind, "null_sender");
    assert.equal((authorizeEnvelopeSender("x@y.z", null) as { refusal: { kind: string } }).refusal.kind, "sender_unknown");
    assert.equal((authorizeEnvelopeSender("x@y.z", { ...user, active: false }) as { refusal: { kind: string } }).refusal.kind, "sender_inactive");
  });
  it("wants a user without PIN confirmed by the relay (its address alone is forged in one line), and the PIN of a user who has one", () => {
    assert.equal((authorizeMail(user, facts) as { refusal: { kind: string } }).refusal.kind, "not_authenticated");
    assert.ok(authorizeMail(user, { ...facts, verdicts: dmarcPass }).ok);
    assert.ok(authorizeMail(user, { ...facts, usersWithoutProof: true }).ok, "only where the node is told so");
    assert.equal((authorizeMail({ ...user, hasPin: true }, facts) as { refusal: { kind: string } }).refusal.kind, "pin_wrong");
    assert.ok(authorizeMail({ ...user, hasPin: true }, { ...facts, pin: "right" }).ok);
  });
  it("wants a domain sender confirmed by the relay or by the PIN", () => {
    assert.equal((authorizeMail(domain, facts) as { refusal: { kind: string } }).refusal.kind, "not_authenticated");
    assert.ok(authorizeMail(domain, { ...facts, pin: "right" }).ok);
    assert.ok(authorizeMail(domain, { ...facts, verdicts: dmarcPass }).ok);
    assert.ok(!authorizeMail(domain, { ...facts, verdicts: parseAuthenticationResults("r; dmarc=pass")!.verdicts }).ok, "a DMARC pass naming no domain confirms none");
    assert.ok(!authorizeMail(domain, { ...facts, usersWithoutProof: true }).ok, "usersWithoutProof is for users only");
    assert.equal((authorizeMail(domain, { ...facts, pin: "wrong" }) as { refusal: { kind: string } }).refusal.kind, "pin_wrong");
  });
  it("refuses a From that is not the sender, and a DMARC fail even for users", () => {
    assert.equal((authorizeMail(user, { ...facts, verdicts: dmarcPass, fromAddresses: ["boss@example.net"] }) as { refusal: { kind: string } }).refusal.kind, "from_mismatch");
    const fail = parseAuthenticationResults("r; dmarc=fail header.from=example.net")!.verdicts;
    assert.equal((authorizeMail(user, { ...facts, verdicts: fail }) as { refusal: { kind: string } }).refusal.kind, "not_authenticated");
  });
});

describe("loops and automatic mail", () => {
  const h = (entries: [string, string][]) => {
    const map = new Map<string, string[]>();
    for (const [k, v] of entries) map.set(k, [...(map.get(k) ?? []), v]);
    return map;
  };
  it("refuses Faxline's own reports, auto-replies, bulk mail and delivery reports", () => {
    assert.equal(detectLoop(h([["x-faxline-report", "success"]]), null)?.kind, "automatic_mail");
    assert.equal(detectLoop(h([["auto-submitted", "auto-replied"]]), null)?.kind, "automatic_mail");
    assert.equal(detectLoop(h([["auto-submitted", "no"]]), null), null);
    assert.equal(detectLoop(h([["precedence", "bulk"]]), null)?.kind, "automatic_mail");
    assert.equal(detectLoop(h([]), "multipart/report; report-type=delivery-status")?.kind, "automatic_mail");
  });
  it("counts Received headers", () => {
    const hops = (n: number) => h(Array.from({ length: n }, () => ["received", "from a by b"] as [string, string]));
    assert.equal(detectLoop(hops(MAX_RECEIVED_HEADERS), null), null);
    assert.equal(detectLoop(hops(MAX_RECEIVED_HEADERS + 1), null)?.kind, "mail_loop");
  });
});

describe("the mail as a send request", () => {
  const base = { subject: "Order PIN=4711", text: "Hello", attachments: [], fromName: "Alice", sender: "alice@example.org" };
  it("takes the PIN out of the subject", () => {
    assert.deepEqual(extractPin("Order PIN=4711 urgent"), { pin: "4711", subject: "Order urgent" });
    assert.deepEqual(extractPin("pin: 123456"), { pin: "123456", subject: "" });
    assert.deepEqual(extractPin("Spin=1234"), { pin: null, subject: "Spin=1234" });
  });
  it("names attachments as the API accepts them, with the extension of their type", () => {
    assert.equal(documentName({ filename: "Bestellung März.pdf", contentType: "application/pdf", content: Buffer.from("x"), related: false }, 0), "Bestellung_Marz.pdf");
    assert.equal(documentName({ filename: null, contentType: "image/png", content: Buffer.from("x"), related: false }, 1), "attachment-2.png");
  });
  it("puts the text on a cover page when the settings say so, with the personalization", () => {
    const settings = effectiveSettings({ coverSheet: { bodyAs: "COVER_PAGE" }, personalization: { FromCompanyName: "ACME" } }, null, null);
    const r = mailToJobRequest(base, ["+4930123456"], settings);
    assert.ok(r.ok);
    assert.equal(r.request.renderingOptions?.coverpageTemplate, "default");
    assert.deepEqual(r.request.documents, []);
    assert.deepEqual(r.request.recipients[0]?.properties, [
      { key: "FromName", value: "Alice" },
      { key: "SubjectTitle", value: "Order" },
      { key: "SubjectText", value: "Hello" },
      { key: "FromCompanyName", value: "ACME" },
    ]);
  });
  it("reports to the sender, or to reportEmail.address, as the settings say", () => {
    const r = mailToJobRequest(base, ["+4930123456"], effectiveSettings({ reportEmail: { onSuccess: false, attachFaxImage: "ALWAYS", imageFormat: "TIFF" } }, null, null));
    assert.ok(r.ok);
    assert.deepEqual(r.request.statusReportOptions?.reportMail, { successAddress: null, failureAddress: "alice@example.org", attachedFaxImageMode: "ALWAYS", attachedFaxImageFormat: "TIFF" });
    const off = mailToJobRequest(base, ["+4930123456"], effectiveSettings({ reportEmail: { enabled: false } }, null, null));
    assert.ok(off.ok);
    assert.equal(off.request.statusReportOptions, null);
  });
  it("carries fax.suppressBlankPages beside the request, not in it (no field of the REST contract)", () => {
    const pdf = { filename: "order.pdf", contentType: "application/pdf", content: Buffer.from("%PDF-1.4"), related: false };
    const on = mailToJobRequest({ ...base, attachments: [pdf] }, ["+4930123456"], effectiveSettings(null, null, null));
    assert.ok(on.ok && on.suppressBlankPages === true, "on by default");
    const off = mailToJobRequest({ ...base, attachments: [pdf] }, ["+4930123456"], effectiveSettings(null, { fax: { suppressBlankPages: false } }, null));
    assert.ok(off.ok && off.suppressBlankPages === false, "the profile's setting");
    assert.ok(!JSON.stringify(off.request).includes("uppress"));
  });
  it("leaves out signatures and inline images, and refuses what cannot be faxed", () => {
    const sig = { filename: "smime.p7s", contentType: "application/pkcs7-signature", content: Buffer.from("x"), related: false };
    const logo = { filename: "logo.png", contentType: "image/png", content: Buffer.from("x"), related: true };
    const r = mailToJobRequest({ ...base, attachments: [sig, logo] }, ["+4930123456"], effectiveSettings(null, null, null));
    assert.ok(r.ok);
    assert.deepEqual(r.request.documents?.map((d) => d.name), ["mail.txt"]);
    const zip = mailToJobRequest({ ...base, attachments: [{ filename: "a.zip", contentType: "application/zip", content: Buffer.from("x"), related: false }] }, ["+4930123456"], effectiveSettings(null, null, null));
    assert.ok(!zip.ok && zip.refusal.kind === "attachment_unsupported");
  });
  it("reads the report language from Content-Language, then Accept-Language, then the settings", () => {
    assert.equal(mailLanguage("de-DE", null, "en"), "de");
    assert.equal(mailLanguage(null, "de-CH, en;q=0.5", "en"), "de");
    assert.equal(mailLanguage("fr", null, "de"), "de");
  });
});

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { PDFDocument } from "pdf-lib";
import { composeStatusMail, type ComposeStatusMailInput } from "../../src/notifications/email/compose-status-mail.ts";
import { planStatusMails } from "../../src/notifications/email/plan-status-mails.ts";
import {
  ATTACHED_IMAGE_MODES,
  type AttachedImageFormat,
  type AttachedImageMode,
  type ReportSnapshot,
  type SnapshotRecipient,
} from "../../src/notifications/report-snapshot.ts";
import { TemplateSyntaxError } from "../../src/notifications/templates/render-template.ts";
import { faxTiff } from "../support/fax-tiff.ts";

const DELIVERED: SnapshotRecipient = {
  number: "+49 89 1234567",
  numId: "FNAAAAAAAAAAAAAAAAAAA1",
  status: "OK",
  reason: "OK",
  sentTS: "2026-03-02T10:15:30Z",
  durationInSecs: 42,
  sentToNumber: "0049891234567",
  remoteCsid: "+49 89 1234567 ACME",
  pagesSent: 2,
  properties: [{ key: "ToName", value: "Jane Roe" }],
  delivered: true,
};
const FAILED: SnapshotRecipient = {
  number: "+4930999999",
  numId: "FNAAAAAAAAAAAAAAAAAAA2",
  status: "BUSY",
  reason: "Destination number busy",
  sentTS: "2026-03-02T10:20:00Z",
  durationInSecs: 0,
  sentToNumber: "004930999999",
  remoteCsid: null,
  pagesSent: 0,
  properties: [],
  delivered: false,
};

function snapshot(overrides: Partial<ReportSnapshot> = {}, mail: Partial<NonNullable<ReportSnapshot["reportMail"]>> = {}): ReportSnapshot {
  return {
    jobId: "FJTESTJOB0000000000001",
    custNr: "12345",
    event: "job.completed",
    eventTS: "2026-03-02T10:21:00Z",
    reportMail: {
      successAddress: "ok@example.com",
      failureAddress: "fail@example.com",
      attachedFaxImageMode: "NEVER",
      attachedFaxImageFormat: "TIFF",
      ...mail,
    },
    httpStatusPush: null,
    recipients: [DELIVERED, FAILED],
    documents: [{ name: "invoice.txt", isText: true }],
    options: {
      resolution: "HIGH",
      paperFormat: "A4",
      csid: "Faxline",
      header: null,
      isBlacklistEnabled: false,
      isExpress: false,
      overlay: null,
      coverpageTemplateName: null,
      jobReference: "ORDER-77",
    },
    reference: { customerDefinedId: "INV-2026-001", billingCode: "CC-12", billingInfo: "Marketing" },
    pages: 2,
    ...overrides,
  };
}

function input(overrides: Partial<ComposeStatusMailInput> = {}): ComposeStatusMailInput {
  return {
    snapshot: snapshot(),
    kind: "success",
    to: "ok@example.com",
    from: "Faxline <fax@example.com>",
    templates: {},
    faxImage: null,
    now: Date.UTC(2026, 2, 2, 10, 21, 5),
    ...overrides,
  };
}

describe("planStatusMails", () => {
  it("plans a success mail for delivered recipients and a failure mail for failed ones", () => {
    assert.deepEqual(planStatusMails(snapshot()), [
      { kind: "success", to: "ok@example.com" },
      { kind: "failure", to: "fail@example.com" },
    ]);
  });

  it("plans nothing without reportMail", () => {
    assert.deepEqual(planStatusMails(snapshot({ reportMail: null })), []);
  });

  it("plans only the mails whose address is set and whose recipients exist", () => {
    assert.deepEqual(planStatusMails(snapshot({ recipients: [DELIVERED] })), [{ kind: "success", to: "ok@example.com" }]);
    assert.deepEqual(planStatusMails(snapshot({ recipients: [FAILED, FAILED] })), [{ kind: "failure", to: "fail@example.com" }]);
    assert.deepEqual(planStatusMails(snapshot({}, { successAddress: null })), [{ kind: "failure", to: "fail@example.com" }]);
    assert.deepEqual(planStatusMails(snapshot({ recipients: [DELIVERED] }, { successAddress: null })), []);
  });

  it("plans both mails to one address when both addresses are the same", () => {
    assert.deepEqual(planStatusMails(snapshot({}, { successAddress: "x@example.com", failureAddress: "x@example.com" })), [
      { kind: "success", to: "x@example.com" },
      { kind: "failure", to: "x@example.com" },
    ]);
  });

  it("counts recipients that are still pending as neither delivered nor failed", () => {
    const pending = { ...FAILED, status: "PENDING", reason: "" };
    assert.deepEqual(planStatusMails(snapshot({ recipients: [pending] })), []);
  });
});

describe("composeStatusMail with the built-in templates", () => {
  it("lists the job, the reference fields and each delivered recipient in text and HTML", async () => {
    const mail = await composeStatusMail(input());
    assert.equal(mail.from, "Faxline <fax@example.com>");
    assert.equal(mail.to, "ok@example.com");
    assert.equal(mail.subject, "Fax delivered to 1 of 2 recipients: INV-2026-001, job FJTESTJOB0000000000001");
    assert.deepEqual(mail.date, new Date(Date.UTC(2026, 2, 2, 10, 21, 5)));
    assert.deepEqual(mail.headers, { "Auto-Submitted": "auto-generated", "X-Faxline-Job-Id": "FJTESTJOB0000000000001", "X-Faxline-Report": "success" });
    assert.deepEqual(mail.attachments, []);
    for (const part of [mail.text, mail.html]) {
      for (const expected of ["FJTESTJOB0000000000001", "INV-2026-001", "CC-12", "Marketing", "ORDER-77", "+49 89 1234567", "0049891234567", "2026-03-02T10:15:30Z", "42", "+49 89 1234567 ACME", "Jane Roe"]) {
        assert.ok(part.includes(expected), `${expected} missing from\n${part}`);
      }
      assert.ok(!part.includes("+4930999999"), "the success mail lists only delivered recipients");
    }
    assert.match(mail.text, /^Your fax was delivered to 1 of its 2 recipients\.\n/);
    assert.match(mail.text, /Recipient \+49 89 1234567\n {2}Status: +OK\n {2}Reason: +OK\n {2}Sent to: +0049891234567\n {2}Sent at: +2026-03-02T10:15:30Z\n {2}Duration: +42 s\n {2}Pages sent: +2\n {2}Remote CSID: +\+49 89 1234567 ACME\n {2}ToName: Jane Roe\n/);
    assert.match(mail.html, /^<!DOCTYPE html>/);
    assert.match(mail.html, /<td>OK<\/td>/);
  });

  it("reports the failed recipients with their reason in a failure mail", async () => {
    const mail = await composeStatusMail(input({ kind: "failure", to: "fail@example.com" }));
    assert.equal(mail.subject, "Fax not delivered to 1 of 2 recipients: INV-2026-001, job FJTESTJOB0000000000001");
    assert.equal(mail.headers["X-Faxline-Report"], "failure");
    assert.match(mail.text, /^Your fax could not be delivered to 1 of its 2 recipients\./);
    for (const part of [mail.text, mail.html]) {
      assert.ok(part.includes("+4930999999") && part.includes("BUSY") && part.includes("Destination number busy"));
      assert.ok(!part.includes("Jane Roe"), "the failure mail lists only failed recipients");
    }
  });

  it("says a recipient was not dialled and leaves out absent reference fields", async () => {
    const notDialled = { ...FAILED, sentTS: null, sentToNumber: null };
    const s = snapshot({ recipients: [notDialled], reference: { customerDefinedId: null, billingCode: null, billingInfo: null } });
    const mail = await composeStatusMail(input({ snapshot: s, kind: "failure" }));
    assert.equal(mail.subject, "Fax not delivered: job FJTESTJOB0000000000001");
    assert.match(mail.text, /Sent at: +not dialled/);
    assert.doesNotMatch(mail.text, /Sent to:|Your ID:|Billing code:|Billing info:/);
    assert.match(mail.html, /<td>not dialled<\/td>/);
  });

  it("escapes recipient properties and reference values in HTML, and keeps them as they are in text", async () => {
    const hostile = "<script>alert('x')</script> & \"friends\"";
    const s = snapshot({
      recipients: [{ ...DELIVERED, properties: [{ key: "<b>Name</b>", value: hostile }] }],
      reference: { customerDefinedId: hostile, billingCode: "<i>", billingInfo: "a&b" },
    });
    const mail = await composeStatusMail(input({ snapshot: s }));
    assert.ok(!mail.html.includes("<script>") && !mail.html.includes("<b>Name") && !mail.html.includes("<i>"));
    assert.ok(mail.html.includes("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;friends&quot;"));
    assert.ok(mail.html.includes("&lt;b&gt;Name&lt;/b&gt;: "));
    assert.ok(mail.html.includes("a&amp;b"));
    assert.ok(mail.text.includes(hostile) && mail.text.includes("<b>Name</b>: "));
  });

  it("keeps the subject on one line when a value holds line breaks", async () => {
    const s = snapshot({ reference: { customerDefinedId: "two\r\nlines", billingCode: null, billingInfo: null } });
    const mail = await composeStatusMail(input({ snapshot: s }));
    assert.equal(mail.subject, "Fax delivered to 1 of 2 recipients: two lines, job FJTESTJOB0000000000001");
  });
});

describe("composeStatusMail with customer templates", () => {
  it("uses the customer's parts and the built-in template for the parts left out", async () => {
    const mail = await composeStatusMail(
      input({
        templates: {
          subject: "{{#isSuccess}}Zugestellt{{/isSuccess}}{{#isFailure}}Fehler{{/isFailure}}: {{reference.customerDefinedId}}",
          html: "<p>{{#recipients}}{{number}} {{status}} {{#properties}}{{key}}={{value}}{{/properties}}{{/recipients}} ({{coveredCount}}/{{recipientCount}}, {{deliveredCount}} ok, {{failedCount}} failed)</p>",
        },
        snapshot: snapshot({ recipients: [{ ...DELIVERED, properties: [{ key: "k", value: "<v>" }] }, FAILED] }),
      }),
    );
    assert.equal(mail.subject, "Zugestellt: INV-2026-001");
    assert.equal(mail.html, "<p>+49 89 1234567 OK k=&lt;v&gt; (1/2, 1 ok, 1 failed)</p>");
    assert.match(mail.text, /^Your fax was delivered/);
  });

  it("refuses a customer template that does not parse, naming the part", async () => {
    await assert.rejects(composeStatusMail(input({ templates: { html: "<p>{{#recipients}}</p>" } })), (error: unknown) => {
      assert.ok(error instanceof TemplateSyntaxError);
      assert.match(error.message, /^The html template of customer 12345 is invalid: line 1, column 4: \{\{#recipients\}\} is never closed/);
      return true;
    });
  });
});

describe("composeStatusMail attachments", () => {
  const expectAttached: Record<AttachedImageMode, { success: boolean; failure: boolean }> = {
    NEVER: { success: false, failure: false },
    SUCCESS_ONLY: { success: true, failure: false },
    FAILURE_ONLY: { success: false, failure: true },
    ALWAYS: { success: true, failure: true },
  };
  for (const mode of ATTACHED_IMAGE_MODES) {
    for (const kind of ["success", "failure"] as const) {
      const attached = expectAttached[mode][kind];
      it(`${mode}: ${attached ? "attaches" : "does not attach"} the TIFF to a ${kind} mail`, async () => {
        const tiff = await faxTiff(2);
        const mail = await composeStatusMail(input({ kind, snapshot: snapshot({}, { attachedFaxImageMode: mode }), faxImage: { tiff, pages: 2 } }));
        if (attached) {
          assert.deepEqual(mail.attachments, [{ filename: "fax-FJTESTJOB0000000000001.tif", content: tiff, contentType: "image/tiff" }]);
        } else {
          assert.deepEqual(mail.attachments, []);
        }
        assert.doesNotMatch(mail.text, /Note:/);
      });
    }
  }

  it("attaches a PDF with one page per fax page", async () => {
    const mail = await composeStatusMail(input({ snapshot: snapshot({}, { attachedFaxImageMode: "ALWAYS", attachedFaxImageFormat: "PDF" }), faxImage: { tiff: await faxTiff(3), pages: 3 } }));
    assert.equal(mail.attachments.length, 1);
    const [pdf] = mail.attachments;
    assert.equal(pdf?.filename, "fax-FJTESTJOB0000000000001.pdf");
    assert.equal(pdf?.contentType, "application/pdf");
    assert.equal((await PDFDocument.load(pdf!.content)).getPageCount(), 3);
    assert.doesNotMatch(mail.text, /Note:/);
  });

  it("attaches a plain PDF for PDF_WITH_OCR and says that it has no OCR text layer", async () => {
    const format: AttachedImageFormat = "PDF_WITH_OCR";
    const mail = await composeStatusMail(input({ snapshot: snapshot({}, { attachedFaxImageMode: "ALWAYS", attachedFaxImageFormat: format }), faxImage: { tiff: await faxTiff(1), pages: 1 } }));
    assert.equal(mail.attachments[0]?.filename, "fax-FJTESTJOB0000000000001.pdf");
    assert.match(mail.text, /Note: The fax image is attached as a PDF without an OCR text layer/);
    assert.match(mail.html, /<strong>Note:<\/strong> The fax image is attached as a PDF without an OCR text layer/);
  });

  it("says so when an attachment is wanted but the job has no fax image", async () => {
    const mail = await composeStatusMail(input({ kind: "failure", snapshot: snapshot({}, { attachedFaxImageMode: "FAILURE_ONLY", attachedFaxImageFormat: "PDF" }) }));
    assert.deepEqual(mail.attachments, []);
    assert.match(mail.text, /Note: No fax image is attached: none is available for this job/);
    assert.match(mail.html, /No fax image is attached: none is available for this job/);
  });

  it("sends the mail without attachment, saying why, when the image cannot be converted to PDF", async () => {
    const mail = await composeStatusMail(input({ snapshot: snapshot({}, { attachedFaxImageMode: "ALWAYS", attachedFaxImageFormat: "PDF" }), faxImage: { tiff: Buffer.from("not a tiff"), pages: 1 } }));
    assert.deepEqual(mail.attachments, []);
    assert.match(mail.text, /Note: No fax image is attached: it could not be converted to PDF \(The fax image is not a readable TIFF: it does not start with II or MM\)\./);
  });

  it("attaches nothing when the request had no reportMail", async () => {
    const mail = await composeStatusMail(input({ snapshot: snapshot({ reportMail: null }), faxImage: { tiff: await faxTiff(1), pages: 1 } }));
    assert.deepEqual(mail.attachments, []);
  });
});

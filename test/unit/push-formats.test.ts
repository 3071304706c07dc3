import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { XMLParser } from "fast-xml-parser";
import { formatJson, formatTemplate, formatXml } from "../../src/notifications/push/push-formats.ts";
import type { ReportSnapshot } from "../../src/notifications/report-snapshot.ts";

/** The contract's example push (REST v1 reference §12) as a snapshot. */
function contractExample(): ReportSnapshot {
  return {
    jobId: "FJIJPNJYN906EDIJNFGI5S",
    custNr: "4711",
    event: "job.completed",
    eventTS: "2018-11-08T15:38:09Z",
    reportMail: { successAddress: null, failureAddress: null, attachedFaxImageMode: "NEVER", attachedFaxImageFormat: "TIFF" },
    httpStatusPush: { url: "https://statuslistener.example.com:9564/Faxolution-v3.0", authMethod: "HTTP_BASIC" },
    recipients: [
      {
        number: "+498912504001710",
        numId: "FNIJPNJYNA06EDIJNFUO1Q",
        status: "OK",
        reason: "OK",
        sentTS: "2018-11-08T15:38:08Z",
        durationInSecs: 26,
        sentToNumber: "00498912504001710",
        remoteCsid: "+49/89/1250400-1710",
        pagesSent: 1,
        properties: [],
        delivered: true,
      },
    ],
    documents: [{ name: "document.pdf", isText: false }],
    options: {
      resolution: "HIGH",
      paperFormat: "A4",
      csid: null,
      header: null,
      isBlacklistEnabled: false,
      isExpress: false,
      overlay: null,
      coverpageTemplateName: null,
      jobReference: null,
    },
    reference: { customerDefinedId: null, billingCode: null, billingInfo: null },
    pages: 1,
  };
}

describe("push formats", () => {
  it("writes the contract's faxJobReport XML, element for element", () => {
    const { body, contentType } = formatXml(contractExample());
    assert.equal(contentType, "text/xml; charset=utf-8");
    assert.equal(
      body,
      `<?xml version="1.0" encoding="UTF-8"?>
<faxJobReport xmlns="http://retarus.com/fax4ba/faxws/3/0">
  <jobId>FJIJPNJYN906EDIJNFGI5S</jobId>
  <reportMail>
    <successAddress></successAddress>
    <failureAddress></failureAddress>
    <attachedFaxImageMode>NEVER</attachedFaxImageMode>
    <attachedFaxImageFormat>TIFF</attachedFaxImageFormat>
  </reportMail>
  <httpStatusPush>
    <url>https://statuslistener.example.com:9564/Faxolution-v3.0</url>
    <authMethod>HTTP_BASIC</authMethod>
  </httpStatusPush>
  <faxRecipient>
    <number>+498912504001710</number>
    <numId>FNIJPNJYNA06EDIJNFUO1Q</numId>
    <status>OK</status>
    <reason>OK</reason>
    <sentTS>2018-11-08T15:38:08Z</sentTS>
    <durationInSecs>26</durationInSecs>
    <sentToNumber>00498912504001710</sentToNumber>
    <remoteCsid>+49/89/1250400-1710</remoteCsid>
  </faxRecipient>
  <document>
    <name>document.pdf</name>
    <isText>false</isText>
  </document>
  <options>
    <resolution>HIGH</resolution>
    <isBlacklistEnabled>false</isBlacklistEnabled>
    <isExpress>false</isExpress>
  </options>
  <pages>1</pages>
</faxJobReport>
`,
    );
  });

  it("leaves out what the request did not reference and what never happened", () => {
    const s = contractExample();
    s.reportMail = null;
    s.httpStatusPush = null;
    s.recipients[0] = { ...s.recipients[0]!, status: "NOFAX", reason: "no fax machine", sentTS: null, sentToNumber: null, remoteCsid: null, durationInSecs: 0 };
    const parsed = new XMLParser().parse(formatXml(s).body).faxJobReport;
    assert.equal(parsed.reportMail, undefined);
    assert.equal(parsed.httpStatusPush, undefined);
    assert.deepEqual(Object.keys(parsed.faxRecipient), ["number", "numId", "status", "reason", "durationInSecs"]);
  });

  it("repeats faxRecipient and document per entry, escapes text, and lists set options", () => {
    const s = contractExample();
    s.recipients.push({ ...s.recipients[0]!, number: "+4930123", numId: "FN2", status: "BUSY", reason: 'busy <3 times> & "gave up"' });
    s.documents.push({ name: "b&w.txt", isText: true });
    s.options = { ...s.options, csid: "ACME", header: "%tz=Europe/Berlin %d", overlay: { name: "logo", mode: "FIRST_PAGE" }, coverpageTemplateName: "cover.html", jobReference: "ref-1" };
    const { body } = formatXml(s);
    assert.match(body, /<reason>busy &lt;3 times&gt; &amp; &quot;gave up&quot;<\/reason>/);
    const parsed = new XMLParser({ isArray: (name) => ["faxRecipient", "document"].includes(name) }).parse(body).faxJobReport;
    assert.equal(parsed.faxRecipient.length, 2);
    assert.equal(parsed.document[1].name, "b&w.txt");
    assert.deepEqual(Object.keys(parsed.options), ["resolution", "csid", "header", "isBlacklistEnabled", "isExpress", "overlay", "coverpageTemplateName", "jobReference"]);
    assert.deepEqual(parsed.options.overlay, { name: "logo", mode: "FIRST_PAGE" });
  });

  it("gives the same content as JSON, with recipients and documents as arrays", () => {
    const { body, contentType } = formatJson(contractExample());
    assert.equal(contentType, "application/json");
    const json = JSON.parse(body);
    const xml = new XMLParser({ parseTagValue: false, isArray: (name) => ["faxRecipient", "document"].includes(name) }).parse(formatXml(contractExample()).body).faxJobReport;
    assert.deepEqual(Object.keys(json), ["jobId", "reportMail", "httpStatusPush", "faxRecipient", "document", "options", "pages"]);
    assert.equal(json.faxRecipient[0].numId, xml.faxRecipient[0].numId);
    assert.equal(json.faxRecipient[0].durationInSecs, 26);
    assert.equal(json.document[0].isText, false);
    assert.equal(String(json.pages), xml.pages);
    assert.equal(json.reportMail.successAddress, "");
  });

  it("renders an account's individual layout with escaping by its content type", () => {
    const s = contractExample();
    s.recipients[0]!.reason = "a<b";
    const xml = formatTemplate(s, {
      content: "<status job='{{jobId}}' event='{{event}}'>{{#faxRecipient}}<r n='{{number}}'>{{status}}: {{reason}}</r>{{/faxRecipient}}</status>",
      contentType: "application/xml",
    });
    assert.equal(xml.body, "<status job='FJIJPNJYN906EDIJNFGI5S' event='job.completed'><r n='+498912504001710'>OK: a&lt;b</r></status>");
    assert.equal(xml.contentType, "application/xml");
  });
});

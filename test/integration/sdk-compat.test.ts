/**
 * SDK compatibility: replays the request variants the official Retarus SDKs (Java, Go, Rust,
 * Python) and the documentation send (contract §3.1, §14), and checks that each is accepted
 * (201), reaches a final report, and that the report has exactly the §4.1 field names.
 *
 * The node allows private reference targets, so that documents can be fetched from a local
 * HTTP server started here.
 */
import { after, before, describe, it } from "node:test";
import sharp from "sharp";
import { installOverlay } from "../../src/accounts/rendering-settings.ts";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { api, createTestLogin, startTestNode, waitForFinalReport, type TestNode } from "../support/test-node.ts";

const b64 = (text: string | Buffer) => Buffer.from(text).toString("base64");
const lines = (n: number, prefix = "Referenced line") => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join("\n") + "\n";

/** The 70-line text the local server serves: two A4 pages. */
const REFERENCED_TEXT = lines(70);

const RECIPIENT_KEYS = ["alternativeNumbers", "durationInSecs", "number", "properties", "reason", "remoteCsid", "sentToNumber", "sentTs", "status"];

/** Checks a final report against §4.1: exact field names and types. */
function assertReportShape(report: any, jobId: string, opts: { reference?: Record<string, string>; recipients: number }) {
  const keys = ["jobId", "pages", "recipientStatus", ...(opts.reference ? ["reference"] : [])].sort();
  assert.deepEqual(Object.keys(report).sort(), keys);
  assert.equal(report.jobId, jobId);
  assert.ok(Number.isInteger(report.pages) && report.pages > 0, `pages ${report.pages}`);
  if (opts.reference) assert.deepEqual(report.reference, opts.reference);
  assert.ok(Array.isArray(report.recipientStatus));
  assert.equal(report.recipientStatus.length, opts.recipients);
  for (const r of report.recipientStatus) {
    const present = Object.keys(r).sort();
    // sentTs / sentToNumber / remoteCsid exist once a call was made (always, on the test line).
    assert.deepEqual(present, RECIPIENT_KEYS, `recipient keys ${present.join(",")}`);
    assert.equal(typeof r.number, "string");
    assert.ok(r.alternativeNumbers === null || Array.isArray(r.alternativeNumbers));
    assert.ok(r.properties === null || Array.isArray(r.properties));
    assert.equal(typeof r.status, "string");
    assert.equal(typeof r.reason, "string");
    assert.match(r.sentTs, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    assert.ok(Number.isInteger(r.durationInSecs) && r.durationInSecs >= 0);
    assert.match(r.sentToNumber, /^00[1-9]\d{6,14}$/);
    assert.equal(typeof r.remoteCsid, "string");
  }
}

describe("sdk compatibility: payloads real clients send", () => {
  let node: TestNode;
  let docServer: Server;
  let docBase: string;
  const served: string[] = [];
  let loginNo = 0;

  const newAccount = async () => {
    loginNo += 1;
    const creds = await createTestLogin(node, { custNr: "99999TE", login: `sdk-${loginNo}`, password: `secret-pass-${loginNo}` });
    return { creds, client: api(node.url, creds), custNr: creds.custNr };
  };
  let main: Awaited<ReturnType<typeof newAccount>>;

  /** Sends the raw JSON text (exactly as an SDK serialises it), expects 201, waits for the final report. */
  const sendRaw = async (json: string, account = main) => {
    const res = await account.client.post(`/${account.custNr}/fax`, json);
    assert.equal(res.status, 201, `expected 201, got ${res.status} ${JSON.stringify(res.body)}`);
    assert.match(res.body.jobId, /^FJ[A-Z0-9]{20}$/);
    const report = await waitForFinalReport(account.client, account.custNr, res.body.jobId);
    return { jobId: res.body.jobId as string, report };
  };
  const send = (body: unknown, account = main) => sendRaw(JSON.stringify(body), account);

  before(async () => {
    docServer = createServer((req, res) => {
      served.push(req.url ?? "");
      if (req.url?.startsWith("/docs/")) {
        res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
        res.end(REFERENCED_TEXT);
      } else if (req.url?.startsWith("/push")) {
        res.writeHead(204);
        res.end();
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((resolve) => docServer.listen(0, "127.0.0.1", resolve));
    docBase = `http://127.0.0.1:${(docServer.address() as AddressInfo).port}`;
    node = await startTestNode({ "documents.fetchAllowPrivateTargets": true });
    main = await newAccount();
    // The SDK examples name the overlay "overlay_template1"; install one (a framed letterhead).
    const letterhead = await sharp({ create: { width: 1700, height: 2200, channels: 3, background: "white" } })
      .composite([{ input: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="1700" height="2200"><rect x="20" y="20" width="1660" height="2160" fill="none" stroke="black" stroke-width="8"/></svg>') }])
      .png()
      .toBuffer();
    await installOverlay(node.node.context.store.db, { custNr: "99999TE", name: "overlay_template1", fileName: "letterhead.png", bytes: letterhead }, Date.now());
  });
  after(async () => {
    await node.stop();
    await new Promise<void>((resolve) => docServer.close(() => resolve()));
  });

  it("docs example (§3.1): reference, recipient with properties, one UTF-8 text document", async () => {
    const reference = {
      customerDefinedId: "2018-08-7T11:04:37.057Z_customerDefinedId",
      billingCode: "2018-08-7T11:04:37.057Z_billingCode",
      billingInfo: "2018-08-7T11:04:37.057Z_billingInfo",
    };
    const example = (name: string) => ({
      reference,
      recipients: [{ number: "0012012051598", properties: [{ key: "key123", value: "value123" }] }],
      documents: [
        { name, charset: "UTF-8", data: "SGVsbG8sIHRoaXMgaXMgYSB0ZXN0aW5nIGRvY3VtZW50IGJvZHkgY3JlYXRlZCBmb3IgOTk5OTlURQ==" },
      ],
    });
    // The docs' own example names its document "test-document-inline-byte-array.txt": 35
    // characters, beyond the 32 the same docs (and the Java SDK's validator) allow. Faxline
    // enforces the documented limit, so the literal example is refused with a precise message.
    const literal = await main.client.post(`/${main.custNr}/fax`, example("test-document-inline-byte-array.txt"));
    assert.equal(literal.status, 400);
    assert.equal(literal.body.error, "document_name_invalid");
    assert.match(literal.body.message, /documents\[0\]\.name/);

    const { jobId, report } = await send(example("test-document-inline-bytes.txt"));
    assertReportShape(report, jobId, { reference, recipients: 1 });
    const r = report.recipientStatus[0];
    assert.equal(r.number, "0012012051598");
    assert.equal(r.status, "OK");
    assert.equal(r.reason, "OK");
    assert.equal(r.sentToNumber, "0012012051598");
    assert.deepEqual(r.properties, [{ key: "key123", value: "value123" }]);
    assert.equal(r.alternativeNumbers, null);
    assert.equal(report.pages, 1);
  });

  it("maximal example (§3.1): every field, a referenced document fetched from a URL, cover page", async () => {
    const before = served.length;
    const reference = { customerDefinedId: "max-cdi", billingCode: "max-bc", billingInfo: "max-bi" };
    const body = {
      reference,
      recipients: [
        {
          number: "+4989312000000",
          alternativeNumbers: ["+4989312000001"],
          properties: [
            { key: "FromName", value: "Sales" },
            { key: "ToName", value: "Jane Doe" },
          ],
        },
      ],
      documents: [
        { name: "test-document-withReference.txt", charset: "UTF-8", reference: `${docBase}/docs/junit-test.txt`, data: null },
        { name: "test-document-inline-byte.txt", charset: "UTF-8", reference: null, data: b64("Hello, this is a testing document.\n") },
      ],
      transportOptions: { csid: "csid-test", isExpress: true, isBlacklistEnabled: false },
      renderingOptions: {
        paperFormat: "A4",
        resolution: "HIGH",
        coverpageTemplate: "coverpage-default.ftl.html",
        overlay: { name: "overlay_template1", mode: "ALL_PAGES" },
        header: "%tz=CEST Testfax: CSID: %C Empfaengernummer: %# Datum: %d.%m.%Y %H:%M %z",
      },
      statusReportOptions: {
        reportPurgeTs: "2018-11-03T20:14:37.098+02:00",
        reportMail: {
          successAddress: "john.doe@example.com",
          failureAddress: "jane.doe@example.com",
          attachedFaxImageMode: "ALWAYS",
          attachedFaxImageFormat: "PDF",
        },
        httpStatusPush: { targetUrl: `${docBase}/push/test-target`, principal: null, credentials: null, authMethod: "NONE" },
      },
      meta: {
        customerReference: "12345",
        // A start in the past means "now"; the end lies an hour ahead.
        jobValid: { start: "2015-08-07T13:04:37.107Z", end: new Date(Date.now() + 3_600_000).toISOString() },
      },
    };
    const { jobId, report } = await send(body);
    assertReportShape(report, jobId, { reference, recipients: 1 });
    const r = report.recipientStatus[0];
    assert.equal(r.status, "OK");
    assert.equal(r.sentToNumber, "004989312000000");
    assert.deepEqual(r.alternativeNumbers, ["+4989312000001"]);
    assert.deepEqual(r.properties, body.recipients[0]!.properties);
    // cover page + 70 fetched lines (2 pages) + the inline document (1 page)
    assert.equal(report.pages, 4);
    assert.deepEqual(served.slice(before), ["/docs/junit-test.txt"], "the referenced document was fetched once");
  });

  it("a document with both reference and data uses the reference (docs: 'the reference data is used')", async () => {
    const before = served.length;
    const { report } = await send({
      recipients: [{ number: "+4989000000000" }],
      documents: [{ name: "both.txt", reference: `${docBase}/docs/both.txt`, data: b64("one inline line\n") }],
    });
    assert.equal(report.recipientStatus[0].status, "OK");
    assert.equal(report.pages, 2, "the 70 referenced lines were sent, not the one inline line");
    assert.deepEqual(served.slice(before), ["/docs/both.txt"]);
  });

  it("a reference that answers 404 ends the job with DOC_ERROR (accepted, then a final report)", async () => {
    const { jobId, report } = await send({
      recipients: [{ number: "+4989000000000" }],
      documents: [{ name: "missing.txt", reference: `${docBase}/missing.txt` }],
    });
    assert.equal(report.jobId, jobId);
    assert.equal(report.recipientStatus[0].status, "DOC_ERROR");
    assert.match(report.recipientStatus[0].reason, /fetch/i);
    assert.equal(report.pages, 0);
  });

  it("Java SDK: the full request with explicit nulls everywhere", async () => {
    const reference = {
      customerDefinedId: "2015-08-07T11:04:37.057Z_customerDefinedId_testSerializesToJSON",
      billingCode: "2015-08-07T11:04:37.057Z_billingCode_testSerializesToJSON",
      billingInfo: "2015-08-07T11:04:37.057Z_billingInfo_testSerializesToJSON",
    };
    // Field order and nulls as Jackson writes them (no NON_NULL inclusion); numbers replaced by
    // valid ones (see the next test for the Java test's literal numbers).
    const json = `{
      "documents": [
        {"name": "test-document-withReference.txt", "charset": "UTF-8", "reference": "${docBase}/docs/junit-test", "data": null},
        {"name": "test-document-inline-byte.txt", "charset": "UTF-8", "reference": null,
         "data": "SGVsbG8sIHRoaXMgaXMgYSB0ZXN0aW5nIGRvY3VtZW50IGJvZHkgY3JlYXRlZCBmb3IgOTk5OTlURQ=="}
      ],
      "recipients": [
        {"number": "004989312000000", "properties": [{"key": "key123", "value": "value123"}]},
        {"number": "0049893120000002", "properties": null}
      ],
      "transportOptions": {"csid": "csid-test", "isExpress": true, "isBlacklistEnabled": false},
      "renderingOptions": {"paperFormat": "A4", "resolution": "HIGH", "coverpageTemplate": "coverpage-default.ftl.html",
                           "overlay": null, "header": "%tz=CEST Testfax: CSID: %C Empfaengernummer: %# Datum: %d.%m.%Y %H:%M %z"},
      "statusReportOptions": {
        "reportMail": {"successAddress": "thiago.nunes@example.pt", "failureAddress": "thiago.nunes@example.pt",
                       "attachedFaxImageMode": "ALWAYS", "attachedFaxImageFormat": "PDF"},
        "httpStatusPush": {"targetUrl": "${docBase}/push/testSerializesToJSON", "principal": null, "credentials": null, "authMethod": "NONE"}
      },
      "meta": {"customerReference": "12345", "jobValid": {"start": "2015-08-07T13:04:37.107Z", "end": "PT80M"}},
      "reference": ${JSON.stringify(reference)}
    }`;
    const { jobId, report } = await sendRaw(json);
    assertReportShape(report, jobId, { reference, recipients: 2 });
    assert.deepEqual(
      report.recipientStatus.map((r: any) => [r.number, r.status, r.sentToNumber]),
      [
        ["004989312000000", "OK", "004989312000000"],
        ["0049893120000002", "OK", "0049893120000002"],
      ],
    );
    assert.equal(report.recipientStatus[1].properties, null);
    assert.equal(report.pages, 4, "cover page + 2 referenced pages + 1 inline page");
  });

  it("Java SDK: a request with only recipients and documents, every optional object null", async () => {
    const json = JSON.stringify({
      documents: [{ name: "doc.txt", charset: "UTF-8", reference: null, data: b64("Java minimal\n") }],
      recipients: [{ number: "+4989000000000", properties: null }],
      transportOptions: null,
      renderingOptions: null,
      statusReportOptions: null,
      meta: null,
      reference: null,
    });
    const { jobId, report } = await sendRaw(json);
    assertReportShape(report, jobId, { recipients: 1 });
    assert.equal(report.recipientStatus[0].status, "OK");
  });

  it("Java SDK: nulls inside every nested object (reference, transport, rendering, report options, meta)", async () => {
    const { jobId, report } = await send({
      documents: [{ name: "doc.txt", charset: null, reference: null, data: b64("nested nulls\n") }],
      recipients: [{ number: "+4989000000000", properties: null }],
      transportOptions: { csid: null, isExpress: null, isBlacklistEnabled: null },
      renderingOptions: { paperFormat: null, resolution: null, coverpageTemplate: null, overlay: null, header: null },
      statusReportOptions: {
        reportMail: { successAddress: null, failureAddress: null, attachedFaxImageMode: null, attachedFaxImageFormat: null },
        httpStatusPush: null,
      },
      meta: { customerReference: null, jobValid: { start: null, end: null } },
      reference: { customerDefinedId: null, billingCode: null, billingInfo: null },
    });
    assertReportShape(report, jobId, { recipients: 1 });
    assert.equal(report.recipientStatus[0].status, "OK");
  });

  it("Java SDK: the FaxRequestTest's literal numbers have 16 and 17 digits and are refused (E.164 allows 15)", async () => {
    for (const number of ["004989312000000000", "0049893120000000002"]) {
      const res = await main.client.post(`/${main.custNr}/fax`, { recipients: [{ number }], documents: [{ name: "a.txt", data: b64("x\n") }] });
      assert.equal(res.status, 400, number);
      assert.equal(res.body.error, "number_invalid");
      assert.match(res.body.message, /recipients\[0\]\.number/);
      assert.match(res.body.message, /too long/);
    }
  });

  it("Java SDK: charset WINDOWS-1252 (upper case) decodes cp1252 bytes", async () => {
    // "Grüße – 5 €" in Windows-1252: ü=FC, ß=DF, – (en dash)=96, €=80
    const cp1252 = Buffer.from([0x47, 0x72, 0xfc, 0xdf, 0x65, 0x20, 0x96, 0x20, 0x35, 0x20, 0x80, 0x0a]);
    const { report } = await send({
      recipients: [{ number: "+4989000000000", properties: null }],
      documents: [{ name: "latin.txt", charset: "WINDOWS-1252", reference: null, data: cp1252.toString("base64") }],
    });
    assert.equal(report.recipientStatus[0].status, "OK");
    assert.equal(report.pages, 1);
  });

  it("Java SDK: authMethod OAUTH (Java's name for OAUTH2) with principal and credentials", async () => {
    const { report } = await send({
      recipients: [{ number: "+4989000000000", properties: null }],
      documents: [{ name: "a.txt", charset: "UTF-8", reference: null, data: b64("oauth\n") }],
      statusReportOptions: {
        reportMail: null,
        httpStatusPush: { targetUrl: `${docBase}/push/oauth`, principal: "client-id", credentials: "client-secret", authMethod: "OAUTH" },
      },
    });
    assert.equal(report.recipientStatus[0].status, "OK");
  });

  it("Java SDK: bulk operation body {action, jobIds} and single delete of what it fetched", async () => {
    const account = await newAccount();
    const { jobId } = await send({ recipients: [{ number: "+4989000000000" }], documents: [{ name: "a.txt", data: b64("bulk\n") }] }, account);
    const bulk = await account.client.post(`/${account.custNr}/fax/reports`, JSON.stringify({ action: "GET", jobIds: [jobId] }));
    assert.equal(bulk.status, 200);
    assert.deepEqual(bulk.body.reports.map((r: any) => r.jobId), [jobId]);
    const del = await account.client.delete(`/${account.custNr}/fax/reports/${jobId}`);
    assert.deepEqual(del.body, { jobId, deleted: true });
  });

  it("Go SDK: zero reportPurgeTs, empty jobValid, empty customerReference, paperFormat Letter", async () => {
    const json = JSON.stringify({
      documents: [{ name: "test.txt", charset: "UTF-8", data: "dGVzdGZheAo=" }],
      renderingOptions: { paperFormat: "Letter", resolution: "LOW" },
      statusReportOptions: { reportPurgeTs: "0001-01-01T00:00:00+0000" },
      meta: { customerReference: "", jobValid: {} },
      recipients: [{ number: "+4989000000000" }],
    });
    const { jobId, report } = await sendRaw(json);
    assertReportShape(report, jobId, { recipients: 1 });
    assert.equal(report.recipientStatus[0].status, "OK");
    assert.equal(report.pages, 1);
  });

  it("Go SDK: Letter really lays out on Letter paper (60 lines: 1 A4 page, 2 Letter pages)", async () => {
    const data = b64(lines(60, "Go line"));
    const a4 = await send({ recipients: [{ number: "+4989000000000" }], documents: [{ name: "a.txt", data }], renderingOptions: { paperFormat: "A4" } });
    const letter = await send({ recipients: [{ number: "+4989000000000" }], documents: [{ name: "a.txt", data }], renderingOptions: { paperFormat: "Letter" } });
    assert.equal(a4.report.pages, 1);
    assert.equal(letter.report.pages, 2);
  });

  it("Go SDK: statusReportOptions with a report mail and the zero reportPurgeTs, Windows-1252 charset", async () => {
    const { report } = await send({
      reference: { customerDefinedId: "go-ref" },
      documents: [{ name: "test.txt", charset: "Windows-1252", data: Buffer.from([0x80, 0x0a]).toString("base64") }],
      statusReportOptions: {
        reportPurgeTs: "0001-01-01T00:00:00+0000",
        reportMail: { successAddress: "ops@example.com", attachedFaxImageMode: "NEVER", attachedFaxImageFormat: "TIFF" },
        httpStatusPush: { targetUrl: `${docBase}/push/go`, authMethod: "OAUTH2" },
      },
      meta: { customerReference: "go-cr", jobValid: { end: "PT80M" } },
      recipients: [{ number: "+4989000000000", alternativeNumbers: ["+4989000000001"] }],
    });
    assert.equal(report.recipientStatus[0].status, "OK");
    assert.deepEqual(report.reference, { customerDefinedId: "go-ref" });
  });

  it("Go SDK: GET list for a login without jobs answers 200 {reports: []}", async () => {
    const account = await newAccount();
    const res = await account.client.get(`/${account.custNr}/fax/reports`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { reports: [] });
    const bulk = await account.client.post(`/${account.custNr}/fax/reports`, { action: "DELETE", jobIds: ["FJ0000000000NOTTHERE00"] });
    assert.equal(bulk.status, 200);
    assert.equal(bulk.body.reports[0].reason, "NOT_FOUND", "Go drops a DC whose first item is NOT_FOUND");
  });

  it("Go SDK: its report calls go to /rest/v1//{custNr}/fax/reports… (url.JoinPath with \"/\" parts) and work", async () => {
    const account = await newAccount();
    // Send goes to the HA address with the same join: "//{custNr}//fax".
    const sent = await account.client.post(`//${account.custNr}//fax`, { recipients: [{ number: "+4989000000000" }], documents: [{ name: "go.txt", data: b64("go\n") }] });
    assert.equal(sent.status, 201);
    const jobId = sent.body.jobId as string;
    await waitForFinalReport(account.client, account.custNr, jobId);
    const one = await account.client.get(`//${account.custNr}//fax/reports/${jobId}`);
    assert.equal(one.status, 200, "GetReport");
    assert.equal(one.body.jobId, jobId);
    const all = await account.client.get(`//${account.custNr}//fax/reports`);
    assert.equal(all.status, 200, "GetReports");
    assert.deepEqual(all.body.reports.map((r: any) => r.jobId), [jobId]);
    const bulk = await account.client.post(`//${account.custNr}//fax/reports`, { action: "GET", jobIds: [jobId] });
    assert.equal(bulk.status, 200, "GetBulkReports");
    assert.equal(bulk.body.reports[0].jobId, jobId);
    const del = await account.client.delete(`//${account.custNr}//fax/reports/${jobId}`);
    assert.equal(del.status, 200, "DeleteReport");
    assert.deepEqual((await account.client.delete(`//${account.custNr}//fax/reports`)).body, { reports: [] }, "DeleteReports");
  });

  it("Rust SDK: minimal job with lowercase charset utf-8", async () => {
    const json = '{"recipients":[{"number":"+4989000000000"}],"documents":[{"name":"test.txt","data":"dGVzdGZheAo=","charset":"utf-8"}]}';
    const { jobId, report } = await sendRaw(json);
    assertReportShape(report, jobId, { recipients: 1 });
    assert.equal(report.recipientStatus[0].status, "OK");
  });

  it("Python SDK: recipients, documents and renderingOptions only (with its nulls)", async () => {
    const { jobId, report } = await send({
      recipients: [{ number: "4900000000000", properties: null }],
      documents: [{ name: "test.txt", data: "dGVzdGZheAo=", charset: null }],
      renderingOptions: { paperFormat: "A4", coverpageTemplate: "", resolution: null, header: null },
    });
    assertReportShape(report, jobId, { recipients: 1 });
    assert.equal(report.recipientStatus[0].status, "OK");
    assert.equal(report.recipientStatus[0].sentToNumber, "004900000000000");
    assert.equal(report.pages, 1, "an empty coverpageTemplate adds no cover page");
  });

  it("minimal job of the Go README / SDK tests", async () => {
    const { report } = await sendRaw('{"recipients":[{"number":"+4989000000000"}],"documents":[{"name":"test.txt","data":"dGVzdGZheAo="}]}');
    assert.equal(report.recipientStatus[0].status, "OK");
  });

  it("numbers in every form the sources use are accepted, echoed as sent and dialled normalised", async () => {
    const numbers: [string, string][] = [
      ["+49 89 1234567-8900", "00498912345678900"],
      ["004989000000000", "004989000000000"],
      ["0049 89 000000001", "004989000000001"],
      ["+4989000000002", "004989000000002"],
      ["4900000000000", "004900000000000"],
      ["+49 (0)89 000000003", "004989000000003"],
      ["089 000000004", "004989000000004"],
      ["+1 (201) 205-1598", "0012012051598"],
    ];
    const { jobId, report } = await send({
      recipients: numbers.map(([number]) => ({ number })),
      documents: [{ name: "numbers.txt", data: b64("numbers\n") }],
    });
    assertReportShape(report, jobId, { recipients: numbers.length });
    assert.deepEqual(
      report.recipientStatus.map((r: any) => [r.number, r.sentToNumber, r.status]),
      numbers.map(([number, dial]) => [number, dial, "OK"]),
    );
  });

  it("the provider's test number +4900000000 reports REM_DIS like the captured Java resource", async () => {
    const { report } = await send({
      recipients: [
        {
          number: "+4900000000",
          properties: [
            { key: "FromName", value: "Retarus" },
            { key: "SubjectText", value: "Test" },
          ],
        },
      ],
      documents: [{ name: "rem-dis.txt", data: b64(lines(70, "REM_DIS line")) }],
    });
    const r = report.recipientStatus[0];
    assert.equal(r.status, "REM_DIS");
    assert.equal(r.sentToNumber, "004900000000");
    assert.equal(r.alternativeNumbers, null);
    assert.equal(report.pages, 2);
  });
});

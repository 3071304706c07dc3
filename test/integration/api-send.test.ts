/**
 * POST /rest/v1/{custNr}/fax (sendJobRequest) over HTTP against a real in-process node: the
 * 201 answer, every 400 path of the contract with its catalogue code and a message naming the
 * field, duplicates through Idempotency-Key (409), authentication (401), the tolerance for
 * empty JSON bodies, unknown routes and the OpenAPI document.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { api, createTestLogin, startTestNode, TEXT_DOC, waitForFinalReport, type TestNode } from "../support/test-node.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";

const NUMBER = "+4989000000000";
const JOB_ID = /^FJ[A-Z0-9]{20}$/;

interface ErrorBody {
  code: number;
  error: string;
  message: string;
}

for (const dialect of DIALECTS) describe(`${dialect}: api: send a fax job`, () => {
  const store = withDialect(dialect);
  let node: TestNode;
  let creds: { custNr: string; login: string; password: string };
  let client: ReturnType<typeof api>;
  let loginNo = 0;

  /** A fresh login (own jobs, own throttling state). */
  const newLogin = async (custNr = "99999TE") => {
    loginNo += 1;
    return createTestLogin(node, { custNr, login: `send-${loginNo}`, password: `secret-pass-${loginNo}` });
  };

  const send = (body: unknown, headers?: Record<string, string>) => client.post(`/${creds.custNr}/fax`, body, headers);

  /** A valid minimal job with `patch` merged in at the top level. */
  const job = (patch: Record<string, unknown> = {}) => ({ recipients: [{ number: NUMBER }], documents: [TEXT_DOC], ...patch });

  /** Sends `body`, expects 400 with catalogue `error`, and a message matching every pattern. */
  const expect400 = async (body: unknown, error: string, ...message: RegExp[]) => {
    const res = await send(body);
    assert.equal(res.status, 400, `expected 400 ${error}, got ${res.status} ${JSON.stringify(res.body)}`);
    const b = res.body as ErrorBody;
    assert.equal(b.code, 400);
    assert.equal(b.error, error, `body: ${JSON.stringify(b)}`);
    assert.equal(typeof b.message, "string");
    for (const re of message) assert.match(b.message, re);
    assert.deepEqual(Object.keys(b).sort(), ["code", "error", "message"]);
    return b;
  };

  const expect201 = async (body: unknown) => {
    const res = await send(body);
    assert.equal(res.status, 201, `expected 201, got ${res.status} ${JSON.stringify(res.body)}`);
    assert.match(res.body.jobId, JOB_ID);
    assert.deepEqual(Object.keys(res.body), ["jobId"]);
    return res.body.jobId as string;
  };

  before(async () => {
    node = await startTestNode({ ...store.overrides(),
      "jobs.maxRecipients": 5,
      "jobs.maxDocuments": 3,
      "jobs.maxDocumentBytes": 4096,
      "jobs.maxJobBytes": 6000,
      "http.bodyLimitBytes": 65536,
    });
    creds = await newLogin();
    client = api(node.url, creds);
  });
  after(async () => {
    await node.stop();
  });

  describe("accepted jobs", () => {
    it("answers 201 with a job id of FJ + 20 characters, distinct per job, and the job completes", async () => {
      const a = await expect201(job());
      const b = await expect201(job());
      assert.notEqual(a, b);
      const report = await waitForFinalReport(client, creds.custNr, a);
      assert.equal(report.jobId, a);
      assert.equal(report.recipientStatus[0].status, "OK");
    });

    it("accepts a cover page template alone (no documents) and sends the cover page", async () => {
      const id = await expect201({ recipients: [{ number: NUMBER }], renderingOptions: { coverpageTemplate: "coverpage-default.ftl.html" } });
      const report = await waitForFinalReport(client, creds.custNr, id);
      assert.equal(report.recipientStatus[0].status, "OK");
      assert.equal(report.pages, 1);
    });

    it("keeps renderingOptions.toneMode (Faxline extension, any letter case; when absent the account's default, here none: AUTO), and the jobs complete", async () => {
      const photo = await expect201(job({ renderingOptions: { toneMode: "photo" } }));
      const plain = await expect201(job());
      const [photoReport, plainReport] = await Promise.all([waitForFinalReport(client, creds.custNr, photo), waitForFinalReport(client, creds.custNr, plain)]);
      assert.equal(photoReport.recipientStatus[0].status, "OK");
      assert.equal(plainReport.recipientStatus[0].status, "OK");
      // Rendered, each job keeps the tone mode it was rendered with.
      const rows = await node.node.context.store.db.selectFrom("jobs").select(["id", "tone_mode"]).where("id", "in", [photo, plain]).execute();
      assert.deepEqual(Object.fromEntries(rows.map((r) => [r.id, r.tone_mode])), { [photo]: "PHOTO", [plain]: "AUTO" });
    });

    it("accepts documents: null together with a cover page template", async () => {
      await expect201({ recipients: [{ number: NUMBER }], documents: null, renderingOptions: { coverpageTemplate: "coverpage-default.ftl.html" } });
    });

    it("accepts jobValid.end as an ISO-8601 duration (PT80M)", async () => {
      await expect201(job({ meta: { jobValid: { end: "PT80M" } } }));
    });

    it("accepts jobValid with a zoned start and an end after it", async () => {
      const start = new Date(Date.now() + 3_600_000).toISOString();
      const end = new Date(Date.now() + 7_200_000).toISOString();
      await expect201(job({ meta: { jobValid: { start, end } } }));
      await expect201(job({ meta: { jobValid: { start: start.replace("Z", "+00:00"), end: "P1D" } } }));
    });

    it("accepts a header made of the contract's placeholders", async () => {
      await expect201(
        job({ renderingOptions: { header: "%tz=CEST Testfax: CSID: %C Empfaengernummer: %# Datum: %d.%m.%Y %H:%M %z Seite %P/%T 100%%" } }),
      );
      await expect201(job({ renderingOptions: { header: "%tz=Europe/Berlin;%l=de %A %B %I %p %S %R %K %Z %c%r%n" } }));
    });

    it("accepts fields at their maximum lengths", async () => {
      await expect201(
        job({
          documents: [{ ...TEXT_DOC, name: `${"a".repeat(28)}.txt` }],
          transportOptions: { csid: "c".repeat(20) },
          reference: { customerDefinedId: "x".repeat(256), billingCode: "b".repeat(80), billingInfo: "i".repeat(80) },
        }),
      );
    });
  });

  describe("400 Bad Request", () => {
    it("invalid JSON → invalid_json, message starts with 'Unable to process JSON'", async () => {
      const b = await expect400('{"recipients": [', "invalid_json", /^Unable to process JSON/);
      assert.ok(b.message.length > "Unable to process JSON".length, "the message says what is wrong with the JSON");
      await expect400("not json at all", "invalid_json", /^Unable to process JSON/);
    });

    it("a JSON body that is not an object is refused", async () => {
      const res = await send("[1,2,3]");
      assert.equal(res.status, 400);
      assert.equal(res.body.code, 400);
      assert.equal(typeof res.body.error, "string");
    });

    it("POST without a body is refused with 400, not 500", async () => {
      const res = await client.request("POST", `/${creds.custNr}/fax`);
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.code, 400);
    });

    it("no recipients: missing or empty → no_recipients", async () => {
      await expect400({ documents: [TEXT_DOC] }, "no_recipients", /recipients/);
      await expect400({ recipients: [], documents: [TEXT_DOC] }, "no_recipients", /recipients/);
    });

    it("neither documents nor coverpageTemplate → no_content", async () => {
      await expect400({ recipients: [{ number: NUMBER }] }, "no_content", /documents/, /coverpageTemplate/);
      await expect400({ recipients: [{ number: NUMBER }], documents: [] }, "no_content", /documents/);
      await expect400({ recipients: [{ number: NUMBER }], documents: [], renderingOptions: { coverpageTemplate: "  " } }, "no_content");
    });

    it("document name of 33 characters → document_name_invalid", async () => {
      const name = `${"a".repeat(29)}.txt`;
      assert.equal(name.length, 33);
      await expect400(job({ documents: [{ ...TEXT_DOC, name }] }), "document_name_invalid", /documents\[0\]\.name/, /32/);
    });

    it("document name with a space or a slash → document_name_invalid", async () => {
      await expect400(job({ documents: [{ ...TEXT_DOC, name: "my file.txt" }] }), "document_name_invalid", /documents\[0\]\.name/);
      await expect400(job({ documents: [TEXT_DOC, { ...TEXT_DOC, name: "dir/file.txt" }] }), "document_name_invalid", /documents\[1\]\.name/);
      await expect400(job({ documents: [{ ...TEXT_DOC, name: "" }] }), "document_name_invalid", /documents\[0\]\.name/);
    });

    it("unknown file extension → document_type_unknown", async () => {
      await expect400(job({ documents: [{ ...TEXT_DOC, name: "file.xyz" }] }), "document_type_unknown", /documents\[0\]\.name/, /file\.xyz/);
      await expect400(job({ documents: [{ ...TEXT_DOC, name: "noextension" }] }), "document_type_unknown", /documents\[0\]\.name/);
    });

    it("csid of 21 characters → field_too_long", async () => {
      await expect400(job({ transportOptions: { csid: "c".repeat(21) } }), "field_too_long", /transportOptions\.csid/, /20/);
    });

    it("customerDefinedId of 257, billingCode / billingInfo of 81 → field_too_long", async () => {
      await expect400(job({ reference: { customerDefinedId: "x".repeat(257) } }), "field_too_long", /reference\.customerDefinedId/, /256/);
      await expect400(job({ reference: { billingCode: "b".repeat(81) } }), "field_too_long", /reference\.billingCode/, /80/);
      await expect400(job({ reference: { billingInfo: "i".repeat(81) } }), "field_too_long", /reference\.billingInfo/, /80/);
    });

    it("jobValid.start without a time zone → job_valid_invalid", async () => {
      await expect400(job({ meta: { jobValid: { start: "2030-01-01T10:00:00" } } }), "job_valid_invalid", /jobValid\.start/, /time zone/);
      await expect400(job({ meta: { jobValid: { start: "2030-01-01T10:00" } } }), "job_valid_invalid", /jobValid\.start/, /time zone/);
    });

    it("jobValid.start that is no timestamp → job_valid_invalid", async () => {
      await expect400(job({ meta: { jobValid: { start: "next monday" } } }), "job_valid_invalid", /jobValid\.start/);
    });

    it("impossible calendar dates are refused, not rolled over (2030-02-30 is not 2 March)", async () => {
      await expect400(job({ meta: { jobValid: { start: "2030-02-30T10:00:00Z" } } }), "job_valid_invalid", /jobValid\.start/, /2030-02-30/);
      await expect400(job({ meta: { jobValid: { start: "2030-04-31T10:00:00+02:00" } } }), "job_valid_invalid", /jobValid\.start/);
      await expect400(job({ meta: { jobValid: { end: "2031-02-29T10:00:00Z" } } }), "job_valid_invalid", /jobValid\.end/);
      await expect400(job({ meta: { jobValid: { start: "2030-13-01T10:00:00Z" } } }), "job_valid_invalid", /jobValid\.start/);
      // A real leap day is fine (as an end: later than jobs.maxValidity, it is cut to that).
      await expect201(job({ meta: { jobValid: { end: "2032-02-29T10:00:00Z" } } }));
    });

    it("bad jobValid.end → job_valid_invalid", async () => {
      await expect400(job({ meta: { jobValid: { end: "tomorrow" } } }), "job_valid_invalid", /jobValid\.end/, /tomorrow/);
      await expect400(job({ meta: { jobValid: { end: "2030-01-01T10:00:00" } } }), "job_valid_invalid", /jobValid\.end/);
    });

    it("jobValid.end before start (or in the past) → job_valid_invalid", async () => {
      const start = new Date(Date.now() + 7_200_000).toISOString();
      const end = new Date(Date.now() + 3_600_000).toISOString();
      await expect400(job({ meta: { jobValid: { start, end } } }), "job_valid_invalid", /jobValid\.end/);
      await expect400(job({ meta: { jobValid: { end: "2015-08-07T14:04:37.107Z" } } }), "job_valid_invalid", /jobValid\.end/);
    });

    it("invalid base64 data → document_data_invalid", async () => {
      await expect400(job({ documents: [{ name: "a.txt", data: "!!!not base64!!!" }] }), "document_data_invalid", /documents\[0\]\.data/, /base64/);
      await expect400(job({ documents: [{ name: "a.txt", data: "QUJDR" }] }), "document_data_invalid", /documents\[0\]\.data/);
    });

    it("document without data or reference → document_data_invalid", async () => {
      await expect400(job({ documents: [{ name: "a.txt" }] }), "document_data_invalid", /documents\[0\]/, /data/, /reference/);
      await expect400(job({ documents: [TEXT_DOC, { name: "b.txt", data: null, reference: null }] }), "document_data_invalid", /documents\[1\]/);
    });

    it("an empty document (0 bytes) → document_data_invalid saying so", async () => {
      await expect400(job({ documents: [{ name: "a.txt", data: "" }] }), "document_data_invalid", /documents\[0\] \("a\.txt"\) is empty: its data holds 0 bytes/);
      await expect400(job({ documents: [TEXT_DOC, { name: "b.pdf", data: " \n" }] }), "document_data_invalid", /documents\[1\] \("b\.pdf"\) is empty/);
    });

    it("recipient properties are bounded: 50 of them, keys of 100 and values of 2000 characters", async () => {
      const properties = (count: number, key = "k", value = "v") => Array.from({ length: count }, (_, i) => ({ key: `${key}${i}`, value }));
      await expect201(job({ recipients: [{ number: NUMBER, properties: properties(50) }] }));
      await expect201(job({ recipients: [{ number: NUMBER, properties: [{ key: "k".repeat(100), value: "v".repeat(2000) }] }] }));
      await expect400(job({ recipients: [{ number: NUMBER, properties: properties(51) }] }), "invalid_request", /recipients\[0\]\.properties has more than 50 entries/);
      await expect400(job({ recipients: [{ number: NUMBER, properties: [{ key: "k".repeat(101), value: "v" }] }] }), "field_too_long", /recipients\[0\]\.properties\[0\]\.key is longer than 100 characters/);
      await expect400(job({ recipients: [{ number: NUMBER, properties: [{ key: "k", value: "v".repeat(2001) }] }] }), "field_too_long", /recipients\[0\]\.properties\[0\]\.value is longer than 2000 characters/);
      await expect400(job({ recipients: [{ number: NUMBER, alternativeNumbers: Array(11).fill("+4989123456") }] }), "invalid_request", /recipients\[0\]\.alternativeNumbers has more than 10 entries/);
    });

    it("unsupported charset → charset_unsupported", async () => {
      await expect400(job({ documents: [{ ...TEXT_DOC, charset: "KOI8-R" }] }), "charset_unsupported", /documents\[0\]\.charset/, /KOI8-R/);
    });

    it("paperFormat A5 and other out-of-set values → enum_value_invalid", async () => {
      await expect400(job({ renderingOptions: { paperFormat: "A5" } }), "enum_value_invalid", /renderingOptions\.paperFormat/, /A5/, /A4/);
      await expect400(job({ renderingOptions: { resolution: "ULTRA" } }), "enum_value_invalid", /renderingOptions\.resolution/);
      await expect400(job({ renderingOptions: { overlay: { name: "o", mode: "SOMETIMES" } } }), "enum_value_invalid", /overlay\.mode/);
      await expect400(job({ renderingOptions: { toneMode: "SEPIA" } }), "enum_value_invalid", /renderingOptions\.toneMode/, /THRESHOLD/);
      await expect400(
        job({ statusReportOptions: { reportMail: { attachedFaxImageMode: "MAYBE" } } }),
        "enum_value_invalid",
        /attachedFaxImageMode/,
      );
      await expect400(
        job({ statusReportOptions: { httpStatusPush: { targetUrl: "https://example.com/push", authMethod: "KERBEROS" } } }),
        "enum_value_invalid",
        /authMethod/,
      );
    });

    it("bad fax numbers → number_invalid naming the recipient", async () => {
      await expect400({ recipients: [{ number: "abc" }], documents: [TEXT_DOC] }, "number_invalid", /recipients\[0\]\.number/);
      await expect400({ recipients: [{ number: NUMBER }, { number: "+49 89 12x" }], documents: [TEXT_DOC] }, "number_invalid", /recipients\[1\]\.number/);
      await expect400({ recipients: [{ number: "123" }], documents: [TEXT_DOC] }, "number_invalid", /recipients\[0\]\.number/);
      await expect400(
        { recipients: [{ number: NUMBER, alternativeNumbers: ["+49+89"] }], documents: [TEXT_DOC] },
        "number_invalid",
        /recipients\[0\]\.alternativeNumbers\[0\]/,
      );
    });

    it("header with a standalone % → 400 naming renderingOptions.header", async () => {
      const b = await expect400(job({ renderingOptions: { header: "50% off" } }), "header_invalid", /renderingOptions\.header/);
      assert.match(b.message, /%%/);
      await expect400(job({ renderingOptions: { header: "ends with %" } }), "header_invalid", /renderingOptions\.header/);
    });

    it("reference URL to 127.0.0.1 (and localhost) is refused by default → document_reference_forbidden", async () => {
      await expect400(
        job({ documents: [{ name: "a.txt", reference: "http://127.0.0.1:9/doc.txt" }] }),
        "document_reference_forbidden",
        /documents\[0\]\.reference/,
      );
      await expect400(
        job({ documents: [{ name: "a.txt", reference: "http://localhost/doc.txt" }] }),
        "document_reference_forbidden",
        /documents\[0\]\.reference/,
      );
      await expect400(
        job({ documents: [{ name: "a.txt", reference: "http://169.254.169.254/latest/meta-data" }] }),
        "document_reference_forbidden",
        /documents\[0\]\.reference/,
      );
    });

    it("reference that is not an http(s) URL → 400 naming the field", async () => {
      for (const reference of ["file:///etc/passwd", "not a url"]) {
        const res = await send(job({ documents: [{ name: "a.txt", reference }] }));
        assert.equal(res.status, 400, reference);
        assert.match(res.body.message, /documents\[0\]\.reference/);
      }
    });

    it("wrong JSON types → invalid_request naming the field", async () => {
      await expect400({ recipients: [{ number: 4989000000000 }], documents: [TEXT_DOC] }, "invalid_request", /recipients\[0\]\.number/);
      await expect400(job({ transportOptions: { isExpress: "yes" } }), "invalid_request", /transportOptions\.isExpress/);
      await expect400({ recipients: "+4989000000000", documents: [TEXT_DOC] }, "invalid_request", /recipients/);
      await expect400({ recipients: [{}], documents: [TEXT_DOC] }, "invalid_request", /recipients\[0\]\.number/);
    });

    it("limits: recipients, documents, document and job size (configured low on this node)", async () => {
      const doc = (name: string, bytes: number) => ({ name, data: Buffer.alloc(bytes, "a").toString("base64") });
      await expect201({ recipients: Array(5).fill({ number: NUMBER }), documents: [doc("a.txt", 4096)] });
      const six = await send({ recipients: Array(6).fill({ number: NUMBER }), documents: [TEXT_DOC] });
      assert.equal(six.status, 400);
      assert.equal(six.body.error, "too_many_recipients");
      assert.match(six.body.message, /6 recipients/);
      assert.match(six.body.message, /5/);
      const four = await send(job({ documents: [TEXT_DOC, TEXT_DOC, TEXT_DOC, TEXT_DOC] }));
      assert.equal(four.status, 400);
      assert.equal(four.body.error, "too_many_documents");
      assert.match(four.body.message, /4 documents/);
      assert.match(four.body.message, /at most 3/);
      await expect400(job({ documents: [doc("big.txt", 4097)] }), "document_too_large", /documents\[0\]/, /4097 bytes/, /4096/);
      await expect400(job({ documents: [doc("a.txt", 3000), doc("b.txt", 3001)] }), "document_too_large", /6000 bytes/);
    });

    it("a body over http.bodyLimitBytes → 413 payload_too_large", async () => {
      const res = await send(job({ documents: [{ name: "huge.txt", data: "A".repeat(70_000) }] }));
      assert.equal(res.status, 413);
      assert.equal(res.body.code, 413);
      assert.equal(res.body.error, "payload_too_large");
      assert.match(res.body.message, /65536/);
    });

    it("bad report e-mail address and push URL → invalid_request naming the field", async () => {
      await expect400(
        job({ statusReportOptions: { reportMail: { successAddress: "not-an-address" } } }),
        "invalid_request",
        /reportMail\.successAddress/,
      );
      await expect400(
        job({ statusReportOptions: { httpStatusPush: { targetUrl: "ftp://example.com/x" } } }),
        "invalid_request",
        /httpStatusPush\.targetUrl/,
      );
    });
  });

  describe("409 duplicate job (Idempotency-Key)", () => {
    it("a repeated key answers 409 with the original jobId and creates nothing", async () => {
      const own = await newLogin();
      const c = api(node.url, own);
      const body = job();
      const first = await c.post(`/${own.custNr}/fax`, body, { "Idempotency-Key": "order-4711" });
      assert.equal(first.status, 201);
      const again = await c.post(`/${own.custNr}/fax`, body, { "Idempotency-Key": "order-4711" });
      assert.equal(again.status, 409, JSON.stringify(again.body));
      assert.equal(again.body.code, 409);
      assert.equal(again.body.error, "duplicate_job");
      assert.equal(again.body.jobId, first.body.jobId);
      assert.match(again.body.message, /order-4711/);

      const different = await c.post(`/${own.custNr}/fax`, job({ reference: { customerDefinedId: "other" } }), { "Idempotency-Key": "order-4711" });
      assert.equal(different.status, 409);
      assert.equal(different.body.error, "duplicate_job");
      assert.equal(different.body.jobId, first.body.jobId);
      assert.match(different.body.message, /different/);

      // Only the one job exists.
      await waitForFinalReport(c, own.custNr, first.body.jobId);
      const list = await c.get(`/${own.custNr}/fax/reports`);
      assert.deepEqual(list.body.reports.map((r: { jobId: string }) => r.jobId), [first.body.jobId]);
    });

    it("concurrent requests with one key create exactly one job", async () => {
      const own = await newLogin();
      const c = api(node.url, own);
      const results = await Promise.all(Array.from({ length: 6 }, () => c.post(`/${own.custNr}/fax`, job(), { "Idempotency-Key": "race-key" })));
      const created = results.filter((r) => r.status === 201);
      assert.equal(created.length, 1, results.map((r) => r.status).join(","));
      for (const r of results.filter((x) => x.status !== 201)) {
        assert.equal(r.status, 409);
        assert.equal(r.body.jobId, created[0]!.body.jobId);
      }
    });

    it("an Idempotency-Key over 255 characters → 400 field_too_long; a blank key is no key", async () => {
      const own = await newLogin();
      const c = api(node.url, own);
      const long = await c.post(`/${own.custNr}/fax`, job(), { "Idempotency-Key": "k".repeat(256) });
      assert.equal(long.status, 400);
      assert.equal(long.body.error, "field_too_long");
      assert.match(long.body.message, /idempotency-key/i);
      const b1 = await c.post(`/${own.custNr}/fax`, job(), { "Idempotency-Key": "   " });
      const b2 = await c.post(`/${own.custNr}/fax`, job(), { "Idempotency-Key": "   " });
      assert.equal(b1.status, 201);
      assert.equal(b2.status, 201);
      assert.notEqual(b1.body.jobId, b2.body.jobId);
    });

    it("without the header, identical requests are never duplicates", async () => {
      const own = await newLogin();
      const c = api(node.url, own);
      const body = job({ reference: { customerDefinedId: "same" } });
      const ids = new Set<string>();
      for (let i = 0; i < 3; i++) {
        const res = await c.post(`/${own.custNr}/fax`, body);
        assert.equal(res.status, 201);
        ids.add(res.body.jobId);
      }
      assert.equal(ids.size, 3);
    });

    it("keys are per login: another login may use the same key", async () => {
      const a = await newLogin();
      const b = await newLogin();
      const ra = await api(node.url, a).post(`/${a.custNr}/fax`, job(), { "Idempotency-Key": "shared-key" });
      const rb = await api(node.url, b).post(`/${b.custNr}/fax`, job(), { "Idempotency-Key": "shared-key" });
      assert.equal(ra.status, 201);
      assert.equal(rb.status, 201);
      assert.notEqual(ra.body.jobId, rb.body.jobId);
    });

    it("a different key is a new job", async () => {
      const own = await newLogin();
      const c = api(node.url, own);
      const r1 = await c.post(`/${own.custNr}/fax`, job(), { "Idempotency-Key": "k1" });
      const r2 = await c.post(`/${own.custNr}/fax`, job(), { "Idempotency-Key": "k2" });
      assert.equal(r1.status, 201);
      assert.equal(r2.status, 201);
      assert.notEqual(r1.body.jobId, r2.body.jobId);
    });
  });

  describe("401 authentication", () => {
    it("no credentials → 401 authentication_failed with WWW-Authenticate", async () => {
      const res = await api(node.url, null).post(`/${creds.custNr}/fax`, job());
      assert.equal(res.status, 401);
      assert.equal(res.body.code, 401);
      assert.equal(res.body.error, "authentication_failed");
      assert.match(res.body.message, /Basic/);
      assert.match(res.headers.get("www-authenticate") ?? "", /^Basic realm=/);
      const get = await api(node.url, null).get(`/${creds.custNr}/fax/reports`);
      assert.equal(get.status, 401);
      assert.match(get.headers.get("www-authenticate") ?? "", /^Basic/);
    });

    it("malformed Authorization header → 401", async () => {
      for (const authorization of ["Bearer abc", "Basic", `Basic ${Buffer.from("nocolon").toString("base64")}`]) {
        const res = await api(node.url, null).post(`/${creds.custNr}/fax`, job(), { authorization });
        assert.equal(res.status, 401, authorization);
        assert.equal(res.body.error, "authentication_failed");
      }
    });

    it("wrong password or unknown login → 401 authentication_failed, nothing stored", async () => {
      const own = await newLogin();
      const wrong = await api(node.url, { login: own.login, password: "wrong-password" }).post(`/${own.custNr}/fax`, job());
      assert.equal(wrong.status, 401);
      assert.equal(wrong.body.error, "authentication_failed");
      assert.match(wrong.headers.get("www-authenticate") ?? "", /^Basic/);
      const unknown = await api(node.url, { login: "nobody-here", password: "whatever-1" }).post(`/${own.custNr}/fax`, job());
      assert.equal(unknown.status, 401);
      assert.equal(unknown.body.error, "authentication_failed");
      assert.equal(wrong.body.message, unknown.body.message, "a wrong password and an unknown login look the same");
      const list = await api(node.url, own).get(`/${own.custNr}/fax/reports`);
      assert.deepEqual(list.body, { reports: [] });
    });

    it("authentication is checked before the body: bad JSON without credentials → 401", async () => {
      const res = await api(node.url, null).post(`/${creds.custNr}/fax`, "{broken");
      assert.equal(res.status, 401);
    });
  });

  describe("transport details", () => {
    it("GET and DELETE with Content-Type: application/json and an empty body are accepted (SDKs send that)", async () => {
      const own = await newLogin();
      const auth = `Basic ${Buffer.from(`${own.login}:${own.password}`).toString("base64")}`;
      const get = await fetch(`${node.url}/rest/v1/${own.custNr}/fax/reports`, {
        method: "GET",
        headers: { "content-type": "application/json", accept: "application/json", authorization: auth },
      });
      assert.equal(get.status, 200);
      assert.deepEqual(await get.json(), { reports: [] });
      for (const body of [undefined, ""]) {
        const del = await fetch(`${node.url}/rest/v1/${own.custNr}/fax/reports`, {
          method: "DELETE",
          headers: { "content-type": "application/json", authorization: auth },
          ...(body === undefined ? {} : { body }),
        });
        assert.equal(del.status, 200);
        assert.deepEqual(await del.json(), { reports: [] });
      }
      const delOne = await fetch(`${node.url}/rest/v1/${own.custNr}/fax/reports/FJ00000000000000000000`, {
        method: "DELETE",
        headers: { "content-type": "application/json; charset=utf-8", authorization: auth },
      });
      assert.equal(delOne.status, 404);
      const getOne = await fetch(`${node.url}/rest/v1/${own.custNr}/fax/reports/FJ00000000000000000000`, {
        headers: { "content-type": "application/json", authorization: auth },
      });
      assert.equal(getOne.status, 404);
      assert.equal(((await getOne.json()) as ErrorBody).error, "report_not_found");
    });

    it("Content-Type with a charset parameter is accepted on POST", async () => {
      const res = await send(job(), { "content-type": "application/json; charset=UTF-8" });
      assert.equal(res.status, 201);
    });

    it("a non-JSON Content-Type is refused with 415 unsupported_media_type, text/plain too (even with JSON in it)", async () => {
      const form = await send("recipients=x", { "content-type": "application/x-www-form-urlencoded" });
      assert.equal(form.status, 415);
      assert.equal(form.body.error, "unsupported_media_type");
      const text = await send(JSON.stringify(job()), { "content-type": "text/plain" });
      assert.equal(text.status, 415);
      assert.equal(text.body.error, "unsupported_media_type");
      assert.match(text.body.message, /Content-Type text\/plain is not supported; send application\/json/);
    });

    it("unknown routes answer 404 with a JSON error body", async () => {
      for (const path of ["/nothing-here", "/rest/v1/99999TE/fax/unknown/deeper", "/rest/v2/99999TE/fax"]) {
        const res = await fetch(`${node.url}${path}`);
        assert.equal(res.status, 404, path);
        assert.match(res.headers.get("content-type") ?? "", /application\/json/);
        const b = (await res.json()) as ErrorBody;
        assert.equal(b.code, 404);
        assert.equal(b.error, "route_not_found");
        assert.match(b.message, new RegExp(path.replace(/\//g, "\\/")));
      }
      const wrongMethod = await client.request("PUT", `/${creds.custNr}/fax`, job());
      assert.equal(wrongMethod.status, 404);
      assert.equal(wrongMethod.body.error, "route_not_found");
    });

    it("/openapi.json lists the six operations of the contract and the notification, fax image and cancel extensions, and the configuration API (the console's own routes stay out)", async () => {
      const res = await fetch(`${node.url}/openapi.json`);
      assert.equal(res.status, 200);
      const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, { operationId?: string }>> };
      assert.match(doc.openapi, /^3\./);
      const ops: Record<string, string> = {};
      for (const [path, methods] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(methods)) {
          if (op && typeof op === "object" && op.operationId) ops[op.operationId] = `${method.toUpperCase()} ${path}`;
        }
      }
      // Two documented interfaces only: REST v1 and the configuration API (docs/config-api.md, tested there).
      const outside = Object.values(ops).filter((op) => !/^[A-Z]+ \/(rest\/v1|config\/v2)\//.test(op));
      assert.deepEqual(outside, [], "only /rest/v1 and /config/v2 are in the OpenAPI document");
      assert.ok(Object.values(ops).some((op) => op === "GET /config/v2/inbound/numbers"), "the configuration API is documented");
      const restV1 = Object.fromEntries(Object.entries(ops).filter(([, op]) => / \/rest\/v1\//.test(op)));
      assert.deepEqual(restV1, {
        sendJobRequest: "POST /rest/v1/{custNr}/fax",
        getStatusReport: "GET /rest/v1/{custNr}/fax/reports/{jobId}",
        deleteStatusReport: "DELETE /rest/v1/{custNr}/fax/reports/{jobId}",
        getAllStatusReports: "GET /rest/v1/{custNr}/fax/reports",
        getJobNotifications: "GET /rest/v1/{custNr}/fax/reports/{jobId}/notifications",
        redeliverNotification: "POST /rest/v1/{custNr}/fax/reports/{jobId}/notifications/{notificationId}/redeliver",
        deleteOldestStatusReports: "DELETE /rest/v1/{custNr}/fax/reports",
        bulkStatusReports: "POST /rest/v1/{custNr}/fax/reports",
        getJobFaxImages: "GET /rest/v1/{custNr}/fax/reports/{jobId}/fax-images",
        getFaxImageTiff: "GET /rest/v1/{custNr}/fax/reports/{jobId}/fax-images/{imageId}",
        getFaxImagePagePng: "GET /rest/v1/{custNr}/fax/reports/{jobId}/fax-images/{imageId}/pages/{page}",
        previewJobRequest: "POST /rest/v1/{custNr}/fax/preview",
        cancelJob: "POST /rest/v1/{custNr}/fax/reports/{jobId}/cancel",
      });
    });

    it("/docs answers 200 (directly or after a redirect)", async () => {
      const res = await fetch(`${node.url}/docs`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-type") ?? "", /text\/html/);
      const html = await res.text();
      assert.match(html, /swagger/i);
    });

    it("/health answers with the node's region and data center", async () => {
      const res = await fetch(`${node.url}/health`);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { status: "ok", region: "DE", datacenter: "DE1" });
    });
  });
});

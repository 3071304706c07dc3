/**
 * Regression tests for the defects a new user met on day one (issue 13), through a real node:
 *
 * - the Go SDK's double-slash paths reach every route (`/rest/v1//{custNr}/fax/reports/{jobId}`);
 * - a UTF-16 text document with a byte order mark and no charset is faxed, not refused;
 * - a deeply nested body is 400 json_too_deep, not 500;
 * - out-of-range validity durations are 400 job_valid_invalid, a very long validity is capped;
 * - the router's and the HTTP parser's own errors have the catalogue's body shape.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { connect } from "node:net";
import { ApiErrors } from "../../src/errors/api-errors.ts";
import { api, createTestLogin, startTestNode, TEXT_DOC, waitForFinalReport, type TestNode } from "../support/test-node.ts";

const CUST = "99999TE";

/** Sends raw bytes over one TCP connection and returns everything the server wrote until it closed. */
function rawExchange(url: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let received = "";
    socket.setEncoding("utf8");
    socket.on("data", (d: string) => (received += d));
    socket.on("error", reject);
    socket.on("close", () => resolve(received));
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer to ${JSON.stringify(bytes.slice(0, 60))}`)));
  });
}

/** Status, headers and JSON body of each HTTP/1.1 answer in a raw exchange (read by Content-Length). */
function parseAnswers(raw: string): Array<{ status: number; body: any; headers: string }> {
  const answers = [];
  let rest = raw;
  while (rest.length > 0) {
    const end = rest.indexOf("\r\n\r\n");
    assert.ok(end > 0, `an HTTP head in ${JSON.stringify(rest.slice(0, 80))}`);
    const headers = rest.slice(0, end);
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(headers)?.[1]);
    const bodyBytes = Buffer.from(rest.slice(end + 4), "utf8");
    answers.push({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1]), headers, body: JSON.parse(bodyBytes.subarray(0, length).toString("utf8")) });
    rest = bodyBytes.subarray(length).toString("utf8");
  }
  return answers;
}

/** The one answer of a raw exchange. */
function parseRaw(raw: string): { status: number; body: any; headers: string } {
  const answers = parseAnswers(raw);
  assert.equal(answers.length, 1, raw);
  return answers[0]!;
}

/** Checks the catalogue's shape: {code: status, error: a catalogue code with that status, message}. */
function assertCatalogueBody(status: number, body: any, error: string) {
  assert.deepEqual(Object.keys(body).sort(), ["code", "error", "message"]);
  assert.equal(body.code, status);
  assert.equal(body.error, error);
  assert.equal((ApiErrors as Record<string, { status: number }>)[error]?.status, status, `${error} is in the catalogue with status ${status}`);
  assert.ok(typeof body.message === "string" && body.message.length > 10);
}

describe("first-day defects (issue 13)", () => {
  let node: TestNode;
  let client: ReturnType<typeof api>;
  const creds = { custNr: CUST, login: "dayone", password: "day-one-pass-1" };

  before(async () => {
    node = await startTestNode();
    await createTestLogin(node, creds);
    client = api(node.url, creds);
  });
  after(async () => {
    await node.stop();
  });

  describe("repeated slashes in the path (the Go SDK joins its base URL and paths that way)", () => {
    it("answers every route the same with doubled slashes", async () => {
      const sent = await client.post(`//${CUST}//fax`, { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC] });
      assert.equal(sent.status, 201, JSON.stringify(sent.body));
      const jobId = sent.body.jobId as string;
      await waitForFinalReport(client, CUST, jobId);
      // The exact shapes the Go SDK sends: url.JoinPath(endpoint, "/", custNr, "/", "/fax/reports/"+id).
      const one = await client.get(`//${CUST}/fax/reports/${jobId}`);
      assert.equal(one.status, 200);
      assert.equal(one.body.jobId, jobId);
      const list = await client.get(`//${CUST}/fax/reports`);
      assert.equal(list.status, 200);
      assert.ok(list.body.reports.some((r: any) => r.jobId === jobId));
      const bulk = await client.post(`//${CUST}/fax/reports`, { action: "GET", jobIds: [jobId] });
      assert.equal(bulk.status, 200);
      assert.equal(bulk.body.reports[0].jobId, jobId);
      const triple = await client.get(`///${CUST}///fax///reports///${jobId}`);
      assert.equal(triple.status, 200);
      const deleted = await client.delete(`//${CUST}/fax/reports/${jobId}`);
      assert.equal(deleted.status, 200);
      assert.equal(deleted.body.deleted, true);
      assert.equal((await client.get(`/${CUST}/fax/reports/${jobId}`)).status, 404);
      const pruned = await client.delete(`//${CUST}/fax/reports`);
      assert.equal(pruned.status, 200);
    });
  });

  describe("text with a byte order mark", () => {
    it("faxes UTF-16LE text that starts with FF FE and names no charset", async () => {
      const text = "Grüße aus München – UTF-16 from Windows Notepad\r\n";
      const data = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]).toString("base64");
      const sent = await client.post(`/${CUST}/fax`, { recipients: [{ number: "+4900000020" }], documents: [{ name: "notepad.txt", data }] });
      assert.equal(sent.status, 201);
      const report = await waitForFinalReport(client, CUST, sent.body.jobId);
      assert.equal(report.recipientStatus[0].status, "OK", JSON.stringify(report));
    });

    it("fails text that is not valid in the assumed charset with a reason naming the charset field", async () => {
      const data = Buffer.from("Grüße", "utf16le").toString("base64");
      const doc = { name: "nobom.txt", data };
      const preview = await client.post(`/${CUST}/fax/preview`, { recipients: [{ number: "+4900000020" }], documents: [doc] });
      assert.equal(preview.status, 422);
      assert.match(preview.body.message, /not valid UTF-8.*read as UTF-8, the default when the document names no charset; set the document's charset field/);
      const sent = await client.post(`/${CUST}/fax`, { recipients: [{ number: "+4900000020" }], documents: [doc] });
      assert.equal(sent.status, 201);
      const report = await waitForFinalReport(client, CUST, sent.body.jobId);
      assert.equal(report.recipientStatus[0].status, "DOC_ERROR");
    });
  });

  describe("base64 documents (sized before decoding, decoded without copies)", () => {
    it("takes MIME line breaks and base64url, and stores exactly the bytes", async () => {
      const bytes = Buffer.from("Zeile 1: Grüße\nZeile 2: ~~~???>>>\n".repeat(20));
      const mime = bytes.toString("base64").replace(/.{76}/g, "$&\r\n");
      const url = bytes.toString("base64url");
      for (const data of [mime, url]) {
        // Starting in an hour: the job keeps its document meanwhile (documents go when a job completes).
        const sent = await client.post(`/${CUST}/fax`, { recipients: [{ number: "+4900000020" }], documents: [{ name: "mime.txt", data }], meta: { jobValid: { start: "PT1H" } } });
        assert.equal(sent.status, 201, JSON.stringify(sent.body));
        const row = await node.node.context.store.db.selectFrom("job_documents").select(["content", "size_bytes"]).where("job_id", "=", sent.body.jobId).executeTakeFirstOrThrow();
        assert.equal(Number(row.size_bytes), bytes.length, "the decoded size");
        assert.ok(row.content !== null && Buffer.from(row.content).equals(bytes), "the stored document is the sent bytes");
      }
    });

    it("refuses Unicode spaces inside base64 (Node's decoder would not skip them) with 400 document_data_invalid", async () => {
      const data = Buffer.from("hello fax").toString("base64").replace("Z", "Z\u3000");
      const res = await client.post(`/${CUST}/fax`, { recipients: [{ number: "+4900000020" }], documents: [{ name: "u.txt", data }] });
      assert.equal(res.status, 400);
      assertCatalogueBody(400, res.body, "document_data_invalid");
    });
  });

  describe("deeply nested JSON", () => {
    for (const path of [`/${CUST}/fax`, `/${CUST}/fax/preview`]) {
      it(`refuses 5000 levels of nesting in ${path} with 400 json_too_deep, and the node stays up`, async () => {
        const deep = "[".repeat(5000) + "]".repeat(5000);
        const body = `{"recipients":[{"number":"+4900000020"}],"documents":[${JSON.stringify(TEXT_DOC)}],"unknown":${deep}}`;
        const res = await client.post(path, body);
        assert.equal(res.status, 400);
        assertCatalogueBody(400, res.body, "json_too_deep");
        const ok = await client.get(`/${CUST}/fax/reports`);
        assert.equal(ok.status, 200);
      });
    }

    it("counts no brackets inside strings, escaped quotes included", async () => {
      const customerReference = `${"[{".repeat(60)}\\"${"}]".repeat(60)}`;
      const res = await client.post(`/${CUST}/fax`, { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC], meta: { customerReference } });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    });
  });

  describe("validity durations", () => {
    const send = (jobValid: { start?: string; end?: string }) =>
      client.post(`/${CUST}/fax`, { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC], meta: { jobValid } });
    for (const jobValid of [{ end: "P300000Y" }, { end: "P9999999999Y" }, { start: "P99999999D" }, { start: "PT99999999999999999999S" }, { end: `P${"9".repeat(400)}D` }]) {
      it(`refuses ${JSON.stringify(jobValid).slice(0, 60)} with 400 job_valid_invalid`, async () => {
        const res = await send(jobValid);
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assertCatalogueBody(400, res.body, "job_valid_invalid");
      });
    }

    it("caps a validity longer than jobs.maxValidity (P1Y), so that the job ends", async () => {
      const res = await send({ end: "P50Y" });
      assert.equal(res.status, 201);
      const row = await node.node.context.store.db.selectFrom("jobs").select(["valid_from", "valid_until"]).where("id", "=", res.body.jobId).executeTakeFirstOrThrow();
      const days = (Number(row.valid_until) - Number(row.valid_from)) / 86_400_000;
      assert.ok(days >= 365 && days <= 366, `validity of ${days} days`);
    });
  });

  describe("the framework's own errors have the catalogue's shape", () => {
    it("a path that is not valid percent-encoding: 400 path_invalid", async () => {
      const res = await client.get(`/${CUST}/fax/reports/%ff%fe`);
      assert.equal(res.status, 400);
      assertCatalogueBody(400, res.body, "path_invalid");
    });

    it("a path segment over 100 characters: 414 path_too_long", async () => {
      const res = await client.get(`/${CUST}/fax/reports/${"A".repeat(101)}`);
      assert.equal(res.status, 414);
      assertCatalogueBody(414, res.body, "path_too_long");
    });

    it("an unknown method: 400 http_malformed, then the connection closes", async () => {
      const answer = parseRaw(await rawExchange(node.url, `FOO /rest/v1/${CUST}/fax/reports HTTP/1.1\r\nHost: x\r\n\r\n`));
      assert.equal(answer.status, 400);
      assertCatalogueBody(400, answer.body, "http_malformed");
      assert.match(answer.headers, /Connection: close/i);
    });

    it("a Content-Length shorter than the body: the rest is no request, 400 http_malformed", async () => {
      const body = '{"action":"GET","jobIds":[]}';
      const raw = await rawExchange(
        node.url,
        `POST /rest/v1/${CUST}/fax/reports HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n${body}`,
      );
      const answers = parseAnswers(raw);
      const last = answers.at(-1)!;
      assert.equal(last.status, 400);
      assertCatalogueBody(400, last.body, "http_malformed");
      for (const a of answers) assert.deepEqual(Object.keys(a.body).sort(), ["code", "error", "message"]);
    });

    it("a broken chunked body: 400 http_malformed", async () => {
      const answer = parseRaw(
        await rawExchange(node.url, `POST /rest/v1/${CUST}/fax HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n`),
      );
      assert.equal(answer.status, 400);
      assertCatalogueBody(400, answer.body, "http_malformed");
    });

    it("headers over the limit: 431 headers_too_large", async () => {
      const answer = parseRaw(await rawExchange(node.url, `GET /rest/v1/${CUST}/fax/reports HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`));
      assert.equal(answer.status, 431);
      assertCatalogueBody(431, answer.body, "headers_too_large");
    });
  });
});

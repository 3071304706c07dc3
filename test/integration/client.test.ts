/**
 * @faxline/client (packages/client) against a real node: send files and buffers, wait for the
 * final report, read, list, bulk, delete; errors as classes with the API's code; a signed status
 * push to a real receiver verified with the client's verifier. Also: the client's generated types
 * are those of the OpenAPI document the node serves (scripts/generate-client-types.ts --check).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import { FaxlineApiError, FaxlineClient, FaxlineConnectionError, verifyPushSignature } from "../../packages/client/src/index.ts";
import { rotateSigningSecret } from "../../src/accounts/notification-settings.ts";
import { CLIENT_TYPES_FILE, clientTypesSource } from "../../scripts/generate-client-types.ts";
import { PushReceiver } from "../support/push-receiver.ts";
import { createTestLogin, eventually, startTestNode, tempDir, type TestNode } from "../support/test-node.ts";

describe("@faxline/client against a real node", () => {
  let node: TestNode;
  let fax: FaxlineClient;
  const receiver = new PushReceiver();
  const files = tempDir("faxline-client-");
  const creds = { custNr: "40001", login: "client", password: "client-password" };

  before(async () => {
    await receiver.start();
    node = await startTestNode({ "push.allowTargets": "127.0.0.1" });
    await createTestLogin(node, creds);
    fax = new FaxlineClient({ baseUrl: `${node.url}/`, customerNumber: creds.custNr, login: creds.login, password: creds.password });
    writeFileSync(join(files.path, "Brief an Kunde (1).txt"), "Sehr geehrte Damen und Herren,\n");
  });
  after(async () => {
    await node.stop();
    await receiver.stop();
    files.remove();
  });

  it("sends a file by path and a buffer to two numbers and waits for the final report", async () => {
    const { jobId } = await fax.sendFiles({
      to: ["+4900000020", "+4900000009"],
      files: [join(files.path, "Brief an Kunde (1).txt"), { name: "anlage.txt", bytes: Buffer.from("Anlage\n") }],
      reference: { customerDefinedId: "client-test" },
    });
    assert.match(jobId, /^FJ[A-Z0-9]{20}$/);
    const report = await fax.waitForFinalReport(jobId, { initialDelayMs: 50, timeoutMs: 30_000 });
    assert.deepEqual(report.recipientStatus.map((r) => [r.number, r.status]), [["+4900000020", "OK"], ["+4900000009", "WRONG_NUMBER"]]);
    assert.equal(report.pages, 2);
    assert.deepEqual(report.reference, { customerDefinedId: "client-test" });
    assert.equal((await fax.getReport(jobId))?.jobId, jobId);
    assert.ok((await fax.listReports()).some((r) => r.jobId === jobId));
    const bulk = await fax.bulkReports("GET", [jobId, "FJ0000000000NOTTHERE00"]);
    assert.deepEqual(bulk.map((r) => r.jobId), [jobId], "GET leaves unknown ids out");
    assert.ok(await fax.deleteReport(jobId));
    assert.equal(await fax.getReport(jobId), null, "a deleted report reads as null");
    assert.equal(await fax.deleteReport(jobId), false);
  });

  it("cancels a job that waits for its start, and says so when there is nothing left to cancel", async () => {
    const start = new Date(Date.now() + 3_600_000).toISOString();
    const { jobId } = await fax.send({ recipients: [{ number: "+4900000020" }], documents: [{ name: "a.txt", data: Buffer.from("a\n").toString("base64") }], meta: { customerReference: null, jobValid: { start, end: null } } });
    const report = await fax.cancel(jobId);
    assert.deepEqual(report.recipientStatus.map((r) => r.status), ["CANCELLED"]);
    await assert.rejects(fax.cancel(jobId), (err: unknown) => err instanceof FaxlineApiError && err.code === "job_already_completed" && err.status === 409);
  });

  it("deletes the oldest reports", async () => {
    const { jobId } = await fax.send({ recipients: [{ number: "+4900000020" }], documents: [{ name: "a.txt", data: Buffer.from("a\n").toString("base64") }] });
    await fax.waitForFinalReport(jobId, { initialDelayMs: 50 });
    const deleted = await fax.deleteOldestReports();
    assert.ok(deleted.some((d) => d.jobId === jobId));
  });

  it("throws FaxlineApiError with the API's code, the duplicate's job id, and FaxlineConnectionError", async () => {
    await assert.rejects(fax.sendFiles({ to: "12", files: [{ name: "a.txt", bytes: Buffer.from("a") }] }), (err: unknown) => {
      assert.ok(err instanceof FaxlineApiError);
      assert.equal(err.status, 400);
      assert.equal(err.code, "number_invalid");
      return true;
    });
    const first = await fax.sendFiles({ to: "+4900000020", files: [{ name: "a.txt", bytes: Buffer.from("a") }] }, { idempotencyKey: "client-key-1" });
    await assert.rejects(fax.sendFiles({ to: "+4900000020", files: [{ name: "a.txt", bytes: Buffer.from("a") }] }, { idempotencyKey: "client-key-1" }), (err: unknown) => {
      assert.ok(err instanceof FaxlineApiError);
      assert.equal(err.code, "duplicate_job");
      assert.equal(err.jobId, first.jobId);
      return true;
    });
    const wrong = new FaxlineClient({ baseUrl: node.url, customerNumber: creds.custNr, login: creds.login, password: "wrong-password" });
    await assert.rejects(wrong.listReports(), (err: unknown) => err instanceof FaxlineApiError && err.status === 401 && err.code === "authentication_failed");
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const nowhere = new FaxlineClient({ baseUrl: `http://127.0.0.1:${port}`, customerNumber: "1", login: "x", password: "y" });
    await assert.rejects(nowhere.listReports(), (err: unknown) => err instanceof FaxlineConnectionError && /ECONNREFUSED/.test(err.message));
  });

  it("verifies a real signed status push, and refuses a changed body, another secret or an old timestamp", async () => {
    const { secret } = await rotateSigningSecret(node.node.context.store.db, creds.custNr);
    const { jobId } = await fax.sendFiles({ to: "+4900000020", files: [{ name: "a.txt", bytes: Buffer.from("a") }], statusReportOptions: { httpStatusPush: { targetUrl: receiver.url("/signed") } } });
    const push = await eventually(async () => receiver.received("/signed").find((r) => r.body.includes(jobId)), 15_000, "the signed push");
    assert.ok(verifyPushSignature(secret, push.headers as Record<string, string>, push.body));
    assert.ok(!verifyPushSignature(secret, push.headers as Record<string, string>, push.body.replace(jobId, "FJ0000000000000000000X")));
    assert.ok(!verifyPushSignature(`whsec_${Buffer.alloc(32, 7).toString("base64")}`, push.headers as Record<string, string>, push.body));
    assert.ok(!verifyPushSignature(secret, push.headers as Record<string, string>, push.body, { nowSecs: Number(push.headers["webhook-timestamp"]) + 3600 }));
  });

  it("has the types of the OpenAPI document the node serves (generate:client is up to date)", async () => {
    assert.equal(readFileSync(CLIENT_TYPES_FILE, "utf8"), await clientTypesSource(), "run npm run generate:client");
  });
});

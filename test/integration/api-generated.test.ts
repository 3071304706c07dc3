/**
 * Generated API input (issue 13's standing robustness suite), over every route of the OpenAPI
 * document the node serves, so that a new route is covered the day it is added:
 *
 * 1. Property-based requests (fast-check, support/openapi-arbitraries.ts): path parameters,
 *    query, Idempotency-Key, Content-Type, credentials and body drawn from each operation's
 *    schema and mixed with values that break it. Every answer is below 500, has a status the
 *    operation declares or that every route may give (400, 401, 404, 413, 414, 415, 429), and an
 *    error answer has the catalogue's body shape with a catalogue code of that status. Afterwards
 *    the node is healthy.
 * 2. A tenancy matrix: for every operation, a login of customer A aimed at customer B's path, or
 *    at B's job through its own path, is refused or sees nothing, and no answer carries B's job id.
 *
 * FAXLINE_FUZZ_RUNS (runs per operation, 30 here) and FAXLINE_FUZZ_SEED (fixed here, so that
 * a run repeats) are set by `npm run fuzz -- --runs 100000` for a long run with a random seed.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { ApiErrors } from "../../src/errors/api-errors.ts";
import { api, createTestLogin, startTestNode, TEXT_DOC, waitForFinalReport, type TestNode } from "../support/test-node.ts";
import { edgeStrings, fromSchema, operationsOf, type OpenApiOperation } from "../support/openapi-arbitraries.ts";

const RUNS = Number(process.env.FAXLINE_FUZZ_RUNS ?? 30);
const SEED = Number(process.env.FAXLINE_FUZZ_SEED ?? 20261125);

/** Statuses any route may answer: malformed path or body, authentication, limits (docs/api-errors.md). */
const ANY_ROUTE = [400, 401, 404, 413, 414, 415, 429];
const ERROR_BODY_KEYS = new Set(["code", "error", "message", "jobId", "deleted", "reason"]);

interface Known {
  custNr: string;
  jobId: string;
  imageId: string;
  notificationId: string;
  page: string;
}

function fillPath(op: OpenApiOperation, values: Record<string, string>, raw: boolean): string {
  return op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = values[name] ?? "";
    // Raw: the value as a client might paste it (only what would end the path is escaped).
    return raw ? v.replace(/[/?#\s]/g, (c) => encodeURIComponent(c)) : encodeURIComponent(v);
  });
}

function assertCatalogueAnswer(op: OpenApiOperation, status: number, text: string, what: string): void {
  assert.ok(status < 500, `${what}: ${status} ${text.slice(0, 300)}`);
  assert.ok(op.responses.includes(status) || ANY_ROUTE.includes(status), `${what}: ${status} is not documented for ${op.operationId}`);
  if (status < 400) return;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    assert.fail(`${what}: the ${status} body is not JSON: ${text.slice(0, 200)}`);
  }
  for (const key of ["code", "error", "message"]) assert.ok(key in body, `${what}: error body without ${key}: ${text.slice(0, 200)}`);
  for (const key of Object.keys(body)) assert.ok(ERROR_BODY_KEYS.has(key), `${what}: undocumented key ${key} in the error body`);
  assert.equal(body.code, status, `${what}: code repeats the status`);
  const entry = (ApiErrors as Record<string, { status: number }>)[String(body.error)];
  assert.ok(entry, `${what}: error ${String(body.error)} is not in the catalogue`);
  assert.equal(entry.status, status, `${what}: ${String(body.error)} has status ${entry.status} in the catalogue, answered ${status}`);
  assert.equal(typeof body.message, "string");
}

describe("generated API input over every route of /openapi.json", () => {
  let node: TestNode;
  let operations: OpenApiOperation[];
  const A = { custNr: "20001", login: "fuzz-a", password: "fuzz-a-password" };
  const B = { custNr: "20002", login: "fuzz-b", password: "fuzz-b-password" };
  const WRONG = { custNr: "20003", login: "fuzz-wrong", password: "fuzz-wrong-password" };
  // The configuration API's operations, as a login that manages customer A (an operator gives A a number).
  const MANAGER = { custNr: "20001", login: "fuzz-manager", password: "fuzz-manager-password" };
  const OPERATOR = { custNr: "20009", login: "fuzz-operator", password: "fuzz-operator-password" };
  let configOperations: OpenApiOperation[];
  let knownA: Known;
  let knownB: Known;

  const seedJob = async (c: typeof A): Promise<Known> => {
    const client = api(node.url, c);
    const sent = await client.post(`/${c.custNr}/fax`, {
      recipients: [{ number: "+4900000020" }],
      documents: [TEXT_DOC],
      statusReportOptions: { httpStatusPush: { targetUrl: "http://127.0.0.1:9/push" } },
    });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const jobId = sent.body.jobId as string;
    await waitForFinalReport(client, c.custNr, jobId);
    const images = await client.get(`/${c.custNr}/fax/reports/${jobId}/fax-images`);
    const notifications = await client.get(`/${c.custNr}/fax/reports/${jobId}/notifications`);
    return {
      custNr: c.custNr,
      jobId,
      imageId: String(images.body?.faxImages?.[0]?.imageId ?? images.body?.[0]?.imageId ?? "img"),
      notificationId: String(notifications.body?.notifications?.[0]?.notificationId ?? notifications.body?.[0]?.id ?? "ntf"),
      page: "1",
    };
  };

  before(async () => {
    node = await startTestNode({ "auth.maxFailures": 1000 });
    for (const c of [A, B, WRONG]) await createTestLogin(node, c);
    const doc = (await (await fetch(`${node.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, any>> };
    operations = operationsOf(doc, "/rest/v1/");
    configOperations = operationsOf(doc, "/config/v2/");
    await createTestLogin(node, { ...MANAGER, isManager: true });
    await createTestLogin(node, { ...OPERATOR, isAdmin: true });
    const given = await fetch(`${node.url}/config/v2/inbound/numbers/%2B4940555070?customer=${MANAGER.custNr}`, {
      method: "PUT",
      headers: { "content-type": "application/json", authorization: `Basic ${Buffer.from(`${OPERATOR.login}:${OPERATOR.password}`).toString("base64")}` },
      body: "{}",
    });
    assert.equal(given.status, 200, await given.text());
    knownA = await seedJob(A);
    knownB = await seedJob(B);
  });
  after(async () => {
    await node.stop();
  });

  it("finds the operations of the contract and its extensions in the document", () => {
    const ids = operations.map((o) => o.operationId);
    for (const id of ["sendJobRequest", "getStatusReport", "deleteStatusReport"]) assert.ok(ids.includes(id), `${id} in ${ids.join(", ")}`);
    assert.ok(operations.length >= 12, `${operations.length} operations`);
  });

  /** Generated requests to each operation, as `login`, with `known` ids in most paths; every answer documented and in the catalogue. */
  const fuzz = async (ops: OpenApiOperation[], login: { login: string; password: string }, known: Record<string, string>) => {
    for (const op of ops) {
      const pathNames = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
      const pathValues = fc.record(
        Object.fromEntries(
          pathNames.map((name) => [
            name,
            fc.oneof(
              { weight: 4, arbitrary: fc.constant(String(known[name] ?? "x")) },
              { weight: 1, arbitrary: fc.oneof(edgeStrings, fc.string({ maxLength: 30 })) },
            ),
          ]),
        ),
      );
      const queryParams = op.parameters.filter((p) => p.in === "query");
      const query = fc.record(Object.fromEntries(queryParams.map((p) => [p.name, fc.option(fromSchema(p.schema), { nil: undefined })])), { requiredKeys: [] });
      const body = op.body
        ? fc.oneof(
            { weight: 6, arbitrary: fromSchema(op.body).map((v) => JSON.stringify(v)) },
            { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
            { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
          )
        : fc.option(fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)), { nil: undefined });
      const request = fc.record({
        path: pathValues,
        raw: fc.boolean(),
        query,
        body,
        idempotencyKey: fc.option(fc.stringMatching(/^[!-~]{1,300}$/), { nil: undefined }),
        contentType: fc.constantFrom("application/json", "application/json", "application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded"),
        auth: fc.constantFrom("valid", "valid", "valid", "valid", "wrong", "none"),
      });
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const url = new URL(`${node.url}${fillPath(op, r.path as Record<string, string>, r.raw)}`);
          for (const [k, v] of Object.entries(r.query as Record<string, unknown>)) if (v !== undefined) url.searchParams.set(k, typeof v === "string" ? v : JSON.stringify(v));
          const headers: Record<string, string> = { "content-type": r.contentType };
          if (r.auth === "valid") headers.authorization = `Basic ${Buffer.from(`${login.login}:${login.password}`).toString("base64")}`;
          if (r.auth === "wrong") headers.authorization = `Basic ${Buffer.from(`${WRONG.login}:not-the-password`).toString("base64")}`;
          if (r.idempotencyKey !== undefined) headers["idempotency-key"] = r.idempotencyKey;
          const withBody = op.method !== "GET" && op.method !== "DELETE" && r.body !== undefined;
          const res = await fetch(url, { method: op.method, headers, body: withBody ? r.body : undefined });
          const text = await res.text();
          assertCatalogueAnswer(op, res.status, text, `${op.method} ${url.pathname}${url.search}`);
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      );
    }
  };

  it(`answers generated requests to every operation with a documented status and body (${RUNS} runs each, seed ${SEED})`, async () => {
    await fuzz(operations, A, knownA as unknown as Record<string, string>);
    const health = await fetch(`${node.url}/health`);
    assert.equal(health.status, 200, "the node is healthy after the generated requests");
  });

  it(`answers generated requests to every operation of the configuration API (/config/v2) the same way (${RUNS} runs each)`, async () => {
    const ids = configOperations.map((o) => o.operationId);
    for (const id of ["listInboundNumbers", "putInboundProfile", "listConfigAudit"]) assert.ok(ids.includes(id), `${id} in ${ids.join(", ")}`);
    await fuzz(configOperations, MANAGER, { number: "+4940555070", name: "fuzz" });
    const health = await fetch(`${node.url}/health`);
    assert.equal(health.status, 200, "the node is healthy after the generated requests");
  });

  it("keeps every operation's data to its customer (a tenancy matrix generated from the route table)", async () => {
    const asA = (path: string, method: string, body?: unknown) =>
      fetch(`${node.url}${path}`, {
        method,
        headers: { "content-type": "application/json", authorization: `Basic ${Buffer.from(`${A.login}:${A.password}`).toString("base64")}` },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const bodyFor = (op: OpenApiOperation) =>
      op.operationId === "sendJobRequest" || op.path.endsWith("/preview")
        ? { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC] }
        : op.body
          ? { action: "GET", jobIds: [knownB.jobId] }
          : undefined;
    const checked: string[] = [];
    for (const op of operations) {
      // 1. A's login on B's customer number, with B's ids: refused before anything is read.
      const onB = await asA(fillPath(op, knownB as unknown as Record<string, string>, false), op.method, bodyFor(op));
      const onBText = await onB.text();
      assert.equal(onB.status, 401, `${op.method} ${op.path} on B's customer number: ${onB.status} ${onBText.slice(0, 200)}`);
      assert.ok(!onBText.includes(knownB.jobId));
      // 2. A's own customer number with B's job (where the path names a job): as if it did not exist.
      const mixed = { ...knownA, jobId: knownB.jobId, imageId: knownB.imageId, notificationId: knownB.notificationId };
      const onOwn = await asA(fillPath(op, mixed as unknown as Record<string, string>, false), op.method, bodyFor(op));
      const onOwnText = await onOwn.text();
      assert.ok(onOwn.status < 500, `${op.method} ${op.path}: ${onOwn.status}`);
      assert.ok(!onOwnText.includes(knownB.jobId) || onOwn.status === 404 || /NOT_FOUND/.test(onOwnText), `${op.method} ${op.path} shows B's job to A: ${onOwnText.slice(0, 300)}`);
      if (op.path.includes("{jobId}")) assert.equal(onOwn.status, 404, `${op.method} ${op.path} with B's job id: ${onOwn.status} ${onOwnText.slice(0, 200)}`);
      checked.push(`${op.method} ${op.path}`);
    }
    // B's job is untouched by all of A's requests (A's DELETEs included).
    const b = await api(node.url, B).get(`/${B.custNr}/fax/reports/${knownB.jobId}`);
    assert.equal(b.status, 200, "B's report survived A's requests");
    assert.equal(checked.length, operations.length);
  });
});

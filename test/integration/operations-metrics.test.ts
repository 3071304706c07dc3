/**
 * GET /metrics, /health/live and /health/ready (issue 14, metrics and health): the exposition is
 * parsed with a Prometheus text-format parser, and the counters are checked to move with real
 * work: a job with a delivered and a failed recipient, rendered and sent over the test line, a
 * status push to a real local receiver, a refused request. Looped over both store dialects.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { DIALECTS, withDialect } from "../support/dialects.ts";
import { PushReceiver } from "../support/push-receiver.ts";
import { parsePrometheusText, type PromFamily } from "../support/prometheus-text.ts";
import { api, createTestLogin, eventually, startTestNode, TEXT_DOC, waitForFinalReport, type TestNode } from "../support/test-node.ts";

async function scrape(url: string): Promise<Map<string, PromFamily>> {
  const res = await fetch(`${url}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(await res.text());
}

/**
 * The sum of a counter's or gauge's samples whose labels include `where`; for a histogram, of
 * its _count samples (how many observations).
 */
function total(families: Map<string, PromFamily>, name: string, where: Record<string, string> = {}): number {
  const family = families.get(name);
  if (!family) return 0;
  const own = family.type === "histogram" ? `${name}_count` : name;
  return family.samples
    .filter((s) => s.name === own && Object.entries(where).every(([k, v]) => s.labels[k] === v))
    .reduce((n, s) => n + s.value, 0);
}

for (const dialect of DIALECTS) {
  describe(`${dialect}: GET /metrics and the health probes`, () => {
    const store = withDialect(dialect);
    let node: TestNode;
    const receiver = new PushReceiver();
    const creds = { custNr: "30001", login: "metrics", password: "metrics-password" };

    before(async () => {
      await receiver.start();
      node = await startTestNode({ ...store.overrides(), "push.allowTargets": "127.0.0.1", "node.id": `metrics-${dialect}` });
      await createTestLogin(node, creds);
    });
    after(async () => {
      await node.stop();
      await receiver.stop();
    });

    it("counts what the node does: jobs, recipients by status and category, renders, calls, pushes, HTTP, store queries", async () => {
      const beforeWork = await scrape(node.url);
      const client = api(node.url, creds);
      const sent = await client.post(`/${creds.custNr}/fax`, {
        recipients: [{ number: "+4900000020" }, { number: "+4900000009" }],
        documents: [TEXT_DOC],
        statusReportOptions: { httpStatusPush: { targetUrl: receiver.url("/push") } },
      });
      assert.equal(sent.status, 201);
      const refused = await client.post(`/${creds.custNr}/fax`, { recipients: [] });
      assert.equal(refused.status, 400);
      const report = await waitForFinalReport(client, creds.custNr, sent.body.jobId);
      assert.deepEqual(report.recipientStatus.map((r: any) => r.status), ["OK", "WRONG_NUMBER"]);
      await eventually(async () => (receiver.received("/push").length >= 1 ? true : undefined), 10_000, "the status push");

      const m = await eventually(async () => {
        const now = await scrape(node.url);
        return total(now, "faxline_notifications_total", { channel: "http", outcome: "delivered" }) > total(beforeWork, "faxline_notifications_total", { channel: "http", outcome: "delivered" }) ? now : undefined;
      }, 10_000, "the push to be counted");
      const moved = (name: string, where: Record<string, string> = {}) => total(m, name, where) - total(beforeWork, name, where);

      assert.equal(moved("faxline_jobs_accepted_total"), 1);
      assert.equal(moved("faxline_recipients_accepted_total"), 2);
      assert.equal(moved("faxline_recipients_finished_total", { status: "OK", category: "delivered" }), 1);
      assert.equal(moved("faxline_recipients_finished_total", { status: "WRONG_NUMBER" }), 1);
      assert.equal(moved("faxline_call_outcomes_total", { line: "test", result: "delivered" }), 1);
      assert.equal(moved("faxline_call_outcomes_total", { line: "test", result: "failed", reason: "invalid_number" }), 1);
      assert.equal(total(m, "faxline_calls_active", { line: "test" }), 0, "no call running any more");
      assert.equal(moved("faxline_render_duration_seconds", { result: "rendered" }), 1);
      assert.ok(moved("faxline_render_pages_total") >= 1);
      assert.equal(moved("faxline_http_request_duration_seconds", { method: "POST", route: "/rest/v1/:custNr/fax", status: "201" }), 1);
      assert.equal(moved("faxline_http_request_duration_seconds", { method: "POST", route: "/rest/v1/:custNr/fax", status: "400" }), 1);
      assert.ok(moved("faxline_store_query_duration_seconds", { dialect }) > 0, "store queries are timed, labelled with the dialect");
      assert.ok(total(m, "faxline_queue_depth", { kind: "job", state: "completed" }) >= 1);
      assert.ok(total(m, "faxline_queue_depth", { kind: "recipient", state: "succeeded" }) >= 1);
      assert.ok(m.has("nodejs_eventloop_lag_seconds"), "event-loop lag (prom-client default metrics)");
      assert.ok(m.has("process_resident_memory_bytes"));
      const sample = m.get("faxline_jobs_accepted_total")!.samples[0]!;
      assert.equal(sample.labels.datacenter, "DE1");
      assert.equal(sample.labels.node, `metrics-${dialect}`);
      // A job id never becomes a label (routes are patterns).
      assert.ok(![...m.values()].some((f) => f.samples.some((s) => Object.values(s.labels).some((v) => v.includes(sent.body.jobId)))));
    });

    it("serves every metric the example Grafana dashboard charts (examples/grafana-dashboard.json)", async () => {
      const dashboard = JSON.parse(readFileSync(new URL("../../examples/grafana-dashboard.json", import.meta.url), "utf8")) as { panels: Array<{ targets: Array<{ expr: string }> }> };
      const m = await scrape(node.url);
      const charted = new Set(dashboard.panels.flatMap((p) => p.targets.flatMap((t) => t.expr.match(/\b(?:faxline|nodejs|process)_[a-z0-9_]+/g) ?? [])));
      assert.ok(charted.size >= 8);
      for (const name of charted) assert.ok(m.has(name) || m.has(name.replace(/_bucket$/, "")), `${name} is charted but not served`);
    });

    it("answers the probes: live, and ready with its checks", async () => {
      const live = await fetch(`${node.url}/health/live`);
      assert.equal(live.status, 200);
      assert.equal(((await live.json()) as { status: string }).status, "live");
      const ready = await fetch(`${node.url}/health/ready`);
      assert.equal(ready.status, 200);
      const body = (await ready.json()) as { status: string; store: string; checks: Record<string, string> };
      assert.equal(body.status, "ready");
      assert.equal(body.store, dialect);
      assert.deepEqual(body.checks, { roles: "running", draining: "no", store: "reachable" });
    });
  });
}

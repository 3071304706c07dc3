/**
 * The database goes away under a running node (PostgreSQL stopped while a call runs) and comes
 * back. While it is away the API answers 503 with Retry-After (never a 201, never a 500) and
 * /ready says not ready, and so does the SIP line to a load balancer's OPTIONS probe (503: send
 * calls to another node); the call in flight ends and its outcome is recorded once the database
 * is back; the node carries on by itself, without a restart, and nothing is sent twice. A node
 * told to stop while its database is away exits without waiting out its shutdown grace.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { api, eventually, tempDir, TEXT_DOC, waitForFinalReport } from "../support/test-node.ts";
import { createAccountWithCli, freeUdpPort, startChildNode, stopAllChildNodes, withChildLogs, FAST_RETRIES_ENV, type ChildNode } from "../support/child-node.ts";
import { DIALECTS } from "../support/dialects.ts";
import { pgQuery, startPostgresCluster, type PostgresCluster } from "../support/postgres-cluster.ts";
import { sipOptions } from "../support/sip-options.ts";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

const ACCOUNT = { custNr: "99999TE", login: "outage", password: "outage-pass-1" };

describe("postgres: the database goes away and comes back", { skip: !DIALECTS.includes("postgres") && "FAXLINE_TEST_DIALECTS excludes postgres" }, () => {
  const dir = tempDir("faxline-outage-");
  let cluster: PostgresCluster;
  let node: ChildNode | undefined;
  let url: string;
  before(async () => {
    cluster = await startPostgresCluster({ name: "outage" });
    await cluster.query("create database faxline");
    url = cluster.url("faxline");
    await createAccountWithCli(dir.path, ACCOUNT, { env: { FAXLINE_STORE_URL: url } });
  });
  after(async () => {
    if (process.env.DEBUG_OUTAGE) (await import("node:fs")).writeFileSync("/tmp/outage-node.log", node?.stdout ?? "");
    await stopAllChildNodes();
    cluster.remove();
    dir.remove();
  });

  it("answers 503 with Retry-After while it is away, records the call that ended meanwhile, and recovers by itself", { timeout: 120_000 }, async () => {
    await withChildLogs(
      () => [node],
      async () => {
        // A call takes about 4 s (test line at a tenth of real time); heartbeats every 200 ms. The
        // node answers calls of an inbound trunk on a SIP port of its own.
        const trunks = join(dir.path, "trunks.yaml");
        writeFileSync(trunks, 'trunks:\n  - name: carrier\n    proxy: 127.0.0.1:9\n    callerNumber: "+4930555000"\n    routes: ["+1"]\n    inbound: true\n');
        const sipPort = await freeUdpPort();
        node = await startChildNode({
          name: "node",
          dataDir: dir.path,
          timeScale: "0.1",
          env: {
            ...FAST_RETRIES_ENV,
            FAXLINE_STORE_URL: url,
            FAXLINE_CLUSTER_HEARTBEAT_INTERVAL: "200ms",
            FAXLINE_STORE_CONNECT_TIMEOUT: "2s",
            FAXLINE_LOG_LEVEL: "info",
            FAXLINE_LINES_TRUNKS_FILE: trunks,
            FAXLINE_LINES_LOCAL_ADDRESS: "127.0.0.1",
            FAXLINE_LINES_SIP_PORT: String(sipPort),
            FAXLINE_LINES_MEDIA_PORTS: "47980-47999",
          },
        });
        assert.equal((await sipOptions("127.0.0.1", sipPort))?.status, 200, "a load balancer's probe finds the node up");
        const client = api(node.url, ACCOUNT);
        const sent = await client.post(`/${ACCOUNT.custNr}/fax`, { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC] });
        assert.equal(sent.status, 201);
        const jobId = sent.body.jobId as string;
        await eventually(
          async () => ((await pgQuery(url, "select 1 from attempts where job_id = $1 and result = 'in_progress'", [jobId])).length === 1 ? true : undefined),
          10_000,
          "the call to start",
        );

        cluster.stop("fast");
        const refused = await client.post(`/${ACCOUNT.custNr}/fax`, { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC] });
        assert.equal(refused.status, 503, JSON.stringify(refused.body));
        assert.equal(refused.body.error, "store_unavailable");
        assert.equal(refused.body.code, 503);
        assert.match(refused.body.message, /most likely not carried out.*same Idempotency-Key/);
        assert.equal(refused.headers.get("retry-after"), "5");
        const report = await client.get(`/${ACCOUNT.custNr}/fax/reports/${jobId}`);
        assert.equal(report.status, 503);
        const ready = await fetch(`${node.url}/ready`);
        assert.equal(ready.status, 503);
        assert.equal((await fetch(`${node.url}/health`)).status, 200, "the process itself is alive");
        // Its heartbeats fail: a SIP load balancer's probe is told to send calls elsewhere.
        const probed = await eventually(async () => {
          const answer = await sipOptions("127.0.0.1", sipPort);
          return answer?.status === 503 ? answer : undefined;
        }, 5_000, "OPTIONS to be answered 503 while the store is away");
        assert.equal(probed.reason, "Service Unavailable (the node's store does not answer)");

        // The call ends while the database is away (about 4 s after it started).
        await new Promise((r) => setTimeout(r, 5_000));
        assert.ok(node.running, "the node is still running");
        cluster.start();

        const final = await waitForFinalReport(client, ACCOUNT.custNr, jobId, 30_000);
        assert.equal(final.recipientStatus[0].status, "OK");
        assert.equal((await fetch(`${node.url}/ready`)).status, 200);
        await eventually(async () => ((await sipOptions("127.0.0.1", sipPort))?.status === 200 ? true : undefined), 5_000, "OPTIONS to be answered 200 again");
        const again = await client.post(`/${ACCOUNT.custNr}/fax`, { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC] });
        assert.equal(again.status, 201, "accepting jobs again without a restart");
        await waitForFinalReport(client, ACCOUNT.custNr, again.body.jobId, 30_000);

        const attempts = await pgQuery<{ result: string }>(url, "select result from attempts where job_id = $1", [jobId]);
        assert.deepEqual(
          attempts.map((a) => a.result),
          ["delivered"],
          "the call was recorded once, by the node that placed it, and not redialled",
        );
        const jobs = await pgQuery<{ n: number }>(url, "select count(*) as n from jobs");
        assert.equal(jobs[0]!.n, 2, "the refused request stored nothing");
        const lines = node.logLines();
        assert.ok(lines.some((l) => l.msg === "outcome recorded after the store came back"), "the outcome waited for the store");
        assert.ok(lines.some((l) => l.msg === "the store answers again"));
        assert.equal(lines.filter((l) => typeof l.level === "number" && l.level >= 60).length, 0, "nothing fatal");
      },
    );
  });

  it("a node stopped while the database is away exits without waiting out its grace", { timeout: 120_000 }, async () => {
    await node?.stop();
    await withChildLogs(
      () => [node],
      async () => {
        // Nothing runs; the grace is 60 s. Stopping, the notifier looks for what is due to push,
        // and must give up when the store does not answer.
        node = await startChildNode({
          name: "node",
          dataDir: dir.path,
          env: { FAXLINE_STORE_URL: url, FAXLINE_CLUSTER_HEARTBEAT_INTERVAL: "200ms", FAXLINE_STORE_CONNECT_TIMEOUT: "2s", FAXLINE_LOG_LEVEL: "info", FAXLINE_NODE_SHUTDOWN_GRACE: "60s" },
        });
        cluster.stop("fast");
        await eventually(async () => ((await fetch(`${node!.url}/ready`)).status === 503 ? true : undefined), 10_000, "the node to notice the store is away");
        const stoppedAt = Date.now();
        node.kill("SIGTERM");
        const exit = await node.waitForExit(45_000);
        assert.ok(Date.now() - stoppedAt < 30_000, `exited after ${Date.now() - stoppedAt} ms: with nothing running, a store that does not answer must not hold the node for its 60 s grace`);
        assert.equal(exit.signal, null);
        cluster.start();
      },
    );
  });
});

/**
 * The promise of an HA region: a job acknowledged with 201 is sent and reported exactly once,
 * even if its data center and the database primary die at the same moment.
 *
 * A region on this machine (support/region.ts): a PostgreSQL primary with a synchronous
 * standby, two DE1 nodes and two DE2 nodes on the multi-host URL, a push receiver. Under a
 * steady load of test-line jobs sent to all four nodes, both DE1 nodes and the primary are
 * SIGKILLed at the same moment; the standby is promoted; DE2 follows it and adopts DE1's jobs.
 * Then every job that got a 201 is final exactly once and readable at DE2, with one final push
 * per job, and DE1 restarted reports none of them.
 *
 * Also: a DE1 node cut off from the database (its connection silently dropped by a proxy)
 * ends its call before its lease runs out, DE2 adopts and redials, and the DE1 node, back on
 * the network, never reports or changes what DE2 completed.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { api, eventually, tempDir, TEXT_DOC, waitForFinalReport } from "../support/test-node.ts";
import { createAccountWithCli, startChildNode, stopAllChildNodes, withChildLogs, FAST_RETRIES_ENV, type ChildNode } from "../support/child-node.ts";
import { DIALECTS } from "../support/dialects.ts";
import { pgQuery, startPostgresCluster, type PostgresCluster } from "../support/postgres-cluster.ts";
import { LoadGenerator, REGION_ACCOUNT, startRegionDatabase, type Region } from "../support/region.ts";
import { TcpProxy } from "../support/tcp-proxy.ts";

const skip = !DIALECTS.includes("postgres") && "FAXLINE_TEST_DIALECTS excludes postgres";

describe("region DE: a data center and the database primary die at the same moment", { skip }, () => {
  let region: Region;
  const logs = () => [...(region?.nodes.values() ?? [])];
  before(async () => {
    region = await startRegionDatabase();
  });
  after(async () => {
    await region?.stop();
    await stopAllChildNodes();
  });

  it("sends and reports every acknowledged job exactly once, from DE2, with one final push each", { timeout: 180_000 }, async () => {
    await withChildLogs(logs, async () => {
      const all = await region.startFourNodes();
      // The adoption's log line: kept as it streams by (a busy node's output outruns the buffer).
      const adoptionLogged = /data center DE1 is dead .*adopted by DE2 from DE1 at/;
      for (const n of all) region.node(n.name).keepLines(adoptionLogged);
      const load = new LoadGenerator(region, () => all, { every: 40, recipients: 2 });
      load.start();
      // Let DE1 take work and have calls in flight, then kill it and the primary at once.
      await eventually(
        async () => {
          const rows = await pgQuery<{ n: number }>(region.primary.url("faxline"), "select count(*) as n from attempts a join jobs j on j.id = a.job_id where a.result = 'in_progress' and j.datacenter = 'DE1'");
          return load.accepted.filter((j) => j.dc === "DE1").length >= 20 && rows[0]!.n >= 1 ? true : undefined;
        },
        30_000,
        "DE1 to have accepted jobs and calls in flight",
      );
      const killedAt = Date.now();
      region.node("de1-a").kill("SIGKILL");
      region.node("de1-b").kill("SIGKILL");
      region.primary.kill();
      const acceptedAtKill = load.accepted.length;
      await new Promise((r) => setTimeout(r, 1_000));
      region.standby.promote();
      const promotedAt = Date.now();
      // DE2 serves again: a 201 from it after the promotion.
      await eventually(async () => (load.accepted.some((j) => j.dc === "DE2" && j.at > promotedAt) ? true : undefined), 20_000, "DE2 to accept jobs again after the promotion");
      const backAt = Date.now();
      await new Promise((r) => setTimeout(r, 1_500));
      await load.stop();
      const standbyUrl = region.standby.url("faxline");
      const adoption = await eventually(
        async () => (await pgQuery<{ adopted_at: number; mode: string; from_datacenter: string; to_datacenter: string; jobs: number }>(standbyUrl, "select * from datacenter_adoptions"))[0],
        30_000,
        "DE2 to adopt DE1's jobs",
      );
      assert.equal(adoption.mode, "failover");
      assert.equal(adoption.from_datacenter, "DE1");
      assert.equal(adoption.to_datacenter, "DE2");
      console.log(
        `# kill → DE2 accepting again ${backAt - killedAt} ms (promotion after 1000 ms); kill → adoption ${Number(adoption.adopted_at) - killedAt} ms; ` +
          `${load.accepted.length} jobs acknowledged (${acceptedAtKill} before the kill); refused: ${JSON.stringify(Object.fromEntries(load.refused))}`,
      );

      // Every acknowledged job: final at DE2, each recipient delivered by exactly one attempt.
      const de2 = region.client("de2-a");
      for (const job of load.accepted) {
        const report = await waitForFinalReport(de2, REGION_ACCOUNT.custNr, job.jobId, 60_000);
        assert.deepEqual(report.recipientStatus.map((r: any) => r.status), ["OK", "OK"], `job ${job.jobId} (accepted by ${job.node})`);
      }
      const ids = load.accepted.map((j) => j.jobId);
      const attempts = await pgQuery<{ job_id: string; recipient_id: string; result: string; node: string }>(standbyUrl, "select job_id, recipient_id, result, node from attempts where job_id = any($1)", [ids]);
      const delivered = new Map<string, number>();
      for (const a of attempts) if (a.result === "delivered") delivered.set(a.recipient_id, (delivered.get(a.recipient_id) ?? 0) + 1);
      assert.equal(delivered.size, ids.length * 2, "every recipient delivered");
      assert.deepEqual([...new Set(delivered.values())], [1], "no recipient delivered twice");
      assert.equal(attempts.filter((a) => a.result === "in_progress").length, 0);
      const jobs = await pgQuery<{ id: string; datacenter: string; accepted_datacenter: string; state: string }>(standbyUrl, "select id, datacenter, accepted_datacenter, state from jobs where id = any($1)", [ids]);
      assert.equal(jobs.length, ids.length, "no acknowledged job was lost with the primary");
      assert.deepEqual([...new Set(jobs.map((j) => `${j.datacenter}/${j.state}`))], ["DE2/completed"]);

      // One final push per job (the receiver may see a push twice: at least once, same webhook-id).
      // A job's push goes out just after it completes: wait until every job's has arrived.
      const finalPushes = () => {
        const finals = new Map<string, Set<string>>();
        for (const r of region.receiver.received("/push")) {
          if (r.headers["x-faxline-event"] !== "job.completed") continue;
          const jobId = String(r.headers["x-faxline-job-id"]);
          finals.set(jobId, (finals.get(jobId) ?? new Set()).add(String(r.headers["webhook-id"])));
        }
        return finals;
      };
      const finals = await eventually(async () => {
        const f = finalPushes();
        return ids.every((id) => f.has(id)) ? f : undefined;
      }, 30_000, "every job's final push");
      for (const id of ids) assert.equal(finals.get(id)?.size, 1, `job ${id}: exactly one final push (by webhook-id)`);

      // The extended report tells where a DE1 job came from.
      const fromDe1 = load.accepted.find((j) => j.dc === "DE1")!;
      const extended = await de2.get(`/${REGION_ACCOUNT.custNr}/fax/reports/${fromDe1.jobId}?view=extended`);
      assert.equal(extended.body.faxline.datacenter, "DE2");
      assert.equal(extended.body.faxline.acceptedDatacenter, "DE1");
      assert.deepEqual(extended.body.faxline.adoptions.map((a: any) => `${a.from}>${a.to}`), ["DE1>DE2"]);
      const plain = await de2.get(`/${REGION_ACCOUNT.custNr}/fax/reports/${fromDe1.jobId}`);
      assert.equal(plain.body.faxline, undefined, "the contract's view has no extension");
      const adoptionLines = ["de2-a", "de2-b"].flatMap((n) => region.node(n).keptLines(adoptionLogged));
      assert.equal(adoptionLines.length, 1, "the adoption is logged once, by the DE2 node that did it");

      // DE1 comes back: it reports none of the adopted jobs, and owns only what it accepts now.
      await region.startNode("de1-a", "DE1");
      const de1 = region.client("de1-a");
      for (const job of load.accepted.filter((j) => j.dc === "DE1").slice(0, 20)) {
        assert.equal((await de1.get(`/${REGION_ACCOUNT.custNr}/fax/reports/${job.jobId}`)).status, 404, "DE1 no longer reports an adopted job");
      }
      assert.deepEqual((await de1.get(`/${REGION_ACCOUNT.custNr}/fax/reports`)).body.reports, []);
      const fresh = await de1.post(`/${REGION_ACCOUNT.custNr}/fax`, { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC] });
      assert.equal(fresh.status, 201);
      const final = await waitForFinalReport(de1, REGION_ACCOUNT.custNr, fresh.body.jobId, 30_000);
      assert.equal(final.recipientStatus[0].status, "OK");
      // The region view shows both data centers' jobs from either.
      const regionView = await de1.get(`/${REGION_ACCOUNT.custNr}/fax/reports/${fromDe1.jobId}?scope=region`);
      assert.equal(regionView.status, 200);
    });
  });
});

describe("a DE1 node cut off from the database", { skip }, () => {
  let cluster: PostgresCluster;
  let proxy: TcpProxy;
  const dirs = [tempDir("faxline-cut-de1-"), tempDir("faxline-cut-de2-")];
  let de1: ChildNode | undefined;
  let de2: ChildNode | undefined;
  const ACCOUNT = { custNr: "99999TE", login: "cutoff", password: "cutoff-pass-1" };
  before(async () => {
    cluster = await startPostgresCluster({ name: "cutoff" });
    await cluster.query("create database faxline");
    proxy = new TcpProxy({ host: "127.0.0.1", port: cluster.port });
    await proxy.start();
    await createAccountWithCli(dirs[0]!.path, ACCOUNT, { env: { FAXLINE_STORE_URL: cluster.url("faxline") } });
  });
  after(async () => {
    await stopAllChildNodes();
    await proxy.stop();
    cluster.remove();
    for (const d of dirs) d.remove();
  });

  it("ends its call before its lease runs out, and never reports or changes what DE2 completed", { timeout: 120_000 }, async () => {
    await withChildLogs(
      () => [de1, de2],
      async () => {
        const common = {
          ...FAST_RETRIES_ENV,
          FAXLINE_CLUSTER_HEARTBEAT_INTERVAL: "200ms",
          FAXLINE_CLUSTER_FAILOVER_AFTER: "3s",
          FAXLINE_CLUSTER_DUTY_LEASE: "2s",
          FAXLINE_SCHEDULER_SEND_LEASE: "4s",
          FAXLINE_STORE_STATEMENT_TIMEOUT: "1s",
          FAXLINE_STORE_CONNECT_TIMEOUT: "1s",
          FAXLINE_LOG_LEVEL: "info",
        };
        // DE1's calls last about 10 s; DE2's a fraction of a second.
        de1 = await startChildNode({ name: "de1", dataDir: dirs[0]!.path, datacenter: "DE1", timeScale: "0.25", env: { ...common, FAXLINE_STORE_URL: proxy.url("faxline"), FAXLINE_NODE_ID: "de1" } });
        de2 = await startChildNode({ name: "de2", dataDir: dirs[1]!.path, datacenter: "DE2", timeScale: "0.01", env: { ...common, FAXLINE_STORE_URL: cluster.url("faxline"), FAXLINE_NODE_ID: "de2" } });
        const url = cluster.url("faxline");
        const sent = await api(de1.url, ACCOUNT).post(`/${ACCOUNT.custNr}/fax`, { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC] });
        assert.equal(sent.status, 201);
        const jobId = sent.body.jobId as string;
        await eventually(async () => ((await pgQuery(url, "select 1 from attempts where job_id = $1 and result = 'in_progress'", [jobId])).length === 1 ? true : undefined), 15_000, "DE1's call to start");

        proxy.blackhole();
        const cutAt = Date.now();
        // DE1 hangs up before its lease would run out; DE2 adopts and redials after the lease.
        const hungUp = await eventually(
          async () => de1!.logLines().find((l) => typeof l.msg === "string" && l.msg.includes("ending the call before its lease runs out")),
          15_000,
          "DE1 to end its call",
        );
        const report = await waitForFinalReport(api(de2.url, ACCOUNT), ACCOUNT.custNr, jobId, 30_000);
        assert.equal(report.recipientStatus[0].status, "OK");
        const attempts = await pgQuery<{ attempt_no: number; node: string; result: string; started_at: number; reason_code: string | null }>(url, "select attempt_no, node, result, started_at, reason_code from attempts where job_id = $1 order by attempt_no", [jobId]);
        assert.deepEqual(attempts.map((a) => [a.node.split(":")[0], a.result]), [["de1", "abandoned"], ["de2", "delivered"]]);
        assert.equal(attempts[0]!.reason_code, "sender_lost");
        const hungUpAt = Date.parse(String(hungUp.time));
        assert.ok(hungUpAt < Number(attempts[1]!.started_at), `DE1 hung up (${hungUpAt - cutAt} ms after the cut) before DE2 redialled (${Number(attempts[1]!.started_at) - cutAt} ms)`);

        // DE1 is back on the network: it reports nothing of the adopted job and changes nothing.
        proxy.restore();
        await eventually(async () => ((await fetch(`${de1!.url}/ready`)).status === 200 ? true : undefined), 20_000, "DE1 to reach the database again");
        await new Promise((r) => setTimeout(r, 1_000));
        assert.equal((await api(de1.url, ACCOUNT).get(`/${ACCOUNT.custNr}/fax/reports/${jobId}`)).status, 404);
        const after = await pgQuery<{ result: string }>(url, "select result from attempts where job_id = $1 order by attempt_no", [jobId]);
        assert.deepEqual(after.map((a) => a.result), ["abandoned", "delivered"]);
        assert.equal(de1.logLines().filter((l) => l.msg === "attempt ended").length, 0, "DE1 recorded no outcome for the call it ended");
      },
    );
  });
});

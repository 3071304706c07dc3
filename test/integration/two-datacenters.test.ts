/**
 * Acceptance test: two data centers of one region, as two real `faxline serve` processes.
 *
 * DE1 and DE2 run with their own data directories and the same test account, created with the
 * `faxline accounts create` command. On SQLite each data center has its own store (the account
 * is created in both); on PostgreSQL both share one database, as the data centers of a region
 * do, and the account is created once. A client sends some jobs through
 * DE1 and some through DE2, as an HA front would spread them, and then reads and deletes the
 * reports the way the Retarus SDKs do (reference §7): the Go SDK asks both data centers in
 * parallel and merges, the Java, Rust and Node SDKs ask DE2 then DE1 and stop at the first
 * 200. Each job must be found exactly once: at the data center that accepted it, never at the
 * other, never twice in a merged list.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { api, tempDir, TEXT_DOC, waitForFinalReport, type ApiResponse } from "../support/test-node.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";
import {
  createAccountWithCli,
  freePort,
  runFaxlineCli,
  startChildNode,
  stopAllChildNodes,
  withChildLogs,
  FAST_RETRIES_ENV,
  type ChildNode,
} from "../support/child-node.ts";

const ACCOUNT = { custNr: "99999TE", login: "ha-tester", password: "secret-pass-1" };
type Client = ReturnType<typeof api>;
type Dc = "DE1" | "DE2";

/** Which data center the HA front hands each of the 10 jobs to: 6 to DE1, 4 to DE2. */
const FRONT: readonly Dc[] = ["DE1", "DE1", "DE2", "DE1", "DE2", "DE1", "DE1", "DE2", "DE1", "DE2"];

for (const dialect of DIALECTS) describe(`${dialect}: two data centers DE1 and DE2: each job is reported and deleted only where it was accepted`, () => {
  const store = withDialect(dialect);
  const dirs = { DE1: tempDir("faxline-de1-"), DE2: tempDir("faxline-de2-") };
  const nodes: Partial<Record<Dc, ChildNode>> = {};
  const clients = {} as Record<Dc, Client>;
  /** jobId → the data center that accepted it. */
  const owner = new Map<string, Dc>();
  const jobsOf = (dc: Dc) => [...owner].filter(([, d]) => d === dc).map(([id]) => id);
  const other = (dc: Dc): Dc => (dc === "DE1" ? "DE2" : "DE1");
  const logs = () => [nodes.DE1, nodes.DE2];

  /** Go SDK style: the same request to both data centers at once. */
  const fanOut = async <T = any>(request: (client: Client) => Promise<ApiResponse<T>>): Promise<Record<Dc, ApiResponse<T>>> => {
    const [de1, de2] = await Promise.all([request(clients.DE1), request(clients.DE2)]);
    return { DE1: de1, DE2: de2 };
  };

  before(async () => {
    const env = store.env();
    if (dialect === "sqlite") await Promise.all((["DE1", "DE2"] as const).map((dc) => createAccountWithCli(dirs[dc].path, ACCOUNT)));
    else await createAccountWithCli(dirs.DE1.path, ACCOUNT, { env });
    const [de1, de2] = await Promise.all(
      (["DE1", "DE2"] as const).map((dc) =>
        startChildNode({ name: dc, dataDir: dirs[dc].path, region: "DE", datacenter: dc, env: { ...FAST_RETRIES_ENV, ...env } }),
      ),
    );
    nodes.DE1 = de1;
    nodes.DE2 = de2;
    clients.DE1 = api(de1!.url, ACCOUNT);
    clients.DE2 = api(de2!.url, ACCOUNT);
  });

  after(async () => {
    await stopAllChildNodes();
    dirs.DE1.remove();
    dirs.DE2.remove();
  });

  it("runs two independent nodes that name their own data center", async () => {
    for (const dc of ["DE1", "DE2"] as const) {
      const res = await fetch(`${nodes[dc]!.url}/health`);
      assert.deepEqual(await res.json(), { status: "ok", region: "DE", datacenter: dc });
    }
    assert.notEqual(nodes.DE1!.dataDir, nodes.DE2!.dataDir);
  });

  it("accepts jobs on both; a job is visible only at its own data center, even before it ends", async () => {
    await withChildLogs(logs, async () => {
      for (const [i, dc] of FRONT.entries()) {
        const sent = await clients[dc].post(`/${ACCOUNT.custNr}/fax`, {
          recipients: [{ number: `+49 89 1234 50${String(i).padStart(2, "0")}` }],
          documents: [TEXT_DOC],
          reference: { customerDefinedId: `job-${i}-${dc}` },
        });
        assert.equal(sent.status, 201, `job ${i} via ${dc}: ${JSON.stringify(sent.body)}`);
        const jobId: string = sent.body.jobId;
        assert.ok(!owner.has(jobId), `job id ${jobId} issued twice`);
        owner.set(jobId, dc);
        // Straight after acceptance (most likely still PENDING): the other data center knows nothing.
        const elsewhere = await clients[other(dc)].get(`/${ACCOUNT.custNr}/fax/reports/${jobId}`);
        assert.equal(elsewhere.status, 404, `job ${jobId} of ${dc} found at ${other(dc)}`);
      }
      assert.equal(jobsOf("DE1").length, 6);
      assert.equal(jobsOf("DE2").length, 4);
      for (const [jobId, dc] of owner) {
        const report = await waitForFinalReport(clients[dc], ACCOUNT.custNr, jobId);
        assert.equal(report.recipientStatus[0].status, "OK");
        assert.match(report.reference.customerDefinedId, new RegExp(`-${dc}$`));
      }
    });
  });

  it("Go-style single GET on both: exactly one 200, from the accepting data center, and one 404", async () => {
    for (const [jobId, dc] of owner) {
      const res = await fanOut((c) => c.get(`/${ACCOUNT.custNr}/fax/reports/${jobId}`));
      assert.equal(res[dc].status, 200, `${jobId} at its own ${dc}`);
      assert.equal(res[dc].body.jobId, jobId);
      assert.equal(res[other(dc)].status, 404, `${jobId} at ${other(dc)}`);
    }
  });

  it("Go-style GET list on both, concatenated: every job exactly once", async () => {
    const res = await fanOut((c) => c.get(`/${ACCOUNT.custNr}/fax/reports`));
    assert.equal(res.DE1.status, 200);
    assert.equal(res.DE2.status, 200);
    const merged: string[] = [...res.DE1.body.reports, ...res.DE2.body.reports].map((r: any) => r.jobId);
    assert.equal(merged.length, owner.size, `merged list: ${merged.join(",")}`);
    assert.deepEqual([...merged].sort(), [...owner.keys()].sort());
    assert.deepEqual(res.DE1.body.reports.map((r: any) => r.jobId).sort(), jobsOf("DE1").sort());
    assert.deepEqual(res.DE2.body.reports.map((r: any) => r.jobId).sort(), jobsOf("DE2").sort());
  });

  it("Go-style bulk GET of all ids on both: each id appears exactly once across both answers", async () => {
    const ids = [...owner.keys()];
    const res = await fanOut((c) => c.post(`/${ACCOUNT.custNr}/fax/reports`, { action: "get", jobIds: ids }));
    const seen = new Map<string, Dc[]>();
    for (const dc of ["DE1", "DE2"] as const) {
      // The Go SDK decodes 200 and 404 bodies alike; Faxline answers 200 with the ids it knows.
      assert.equal(res[dc].status, 200);
      for (const report of res[dc].body.reports) {
        seen.set(report.jobId, [...(seen.get(report.jobId) ?? []), dc]);
        assert.equal(report.recipientStatus[0].status, "OK");
      }
    }
    for (const [jobId, dc] of owner) assert.deepEqual(seen.get(jobId), [dc], `${jobId} was reported by ${seen.get(jobId)?.join("+") ?? "nobody"}`);
    assert.equal(seen.size, owner.size);
  });

  it("Java/Rust/Node-style sequential single GET over [DE2, DE1]: 404 then 200 for a DE1 job, 200 at once for a DE2 job", async () => {
    for (const [jobId, dc] of owner) {
      const trail: number[] = [];
      let found: any;
      for (const at of ["DE2", "DE1"] as const) {
        const res = await clients[at].get(`/${ACCOUNT.custNr}/fax/reports/${jobId}`);
        trail.push(res.status);
        if (res.status === 200) {
          found = res.body;
          break;
        }
      }
      assert.deepEqual(trail, dc === "DE1" ? [404, 200] : [200], `${jobId} of ${dc}`);
      assert.equal(found?.jobId, jobId);
    }
  });

  it("deletes each report once, at its own data center, whichever way the client deletes", async () => {
    const a = jobsOf("DE1");
    const b = jobsOf("DE2");
    const path = `/${ACCOUNT.custNr}/fax/reports`;

    // Bulk DELETE on both (Go DeleteBulkReports): per id one deleted:true, the other NOT_FOUND.
    const bulkIds = [a[0]!, b[0]!, a[1]!];
    const bulk = await fanOut((c) => c.post(path, { action: "DELETE", jobIds: bulkIds }));
    for (const dc of ["DE1", "DE2"] as const) {
      assert.equal(bulk[dc].status, 200);
      assert.deepEqual(bulk[dc].body.reports.map((r: any) => r.jobId), bulkIds, `${dc} answers one entry per id, in order`);
    }
    for (const [i, jobId] of bulkIds.entries()) {
      const dc = owner.get(jobId)!;
      assert.deepEqual(bulk[dc].body.reports[i], { jobId, deleted: true });
      assert.deepEqual(bulk[other(dc)].body.reports[i], { jobId, deleted: false, reason: "NOT_FOUND" });
    }
    const again = await fanOut((c) => c.post(path, { action: "DELETE", jobIds: bulkIds }));
    for (const dc of ["DE1", "DE2"] as const) {
      assert.ok(again[dc].body.reports.every((r: any) => r.deleted === false && r.reason === "NOT_FOUND"), `${dc} deleted again: ${JSON.stringify(again[dc].body)}`);
    }

    // Single DELETE on both at once (Go DeleteReport): the owner answers 200, the other 404.
    for (const jobId of [a[2]!, b[1]!]) {
      const dc = owner.get(jobId)!;
      const res = await fanOut((c) => c.delete(`${path}/${jobId}`));
      assert.equal(res[dc].status, 200);
      assert.deepEqual(res[dc].body, { jobId, deleted: true });
      assert.equal(res[other(dc)].status, 404);
    }

    // Single DELETE DE2 then DE1 (Java/Rust/Node): 404, then 200 at the owner; then gone.
    const seq = a[3]!;
    const first = await clients.DE2.delete(`${path}/${seq}`);
    assert.equal(first.status, 404);
    assert.equal(first.body.reason, "NOT_FOUND");
    const second = await clients.DE1.delete(`${path}/${seq}`);
    assert.equal(second.status, 200);
    assert.deepEqual(second.body, { jobId: seq, deleted: true });
    assert.equal((await clients.DE1.delete(`${path}/${seq}`)).status, 404);

    // DELETE oldest on both (Java deleteReports, Go DeleteReports): each deletes only its own rest.
    const oldest = await fanOut((c) => c.delete(path));
    const remaining = { DE1: [a[4]!, a[5]!], DE2: [b[2]!, b[3]!] };
    for (const dc of ["DE1", "DE2"] as const) {
      assert.equal(oldest[dc].status, 200);
      assert.ok(oldest[dc].body.reports.every((r: any) => r.deleted === true), JSON.stringify(oldest[dc].body));
      assert.deepEqual(oldest[dc].body.reports.map((r: any) => r.jobId).sort(), [...remaining[dc]].sort(), `${dc} deleted its own remaining reports`);
    }

    // Nothing is left anywhere.
    const lists = await fanOut((c) => c.get(path));
    assert.deepEqual(lists.DE1.body, { reports: [] });
    assert.deepEqual(lists.DE2.body, { reports: [] });
    const bulkGet = await fanOut((c) => c.post(path, { action: "GET", jobIds: [...owner.keys()] }));
    assert.deepEqual(bulkGet.DE1.body.reports, []);
    assert.deepEqual(bulkGet.DE2.body.reports, []);
    for (const jobId of owner.keys()) {
      const res = await fanOut((c) => c.get(`${path}/${jobId}`));
      assert.deepEqual([res.DE1.status, res.DE2.status], [404, 404], jobId);
    }
    const emptyOldest = await fanOut((c) => c.delete(path));
    assert.deepEqual(emptyOldest.DE1.body, { reports: [] });
    assert.deepEqual(emptyOldest.DE2.body, { reports: [] });
  });

  it("both nodes are still healthy after the run (no crash, no error logged)", async () => {
    for (const dc of ["DE1", "DE2"] as const) {
      const node = nodes[dc]!;
      assert.ok(node.running, node.describe());
      const errors = node.logLines().filter((l) => typeof l.level === "number" && l.level >= 50);
      assert.deepEqual(errors, [], node.describe());
    }
  });

  it("a node refuses to start with a data center outside its region, naming both", async () => {
    const cases = [
      { region: "US", datacenter: "DE1" },
      { region: "DE", datacenter: "US2" },
    ];
    const dir = tempDir("faxline-mismatch-");
    try {
      for (const { region, datacenter } of cases) {
        const result = await runFaxlineCli(
          ["serve"],
          {
            FAXLINE_DATA_DIR: dir.path,
            FAXLINE_HOST: "127.0.0.1",
            FAXLINE_PORT: String(await freePort()),
            FAXLINE_REGION: region,
            FAXLINE_DATACENTER: datacenter,
            FAXLINE_LOG_LEVEL: "warn",
          },
          20_000,
        );
        // A node that started anyway would run until the time limit and die by SIGKILL.
        assert.equal(result.signal, null, `FAXLINE_REGION=${region} FAXLINE_DATACENTER=${datacenter} started a node`);
        assert.notEqual(result.code, 0);
        assert.match(result.stderr, new RegExp(`\\b${datacenter}\\b`));
        assert.match(result.stderr, new RegExp(`\\b${region}\\b`));
        assert.match(result.stderr, /region/i);
      }
    } finally {
      dir.remove();
    }
  });
});

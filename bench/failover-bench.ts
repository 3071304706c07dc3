/**
 * `npm run bench:failover` — how long a region takes to recover when a data center and the
 * database primary die at the same moment (test/support/region.ts builds the region: a
 * PostgreSQL primary with a synchronous standby, two DE1 and two DE2 nodes, a push receiver).
 *
 * Under a steady load of test-line jobs to all four nodes, both DE1 nodes and the primary are
 * SIGKILLed together; after `--promote-after` the standby is promoted (as an operator's tool
 * would). The bench prints the time from the kill to:
 *  - the standby's promotion being followed: the first 201 from a DE2 node after it;
 *  - the adoption of DE1's jobs by DE2 (datacenter_adoptions.adopted_at);
 *  - the first call of an adopted recipient on a DE2 node;
 *  - every acknowledged job being final;
 * and how many jobs and calls were in flight at the kill.
 *
 * Timings are Faxline's defaults (heartbeat 5 s, failoverAfter 2 min, send lease 2 min, duty
 * lease 30 s) unless `--fast` (the test's: 200 ms, 3 s, 3 s, 2 s). Test-line calls run at
 * `--time-scale` (0.05: a one-page call takes about 2 s).
 *
 * Options: --fast --promote-after MS (2000) --time-scale X (0.05) --load-ms MS (6000)
 */
import { cpus, platform, release, totalmem } from "node:os";
import { parseArgs } from "node:util";
import { eventually, waitForFinalReport } from "../test/support/test-node.ts";
import { pgQuery } from "../test/support/postgres-cluster.ts";
import { FAST_REGION, LoadGenerator, REGION_ACCOUNT, startRegionDatabase } from "../test/support/region.ts";

const { values: opts } = parseArgs({
  options: {
    fast: { type: "boolean", default: false },
    "promote-after": { type: "string", default: "2000" },
    "time-scale": { type: "string", default: "0.05" },
    "load-ms": { type: "string", default: "6000" },
  },
});

const DEFAULTS = { heartbeat: "5s", failoverAfter: "2m", sendLease: "2m", dutyLease: "30s" };
const timings = { ...(opts.fast ? FAST_REGION : DEFAULTS), timeScale: opts["time-scale"] };
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function main(): Promise<void> {
  const cpu = cpus();
  console.log("Faxline bench:failover");
  console.log(`date      ${new Date().toISOString()}`);
  console.log(`machine   ${cpu[0]?.model.trim() ?? "unknown CPU"}, ${cpu.length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${platform()} ${release()}`);
  console.log(`timings   heartbeat ${timings.heartbeat}, cluster.failoverAfter ${timings.failoverAfter}, send lease ${timings.sendLease}, duty lease ${timings.dutyLease}; test line at ${timings.timeScale}× real time; promotion ${opts["promote-after"]} ms after the kill`);
  const region = await startRegionDatabase(timings);
  try {
    const all = await region.startFourNodes();
    const load = new LoadGenerator(region, () => all, { every: 50, recipients: 2 });
    load.start();
    await new Promise((r) => setTimeout(r, Number(opts["load-ms"])));
    const primaryUrl = region.primary.url("faxline");
    const inFlight = await pgQuery<{ jobs: number; calls: number }>(
      primaryUrl,
      "select (select count(*) from jobs where datacenter = 'DE1' and state <> 'completed') as jobs, (select count(*) from recipients where datacenter = 'DE1' and state = 'sending') as calls",
    );
    const killedAt = Date.now();
    region.node("de1-a").kill("SIGKILL");
    region.node("de1-b").kill("SIGKILL");
    region.primary.kill();
    const acceptedBefore = load.accepted.length;
    await new Promise((r) => setTimeout(r, Number(opts["promote-after"])));
    region.standby.promote();
    const promotedAt = Date.now();
    const back = await eventually(async () => load.accepted.find((j) => j.dc === "DE2" && j.at > promotedAt), 120_000, "DE2 to accept jobs again");
    await new Promise((r) => setTimeout(r, 2_000));
    await load.stop();
    const url = region.standby.url("faxline");
    const adoption = await eventually(async () => (await pgQuery<{ adopted_at: number; jobs: number; open_jobs: number }>(url, "select * from datacenter_adoptions"))[0], 600_000, "the adoption");
    const firstAdopted = await eventually(
      async () => {
        const rows = await pgQuery<{ first: number | null }>(
          url,
          "select min(a.started_at) as first from attempts a join jobs j on j.id = a.job_id where j.accepted_datacenter = 'DE1' and a.node like 'de2-%' and a.started_at >= $1",
          [Number(adoption.adopted_at)],
        );
        return rows[0]?.first ?? undefined;
      },
      600_000,
      "the first call of an adopted recipient",
    );
    const client = region.client("de2-a");
    for (const job of load.accepted) await waitForFinalReport(client, REGION_ACCOUNT.custNr, job.jobId, 600_000);
    const allFinal = Date.now();
    const delivered = await pgQuery<{ n: number; recipients: number }>(
      url,
      "select count(*) as n, count(distinct recipient_id) as recipients from attempts where result = 'delivered' and job_id = any($1)",
      [load.accepted.map((j) => j.jobId)],
    );
    console.log("");
    console.log(`in flight at the kill   ${inFlight[0]!.jobs} unfinished DE1 jobs, ${inFlight[0]!.calls} DE1 calls running; ${acceptedBefore} jobs acknowledged before it, ${load.accepted.length} in all`);
    console.log(`kill → promotion        ${s(promotedAt - killedAt)} (the operator's tool; here the bench)`);
    console.log(`kill → 201s again       ${s(back.at - killedAt)} (${s(back.at - promotedAt)} after the promotion)`);
    console.log(`kill → adoption         ${s(Number(adoption.adopted_at) - killedAt)} (${adoption.jobs} jobs, ${adoption.open_jobs} unfinished)`);
    console.log(`kill → first adopted call ${s(Number(firstAdopted) - killedAt)}`);
    console.log(`kill → all final        ${s(allFinal - killedAt)}`);
    console.log(`delivered               ${delivered[0]!.n} calls for ${delivered[0]!.recipients} recipients of ${load.accepted.length} jobs (2 each): ${delivered[0]!.n === delivered[0]!.recipients ? "none twice" : "SOME TWICE"}`);
    console.log(`refused meanwhile       ${JSON.stringify(Object.fromEntries(load.refused))}`);
  } finally {
    await region.stop();
  }
}

await main();

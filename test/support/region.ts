/**
 * Test support: a whole HA region on this machine, for the failover test and bench:failover.
 *
 *  - the region database: a PostgreSQL primary and a synchronous streaming standby (made with
 *    pg_basebackup; `synchronous_standby_names` on the primary), so a commit (a 201) is on both;
 *  - nodes of DE1 and DE2 as `faxline serve` processes, all on the multi-host URL
 *    `postgres://…@primary,standby/faxline?target_session_attrs=read-write`, with short leases,
 *    heartbeats and failover times so that a failover takes seconds;
 *  - a push receiver that answers every status push;
 *  - a load generator that sends test-line jobs to the nodes in turn and records every 201.
 */
import { api, tempDir } from "./test-node.ts";
import { createAccountWithCli, startChildNode, FAST_RETRIES_ENV, type ChildNode } from "./child-node.ts";
import { PushReceiver } from "./push-receiver.ts";
import { startPostgresCluster, startStandby, type PostgresCluster } from "./postgres-cluster.ts";

export const REGION_ACCOUNT = { custNr: "99999TE", login: "region", password: "region-pass-1" };

export interface RegionTimings {
  heartbeat: string;
  failoverAfter: string;
  sendLease: string;
  dutyLease: string;
  timeScale: string;
}

export const FAST_REGION: RegionTimings = { heartbeat: "200ms", failoverAfter: "3s", sendLease: "3s", dutyLease: "2s", timeScale: "0.02" };

export interface AcceptedJob {
  jobId: string;
  dc: "DE1" | "DE2";
  node: string;
  at: number;
}

export class Region {
  readonly primary: PostgresCluster;
  readonly standby: PostgresCluster;
  readonly url: string;
  readonly receiver: PushReceiver;
  readonly nodes = new Map<string, ChildNode>();
  readonly #dirs = new Map<string, ReturnType<typeof tempDir>>();
  readonly #timings: RegionTimings;

  constructor(init: { primary: PostgresCluster; standby: PostgresCluster; receiver: PushReceiver; timings: RegionTimings }) {
    this.primary = init.primary;
    this.standby = init.standby;
    this.receiver = init.receiver;
    this.#timings = init.timings;
    this.url = `postgres://postgres@127.0.0.1:${init.primary.port},127.0.0.1:${init.standby.port}/faxline?target_session_attrs=read-write`;
  }

  env(extra: Record<string, string> = {}): Record<string, string> {
    const t = this.#timings;
    return {
      ...FAST_RETRIES_ENV,
      FAXLINE_STORE_URL: this.url,
      FAXLINE_STORE_CONNECT_TIMEOUT: "1s",
      FAXLINE_STORE_STATEMENT_TIMEOUT: "3s",
      FAXLINE_CLUSTER_HEARTBEAT_INTERVAL: t.heartbeat,
      FAXLINE_CLUSTER_FAILOVER_AFTER: t.failoverAfter,
      FAXLINE_CLUSTER_DUTY_LEASE: t.dutyLease,
      FAXLINE_SCHEDULER_SEND_LEASE: t.sendLease,
      FAXLINE_SCHEDULER_RENDER_LEASE: "5s",
      FAXLINE_PUSH_ALLOW_TARGETS: "127.0.0.1",
      FAXLINE_PUSH_TIMEOUT: "1s",
      FAXLINE_MAIL_TIMEOUT: "1s",
      FAXLINE_PUSH_RETRY_SCHEDULE: "100ms,200ms,500ms,1s,1s,1s,1s,1s,1s,1s",
      FAXLINE_PUSH_JITTER_PERCENT: "0",
      FAXLINE_LOG_LEVEL: "info",
      ...extra,
    };
  }

  /** Starts (or restarts) node `name` of data center `dc` and waits until it serves. */
  async startNode(name: string, dc: "DE1" | "DE2", extra: Record<string, string> = {}): Promise<ChildNode> {
    let dir = this.#dirs.get(name);
    if (!dir) {
      dir = tempDir(`faxline-region-${name}-`);
      this.#dirs.set(name, dir);
    }
    const node = await startChildNode({ name, dataDir: dir.path, region: "DE", datacenter: dc, timeScale: this.#timings.timeScale, env: this.env({ FAXLINE_NODE_ID: name, ...extra }) });
    this.nodes.set(name, node);
    return node;
  }

  /** The region of the failover test and bench: de1-a, de1-b, de2-a, de2-b. */
  async startFourNodes(): Promise<{ name: string; dc: "DE1" | "DE2" }[]> {
    const all = [
      { name: "de1-a", dc: "DE1" as const },
      { name: "de2-a", dc: "DE2" as const },
      { name: "de1-b", dc: "DE1" as const },
      { name: "de2-b", dc: "DE2" as const },
    ];
    await Promise.all(all.map((n) => this.startNode(n.name, n.dc)));
    return all;
  }

  node(name: string): ChildNode {
    const n = this.nodes.get(name);
    if (!n) throw new Error(`no node ${name}`);
    return n;
  }

  client(name: string) {
    return api(this.node(name).url, REGION_ACCOUNT);
  }

  async stop(): Promise<void> {
    await Promise.allSettled([...this.nodes.values()].map((n) => n.stop(5_000)));
    await this.receiver.stop();
    this.primary.remove();
    this.standby.remove();
    for (const d of this.#dirs.values()) d.remove();
  }
}

/** Primary, synchronous standby, the region database, the account and the push receiver. */
export async function startRegionDatabase(timings: RegionTimings = FAST_REGION): Promise<Region> {
  const primary = await startPostgresCluster({ name: "region-primary" });
  await primary.query("create database faxline");
  const standby = await startStandby(primary, { name: "region_standby", synchronous: true });
  const receiver = new PushReceiver();
  await receiver.start();
  const region = new Region({ primary, standby, receiver, timings });
  const dir = tempDir("faxline-region-cli-");
  try {
    await createAccountWithCli(dir.path, REGION_ACCOUNT, { env: { FAXLINE_STORE_URL: region.url } });
  } finally {
    dir.remove();
  }
  return region;
}

/**
 * Sends jobs to the given nodes in turn, `every` ms apart, until stopped; each job has
 * `recipients` distinct numbers (delivered on the test line) and a status push to the region's
 * receiver. Records every 201; other answers (503 while the database fails over, refused
 * connections of killed nodes) are counted, not retried.
 */
export class LoadGenerator {
  readonly accepted: AcceptedJob[] = [];
  readonly refused = new Map<string, number>();
  #stop = false;
  #loop: Promise<void> | null = null;
  #counter = 0;

  constructor(
    private readonly region: Region,
    private readonly targets: () => { name: string; dc: "DE1" | "DE2" }[],
    private readonly options: { every: number; recipients: number },
  ) {}

  start(): void {
    this.#loop = (async () => {
      let turn = 0;
      while (!this.#stop) {
        const list = this.targets();
        const target = list[turn++ % list.length]!;
        void this.#send(target);
        await new Promise((r) => setTimeout(r, this.options.every));
      }
    })();
  }

  async #send(target: { name: string; dc: "DE1" | "DE2" }): Promise<void> {
    const node = this.region.nodes.get(target.name);
    if (!node?.running) return;
    const n = this.#counter++;
    const recipients = Array.from({ length: this.options.recipients }, (_, k) => ({ number: `+4930${String(n).padStart(5, "0")}${String(k).padStart(2, "0")}` }));
    try {
      const res = await fetch(`${node.url}/rest/v1/${REGION_ACCOUNT.custNr}/fax`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Basic ${Buffer.from(`${REGION_ACCOUNT.login}:${REGION_ACCOUNT.password}`).toString("base64")}` },
        body: JSON.stringify({
          recipients,
          documents: [{ name: "region.txt", data: Buffer.from(`Region load ${n}\n`).toString("base64") }],
          statusReportOptions: { httpStatusPush: { targetUrl: this.region.receiver.url("/push") } },
        }),
        signal: AbortSignal.timeout(10_000),
      });
      const body = (await res.json().catch(() => ({}))) as { jobId?: string; error?: string };
      if (res.status === 201 && body.jobId) this.accepted.push({ jobId: body.jobId, dc: target.dc, node: target.name, at: Date.now() });
      else this.refused.set(String(res.status), (this.refused.get(String(res.status)) ?? 0) + 1);
    } catch {
      this.refused.set("no answer", (this.refused.get("no answer") ?? 0) + 1);
    }
  }

  async stop(): Promise<void> {
    this.#stop = true;
    await this.#loop;
    // Let the requests in flight end.
    await new Promise((r) => setTimeout(r, 1_500));
  }
}

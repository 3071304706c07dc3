/**
 * The node registry: every node of a store has a row in `nodes` (id, region, data center,
 * roles, version, host, API address, started, last seen, stopped, active calls), written at
 * start and every cluster.heartbeatInterval after (`faxline nodes` lists them; the failover of
 * a data center reads them).
 *
 * A node id belongs to one live process. The data directory's lock guards it on one machine;
 * the registry guards it across machines: a node refuses to start when the row of its id was
 * written by another host within three heartbeat intervals and not marked stopped, because
 * that node would otherwise release the other's leases as "its previous life's". On the same
 * host the local lock has already proven that no process of that id is alive, so the row is
 * the node's own previous life and is taken over.
 *
 * The retention role forgets rows that stopped or went silent cluster.forgetNodesAfter ago; a
 * node whose heartbeats could not reach the store for that long writes its row again when they
 * do, so that its data center is not judged dead while it runs.
 *
 * The heartbeat also feeds StoreHealth: a failed write marks the store unreachable for this
 * node until the next one succeeds.
 */
import { hostname as osHostname } from "node:os";
import type { Kysely } from "kysely";
import { coerceError } from "../errors/internal-error.ts";
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/logger.ts";
import { pause } from "../lib/wakeup.ts";
import type { Database, NodeRow } from "../store/database.ts";
import { findNode, markNodeStopped, touchNode, upsertNodeLife, type NewNodeLife } from "../store/queries/nodes.ts";
import type { StoreHealth } from "./store-health.ts";

/** Heartbeats a node may miss before it is shown as not responding. */
export const MISSED_HEARTBEATS = 3;

export class NodeIdInUseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NodeIdInUseError";
  }
}

export type NodeStatus = "running" | "not responding" | "stopped";

export function nodeStatus(row: Pick<NodeRow, "last_seen_at" | "stopped_at">, now: number, heartbeatMs: number): NodeStatus {
  if (row.stopped_at !== null) return "stopped";
  return now - Number(row.last_seen_at) <= MISSED_HEARTBEATS * heartbeatMs ? "running" : "not responding";
}

export interface NodeRegistryOptions {
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  id: string;
  /** Lease-holder name of this life. */
  instance: string;
  region: string;
  datacenter: string;
  roles: readonly string[];
  version: string;
  apiUrl: () => string | null;
  heartbeatMs: number;
  activeCalls: () => number;
  /** The running calls by trunk and transport, for the heartbeat. */
  callsByTrunk?: () => { trunk: string; transport: string; calls: number }[];
  health: StoreHealth;
  hostname?: string;
}

export class NodeRegistry {
  readonly #o: NodeRegistryOptions;
  readonly #hostname: string;
  /** This life's row as registered, to write again should the registry forget it. */
  #life: NewNodeLife | null = null;
  #controller = new AbortController();
  #loop: Promise<void> | null = null;

  constructor(options: NodeRegistryOptions) {
    this.#o = options;
    this.#hostname = options.hostname ?? osHostname();
  }

  /**
   * Writes this life's row; throws NodeIdInUseError when another live host uses the id.
   * Returns whether the id's previous life is known to be over: it ran on this host (whose
   * data-directory lock this process now holds) or it stopped cleanly. A previous life on
   * another host that merely went silent may still be placing calls (cut off from the store,
   * not dead), so its leases must run out rather than be released at once.
   */
  async register(): Promise<{ previousLifeOver: boolean }> {
    const o = this.#o;
    const now = o.clock.now();
    const existing = await findNode(o.db, o.id);
    if (
      existing !== undefined &&
      existing.instance !== o.instance &&
      existing.hostname !== this.#hostname &&
      nodeStatus(existing, now, o.heartbeatMs) === "running"
    ) {
      const ago = Math.max(0, Math.round((now - Number(existing.last_seen_at)) / 1000));
      throw new NodeIdInUseError(
        `Node id ${o.id} is in use by a running node on host ${existing.hostname} (pid ${existing.pid}, last seen ${ago} s ago). ` +
          `Give each node its own id (node.id / FAXLINE_NODE_ID, or its own data directory), or stop the other node first.`,
      );
    }
    this.#life = {
      id: o.id,
      instance: o.instance,
      region: o.region,
      datacenter: o.datacenter,
      roles: JSON.stringify(o.roles),
      version: o.version,
      hostname: this.#hostname,
      pid: process.pid,
      api_url: o.apiUrl(),
      started_at: now,
      last_seen_at: now,
      active_calls: 0,
    };
    await upsertNodeLife(o.db, this.#life);
    o.health.succeeded(now);
    return { previousLifeOver: existing === undefined || existing.hostname === this.#hostname || existing.stopped_at !== null };
  }

  /** One heartbeat; records the store's health. */
  async beat(): Promise<void> {
    const o = this.#o;
    const now = o.clock.now();
    try {
      const mine = await touchNode(o.db, o.id, o.instance, now, o.activeCalls(), o.callsByTrunk?.() ?? []);
      if (!mine) {
        if (this.#life !== null && (await findNode(o.db, o.id)) === undefined) {
          await upsertNodeLife(o.db, { ...this.#life, last_seen_at: now, active_calls: o.activeCalls() });
          o.logger.warn({ nodeId: o.id }, "the node registry had forgotten this node (no heartbeat for cluster.forgetNodesAfter); its row is written again");
        } else {
          o.logger.error({ nodeId: o.id }, "the registry row of this node id was taken over by another node; two nodes run with one id");
        }
      }
      if (!o.health.reachable) o.logger.warn({ downForMs: now - (o.health.failingSince ?? now) }, "the store answers again");
      o.health.succeeded(now);
    } catch (err) {
      if (o.health.reachable) o.logger.error({ err: coerceError(err) }, "the store does not answer the heartbeat");
      o.health.failed(now);
    }
  }

  start(): void {
    const signal = this.#controller.signal;
    this.#loop = (async () => {
      while (!signal.aborted) {
        await pause(this.#o.heartbeatMs, signal);
        if (signal.aborted) break;
        await this.beat();
      }
    })();
  }

  /** Ends the heartbeats and marks the node stopped (best effort: the store may be down). */
  async stop(): Promise<void> {
    this.#controller.abort();
    await this.#loop;
    try {
      await markNodeStopped(this.#o.db, this.#o.id, this.#o.instance, this.#o.clock.now());
    } catch (err) {
      this.#o.logger.warn({ err: coerceError(err) }, "could not mark this node stopped in the registry");
    }
  }
}

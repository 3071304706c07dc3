/**
 * Starts one Faxline node: opens and migrates the store, settles the node's identity, releases
 * leases from its previous life, and starts the configured roles. `stop()` drains the API
 * (503), stops taking work, lets running calls end or abort, and closes the store.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, hostname } from "node:os";
import { join, resolve } from "node:path";
import type { FastifyInstance } from "fastify";
import type { FaxlineConfig } from "../config/schema.ts";
import { systemClock, type Clock } from "../lib/clock.ts";
import { randomToken } from "../lib/ids.ts";
import type { Logger } from "../lib/logger.ts";
import { Wakeup } from "../lib/wakeup.ts";
import { TestLine } from "../line/test-line.ts";
import { SipFaxLine } from "../line/sip-fax-line/sip-fax-line.ts";
import type { InboundSink } from "../line/sip-fax-line/inbound-calls.ts";
import { sipReceptionSink } from "../inbound/sip-reception-sink.ts";
import { pacingBudget, pacingWarning } from "../line/sip-fax-line/pacing-budget.ts";
import { mediaProcessesFor } from "../line/media-host/media-host.ts";
import { parsePortRange } from "../line/sip-fax-line/media-ports.ts";
import { REGION_NUMBER_CONTEXT } from "../numbers/normalize-number.ts";
import { getDestinationCapability, recordAttemptCapability } from "../store/queries/destination-capabilities.ts";
import { ConfigError } from "../config/config-error.ts";
import { NodeRegistry } from "../cluster/node-registry.ts";
import { startDatacenterWatcher } from "../cluster/datacenter-adoption.ts";
import { PARTNER_DATACENTER, REGION_DATACENTERS } from "../config/schema.ts";
import { SingletonDuty } from "../cluster/singleton-duty.ts";
import { StoreHealth } from "../cluster/store-health.ts";
import { faxlineVersion } from "../lib/version.ts";
import { coerceError } from "../errors/internal-error.ts";
import { openStore, storeKind } from "../store/dialects/open-store.ts";
import type { Store } from "../store/store.ts";
import { buildApp } from "../api/build-app.ts";
import type { NodeContext, RunningRole } from "./node-context.ts";
import { pdfRendererFor } from "../render/pdfium/pdfium-engine.ts";
import { nativePdfiumUnavailable } from "../render/pdfium/native-pdfium.ts";
import { acquireNodeLock } from "./data-dir-lock.ts";
import { NodeMetrics } from "../metrics/node-metrics.ts";
import { MetricsHistory } from "../metrics/metrics-history.ts";
import { readRegionActivity } from "../cluster/region-activity.ts";
import { queueDepths } from "../store/queries/queue-depths.ts";
import { releasePreviousLives, startSchedulerRole } from "./scheduler-role.ts";
import { startSenderRole } from "./sender-role.ts";
import { startRetentionRole } from "./retention-role.ts";
import { startNotifierRole } from "./notifier-role.ts";
import { startMailToFaxRole, type MailToFaxRole } from "./mail-to-fax-role.ts";

export interface RunningNode {
  context: NodeContext;
  /** The HTTP address when the api role runs, e.g. http://127.0.0.1:8080. */
  url: string | null;
  app: FastifyInstance | null;
  /** The mail-to-fax SMTP listener's port when that role runs (docs/mail-to-fax.md). */
  mailToFaxPort: number | null;
  /**
   * Drains and stops the node: calls in progress may end within `graceMs` (default
   * node.shutdownGrace, 0: hang them up at once).
   */
  stop(options?: { graceMs?: number }): Promise<void>;
  /** SIGHUP: reads again what can change without a restart (the SIP TLS listener's certificate and key). */
  reload(): Promise<void>;
}


/** The configured node id, or one generated at first start and kept in the data directory. */
export function resolveNodeId(config: FaxlineConfig): string {
  if (config.node.id !== "") return config.node.id;
  const dir = resolve(config.store.dataDir);
  const file = join(dir, "node-id");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(dir, { recursive: true });
  const id = `${config.node.datacenter.toLowerCase()}-${hostname().replace(/[^A-Za-z0-9-]/g, "").slice(0, 32)}-${randomToken(6)}`;
  writeFileSync(file, `${id}\n`);
  return id;
}

/**
 * The production line: the SIP line over the configured trunks, or null when there are none
 * (jobs of live accounts then fail with no_line_configured). Not started yet.
 */
export function buildSipLine(
  config: FaxlineConfig,
  store: Store | null,
  logger: Logger,
  clock: Clock = systemClock,
  inbound: InboundSink | null = null,
): SipFaxLine | null {
  if (config.lines.trunks.length === 0) return null;
  if (config.lines.sipTlsPort >= 0 && (config.lines.sipTlsCertFile === "" || config.lines.sipTlsKeyFile === "")) {
    throw new ConfigError("Invalid configuration: lines.sipTlsPort needs lines.sipTlsCertFile and lines.sipTlsKeyFile (PEM files).");
  }
  const range = parsePortRange(config.lines.mediaPorts);
  if ("error" in range) throw new ConfigError(`Invalid configuration lines.mediaPorts: ${range.error}.`);
  return new SipFaxLine({
    trunks: config.lines.trunks,
    region: REGION_NUMBER_CONTEXT[config.node.region],
    localAddress: config.lines.localAddress,
    advertisedAddress: config.lines.advertisedAddress,
    dnsServers: config.lines.dnsServers,
    sipPort: config.lines.sipPort,
    sipListen: {
      tcpPort: config.lines.sipTcpPort < 0 ? null : config.lines.sipTcpPort,
      tlsPort: config.lines.sipTlsPort < 0 ? null : config.lines.sipTlsPort,
      tlsCertFile: config.lines.sipTlsCertFile,
      tlsKeyFile: config.lines.sipTlsKeyFile,
    },
    connectionLimits: {
      maxConnectionsPerSource: config.lines.sipConnectionsPerSource,
      maxConnections: config.lines.sipMaxConnections,
      idleTimeoutMs: config.lines.sipConnectionIdle,
    },
    floodLimits: {
      requestsPerSecond: config.lines.sipRequestRate,
      requestBurst: 4 * config.lines.sipRequestRate,
      invitesPerSecond: config.lines.sipInviteRate,
      inviteBurst: 3 * config.lines.sipInviteRate,
      refusalsPerMinute: config.lines.sipRefusalsPerMinute,
      lockoutFailures: config.lines.sipLockoutFailures,
      lockoutMs: config.lines.sipLockout,
    },
    mediaPorts: range,
    clockSpeed: config.lines.clockSpeed,
    mediaProcess: config.lines.mediaProcess ? { nice: config.lines.mediaNice, processes: mediaProcessCount(config) } : false,
    capabilityMaxAgeMs: config.lines.capabilityMaxAge,
    capabilities:
      store === null
        ? null
        : {
            get: (e164) => getDestinationCapability(store.db, e164),
            record: async (e164, report) => {
              await recordAttemptCapability(store.db, e164, report, clock.now());
            },
          },
    logger: logger.child({ line: "sip" }),
    clock,
    inbound:
      inbound === null
        ? null
        : { sink: inbound, channels: config.inbound.channels, defaultCsid: config.sender.csid, spoolDir: receptionSpoolDir(config) },
  });
}

/** Where the node receives faxes before they are stored: inbound.spoolDir, else <store.dataDir>/receptions. */
export function receptionSpoolDir(config: FaxlineConfig): string {
  return config.inbound.spoolDir !== "" ? resolve(config.inbound.spoolDir) : join(resolve(config.store.dataDir), "receptions");
}

/** lines.mediaProcesses, or when 0 one per 75 calls the node may run at once, at most the cores but one (1 to 8). */
export function mediaProcessCount(config: FaxlineConfig, cores = availableParallelism()): number {
  if (config.lines.mediaProcesses > 0) return config.lines.mediaProcesses;
  const budget = pacingBudget({ trunks: config.lines.trunks, senderChannels: config.sender.channels, inboundChannels: config.inbound.channels, capacity: config.lines.pacingCapacity });
  return mediaProcessesFor(budget.outgoing + budget.incoming, cores);
}

export async function startNode(config: FaxlineConfig, logger: Logger, options: { clock?: Clock } = {}): Promise<RunningNode> {
  const clock = options.clock ?? systemClock;
  const dataDir = resolve(config.store.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const nodeId = resolveNodeId(config);
  // First the lock: nothing below may touch the work of a node of this id that is still alive.
  const lock = acquireNodeLock(dataDir, nodeId);
  let store: Store | null = null;
  let app: FastifyInstance | null = null;
  let sipLine: SipFaxLine | null = null;
  let registry: NodeRegistry | null = null;
  let listening: { close(): Promise<void> } | null = null;
  let mailToFax: MailToFaxRole | null = null;
  let storeForMetrics: Store | null = null;
  const metrics = new NodeMetrics({
    labels: { datacenter: config.node.datacenter, node: nodeId },
    queueDepths: async () => (storeForMetrics ? queueDepths(storeForMetrics.db, config.node.datacenter) : []),
  });
  try {
    // Renders happen on scheduler nodes (jobs) and api nodes (previews); the engine loads in their
    // render threads, this only checks that the one asked for can load.
    let pdfRenderer: string;
    try {
      pdfRenderer = pdfRendererFor(config.render.pdfRenderer, nativePdfiumUnavailable());
    } catch (err) {
      throw new ConfigError(`Invalid configuration: ${(err as Error).message}.`);
    }
    const dialect = storeKind(config);
    store = await openStore(config, { onQuery: (ms) => metrics.storeQuery(dialect, ms / 1000) });
    storeForMetrics = store;
    const openedStore = store;
    const enabled = new Set(config.node.roles);
    // Real calls need trunks and a sender; test accounts always keep the test line.
    const wake = { render: new Wakeup(), send: new Wakeup(), notify: new Wakeup() };
    const health = new StoreHealth(clock.now());
    if (enabled.has("sender")) {
      // The SIP line also answers the calls of inbound trunks (docs/inbound-api.md); what it
      // receives is stored with its deliveries, and the notifier is woken for them.
      const sink = sipReceptionSink({
        db: openedStore.db,
        datacenter: config.node.datacenter,
        onStored: ({ status, transport, deliveries }) => {
          metrics.faxReceived(status, transport);
          if (deliveries > 0) wake.notify.notify();
        },
      });
      sipLine = buildSipLine(config, store, logger.child({ node: nodeId, dc: config.node.datacenter }), clock, sink);
      // A SIP load balancer's OPTIONS probe gets 503 while the heartbeats find no store (and while the node drains).
      sipLine?.setAvailability(() => (health.reachable ? null : "the node's store does not answer"));
      await sipLine?.start();
      const budget = pacingBudget({ trunks: config.lines.trunks, senderChannels: config.sender.channels, inboundChannels: config.inbound.channels, capacity: config.lines.pacingCapacity });
      const warning = sipLine === null ? null : pacingWarning(budget);
      if (warning !== null) logger.warn({ node: nodeId, ...budget }, warning);
    }
    const holder = `${nodeId}:${randomToken(8)}`;
    const nodeLogger = logger.child({ node: nodeId, dc: config.node.datacenter });
    const context: NodeContext = {
      config,
      store,
      clock,
      logger: nodeLogger,
      nodeId,
      holder,
      wake,
      lines: { test: new TestLine({ clock, timeScale: Number(config.testLine.timeScale) }), production: sipLine },
      health,
      singleton: (name) => new SingletonDuty({ db: openedStore.db, name, holder, leaseMs: config.cluster.dutyLease, clock, logger: nodeLogger }),
      metrics,
    };

    // Other nodes of the store announce work through it (PostgreSQL NOTIFY): wake the roles here.
    const dc = config.node.datacenter;
    listening = await store.signals.listen((kind, datacenter) => {
      if (datacenter === dc || datacenter === "*") context.wake[kind].notify();
    });

    // Listen before taking over any work: a node that cannot bind its port changes nothing.
    let url: string | null = null;
    let drain = () => {};
    let rolesRunning = false;
    let activeCalls = () => 0;
    // The console's live charts: sampled by each node that serves the console (ADR 0019).
    const history =
      enabled.has("api") && config.console.enabled
        ? new MetricsHistory({
            clock,
            nodeId,
            intervalMs: config.console.chartInterval,
            windowMs: config.console.chartWindow,
            readRegion: (now) =>
              readRegionActivity(openedStore.db, { region: config.node.region, datacenters: REGION_DATACENTERS[config.node.region], heartbeatMs: config.cluster.heartbeatInterval, now }),
            own: () => ({ calls: activeCalls(), receptions: sipLine?.activeReceptions ?? 0 }),
            takeInterval: () => metrics.takeInterval(),
          })
        : null;
    if (enabled.has("api")) {
      const built = await buildApp({
        config,
        store,
        clock,
        logger: context.logger,
        onJobAccepted: () => context.wake.render.notify(),
        onNotificationQueued: () => context.wake.notify.notify(),
        metrics,
        ...(history ? { history } : {}),
        notReady: () => (rolesRunning ? null : "the node's roles are starting"),
      });
      app = built.app;
      drain = built.drain;
      url = await app.listen({ host: config.http.host, port: config.http.port });
    }
    // Mail is answered 250 only once its job is stored, so the listener may take mail from the start.
    if (enabled.has("mail-to-fax")) mailToFax = await startMailToFaxRole(context);

    registry = new NodeRegistry({
      db: store.db,
      clock,
      logger: nodeLogger,
      id: nodeId,
      instance: holder,
      region: config.node.region,
      datacenter: config.node.datacenter,
      roles: [...enabled],
      version: faxlineVersion(),
      apiUrl: () => url,
      heartbeatMs: config.cluster.heartbeatInterval,
      activeCalls: () => activeCalls(),
      callsByTrunk: () => callsByTrunk(context),
      health: context.health,
    });
    metrics.watchCallsByTrunk(() => callsByTrunk(context));
    metrics.watchReceptions(() => sipLine?.activeReceptions ?? 0);
    metrics.watchMediaLosses(() => sipLine?.mediaProcessLosses ?? 0);
    metrics.watchSip(() => sipLine?.sipDrops.counts ?? {}, () => sipLine?.sipConnections ?? 0);
    // Before any work: refuses to start when another live host runs with this node id.
    const { previousLifeOver } = await registry.register();
    if (previousLifeOver) {
      const released = await releasePreviousLives(context);
      if (released.jobs + released.recipients + released.duties > 0) {
        context.logger.warn(released, "released leases held by this node before its restart");
      }
    } else {
      context.logger.warn("this node id last ran on another host, which stopped answering without stopping: its leases run out before its work is taken over");
    }
    const roles: RunningRole[] = [];
    if (enabled.has("scheduler")) roles.push(startSchedulerRole(context));
    if (enabled.has("sender")) {
      const sender = startSenderRole(context);
      activeCalls = () => sender.activeCalls();
      roles.push(sender);
    }
    if (enabled.has("notifier")) roles.push(startNotifierRole(context));
    if (enabled.has("retention")) roles.push(startRetentionRole(context));
    registry.start();
    history?.start();
    // The other data center of the region, on this store: adopted when it dies (scheduler nodes).
    const watcher = enabled.has("scheduler")
      ? startDatacenterWatcher({
          db: store.db,
          clock,
          logger: nodeLogger,
          datacenter: config.node.datacenter,
          holder,
          failoverAfterMs: config.cluster.failoverAfter,
          heartbeatMs: config.cluster.heartbeatInterval,
          health: context.health,
          duty: context.singleton(`adopt:${PARTNER_DATACENTER[config.node.datacenter]}`),
          onAdopted: () => {
            context.wake.render.notify();
            context.wake.send.notify();
            context.wake.notify.notify();
          },
        })
      : null;
    rolesRunning = true;
    context.logger.info(
      { roles: [...enabled], url, region: config.node.region, datacenter: config.node.datacenter, store: store.location, version: faxlineVersion(), pdfRenderer },
      "node started",
    );

    const runningApp = app;
    const runningStore = store;
    const runningLine = sipLine;
    const runningRegistry = registry;
    const runningListener = listening;
    const runningMailToFax = mailToFax;
    let stopping: Promise<void> | null = null;
    return {
      context,
      url,
      app: runningApp,
      mailToFaxPort: runningMailToFax?.port ?? null,
      async reload() {
        try {
          await runningLine?.reloadTls();
          context.logger.info({ tls: runningLine?.sipListening.tls ?? null }, "reloaded on SIGHUP");
        } catch (err) {
          context.logger.error({ err: coerceError(err) }, "reload on SIGHUP failed: the SIP TLS listener keeps its certificate");
        }
      },
      stop(options: { graceMs?: number } = {}) {
        stopping ??= (async () => {
          // Draining: the API answers 503 to new requests (its probes say so), nothing new is
          // claimed or answered, and calls in progress (sending and receiving) may end on their
          // own within node.shutdownGrace; then they are hung up (redialled after a restart).
          drain();
          // No new mail; mails being read get their answer (250 once stored) first.
          await runningMailToFax?.stop();
          const graceMs = options.graceMs ?? config.node.shutdownGrace;
          const hurry = new AbortController();
          // No grace: nothing waits, not even for a timer's turn.
          if (graceMs <= 0) hurry.abort();
          const graceOver = setTimeout(() => hurry.abort(), graceMs);
          try {
            await watcher?.stop();
            // The notifier runs on while the calls end; then, within the same grace, it delivers
            // what is due (the ended calls' and receptions' reports) before the node exits.
            const notifier = roles.filter((r) => r.name === "notifier");
            await Promise.all([...roles.filter((r) => r.name !== "notifier").map((r) => r.stop(hurry.signal)), runningLine?.drain(hurry.signal)]);
            await Promise.all(notifier.map((r) => r.stop(hurry.signal)));
            clearTimeout(graceOver);
            await runningLine?.close();
            if (runningApp) await runningApp.close();
            await runningListener.close().catch((err) => context.logger.warn({ err: coerceError(err) }, "closing the work listener failed"));
            await history?.stop();
            await runningRegistry.stop();
            await runningStore.close();
          } finally {
            clearTimeout(graceOver);
            lock.release();
          }
          context.logger.info("node stopped");
        })();
        return stopping;
      },
    };
  } catch (err) {
    if (mailToFax) await mailToFax.stop().catch(() => {});
    if (app) await app.close().catch(() => {});
    if (sipLine) await sipLine.close().catch(() => {});
    if (listening) await listening.close().catch(() => {});
    if (store) await store.close().catch(() => {});
    lock.release();
    throw err;
  }
}

/** The node's running calls (both lines) counted by trunk and transport. */
export function callsByTrunk(context: Pick<NodeContext, "lines">): { trunk: string; transport: string; calls: number }[] {
  const counts = new Map<string, { trunk: string; transport: string; calls: number }>();
  for (const c of [...context.lines.test.runningCalls(), ...(context.lines.production?.runningCalls() ?? [])]) {
    const key = `${c.trunk}\0${c.transport}`;
    const entry = counts.get(key) ?? { trunk: c.trunk, transport: c.transport, calls: 0 };
    entry.calls += 1;
    counts.set(key, entry);
  }
  return [...counts.values()].sort((a, b) => a.trunk.localeCompare(b.trunk) || a.transport.localeCompare(b.transport));
}

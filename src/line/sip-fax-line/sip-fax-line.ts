/**
 * The SIP line: real fax calls over the node's SIP trunks (docs/trunks.md), T.38 or G.711, with
 * SpanDSP as the fax engine. It implements `Line` for the sender role, and `send()` for the
 * operator's `faxline fax send` (which names its target and mode itself).
 *
 * One call (`call`):
 *  1. The dial plan (trunks/dial-plan.ts) normalises the number, picks the trunk by its longest
 *     route prefix and writes the trunk's dial string; no route or a bad number fails the attempt
 *     without a call (`dialled: false`). When every trunk of the route is at its `maxCalls`, the
 *     call waits for one of them to end.
 *  2. The fax mode comes from the fallback ladder and the destination's capability cache
 *     (outcomes/fallback-ladder.ts `chooseFaxMode`), read and written through `capabilities`
 *     (the store, wired by roles/start-node.ts: line/ knows no store).
 *  3. The recipient's fax image is written to a temporary file (SpanDSP reads TIFF by path) and
 *     removed after the call.
 *  4. `runFaxCall` (fax-call.ts) places the call and runs the fax; its outcome, with the number
 *     actually dialled as `sentToNumber`, is the attempt's. What the attempt taught about the
 *     destination (what worked, which rung failed, a T.38 refusal) goes back into the cache.
 *
 * The line owns one SIP user agent (one UDP port, TCP/TLS connections on demand), the trunks'
 * registrations (`start`, `close`), the pool of media ports and the count of calls per trunk.
 */
import dns from "node:dns/promises";
import net from "node:net";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { networkInterfaces, tmpdir } from "node:os";
import path from "node:path";
import type { Logger } from "../../lib/logger.ts";
import type { NumberContext } from "../../numbers/normalize-number.ts";
import { normalizeFaxNumber } from "../../numbers/normalize-number.ts";
import type { Engine, EngineEvent, FaxBitRateCap } from "../fax-engine/engine.ts";
import { SpandspEngine, uncompressFaxTiff } from "../fax-engine/spandsp-engine.ts";

import { InlineMediaRunner, type FaxMediaRunner } from "../media-host/fax-media.ts";
import { MediaHostPool, type MediaHostOptions } from "../media-host/media-host.ts";
import type { AttemptOutcome, CallRequest, Line, RunningCallInfo } from "../line.ts";
import type { FaxTransport } from "../outcomes/call-outcomes.ts";
import type { WatchdogLimits } from "../outcomes/call-watchdog.ts";
import {
  chooseFaxMode,
  FALLBACK_LADDER,
  modeOnTrunk,
  type AttemptModeReport,
  type DestinationCapability,
  type FaxMode,
  type ModeChoice,
} from "../outcomes/fallback-ladder.ts";
import type { SipTimerValues } from "../sip/sip-timers.ts";
import { parseSipUri } from "../sip/sip-uri.ts";
import { SipUserAgent } from "../sip/sip-user-agent.ts";
import { SourceLimiter, type FloodLimits } from "../sip/flood-limits.ts";
import { SipDropCounter, type SipDrop } from "../sip/sip-drops.ts";
import type { SipRegistration } from "../sip/sip-registration.ts";
import type { SipConnectionLimits, SipTlsCredentials, SipTraceEntry, SipTransportProtocol } from "../sip/transports.ts";
import { formatDialString, fromUriFor, hostPortAddress, planDial, proxyAddressFor, requestUriFor, type DialPlan } from "../trunks/dial-plan.ts";
import { formatHost, type TrunkConfig } from "../trunks/trunk-config.ts";
import { faxIdent, runFaxCall, type FaxCallReport, type FaxCallSetup, type FaxRoute } from "./fax-call.ts";
import { InboundCalls, type InboundSink } from "./inbound-calls.ts";

export { faxIdent };
import { MediaPortPool, NoFreeMediaPortError, type PortRange } from "./media-ports.ts";

/** The capability cache, as the line needs it (store/queries/destination-capabilities.ts fills it). */
export interface CapabilityCache {
  get(e164: string): Promise<DestinationCapability | null>;
  record(e164: string, report: AttemptModeReport): Promise<void>;
}

export interface SipFaxLineOptions {
  trunks: readonly TrunkConfig[];
  /** How numbers are read, and the country of the `national` dial format: the node's region. */
  region: NumberContext;
  /** Local IPv4 address for SIP and media; "" picks the first non-loopback interface address. */
  localAddress: string;
  /** The address written into Via, Contact and SDP when it is not the local one (static NAT); "" none. */
  advertisedAddress?: string;
  /** UDP port for SIP; 0 takes a free one. */
  sipPort: number;
  /**
   * TCP and TLS listeners for calls coming in (lines.sipTcpPort, lines.sipTlsPort): ports (0 a
   * free one, null none) and the TLS listener's PEM files, read at start and by `reloadTls`.
   */
  sipListen?: { tcpPort: number | null; tlsPort: number | null; tlsCertFile: string; tlsKeyFile: string };
  /** Bounds on accepted TCP/TLS connections (lines.sipConnectionsPerSource, …). */
  connectionLimits?: Partial<SipConnectionLimits>;
  /** Bounds per source address (lines.sipRequestRate, …). */
  floodLimits?: Partial<FloodLimits>;
  mediaPorts: PortRange;
  /** Engine clock speed: 1 for real far ends; tests run a peer at the same speed (lines.clockSpeed). */
  clockSpeed?: number;
  /** lines.capabilityMaxAge, ms. */
  capabilityMaxAgeMs: number;
  capabilities?: CapabilityCache | null;
  /** Runs the fax engines on this event loop with this engine (tests); then `mediaProcess` is not used. */
  engine?: Engine;
  /**
   * Runs the fax engines in a media process of their own (media-host/media-host.ts, lines.mediaProcess):
   * paced apart from this event loop, and a crash costs only its calls. False: on this event loop.
   * Options instead of true: how many processes (lines.mediaProcesses; default 1), their nice
   * value, ping and restart timings. (Default: true)
   */
  mediaProcess?: boolean | (MediaHostOptions & { processes?: number });
  logger?: Logger;
  /** Where the fax image files go during a call. (Default: the system's temporary directory) */
  tmpDir?: string;
  /** Our own T.38 re-INVITE after the answer when the far end has not switched. (Default: 1500 ms) */
  t38ReinviteDelayMs?: number;
  /** UDPTL redundancy. (Default: 3) */
  redundancy?: number;
  watchdogLimits?: WatchdogLimits;
  /** SIP timer overrides, for tests only. */
  sipTimers?: Partial<SipTimerValues>;
  /** Host name resolution for proxies, A/AAAA only: for tests. (Default: DNS with SRV, `dnsServers`) */
  lookup?: (host: string) => Promise<string>;
  /** DNS servers for trunk host names (lines.dnsServers); empty: the system's. */
  dnsServers?: readonly string[];
  trace?: (entry: SipTraceEntry) => void;
  /** Wall clock for cache times, ms since the epoch. (Default: Date.now) */
  clock?: { now(): number };
  /**
   * Answering: where received faxes go, how many at once, and our CSI when a trunk names none.
   * Absent or null: the line answers no calls (new INVITEs get 603), whatever the trunks say.
   */
  inbound?: { sink: InboundSink; channels: number; defaultCsid: string; spoolDir?: string; storeRetryDelaysMs?: readonly number[] } | null;
}

/** What `faxline fax send` asks for. */
export interface SendFaxRequest {
  /** A fax number in any accepted form, or a SIP URI (`sip:…`, `sips:…` is not supported). */
  to: string;
  /** Send over this trunk, whatever the routes say; null: routing (numbers), or directly (SIP URIs). */
  trunk?: string | null;
  /** Force the transport; null: the trunk's first rung. */
  transport?: FaxTransport | null;
  /** Force ECM on or off; null: the trunk's setting. */
  ecm?: boolean | null;
  /** Cap the modem rate; null: the first rung's (14 400). */
  maxBitRate?: FaxBitRateCap | null;
  /** Our fax id; null: the trunk's, else `defaultCsid`. */
  csid?: string | null;
  defaultCsid: string;
  image: Uint8Array;
  pageSizes: readonly number[];
  signal?: AbortSignal;
  onEngineEvent?: (event: EngineEvent) => void;
  onProgress?: (what: string) => void;
}

export interface SendFaxReport {
  route: FaxRoute;
  /** The trunk's name, or null for a direct call. */
  trunk: string | null;
  report: FaxCallReport;
}

/** A request `faxline fax send` cannot place: unknown trunk, bad number, no route. */
export class SendFaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SendFaxError";
  }
}

/** Largest uncompressed copy of a fax image made for the engine: 64 MiB, about 130 A4 HIGH pages. */
const UNCOMPRESSED_MAX_BYTES = 64 * 1024 * 1024;
const DEFAULT_T38_REINVITE_DELAY_MS = 1500;
const DEFAULT_REDUNDANCY = 3;

/** The transport a call will use, for the operator: "auto" is TLS for sips:, UDP for an address or host:port, else DNS decides (RFC 3263, resolve-targets.ts). */
function transportForDisplay(route: FaxRoute): string {
  if (route.transport !== "auto") return route.transport.toUpperCase();
  const hop = parseSipUri(route.outboundProxy === undefined ? route.target : /^sips?:/i.test(route.outboundProxy) ? route.outboundProxy : `sip:${route.outboundProxy}`);
  if (hop.scheme === "sips") return "TLS";
  return net.isIP(hop.host) !== 0 || hop.port !== null ? "UDP" : "UDP, TCP or TLS as DNS names it";
}

/** The first non-internal IPv4 address of this host, else 127.0.0.1. */
export function defaultLocalAddress(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const a of addresses ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  }
  return "127.0.0.1";
}

export class SipFaxLine implements Line {
  readonly name = "sip";
  readonly #options: SipFaxLineOptions;
  readonly #trunks: readonly TrunkConfig[];
  readonly #localAddress: string;
  readonly #mediaAddress: string;
  readonly #ports: MediaPortPool;
  readonly #active = new Map<string, number>();
  readonly #running = new Set<RunningCallInfo>();
  #slotWaiters: (() => void)[] = [];
  readonly #registrations: SipRegistration[] = [];
  #ua: SipUserAgent | null = null;
  #inbound: InboundCalls | null = null;
  #media: FaxMediaRunner | null = null;
  #starting: Promise<void> | null = null;
  #draining = false;
  #closed = false;
  /** What the SIP side dropped, by reason (faxline_sip_messages_dropped_total). */
  readonly sipDrops = new SipDropCounter();
  #unavailable: () => string | null = () => null;

  constructor(options: SipFaxLineOptions) {
    this.#options = options;
    this.#trunks = options.trunks;
    this.#localAddress = options.localAddress === "" ? defaultLocalAddress() : options.localAddress;
    this.#mediaAddress = options.advertisedAddress ? options.advertisedAddress : this.#localAddress;
    this.#ports = new MediaPortPool({ address: this.#localAddress, range: options.mediaPorts });
  }

  get trunks(): readonly TrunkConfig[] {
    return this.#trunks;
  }

  /** The SIP UDP endpoint (after `start`). */
  get sipLocal(): { address: string; port: number } | null {
    return this.#ua?.udpLocal ?? null;
  }

  /** The TCP and TLS listeners' endpoints (after `start`); null where none listens. */
  get sipListening(): { tcp: { address: string; port: number } | null; tls: { address: string; port: number } | null } {
    return this.#ua?.listening ?? { tcp: null, tls: null };
  }

  /** TCP/TLS connections the listeners hold now. */
  get sipConnections(): number {
    return this.#ua?.stats.acceptedConnections ?? 0;
  }

  /**
   * Reads the TLS listener's certificate and key files again and uses them for new connections
   * (SIGHUP). Throws, leaving the old ones in use, when they cannot be read or do not match.
   */
  async reloadTls(): Promise<void> {
    const listen = this.#options.sipListen;
    if (this.#ua === null || listen === undefined || listen.tlsPort === null) return;
    this.#ua.setTlsCredentials(await readTlsCredentials(listen.tlsCertFile, listen.tlsKeyFile));
  }

  /** The media processes' pids (tests send them signals). */
  get mediaProcessPids(): number[] {
    return this.#media instanceof MediaHostPool ? this.#media.pids : [];
  }

  /** Times the media process ended unasked (crashed, killed or hung) since the line started. */
  get mediaProcessLosses(): number {
    return this.#media instanceof MediaHostPool ? this.#media.losses : 0;
  }

  /** Receptions running now. */
  get activeReceptions(): number {
    return this.#inbound?.active ?? 0;
  }

  /** Calls running per trunk (both directions). */
  get activeCalls(): ReadonlyMap<string, number> {
    return this.#active;
  }

  /**
   * Loads the fax engine (throws SpandspAddonError when the addon is not built), binds the SIP
   * socket and registers the trunks that name a registrar. Idempotent. A start that fails closes
   * what it had opened and rejects.
   */
  start(): Promise<void> {
    this.#starting ??= (async () => {
      if (this.#options.engine !== undefined) this.#media = new InlineMediaRunner(this.#options.engine);
      else if (this.#options.mediaProcess === false) this.#media = new InlineMediaRunner(SpandspEngine.load());
      else {
        const log = this.#options.logger;
        const { processes = 1, ...options } = typeof this.#options.mediaProcess === "object" ? this.#options.mediaProcess : {};
        const host = new MediaHostPool(processes, {
          ...options,
          onLost: (info) => log?.error(info, "a media process was lost; its calls end as engine_lost and it is restarted"),
          onNiceRefused: (message) => log?.warn(message),
        });
        this.#media = host;
        await host.start();
      }
      const log = this.#options.logger;
      this.sipDrops.onDrop((drop) => logDrop(log, drop));
      const listen = this.#options.sipListen;
      const ua = new SipUserAgent({
        localAddress: this.#localAddress,
        ...(this.#options.advertisedAddress ? { advertisedAddress: this.#options.advertisedAddress } : {}),
        udpPort: this.#options.sipPort,
        ...(listen !== undefined && (listen.tcpPort !== null || listen.tlsPort !== null)
          ? {
              listen: {
                tcpPort: listen.tcpPort,
                tlsPort: listen.tlsPort,
                ...(listen.tlsPort !== null ? { tlsServer: await readTlsCredentials(listen.tlsCertFile, listen.tlsKeyFile) } : {}),
              },
            }
          : {}),
        ...(this.#options.connectionLimits !== undefined ? { connectionLimits: this.#options.connectionLimits } : {}),
        limiter: new SourceLimiter(this.#options.floodLimits),
        drops: this.sipDrops,
        ...(this.#options.sipTimers !== undefined ? { timers: this.#options.sipTimers } : {}),
        ...(this.#options.lookup !== undefined ? { lookup: this.#options.lookup } : {}),
        ...(this.#options.dnsServers !== undefined && this.#options.dnsServers.length > 0 ? { dnsServers: this.#options.dnsServers } : {}),
        ...(this.#options.trace !== undefined ? { trace: this.#options.trace } : {}),
        screenNewInvite: (source) => this.#inbound?.screen(source) ?? "trunk",
      });
      ua.setAvailability(() => this.#unavailableReason());
      // Kept before it starts: a start that fails half-way (UDP bound, a TCP port taken) is closed below.
      this.#ua = ua;
      await ua.start();
      const inbound = this.#options.inbound ?? null;
      if (inbound !== null && this.#trunks.some((t) => t.inbound)) {
        const calls = new InboundCalls({
          trunks: this.#trunks,
          region: this.#options.region,
          sink: inbound.sink,
          channels: inbound.channels,
          defaultCsid: inbound.defaultCsid,
          setup: () => this.#setup(),
          takeSlot: (trunk) => this.#takeSlot(trunk),
          activeOnTrunk: (trunk) => this.#active.get(trunk) ?? 0,
          lookup: async (host) => (this.#options.lookup !== undefined ? [await this.#options.lookup(host)] : (await dns.lookup(host, { all: true })).map((a) => a.address)),
          clock: this.#options.clock ?? Date,
          ...(this.#options.tmpDir !== undefined ? { tmpDir: this.#options.tmpDir } : {}),
          ...(this.#options.logger !== undefined ? { logger: this.#options.logger.child({ direction: "in" }) } : {}),
          ...(inbound.storeRetryDelaysMs !== undefined ? { storeRetryDelaysMs: inbound.storeRetryDelaysMs } : {}),
          ...(inbound.spoolDir !== undefined ? { spoolDir: inbound.spoolDir } : {}),
          limiter: ua.limiter,
        });
        this.#inbound = calls;
        await calls.start();
        ua.onIncomingCall((invite) => calls.handle(invite));
      }
      for (const trunk of this.#trunks) {
        if (trunk.registrar === null) continue;
        const registration = ua.register({
          registrar: hostPortAddress(trunk.registrar),
          aor: fromUriFor(trunk),
          ...(trunk.username !== "" ? { credentials: { username: trunk.username, password: trunk.password } } : {}),
          transport: trunk.transport,
          expiresMs: trunk.registerExpiresMs,
        });
        registration.onEvent((event) => this.#options.logger?.info({ trunk: trunk.name, registration: event }, "trunk registration"));
        this.#registrations.push(registration);
      }
      this.#options.logger?.info(
        { sip: ua.udpLocal, media: this.#options.mediaPorts, trunks: this.#trunks.map((t) => t.name), speed: this.#speed },
        "SIP line started",
      );
    })().catch(async (error: unknown) => {
      // A start that fails (a spool in use, a port taken) leaves nothing open behind it.
      await this.#inbound?.close().catch(() => undefined);
      this.#inbound = null;
      await this.#ua?.close().catch(() => undefined);
      this.#ua = null;
      await this.#media?.close().catch(() => undefined);
      this.#media = null;
      throw error;
    });
    return this.#starting;
  }

  /**
   * Why this node should get no new calls now, besides stopping (e.g. its store does not
   * answer), or null: OPTIONS outside a dialog, a SIP load balancer's probe, then get 503 instead
   * of 200 (sip-user-agent.ts). Asked at each OPTIONS.
   */
  setAvailability(unavailable: () => string | null): void {
    this.#unavailable = unavailable;
  }

  #unavailableReason(): string | null {
    if (this.#draining || this.#closed) return "the node is shutting down";
    return this.#unavailable();
  }

  /**
   * Stops answering (new calls get 503, and so do OPTIONS probes) and waits until the faxes being
   * received have ended, or `hurry` aborts; close() then hangs up what still runs.
   */
  async drain(hurry: AbortSignal): Promise<void> {
    this.#draining = true;
    const receiving = this.#inbound?.close();
    if (receiving === undefined || hurry.aborted) return;
    await Promise.race([receiving, new Promise((resolve) => hurry.addEventListener("abort", resolve, { once: true }))]);
  }

  /** Hangs up what still runs, unregisters and closes the SIP sockets. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#starting?.catch(() => undefined);
    const receiving = this.#inbound?.close();
    await this.#ua?.close();
    await receiving;
    await this.#media?.close();
    for (const wake of this.#slotWaiters.splice(0)) wake();
  }

  get #speed(): number {
    return this.#options.clockSpeed ?? 1;
  }

  #setup(): FaxCallSetup {
    if (this.#ua === null || this.#media === null) throw new Error("SipFaxLine.start() has not completed");
    return {
      ua: this.#ua,
      media: this.#media,
      ports: this.#ports,
      mediaAddress: this.#mediaAddress,
      speed: this.#speed,
      t38ReinviteDelayMs: this.#options.t38ReinviteDelayMs ?? DEFAULT_T38_REINVITE_DELAY_MS,
      redundancy: this.#options.redundancy ?? DEFAULT_REDUNDANCY,
      ...(this.#options.watchdogLimits !== undefined ? { watchdogLimits: this.#options.watchdogLimits } : {}),
    };
  }

  async call(request: CallRequest, signal: AbortSignal): Promise<AttemptOutcome> {
    await this.start();
    const notPlaced = (reasonCode: "no_route" | "invalid_number" | "call_failed" | "fax_image_error", rawCause: string): AttemptOutcome => ({
      result: "failed",
      reasonCode,
      pagesSent: 0,
      durationSecs: 0,
      remoteCsid: null,
      rawCause,
      dialled: false,
    });
    if (request.loadImage === undefined) return notPlaced("fax_image_error", "The recipient has no fax image to send");

    let plan: DialPlan;
    for (;;) {
      signal.throwIfAborted();
      const planned = planDial(request.e164, this.#trunks, {
        region: this.#options.region,
        jobCsid: request.jobCsid ?? null,
        defaultCsid: request.csid,
        activeCalls: this.#active,
      });
      if (planned.ok) {
        plan = planned;
        break;
      }
      if (planned.reasonCode !== null) return notPlaced(planned.reasonCode, planned.message);
      this.#options.logger?.debug({ jobId: request.jobId, recipientId: request.recipientId, why: planned.message }, "waiting for a free call slot");
      await this.#slotFreed(signal);
    }

    const route = routeForPlan(plan);
    const release = this.#takeSlot(plan.trunk.name);
    let running: RunningCallInfo | null = null;
    try {
      const cached = this.#options.capabilities ? await this.#options.capabilities.get(plan.e164) : null;
      const choice = chooseFaxMode(plan.trunk, cached, this.#now(), this.#options.capabilityMaxAgeMs);
      running = { trunk: plan.trunk.name, transport: choice.mode.transport };
      this.#running.add(running);
      const log = this.#options.logger?.child({ jobId: request.jobId, recipientId: request.recipientId, attempt: request.attemptNo, trunk: plan.trunk.name });
      log?.info({ dial: plan.dialString, mode: choice.mode, rung: choice.rung, basis: choice.basis }, "placing call");
      const image = await request.loadImage();
      const pageSizes = request.pages.map((p) => p.encodedBytes);
      let report: FaxCallReport;
      try {
        report = await this.#withImageFile(image, (tiffPath) =>
          runFaxCall(this.#setup(), { route, mode: choice.mode, tiffPath, pageSizes, signal }),
        );
      } catch (error) {
        if (error instanceof NoFreeMediaPortError) return notPlaced("call_failed", error.message);
        throw error;
      }
      log?.info(
        {
          result: report.attempt.result,
          reason: report.outcome.reasonCode,
          rawCause: report.outcome.rawCause,
          transport: report.transport,
          t38Refused: report.t38Refused,
          pages: report.outcome.pagesDelivered,
          bitRate: report.statistics?.bitRate,
          durationSecs: report.durationSecs,
          wallMs: Math.round(report.wallMs),
        },
        "call ended",
      );
      await this.#recordCapability(plan.e164, choice, report, log);
      const attempt: AttemptOutcome = { ...report.attempt, trunk: plan.trunk.name };
      return report.transport === null ? attempt : { ...attempt, transport: report.transport };
    } finally {
      if (running) this.#running.delete(running);
      release();
    }
  }

  /**
   * Sends one fax as the operator asks (`faxline fax send`): to a number (routed, or over
   * `trunk`) or to a SIP URI (directly, or through `trunk`'s proxy), in the mode asked for.
   * Throws SendFaxError for a request that cannot be placed; everything else is in the report.
   * The capability cache is neither read nor written.
   */
  async send(request: SendFaxRequest): Promise<SendFaxReport> {
    await this.start();
    const trunk = request.trunk ? this.#trunks.find((t) => t.name.toLowerCase() === request.trunk!.toLowerCase()) : undefined;
    if (request.trunk && trunk === undefined) {
      const known = this.#trunks.map((t) => t.name).join(", ") || "none (lines.trunksFile)";
      throw new SendFaxError(`There is no trunk named ${JSON.stringify(request.trunk)}; the trunks are: ${known}`);
    }
    const route = this.#routeForSend(request, trunk ?? null);
    const allows = route.trunk ?? { t38: true, ecm: true };
    const mode: FaxMode = {
      ...modeOnTrunk(FALLBACK_LADDER[0]!, allows),
      ...(request.transport ? { transport: request.transport } : {}),
      ...(request.ecm !== undefined && request.ecm !== null ? { ecm: request.ecm } : {}),
      ...(request.maxBitRate !== undefined && request.maxBitRate !== null ? { maxBitRate: request.maxBitRate } : {}),
    };
    const release = route.trunk ? this.#takeSlot(route.trunk.name) : () => undefined;
    request.onProgress?.(
      `calling ${route.target}${route.outboundProxy ? ` via ${route.outboundProxy}` : ""} (${transportForDisplay(route)}), ` +
        `${mode.transport === "t38" ? "T.38" : "G.711"} with ECM ${mode.ecm ? "on" : "off"} up to ${mode.maxBitRate} bit/s, TSI ${JSON.stringify(route.csid)}`,
    );
    try {
      const report = await this.#withImageFile(request.image, (tiffPath) =>
        runFaxCall(this.#setup(), {
          route,
          mode,
          tiffPath,
          pageSizes: request.pageSizes,
          ...(request.signal !== undefined ? { signal: request.signal } : {}),
          ...(request.onEngineEvent !== undefined ? { onEngineEvent: request.onEngineEvent } : {}),
          ...(request.onProgress !== undefined ? { onProgress: request.onProgress } : {}),
        }),
      );
      return { route, trunk: route.trunk?.name ?? null, report };
    } finally {
      release();
    }
  }

  #routeForSend(request: SendFaxRequest, trunk: TrunkConfig | null): FaxRoute {
    const to = request.to.trim();
    if (/^sips?:/i.test(to)) {
      let uri;
      try {
        uri = parseSipUri(to);
      } catch (error) {
        throw new SendFaxError(`--to ${JSON.stringify(to)} is not a SIP URI: ${(error as Error).message}`);
      }
      if (uri.scheme === "sips") throw new SendFaxError("sips: URIs are not supported; use sip:…;transport=tls");
      const csid = faxIdent(request.csid || trunk?.csid || request.defaultCsid);
      if (trunk !== null) return { ...trunkRoute(trunk), target: to, csid, sentToNumber: to, e164: null };
      const param = uri.params.get("transport")?.toLowerCase();
      const transport: SipTransportProtocol = param === "tcp" || param === "tls" ? param : "udp";
      return {
        trunk: null,
        target: to,
        from: `sip:${encodeURIComponent(faxIdent(request.defaultCsid).replace(/\s+/g, "")) || "faxline"}@${formatHost(this.#mediaAddress)}`,
        transport,
        ringTimeoutMs: 55_000,
        csid,
        sentToNumber: to,
        e164: null,
      };
    }
    if (trunk === null) {
      const planned = planDial(to, this.#trunks, { region: this.#options.region, jobCsid: request.csid ?? null, defaultCsid: request.defaultCsid });
      if (planned.ok) return routeForPlan(planned);
      if (planned.reasonCode === null) return routeForPlan(this.#firstOfFullRoute(to, request));
      throw new SendFaxError(planned.message);
    }
    const normalized = normalizeFaxNumber(to, this.#options.region);
    if (!normalized.ok) throw new SendFaxError(normalized.message);
    const dialString = formatDialString(normalized.e164, trunk.dial, this.#options.region);
    const target = requestUriFor(trunk, dialString);
    return {
      ...trunkRoute(trunk),
      target,
      csid: faxIdent(request.csid || trunk.csid || request.defaultCsid),
      sentToNumber: dialString,
      e164: normalized.e164,
    };
  }

  /** The operator's command ignores this node's call limits (it runs in its own process). */
  #firstOfFullRoute(to: string, request: SendFaxRequest): DialPlan {
    const planned = planDial(to, this.#trunks, { region: this.#options.region, jobCsid: request.csid ?? null, defaultCsid: request.defaultCsid, activeCalls: new Map() });
    if (!planned.ok) throw new SendFaxError(planned.message);
    return planned;
  }

  async #recordCapability(e164: string, choice: ModeChoice, report: FaxCallReport, log: Logger | undefined): Promise<void> {
    const cache = this.#options.capabilities;
    if (!cache) return;
    const ran: FaxMode = report.transport === "g711" && choice.mode.transport === "t38" ? { ...choice.mode, transport: "g711" } : choice.mode;
    try {
      await cache.record(e164, {
        mode: ran,
        delivered: report.outcome.result === "delivered",
        advancesLadder: report.outcome.advancesLadder,
        t38Refused: report.t38Refused,
        bitRate: report.statistics?.bitRate ?? null,
        reasonCode: report.outcome.reasonCode,
      });
    } catch (error) {
      // The cache is advice: a failed write must not lose the attempt's outcome.
      log?.warn({ err: error }, "could not record the destination's fax capability");
    }
  }

  /**
   * Runs `run` with the image in a file of its own, removed afterwards. The engine gets it
   * uncompressed (spandsp-engine.ts, uncompressFaxTiff) unless that copy would pass
   * UNCOMPRESSED_MAX_BYTES or cannot be made; then the G4 file as it is.
   */
  async #withImageFile<T>(image: Uint8Array, run: (tiffPath: string) => Promise<T>): Promise<T> {
    const dir = await mkdtemp(path.join(this.#options.tmpDir ?? tmpdir(), "faxline-call-"));
    try {
      const file = path.join(dir, "fax.tif");
      await writeFile(file, image, { mode: 0o600 });
      const uncompressed = path.join(dir, "fax-uncompressed.tif");
      let made = false;
      try {
        made = await uncompressFaxTiff(file, uncompressed, UNCOMPRESSED_MAX_BYTES);
      } catch (error) {
        this.#options.logger?.warn({ err: error }, "the fax image could not be uncompressed for the engine; it is sent from its G4 file");
      }
      return await run(made ? uncompressed : file);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** The calls placed through `call` that run now, with their trunk and planned transport. */
  runningCalls(): RunningCallInfo[] {
    return [...this.#running].map((r) => ({ ...r }));
  }

  #takeSlot(trunk: string): () => void {
    this.#active.set(trunk, (this.#active.get(trunk) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#active.get(trunk) ?? 1) - 1;
      if (left <= 0) this.#active.delete(trunk);
      else this.#active.set(trunk, left);
      for (const wake of this.#slotWaiters.splice(0)) wake();
    };
  }

  #slotFreed(signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const onAbort = (): void => reject(signal.reason);
      const wake = (): void => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#slotWaiters.push(wake);
    });
  }

  #now(): number {
    return (this.#options.clock ?? Date).now();
  }
}

function trunkRoute(trunk: TrunkConfig): Omit<FaxRoute, "target" | "csid" | "sentToNumber" | "e164"> {
  return {
    trunk,
    from: fromUriFor(trunk),
    transport: trunk.transport,
    outboundProxy: proxyAddressFor(trunk),
    ...(trunk.username !== "" ? { credentials: { username: trunk.username, password: trunk.password } } : {}),
    ringTimeoutMs: trunk.ringTimeoutMs,
  };
}

/** The route of a dial plan: the trunk's proxy, credentials and From, the plan's target and fax id. */
export function routeForPlan(plan: DialPlan): FaxRoute {
  return { ...trunkRoute(plan.trunk), target: plan.requestUri, csid: faxIdent(plan.csid), sentToNumber: plan.sentToNumber, e164: plan.e164 };
}

/** The TLS listener's certificate and key, read from their PEM files. */
async function readTlsCredentials(certFile: string, keyFile: string): Promise<SipTlsCredentials> {
  if (certFile === "" || keyFile === "") throw new Error("a SIP TLS listener needs lines.sipTlsCertFile and lines.sipTlsKeyFile");
  const [cert, key] = await Promise.all([readFile(certFile), readFile(keyFile)]);
  return { cert, key };
}

/**
 * One drop in the log: a fault of Faxline's own as an error with its stack; what the far end
 * sent or does (garbage, floods, limits) at debug level, since a flood must not flood the log
 * too — faxline_sip_messages_dropped_total counts them all.
 */
function logDrop(log: Logger | undefined, drop: SipDrop): void {
  if (log === undefined) return;
  const fields = { reason: drop.reason, protocol: drop.protocol, remote: drop.remote, detail: drop.detail };
  if (drop.reason === "internal") log.error({ ...fields, err: drop.error }, "a SIP message failed inside Faxline: dropped (a request was answered 500)");
  else log.debug(fields, "SIP message dropped");
}

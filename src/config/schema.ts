/**
 * The single source of Faxline's configuration: every key with its type, default, environment
 * variable and description. `load.ts` reads defaults < config file < environment and validates
 * against this table; `docs/config.md` lists the same keys (a test checks they agree).
 */
import { parseDurationMs } from "../lib/durations.ts";
import { ConfigError } from "./config-error.ts";
import type { TrunkConfig } from "../line/trunks/trunk-config.ts";

export { ConfigError };

export type ConfigValueType = "string" | "integer" | "boolean" | "enum" | "duration" | "durations" | "list";

export interface ConfigKeySpec {
  /** Dotted path in the config file, e.g. `http.port`. */
  readonly path: string;
  readonly env: string;
  readonly type: ConfigValueType;
  readonly default: unknown;
  readonly description: string;
  readonly values?: readonly string[];
  readonly min?: number;
  readonly max?: number;
}

const k = (spec: ConfigKeySpec): ConfigKeySpec => Object.freeze(spec);

export const REGIONS = ["DE", "US"] as const;
export type Region = (typeof REGIONS)[number];
export const DATACENTERS = ["DE1", "DE2", "US1", "US2"] as const;
export type Datacenter = (typeof DATACENTERS)[number];
export const DATACENTER_REGION: Record<Datacenter, Region> = { DE1: "DE", DE2: "DE", US1: "US", US2: "US" };
/** The other data center of each HA region: the one that adopts a data center's jobs when it dies. */
export const PARTNER_DATACENTER: Record<Datacenter, Datacenter> = { DE1: "DE2", DE2: "DE1", US1: "US2", US2: "US1" };
export const REGION_DATACENTERS: Record<Region, readonly Datacenter[]> = { DE: ["DE1", "DE2"], US: ["US1", "US2"] };
export const ROLES = ["api", "scheduler", "sender", "notifier", "retention", "mail-to-fax"] as const;
export type Role = (typeof ROLES)[number];

export const CONFIG_KEYS: readonly ConfigKeySpec[] = [
  k({ path: "node.region", env: "FAXLINE_REGION", type: "enum", values: REGIONS, default: "DE", description: "HA region this node serves (DE or US)." }),
  k({ path: "node.datacenter", env: "FAXLINE_DATACENTER", type: "enum", values: DATACENTERS, default: "DE1", description: "Data center of this node; must lie in node.region (DE1/DE2 in DE, US1/US2 in US). Every job this node accepts belongs to it." }),
  k({ path: "node.id", env: "FAXLINE_NODE_ID", type: "string", default: "", description: "Stable node name used in leases and logs. Empty: generated once and kept in the data directory." }),
  k({ path: "node.roles", env: "FAXLINE_ROLES", type: "list", values: ROLES, default: ["api", "scheduler", "sender", "notifier", "retention"], description: "Roles this node runs, comma-separated: api, scheduler, sender, notifier (status pushes and mails), retention, mail-to-fax (the SMTP listener that turns mails into fax jobs; not in the default set, see mailToFax.domains)." }),
  k({ path: "node.shutdownGrace", env: "FAXLINE_NODE_SHUTDOWN_GRACE", type: "duration", default: "90s", description: "On SIGTERM or SIGINT the node drains: the API answers 503 to new requests (its readiness probe says draining), no new work is taken and no new inbound call answered, and calls in progress (faxes being sent or received) may end on their own for this long; those still running then are hung up (a send is redialled after the restart, from page 1). Within the same time the notifications due when the calls ended (their status pushes and mails) are delivered, one try each, before the node exits. Give the service manager a stop timeout above it (systemd's TimeoutStopSec, Kubernetes' terminationGracePeriodSeconds). A second signal exits at once." }),
  k({ path: "http.host", env: "FAXLINE_HOST", type: "string", default: "0.0.0.0", description: "Address the REST API listens on." }),
  k({ path: "http.port", env: "FAXLINE_PORT", type: "integer", min: 0, max: 65535, default: 8080, description: "TCP port of the REST API (0 picks a free port)." }),
  k({ path: "http.bodyLimitBytes", env: "FAXLINE_HTTP_BODY_LIMIT_BYTES", type: "integer", min: 1024, default: 100 * 1024 * 1024, description: "Largest accepted request body in bytes (documents arrive base64-encoded, about 4/3 of their size)." }),
  k({ path: "http.trustProxy", env: "FAXLINE_HTTP_TRUST_PROXY", type: "boolean", default: false, description: "Take the client address from X-Forwarded-For (only behind a trusted reverse proxy); IP allow-lists use that address." }),
  k({ path: "store.dataDir", env: "FAXLINE_DATA_DIR", type: "string", default: "./data", description: "Directory of the embedded SQLite store (faxline.sqlite, when store.url is empty), the node identity file and the node's lock." }),
  k({ path: "store.url", env: "FAXLINE_STORE_URL", type: "string", default: "", description: "Empty: the embedded SQLite store under store.dataDir. postgres://USER:PASSWORD@HOST[:PORT][,HOST2[:PORT]…]/DATABASE[?target_session_attrs=read-write&sslmode=require…] (or postgresql://): a PostgreSQL database shared by every node that names it (docs/architecture.md, \"Several nodes\"). With several hosts, the node connects to the one that accepts writes when target_session_attrs=read-write is given, and finds it again after a failover." }),
  k({ path: "store.poolSize", env: "FAXLINE_STORE_POOL_SIZE", type: "integer", min: 1, max: 1000, default: 10, description: "PostgreSQL: connections this node keeps open at most (one more listens for wake-ups from other nodes)." }),
  k({ path: "store.statementTimeout", env: "FAXLINE_STORE_STATEMENT_TIMEOUT", type: "duration", default: "30s", description: "PostgreSQL: longest a single statement may run before the database cancels it; an API request that hits it answers 503." }),
  k({ path: "store.connectTimeout", env: "FAXLINE_STORE_CONNECT_TIMEOUT", type: "duration", default: "10s", description: "PostgreSQL: time limit for opening a connection (per host tried), in whole seconds." }),
  k({ path: "cluster.heartbeatInterval", env: "FAXLINE_CLUSTER_HEARTBEAT_INTERVAL", type: "duration", default: "5s", description: "How often a node writes its row in the node registry (faxline nodes); a node silent for three intervals is shown as not responding." }),
  k({ path: "cluster.failoverAfter", env: "FAXLINE_CLUSTER_FAILOVER_AFTER", type: "duration", default: "2m", description: "A data center is dead when none of its nodes has written a heartbeat for this long; a node of the other data center of the region (on the same store) then adopts all of its jobs: they are sent, reported and pushed from there. Keep it well above cluster.heartbeatInterval and the time a database failover takes." }),
  k({ path: "cluster.forgetNodesAfter", env: "FAXLINE_CLUSTER_FORGET_NODES_AFTER", type: "duration", default: "7d", description: "Nodes that stopped, or have written no heartbeat, this long ago are removed from the node registry (faxline nodes, the console's Operations page) by the retention role. At least 1h and at least cluster.failoverAfter: a data center none of whose nodes is in the registry counts as dead. A node that comes back after it was removed writes its row again." }),
  k({ path: "cluster.dutyLease", env: "FAXLINE_CLUSTER_DUTY_LEASE", type: "duration", default: "30s", description: "Lease on a singleton duty (the sweeps and the retention purge of a data center, done by one node at a time); when its node stops or dies, another node takes the duty over within this time." }),
  k({ path: "log.level", env: "FAXLINE_LOG_LEVEL", type: "enum", values: ["fatal", "error", "warn", "info", "debug", "trace", "silent"], default: "info", description: "Log level of the structured (JSON) log on standard output." }),
  k({ path: "jobs.maxRecipients", env: "FAXLINE_JOBS_MAX_RECIPIENTS", type: "integer", min: 1, default: 1000, description: "Most recipients one job may have." }),
  k({ path: "jobs.maxDocuments", env: "FAXLINE_JOBS_MAX_DOCUMENTS", type: "integer", min: 1, default: 50, description: "Most documents one job may have." }),
  k({ path: "jobs.maxDocumentBytes", env: "FAXLINE_JOBS_MAX_DOCUMENT_BYTES", type: "integer", min: 1, default: 20 * 1024 * 1024, description: "Largest document in bytes (decoded), inline or fetched." }),
  k({ path: "jobs.maxJobBytes", env: "FAXLINE_JOBS_MAX_JOB_BYTES", type: "integer", min: 1, default: 50 * 1024 * 1024, description: "Largest total of all inline documents of one job in bytes (decoded)." }),
  k({ path: "jobs.maxPages", env: "FAXLINE_JOBS_MAX_PAGES", type: "integer", min: 1, default: 500, description: "Most pages one job may render to." }),
  k({ path: "jobs.defaultValidity", env: "FAXLINE_JOBS_DEFAULT_VALIDITY", type: "string", default: "P1M", description: "ISO-8601 duration a job stays valid after its start when jobValid.end is absent (the contract: one month)." }),
  k({ path: "jobs.maxValidity", env: "FAXLINE_JOBS_MAX_VALIDITY", type: "string", default: "P1Y", description: "Longest validity a job may ask for (ISO-8601 duration): a jobValid.end further from the start is cut to start + this, and a jobValid.start further ahead than this is refused (400 job_valid_invalid). Keeps the promise that every job ends." }),
  k({ path: "jobs.deadlineGrace", env: "FAXLINE_JOBS_DEADLINE_GRACE", type: "duration", default: "2h", description: "Hard deadline = end of validity + this grace; a recipient still unfinished then is ended with deadline_exceeded, whatever its state." }),
  k({ path: "documents.fetchTimeout", env: "FAXLINE_DOCUMENTS_FETCH_TIMEOUT", type: "duration", default: "30s", description: "Time limit for fetching one referenced document (connect, headers and body)." }),
  k({ path: "documents.fetchMaxRedirects", env: "FAXLINE_DOCUMENTS_FETCH_MAX_REDIRECTS", type: "integer", min: 0, max: 20, default: 5, description: "Redirects followed when fetching a referenced document." }),
  k({ path: "documents.fetchAllowPrivateTargets", env: "FAXLINE_DOCUMENTS_FETCH_ALLOW_PRIVATE_TARGETS", type: "boolean", default: false, description: "Allow reference URLs that resolve to loopback, private, link-local or other internal addresses. Off by default (SSRF guard)." }),
  k({ path: "render.timeout", env: "FAXLINE_RENDER_TIMEOUT", type: "duration", default: "2m", description: "Time limit for rendering one job's fax image (rasterising and encoding all of its pages, in a worker thread). A job that takes longer fails with render_failed; keep it below scheduler.renderLease." }),
  k({ path: "render.concurrency", env: "FAXLINE_RENDER_CONCURRENCY", type: "integer", min: 1, default: 2, description: "Jobs one node renders at once, each in a worker thread of its own (with render.workerMemory each). A customer that is rendering a job gets a second slot only when no other customer's job waits, so one customer's long job never holds up the others." }),
  k({ path: "render.workerMemory", env: "FAXLINE_RENDER_WORKER_MEMORY", type: "integer", min: 64, default: 1536, description: "Heap limit of the render worker thread in MB. A document that needs more fails with render_failed and the node carries on." }),
  k({ path: "render.pageThreads", env: "FAXLINE_RENDER_PAGE_THREADS", type: "integer", min: 0, max: 64, default: 0, description: "Threads that render the pages of one long document (a PDF, or an office, HTML or PostScript document converted to one, of 4 pages or more), or of PDFs that follow each other in a job (4 pages or more in all), at once: the render worker and render.pageThreads − 1 page helper threads, each with render.workerMemory. 0 (the default): the cores the process may use, divided among the render.concurrency render workers of a node (a preview worker counts as one more; faxline render and fax send get all); 1: pages one after another." }),
  k({ path: "render.pdfRenderer", env: "FAXLINE_RENDER_PDF_RENDERER", type: "enum", values: ["auto", "native", "wasm"], default: "auto", description: "How PDF pages (and documents converted to PDF) are drawn; both ways draw the same pages (two releases of PDFium: at most a few anti-aliased edge pixels differ). native: PDFium as native code (the prebuilt library of the npm package pdfium-node-linux-x64-gnu; Linux on x86-64), about twice as fast; wasm: PDFium compiled to WebAssembly, slower, but a damaged or hostile PDF that breaks PDFium cannot reach past WebAssembly's sandbox into the node; auto: native where it loads, else wasm. A node logs which one it uses as it starts (node started: pdfRenderer), and with native where that cannot load it refuses to start." }),
  k({ path: "render.maxSourcePixels", env: "FAXLINE_RENDER_MAX_SOURCE_PIXELS", type: "integer", min: 1_000_000, default: 200_000_000, description: "Most pixels of one decoded image or rendered source page before it is scaled to the fax page (guards against decompression bombs); more fails the job with document_too_large." }),
  k({ path: "render.converterTimeout", env: "FAXLINE_RENDER_CONVERTER_TIMEOUT", type: "duration", default: "60s", description: "Time limit of one conversion of an office, HTML or PostScript document to PDF (LibreOffice, Ghostscript subprocess); a converter that takes longer is killed and the job fails with document_unreadable. Keep it below render.timeout." }),
  k({ path: "render.defaultTimeZone", env: "FAXLINE_RENDER_DEFAULT_TIME_ZONE", type: "string", default: "UTC", description: "IANA time zone of dates in header lines and cover pages when the header names none with %tz=." }),
  k({ path: "render.largePageSeconds", env: "FAXLINE_RENDER_LARGE_PAGE_SECONDS", type: "integer", min: 1, default: 90, description: "Preflight: a page whose estimated line time at 14.4 kbit/s exceeds this many seconds is flagged as very large." }),
  k({ path: "scheduler.pollInterval", env: "FAXLINE_SCHEDULER_POLL_INTERVAL", type: "duration", default: "500ms", description: "How often idle roles look for due work (new jobs on the same node wake them at once)." }),
  k({ path: "scheduler.renderLease", env: "FAXLINE_SCHEDULER_RENDER_LEASE", type: "duration", default: "5m", description: "Lease on a job while it renders; a node that dies mid-render loses it after this time." }),
  k({ path: "scheduler.sendLease", env: "FAXLINE_SCHEDULER_SEND_LEASE", type: "duration", default: "2m", description: "Lease on a recipient while a call runs; renewed every third of it. A dead node's call is abandoned after this time." }),
  k({ path: "scheduler.renderAttempts", env: "FAXLINE_SCHEDULER_RENDER_ATTEMPTS", type: "integer", min: 1, default: 3, description: "Times a job's rendering is tried before the job fails with render_failed." }),
  k({ path: "sender.channels", env: "FAXLINE_SENDER_CHANNELS", type: "integer", min: 1, max: 1000, default: 30, description: "Calls this node runs at once." }),
  k({ path: "sender.callsPerNumber", env: "FAXLINE_SENDER_CALLS_PER_NUMBER", type: "integer", min: 1, max: 100, default: 1, description: "Calls at once to one destination number, counted over all nodes that share this store (with the embedded store: this node)." }),
  k({ path: "sender.csid", env: "FAXLINE_SENDER_CSID", type: "string", default: "Faxline", description: "Sender fax id (CSID) used when a job names none." }),
  k({ path: "retry.maxAttempts", env: "FAXLINE_RETRY_MAX_ATTEMPTS", type: "integer", min: 1, max: 100, default: 15, description: "Most call attempts per recipient, over all of its numbers." }),
  k({ path: "retry.busy", env: "FAXLINE_RETRY_BUSY", type: "durations", default: ["3m", "3m", "5m", "5m", "10m", "10m", "15m", "15m", "30m"], description: "Waits before each retry after a busy line; the list length is the retry budget." }),
  k({ path: "retry.noAnswer", env: "FAXLINE_RETRY_NO_ANSWER", type: "durations", default: ["5m", "10m", "15m", "30m", "60m"], description: "Waits before each retry after a ring timeout." }),
  k({ path: "retry.noFax", env: "FAXLINE_RETRY_NO_FAX", type: "durations", default: ["10m", "30m"], description: "Waits before each retry when a person, answering machine or silence answered." }),
  k({ path: "retry.protocol", env: "FAXLINE_RETRY_PROTOCOL", type: "durations", default: ["1m", "2m", "5m", "10m", "15m"], description: "Waits before each retry after a fax protocol failure or remote disconnect." }),
  k({ path: "retry.internal", env: "FAXLINE_RETRY_INTERNAL", type: "durations", default: ["30s", "1m", "2m", "5m", "10m"], description: "Waits before each retry after a call set-up or node failure." }),
  k({ path: "lines.trunksFile", env: "FAXLINE_LINES_TRUNKS_FILE", type: "string", default: "", description: "YAML file listing the SIP trunks this node sends real faxes over (docs/trunks.md): proxy, credentials, caller number, dial format, route prefixes, call limit, T.38 and ECM. Read and checked at start; a relative path is taken from the working directory. Empty: no trunks, so only test accounts can send." }),
  k({ path: "lines.capabilityMaxAge", env: "FAXLINE_LINES_CAPABILITY_MAX_AGE", type: "duration", default: "30d", description: "How long what a destination's fax machine was last seen to do (the transport, ECM and speed that worked, or the fallback step that failed) is trusted. Older knowledge is ignored: the next call starts again with T.38 and ECM." }),
  k({ path: "lines.localAddress", env: "FAXLINE_LINES_LOCAL_ADDRESS", type: "string", default: "", description: "Local IPv4 address the SIP line binds its SIP and media (RTP, UDPTL) sockets to and writes into Via, Contact and SDP. Empty: the first non-loopback IPv4 address of the host. Only used when trunks are configured." }),
  k({ path: "lines.advertisedAddress", env: "FAXLINE_LINES_ADVERTISED_ADDRESS", type: "string", default: "", description: "Address written into Via, Contact and SDP instead of lines.localAddress, for a node behind static NAT (its public address). Empty: the local address." }),
  k({ path: "lines.sipPort", env: "FAXLINE_LINES_SIP_PORT", type: "integer", min: 0, max: 65535, default: 5060, description: "UDP port of the SIP line. 0 takes a free port. Outgoing TCP and TLS connect from ephemeral ports; lines.sipTcpPort and lines.sipTlsPort listen for calls coming in." }),
  k({ path: "lines.sipTcpPort", env: "FAXLINE_LINES_SIP_TCP_PORT", type: "integer", min: -1, max: 65535, default: -1, description: "TCP port the SIP line listens on for calls coming in (5060 is usual); the same admission checks, flood limits and guard as UDP, and the connection bounds below. -1: no TCP listener (outgoing calls over TCP still work). 0 takes a free port." }),
  k({ path: "lines.sipTlsPort", env: "FAXLINE_LINES_SIP_TLS_PORT", type: "integer", min: -1, max: 65535, default: -1, description: "TLS port the SIP line listens on for calls coming in (5061 is usual), with lines.sipTlsCertFile and lines.sipTlsKeyFile. -1: no TLS listener. 0 takes a free port." }),
  k({ path: "lines.sipTlsCertFile", env: "FAXLINE_LINES_SIP_TLS_CERT_FILE", type: "string", default: "", description: "PEM certificate (with its chain) the TLS listener presents; read at start and again on SIGHUP (connections open keep the old one)." }),
  k({ path: "lines.sipTlsKeyFile", env: "FAXLINE_LINES_SIP_TLS_KEY_FILE", type: "string", default: "", description: "PEM private key of lines.sipTlsCertFile; read at start and on SIGHUP." }),
  k({ path: "lines.sipConnectionsPerSource", env: "FAXLINE_LINES_SIP_CONNECTIONS_PER_SOURCE", type: "integer", min: 1, max: 10000, default: 20, description: "TCP/TLS connections the SIP listeners accept from one address at once; more are closed at once (faxline_sip_messages_dropped_total{reason=\"connection_limit\"})." }),
  k({ path: "lines.sipMaxConnections", env: "FAXLINE_LINES_SIP_MAX_CONNECTIONS", type: "integer", min: 1, max: 100000, default: 1000, description: "TCP/TLS connections the SIP listeners accept in all at once." }),
  k({ path: "lines.sipConnectionIdle", env: "FAXLINE_LINES_SIP_CONNECTION_IDLE", type: "duration", default: "1h", description: "An accepted TCP/TLS connection that carries no SIP message for this long is closed (one that sends no first message, or does not finish its TLS handshake, within 10 s is closed sooner). Keep it above a call's length: our requests inside a call go back over the connection the call came on." }),
  k({ path: "lines.sipRequestRate", env: "FAXLINE_LINES_SIP_REQUEST_RATE", type: "integer", min: 1, max: 100000, default: 100, description: "SIP requests per second the line takes from one source address (bursts of four times that); more are dropped unanswered (reason rate_limited)." }),
  k({ path: "lines.sipInviteRate", env: "FAXLINE_LINES_SIP_INVITE_RATE", type: "integer", min: 1, max: 10000, default: 20, description: "New INVITEs per second the line takes from one source address (bursts of three times that). Over it a trunk's address gets 503 with Retry-After (the carrier tries another route or node), any other address silence." }),
  k({ path: "lines.sipRefusalsPerMinute", env: "FAXLINE_LINES_SIP_REFUSALS_PER_MINUTE", type: "integer", min: 0, max: 10000, default: 20, description: "403 answers per minute to an address that is no trunk's (a scanner); past that its INVITEs get no answer at all (reason refused_source)." }),
  k({ path: "lines.sipLockoutFailures", env: "FAXLINE_LINES_SIP_LOCKOUT_FAILURES", type: "integer", min: 1, max: 1000, default: 5, description: "Wrong digest answers (inbound trunks with inboundUsername) from one address within 10 minutes that lock it out for lines.sipLockout: its INVITEs then get no answer (reason locked_out)." }),
  k({ path: "lines.sipLockout", env: "FAXLINE_LINES_SIP_LOCKOUT", type: "duration", default: "15m", description: "How long an address stays locked out after lines.sipLockoutFailures wrong digest answers." }),
  k({ path: "lines.mediaPorts", env: "FAXLINE_LINES_MEDIA_PORTS", type: "string", default: "20000-29999", description: "UDP port range FIRST-LAST for media: each call takes four ports, an even one for RTP (G.711), the odd one after it for RTCP and the next even one for UDPTL (T.38), used symmetrically (sent from where they receive). Open it in the firewall towards the carriers." }),
  k({ path: "lines.dnsServers", env: "FAXLINE_LINES_DNS_SERVERS", type: "list", default: [], description: "DNS servers (192.0.2.53 or 192.0.2.53:5353) the SIP line asks for trunk host names: SRV records (_sip._udp, _sip._tcp, _sips._tcp) for a host named without a port, then A/AAAA. Empty: the system's resolver (/etc/resolv.conf)." }),
  k({ path: "lines.pacingCapacity", env: "FAXLINE_LINES_PACING_CAPACITY", type: "integer", min: 1, max: 10000, default: 100, description: "Fax calls one core paces in real time (within 5 ms per 20 ms packet), as npm run bench:lines measured it on this kind of machine (docs/benchmarks.md: 100 G.711 calls, the costlier kind, with the node's API busy on the same core; T.38 alone, 500 coming and going over 20 s, and 300 starting together in some runs). At start, a node whose sender.channels, inbound.channels and trunks' maxCalls allow more gets a warning in its log." }),
  k({ path: "lines.mediaProcess", env: "FAXLINE_LINES_MEDIA_PROCESS", type: "boolean", default: true, description: "Run the fax engines and their media (SpanDSP, UDPTL, RTP) in a process of their own beside the node, so that the node's API, store and garbage collection never delay a call's 20 ms ticks and an engine crash ends only its calls (engine_lost, retried). Off: on the node's own event loop." }),
  k({ path: "lines.mediaProcesses", env: "FAXLINE_LINES_MEDIA_PROCESSES", type: "integer", min: 0, max: 32, default: 0, description: "How many media processes run the fax engines (each call goes to the one with the fewest): a crash costs only its own process's calls, and on several cores they run side by side; on one core more processes cost more CPU than they give (docs/benchmarks.md). 0: one per 75 calls the node may run at once (sender.channels, inbound.channels and the trunks' maxCalls), at most the machine's cores but one, 1 to 8. About 50 MiB each." }),
  k({ path: "lines.mediaNice", env: "FAXLINE_LINES_MEDIA_NICE", type: "integer", min: -20, max: 19, default: -20, description: "The media process's nice value: below the node's, so that a call's 20 ms tick runs at once when the node's API is busy on the same core (npm run bench:lines -- --api-load: 500 T.38 calls paced within 5 ms in 6 of 6 runs at -20, 4 of 6 at -10). A media process paces on one thread, and with lines.mediaProcesses 0 a node starts at most its cores but one, so the API keeps a core; set explicitly to as many processes as cores, raise this value. Needs root or CAP_SYS_NICE; refused, the node logs a warning and the process keeps the node's value." }),
  k({ path: "lines.clockSpeed", env: "FAXLINE_LINES_CLOCK_SPEED", type: "integer", min: 1, max: 1000, default: 1, description: "For tests only: runs the fax engine's clock this many times faster than real time, against a test peer running at the same speed. Anything but 1 breaks calls to real fax machines." }),
  k({ path: "testLine.timeScale", env: "FAXLINE_TEST_LINE_TIME_SCALE", type: "string", default: "1", description: "Factor applied to the simulated call time of test accounts (0.01 runs a 60 s call in 0.6 s; reports still show the unscaled duration)." }),
  k({ path: "auth.maxFailures", env: "FAXLINE_AUTH_MAX_FAILURES", type: "integer", min: 1, default: 5, description: "Failed logins from one address for one login before further tries are refused for auth.lockout." }),
  k({ path: "auth.lockout", env: "FAXLINE_AUTH_LOCKOUT", type: "duration", default: "5m", description: "How long a login is refused (429) from an address after auth.maxFailures failures; doubles on each further lockout, up to 1 hour." }),
  k({ path: "auth.cacheTtl", env: "FAXLINE_AUTH_CACHE_TTL", type: "duration", default: "60s", description: "How long a verified password is remembered in memory, so that the slow hash runs once per login and minute rather than per request." }),
  k({ path: "inbound.retentionDays", env: "FAXLINE_INBOUND_RETENTION_DAYS", type: "integer", min: 1, default: 7, description: "Days a received fax is kept, fetched or not, when its topic sets no period of its own (the provider's pull API promises 7)." }),
  k({ path: "inbound.channels", env: "FAXLINE_INBOUND_CHANNELS", type: "integer", min: 1, max: 1000, default: 30, description: "Faxes this node receives at once over its inbound trunks (docs/trunks.md: inbound); a call beyond it is refused with 486 Busy Here so the carrier can try another node." }),
  k({ path: "inbound.spoolDir", env: "FAXLINE_INBOUND_SPOOL_DIR", type: "string", default: "", description: "Where this node receives faxes before they are stored (docs/adr/0020-durable-reception.md): a directory per reception with its record, progress and pages, each page fsynced before the caller is told it arrived (MCF); removed once stored, and stored at the next start when the node stopped or died first. Empty: <store.dataDir>/receptions. Local to the node: another node cannot finish what is left here." }),
  k({ path: "inbound.lockTimeout", env: "FAXLINE_INBOUND_LOCK_TIMEOUT", type: "duration", default: "60s", description: "How long a received fax handed out by the pull API is hidden from other pollers when the request names no timeout; unacknowledged, it is then offered again." }),
  k({ path: "console.enabled", env: "FAXLINE_CONSOLE_ENABLED", type: "boolean", default: true, description: "Serve the web console at /console/ (and redirect / there). Off: both answer 404; the REST API is unaffected." }),
  k({ path: "console.sessionIdle", env: "FAXLINE_CONSOLE_SESSION_IDLE", type: "duration", default: "30m", description: "A console session ends after this long without a request; each request moves the end forward." }),
  k({ path: "console.sessionMax", env: "FAXLINE_CONSOLE_SESSION_MAX", type: "duration", default: "12h", description: "A console session ends this long after sign-in, however active it is." }),
  k({ path: "console.chartInterval", env: "FAXLINE_CONSOLE_CHART_INTERVAL", type: "duration", default: "5s", description: "How often a node serving the console samples the region's calls, queues and its own render times for the Operations page's live charts (kept in memory)." }),
  k({ path: "console.chartWindow", env: "FAXLINE_CONSOLE_CHART_WINDOW", type: "duration", default: "1h", description: "How far back the Operations page's live charts reach: the node keeps console.chartWindow / console.chartInterval samples (at most 10 000)." }),
  k({ path: "retention.defaultDays", env: "FAXLINE_RETENTION_DEFAULT_DAYS", type: "integer", min: 1, default: 30, description: "Days a completed job's report is kept when its customer sets no retention of its own." }),
  k({ path: "retention.interval", env: "FAXLINE_RETENTION_INTERVAL", type: "duration", default: "1m", description: "How often the retention role purges." }),
  k({ path: "retention.batchSize", env: "FAXLINE_RETENTION_BATCH_SIZE", type: "integer", min: 1, default: 500, description: "Rows purged per statement; batches keep the store responsive." }),
  k({ path: "reporting.enabled", env: "FAXLINE_REPORTING_ENABLED", type: "boolean", default: true, description: "Serve the reporting interface (docs/reporting.md): GraphQL at /graphql and the exports under /reporting/v1, on nodes with the api role. Off: both answer 404. The rollups are kept either way." }),
  k({ path: "reporting.maxQuerySpan", env: "FAXLINE_REPORTING_MAX_QUERY_SPAN", type: "duration", default: "45d", description: "Longest datePeriod of one usage-record query (faxOutUdrReport, faxInUdrReport), as the provider's reporting API allows (45 days); a longer one is refused with date_period_too_long. Exports may span the whole history." }),
  k({ path: "reporting.history", env: "FAXLINE_REPORTING_HISTORY", type: "duration", default: "90d", description: "How far back from now usage records may be asked for (the provider keeps 90 days); a datePeriod that starts earlier is refused with date_period_too_old. Records exist only as long as their jobs and receptions (retention.defaultDays, inbound.retentionDays); the aggregates' daily rollups outlive them (reporting.rollupRetention)." }),
  k({ path: "reporting.maxSummarySpan", env: "FAXLINE_REPORTING_MAX_SUMMARY_SPAN", type: "duration", default: "400d", description: "Longest datePeriod of one aggregate query (faxOutSummary, faxOutCallSummary, faxInSummary, faxOutFailingDestinations): they read daily rollups, so a year costs little." }),
  k({ path: "reporting.rollupRetention", env: "FAXLINE_REPORTING_ROLLUP_RETENTION", type: "duration", default: "800d", description: "How long the daily rollups behind the aggregate queries are kept; the retention role deletes older days." }),
  k({ path: "reporting.maxPageSize", env: "FAXLINE_REPORTING_MAX_PAGE_SIZE", type: "integer", min: 1, max: 100000, default: 10000, description: "Largest page (size) of a usage-record query, as the provider's (10 000); a larger one is refused with page_invalid." }),
  k({ path: "reporting.defaultPageSize", env: "FAXLINE_REPORTING_DEFAULT_PAGE_SIZE", type: "integer", min: 1, max: 100000, default: 100, description: "Page size of a usage-record query that names none." }),
  k({ path: "reporting.maxDepth", env: "FAXLINE_REPORTING_MAX_DEPTH", type: "integer", min: 2, max: 100, default: 8, description: "Deepest nesting of fields a GraphQL query may have (the provider's queries need 3; introspection needs more); deeper ones are refused with query_too_deep before they run." }),
  k({ path: "reporting.maxCost", env: "FAXLINE_REPORTING_MAX_COST", type: "integer", min: 100, default: 1000000, description: "Most a GraphQL query may cost before it runs: every field costs 1, and a list's fields cost once per row it may return (a usage-record page: its size; aggregate rows: their limit). A page of 10 000 records with all 45 fields costs about 460 000. Dearer queries are refused with query_too_costly." }),
  k({ path: "push.timeout", env: "FAXLINE_PUSH_TIMEOUT", type: "duration", default: "15s", description: "Time limit for one status push request (connect, send, answer), and for fetching an OAuth2 token." }),
  k({ path: "push.retrySchedule", env: "FAXLINE_PUSH_RETRY_SCHEDULE", type: "durations", default: ["30s", "1m", "2m", "5m", "10m", "30m", "1h", "2h", "4h", "8h", "12h", "12h", "12h", "12h", "12h"], description: "Waits before each retry of a status push that failed (network error, timeout, or any answer but 2xx and 410 Gone, which is not retried); about three days in all. After the last one the push is given up (it can still be redelivered by hand)." }),
  k({ path: "push.jitterPercent", env: "FAXLINE_PUSH_JITTER_PERCENT", type: "integer", min: 0, max: 100, default: 20, description: "Random spread applied to each retry wait, in percent either way, so that pushes to a receiver that was down do not all arrive at once." }),
  k({ path: "push.maxRetryAfter", env: "FAXLINE_PUSH_MAX_RETRY_AFTER", type: "duration", default: "6h", description: "Longest Retry-After (from a 429 or 503) that is honoured; longer ones are cut to this." }),
  k({ path: "push.concurrency", env: "FAXLINE_PUSH_CONCURRENCY", type: "integer", min: 1, max: 1000, default: 16, description: "Notifications (pushes and mails) this node delivers at once." }),
  k({ path: "push.perReceiverConcurrency", env: "FAXLINE_PUSH_PER_RECEIVER_CONCURRENCY", type: "integer", min: 1, max: 100, default: 4, description: "Pushes this node sends at once to one receiver (scheme, host and port)." }),
  k({ path: "push.allowTargets", env: "FAXLINE_PUSH_ALLOW_TARGETS", type: "list", default: [], description: "Addresses or CIDR blocks (127.0.0.1, 10.0.0.0/8, ::1) that status pushes may reach although they are loopback, private or link-local. Empty: such targets are refused (SSRF guard)." }),
  k({ path: "sftp.timeout", env: "FAXLINE_SFTP_TIMEOUT", type: "duration", default: "60s", description: "Time limit for one fax-to-SFTP try: connecting, the SSH handshake and login, writing the document and metadata file and renaming them." }),
  k({ path: "sftp.retrySchedule", env: "FAXLINE_SFTP_RETRY_SCHEDULE", type: "durations", default: ["30s", "1m", "2m", "5m", "10m", "30m", "1h", "2h", "4h", "8h", "12h", "12h", "12h", "12h", "12h"], description: "Waits before each retry of a fax-to-SFTP delivery that failed (server down or unreachable, login refused, directory missing or not writable, disk full); about three days in all, as status pushes. A server whose host key is not the pinned one is not retried. After the last one the delivery is given up (it can still be redelivered from the console)." }),
  k({ path: "sftp.allowTargets", env: "FAXLINE_SFTP_ALLOW_TARGETS", type: "list", default: [], description: "Addresses or CIDR blocks (10.0.0.0/8, 192.0.2.7, ::1) that fax-to-SFTP may connect to although they are loopback, private or link-local (an SFTP server on the local network). Empty: such servers are refused, as push.allowTargets does for pushes (SSRF guard)." }),
  k({ path: "mailToFax.domains", env: "FAXLINE_MAIL_TO_FAX_DOMAINS", type: "list", default: [], description: "Mail domains whose addresses are fax numbers (number@domain, e.g. fax.example.com), comma-separated: the mail-to-fax role takes mail for these domains only. Required when node.roles has mail-to-fax; their MX records point at the node (or at the relay in front of it)." }),
  k({ path: "mailToFax.host", env: "FAXLINE_MAIL_TO_FAX_HOST", type: "string", default: "0.0.0.0", description: "Address the mail-to-fax SMTP listener binds." }),
  k({ path: "mailToFax.port", env: "FAXLINE_MAIL_TO_FAX_PORT", type: "integer", min: 0, max: 65535, default: 2525, description: "TCP port of the mail-to-fax SMTP listener (25 in front of the internet needs root or a port redirect; 0 picks a free port)." }),
  k({ path: "mailToFax.hostname", env: "FAXLINE_MAIL_TO_FAX_HOSTNAME", type: "string", default: "", description: "Name the SMTP listener greets with (220 NAME); empty: the machine's host name." }),
  k({ path: "mailToFax.tlsCertFile", env: "FAXLINE_MAIL_TO_FAX_TLS_CERT_FILE", type: "string", default: "", description: "PEM certificate (with its chain) for STARTTLS; with mailToFax.tlsKeyFile the listener offers STARTTLS, without them it offers none." }),
  k({ path: "mailToFax.tlsKeyFile", env: "FAXLINE_MAIL_TO_FAX_TLS_KEY_FILE", type: "string", default: "", description: "PEM private key of mailToFax.tlsCertFile." }),
  k({ path: "mailToFax.requireTls", env: "FAXLINE_MAIL_TO_FAX_REQUIRE_TLS", type: "boolean", default: false, description: "Refuse MAIL FROM until the client has started TLS (530 5.7.0). Needs mailToFax.tlsCertFile." }),
  k({ path: "mailToFax.maxMessageBytes", env: "FAXLINE_MAIL_TO_FAX_MAX_MESSAGE_BYTES", type: "integer", min: 1024, default: 25 * 1024 * 1024, description: "Largest mail in bytes as transferred (attachments base64-encoded, about 4/3 of their size); announced with SIZE, a larger mail is refused with 552 5.3.4. The job limits (jobs.maxDocumentBytes, jobs.maxJobBytes) apply to its documents too." }),
  k({ path: "mailToFax.maxRecipients", env: "FAXLINE_MAIL_TO_FAX_MAX_RECIPIENTS", type: "integer", min: 1, max: 1000, default: 100, description: "Fax addresses one mail may have; more are answered 452 4.5.3 (the sending server sends them in another mail)." }),
  k({ path: "mailToFax.maxConnections", env: "FAXLINE_MAIL_TO_FAX_MAX_CONNECTIONS", type: "integer", min: 1, max: 100000, default: 100, description: "SMTP connections the listener holds at once; more are answered 421 and closed." }),
  k({ path: "mailToFax.maxConnectionsPerAddress", env: "FAXLINE_MAIL_TO_FAX_MAX_CONNECTIONS_PER_ADDRESS", type: "integer", min: 1, max: 10000, default: 10, description: "SMTP connections from one client address at once; more are answered 421 and closed." }),
  k({ path: "mailToFax.socketTimeout", env: "FAXLINE_MAIL_TO_FAX_SOCKET_TIMEOUT", type: "duration", default: "60s", description: "An SMTP connection on which the client sends nothing for this long is closed." }),
  k({ path: "mailToFax.trustedRelays", env: "FAXLINE_MAIL_TO_FAX_TRUSTED_RELAYS", type: "list", default: [], description: "Addresses or CIDR blocks of the mail servers in front of the listener whose Authentication-Results header (SPF, DKIM, DMARC) is believed (docs/mail-to-fax.md \"Who may send\"). When set, the listener takes mail only from them (others: 550 5.7.1). Empty: no results are believed; senders need a PIN (or mailToFax.usersWithoutProof)." }),
  k({ path: "mailToFax.authservId", env: "FAXLINE_MAIL_TO_FAX_AUTHSERV_ID", type: "string", default: "", description: "The authserv-id the trusted relays write into Authentication-Results (usually their host name, e.g. mx.example.com); only headers with this id are read." }),
  k({ path: "mailToFax.usersWithoutProof", env: "FAXLINE_MAIL_TO_FAX_USERS_WITHOUT_PROOF", type: "boolean", default: false, description: "Take mail of a mail-to-fax user without PIN on its address alone, without the trusted relay's SPF/DKIM/DMARC confirmation. Only for a listener that nothing but the organisation's own mail server can reach: a sender address is forged in one line." }),
  k({ path: "mailToFax.pinMaxFailures", env: "FAXLINE_MAIL_TO_FAX_PIN_MAX_FAILURES", type: "integer", min: 1, max: 1000, default: 5, description: "Wrong PINs from one client address for one PIN (a user's, or a domain's over all its addresses) before mails giving it are answered 450 4.7.1 for mailToFax.pinLockout (each wrong PIN is logged at warn; counted in the store, for all nodes)." }),
  k({ path: "mailToFax.pinLockout", env: "FAXLINE_MAIL_TO_FAX_PIN_LOCKOUT", type: "duration", default: "15m", description: "How long a PIN is refused from an address after mailToFax.pinMaxFailures wrong guesses; wrong PINs older than this no longer count." }),
  k({ path: "mail.host", env: "FAXLINE_MAIL_HOST", type: "string", default: "", description: "SMTP server for e-mail status reports. Empty: e-mail reports are not sent, and each one is logged on its job as failed." }),
  k({ path: "mail.port", env: "FAXLINE_MAIL_PORT", type: "integer", min: 1, max: 65535, default: 25, description: "SMTP port (25, 587 for submission with STARTTLS, 465 for TLS)." }),
  k({ path: "mail.security", env: "FAXLINE_MAIL_SECURITY", type: "enum", values: ["opportunistic", "starttls", "tls", "none"], default: "opportunistic", description: "opportunistic: STARTTLS when the server offers it; starttls: require STARTTLS; tls: TLS from the first byte (port 465); none: never encrypt." }),
  k({ path: "mail.user", env: "FAXLINE_MAIL_USER", type: "string", default: "", description: "SMTP user name; empty: no authentication." }),
  k({ path: "mail.password", env: "FAXLINE_MAIL_PASSWORD", type: "string", default: "", description: "SMTP password." }),
  k({ path: "mail.from", env: "FAXLINE_MAIL_FROM", type: "string", default: "Faxline <faxline@localhost>", description: "Sender (From) of e-mail status reports." }),
  k({ path: "mail.timeout", env: "FAXLINE_MAIL_TIMEOUT", type: "duration", default: "30s", description: "Time limit for connecting to the SMTP server and for each of its answers." }),
  k({ path: "mail.retrySchedule", env: "FAXLINE_MAIL_RETRY_SCHEDULE", type: "durations", default: ["1m", "5m", "15m", "30m", "1h", "2h", "4h", "8h", "12h", "12h"], description: "Waits before each retry of a status mail after a temporary failure (4xx answer, connection error); a permanent failure (5xx) is not retried." }),
];

export interface FaxlineConfig {
  node: { region: Region; datacenter: Datacenter; id: string; roles: Role[]; shutdownGrace: number };
  http: { host: string; port: number; bodyLimitBytes: number; trustProxy: boolean };
  store: { dataDir: string; url: string; poolSize: number; statementTimeout: number; connectTimeout: number };
  cluster: { heartbeatInterval: number; failoverAfter: number; forgetNodesAfter: number; dutyLease: number };
  log: { level: string };
  jobs: {
    maxRecipients: number;
    maxDocuments: number;
    maxDocumentBytes: number;
    maxJobBytes: number;
    maxPages: number;
    defaultValidity: string;
    maxValidity: string;
    deadlineGrace: number;
  };
  documents: { fetchTimeout: number; fetchMaxRedirects: number; fetchAllowPrivateTargets: boolean };
  render: { timeout: number; concurrency: number; workerMemory: number; pageThreads: number; pdfRenderer: "auto" | "native" | "wasm"; maxSourcePixels: number; converterTimeout: number; defaultTimeZone: string; largePageSeconds: number };
  scheduler: { pollInterval: number; renderLease: number; sendLease: number; renderAttempts: number };
  sender: { channels: number; callsPerNumber: number; csid: string };
  retry: {
    maxAttempts: number;
    busy: number[];
    noAnswer: number[];
    noFax: number[];
    protocol: number[];
    internal: number[];
  };
  /** Real lines: the trunks (read from `lines.trunksFile`, not a key of its own), the capability cache, the SIP line's addresses and ports. */
  lines: {
    trunksFile: string;
    capabilityMaxAge: number;
    localAddress: string;
    advertisedAddress: string;
    sipPort: number;
    sipTcpPort: number;
    sipTlsPort: number;
    sipTlsCertFile: string;
    sipTlsKeyFile: string;
    sipConnectionsPerSource: number;
    sipMaxConnections: number;
    sipConnectionIdle: number;
    sipRequestRate: number;
    sipInviteRate: number;
    sipRefusalsPerMinute: number;
    sipLockoutFailures: number;
    sipLockout: number;
    mediaPorts: string;
    clockSpeed: number;
    mediaProcess: boolean;
    mediaProcesses: number;
    mediaNice: number;
    dnsServers: string[];
    pacingCapacity: number;
    trunks: readonly TrunkConfig[];
  };
  testLine: { timeScale: string };
  auth: { maxFailures: number; lockout: number; cacheTtl: number };
  console: { enabled: boolean; sessionIdle: number; sessionMax: number; chartInterval: number; chartWindow: number };
  inbound: { retentionDays: number; lockTimeout: number; channels: number; spoolDir: string };
  retention: { defaultDays: number; interval: number; batchSize: number };
  reporting: {
    enabled: boolean;
    maxQuerySpan: number;
    history: number;
    maxSummarySpan: number;
    rollupRetention: number;
    maxPageSize: number;
    defaultPageSize: number;
    maxDepth: number;
    maxCost: number;
  };
  push: {
    timeout: number;
    retrySchedule: number[];
    jitterPercent: number;
    maxRetryAfter: number;
    concurrency: number;
    perReceiverConcurrency: number;
    allowTargets: string[];
  };
  sftp: {
    timeout: number;
    retrySchedule: number[];
    allowTargets: string[];
  };
  mailToFax: {
    domains: string[];
    host: string;
    port: number;
    hostname: string;
    tlsCertFile: string;
    tlsKeyFile: string;
    requireTls: boolean;
    maxMessageBytes: number;
    maxRecipients: number;
    maxConnections: number;
    maxConnectionsPerAddress: number;
    socketTimeout: number;
    trustedRelays: string[];
    authservId: string;
    usersWithoutProof: boolean;
    pinMaxFailures: number;
    pinLockout: number;
  };
  mail: {
    host: string;
    port: number;
    security: "opportunistic" | "starttls" | "tls" | "none";
    user: string;
    password: string;
    from: string;
    timeout: number;
    retrySchedule: number[];
  };
}


/** Converts one raw value (from file or environment) to its typed form, or explains why not. */
export function coerceConfigValue(spec: ConfigKeySpec, raw: unknown, source: string): unknown {
  const where = `${spec.path} (${source})`;
  const fail = (what: string): never => {
    throw new ConfigError(`Invalid configuration ${where}: ${what}. ${spec.description}`);
  };
  switch (spec.type) {
    case "string":
      if (typeof raw === "number" || typeof raw === "string") return String(raw);
      return fail(`expected a string, got ${JSON.stringify(raw)}`);
    case "integer": {
      const n = typeof raw === "string" && raw.trim() !== "" ? Number(raw) : raw;
      if (typeof n !== "number" || !Number.isInteger(n)) return fail(`expected a whole number, got ${JSON.stringify(raw)}`);
      if (spec.min !== undefined && n < spec.min) return fail(`must be at least ${spec.min}, got ${n}`);
      if (spec.max !== undefined && n > spec.max) return fail(`must be at most ${spec.max}, got ${n}`);
      return n;
    }
    case "boolean": {
      if (typeof raw === "boolean") return raw;
      const text = String(raw).trim().toLowerCase();
      if (["true", "1", "yes", "on"].includes(text)) return true;
      if (["false", "0", "no", "off"].includes(text)) return false;
      return fail(`expected true or false, got ${JSON.stringify(raw)}`);
    }
    case "enum": {
      const text = String(raw).trim();
      const match = spec.values!.find((v) => v.toLowerCase() === text.toLowerCase());
      if (match === undefined) return fail(`expected one of ${spec.values!.join(", ")}, got ${JSON.stringify(raw)}`);
      return match;
    }
    case "list": {
      const items = Array.isArray(raw) ? raw.map(String) : String(raw).split(",");
      const out = items.map((s) => s.trim()).filter((s) => s !== "");
      for (const item of out) {
        if (spec.values && !spec.values.includes(item)) fail(`"${item}" is not one of ${spec.values.join(", ")}`);
      }
      return out;
    }
    case "duration": {
      const ms = parseDurationMs(raw);
      if (ms === null) return fail(`expected a duration such as 500ms, 30s, 5m, 2h, 1d or PT5M, got ${JSON.stringify(raw)}`);
      return ms;
    }
    case "durations": {
      const items = Array.isArray(raw) ? raw : String(raw).split(",").filter((s) => s.trim() !== "");
      return items.map((item) => {
        const ms = parseDurationMs(typeof item === "string" ? item.trim() : item);
        if (ms === null) return fail(`"${String(item)}" is not a duration such as 30s, 5m or 2h`);
        return ms;
      });
    }
  }
}

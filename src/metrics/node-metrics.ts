/**
 * The node's metrics, in the Prometheus exposition format at `GET /metrics` (prom-client).
 * One registry per node (a process may run several in tests). Counters count what this node did;
 * sum them over the nodes of a data center. Queue depths are read from the store at each scrape
 * (the whole data center's, the same on every node of it; take the max, not the sum).
 *
 * | metric | kind | labels |
 * |---|---|---|
 * | faxline_http_request_duration_seconds | histogram | method, route, status |
 * | faxline_jobs_accepted_total, faxline_recipients_accepted_total | counter | |
 * | faxline_recipients_finished_total | counter | status (report status), category (failure category, "delivered") |
 * | faxline_queue_depth | gauge | kind (job, recipient, notification), state |
 * | faxline_render_duration_seconds | histogram | result (rendered, failed) |
 * | faxline_render_pages_total | counter | |
 * | faxline_calls_active | gauge | line (test, sip) |
 * | faxline_call_outcomes_total | counter | line, result (delivered, failed, …), reason |
 * | faxline_media_process_lost_total | counter | (the SIP line's media process ended unasked: crash, kill or hang) |
 * | faxline_sip_messages_dropped_total | counter | reason (line/sip/sip-drops.ts: unparsable, rate_limited, …) |
 * | faxline_sip_connections_accepted | gauge | (TCP/TLS connections the SIP listeners hold now) |
 * | faxline_notifications_total | counter | channel (http, email, sftp), outcome (delivered, retry, failed) |
 * | faxline_store_query_duration_seconds | histogram | dialect |
 * | nodejs_*, process_* (event-loop lag, heap, CPU, file descriptors) | prom-client defaults | |
 *
 * Roles report through the methods below; nothing here does I/O but the queue-depth read at a
 * scrape, through the function the node gives it. Besides the registry, renders and ended calls
 * are added up per interval for the console's live charts (takeInterval, metrics-history.ts).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

export type QueueDepths = Array<{ kind: "job" | "recipient" | "notification"; state: string; count: number }>;

/** What this node did since the previous takeInterval(). */
export interface IntervalFigures {
  renders: number;
  renderSeconds: number;
  /** The longest render of the interval; 0 without renders. */
  renderMaxSeconds: number;
  callsDelivered: number;
  /** Calls that ended otherwise (failed, abandoned, aborted). */
  callsFailed: number;
}

const emptyInterval = (): IntervalFigures => ({ renders: 0, renderSeconds: 0, renderMaxSeconds: 0, callsDelivered: 0, callsFailed: 0 });

export class NodeMetrics {
  readonly registry = new Registry();
  readonly #http: Histogram<"method" | "route" | "status">;
  readonly #jobsAccepted: Counter;
  readonly #recipientsAccepted: Counter;
  readonly #recipientsFinished: Counter<"status" | "category">;
  readonly #faxesReceived: Counter<"status" | "transport">;
  readonly #renderSeconds: Histogram<"result">;
  readonly #renderPages: Counter;
  readonly #callsActive: Gauge<"line">;
  readonly #callOutcomes: Counter<"line" | "result" | "reason">;
  readonly #notifications: Counter<"channel" | "outcome">;
  readonly #storeQuery: Histogram<"dialect">;

  #interval: IntervalFigures = emptyInterval();
  #callsByTrunk: () => { trunk: string; transport: string; calls: number }[] = () => [];
  #receptionsActive: () => number = () => 0;
  #mediaLosses: () => number = () => 0;
  #sipDrops: () => Readonly<Record<string, number>> = () => ({});
  #sipConnections: () => number = () => 0;

  /** The SIP line's drop counts by reason and its accepted connections (read at each scrape). */
  watchSip(drops: () => Readonly<Record<string, number>>, connections: () => number): void {
    this.#sipDrops = drops;
    this.#sipConnections = connections;
  }

  /** Where the active-receptions gauge reads its figure at each scrape. */
  /** The SIP line's count of lost media processes (read at each scrape). */
  watchMediaLosses(source: () => number): void {
    this.#mediaLosses = source;
  }

  watchReceptions(source: () => number): void {
    this.#receptionsActive = source;
  }

  /** Where the by-trunk call gauge reads its figures at each scrape. */
  watchCallsByTrunk(source: () => { trunk: string; transport: string; calls: number }[]): void {
    this.#callsByTrunk = source;
  }

  constructor(options: { labels: { datacenter: string; node: string }; queueDepths?: () => Promise<QueueDepths> }) {
    const registers = [this.registry];
    this.registry.setDefaultLabels(options.labels);
    collectDefaultMetrics({ register: this.registry });
    this.#http = new Histogram({
      name: "faxline_http_request_duration_seconds",
      help: "HTTP requests by method, route (the route's pattern) and status",
      labelNames: ["method", "route", "status"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.#jobsAccepted = new Counter({ name: "faxline_jobs_accepted_total", help: "Jobs accepted (201)", registers });
    this.#recipientsAccepted = new Counter({ name: "faxline_recipients_accepted_total", help: "Recipients of the jobs accepted", registers });
    this.#recipientsFinished = new Counter({
      name: "faxline_recipients_finished_total",
      help: "Recipients that reached their final status, by report status and failure category",
      labelNames: ["status", "category"],
      registers,
    });
    this.#faxesReceived = new Counter({
      name: "faxline_faxes_received_total",
      help: "Faxes received on a topic's number, by status (OK, PARTIAL, FAILED) and transport",
      labelNames: ["status", "transport"],
      registers,
    });
    this.#renderSeconds = new Histogram({
      name: "faxline_render_duration_seconds",
      help: "Time to render a job's fax images, by result",
      labelNames: ["result"],
      buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers,
    });
    this.#renderPages = new Counter({ name: "faxline_render_pages_total", help: "Fax pages rendered", registers });
    this.#callsActive = new Gauge({ name: "faxline_calls_active", help: "Calls running now, by line", labelNames: ["line"], registers });
    const byTrunk = () => this.#callsByTrunk;
    new Gauge({
      name: "faxline_calls_active_by_trunk",
      help: "Calls running now, by trunk (test: the test line) and the transport they started on (t38, g711, test)",
      labelNames: ["trunk", "transport"],
      registers,
      collect() {
        this.reset();
        for (const c of byTrunk()()) this.set({ trunk: c.trunk, transport: c.transport }, c.calls);
      },
    });
    const receptions = () => this.#receptionsActive;
    new Gauge({
      name: "faxline_receptions_active",
      help: "Faxes being received now over the SIP line's inbound trunks (they share each trunk's maxCalls with outgoing calls)",
      registers,
      collect() {
        this.set(receptions()());
      },
    });
    const mediaLosses = () => this.#mediaLosses;
    new Counter({
      name: "faxline_media_process_lost_total",
      help: "Times the SIP line's media process (the fax engines) ended unasked, crashed, killed or hung; its calls ended as engine_lost and it was restarted",
      registers,
      collect() {
        this.reset();
        this.inc(mediaLosses()());
      },
    });
    const sipDrops = () => this.#sipDrops;
    new Counter({
      name: "faxline_sip_messages_dropped_total",
      help: "SIP messages the line dropped or answered only in part, by reason (docs/operations.md): unparsable, bad_response, unroutable_response, send_failed, rate_limited, refused_source, locked_out, connection_limit, stream_framing, idle_connection, internal",
      labelNames: ["reason"],
      registers,
      collect() {
        this.reset();
        for (const [reason, count] of Object.entries(sipDrops()())) this.inc({ reason }, count);
      },
    });
    const sipConnections = () => this.#sipConnections;
    new Gauge({
      name: "faxline_sip_connections_accepted",
      help: "TCP and TLS connections the SIP line's listeners hold now",
      registers,
      collect() {
        this.set(sipConnections()());
      },
    });
    this.#callOutcomes = new Counter({
      name: "faxline_call_outcomes_total",
      help: "Ended calls (attempts) by line, result and failure reason",
      labelNames: ["line", "result", "reason"],
      registers,
    });
    this.#notifications = new Counter({
      name: "faxline_notifications_total",
      help: "Status push, mail and SFTP delivery tries by channel and outcome",
      labelNames: ["channel", "outcome"],
      registers,
    });
    this.#storeQuery = new Histogram({
      name: "faxline_store_query_duration_seconds",
      help: "Store queries by dialect",
      labelNames: ["dialect"],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    });
    const queueDepths = options.queueDepths;
    if (queueDepths) {
      // Scrapes that come while a read runs share it, and a store outage leaves the gauge empty
      // instead of taking the other metrics down with it.
      let inFlight: Promise<QueueDepths> | null = null;
      const read = (): Promise<QueueDepths> =>
        (inFlight ??= queueDepths()
          .catch((): QueueDepths => [])
          .finally(() => {
            inFlight = null;
          }));
      new Gauge({
        name: "faxline_queue_depth",
        help: "Jobs, recipients and notifications of this data center by state, read from the store at the scrape",
        labelNames: ["kind", "state"],
        registers,
        async collect() {
          const depths = await read();
          this.reset();
          for (const d of depths) this.set({ kind: d.kind, state: d.state }, d.count);
        },
      });
    }
  }

  httpRequest(method: string, route: string, status: number, seconds: number): void {
    this.#http.observe({ method, route, status: String(status) }, seconds);
  }

  jobAccepted(recipients: number): void {
    this.#jobsAccepted.inc();
    this.#recipientsAccepted.inc(recipients);
  }

  recipientsFinished(status: string, category: string, count = 1): void {
    if (count > 0) this.#recipientsFinished.inc({ status, category }, count);
  }

  faxReceived(status: string, transport: string): void {
    this.#faxesReceived.inc({ status, transport });
  }

  rendered(result: "rendered" | "failed", seconds: number, pages: number): void {
    this.#renderSeconds.observe({ result }, seconds);
    if (pages > 0) this.#renderPages.inc(pages);
    this.#interval.renders += 1;
    this.#interval.renderSeconds += seconds;
    this.#interval.renderMaxSeconds = Math.max(this.#interval.renderMaxSeconds, seconds);
  }

  callStarted(line: string): void {
    this.#callsActive.inc({ line });
  }

  callEnded(line: string, result: string, reason: string): void {
    this.#callsActive.dec({ line });
    this.#callOutcomes.inc({ line, result, reason });
    if (result === "delivered") this.#interval.callsDelivered += 1;
    else this.#interval.callsFailed += 1;
  }

  /** Renders and ended calls since the previous call, and a fresh interval. */
  takeInterval(): IntervalFigures {
    const taken = this.#interval;
    this.#interval = emptyInterval();
    return taken;
  }

  notificationTry(channel: string, outcome: "delivered" | "retry" | "failed"): void {
    this.#notifications.inc({ channel, outcome });
  }

  storeQuery(dialect: string, seconds: number): void {
    this.#storeQuery.observe({ dialect }, seconds);
  }

  /** The exposition text and its content type. */
  async exposition(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}

/**
 * SIP transports (RFC 3261 §18): UDP, TCP and TLS, both ways.
 *
 * How it works:
 *  - UDP: one socket, bound at `start()` to `localAddress:udpPort` (0 takes a free port). Every
 *    flow over UDP shares it.
 *  - TCP and TLS out: one connection per far end (`protocol:address:port`), opened on first use
 *    and reused by every call to that far end (RFC 5923 style: the far end sends its requests
 *    inside our dialogs back over the same connection). A connection we opened and the far end
 *    closed is reopened on the next send. TLS verifies the far end's certificate against
 *    `tls.ca` (or the system store) and the hop's server name (`SipHop.serverName`, else its
 *    address).
 *  - TCP and TLS in (`listen`): a listener on `tcpPort` and one on `tlsPort` (the TLS one with
 *    the certificate and key of `tlsServer`, replaced in place by `setTlsCredentials`, e.g. on
 *    SIGHUP). An accepted connection is keyed like an outgoing one, so our requests inside a
 *    dialog it carries go back over it; one the far end closed is not reopened (its port was
 *    the far end's). Bounds: at most `maxConnectionsPerSource` connections from one address and
 *    `maxConnections` in all (more are closed at once); a connection that sends no message within
 *    `firstMessageTimeoutMs`, or none for `idleTimeoutMs`, is closed; TLS handshakes get
 *    `firstMessageTimeoutMs` too.
 *  - Stream framing by Content-Length (§18.3); a double-CRLF keep-alive ping gets a CRLF pong
 *    (RFC 5626 §4.4.1). A stream whose framing breaks is closed.
 *  - Responses to the far end's requests go back where the request came from (§18.2.2): over the
 *    same connection for TCP/TLS; over UDP to the source address and, with `rport` (RFC 3581) in
 *    the Via, the source port, else the Via's sent-by port (5060, or 5061 for TLS). The Via's
 *    `maddr` and `received` are checked but not followed: a response never goes to another
 *    address than the one the request came from (no reflection to third parties).
 *
 * The guard: every message received, on any transport, is read leniently (`readMessage`) and
 * handed to the handler inside one try/catch; garbage, and any fault of the handler, is counted
 * in `drops` (sip-drops.ts) and dropped; nothing a message carries throws out of this module. A
 * response whose destination is unusable (port 0, 70000, no address) is dropped and counted
 * instead of sent; a send the socket refuses is reported to the sender's `onError` (the
 * transaction turns that into a 503, §8.1.3.1) and counted.
 */
import dgram from "node:dgram";
import net from "node:net";
import tls from "node:tls";
import { readMessage, serializeMessage, SipStreamFramer, topVia, viaProblem, type SipDefect, type SipMessage, type SipReadResult, type SipResponse } from "./sip-message.ts";
import { SipDropCounter, type SipDropReason } from "./sip-drops.ts";

export type SipTransportProtocol = "udp" | "tcp" | "tls";

export interface SipEndpoint {
  address: string;
  port: number;
}

/** Where a request goes next: the resolved next hop (§8.1.2, RFC 3263). */
export interface SipHop extends SipEndpoint {
  protocol: SipTransportProtocol;
  /** TLS: the name to verify the certificate against (and send as SNI). (Default: `address`) */
  serverName?: string;
}

/** Where a received message came from. */
export interface SipSource extends SipEndpoint {
  protocol: SipTransportProtocol;
  /** The stream connection it came over (TCP/TLS), for sending responses back on it. */
  connectionKey: string | null;
}

export interface SipTraceEntry {
  direction: "in" | "out";
  protocol: SipTransportProtocol;
  local: SipEndpoint;
  remote: SipEndpoint;
  text: string;
}

/** The certificate and key of the TLS listener (PEM). */
export interface SipTlsCredentials {
  cert: string | Buffer;
  key: string | Buffer;
}

export interface SipListenOptions {
  /** TCP port to listen on; 0 takes a free port; null: no TCP listener. */
  tcpPort: number | null;
  /** TLS port to listen on (with `tlsServer`); null: no TLS listener. */
  tlsPort: number | null;
  tlsServer?: SipTlsCredentials;
}

export interface SipConnectionLimits {
  /** Accepted TCP/TLS connections from one address at once. (Default: 20) */
  maxConnectionsPerSource: number;
  /** Accepted TCP/TLS connections at once. (Default: 1000) */
  maxConnections: number;
  /** An accepted connection must carry its first message (TLS: finish its handshake) within this, ms. (Default: 10 000) */
  firstMessageTimeoutMs: number;
  /** An accepted connection without a message for this long is closed, ms. (Default: 3 600 000: longer than a call) */
  idleTimeoutMs: number;
}

export const DEFAULT_CONNECTION_LIMITS: SipConnectionLimits = {
  maxConnectionsPerSource: 20,
  maxConnections: 1000,
  firstMessageTimeoutMs: 10_000,
  idleTimeoutMs: 3_600_000,
};

export interface SipTransportLayerOptions {
  /** Address to bind the UDP socket, the listeners and stream connections to. */
  localAddress: string;
  /** UDP port to bind; 0 takes a free port. (Default: 0) */
  udpPort?: number;
  /** TLS client options: `ca`, `cert`/`key` for mutual TLS, `rejectUnauthorized`. */
  tls?: tls.ConnectionOptions;
  /** Time to wait for a TCP/TLS connection (handshake included), ms. (Default: 10 000) */
  connectTimeoutMs?: number;
  /** TCP and TLS listeners (`start()` opens them). (Default: none) */
  listen?: SipListenOptions;
  limits?: Partial<SipConnectionLimits>;
  /** Where drops are counted. (Default: a counter of its own) */
  drops?: SipDropCounter;
  /** Called for every message sent and received (for logs and test diagnostics). */
  trace?: (entry: SipTraceEntry) => void;
}

export interface SipTransportStats {
  received: number;
  sent: number;
  /** Messages dropped because they did not parse. */
  malformed: number;
  socketErrors: number;
  /** TCP/TLS connections accepted and open now. */
  acceptedConnections: number;
}

/** A path to one far end: what a transaction sends through. */
export interface SipFlow {
  readonly protocol: SipTransportProtocol;
  /** TCP and TLS: no retransmissions, zero-length linger timers. */
  readonly reliable: boolean;
  readonly remote: SipEndpoint;
  /** Our address and port on this flow, for Via and Contact. */
  readonly local: SipEndpoint;
  send(message: SipMessage, onError?: (error: Error) => void): void;
}

export class SipTransportError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "SipTransportError";
  }
}

/** What the transports hand up: a message read from a source, with its defect (a request to answer with it). */
export type SipMessageHandler = (message: SipMessage, source: SipSource, defect: SipDefect | null) => void;

function usablePort(port: number): boolean {
  return Number.isInteger(port) && port >= 1 && port <= 65535;
}

export class SipTransportLayer {
  readonly #options: SipTransportLayerOptions;
  readonly #limits: SipConnectionLimits;
  readonly drops: SipDropCounter;
  #udp: dgram.Socket | null = null;
  #udpLocal: SipEndpoint | null = null;
  readonly #connections = new Map<string, StreamConnection>();
  readonly #acceptedPerSource = new Map<string, number>();
  #accepted = 0;
  #tcpServer: net.Server | null = null;
  #tlsServer: tls.Server | null = null;
  #handler: SipMessageHandler | null = null;
  #closed = false;
  readonly stats: SipTransportStats = { received: 0, sent: 0, malformed: 0, socketErrors: 0, acceptedConnections: 0 };

  constructor(options: SipTransportLayerOptions) {
    this.#options = options;
    this.#limits = { ...DEFAULT_CONNECTION_LIMITS, ...options.limits };
    this.drops = options.drops ?? new SipDropCounter();
  }

  /** Sets the handler for every message received on any transport. */
  onMessage(handler: SipMessageHandler): void {
    this.#handler = handler;
  }

  /** Binds the UDP socket and opens the TCP and TLS listeners. */
  async start(): Promise<void> {
    if (this.#udp !== null) return;
    const socket = dgram.createSocket(net.isIPv6(this.#options.localAddress) ? "udp6" : "udp4");
    socket.on("error", () => this.stats.socketErrors++);
    socket.on("message", (data, rinfo) => {
      const source: SipSource = { protocol: "udp", address: rinfo.address, port: rinfo.port, connectionKey: null };
      this.#receive(data, source, this.#udpLocal!, () => readMessage(data));
    });
    await new Promise<void>((resolve, reject) => {
      socket.once("error", reject);
      socket.bind(this.#options.udpPort ?? 0, this.#options.localAddress, () => {
        socket.off("error", reject);
        resolve();
      });
    });
    this.#udp = socket;
    const address = socket.address();
    this.#udpLocal = { address: address.address, port: address.port };
    const listen = this.#options.listen;
    if (listen?.tcpPort != null) this.#tcpServer = await this.#listen("tcp", listen.tcpPort, net.createServer({ noDelay: true }));
    if (listen?.tlsPort != null) {
      if (listen.tlsServer === undefined) throw new SipTransportError("a TLS listener needs a certificate and key");
      const server = tls.createServer({ ...listen.tlsServer, handshakeTimeout: this.#limits.firstMessageTimeoutMs });
      // A failed handshake (a port scanner, a wrong protocol) is the far end's problem, not ours.
      server.on("tlsClientError", (_error, tlsSocket) => tlsSocket.destroy());
      this.#tlsServer = await this.#listen("tls", listen.tlsPort, server);
    }
  }

  async #listen<S extends net.Server>(protocol: "tcp" | "tls", port: number, server: S): Promise<S> {
    server.on("error", () => this.stats.socketErrors++);
    server.on(protocol === "tls" ? "secureConnection" : "connection", (socket: net.Socket) => this.#accept(protocol, socket));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, this.#options.localAddress, () => {
        server.off("error", reject);
        resolve();
      });
    });
    return server;
  }

  /** The bound UDP endpoint (after `start()`). */
  get udpLocal(): SipEndpoint {
    if (this.#udpLocal === null) throw new SipTransportError("UDP transport not started");
    return this.#udpLocal;
  }

  /** The listeners' bound endpoints (after `start()`); null where none listens. */
  get listening(): { tcp: SipEndpoint | null; tls: SipEndpoint | null } {
    const of = (server: net.Server | null): SipEndpoint | null => {
      const a = server?.address();
      return a && typeof a === "object" ? { address: a.address, port: a.port } : null;
    };
    return { tcp: of(this.#tcpServer), tls: of(this.#tlsServer) };
  }

  /** Replaces the TLS listener's certificate and key; connections open keep theirs. */
  setTlsCredentials(credentials: SipTlsCredentials): void {
    if (this.#tlsServer === null) throw new SipTransportError("no TLS listener");
    this.#tlsServer.setSecureContext({ cert: credentials.cert, key: credentials.key });
  }

  #drop(reason: SipDropReason, protocol: SipTransportProtocol, remote: SipEndpoint | null, detail: string, error?: unknown): void {
    if (reason === "unparsable") this.stats.malformed++;
    this.drops.drop({ reason, protocol, remote, detail, ...(error !== undefined ? { error } : {}) });
  }

  #accept(protocol: "tcp" | "tls", socket: net.Socket): void {
    const address = socket.remoteAddress;
    const port = socket.remotePort;
    if (address === undefined || port === undefined || this.#closed) {
      socket.destroy();
      return;
    }
    const remote = { address, port };
    const fromSource = this.#acceptedPerSource.get(address) ?? 0;
    if (this.#accepted >= this.#limits.maxConnections || fromSource >= this.#limits.maxConnectionsPerSource) {
      this.#drop("connection_limit", protocol, remote, `${this.#accepted} connections open, ${fromSource} from ${address}`);
      socket.destroy();
      return;
    }
    this.#accepted++;
    this.stats.acceptedConnections = this.#accepted;
    this.#acceptedPerSource.set(address, fromSource + 1);
    const key = `${protocol}:${address}:${port}`;
    const connection = StreamConnection.accepted(key, protocol, remote, socket, this.#options, this.#limits, this.#streamEvents(protocol));
    this.#connections.get(key)?.close();
    this.#connections.set(key, connection);
    socket.once("close", () => {
      this.#accepted--;
      this.stats.acceptedConnections = this.#accepted;
      const left = (this.#acceptedPerSource.get(address) ?? 1) - 1;
      if (left <= 0) this.#acceptedPerSource.delete(address);
      else this.#acceptedPerSource.set(address, left);
      if (this.#connections.get(key) === connection) this.#connections.delete(key);
    });
  }

  #streamEvents(protocol: "tcp" | "tls"): StreamConnectionEvents {
    return {
      onMessage: (read, conn) => {
        const source: SipSource = { protocol, address: conn.remote.address, port: conn.remote.port, connectionKey: conn.key };
        this.#receive(null, source, conn.local, () => read);
      },
      onDrop: (reason, conn, detail) => this.#drop(reason, protocol, conn.remote, detail),
      onSent: () => this.stats.sent++,
    };
  }

  /** A flow to `hop`; for TCP/TLS this connects (or reuses the open connection). */
  async open(hop: SipHop): Promise<SipFlow> {
    if (this.#closed) throw new SipTransportError("transport layer closed");
    if (!usablePort(hop.port)) throw new SipTransportError(`no SIP port ${hop.port} (1-65535) on ${hop.address}`);
    if (hop.protocol === "udp") {
      const socket = this.#udp;
      if (socket === null) throw new SipTransportError("UDP transport not started");
      if (net.isIP(hop.address) === 0) throw new SipTransportError(`${JSON.stringify(hop.address)} is not an IP address`);
      const remote = { address: hop.address, port: hop.port };
      const local = this.udpLocal;
      return {
        protocol: "udp",
        reliable: false,
        remote,
        local,
        send: (message, onError) => this.#sendUdp(message, remote, onError),
      };
    }
    const key = `${hop.protocol}:${hop.address}:${hop.port}`;
    let connection = this.#connections.get(key);
    if (connection === undefined) {
      connection = StreamConnection.outgoing(key, hop, this.#options, this.#streamEvents(hop.protocol));
      this.#connections.set(key, connection);
    }
    await connection.ready();
    const conn = connection;
    return {
      protocol: hop.protocol,
      reliable: true,
      remote: { address: hop.address, port: hop.port },
      local: conn.local,
      send: (message, onError) => conn.send(message, onError),
    };
  }

  /**
   * The flow back to where a request came from: over TCP/TLS the very connection it came over,
   * never a new one to the far end's port (the ephemeral port of its side): a SipTransportError
   * when that connection has closed. Over UDP, `open` of the source.
   */
  async openToSource(source: SipSource): Promise<SipFlow> {
    if (source.connectionKey !== null && !this.#connections.has(source.connectionKey)) {
      throw new SipTransportError(`${source.protocol.toUpperCase()} connection from ${source.address}:${source.port} is closed`);
    }
    return this.open({ protocol: source.protocol, address: source.address, port: source.port });
  }

  /**
   * Sends a response to a request received from `source` (§18.2.2); a response that cannot be
   * routed is dropped and counted (`unroutable_response`), never thrown.
   */
  sendResponse(response: SipResponse, source: SipSource, onError?: (error: Error) => void): void {
    if (source.connectionKey !== null) {
      const connection = this.#connections.get(source.connectionKey);
      if (connection === undefined) {
        onError?.(new SipTransportError(`connection ${source.connectionKey} is gone`));
        return;
      }
      connection.send(response, onError);
      return;
    }
    let port: number;
    try {
      const via = topVia(response);
      const problem = viaProblem(via);
      if (problem !== null) throw new SipTransportError(`Via ${problem}`);
      port = via.params.has("rport") ? source.port : (via.port ?? (via.transport === "TLS" ? 5061 : 5060));
    } catch (error) {
      this.#drop("unroutable_response", "udp", source, `response ${response.status} not sent: ${(error as Error).message}`);
      onError?.(error as Error);
      return;
    }
    this.#sendUdp(response, { address: source.address, port }, onError);
  }

  #sendUdp(message: SipMessage, remote: SipEndpoint, onError?: (error: Error) => void): void {
    const socket = this.#udp;
    if (socket === null || this.#closed) {
      onError?.(new SipTransportError("UDP transport closed"));
      return;
    }
    const what = message.kind === "request" ? message.method : `response ${message.status}`;
    if (!usablePort(remote.port) || net.isIP(remote.address) === 0) {
      this.#drop("unroutable_response", "udp", remote, `${what} not sent: ${remote.address}:${remote.port} is no address and port`);
      onError?.(new SipTransportError(`${remote.address}:${remote.port} is no address and port`));
      return;
    }
    const data = serializeMessage(message);
    this.#options.trace?.({ direction: "out", protocol: "udp", local: this.udpLocal, remote, text: data.toString("utf8") });
    const failed = (error: Error): void => {
      this.stats.socketErrors++;
      this.#drop("send_failed", "udp", remote, `${what}: ${error.message}`);
      onError?.(new SipTransportError(`UDP send to ${remote.address}:${remote.port} failed: ${error.message}`, { cause: error }));
    };
    try {
      socket.send(data, remote.port, remote.address, (error) => {
        if (error) failed(error);
      });
      this.stats.sent++;
    } catch (error) {
      // dgram.send throws at once for what it refuses outright (a bad port, an address of the
      // other family): never out of the transport.
      failed(error as Error);
    }
  }

  /** The guard: one message in, read and handed up inside one try/catch. */
  #receive(data: Buffer | null, source: SipSource, local: SipEndpoint, read: () => SipReadResult): void {
    let result: SipReadResult;
    try {
      result = read();
    } catch (error) {
      this.#drop("internal", source.protocol, source, "reading a message failed inside Faxline", error);
      return;
    }
    if (result.kind === "garbage") {
      this.#drop("unparsable", source.protocol, source, result.detail);
      return;
    }
    try {
      if (this.#options.trace !== undefined) {
        const text = data !== null ? data.toString("utf8") : serializeMessage(result.message).toString("utf8");
        this.#options.trace({ direction: "in", protocol: source.protocol, local, remote: source, text });
      }
      this.stats.received++;
      this.#handler?.(result.message, source, result.defect);
    } catch (error) {
      this.#drop("internal", source.protocol, source, `handling a ${result.message.kind === "request" ? result.message.method : `${result.message.status} response`} failed inside Faxline`, error);
    }
  }

  /** Closes the UDP socket, the listeners and every connection. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const connection of this.#connections.values()) connection.close();
    this.#connections.clear();
    const closing: Promise<void>[] = [];
    for (const server of [this.#tcpServer, this.#tlsServer]) {
      if (server !== null) closing.push(new Promise<void>((resolve) => server.close(() => resolve())));
    }
    this.#tcpServer = null;
    this.#tlsServer = null;
    const socket = this.#udp;
    this.#udp = null;
    if (socket !== null) closing.push(new Promise<void>((resolve) => socket.close(() => resolve())));
    await Promise.all(closing);
  }
}

interface StreamConnectionEvents {
  onMessage(read: SipReadResult, connection: StreamConnection): void;
  onDrop(reason: SipDropReason, connection: StreamConnection, detail: string): void;
  onSent(): void;
}

/**
 * One TCP or TLS connection: one we opened (reopened on demand after the far end closes it), or
 * one we accepted (never reopened; closed when idle).
 */
class StreamConnection {
  readonly key: string;
  readonly protocol: "tcp" | "tls";
  readonly remote: SipEndpoint;
  readonly #hop: SipHop | null;
  readonly #options: SipTransportLayerOptions;
  readonly #events: StreamConnectionEvents;
  #socket: net.Socket | null = null;
  #connecting: Promise<void> | null = null;
  #local: SipEndpoint = { address: "0.0.0.0", port: 0 };
  #closed = false;

  private constructor(key: string, protocol: "tcp" | "tls", remote: SipEndpoint, hop: SipHop | null, options: SipTransportLayerOptions, events: StreamConnectionEvents) {
    this.key = key;
    this.protocol = protocol;
    this.remote = remote;
    this.#hop = hop;
    this.#options = options;
    this.#events = events;
  }

  static outgoing(key: string, hop: SipHop, options: SipTransportLayerOptions, events: StreamConnectionEvents): StreamConnection {
    return new StreamConnection(key, hop.protocol as "tcp" | "tls", { address: hop.address, port: hop.port }, hop, options, events);
  }

  static accepted(
    key: string,
    protocol: "tcp" | "tls",
    remote: SipEndpoint,
    socket: net.Socket,
    options: SipTransportLayerOptions,
    limits: SipConnectionLimits,
    events: StreamConnectionEvents,
  ): StreamConnection {
    const connection = new StreamConnection(key, protocol, remote, null, options, events);
    connection.#local = { address: socket.localAddress ?? options.localAddress, port: socket.localPort ?? 0 };
    let idleMs = limits.firstMessageTimeoutMs;
    socket.setTimeout(idleMs, () => {
      connection.#events.onDrop("idle_connection", connection, `no message for ${Math.round(idleMs / 1000)} s`);
      socket.destroy();
    });
    connection.#attach(socket, () => {
      if (idleMs !== limits.idleTimeoutMs) {
        idleMs = limits.idleTimeoutMs;
        socket.setTimeout(idleMs);
      }
    });
    return connection;
  }

  get local(): SipEndpoint {
    return this.#local;
  }

  /** Resolves once connected (connecting first if needed); rejects with a SipTransportError. */
  ready(): Promise<void> {
    if (this.#socket !== null && !this.#socket.destroyed) return Promise.resolve();
    if (this.#hop === null) return Promise.reject(new SipTransportError(`${this.protocol.toUpperCase()} connection from ${this.remote.address}:${this.remote.port} is closed`));
    if (this.#connecting === null) {
      this.#connecting = this.#connect(this.#hop).finally(() => {
        this.#connecting = null;
      });
    }
    return this.#connecting;
  }

  #connect(hop: SipHop): Promise<void> {
    if (this.#closed) return Promise.reject(new SipTransportError("connection closed"));
    const timeoutMs = this.#options.connectTimeoutMs ?? 10_000;
    return new Promise<void>((resolve, reject) => {
      const common = { host: hop.address, port: hop.port, localAddress: this.#options.localAddress };
      const socket =
        hop.protocol === "tls"
          ? tls.connect({
              ...this.#options.tls,
              ...common,
              servername: net.isIP(hop.serverName ?? hop.address) === 0 ? (hop.serverName ?? hop.address) : undefined,
              checkServerIdentity: (_host, cert) => tls.checkServerIdentity(hop.serverName ?? hop.address, cert),
            })
          : net.connect(common);
      const connectEvent = hop.protocol === "tls" ? "secureConnect" : "connect";
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new SipTransportError(`${hop.protocol.toUpperCase()} connect to ${hop.address}:${hop.port} timed out`));
      }, timeoutMs);
      const onError = (error: Error): void => {
        clearTimeout(timer);
        socket.destroy();
        reject(new SipTransportError(`${hop.protocol.toUpperCase()} connect to ${hop.address}:${hop.port} failed: ${error.message}`, { cause: error }));
      };
      socket.once("error", onError);
      socket.once(connectEvent, () => {
        clearTimeout(timer);
        socket.off("error", onError);
        socket.setNoDelay(true);
        this.#local = { address: socket.localAddress ?? this.#options.localAddress, port: socket.localPort ?? 0 };
        this.#attach(socket, () => undefined);
        resolve();
      });
    });
  }

  #attach(socket: net.Socket, onMessage: () => void): void {
    this.#socket = socket;
    const framer = new SipStreamFramer();
    socket.on("data", (chunk: Buffer) => {
      let framed: { messages: SipReadResult[]; pings: number };
      try {
        framed = framer.push(chunk);
      } catch (error) {
        // §18.3: a framing error leaves the stream unusable; drop the connection.
        this.#events.onDrop("stream_framing", this, (error as Error).message);
        socket.destroy();
        return;
      }
      for (let i = 0; i < framed.pings; i++) socket.write("\r\n");
      for (const read of framed.messages) {
        onMessage();
        this.#events.onMessage(read, this);
      }
    });
    socket.on("error", () => undefined);
    socket.on("close", () => {
      if (this.#socket === socket) this.#socket = null;
    });
  }

  send(message: SipMessage, onError?: (error: Error) => void): void {
    const write = (): void => {
      const socket = this.#socket;
      if (socket === null || socket.destroyed) {
        onError?.(new SipTransportError(`${this.protocol.toUpperCase()} connection to ${this.remote.address}:${this.remote.port} closed`));
        return;
      }
      const data = serializeMessage(message);
      this.#options.trace?.({ direction: "out", protocol: this.protocol, local: this.#local, remote: this.remote, text: data.toString("utf8") });
      this.#events.onSent();
      socket.write(data, (error) => {
        if (error) onError?.(new SipTransportError(`write to ${this.remote.address}:${this.remote.port} failed: ${error.message}`, { cause: error }));
      });
    };
    if (this.#socket !== null && !this.#socket.destroyed) write();
    else this.ready().then(write, (error: Error) => onError?.(error));
  }

  close(): void {
    this.#closed = true;
    this.#socket?.destroy();
    this.#socket = null;
  }
}

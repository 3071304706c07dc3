/**
 * SIP transports (RFC 3261 §18): UDP, TCP and TLS, for a user agent that places calls.
 *
 * How it works:
 *  - UDP: one socket, bound at `start()` to `localAddress:udpPort` (0 takes a free port). Every
 *    flow over UDP shares it. Datagrams that do not parse are dropped and counted.
 *  - TCP and TLS: one connection per far end (`protocol:address:port`), opened on first use and
 *    reused by every call to that far end (RFC 5923 style: the far end sends its requests inside
 *    our dialogs back over the same connection; we do not listen for incoming connections).
 *    Messages are framed by Content-Length (§18.3); a double-CRLF keep-alive ping gets a CRLF
 *    pong (RFC 5626 §4.4.1). A connection closed by the far end is reopened on the next send.
 *    TLS verifies the far end's certificate against `tls.ca` (or the system store) and the
 *    hop's server name (`SipHop.serverName`, else its address).
 *  - Responses to the far end's requests go back where the request came from (§18.2.2): over the
 *    same connection for TCP/TLS; over UDP to the source address and, with `rport` (RFC 3581) in
 *    the Via, the source port, else the Via's sent-by port.
 *
 * Errors on sending are reported to the sender's `onError` callback (the transaction turns that
 * into a 503, §8.1.3.1); socket errors never throw out of this module.
 */
import dgram from "node:dgram";
import net from "node:net";
import tls from "node:tls";
import { parseMessage, SipStreamFramer, serializeMessage, topVia, type SipMessage, type SipResponse } from "./sip-message.ts";

export type SipTransportProtocol = "udp" | "tcp" | "tls";

export interface SipEndpoint {
  address: string;
  port: number;
}

/** Where a request goes next: the resolved next hop (§8.1.2, RFC 3263 without SRV/NAPTR). */
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

export interface SipTransportLayerOptions {
  /** Address to bind the UDP socket and stream connections to. */
  localAddress: string;
  /** UDP port to bind; 0 takes a free port. (Default: 0) */
  udpPort?: number;
  /** TLS client options: `ca`, `cert`/`key` for mutual TLS, `rejectUnauthorized`. */
  tls?: tls.ConnectionOptions;
  /** Time to wait for a TCP/TLS connection (handshake included), ms. (Default: 10 000) */
  connectTimeoutMs?: number;
  /** Called for every message sent and received (for logs and test diagnostics). */
  trace?: (entry: SipTraceEntry) => void;
}

export interface SipTransportStats {
  received: number;
  sent: number;
  /** Messages dropped because they did not parse. */
  malformed: number;
  socketErrors: number;
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

export class SipTransportLayer {
  readonly #options: SipTransportLayerOptions;
  #udp: dgram.Socket | null = null;
  #udpLocal: SipEndpoint | null = null;
  readonly #connections = new Map<string, StreamConnection>();
  #handler: ((message: SipMessage, source: SipSource) => void) | null = null;
  #closed = false;
  readonly stats: SipTransportStats = { received: 0, sent: 0, malformed: 0, socketErrors: 0 };

  constructor(options: SipTransportLayerOptions) {
    this.#options = options;
  }

  /** Sets the handler for every message received on any transport. */
  onMessage(handler: (message: SipMessage, source: SipSource) => void): void {
    this.#handler = handler;
  }

  /** Binds the UDP socket. */
  async start(): Promise<void> {
    if (this.#udp !== null) return;
    const socket = dgram.createSocket(net.isIPv6(this.#options.localAddress) ? "udp6" : "udp4");
    socket.on("error", () => this.stats.socketErrors++);
    socket.on("message", (data, rinfo) => {
      const remote = { address: rinfo.address, port: rinfo.port };
      this.#receive(data, { protocol: "udp", ...remote, connectionKey: null }, this.#udpLocal!);
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
  }

  /** The bound UDP endpoint (after `start()`). */
  get udpLocal(): SipEndpoint {
    if (this.#udpLocal === null) throw new SipTransportError("UDP transport not started");
    return this.#udpLocal;
  }

  /** A flow to `hop`; for TCP/TLS this connects (or reuses the open connection). */
  async open(hop: SipHop): Promise<SipFlow> {
    if (this.#closed) throw new SipTransportError("transport layer closed");
    if (hop.protocol === "udp") {
      const socket = this.#udp;
      if (socket === null) throw new SipTransportError("UDP transport not started");
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
      connection = new StreamConnection(key, hop, this.#options, {
        onData: (message, conn) => this.#deliver(message, { protocol: hop.protocol, address: hop.address, port: hop.port, connectionKey: conn.key }),
        onMalformed: () => this.stats.malformed++,
        onSent: () => this.stats.sent++,
      });
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

  /** Sends a response to a request received from `source` (§18.2.2). */
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
    const via = topVia(response);
    const port = via.params.has("rport") ? source.port : (via.port ?? 5060);
    this.#sendUdp(response, { address: source.address, port }, onError);
  }

  #sendUdp(message: SipMessage, remote: SipEndpoint, onError?: (error: Error) => void): void {
    const socket = this.#udp;
    if (socket === null || this.#closed) {
      onError?.(new SipTransportError("UDP transport closed"));
      return;
    }
    const data = serializeMessage(message);
    this.#options.trace?.({ direction: "out", protocol: "udp", local: this.udpLocal, remote, text: data.toString("utf8") });
    this.stats.sent++;
    socket.send(data, remote.port, remote.address, (error) => {
      if (error) {
        this.stats.socketErrors++;
        onError?.(new SipTransportError(`UDP send to ${remote.address}:${remote.port} failed: ${error.message}`, { cause: error }));
      }
    });
  }

  #receive(data: Buffer, source: SipSource, local: SipEndpoint): void {
    let message: SipMessage;
    try {
      message = parseMessage(data);
    } catch {
      this.stats.malformed++;
      return;
    }
    this.#options.trace?.({ direction: "in", protocol: source.protocol, local, remote: source, text: data.toString("utf8") });
    this.#deliver(message, source);
  }

  #deliver(message: SipMessage, source: SipSource): void {
    this.stats.received++;
    this.#handler?.(message, source);
  }

  /** Closes the UDP socket and every connection. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const connection of this.#connections.values()) connection.close();
    this.#connections.clear();
    const socket = this.#udp;
    this.#udp = null;
    if (socket !== null) await new Promise<void>((resolve) => socket.close(() => resolve()));
  }
}

interface StreamConnectionEvents {
  onData(message: SipMessage, connection: StreamConnection): void;
  onMalformed(): void;
  onSent(): void;
}

/** One TCP or TLS connection, reopened on demand after the far end closes it. */
class StreamConnection {
  readonly key: string;
  readonly #hop: SipHop;
  readonly #options: SipTransportLayerOptions;
  readonly #events: StreamConnectionEvents;
  #socket: net.Socket | null = null;
  #connecting: Promise<void> | null = null;
  #local: SipEndpoint = { address: "0.0.0.0", port: 0 };
  #closed = false;

  constructor(key: string, hop: SipHop, options: SipTransportLayerOptions, events: StreamConnectionEvents) {
    this.key = key;
    this.#hop = hop;
    this.#options = options;
    this.#events = events;
  }

  get local(): SipEndpoint {
    return this.#local;
  }

  /** Resolves once connected (connecting first if needed); rejects with a SipTransportError. */
  ready(): Promise<void> {
    if (this.#socket !== null && !this.#socket.destroyed) return Promise.resolve();
    if (this.#connecting === null) {
      this.#connecting = this.#connect().finally(() => {
        this.#connecting = null;
      });
    }
    return this.#connecting;
  }

  #connect(): Promise<void> {
    if (this.#closed) return Promise.reject(new SipTransportError("connection closed"));
    const hop = this.#hop;
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
        this.#attach(socket);
        resolve();
      });
    });
  }

  #attach(socket: net.Socket): void {
    this.#socket = socket;
    const framer = new SipStreamFramer();
    socket.on("data", (chunk: Buffer) => {
      let framed: { messages: SipMessage[]; pings: number };
      try {
        framed = framer.push(chunk);
      } catch {
        // §18.3: a framing error leaves the stream unusable; drop the connection.
        this.#events.onMalformed();
        socket.destroy();
        return;
      }
      for (let i = 0; i < framed.pings; i++) socket.write("\r\n");
      for (const message of framed.messages) {
        this.#options.trace?.({
          direction: "in",
          protocol: this.#hop.protocol,
          local: this.#local,
          remote: this.#hop,
          text: serializeMessage(message).toString("utf8"),
        });
        this.#events.onData(message, this);
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
        onError?.(new SipTransportError(`${this.#hop.protocol.toUpperCase()} connection to ${this.#hop.address}:${this.#hop.port} closed`));
        return;
      }
      const data = serializeMessage(message);
      this.#options.trace?.({ direction: "out", protocol: this.#hop.protocol, local: this.#local, remote: this.#hop, text: data.toString("utf8") });
      this.#events.onSent();
      socket.write(data, (error) => {
        if (error) onError?.(new SipTransportError(`write to ${this.#hop.address}:${this.#hop.port} failed: ${error.message}`, { cause: error }));
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

/**
 * Test support: a TCP proxy in front of a server, to cut one client off from it the way a
 * network does. `cut()` drops every open connection without a word (no FIN is forwarded to the
 * client: its sockets are destroyed) and refuses new ones until `restore()`; the server itself
 * keeps running for everyone else.
 */
import { connect, createServer, type Server, type Socket } from "node:net";
import { once } from "node:events";

export class TcpProxy {
  readonly #target: { host: string; port: number };
  #server: Server | null = null;
  #sockets = new Set<Socket>();
  /** Connections accepted while blackholed: never answered. */
  #held = new Set<Socket>();
  #cut = false;
  #blackholed = false;
  port = 0;

  constructor(target: { host: string; port: number }) {
    this.#target = target;
  }

  async start(): Promise<void> {
    this.#server = createServer((client) => {
      if (this.#cut) {
        client.destroy();
        return;
      }
      if (this.#blackholed) {
        client.pause();
        this.#held.add(client);
        return;
      }
      const upstream = connect(this.#target.port, this.#target.host);
      this.#sockets.add(client);
      this.#sockets.add(upstream);
      const close = () => {
        client.destroy();
        upstream.destroy();
        this.#sockets.delete(client);
        this.#sockets.delete(upstream);
      };
      client.on("error", close);
      upstream.on("error", close);
      client.on("close", close);
      upstream.on("close", close);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    this.#server.listen(0, "127.0.0.1");
    await once(this.#server, "listening");
    const address = this.#server.address();
    this.port = typeof address === "object" && address !== null ? address.port : 0;
  }

  /** postgres://… URL through this proxy, for a URL of the target. */
  url(database: string, user = "postgres"): string {
    return `postgres://${user}@127.0.0.1:${this.port}/${database}`;
  }

  /**
   * The network silently drops everything: open connections stay open but carry nothing more,
   * new ones are accepted and never answered. (Nothing tells the client; only its timeouts do.)
   */
  blackhole(): void {
    this.#blackholed = true;
    for (const s of this.#sockets) {
      s.unpipe();
      s.pause();
    }
  }

  /** The network goes away: open connections die, new ones are refused. */
  cut(): void {
    this.#cut = true;
    for (const s of this.#sockets) s.destroy();
    this.#sockets.clear();
  }

  /** The network is back: what was held or blackholed is dropped (as a real network's resets would), new connections work. */
  restore(): void {
    this.#cut = false;
    this.#blackholed = false;
    for (const s of [...this.#sockets, ...this.#held]) s.destroy();
    this.#sockets.clear();
    this.#held.clear();
  }

  async stop(): Promise<void> {
    this.cut();
    for (const s of this.#held) s.destroy();
    this.#held.clear();
    if (this.#server) await new Promise<void>((r) => this.#server!.close(() => r()));
    this.#server = null;
  }
}

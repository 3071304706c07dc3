/**
 * Test support: the far end of the SIP robustness suite (test/interop/sip-robustness.test.ts,
 * `npm run fuzz:sip`, `npm run bench:sip-flood`): a carrier's signalling over UDP, TCP or TLS
 * that sends generated messages (sip-mutations.ts) to a node, reads what comes back with
 * Faxline's own reader, and behaves as a carrier otherwise does:
 *
 *  - `liveCall()` sets up a clean call (INVITE with T.38, 200, ACK) whose Call-ID and tags the
 *    in-dialog seeds then use;
 *  - every 2xx to an INVITE it sees is ACKed and the call hung up (`hangUpAnswered`), so that
 *    calls a mutation left well-formed do not hold the node's reception channels;
 *  - requests the node sends (its BYE, its re-INVITE to T.38) are answered: 200, or 488 to an
 *    INVITE;
 *  - `probe()` sends a clean OPTIONS over a fresh connection (or the UDP socket) and resolves
 *    with its answer's status, or null after `timeoutMs`: "the node still answers".
 *
 * On stream transports each window of messages goes over a connection of its own (a mutated
 * Content-Length can leave a stream waiting for bytes that never come; the node closes a stream
 * whose framing breaks); `send` cuts the bytes into the writes a case asks for.
 */
import dgram from "node:dgram";
import net from "node:net";
import tls from "node:tls";
import { createResponse, readMessage, serializeMessage, SipStreamFramer, topVia, type SipMessage, type SipRequest, type SipResponse } from "../../src/line/sip/sip-message.ts";
import { fillSeed, serializeEditable, type SeedValues, type SipSeed } from "./sip-mutations.ts";

export type FuzzProtocol = "udp" | "tcp" | "tls";

export interface FuzzTarget {
  address: string;
  udpPort: number;
  tcpPort?: number;
  tlsPort?: number;
  /** The TLS listener's certificate (self-signed in tests), trusted for the connection. */
  tlsCa?: Buffer;
  tlsServerName?: string;
}

export interface LiveCall {
  callId: string;
  fromTag: string;
  toTag: string;
}

let counter = 0;
const unique = (what: string): string => `${what}${process.pid}x${++counter}`;

type Stream = net.Socket | tls.TLSSocket;

export class SipFuzzClient {
  readonly protocol: FuzzProtocol;
  readonly #target: FuzzTarget;
  readonly #udp = dgram.createSocket("udp4");
  #stream: Stream | null = null;
  /** Responses read and not yet taken (`takeResponses`). */
  readonly responses: SipResponse[] = [];
  /** Requests the node sent us. */
  readonly requestsFromNode: SipRequest[] = [];
  #waiters: { match: (r: SipResponse) => boolean; resolve: (r: SipResponse) => void }[] = [];
  #hungUp = new Set<string>();
  /** Stream connections replaced because the node closed them. */
  reconnects = 0;

  readonly #bindAddress: string;

  /** `bindAddress`: the loopback address it sends from (127.0.0.1 unless a test needs another source). */
  constructor(protocol: FuzzProtocol, target: FuzzTarget, bindAddress = "127.0.0.1") {
    this.protocol = protocol;
    this.#target = target;
    this.#bindAddress = bindAddress;
  }

  async start(): Promise<void> {
    this.#udp.on("message", (data, rinfo) => this.#received(data, (bytes) => this.#udp.send(bytes, rinfo.port, rinfo.address)));
    this.#udp.on("error", () => {});
    await new Promise<void>((r) => this.#udp.bind(0, this.#bindAddress, r));
  }

  get localIp(): string {
    return this.#bindAddress;
  }

  /** The port the Via names: the UDP socket's, or the window's connection's. */
  get localPort(): number {
    return this.#stream?.localPort ?? this.#udp.address().port;
  }

  get #targetPort(): number {
    if (this.protocol === "udp") return this.#target.udpPort;
    const port = this.protocol === "tcp" ? this.#target.tcpPort : this.#target.tlsPort;
    if (port === undefined) throw new Error(`the target has no ${this.protocol} port`);
    return port;
  }

  /** The node as written into Request-URIs and To. */
  get node(): string {
    return `${this.#target.address}:${this.#targetPort}`;
  }

  get transportName(): SeedValues["transport"] {
    return this.protocol.toUpperCase() as SeedValues["transport"];
  }

  /** Stream transports: opens the window's connection (closing the last one). */
  async openWindow(): Promise<void> {
    if (this.protocol === "udp") return;
    this.#closeStream();
    this.#stream = await this.#connect((bytes) => this.#stream?.write(bytes));
  }

  async #connect(reply: (bytes: Buffer) => void): Promise<Stream> {
    const framer = new SipStreamFramer(1 << 20);
    const socket = await new Promise<Stream>((resolve, reject) => {
      const s: Stream =
        this.protocol === "tls"
          ? tls.connect({ host: this.#target.address, port: this.#targetPort, ...(this.#target.tlsCa ? { ca: this.#target.tlsCa } : {}), servername: this.#target.tlsServerName ?? "localhost" }, () => resolve(s))
          : net.connect({ port: this.#targetPort, host: this.#target.address, localAddress: this.#bindAddress }, () => resolve(s));
      s.once("error", reject);
    });
    socket.on("error", () => {});
    socket.on("data", (chunk: Buffer) => {
      let read;
      try {
        read = framer.push(chunk);
      } catch {
        socket.destroy();
        return;
      }
      for (const r of read.messages) if (r.kind === "message") this.#handle(r.message, reply);
    });
    return socket;
  }

  #closeStream(): void {
    this.#stream?.destroy();
    this.#stream = null;
  }

  /**
   * Sends the bytes: one datagram, or on the window's connection in writes of `chunks` sizes
   * (then the rest). A connection the node has closed (its framing broke) is replaced first.
   */
  async send(bytes: Buffer, chunks: readonly number[] = []): Promise<void> {
    if (this.protocol === "udp") {
      // A datagram over 65 507 bytes cannot be sent at all: cut it (the node sees a cut message).
      this.#udp.send(bytes.subarray(0, 65_507), this.#target.udpPort, this.#target.address);
      return;
    }
    if (this.#stream === null || this.#stream.destroyed || this.#stream.readyState !== "open") {
      this.reconnects++;
      await this.openWindow();
    }
    const stream = this.#stream!;
    let at = 0;
    for (const size of chunks) {
      if (at >= bytes.length) break;
      stream.write(bytes.subarray(at, at + size));
      at += size;
    }
    if (at < bytes.length) stream.write(bytes.subarray(at));
  }

  /** Whether the window's connection is still open (the node closes one whose framing broke). */
  get streamOpen(): boolean {
    return this.#stream !== null && !this.#stream.destroyed;
  }

  #received(data: Buffer, reply: (bytes: Buffer) => void): void {
    const read = readMessage(data);
    if (read.kind === "message") this.#handle(read.message, reply);
  }

  #handle(message: SipMessage, reply: (bytes: Buffer) => void): void {
    if (message.kind === "response") {
      this.responses.push(message);
      for (const w of [...this.#waiters]) {
        if (w.match(message)) {
          this.#waiters.splice(this.#waiters.indexOf(w), 1);
          w.resolve(message);
        }
      }
      return;
    }
    this.requestsFromNode.push(message);
    if (message.method === "ACK") return;
    try {
      const status = message.method === "INVITE" ? 488 : 200;
      reply(serializeMessage(createResponse(message, status, status === 200 ? "OK" : "Not Acceptable Here", unique("t"))));
    } catch {
      // A request of the node's that we cannot answer is the node's to time out.
    }
  }

  /** The first response (or final response, with `final`) whose top Via has `branch`, or null after `timeoutMs`. */
  waitFor(branch: string, timeoutMs: number, final = true): Promise<SipResponse | null> {
    const match = (r: SipResponse): boolean => (!final || r.status >= 200) && branchOf(r) === branch;
    const found = this.responses.find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => {
      const waiter = { match, resolve: (r: SipResponse | null) => resolve(r) };
      this.#waiters.push(waiter);
      setTimeout(() => {
        const i = this.#waiters.indexOf(waiter);
        if (i !== -1) {
          this.#waiters.splice(i, 1);
          resolve(null);
        }
      }, timeoutMs).unref();
    });
  }

  /** The responses read so far, taken out (later ones collect anew). */
  takeResponses(): SipResponse[] {
    this.requestsFromNode.splice(0);
    return this.responses.splice(0);
  }

  /** Values for a seed: fresh identifiers, or a live call's. */
  values(did: string, live: LiveCall | null): SeedValues {
    return {
      transport: this.transportName,
      localIp: this.localIp,
      localPort: this.localPort,
      node: this.node,
      did,
      caller: "+4989555000",
      branch: `z9hG4bK${unique("b")}`,
      callId: live?.callId ?? `${unique("c")}@fuzz`,
      fromTag: live?.fromTag ?? unique("f"),
      toTag: live?.toTag ?? unique("t"),
      mediaPort: 9,
    };
  }

  /**
   * Sets up a clean call (the seed, unmutated: an INVITE), ACKs its 200, and returns its
   * identifiers; null when the node does not answer it with 200 within 3 s.
   */
  async liveCall(invite: SipSeed, did: string): Promise<LiveCall | null> {
    const values = this.values(did, null);
    await this.send(serializeEditable(fillSeed(invite, values)));
    const answer = await this.waitFor(values.branch, 3000);
    if (answer === null || answer.status !== 200) return null;
    const toTag = /;\s*tag=([^;\s>]+)/i.exec(answer.headers.get("to") ?? "")?.[1];
    if (toTag === undefined) return null;
    await this.#ack(answer);
    return { callId: values.callId, fromTag: values.fromTag, toTag };
  }

  #inDialog(method: "ACK" | "BYE", answer: SipResponse): Buffer {
    const cseq = Number(/^\s*(\d+)/.exec(answer.headers.get("cseq") ?? "")?.[1] ?? 1);
    const contact = /<([^>]+)>/.exec(answer.headers.get("contact") ?? "")?.[1] ?? `sip:${this.node}`;
    const lines = [
      `${method} ${contact} SIP/2.0`,
      `Via: SIP/2.0/${this.transportName} ${this.localIp}:${this.localPort};branch=z9hG4bK${unique("h")};rport`,
      "Max-Forwards: 70",
      `From: ${answer.headers.get("from") ?? ""}`,
      `To: ${answer.headers.get("to") ?? ""}`,
      `Call-ID: ${answer.headers.get("call-id") ?? ""}`,
      `CSeq: ${method === "ACK" ? cseq : cseq + 1} ${method}`,
      "Content-Length: 0",
      "",
      "",
    ];
    return Buffer.from(lines.join("\r\n"), "utf8");
  }

  async #ack(answer: SipResponse): Promise<void> {
    await this.send(this.#inDialog("ACK", answer));
  }

  /**
   * ACKs and hangs up every call answered with 2xx among `responses` (once each), as the carrier
   * would after the caller gave up: the node's reception channels are not held until its timers.
   * Returns how many were hung up.
   */
  async hangUpAnswered(responses: readonly SipResponse[]): Promise<number> {
    let n = 0;
    for (const r of responses) {
      if (r.status < 200 || r.status >= 300) continue;
      const cseq = r.headers.get("cseq") ?? "";
      if (!/\bINVITE\s*$/i.test(cseq)) continue;
      const key = `${r.headers.get("call-id")}|${r.headers.get("to")}`;
      if (this.#hungUp.has(key)) continue;
      this.#hungUp.add(key);
      try {
        await this.#ack(r);
        await this.send(this.#inDialog("BYE", r));
        n++;
      } catch {
        // A response whose headers cannot be put back into a request (a mutated one echoed).
      }
    }
    return n;
  }

  /** Stream transports: ends the window's connection. */
  closeWindow(): void {
    if (this.protocol !== "udp") this.#closeStream();
  }

  /**
   * A clean OPTIONS over `protocol` (default: this client's): on UDP from this client's socket,
   * on a stream over a fresh connection closed afterwards. The answer's status, or null.
   */
  async probe(timeoutMs = 5000, protocol: FuzzProtocol = this.protocol): Promise<number | null> {
    if (protocol !== this.protocol) {
      const other = new SipFuzzClient(protocol, this.#target, this.#bindAddress);
      await other.start();
      try {
        return await other.probe(timeoutMs);
      } finally {
        other.close();
      }
    }
    const branch = `z9hG4bK${unique("p")}`;
    let stream: Stream | null = null;
    try {
      if (protocol !== "udp") stream = await this.#connect((bytes) => stream?.write(bytes));
    } catch {
      return null;
    }
    const port = stream?.localPort ?? this.#udp.address().port;
    const text = [
      `OPTIONS sip:${this.node} SIP/2.0`,
      `Via: SIP/2.0/${this.transportName} ${this.localIp}:${port};branch=${branch};rport`,
      "Max-Forwards: 70",
      `From: <sip:probe@${this.localIp}>;tag=${unique("f")}`,
      `To: <sip:${this.node}>`,
      `Call-ID: ${unique("probe")}@fuzz`,
      "CSeq: 1 OPTIONS",
      "Content-Length: 0",
      "",
      "",
    ].join("\r\n");
    const answer = this.waitFor(branch, timeoutMs);
    if (stream !== null) stream.write(text);
    else this.#udp.send(Buffer.from(text), this.#target.udpPort, this.#target.address);
    const response = await answer;
    stream?.destroy();
    return response?.status ?? null;
  }

  close(): void {
    this.#closeStream();
    try {
      this.#udp.close();
    } catch {
      /* closed already */
    }
  }
}

function branchOf(r: SipResponse): string | undefined {
  try {
    return topVia(r).params.get("branch") ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * UDPTL over a UDP socket: the transport a T.38 session sends its IFP packets through. It frames
 * outgoing IFPs with a `UdptlSender` (redundancy, datagram size) and sends each datagram as many
 * times as the engine asked; incoming datagrams go through a `UdptlReceiver` (recovery from
 * secondaries, repeats and late packets dropped) and each IFP it delivers is handed to the
 * `onIfp` handler, in sequence order.
 *
 * The far end is either given (`remote`, from the SDP) or, when not, learned from the first
 * datagram that arrives (symmetric UDP, for an answering test peer). Datagrams from any other
 * address are ignored and counted. Socket errors (ICMP port unreachable once the far end has
 * closed, for instance) are counted, never thrown: the T.30 timers notice a dead far end.
 *
 * `dropOutgoing`/`dropIncoming` simulate packet loss in tests.
 */
import dgram from "node:dgram";
import { bindUdpSocket } from "./bind-udp.ts";
import { UdptlReceiver, UdptlSender, type ReceivedIfp, type UdptlReceiverStats, type UdptlSenderOptions, type UdptlSenderStats } from "./udptl.ts";

export interface UdpEndpoint {
  address: string;
  port: number;
}

export interface UdptlSocketOptions extends UdptlSenderOptions {
  /** Address to bind. (Default: "0.0.0.0") */
  localAddress?: string;
  /** Port to bind; 0 takes any free port. (Default: 0) */
  localPort?: number;
  /**
   * A UDP socket already bound (then `localAddress` and `localPort` are not used): a SIP line
   * binds its media ports before its SDP names them (sip-fax-line/media-ports.ts). The
   * UdptlSocket owns it from then on and closes it.
   */
  socket?: dgram.Socket;
  /** The far end; when absent, the source of the first datagram received. */
  remote?: UdpEndpoint;
  /** The far end's first sequence number, when known (`UdptlReceiver`). */
  expectedSeq?: number;
  /** Test hook: called for every datagram about to be sent; true drops it. */
  dropOutgoing?: () => boolean;
  /** Test hook: called for every datagram received; true drops it. */
  dropIncoming?: () => boolean;
}

export interface UdptlSocketStats {
  sender: UdptlSenderStats;
  receiver: UdptlReceiverStats;
  /** Datagrams handed to the socket (repeats included). */
  datagramsSent: number;
  droppedOutgoing: number;
  /** Datagrams from the far end (those `dropIncoming` dropped included). */
  datagramsReceived: number;
  droppedIncoming: number;
  /** Datagrams from an address other than the far end's. */
  foreign: number;
  socketErrors: number;
}

export class UdptlSocket {
  readonly #socket: dgram.Socket;
  readonly #sender: UdptlSender;
  readonly #receiver: UdptlReceiver;
  readonly #options: UdptlSocketOptions;
  #remote: UdpEndpoint | null;
  #handler: ((received: ReceivedIfp) => void) | null = null;
  #closed = false;
  #datagramsSent = 0;
  #droppedOutgoing = 0;
  #datagramsReceived = 0;
  #droppedIncoming = 0;
  #foreign = 0;
  #socketErrors = 0;

  private constructor(socket: dgram.Socket, options: UdptlSocketOptions) {
    this.#socket = socket;
    this.#options = options;
    this.#sender = new UdptlSender(options);
    this.#receiver = new UdptlReceiver(options.expectedSeq === undefined ? {} : { expectedSeq: options.expectedSeq });
    this.#remote = options.remote ?? null;
    socket.on("message", (datagram, from) => this.#onMessage(datagram, from));
    socket.on("error", () => {
      this.#socketErrors += 1;
    });
  }

  /** Binds a UDP socket for one T.38 stream. */
  static async open(options: UdptlSocketOptions = {}): Promise<UdptlSocket> {
    return new UdptlSocket(options.socket ?? (await bindUdpSocket(options.localAddress, options.localPort)), options);
  }

  get localPort(): number {
    return this.#socket.address().port;
  }

  get remote(): UdpEndpoint | null {
    return this.#remote;
  }

  get stats(): UdptlSocketStats {
    return {
      sender: { ...this.#sender.stats },
      receiver: { ...this.#receiver.stats },
      datagramsSent: this.#datagramsSent,
      droppedOutgoing: this.#droppedOutgoing,
      datagramsReceived: this.#datagramsReceived,
      droppedIncoming: this.#droppedIncoming,
      foreign: this.#foreign,
      socketErrors: this.#socketErrors,
    };
  }

  /** Sets where the IFP packets go (from the SDP answer or a re-INVITE). */
  setRemote(remote: UdpEndpoint): void {
    this.#remote = remote;
  }

  /** The handler for received IFPs, in sequence order; one handler, replacing any earlier one. */
  onIfp(handler: (received: ReceivedIfp) => void): void {
    this.#handler = handler;
  }

  /** One callback for every send (not a closure per datagram: this runs every 20 ms for every call). */
  readonly #afterSend = (error: Error | null): void => {
    if (error) this.#socketErrors += 1;
  };

  /** Frames one IFP under the next sequence number and sends the datagram `count` times. */
  sendIfp(ifp: Uint8Array, count: number): void {
    if (this.#closed) return;
    const { datagram } = this.#sender.frame(ifp);
    const remote = this.#remote;
    for (let i = 0; i < count; i++) {
      if (this.#options.dropOutgoing?.()) {
        this.#droppedOutgoing += 1;
        continue;
      }
      if (remote === null) continue;
      this.#datagramsSent += 1;
      this.#socket.send(datagram, remote.port, remote.address, this.#afterSend);
    }
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    this.#handler = null;
    return new Promise((resolve) => this.#socket.close(() => resolve()));
  }

  #onMessage(datagram: Buffer, from: dgram.RemoteInfo): void {
    if (this.#closed) return;
    if (this.#remote === null) {
      this.#remote = { address: from.address, port: from.port };
    } else if (from.address !== this.#remote.address || from.port !== this.#remote.port) {
      this.#foreign += 1;
      return;
    }
    this.#datagramsReceived += 1;
    if (this.#options.dropIncoming?.()) {
      this.#droppedIncoming += 1;
      return;
    }
    for (const received of this.#receiver.receive(datagram)) this.#handler?.(received);
  }
}

/**
 * Media ports of the SIP line: every call takes one pair of UDP ports from the configured range
 * (`lines.mediaPorts`), an even port for RTP audio, the odd one after it for its RTCP (RFC 3550's
 * port + 1) and the next even one for T.38 (UDPTL). They are bound before the call is placed,
 * because the SDP offer and answers name them, and they are used symmetrically: we send from the
 * port we receive on, which is what NATs and carriers' session border controllers expect.
 *
 * A pair is taken by binding its sockets; a port another process holds is skipped. The sockets
 * are handed to the media layer (`take`), and `release()` closes whatever was not handed over and
 * returns the pair to the pool.
 */
import dgram from "node:dgram";
import { closeQuietly } from "../media/bind-udp.ts";

export interface PortRange {
  min: number;
  max: number;
}

/** Ports a call uses: RTP on `audioPort` (even), UDPTL on `t38Port` (`audioPort + 2`). */
export const PORTS_PER_CALL = 4;

/**
 * Reads "20000-29999" (or a single port pair "40000"). Returns a message saying what is wrong
 * when the text is no usable range.
 */
export function parsePortRange(text: string): PortRange | { error: string } {
  const m = /^\s*(\d{1,5})\s*(?:-\s*(\d{1,5}))?\s*$/.exec(text);
  if (m === null) return { error: `${JSON.stringify(text)} is not a port range; write it as FIRST-LAST, e.g. "20000-29999"` };
  const min = Number(m[1]);
  const max = m[2] === undefined ? min + PORTS_PER_CALL - 1 : Number(m[2]);
  if (min < 1024 || max > 65535) return { error: `ports ${min}-${max} must lie between 1024 and 65535` };
  const firstEven = min % 2 === 0 ? min : min + 1;
  if (max < firstEven + 2) return { error: `${min}-${max} is too small: a call needs an even port for RTP and the next even one for T.38` };
  return { min, max };
}

export interface MediaPorts {
  audioPort: number;
  t38Port: number;
  /** Hands over the bound socket of one kind; the taker closes it. */
  take(kind: "audio" | "rtcp" | "t38"): dgram.Socket;
  /** Closes the sockets not handed over and frees the pair. Idempotent. */
  release(): void;
}

export class NoFreeMediaPortError extends Error {
  constructor(range: PortRange, inUse: number) {
    super(`No free media port pair in ${range.min}-${range.max} (${inUse} pairs in use by this node; others are held by other programs). Widen lines.mediaPorts or lower the call limits.`);
    this.name = "NoFreeMediaPortError";
  }
}

function bind(address: string, port: number): Promise<dgram.Socket | null> {
  return new Promise((resolve) => {
    const socket = dgram.createSocket("udp4");
    socket.once("error", () => {
      try {
        socket.close();
      } catch {
        // never bound
      }
      resolve(null);
    });
    socket.bind(port, address, () => {
      socket.removeAllListeners("error");
      resolve(socket);
    });
  });
}


export class MediaPortPool {
  readonly range: PortRange;
  readonly #address: string;
  /** Audio ports of the pairs in use. */
  readonly #inUse = new Set<number>();
  readonly #firstPair: number;
  readonly #pairs: number;
  #cursor = 0;

  constructor(options: { address: string; range: PortRange }) {
    this.#address = options.address;
    this.range = options.range;
    this.#firstPair = options.range.min % 2 === 0 ? options.range.min : options.range.min + 1;
    this.#pairs = Math.floor((options.range.max - 2 - this.#firstPair) / PORTS_PER_CALL) + 1;
  }

  /** Pairs this node holds now. */
  get inUse(): number {
    return this.#inUse.size;
  }

  /** Binds the next free pair. Throws NoFreeMediaPortError when none is left. */
  async acquire(): Promise<MediaPorts> {
    for (let tried = 0; tried < this.#pairs; tried++) {
      const audioPort = this.#firstPair + ((this.#cursor + tried) % this.#pairs) * PORTS_PER_CALL;
      if (this.#inUse.has(audioPort)) continue;
      this.#inUse.add(audioPort);
      const audio = await bind(this.#address, audioPort);
      const rtcp = audio === null ? null : await bind(this.#address, audioPort + 1);
      const t38 = rtcp === null ? null : await bind(this.#address, audioPort + 2);
      if (audio === null || rtcp === null || t38 === null) {
        if (audio !== null) closeQuietly(audio);
        if (rtcp !== null) closeQuietly(rtcp);
        this.#inUse.delete(audioPort);
        continue;
      }
      this.#cursor = (this.#cursor + tried + 1) % this.#pairs;
      return this.#pair(audioPort, audio, rtcp, t38);
    }
    throw new NoFreeMediaPortError(this.range, this.#inUse.size);
  }

  #pair(audioPort: number, audio: dgram.Socket, rtcp: dgram.Socket, t38: dgram.Socket): MediaPorts {
    const held = new Map<"audio" | "rtcp" | "t38", dgram.Socket>([
      ["audio", audio],
      ["rtcp", rtcp],
      ["t38", t38],
    ]);
    let released = false;
    return {
      audioPort,
      t38Port: audioPort + 2,
      take: (kind) => {
        const socket = held.get(kind);
        if (socket === undefined) throw new Error(`the ${kind} media socket was already taken`);
        held.delete(kind);
        return socket;
      },
      release: () => {
        if (released) return;
        released = true;
        for (const socket of held.values()) closeQuietly(socket);
        held.clear();
        this.#inUse.delete(audioPort);
      },
    };
  }
}

/**
 * rtpengine (Debian `rtpengine-daemon`) as a test peer: a media relay with a T.38↔G.711 gateway
 * built on SpanDSP and its own UDPTL code, so a fax that crosses it meets a UDPTL implementation
 * that is not ours. It runs in userspace (`--table=-1`), with no config file, on 127.0.0.1.
 *
 * rtpengine is driven over its NG control protocol: bencoded dictionaries over UDP, each request
 * prefixed with a cookie that the reply repeats. `offer` takes the SDP of one side and returns the
 * SDP that the other side must be given (the relay's own ports); `answer` does the same the other
 * way. With `T.38: ["decode"]` on the offer, a T.38 offer comes out as audio (rtpengine decodes
 * the fax and plays it as G.711); with `T.38: ["force"]`, an audio offer comes out as T.38.
 *
 * rtpengine keeps real time only, so calls through it take about 30 s a page.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import dgram from "node:dgram";

export type Bencodable = string | number | Bencodable[] | { [key: string]: Bencodable };

/** Bencode: the NG protocol's wire format. Dictionary keys are written sorted, as the format requires. */
export function bencode(value: Bencodable): Buffer {
  if (typeof value === "number") {
    if (!Number.isInteger(value)) throw new TypeError(`bencode takes integers only, got ${value}`);
    return Buffer.from(`i${value}e`);
  }
  if (typeof value === "string") {
    const bytes = Buffer.from(value, "utf8");
    return Buffer.concat([Buffer.from(`${bytes.length}:`), bytes]);
  }
  if (Array.isArray(value)) return Buffer.concat([Buffer.from("l"), ...value.map(bencode), Buffer.from("e")]);
  const keys = Object.keys(value).sort();
  return Buffer.concat([Buffer.from("d"), ...keys.flatMap((k) => [bencode(k), bencode(value[k]!)]), Buffer.from("e")]);
}

/** Decodes one bencoded value from `bytes` at `offset`; strings come back as UTF-8 text. */
export function bdecode(bytes: Buffer, offset = 0): { value: Bencodable; end: number } {
  const c = String.fromCharCode(bytes[offset] ?? 0);
  if (c === "i") {
    const end = bytes.indexOf(0x65, offset);
    if (end < 0) throw new SyntaxError("bencode: unterminated integer");
    return { value: Number(bytes.subarray(offset + 1, end).toString()), end: end + 1 };
  }
  if (c === "l" || c === "d") {
    const items: Bencodable[] = [];
    let at = offset + 1;
    while (bytes[at] !== 0x65) {
      if (at >= bytes.length) throw new SyntaxError("bencode: unterminated list or dictionary");
      const item = bdecode(bytes, at);
      items.push(item.value);
      at = item.end;
    }
    if (c === "l") return { value: items, end: at + 1 };
    const dict: Record<string, Bencodable> = {};
    for (let i = 0; i + 1 < items.length; i += 2) dict[String(items[i])] = items[i + 1]!;
    return { value: dict, end: at + 1 };
  }
  const colon = bytes.indexOf(0x3a, offset);
  const length = Number(bytes.subarray(offset, colon).toString());
  if (colon < 0 || !Number.isInteger(length)) throw new SyntaxError(`bencode: unexpected byte ${JSON.stringify(c)} at ${offset}`);
  const start = colon + 1;
  return { value: bytes.subarray(start, start + length).toString("utf8"), end: start + length };
}

export interface RtpengineRun {
  /** Sends one NG command and returns rtpengine's reply; rejects when it answers `result: error`. */
  command(request: Record<string, Bencodable>): Promise<Record<string, Bencodable>>;
  /** The daemon's log so far. */
  log(): string;
  stop(): Promise<void>;
}

/** The port of the first `m=` line of an SDP. */
export function mediaPort(sdp: string): number {
  const m = /^m=\w+ (\d+) /m.exec(sdp);
  if (m === null) throw new Error(`no m= line in SDP:\n${sdp}`);
  return Number(m[1]);
}

/**
 * Starts rtpengine on 127.0.0.1 with its NG control socket on a free port and media ports in
 * `[portMin, portMax]`, and waits until it answers a `ping`.
 */
export async function startRtpengine(options: { portMin: number; portMax: number }): Promise<RtpengineRun> {
  const control = dgram.createSocket("udp4");
  await new Promise<void>((resolve) => control.bind(0, "127.0.0.1", resolve));
  const probe = dgram.createSocket("udp4");
  await new Promise<void>((resolve) => probe.bind(0, "127.0.0.1", resolve));
  const ngPort = probe.address().port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));

  const child = spawn(
    "rtpengine",
    [
      "--config-file=none",
      "--foreground",
      "--log-stderr",
      "--log-level=6",
      "--table=-1",
      "--interface=127.0.0.1",
      `--listen-ng=127.0.0.1:${ngPort}`,
      `--port-min=${options.portMin}`,
      `--port-max=${options.portMax}`,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let log = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (log += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (log += d));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  const pending = new Map<string, (reply: Record<string, Bencodable>) => void>();
  control.on("message", (datagram) => {
    const space = datagram.indexOf(0x20);
    const cookie = datagram.subarray(0, space).toString();
    const reply = bdecode(datagram, space + 1).value as Record<string, Bencodable>;
    pending.get(cookie)?.(reply);
    pending.delete(cookie);
  });

  const send = (request: Record<string, Bencodable>, timeoutMs: number): Promise<Record<string, Bencodable> | null> => {
    const cookie = randomBytes(6).toString("hex");
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        pending.delete(cookie);
        resolve(null);
      }, timeoutMs);
      pending.set(cookie, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      control.send(Buffer.concat([Buffer.from(`${cookie} `), bencode(request)]), ngPort, "127.0.0.1");
    });
  };

  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 3000);
      await exited;
      clearTimeout(killer);
    }
    control.close();
  };

  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`rtpengine exited with ${child.exitCode}:\n${log}`);
    const pong = await send({ command: "ping" }, 200);
    if (pong?.result === "pong") break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`rtpengine did not answer ping on 127.0.0.1:${ngPort} within 10 s:\n${log}`);
    }
  }

  return {
    async command(request) {
      const reply = await send(request, 5000);
      if (reply === null) throw new Error(`rtpengine did not answer ${String(request.command)}:\n${log}`);
      if (reply.result === "error") throw new Error(`rtpengine refused ${String(request.command)}: ${String(reply["error-reason"])}`);
      return reply;
    },
    log: () => log,
    stop,
  };
}

/**
 * The media process's entry (forked by media-host.ts): loads the fax engine and runs the
 * sessions its node hands it with the InlineMediaRunner, on an event loop that does nothing else.
 * Engine events and results go back as they happen. The process ends when its node's IPC
 * channel closes (the node stopped or died), so it never outlives it.
 */
import type dgram from "node:dgram";
import type { Engine } from "../fax-engine/engine.ts";
import { SpandspEngine } from "../fax-engine/spandsp-engine.ts";
import { InlineMediaRunner, type FaxMediaRun, type FaxMediaSockets } from "./fax-media.ts";
import type { FromMediaHost, ToMediaHost } from "./media-host-protocol.ts";

function send(message: FromMediaHost): void {
  if (process.connected) process.send!(message);
}

let engine: Engine | null = null;
try {
  engine = SpandspEngine.load();
  send({ type: "ready", error: null });
} catch (error) {
  send({ type: "ready", error: error instanceof Error ? error.message : String(error) });
}
const runner = engine === null ? null : new InlineMediaRunner(engine);
const sockets = new Map<number, FaxMediaSockets>();
const runs = new Map<number, FaxMediaRun>();
/** The sockets of running sessions, for `early` datagrams that come after the run started. */
const runSockets = new Map<number, FaxMediaSockets>();
/**
 * Datagrams a session's sockets received before its session took them (a socket reads from the
 * moment it arrives; the session starts with the `run` message after it), and those the node's
 * copy read before it closed it (`early`): handed to the session's own listeners once it runs.
 */
const waiting = new Map<number, { socket: dgram.Socket; datagram: Uint8Array; from: { address: string; port: number } }[]>();
const holding = new Map<dgram.Socket, (datagram: Buffer, from: dgram.RemoteInfo) => void>();

function replay(id: number): void {
  // After the session's sockets have their listeners (UdptlSocket, RtpSocket and RtcpSession
  // attach them while the run starts).
  setImmediate(() => {
    const datagrams = waiting.get(id) ?? [];
    waiting.delete(id);
    if (!runs.has(id)) return;
    for (const { socket, datagram, from } of datagrams) socket.emit("message", Buffer.from(datagram), { ...from, family: "IPv4", size: datagram.length });
  });
}

process.on("message", (message: ToMediaHost, handle?: unknown) => {
  switch (message.type) {
    case "socket": {
      const socket = handle as dgram.Socket;
      const held = sockets.get(message.id) ?? {};
      held[message.kind] = socket;
      sockets.set(message.id, held);
      const hold = (datagram: Buffer, from: dgram.RemoteInfo): void => {
        const list = waiting.get(message.id) ?? [];
        list.push({ socket, datagram, from: { address: from.address, port: from.port } });
        waiting.set(message.id, list);
      };
      socket.on("message", hold);
      holding.set(socket, hold);
      return;
    }
    case "early": {
      const socket = (runs.has(message.id) ? undefined : sockets.get(message.id)?.[message.kind]) ?? runSockets.get(message.id)?.[message.kind];
      if (socket === undefined) return;
      // Read by the node before ours: first in line.
      const list = waiting.get(message.id) ?? [];
      waiting.set(message.id, [...message.datagrams.map((d) => ({ socket, datagram: d.datagram, from: d.from })), ...list]);
      if (runs.has(message.id)) replay(message.id);
      return;
    }
    case "run": {
      const { id } = message;
      const held = sockets.get(id) ?? {};
      sockets.delete(id);
      runSockets.set(id, { ...held });
      for (const socket of Object.values(held)) {
        const hold = holding.get(socket);
        if (hold !== undefined) socket.off("message", hold);
        holding.delete(socket);
      }
      if (runner === null) {
        for (const socket of Object.values(held)) socket.close();
        send({ type: "failed", id, message: "the fax engine could not be loaded in the media process" });
        return;
      }
      try {
        const run = runner.run(message.spec, held, message.clock, (event, statistics) => send({ type: "event", id, event, statistics }));
        runs.set(id, run);
        replay(id);
        run.result.then(
          (result) => send({ type: "result", id, result }),
          (error: unknown) => send({ type: "failed", id, message: error instanceof Error ? error.message : String(error) }),
        ).finally(() => {
          runs.delete(id);
          runSockets.delete(id);
          waiting.delete(id);
        });
      } catch (error) {
        send({ type: "failed", id, message: error instanceof Error ? error.message : String(error) });
      }
      return;
    }
    case "remote":
      runs.get(message.id)?.setRemote(message.kind, message.remote);
      return;
    case "stop":
      runs.get(message.id)?.stop();
      return;
    case "ping":
      send({ type: "pong", seq: message.seq });
      return;
  }
});
process.on("disconnect", () => process.exit(0));

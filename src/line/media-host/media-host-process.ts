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

process.on("message", (message: ToMediaHost, handle?: unknown) => {
  switch (message.type) {
    case "socket": {
      const held = sockets.get(message.id) ?? {};
      held[message.kind] = handle as dgram.Socket;
      sockets.set(message.id, held);
      return;
    }
    case "run": {
      const { id } = message;
      const held = sockets.get(id) ?? {};
      sockets.delete(id);
      if (runner === null) {
        for (const socket of Object.values(held)) socket.close();
        send({ type: "failed", id, message: "the fax engine could not be loaded in the media process" });
        return;
      }
      try {
        const run = runner.run(message.spec, held, message.clock, (event, statistics) => send({ type: "event", id, event, statistics }));
        runs.set(id, run);
        run.result.then(
          (result) => send({ type: "result", id, result }),
          (error: unknown) => send({ type: "failed", id, message: error instanceof Error ? error.message : String(error) }),
        ).finally(() => runs.delete(id));
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

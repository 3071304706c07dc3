/**
 * The messages between a node and its media process (media-host.ts, media-host-process.ts),
 * over Node's IPC channel with the "advanced" serialization (structured clone: the engine's
 * frame bytes travel as Uint8Array). A session's sockets go first, one per `socket` message
 * with the bound dgram socket as the message's handle; then `run` starts the session.
 */
import type { EngineEvent, TransferStatistics } from "../fax-engine/engine.ts";
import type { UdpEndpoint } from "../media/udptl-socket.ts";
import type { FaxMediaClock, FaxMediaResult, FaxMediaSockets, FaxMediaSpec, MediaRemote } from "./fax-media.ts";

export type ToMediaHost =
  | { type: "socket"; id: number; kind: keyof FaxMediaSockets }
  | { type: "run"; id: number; spec: FaxMediaSpec; clock: FaxMediaClock }
  | { type: "remote"; id: number; kind: "t38" | "audio"; remote: MediaRemote }
  | { type: "stop"; id: number }
  /** What the node's copy of a socket read before it was closed, to be handed to the session. */
  | { type: "early"; id: number; kind: keyof FaxMediaSockets; datagrams: { datagram: Uint8Array; from: UdpEndpoint }[] }
  | { type: "ping"; seq: number };

export type FromMediaHost =
  /** The engine is loaded; `error` when it could not be (the addon is not built). */
  | { type: "ready"; error: string | null }
  | { type: "event"; id: number; event: EngineEvent; statistics: TransferStatistics | null }
  | { type: "result"; id: number; result: FaxMediaResult }
  | { type: "failed"; id: number; message: string }
  | { type: "pong"; seq: number };

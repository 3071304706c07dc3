/**
 * A real HTTP receiver for status push tests: records every request (method, path, headers,
 * body) and answers with what the test scripted for its path. It can be taken down and
 * brought back on the same port, as a customer's endpoint that is down for a while.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * The answer for a request (after `delayMs`, a slow receiver), or "hang" to never answer it (a
 * receiver stuck mid-request).
 */
export type Responder = (req: ReceivedRequest) => { status: number; headers?: Record<string, string>; body?: string; delayMs?: number } | "hang";

export class PushReceiver {
  readonly requests: ReceivedRequest[] = [];
  private readonly routes = new Map<string, Responder>();
  private server: http.Server | null = null;
  port = 0;

  /** Scripts the answer for a path (default: 200 "ok"). */
  on(path: string, responder: Responder): void {
    this.routes.set(path, responder);
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  received(path: string): ReceivedRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  async start(port = this.port): Promise<void> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const entry: ReceivedRequest = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
        this.requests.push(entry);
        const answer = (this.routes.get(entry.path) ?? ((): ReturnType<Responder> => ({ status: 200, body: "ok" })))(entry);
        if (answer === "hang") return;
        const send = () => {
          res.writeHead(answer.status, answer.headers ?? {});
          res.end(answer.body ?? "");
        };
        if (answer.delayMs === undefined) send();
        else setTimeout(send, answer.delayMs);
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

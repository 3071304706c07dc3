/**
 * A real SMTP server for mail tests (the `smtp-server` package): keeps every message it
 * accepts, or answers with a scripted SMTP error, and a small MIME reader that finds a
 * message's text parts and attachments.
 */
import { SMTPServer } from "smtp-server";
import type { AddressInfo } from "node:net";

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

export class SmtpSink {
  readonly mails: ReceivedMail[] = [];
  /** When set, DATA is answered with this code and message instead of being accepted. */
  failWith: { code: number; message: string } | null = null;
  port = 0;
  private server: SMTPServer | null = null;

  async start(port = this.port): Promise<void> {
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      logger: false,
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on("data", (c: Buffer) => chunks.push(c));
        stream.on("end", () => {
          if (this.failWith !== null) {
            const error = Object.assign(new Error(this.failWith.message), { responseCode: this.failWith.code });
            callback(error);
            return;
          }
          this.mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString("utf8"),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => resolve());
    });
    this.server = server;
    this.port = (server.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

export interface MimePart {
  headers: Map<string, string>;
  body: Buffer;
}

/** The leaf parts of a MIME message, bodies decoded (base64 and quoted-printable). */
export function mimeParts(raw: string): MimePart[] {
  const split = raw.indexOf("\r\n\r\n") >= 0 ? "\r\n" : "\n";
  const [head, ...rest] = raw.split(`${split}${split}`);
  const headers = new Map<string, string>();
  for (const line of head!.replace(new RegExp(`${split}[ \\t]+`, "g"), " ").split(split)) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const bodyText = rest.join(`${split}${split}`);
  const type = headers.get("content-type") ?? "text/plain";
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (type.toLowerCase().startsWith("multipart/") && boundary) {
    const sections = bodyText.split(`--${boundary}`).slice(1);
    return sections.filter((s) => !s.startsWith("--")).flatMap((s) => mimeParts(s.replace(/^\r?\n/, "")));
  }
  const encoding = (headers.get("content-transfer-encoding") ?? "").toLowerCase();
  const body =
    encoding === "base64"
      ? Buffer.from(bodyText.replace(/\s+/g, ""), "base64")
      : encoding === "quoted-printable"
        ? Buffer.from(bodyText.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16))), "latin1")
        : Buffer.from(bodyText, "utf8");
  return [{ headers, body }];
}

export function attachments(raw: string): { filename: string; contentType: string; content: Buffer }[] {
  return mimeParts(raw)
    .filter((p) => /attachment/i.test(p.headers.get("content-disposition") ?? ""))
    .map((p) => ({
      filename: /filename="?([^";]+)"?/i.exec(p.headers.get("content-disposition")!)?.[1] ?? "",
      contentType: (p.headers.get("content-type") ?? "").split(";")[0]!.trim(),
      content: p.body,
    }));
}

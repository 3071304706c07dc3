/**
 * The SMTP listener of the mail-to-fax role (Nodemailer's `smtp-server`): the protocol part,
 * without store or job logic, which the role hands in as three handlers (sender, recipient,
 * message). It does what belongs to the protocol:
 *  - STARTTLS with the configured certificate (none without one), optionally required
 *    before MAIL FROM (530 5.7.0);
 *  - the size limit, announced with SIZE (RFC 1870) and enforced while the mail streams in:
 *    a larger mail is not buffered past the limit and is answered 552 5.3.4;
 *  - connection limits: in all (smtp-server's maxClients, 421) and per client address (421);
 *    an idle connection is closed after socketTimeout;
 *  - the recipient limit per mail (452 4.5.3, RFC 5321 §4.5.3.1.10: the client sends the rest
 *    in another mail);
 *  - no AUTH: who may send is decided by the sender handler (mail-to-fax/authorize-sender.ts).
 * A handler that throws is logged by the caller's handler wrapper and answered 451 (the sending
 * server tries again), never with a crash of the node.
 */
import { SMTPServer, type SMTPServerSession } from "smtp-server";
import type { AddressInfo } from "node:net";
import { refusal, refusalError, type SmtpRefusal } from "./smtp-replies.ts";

export interface ListenerSession {
  id: string;
  remoteAddress: string;
  secure: boolean;
  /** The envelope sender of the current transaction (lower-case; "" for the null sender). */
  sender: string;
  /** Accepted recipients of the current transaction, as written. */
  recipients: string[];
  /** What the handlers keep for the current transaction; emptied at each MAIL FROM. */
  transaction: Record<string, unknown>;
}

export type MessageOutcome = { ok: true; reply: string } | { ok: false; refusal: SmtpRefusal };

export interface SmtpListenerHandlers {
  onSender(session: ListenerSession): Promise<SmtpRefusal | null>;
  onRecipient(address: string, session: ListenerSession): Promise<SmtpRefusal | null>;
  onMessage(message: Buffer, session: ListenerSession): Promise<MessageOutcome>;
  /** A handler threw: the error, and which step. The client is answered internal_error (451). */
  onError(error: unknown, step: "sender" | "recipient" | "message"): void;
}

export interface SmtpListenerOptions {
  host: string;
  port: number;
  /** Greeting name (220 NAME); empty: the host name. */
  hostname: string;
  tls: { key: Buffer; cert: Buffer } | null;
  requireTls: boolean;
  maxMessageBytes: number;
  maxRecipients: number;
  maxConnections: number;
  maxConnectionsPerAddress: number;
  socketTimeoutMs: number;
}

export class SmtpListener {
  private server: SMTPServer | null = null;
  private readonly perAddress = new Map<string, number>();
  private readonly counted = new Set<string>();
  private readonly sessions = new Map<string, ListenerSession>();
  /** Mails being processed (between the end of DATA and the answer); stop() waits for them. */
  private readonly inFlight = new Set<Promise<unknown>>();
  port = 0;

  constructor(
    private readonly options: SmtpListenerOptions,
    private readonly handlers: SmtpListenerHandlers,
  ) {}

  async start(): Promise<void> {
    const o = this.options;
    const server = new SMTPServer({
      ...(o.hostname === "" ? {} : { name: o.hostname }),
      banner: "Faxline mail-to-fax",
      logger: false,
      ...(o.tls === null ? { disabledCommands: ["AUTH", "STARTTLS"] } : { disabledCommands: ["AUTH"], key: o.tls.key, cert: o.tls.cert }),
      authOptional: true,
      size: o.maxMessageBytes,
      maxClients: o.maxConnections,
      socketTimeout: o.socketTimeoutMs,
      closeTimeout: 5_000,
      onConnect: (session, callback) => {
        const count = this.perAddress.get(session.remoteAddress) ?? 0;
        if (count >= o.maxConnectionsPerAddress) {
          callback(Object.assign(new Error(`4.7.0 Too many connections from ${session.remoteAddress}; try again later`), { responseCode: 421 }));
          return;
        }
        this.perAddress.set(session.remoteAddress, count + 1);
        this.counted.add(session.id);
        callback();
      },
      onClose: (session) => {
        this.sessions.delete(session.id);
        if (!this.counted.delete(session.id)) return;
        const count = (this.perAddress.get(session.remoteAddress) ?? 1) - 1;
        if (count <= 0) this.perAddress.delete(session.remoteAddress);
        else this.perAddress.set(session.remoteAddress, count);
      },
      onMailFrom: (address, session, callback) => {
        if (o.requireTls && !session.secure) {
          callback(Object.assign(new Error("5.7.0 Must issue a STARTTLS command first"), { responseCode: 530 }));
          return;
        }
        const s = this.session(session);
        s.sender = address.address.trim().toLowerCase();
        s.recipients = [];
        s.transaction = {};
        this.answer(this.handlers.onSender(s), "sender", callback);
      },
      onRcptTo: (address, session, callback) => {
        const s = this.session(session);
        if (s.recipients.length >= o.maxRecipients) {
          callback(refusalError(refusal("too_many_recipients", `at most ${o.maxRecipients} fax addresses per mail`)));
          return;
        }
        this.answer(
          this.handlers.onRecipient(address.address, s).then((r) => {
            if (r === null) s.recipients.push(address.address);
            return r;
          }),
          "recipient",
          callback,
        );
      },
      onData: (stream, session, callback) => {
        const s = this.session(session);
        const chunks: Buffer[] = [];
        let bytes = 0;
        stream.on("data", (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes <= o.maxMessageBytes) chunks.push(chunk);
        });
        stream.on("end", () => {
          if (stream.sizeExceeded || bytes > o.maxMessageBytes) {
            callback(refusalError(refusal("message_too_big", `it has more than ${o.maxMessageBytes} bytes; send the documents in several mails or make them smaller`)));
            return;
          }
          const work = this.handlers
            .onMessage(Buffer.concat(chunks), s)
            .then(
              (outcome) => (outcome.ok ? callback(null, outcome.reply) : callback(refusalError(outcome.refusal))),
              (error: unknown) => {
                this.handlers.onError(error, "message");
                callback(refusalError(refusal("internal_error")));
              },
            );
          this.inFlight.add(work);
          void work.finally(() => this.inFlight.delete(work));
        });
      },
    });
    server.on("error", () => {
      // A client's broken connection is reported here; it concerns that connection only.
    });
    await new Promise<void>((resolve, reject) => {
      server.server.once("error", reject);
      server.listen(o.port, o.host, () => {
        server.server.off("error", reject);
        resolve();
      });
    });
    this.server = server;
    this.port = (server.server.address() as AddressInfo).port;
  }

  /** Stops taking connections, lets the mails being processed get their answer, then closes. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server === null) return;
    server.server.close();
    await Promise.allSettled([...this.inFlight]);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private session(session: SMTPServerSession): ListenerSession {
    let s = this.sessions.get(session.id);
    if (s === undefined) {
      s = { id: session.id, remoteAddress: session.remoteAddress, secure: session.secure, sender: "", recipients: [], transaction: {} };
      this.sessions.set(session.id, s);
    }
    s.secure = session.secure;
    return s;
  }

  private answer(result: Promise<SmtpRefusal | null>, step: "sender" | "recipient", callback: (err?: Error | null) => void): void {
    result.then(
      (r) => callback(r === null ? null : refusalError(r)),
      (error: unknown) => {
        this.handlers.onError(error, step);
        callback(refusalError(refusal("internal_error")));
      },
    );
  }
}

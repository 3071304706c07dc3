/**
 * A real SMTP server for mail tests (the `smtp-server` package): keeps every message it
 * accepts, or answers with a scripted SMTP error, and a small MIME reader, enough for what
 * nodemailer writes, that finds a message's headers, text parts and attachments.
 */
import assert from "node:assert/strict";
import { SMTPServer, type SMTPServerOptions } from "smtp-server";
import type { AddressInfo } from "node:net";

export interface ReceivedMail {
  /** The envelope's MAIL FROM address. */
  from: string;
  /** The envelope's RCPT TO addresses. */
  to: string[];
  /** The message as sent, decoded as UTF-8. */
  raw: string;
  /** Whether the session was encrypted (TLS or STARTTLS). */
  secure: boolean;
  /** The user the client logged in as, if it did. */
  user: string | undefined;
}

/**
 * Options for the server, over the sink's defaults (no STARTTLS, login optional, no logging).
 * `onData` stays the sink's own, which records the mail; refuse DATA with `failWith`.
 */
export type SmtpSinkOptions = Omit<SMTPServerOptions, "onData">;

export class SmtpSink {
  readonly mails: ReceivedMail[] = [];
  /** When set, DATA is answered with this code and message instead of being accepted. */
  failWith: { code: number; message: string } | null = null;
  port = 0;
  private server: SMTPServer | null = null;

  constructor(private readonly options: SmtpSinkOptions = {}) {}

  async start(port = this.port): Promise<void> {
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      logger: false,
      ...this.options,
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
            secure: session.secure,
            user: session.user,
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

// --- the MIME reader ---

export interface MimePart {
  /** Header names in lower case, values unfolded but not decoded (see `decodeHeader`). */
  headers: Map<string, string>;
  /** The decoded body (base64, quoted-printable, else as sent); empty for a multipart. */
  body: Buffer;
  /** The parts of a multipart, else none. */
  parts: MimePart[];
}

/**
 * Parses a message with CRLF or LF line ends, multiparts nested to any depth. A string is
 * taken as text (a `ReceivedMail.raw`), a Buffer as the bytes sent.
 */
export function parseMime(raw: string | Buffer): MimePart {
  // One char per byte from here on, so that 8-bit bodies come back byte for byte.
  const bytes = typeof raw === "string" ? Buffer.from(raw, "utf8").toString("latin1") : raw.toString("latin1");
  return parseEntity(bytes, bytes.includes("\r\n") ? "\r\n" : "\n");
}

function parseEntity(entity: string, nl: string): MimePart {
  const end = entity.startsWith(nl) ? 0 : entity.indexOf(nl + nl);
  const head = end < 0 ? entity : entity.slice(0, end);
  const content = end < 0 ? "" : entity.slice(end + (end === 0 ? nl.length : 2 * nl.length));
  const headers = new Map<string, string>();
  for (const line of head.replace(new RegExp(`${nl}[ \\t]+`, "g"), " ").split(nl)) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), Buffer.from(line.slice(colon + 1).trim(), "latin1").toString("utf8"));
  }
  const type = headers.get("content-type") ?? "text/plain";
  const boundary = /^multipart\//i.test(type) ? headerParam(type, "boundary") : undefined;
  if (boundary) {
    // A delimiter is the line break before it, "--", the boundary; the last one ends in "--".
    const pieces = `${nl}${content}`.split(`${nl}--${boundary}`).slice(1);
    const close = pieces.findIndex((piece) => piece.startsWith("--"));
    assert.ok(close >= 0, `the multipart has no closing boundary:\n${content}`);
    const parts = pieces.slice(0, close).map((piece) => parseEntity(piece.replace(/^[ \t]*\r?\n/, ""), nl));
    return { headers, body: Buffer.alloc(0), parts };
  }
  const encoding = (headers.get("content-transfer-encoding") ?? "7bit").toLowerCase();
  const body =
    encoding === "base64" ? Buffer.from(content.replace(/\s+/g, ""), "base64") : encoding === "quoted-printable" ? decodeQuotedPrintable(content) : Buffer.from(content, "latin1");
  return { headers, body, parts: [] };
}

/** Decodes quoted-printable text (one char per byte) to its bytes. */
export function decodeQuotedPrintable(text: string): Buffer {
  const unfolded = text.replace(/=[ \t]*\r?\n/g, "");
  const bytes: number[] = [];
  for (let i = 0; i < unfolded.length; i++) {
    if (unfolded[i] === "=" && /^[0-9A-F]{2}$/i.test(unfolded.slice(i + 1, i + 3))) {
      bytes.push(parseInt(unfolded.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(unfolded.charCodeAt(i) & 0xff);
    }
  }
  return Buffer.from(bytes);
}

/** Decodes RFC 2047 encoded words (UTF-8, ISO-8859-1 or US-ASCII; B or Q), as in a Subject header. */
export function decodeHeader(value: string): string {
  return value
    .replace(/(\?=)\s+(?==\?)/g, "$1")
    .replace(/=\?(utf-8|iso-8859-1|us-ascii)(?:\*[^?]*)?\?([BQ])\?([^?]*)\?=/gi, (_, charset: string, kind: string, text: string) => {
      const bytes = kind.toUpperCase() === "B" ? Buffer.from(text, "base64") : decodeQuotedPrintable(text.replace(/_/g, " "));
      return bytes.toString(charset.toLowerCase() === "utf-8" ? "utf8" : "latin1");
    });
}

/**
 * A parameter of a structured header such as Content-Type or Content-Disposition: quoted or
 * not, RFC 2231 encoded (`name*=utf-8''...`) and continued (`name*0*=`, `name*1=`) or not,
 * RFC 2047 encoded words decoded.
 */
export function headerParam(value: string, name: string): string | undefined {
  const pieces = new Map<number, { text: string; extended: boolean }>();
  let charset = "";
  const param = /;\s*([^=;\s*]+)(?:\*(\d+))?(\*)?\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]*))/g;
  for (const [, key, index, star, quoted, token] of value.matchAll(param)) {
    if (key!.toLowerCase() !== name.toLowerCase()) continue;
    let text = quoted !== undefined ? quoted.replace(/\\(.)/g, "$1") : token!;
    const extended = star !== undefined;
    const encoded = extended && (index === undefined || index === "0") ? /^([^']*)'[^']*'(.*)$/.exec(text) : null;
    if (encoded) [charset, text] = [encoded[1]!.toLowerCase(), encoded[2]!];
    pieces.set(index === undefined ? 0 : Number(index), { text, extended });
  }
  if (pieces.size === 0) return undefined;
  const ordered = [...pieces.entries()].sort(([a], [b]) => a - b).map(([, piece]) => piece);
  if (!ordered.some((piece) => piece.extended)) return decodeHeader(ordered.map((piece) => piece.text).join(""));
  // Percent-encoded pieces are bytes in `charset`; join the bytes before decoding them.
  const bytes = Buffer.concat(
    ordered.map((piece) =>
      piece.extended ? Buffer.from(piece.text.replace(/%([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), "latin1") : Buffer.from(piece.text, "utf8"),
    ),
  );
  return bytes.toString(charset === "utf-8" || charset === "utf8" || charset === "us-ascii" ? "utf8" : "latin1");
}

/** The leaf parts of a message (or of a part), in order. */
export function mimeParts(message: string | Buffer | MimePart): MimePart[] {
  const part = typeof message === "string" || Buffer.isBuffer(message) ? parseMime(message) : message;
  return part.parts.length === 0 ? [part] : part.parts.flatMap((p) => mimeParts(p));
}

/** The first leaf part whose Content-Type is `type` (e.g. "text/plain"); fails the test if there is none. */
export function mimePartOfType(message: string | Buffer | MimePart, type: string): MimePart {
  const part = mimeParts(message).find((p) => contentType(p).toLowerCase() === type.toLowerCase());
  assert.ok(part, `no ${type} part`);
  return part;
}

/** A part's media type as written, without parameters; "" when the part has no Content-Type. */
export function contentType(part: MimePart): string {
  return (part.headers.get("content-type") ?? "").split(";")[0]!.trim();
}

/** The parts sent with `Content-Disposition: attachment`: file name, media type and decoded content. */
export function attachments(message: string | Buffer | MimePart): { filename: string; contentType: string; content: Buffer }[] {
  return mimeParts(message)
    .filter((p) => /^attachment\b/i.test(p.headers.get("content-disposition") ?? ""))
    .map((p) => ({
      filename: headerParam(p.headers.get("content-disposition")!, "filename") ?? "",
      contentType: contentType(p),
      content: p.body,
    }));
}

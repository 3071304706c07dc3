/**
 * Reads a mail as it came in over SMTP (RFC 5322 with MIME) with `mailparser`, and checks the
 * structure that mailparser forgives: a mail without headers, a multipart body without its
 * boundary parameter, or with a boundary that never occurs (its parts would silently vanish,
 * and with them the documents to fax). Such a mail is refused as malformed rather than faxed
 * without its attachments. Pure apart from the parser.
 */
import { simpleParser, type AddressObject } from "mailparser";
import type { MailAttachment } from "./mail-to-job.ts";
import { refusal, type SmtpRefusal } from "./smtp-replies.ts";

export interface ReadMail {
  /** Lower-case header name → every value of it, top to bottom (unfolded). */
  headers: Map<string, string[]>;
  contentType: string | null;
  messageId: string | null;
  subject: string;
  text: string | null;
  fromAddresses: string[];
  fromName: string | null;
  attachments: MailAttachment[];
}

const BOUNDARY_PARAM = /boundary\s*=\s*(?:"([^"]+)"|([^\s;"]+))/gi;

function structureProblem(raw: Buffer): string | null {
  const text = raw.toString("latin1");
  const headerEnd = text.search(/\r?\n\r?\n/);
  const head = headerEnd < 0 ? text : text.slice(0, headerEnd);
  if (!/^[!-9;-~]+:/.test(head)) return "it does not start with mail headers (Name: value)";
  const contentType = /^content-type:[ \t]*([^\r\n]*(?:\r?\n[ \t][^\r\n]*)*)/im.exec(head)?.[1]?.replace(/\r?\n[ \t]+/g, " ") ?? "";
  if (/^\s*multipart\//i.test(contentType) && !/boundary\s*=/i.test(contentType)) return "its Content-Type is multipart but names no boundary, so its parts cannot be told apart";
  // The boundaries declared in Content-Type headers (of the mail and of its parts), never
  // "boundary=" written anywhere else in the text.
  for (const header of text.matchAll(/^content-type:[ \t]*([^\r\n]*(?:\r?\n[ \t][^\r\n]*)*)/gim)) {
    for (const m of header[1]!.matchAll(BOUNDARY_PARAM)) {
      const boundary = m[1] ?? m[2]!;
      if (!text.includes(`\n--${boundary}`)) return `the MIME boundary "${boundary.slice(0, 70)}" never occurs, so the parts of the mail (and its attachments) cannot be found`;
    }
  }
  return null;
}

function addresses(value: AddressObject | AddressObject[] | undefined): { address: string; name: string }[] {
  const list = value === undefined ? [] : Array.isArray(value) ? value : [value];
  return list.flatMap((a) => a.value).flatMap((v) => (v.address ? [{ address: v.address.toLowerCase(), name: v.name }] : []));
}

export async function readMail(raw: Buffer): Promise<{ ok: true; mail: ReadMail } | { ok: false; refusal: SmtpRefusal }> {
  const problem = structureProblem(raw);
  if (problem !== null) return { ok: false, refusal: refusal("malformed_mime", problem) };
  let parsed;
  try {
    parsed = await simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true, skipTextLinks: true, maxHtmlLengthToParse: 5 * 1024 * 1024 });
  } catch (error) {
    return { ok: false, refusal: refusal("malformed_mime", (error instanceof Error ? error.message : String(error)).slice(0, 200)) };
  }
  const headers = new Map<string, string[]>();
  for (const { key, line } of parsed.headerLines) {
    const value = line.slice(line.indexOf(":") + 1).replace(/\r?\n[ \t]+/g, " ").trim();
    const list = headers.get(key.toLowerCase()) ?? [];
    list.push(value);
    headers.set(key.toLowerCase(), list);
  }
  const from = addresses(parsed.from);
  const text = typeof parsed.text === "string" ? parsed.text : null;
  return {
    ok: true,
    mail: {
      headers,
      contentType: headers.get("content-type")?.[0] ?? null,
      messageId: parsed.messageId ?? null,
      subject: parsed.subject ?? "",
      text,
      fromAddresses: from.map((f) => f.address),
      fromName: from[0]?.name || null,
      attachments: parsed.attachments.map((a) => ({ filename: a.filename ?? null, contentType: a.contentType, content: a.content, related: a.related === true })),
    },
  };
}

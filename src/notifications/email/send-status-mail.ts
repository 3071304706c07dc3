/**
 * Sends composed status mails over SMTP and turns every outcome into data: sent, a temporary
 * failure worth retrying, or a permanent one. Nothing an SMTP server or the network does makes
 * sendStatusMail throw.
 *
 * Classification: a 4xx answer, a connection, DNS or timeout error is temporary; a 5xx answer is
 * permanent (the server has refused this mail for good: unknown address, size, policy). Failed
 * logins and failed TLS are temporary whatever the server answered: they are this node's
 * configuration, and once an operator fixes it the retries go through.
 */
import nodemailer, { type SMTPSentMessageInfo, type SMTPTransportOptions, type Transporter } from "nodemailer";
import type { FaxlineConfig } from "../../config/schema.ts";
import { assertInvariant } from "../../errors/internal-error.ts";
import type { StatusMailMessage } from "./compose-status-mail.ts";

export type StatusMailTransport = Transporter<SMTPSentMessageInfo, SMTPTransportOptions>;

export type SendStatusMailResult =
  | { ok: true; messageId: string; response: string }
  | { ok: false; temporary: boolean; responseCode: number | null; message: string };

/**
 * One SMTP connection per mail, no pool: status mails are few (at most two per finished job),
 * and a pooled connection that the server dropped while idle would fail the next mail.
 * Callers send no mail at all when `mail.host` is empty (see the config key).
 */
export function createMailTransport(mail: FaxlineConfig["mail"]): StatusMailTransport {
  assertInvariant(mail.host !== "", "mail-transport-without-host", "createMailTransport called although mail.host is empty");
  return nodemailer.createTransport({
    host: mail.host,
    port: mail.port,
    secure: mail.security === "tls",
    requireTLS: mail.security === "starttls",
    ignoreTLS: mail.security === "none",
    opportunisticTLS: mail.security === "opportunistic",
    // Opportunistic TLS (RFC 7435) protects against eavesdropping without authenticating the
    // server, as MTAs do among themselves: a self-signed certificate must not stop the mail.
    // starttls and tls verify the certificate (extra CAs: NODE_EXTRA_CA_CERTS).
    ...(mail.security === "opportunistic" ? { tls: { rejectUnauthorized: false } } : {}),
    ...(mail.user === "" ? {} : { auth: { user: mail.user, pass: mail.password } }),
    connectionTimeout: mail.timeout,
    greetingTimeout: mail.timeout,
    socketTimeout: mail.timeout,
    dnsTimeout: mail.timeout,
  });
}

export async function sendStatusMail(transport: StatusMailTransport, message: StatusMailMessage): Promise<SendStatusMailResult> {
  try {
    const info = await transport.sendMail(message);
    return { ok: true, messageId: info.messageId, response: info.response };
  } catch (error) {
    return describeFailure(error, transport, message);
  }
}

interface SmtpError {
  code?: string;
  /** The system or TLS error code under nodemailer's own, e.g. ECONNREFUSED, CERT_HAS_EXPIRED. */
  originalCode?: string;
  responseCode?: number;
  response?: string;
  command?: string;
  message?: string;
}

function describeFailure(error: unknown, transport: StatusMailTransport, message: StatusMailMessage): Extract<SendStatusMailResult, { ok: false }> {
  const e: SmtpError = typeof error === "object" && error !== null ? (error as SmtpError) : { message: String(error) };
  const responseCode = typeof e.responseCode === "number" ? e.responseCode : null;
  const { host, port, auth, secure, socketTimeout } = transport.options;
  const server = `the mail server ${host}:${port}`;
  const detail = e.response ? `(it answered "${e.response}"${e.command ? ` to ${e.command}` : ""})` : `(${e.message?.trim() || "no details"})`;
  const failure = (temporary: boolean, text: string) => ({ ok: false as const, temporary, responseCode, message: text });

  if (e.code === "EAUTH" || e.code === "ENOAUTH") {
    return failure(true, `Logging in to ${server} as "${auth?.user ?? ""}" failed ${detail}. Check mail.user and mail.password.`);
  }
  if (e.code === "ETLS" || TLS_ERROR_CODE.test(e.originalCode ?? "")) {
    const hint = secure
      ? `Check mail.security: "tls" needs a server that speaks TLS from the first byte (usually port 465); use "starttls" for port 587.`
      : `Check that the server's certificate is valid for ${host} and issued by a CA this node trusts (NODE_EXTRA_CA_CERTS adds one), or check mail.security.`;
    return failure(true, `TLS with ${server} failed ${detail}. ${hint}`);
  }
  if (responseCode !== null && responseCode >= 400 && responseCode < 500) {
    return failure(true, `${capitalize(server)} refused the mail for now ${detail}. A later try may succeed.`);
  }
  if (responseCode !== null && responseCode >= 500) {
    const hint =
      e.command === "RCPT TO"
        ? `Check the address ${message.to} (statusReportOptions.reportMail of the job).`
        : e.command === "MAIL FROM"
          ? `Check that the server accepts mail.from (${message.from}) as sender from this node.`
          : "The server refused the mail itself (its size, content or a policy); sending it again will not help.";
    return failure(false, `${capitalize(server)} rejected the mail to ${message.to} for good ${detail}. ${hint}`);
  }
  switch (e.code) {
    case "ETIMEDOUT":
      return failure(true, `${capitalize(server)} did not answer within mail.timeout (${socketTimeout} ms). Check that mail.host and mail.port name an SMTP server.`);
    case "EDNS":
      return failure(true, `The mail server name ${host} could not be resolved ${detail}. Check mail.host.`);
    case "ECONNECTION":
    case "ESOCKET":
      return failure(
        true,
        `Could not talk to ${server} ${detail}. Check mail.host and mail.port, and that the server runs and accepts connections from this node.`,
      );
    case "EENVELOPE":
    case "EMESSAGE":
      return failure(false, `The mail to ${message.to} cannot be sent ${detail}.`);
    default:
      return failure(true, `Sending the mail to ${message.to} through ${server} failed ${detail}.`);
  }
}

/** Node's codes for failed TLS handshakes and certificate checks, which nodemailer reports as ESOCKET. */
const TLS_ERROR_CODE = /^ERR_SSL_|^ERR_TLS_|CERT|SELF_SIGNED|UNABLE_TO_|HOSTNAME_MISMATCH/;

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

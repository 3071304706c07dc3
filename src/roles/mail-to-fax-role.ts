/**
 * The mail-to-fax role (docs/mail-to-fax.md, ADR 0021): an SMTP listener whose mails to
 * `<number>@<fax domain>` become fax jobs of the sender's customer. It wires the parts of
 * src/mail-to-fax/ to the store:
 *
 *  RCPT TO    at the first one, the sender is looked up (user, else allowed domain), its
 *             settings merged (customer → profile → user), and a sender that may not fax is
 *             refused (every RCPT of the mail gets that answer); each address must be a fax
 *             number at a fax domain;
 *  DATA       the mail is read (MIME), checked for loops and automatic mail, the sender
 *             authorised with the mail in hand (From, the trusted relay's SPF/DKIM/DMARC
 *             verdicts, the PIN), turned into a send request, checked by the API's intake and
 *             stored as a job (jobs.source M2F, jobs.mail_origin, and
 *             jobs.suppress_blank_pages from the sender's fax.suppressBlankPages) in one insert. Only then is
 *             the mail answered 250: a node killed after the 250 has the job in its store and
 *             sends it after its restart like any job; a node killed before it leaves the
 *             sending server without a 250, and it sends again.
 *
 * A mail sent again after a lost 250 (same Message-ID, sender and recipients) finds its job by
 * the idempotency key and is answered 250 with that job, so it is never faxed twice.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { allowListMatches, parseAllowList } from "../accounts/accounts.ts";
import { verifyPassword } from "../accounts/passwords.ts";
import { intakeLimits } from "../api/routes/v1/send-fax.ts";
import { intakeFaxJob } from "../api/fax-job-intake.ts";
import { ConfigError } from "../config/config-error.ts";
import { ApiError } from "../errors/api-errors.ts";
import { coerceError } from "../errors/internal-error.ts";
import { trustedVerdicts } from "../mail-to-fax/authentication-results.ts";
import { authorizeEnvelopeSender, authorizeMail, type SenderRecord } from "../mail-to-fax/authorize-sender.ts";
import { isFaxDomain, readFaxAddress, splitAddress } from "../mail-to-fax/fax-address.ts";
import { detectLoop } from "../mail-to-fax/loop-detection.ts";
import { mailLanguage, serializeMailOrigin } from "../mail-to-fax/mail-origin.ts";
import { extractPin, mailToJobRequest } from "../mail-to-fax/mail-to-job.ts";
import { readMail } from "../mail-to-fax/read-mail.ts";
import { effectiveSettings, type EffectiveMailToFaxSettings } from "../mail-to-fax/settings.ts";
import { SmtpListener, type ListenerSession, type MessageOutcome } from "../mail-to-fax/smtp-listener.ts";
import { refusal, type SmtpRefusal } from "../mail-to-fax/smtp-replies.ts";
import { REGION_NUMBER_CONTEXT } from "../numbers/normalize-number.ts";
import { insertJob } from "../store/queries/insert-job.ts";
import { clearWrongPins, lookUpSender, pinLockedUntil, recordWrongPin, type SenderLookup } from "../store/queries/mail-to-fax.ts";
import type { NodeContext, RunningRole } from "./node-context.ts";

export interface MailToFaxRole extends RunningRole {
  /** The port the SMTP listener took (mailToFax.port, or the free port picked for 0). */
  readonly port: number;
}

interface SenderState {
  lookup: SenderLookup;
  record: SenderRecord;
  settings: EffectiveMailToFaxSettings;
  login: { login: string; isTest: boolean };
}

const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

/** Reads the TLS files; a missing or unreadable one stops the node with a clear message. */
function readTls(config: NodeContext["config"]["mailToFax"]): { key: Buffer; cert: Buffer } | null {
  if (config.tlsCertFile === "") return null;
  try {
    return { cert: readFileSync(config.tlsCertFile), key: readFileSync(config.tlsKeyFile) };
  } catch (err) {
    throw new ConfigError(`Invalid configuration mailToFax.tlsCertFile/tlsKeyFile: ${(err as Error).message}`);
  }
}

/** Whose PIN a sender gives: its own as a user, else its domain's ("@example.org"). */
function pinOwner(lookup: SenderLookup, sender: string): string {
  if (lookup.via === "user") return sender.trim().toLowerCase();
  const parts = splitAddress(sender);
  return `@${(parts?.domain ?? sender).toLowerCase()}`;
}

export async function startMailToFaxRole(ctx: NodeContext): Promise<MailToFaxRole> {
  const { config, store, logger } = ctx;
  const m2f = config.mailToFax;
  const log = logger.child({ role: "mail-to-fax" });
  let trustedRelays: string[];
  try {
    trustedRelays = parseAllowList(m2f.trustedRelays);
  } catch (err) {
    throw new ConfigError(`Invalid configuration mailToFax.trustedRelays: ${(err as Error).message}`);
  }
  const numberContext = REGION_NUMBER_CONTEXT[config.node.region];
  const faxDomains = m2f.domains.map((d) => d.toLowerCase());

  const storeRefusal = (err: unknown): SmtpRefusal => {
    if (store.faults.isUnavailable(err)) return refusal("store_unavailable");
    throw err;
  };

  /** The sender's decision, made at its first RCPT and kept for the transaction. */
  async function senderDecision(session: ListenerSession): Promise<SmtpRefusal | null> {
    if (session.transaction.sender !== undefined) return null;
    if (session.transaction.refusal !== undefined) return session.transaction.refusal as SmtpRefusal;
    const decided = await decideSender(session);
    if (decided !== null) session.transaction.refusal = decided;
    return decided;
  }

  async function decideSender(session: ListenerSession): Promise<SmtpRefusal | null> {
    if (trustedRelays.length > 0 && !allowListMatches(trustedRelays, session.remoteAddress)) {
      log.warn({ remote: session.remoteAddress, sender: session.sender }, "mail-to-fax refused a client that is none of mailToFax.trustedRelays");
      return refusal("untrusted_client", `${session.remoteAddress} is none of the mail servers this service takes mail from`);
    }
    const sender = session.sender;
    if (sender === "") return refusal("null_sender");
    const parts = splitAddress(sender);
    if (parts !== null && isFaxDomain(parts.domain, faxDomains)) return refusal("mail_loop", "the sender is itself a fax address");
    let lookup: SenderLookup | null;
    try {
      lookup = await lookUpSender(store.db, sender);
    } catch (err) {
      return storeRefusal(err);
    }
    if (lookup !== null && (lookup.customer === null || lookup.login === null)) {
      log.warn({ custNr: lookup.custNr, sender }, "a sender of a customer whose mail-to-fax is not set up (no m2f_customers row, or its login is missing or disabled) was refused");
      return refusal("sender_inactive", `mail-to-fax of customer ${lookup.custNr} is not set up; ask your fax administrator`);
    }
    const settings = lookup === null ? null : effectiveSettings(lookup.customer!.settings, lookup.profile?.settings ?? null, lookup.user?.settings ?? null);
    const record: SenderRecord | null =
      lookup === null
        ? null
        : { via: lookup.via, custNr: lookup.custNr, profile: lookup.user?.profile ?? null, active: (lookup.user?.active ?? true) && settings!.general.active, hasPin: lookup.pinHash !== null };
    const decision = authorizeEnvelopeSender(sender, record);
    if (!decision.ok) {
      log.info({ sender, remote: session.remoteAddress, reason: decision.refusal.kind }, "mail-to-fax sender refused");
      return decision.refusal;
    }
    const state: SenderState = { lookup: lookup!, record: decision.sender, settings: settings!, login: lookup!.login! };
    session.transaction.sender = state;
    return null;
  }

  async function onRecipient(address: string, session: ListenerSession): Promise<SmtpRefusal | null> {
    const refused = await senderDecision(session);
    if (refused !== null) return refused;
    const state = session.transaction.sender as SenderState | undefined;
    const read = readFaxAddress(address, faxDomains, numberContext, state?.settings.dialing.removePrefix ?? "");
    if (read.ok) return null;
    return read.kind === "domain" ? refusal("not_fax_domain", read.message) : refusal("not_fax_number", read.message);
  }

  async function onMessage(raw: Buffer, session: ListenerSession): Promise<MessageOutcome> {
    const state = session.transaction.sender as SenderState | undefined;
    if (state === undefined) return { ok: false, refusal: refusal("internal_error") };
    const refused = (r: SmtpRefusal): MessageOutcome => {
      log.info({ sender: session.sender, custNr: state.lookup.custNr, reason: r.kind, detail: r.detail }, "mail-to-fax mail refused");
      return { ok: false, refusal: r };
    };
    const read = await readMail(raw);
    if (!read.ok) return refused(read.refusal);
    const mail = read.mail;
    const loop = detectLoop(mail.headers, mail.contentType);
    if (loop !== null) return refused(loop);

    const { pin } = extractPin(mail.subject);
    let pinState: "none" | "right" | "wrong" = "none";
    if (pin !== null) {
      // Wrong PINs are counted in the store, so a lockout holds on every node and across restarts,
      // per client address and the PIN's owner: the user, or the whole domain for a domain's PIN (so
      // that guesses spread over made-up addresses of an allowed domain count together).
      const remote = session.remoteAddress;
      const owner = pinOwner(state.lookup, session.sender);
      const nowMs = ctx.clock.now();
      try {
        const lockedUntil = await pinLockedUntil(store.db, remote, owner, nowMs);
        if (lockedUntil !== null) return refused(refusal("pin_locked", `wait ${Math.ceil((lockedUntil - nowMs) / 60_000)} minutes`));
        pinState = state.lookup.pinHash !== null && (await verifyPassword(pin, state.lookup.pinHash)) ? "right" : "wrong";
        if (pinState === "wrong") {
          const failures = await recordWrongPin(store.db, { remote, sender: owner }, nowMs, { maxFailures: m2f.pinMaxFailures, lockoutMs: m2f.pinLockout });
          log.warn({ remote, sender: session.sender, pinOf: owner, failures }, "mail-to-fax: a wrong PIN");
        } else {
          await clearWrongPins(store.db, remote, owner);
        }
      } catch (err) {
        return refused(storeRefusal(err));
      }
    }
    const fromRelay = trustedRelays.length > 0 && allowListMatches(trustedRelays, session.remoteAddress);
    const verdicts = fromRelay ? trustedVerdicts(mail.headers.get("authentication-results") ?? [], m2f.authservId) : null;
    const authorized = authorizeMail(state.record, { envelopeSender: session.sender, fromAddresses: mail.fromAddresses, verdicts, pin: pinState, usersWithoutProof: m2f.usersWithoutProof });
    if (!authorized.ok) return refused(authorized.refusal);

    const numbers = session.recipients.map((address) => {
      const r = readFaxAddress(address, faxDomains, numberContext, state.settings.dialing.removePrefix);
      return r.ok ? r.number : address;
    });
    const built = mailToJobRequest(
      { subject: mail.subject, text: mail.text, attachments: mail.attachments, fromName: mail.fromName, sender: session.sender },
      numbers,
      state.settings,
    );
    if (!built.ok) return refused(built.refusal);

    const now = ctx.clock.now();
    let job;
    try {
      // What the job is built from, not the bytes: a copy of the mail that came another way
      // (other Received headers) is the same request; another mail with the same Message-ID is not.
      job = intakeFaxJob(built.request, intakeLimits(config), now, sha256(JSON.stringify(built.request)));
      // No field of the REST contract: the setting reaches the renderer as a job attribute.
      job.suppressBlankPages = built.suppressBlankPages;
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const code = err.definition.code;
      return refused(code === "document_too_large" ? refusal("message_too_big", err.message) : code === "document_type_unknown" || code === "document_type_unavailable" ? refusal("attachment_unsupported", err.message) : refusal("job_refused", err.message));
    }
    const origin = serializeMailOrigin({
      messageId: mail.messageId,
      sender: session.sender,
      subject: extractPin(mail.subject).subject,
      language: mailLanguage(mail.headers.get("content-language")?.[0] ?? null, mail.headers.get("accept-language")?.[0] ?? null, state.settings.general.language),
    });
    // The same mail delivered again (its 250 was lost) is the same job: same Message-ID,
    // sender and recipients. A mail without Message-ID is known by its bytes.
    const idempotencyKey = `m2f:${sha256([mail.messageId ?? sha256(raw), session.sender, ...[...session.recipients].map((r) => r.toLowerCase()).sort()].join("\n"))}`;
    const owner = { custNr: state.lookup.custNr, login: state.login.login, isTest: state.login.isTest, region: config.node.region, datacenter: config.node.datacenter };
    const insert = () => insertJob(store, job, owner, { now, idempotencyKey, deadlineGraceMs: config.jobs.deadlineGrace, source: "M2F", mailOrigin: origin });
    let result: Awaited<ReturnType<typeof insertJob>>;
    try {
      try {
        result = await insert();
      } catch (err) {
        if (!store.faults.isUniqueViolation(err)) throw err;
        result = await insert();
      }
    } catch (err) {
      return refused(storeRefusal(err));
    }
    if (!result.inserted && !result.sameRequest) {
      return refused(refusal("message_id_reused", `job ${result.existingJobId} was made from a mail with Message-ID ${mail.messageId ?? "(none)"}, sender and recipients as this one, but other content; send it with a new Message-ID`));
    }
    if (!result.inserted) {
      log.info({ jobId: result.existingJobId, sender: session.sender }, "mail-to-fax mail delivered again; its job exists already");
      return { ok: true, reply: `2.0.0 Already accepted as fax job ${result.existingJobId}` };
    }
    log.info({ jobId: result.jobId, custNr: owner.custNr, sender: session.sender, recipients: job.recipients.length, documents: job.documents.length }, "mail-to-fax job accepted");
    ctx.metrics.jobAccepted(job.recipients.length);
    ctx.wake.render.notify();
    const n = job.recipients.length;
    return { ok: true, reply: `2.0.0 Accepted as fax job ${result.jobId} to ${n} recipient${n === 1 ? "" : "s"}` };
  }

  const listener = new SmtpListener(
    {
      host: m2f.host,
      port: m2f.port,
      hostname: m2f.hostname === "" ? hostname() : m2f.hostname,
      tls: readTls(m2f),
      requireTls: m2f.requireTls,
      maxMessageBytes: m2f.maxMessageBytes,
      maxRecipients: m2f.maxRecipients,
      maxConnections: m2f.maxConnections,
      maxConnectionsPerAddress: m2f.maxConnectionsPerAddress,
      socketTimeoutMs: m2f.socketTimeout,
    },
    {
      // Who sends is decided at RCPT, not at MAIL FROM: some sending servers treat a refused
      // MAIL FROM as a temporary fault; a refused RCPT is bounced to the sender with its text.
      onSender: async () => null,
      onRecipient,
      onMessage,
      onError: (error, step) => log.error({ err: coerceError(error), step }, "mail-to-fax failed to process a mail; answered 451 (the sending server tries again)"),
    },
  );
  await listener.start();
  log.info({ port: listener.port, domains: faxDomains, starttls: m2f.tlsCertFile !== "" }, "mail-to-fax listening");
  return {
    name: "mail-to-fax",
    port: listener.port,
    stop: () => listener.stop(),
  };
}

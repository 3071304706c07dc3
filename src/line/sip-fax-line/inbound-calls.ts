/**
 * The SIP line's answering side: every new INVITE the user agent hands over is checked, then
 * refused with the SIP status that says why, or answered and received (fax-reception.ts) and
 * handed to the inbound sink, which stores it (roles wire the store; line/ knows none).
 *
 * Before any of this the user agent asks `screen` about a new INVITE's source: a trunk's address
 * is handled; any other address is handled (and challenged) when trunks take digest
 * credentials, else answered with a stateless 403 while its refusal budget lasts, then ignored;
 * an address locked out after repeated wrong digest answers is ignored (flood-limits.ts).
 *
 * Checks, in order (each refusal is final; a carrier may then try another route):
 *  1. The caller: the source address must belong to a trunk with `inbound: true`, inside its
 *     `inboundFrom` blocks (default: its proxy's and registrar's addresses, unless the trunk has
 *     `inboundUsername`); else, when trunks take digest credentials, the INVITE is challenged
 *     (401) and its answer checked (sip/digest-auth.ts `SipDigestChallenger`) → else 403 Forbidden.
 *  2. The number: the Request-URI's user part (else the To URI's), read as a number of the node's
 *     region, must be an active inbound number (a DID of a topic; the sink decides what is
 *     active) → else 404 Not Found, the wrong number a caller's fax machine reports. A number
 *     the sink says is paused → 480 Temporarily Unavailable; one whose topic is over its quota
 *     → 486 Busy Here (both: the caller's fax machine tries again later).
 *  3. Capacity: the trunk's `maxCalls` (shared with outgoing calls) and the node's
 *     `inbound.channels` → else 486 Busy Here; no free media port, a store out of reach for the
 *     number's lookup, or a node stopping → 503 Service Unavailable.
 * A node that stops hangs up the receptions that run (what arrived is stored, PARTIAL); the
 * caller's fax machine sends again, as it does after any broken call.
 * A 100 Trying goes out at once, before the number's lookup, so the caller's INVITE stops
 * being retransmitted while the store answers.
 *
 * What arrived is stored whatever it is (complete, partial, failed after the answer): the sink's
 * `store` must be durable when it resolves. A store that fails is tried again (5 times over about
 * 30 s); a reception that still cannot be stored is left in the spool directory (its record as
 * JSON, its image as TIFF) and logged with its path, never dropped silently.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import net from "node:net";
import path from "node:path";
import type { Logger } from "../../lib/logger.ts";
import { normalizeFaxNumber, type NumberContext } from "../../numbers/normalize-number.ts";
import { SipDigestChallenger } from "../sip/digest-auth.ts";
import type { SourceLimiter } from "../sip/flood-limits.ts";
import { createResponse, newTag, REASON_PHRASES } from "../sip/sip-message.ts";
import type { IncomingInvite, InviteScreening } from "../sip/sip-user-agent.ts";
import type { SipSource } from "../sip/transports.ts";
import { parseNameAddr, parseSipUri } from "../sip/sip-uri.ts";
import { parseAddressBlock, type TrunkConfig } from "../trunks/trunk-config.ts";
import { faxIdent, type FaxCallSetup } from "./fax-call.ts";
import { receiveFaxCall, type ReceptionReport } from "./fax-reception.ts";
import { NoFreeMediaPortError } from "./media-ports.ts";
import { newReceivedFaxId } from "../../lib/ids.ts";
import {
  createReceptionDir,
  ENDED_FILE,
  IMAGE_FILE,
  lockSpool,
  PROGRESS_FILE,
  spooledReceptions,
  writeJsonDurably,
  type ReceptionRecord,
  type SpooledReception,
} from "../reception-spool/reception-spool.ts";
import { keepFirstPages, wholePages } from "../reception-spool/tiff-pages.ts";

/** A number that receives: whose it is and which topic. */
export interface InboundNumber {
  custNr: string;
  topic: string;
  /** The CSID to send to this number's callers (its fax id); absent or null: the trunk's, else the default. */
  csid?: string | null;
}

/** Why the sink will not take a call to a number of its own just now (the caller is to try again later). */
export interface InboundRefusal {
  /** paused → 480 Temporarily Unavailable; over_quota → 486 Busy Here. */
  refused: "paused" | "over_quota";
  /** For the log: which level paused it, how many faxes wait. */
  detail: string;
}

const REFUSAL_STATUS: Record<InboundRefusal["refused"], number> = { paused: 480, over_quota: 486 };

/** One reception, as the line hands it to the sink. */
export interface ReceivedCall {
  /** The received fax's id, chosen when the call came in (the spool's directory name); absent: the sink picks one. */
  id?: string;
  number: InboundNumber;
  trunk: string;
  /** The called number, E.164. */
  toNumber: string;
  /** The caller's number from From (user part), null when it is not a number. */
  fromNumber: string | null;
  report: ReceptionReport;
  /** The pages as SpanDSP wrote them (TIFF, one IFD per page); null when no page arrived. */
  image: Uint8Array | null;
  /** Wall clock, ms since the epoch, when the call ended. */
  endedAt: number;
}

/** Where received faxes go: roles wire it to the store. */
export interface InboundSink {
  /**
   * The topic of a called number (E.164); null when it is none of ours or does not answer
   * (inactive, no profile); a refusal when it is ours but takes no call just now.
   */
  lookup(e164: string): Promise<InboundNumber | InboundRefusal | null>;
  /** Stores the reception durably (with its deliveries); storing the same call twice must store it once. */
  store(call: ReceivedCall): Promise<void>;
}

export interface InboundCallsOptions {
  trunks: readonly TrunkConfig[];
  region: NumberContext;
  sink: InboundSink;
  /** Receptions at once on this node. */
  channels: number;
  /** Our CSI: the trunk's csid, else this. */
  defaultCsid: string;
  setup: () => FaxCallSetup;
  /** Counts a call on the trunk (shared with outgoing calls) and returns its release. */
  takeSlot: (trunk: string) => () => void;
  activeOnTrunk: (trunk: string) => number;
  /** Host name resolution for proxies and registrars. */
  lookup: (host: string) => Promise<string[]>;
  /** Digest realm of our 401 challenges. (Default: "faxline") */
  realm?: string;
  /** Whole-call limit, ms. (Default: 1 h) */
  maxCallMs?: number;
  tmpDir?: string;
  /**
   * The reception spool (reception-spool/reception-spool.ts): every reception is received into a
   * directory of its own here, page by page durably, and removed once stored; what a previous run
   * left is stored at start. (Default: `<tmpDir>/faxline-receptions`)
   */
  spoolDir?: string;
  logger?: Logger;
  /** Wall clock, ms since the epoch. */
  clock: { now(): number };
  /** Waits between store tries, ms. (Default: 1, 2, 4, 8, 15 s) */
  storeRetryDelaysMs?: readonly number[];
  /** The user agent's per-source bounds: refusal budgets and lockouts after wrong digest answers. */
  limiter?: SourceLimiter;
}

const DEFAULT_MAX_CALL_MS = 3_600_000;
const DEFAULT_STORE_RETRIES = [1000, 2000, 4000, 8000, 15_000] as const;

export class InboundCalls {
  readonly #options: InboundCallsOptions;
  readonly #allow = new Map<string, net.BlockList>();
  readonly #running = new Set<Promise<void>>();
  readonly #challenger: SipDigestChallenger;
  #active = 0;
  #closed = false;

  #spoolDir: string;
  /** The spool's lock (lockSpool), released at close. */
  #unlockSpool: (() => Promise<void>) | null = null;

  constructor(options: InboundCallsOptions) {
    this.#options = options;
    this.#spoolDir = options.spoolDir ?? "";
    this.#challenger = new SipDigestChallenger({ realm: options.realm ?? "faxline", now: () => options.clock.now() });
  }

  /** Receptions running now. */
  get active(): number {
    return this.#active;
  }

  /**
   * Builds each inbound trunk's list of allowed sources (resolving proxy and registrar names), and
   * stores what a previous run left in the reception spool.
   */
  async start(): Promise<void> {
    if (this.#unlockSpool === null) {
      // Without a spool of its own (tests, `faxline fax send`) a line gets a new one: it never
      // takes over another process's receptions.
      if (this.#spoolDir === "") this.#spoolDir = await mkdtemp(path.join(this.#options.tmpDir ?? tmpdir(), "faxline-receptions-"));
      this.#unlockSpool = await lockSpool(this.#spoolDir);
      await this.#recoverUnfinished();
    }
    for (const trunk of this.#options.trunks) {
      if (!trunk.inbound) continue;
      const list = new net.BlockList();
      // A trunk that authenticates by digest is not admitted by its proxy's address alone.
      const blocks = trunk.inboundFrom.length > 0 ? trunk.inboundFrom : trunk.inboundUsername !== "" ? [] : await this.#defaultSources(trunk);
      for (const text of blocks) {
        const block = parseAddressBlock(text);
        if (block === null) continue;
        list.addSubnet(block.address, block.prefix, block.family);
      }
      this.#allow.set(trunk.name, list);
    }
  }

  async #defaultSources(trunk: TrunkConfig): Promise<string[]> {
    const out: string[] = [];
    for (const hp of [trunk.proxy, trunk.registrar]) {
      if (hp === null) continue;
      if (net.isIP(hp.host) !== 0) out.push(hp.host);
      else {
        try {
          out.push(...(await this.#options.lookup(hp.host)));
        } catch (error) {
          this.#options.logger?.warn({ trunk: trunk.name, host: hp.host, err: error }, "cannot resolve an inbound trunk's host: its calls are refused until the node restarts or inboundFrom names its addresses");
        }
      }
    }
    return out;
  }

  /** Stops answering and waits for the receptions that run (they end when the line's user agent closes). */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...this.#running]);
    const unlock = this.#unlockSpool;
    this.#unlockSpool = null;
    await unlock?.().catch(() => undefined);
    if (this.#options.spoolDir === undefined && this.#spoolDir !== "") await rm(this.#spoolDir, { recursive: true, force: true }).catch(() => undefined);
  }

  /** The trunk whose `inboundFrom` (or proxy, registrar) holds `address`. */
  #trunkOfAddress(address: string): TrunkConfig | undefined {
    const family = net.isIPv6(address) ? "ipv6" : "ipv4";
    return this.#options.trunks.find((t) => this.#allow.get(t.name)?.check(address, family) === true);
  }

  /** The user agent's screening of a new INVITE's source (InviteScreening), before any state is kept. */
  screen(source: SipSource): InviteScreening {
    const limiter = this.#options.limiter;
    if (limiter?.isLockedOut(source.address)) return "drop";
    if (this.#trunkOfAddress(source.address) !== undefined) return "trunk";
    if (this.#options.trunks.some((t) => t.inbound && t.inboundUsername !== "")) return "challenge";
    return limiter === undefined || limiter.admitRefusal(source.address) ? "refuse" : "drop";
  }

  /** The user agent's incoming-call handler. */
  handle(invite: IncomingInvite): void {
    const run = this.#handle(invite).catch((error: unknown) => {
      this.#options.logger?.error({ err: error, callId: invite.request.headers.get("call-id") }, "incoming call failed inside Faxline");
      if (!invite.tx.lastResponse || invite.tx.lastResponse.status < 200) this.#refuse(invite, 500, "Server Internal Error");
    });
    this.#running.add(run);
    void run.finally(() => this.#running.delete(run));
  }

  #refuse(invite: IncomingInvite, status: number, phrase?: string, extra?: readonly [string, string]): void {
    if (invite.tx.state !== "proceeding" && invite.tx.state !== "trying") return;
    const response = createResponse(invite.request, status, phrase ?? REASON_PHRASES[status] ?? "Error", newTag());
    response.headers.append("server", "Faxline");
    if (extra !== undefined) response.headers.append(extra[0], extra[1]);
    invite.tx.respond(response);
  }

  /**
   * The trunk whose digest credentials the INVITE proved; null when it was challenged (401, the
   * call goes on with the caller's next INVITE); undefined when no trunk takes credentials or the
   * answer was wrong (the caller then gets 403).
   */
  #byDigest(invite: IncomingInvite, log: Logger | undefined): TrunkConfig | null | undefined {
    const trunks = this.#options.trunks.filter((t) => t.inbound && t.inboundUsername !== "");
    if (trunks.length === 0) return undefined;
    const verdict = this.#challenger.verify(invite.request, (username) => trunks.find((t) => t.inboundUsername === username)?.inboundPassword ?? null);
    const limiter = this.#options.limiter;
    const address = invite.source.address;
    if (verdict.result === "ok") {
      limiter?.recordAuthSuccess(address);
      return trunks.find((t) => t.inboundUsername === verdict.username);
    }
    if (verdict.result === "refused") {
      const locked = limiter?.recordAuthFailure(address) ?? false;
      if (locked) log?.warn({ lockoutMs: limiter!.limits.lockoutMs }, "INVITE with wrong digest credentials: refused (403); the source is locked out after repeated wrong answers");
      else log?.warn("INVITE with wrong digest credentials: refused (403)");
      return undefined;
    }
    this.#refuse(invite, 401, undefined, ["www-authenticate", this.#challenger.challenge(invite.request, verdict.result === "stale")]);
    return null;
  }

  async #handle(invite: IncomingInvite): Promise<void> {
    const o = this.#options;
    const { request, source } = invite;
    const log = o.logger?.child({ callId: request.headers.get("call-id"), from: `${source.address}:${source.port}` });
    if (this.#closed) return this.#refuse(invite, 503);
    const trunk = this.#trunkOfAddress(source.address) ?? this.#byDigest(invite, log);
    if (trunk === null) return;
    if (trunk === undefined) {
      log?.warn("INVITE from an address of no inbound trunk: refused (403)");
      return this.#refuse(invite, 403);
    }
    invite.tx.respond(createResponse(request, 100, "Trying", null));
    const called = calledUser(request.uri, request.headers.get("to"));
    const normalized = called === null ? null : normalizeFaxNumber(called, o.region);
    if (normalized === null || !normalized.ok) {
      log?.info({ trunk: trunk.name, called }, "call to something that is not a number: refused (404)");
      return this.#refuse(invite, 404);
    }
    const e164 = normalized.e164;
    let number: InboundNumber | InboundRefusal | null;
    try {
      number = await o.sink.lookup(e164);
    } catch (error) {
      // The store is out of reach: the carrier may try another node (or again later).
      log?.error({ err: error, to: e164 }, "cannot look up the called number: refused (503)");
      return this.#refuse(invite, 503);
    }
    if (number === null) {
      log?.info({ trunk: trunk.name, to: e164 }, "call to a number that belongs to no inbound topic, or is not active: refused (404)");
      return this.#refuse(invite, 404);
    }
    if ("refused" in number) {
      const status = REFUSAL_STATUS[number.refused];
      log?.info({ trunk: trunk.name, to: e164, refused: number.refused, detail: number.detail }, `call to a number that takes no call just now: refused (${status})`);
      return this.#refuse(invite, status);
    }
    if (this.#active >= o.channels || o.activeOnTrunk(trunk.name) >= trunk.maxCalls) {
      log?.warn({ trunk: trunk.name, to: e164, active: this.#active, channels: o.channels }, "incoming call while at the call limit: refused (486)");
      return this.#refuse(invite, 486);
    }
    if (this.#closed) return this.#refuse(invite, 503);
    const fromNumber = callingNumber(request.headers.get("from"));
    this.#active++;
    const release = o.takeSlot(trunk.name);
    let dir: string | null = null;
    /** Kept until the reception is stored (or was never answered): a node that dies meanwhile stores it at its next start. */
    let keepDir = true;
    try {
      const startedAt = o.clock.now();
      const record: ReceptionRecord = { id: newReceivedFaxId(startedAt), custNr: number.custNr, topic: number.topic, trunk: trunk.name, toNumber: e164, fromNumber, startedAt };
      try {
        dir = await createReceptionDir(this.#spoolDir, record);
      } catch (error) {
        // Nothing was answered: the carrier may try another node (or again later).
        log?.error({ err: error, spool: this.#spoolDir, to: e164 }, "cannot write a reception's record into the spool (is the node's disk full?): refused (503)");
        return this.#refuse(invite, 503);
      }
      const tiffPath = path.join(dir, IMAGE_FILE);
      let report: ReceptionReport;
      try {
        report = await receiveFaxCall(o.setup(), {
          invite,
          t38: trunk.t38,
          ecm: trunk.ecm,
          csid: faxIdent(number.csid ?? trunk.csid ?? o.defaultCsid),
          tiffPath,
          durable: { progressPath: path.join(dir, PROGRESS_FILE) },
          answerDelayMs: trunk.answerDelayMs,
          maxCallMs: o.maxCallMs ?? DEFAULT_MAX_CALL_MS,
        });
      } catch (error) {
        // It throws before the answer, or for a fault of its own: the spool keeps only a reception with confirmed pages.
        keepDir = existsSync(path.join(dir, PROGRESS_FILE));
        if (error instanceof NoFreeMediaPortError) {
          log?.error({ err: error }, "incoming call without a free media port: refused (503)");
          return this.#refuse(invite, 503);
        }
        throw error;
      }
      log?.info(
        {
          trunk: trunk.name,
          to: e164,
          from: fromNumber,
          status: report.status,
          pages: report.pages,
          transport: report.transport,
          completion: report.completion,
          rawCause: report.rawCause,
          remoteCsid: report.remoteCsid,
          ...(report.pageQuality !== undefined ? { pageQuality: report.pageQuality } : {}),
        },
        "fax reception ended",
      );
      if (!report.answered) {
        keepDir = false;
        return;
      }
      const endedAt = o.clock.now();
      let image: Uint8Array | null;
      try {
        image = report.pages > 0 ? await keepFirstPages(await readFile(tiffPath), report.pages) : null;
      } catch (error) {
        // The pages cannot be read back now: the call's report is kept beside them, and the node
        // stores the reception (with what the file holds whole) when it starts again.
        const { pageQuality: _q, ...kept } = report;
        await writeJsonDurably(path.join(dir, ENDED_FILE), { id: record.id, number, trunk: trunk.name, toNumber: e164, fromNumber, report: kept, endedAt }).catch(() => undefined);
        log?.error({ err: error, spooled: dir, to: e164, pages: report.pages }, "a received fax's pages cannot be read back: it stays in the reception spool with its report and is stored when the node starts again");
        return;
      }
      const call: ReceivedCall = { id: record.id, number, trunk: trunk.name, toNumber: e164, fromNumber, report, image, endedAt };
      if (await this.#store(call, log)) {
        keepDir = false;
        return;
      }
      // Not stored after every try: its directory stays in the spool with the call's report, and
      // the node stores it at its next start.
      try {
        const { image: _image, ...ended } = call;
        await writeJsonDurably(path.join(dir, ENDED_FILE), ended);
        log?.error({ spooled: dir, to: e164, from: fromNumber, pages: report.pages }, "a received fax could not be stored: it stays in the reception spool and is stored when the node starts again");
      } catch (error) {
        log?.error({ err: error, spooled: dir, to: e164, from: fromNumber, pages: report.pages }, "a received fax could not be stored: it stays in the reception spool (without its final report) and is stored, as cut off, when the node starts again");
      }
    } finally {
      release();
      this.#active--;
      if (dir !== null && !keepDir) await rm(dir, { recursive: true, force: true });
    }
  }

  /**
   * Stores the receptions a previous run of this node left in its spool (it stopped or died
   * during them, or could not store them): each with the pages it had confirmed, as PARTIAL
   * ("the node stopped during the reception"), OK when its phase E had come with T30_ERR_OK, or
   * as the call reported when it ended but the store could not take it. The listing is taken
   * now, before any call is answered; the storing goes on in the background (close() waits).
   */
  async #recoverUnfinished(): Promise<void> {
    const o = this.#options;
    let found: SpooledReception[];
    try {
      found = await spooledReceptions(this.#spoolDir);
    } catch (error) {
      o.logger?.error({ err: error, spool: this.#spoolDir }, "cannot read the reception spool: receptions a previous run left there are not stored until the node starts again");
      return;
    }
    if (found.length === 0) return;
    const run = (async () => {
      for (const entry of found) {
        const log = o.logger?.child({ spooled: entry.dir });
        if (entry.damaged !== null) {
          log?.error({ damaged: entry.damaged }, "a reception left in the spool cannot be read: it stays there for an operator");
          continue;
        }
        try {
          const call = await recoveredCall(entry);
          if (call === null) {
            // Its record was never written: the call was not answered.
            await rm(entry.dir, { recursive: true, force: true });
            continue;
          }
          log?.warn({ id: call.id, to: call.toNumber, from: call.fromNumber, status: call.report.status, pages: call.report.pages }, "storing a reception a previous run of this node left unfinished");
          if (await this.#store(call, log)) await rm(entry.dir, { recursive: true, force: true });
          else log?.error({ id: call.id }, "a reception left in the spool could not be stored: it stays there until the node starts again");
        } catch (error) {
          log?.error({ err: error }, "a reception left in the spool cannot be read: it stays there for an operator");
        }
      }
    })();
    this.#running.add(run);
    void run.finally(() => this.#running.delete(run));
  }

  async #store(call: ReceivedCall, log: Logger | undefined): Promise<boolean> {
    const delays = this.#options.storeRetryDelaysMs ?? DEFAULT_STORE_RETRIES;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.#options.sink.store(call);
        return true;
      } catch (error) {
        if (attempt >= delays.length) return false;
        log?.warn({ err: error, attempt: attempt + 1 }, "storing a received fax failed; trying again");
        await new Promise((r) => setTimeout(r, delays[attempt]));
      }
    }
  }
}

/** The called user: the Request-URI's user part, else the To URI's; null when neither has one. */
export function calledUser(requestUri: string, to: string | undefined): string | null {
  const user = (uri: string): string | null => {
    try {
      const parsed = parseSipUri(uri);
      return parsed.user !== null && parsed.user !== "" ? decodeURIComponent(parsed.user.split(";")[0]!) : null;
    } catch {
      return null;
    }
  };
  const fromUri = user(requestUri);
  if (fromUri !== null && /[0-9]/.test(fromUri)) return fromUri;
  if (to === undefined) return fromUri;
  try {
    return user(parseNameAddr(to).uri) ?? fromUri;
  } catch {
    return fromUri;
  }
}

/** The caller's number from From: the user part when it looks like a number ("+4930…", "030…"), else null. */
export function callingNumber(from: string | undefined): string | null {
  if (from === undefined) return null;
  try {
    const uri = parseNameAddr(from).uri;
    const user = /^tel:/i.test(uri) ? uri.slice(4).split(";")[0]! : parseSipUri(uri).user;
    if (user === null) return null;
    const text = decodeURIComponent(user.split(";")[0]!);
    return /^\+?[0-9][0-9\-.() ]{1,30}$/.test(text) ? text.replace(/[\-.() ]/g, "") : null;
  } catch {
    return null;
  }
}

/**
 * What to store of a reception found in the spool: the call's own report when it ended (and
 * could not be stored), else the pages its progress file confirmed, OK when phase E came with
 * T30_ERR_OK, else PARTIAL (FAILED without pages) as stopped by the node. Null without a record.
 */
export async function recoveredCall(entry: SpooledReception): Promise<ReceivedCall | null> {
  const record = entry.record;
  if (record === null) return null;
  const imageOf = async (pages: number): Promise<{ pages: number; image: Uint8Array | null }> => {
    if (pages <= 0) return { pages: 0, image: null };
    let bytes: Buffer;
    try {
      bytes = await readFile(path.join(entry.dir, IMAGE_FILE));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return { pages: 0, image: null };
      throw error;
    }
    // Confirmed pages were fsynced whole before their MCF; should the file hold fewer, what it holds is kept.
    const whole = (await wholePages(bytes, pages)).pages;
    return whole === 0 ? { pages: 0, image: null } : { pages: whole, image: await keepFirstPages(bytes, whole) };
  };
  const ended = entry.ended as Omit<ReceivedCall, "image"> | null;
  if (ended !== null && typeof ended === "object" && ended.report !== undefined) {
    const { pages, image } = await imageOf(ended.report.pages);
    const report: ReceptionReport = pages === ended.report.pages ? ended.report : { ...ended.report, pages, status: pages > 0 ? "PARTIAL" : "FAILED" };
    return { ...ended, id: record.id, report, image };
  }
  const progress = entry.progress;
  const { pages, image } = await imageOf(progress?.pages ?? 0);
  const completion = progress?.completion ?? null;
  const ok = completion === "T30_ERR_OK" && pages > 0 && pages === progress?.pages;
  const endedAt = Math.max(record.startedAt, progress?.updatedAt ?? record.startedAt);
  const report: ReceptionReport = {
    answered: true,
    status: ok ? "OK" : pages > 0 ? "PARTIAL" : "FAILED",
    pages,
    remoteCsid: progress?.remoteCsid ?? null,
    resolution: pages > 0 && progress !== null ? (progress.yDpi >= 150 ? "HIGH" : "LOW") : null,
    transport: progress?.transport ?? null,
    bitRate: progress?.bitRate ?? 0,
    ecm: progress?.ecm ?? false,
    encoding: pages > 0 ? (progress?.encoding ?? null) : null,
    completion,
    ...(ok ? {} : { reasonCode: "node_stopped" as const }),
    rawCause: ok
      ? null
      : `The node stopped during the reception${completion !== null ? ` (after phase E: ${completion})` : ""}; ${pages} page${pages === 1 ? "" : "s"} received and confirmed`,
    durationSecs: Math.max(1, Math.round((endedAt - record.startedAt) / 1000)),
    sip: null,
  };
  return { id: record.id, number: { custNr: record.custNr, topic: record.topic }, trunk: record.trunk, toNumber: record.toNumber, fromNumber: record.fromNumber, report, image, endedAt };
}

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
 *     active) → else 404 Not Found, the wrong number a caller's fax machine reports.
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
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
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

/** A number that receives: whose it is and which topic. */
export interface InboundNumber {
  custNr: string;
  topic: string;
  /** The CSID to send to this number's callers (its fax id); absent or null: the trunk's, else the default. */
  csid?: string | null;
}

/** One reception, as the line hands it to the sink. */
export interface ReceivedCall {
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
  /** The topic of a called number (E.164), or null when it is none of ours or does not answer (inactive, no profile). */
  lookup(e164: string): Promise<InboundNumber | null>;
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
  /** Where receptions that cannot be stored are left (.json and .tif). (Default: `<tmpDir>/faxline-unstored`) */
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

  constructor(options: InboundCallsOptions) {
    this.#options = options;
    this.#challenger = new SipDigestChallenger({ realm: options.realm ?? "faxline", now: () => options.clock.now() });
  }

  /** Receptions running now. */
  get active(): number {
    return this.#active;
  }

  /** Builds each inbound trunk's list of allowed sources (resolving proxy and registrar names). */
  async start(): Promise<void> {
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
    let number: InboundNumber | null;
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
    if (this.#active >= o.channels || o.activeOnTrunk(trunk.name) >= trunk.maxCalls) {
      log?.warn({ trunk: trunk.name, to: e164, active: this.#active, channels: o.channels }, "incoming call while at the call limit: refused (486)");
      return this.#refuse(invite, 486);
    }
    if (this.#closed) return this.#refuse(invite, 503);
    const fromNumber = callingNumber(request.headers.get("from"));
    this.#active++;
    const release = o.takeSlot(trunk.name);
    let dir: string | null = null;
    let keepDir = false;
    try {
      dir = await mkdtemp(path.join(o.tmpDir ?? tmpdir(), "faxline-rx-"));
      const tiffPath = path.join(dir, "received.tif");
      let report: ReceptionReport;
      try {
        report = await receiveFaxCall(o.setup(), {
          invite,
          t38: trunk.t38,
          ecm: trunk.ecm,
          csid: faxIdent(number.csid ?? trunk.csid ?? o.defaultCsid),
          tiffPath,
          answerDelayMs: trunk.answerDelayMs,
          maxCallMs: o.maxCallMs ?? DEFAULT_MAX_CALL_MS,
        });
      } catch (error) {
        if (error instanceof NoFreeMediaPortError) {
          log?.error({ err: error }, "incoming call without a free media port: refused (503)");
          return this.#refuse(invite, 503);
        }
        throw error;
      }
      log?.info(
        { trunk: trunk.name, to: e164, from: fromNumber, status: report.status, pages: report.pages, transport: report.transport, completion: report.completion, rawCause: report.rawCause },
        "fax reception ended",
      );
      if (!report.answered) return;
      const image = report.pages > 0 ? await readFile(tiffPath) : null;
      const call: ReceivedCall = { number, trunk: trunk.name, toNumber: e164, fromNumber, report, image, endedAt: o.clock.now() };
      if (await this.#store(call, log)) return;
      // Not stored after every try: keep it where an operator finds it, with what is known of it.
      keepDir = true;
      try {
        const spool = o.spoolDir ?? path.join(o.tmpDir ?? tmpdir(), "faxline-unstored");
        await mkdir(spool, { recursive: true });
        const base = path.join(spool, `${new Date(call.endedAt).toISOString().replace(/[:.]/g, "-")}-${path.basename(dir)}`);
        const { image: _image, ...meta } = call;
        await writeFile(`${base}.json`, `${JSON.stringify(meta, null, 2)}\n`, { mode: 0o600 });
        if (image !== null) await rename(tiffPath, `${base}.tif`);
        keepDir = false;
        log?.error({ spooled: base, to: e164, from: fromNumber, pages: report.pages }, "a received fax could not be stored: it is kept in the spool directory (.json and .tif)");
      } catch (error) {
        log?.error({ err: error, kept: dir, to: e164, from: fromNumber, pages: report.pages }, "a received fax could not be stored nor spooled: its image stays in the temporary directory named here");
      }
    } finally {
      release();
      this.#active--;
      if (dir !== null && !keepDir) await rm(dir, { recursive: true, force: true });
    }
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

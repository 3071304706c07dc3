/**
 * A SIP dialog (RFC 3261 §12) and the requests sent inside it, from either side.
 *
 * UAC (our INVITE; `new Dialog`): §12.1.2: "The route set MUST be set to the list of URIs in the
 * Record-Route header field from the response, taken in reverse order … The remote target MUST be
 * set to the URI from the Contact header field of the response." The local sequence number
 * continues from the INVITE's CSeq; the remote one is empty until the far end sends a request
 * (§12.2.2: a lower one is answered 500).
 *
 * UAS (their INVITE; `Dialog.forIncomingInvite`): §12.1.1: "The route set MUST be set to the list
 * of URIs in the Record-Route header field from the request, taken in order … The remote target
 * MUST be set to the URI from the Contact header field of the request … The remote sequence
 * number MUST be set to the value of the sequence number in the CSeq header field of the request.
 * The local sequence number MUST be empty." Our first request then starts at 1.
 */
import { newBranch, SipHeaders, type SipRequest, type SipResponse } from "./sip-message.ts";
import { parseNameAddr, parseSipUri, SipParseError, type SipUri } from "./sip-uri.ts";

export interface DialogId {
  callId: string;
  localTag: string;
  remoteTag: string;
}

/** What a UAS dialog starts with (§12.1.1). */
interface UasDialogState {
  id: DialogId;
  localParty: string;
  remoteParty: string;
  remoteTarget: string;
  routeSet: readonly string[];
  remoteSeq: number;
}

export class Dialog {
  readonly id: DialogId;
  /** Our From value (with our tag), repeated in every request. */
  readonly localParty: string;
  /** The To value of the 2xx (with the far end's tag). */
  readonly remoteParty: string;
  /** Where requests go: the Contact URI of the 2xx (or of the far end's last target refresh). */
  remoteTarget: string;
  /** Record-Route of the 2xx, reversed: the Route headers of every request in the dialog. */
  readonly routeSet: readonly string[];
  localSeq: number;
  remoteSeq: number | null = null;

  constructor(options: { invite: SipRequest; response: SipResponse; localSeq: number } | { incoming: UasDialogState }) {
    if ("incoming" in options) {
      const i = options.incoming;
      this.id = i.id;
      this.localParty = i.localParty;
      this.remoteParty = i.remoteParty;
      this.remoteTarget = i.remoteTarget;
      this.routeSet = i.routeSet;
      this.localSeq = 0;
      this.remoteSeq = i.remoteSeq;
      return;
    }
    const { invite, response } = options;
    const remoteTag = parseNameAddr(response.headers.get("to")!).params.get("tag");
    if (remoteTag === undefined || remoteTag === null) throw new SipParseError("2xx without a To tag");
    this.id = {
      callId: invite.headers.get("call-id")!,
      localTag: parseNameAddr(invite.headers.get("from")!).params.get("tag") ?? "",
      remoteTag,
    };
    this.localParty = invite.headers.get("from")!;
    this.remoteParty = response.headers.get("to")!;
    const contact = response.headers.getList("contact")[0];
    // §12.1.2 requires a Contact in the 2xx; without one, fall back to the Request-URI.
    this.remoteTarget = contact !== undefined ? parseNameAddr(contact).uri : invite.uri;
    this.routeSet = response.headers.getList("record-route").reverse();
    this.localSeq = options.localSeq;
  }

  /**
   * The dialog the far end's INVITE creates when we answer it with `localTag` (§12.1.1). Throws
   * SipParseError when the INVITE lacks a From tag (RFC 2543 callers: refused with 400).
   */
  static forIncomingInvite(invite: SipRequest, localTag: string): Dialog {
    const from = invite.headers.get("from");
    const to = invite.headers.get("to");
    const callId = invite.headers.get("call-id");
    if (from === undefined || to === undefined || callId === undefined) throw new SipParseError("INVITE without From, To or Call-ID");
    const remoteTag = parseNameAddr(from).params.get("tag");
    if (remoteTag === undefined || remoteTag === null) throw new SipParseError("INVITE without a From tag");
    const contact = invite.headers.getList("contact")[0];
    if (contact === undefined) throw new SipParseError("INVITE without a Contact");
    const seq = Number.parseInt(invite.headers.get("cseq") ?? "", 10);
    return new Dialog({
      incoming: {
        id: { callId, localTag, remoteTag },
        localParty: `${to};tag=${localTag}`,
        remoteParty: from,
        remoteTarget: parseNameAddr(contact).uri,
        routeSet: invite.headers.getList("record-route"),
        remoteSeq: Number.isFinite(seq) ? seq : 0,
      },
    });
  }

  /** The URI the next hop is computed from: the first route if it is a loose router, else the remote target (§12.2.1.1). */
  get nextHopUri(): SipUri {
    const first = this.routeSet[0];
    if (first !== undefined) return parseSipUri(parseNameAddr(first).uri);
    return parseSipUri(this.remoteTarget);
  }

  /**
   * A request inside the dialog (§12.2.1.1), without Via (the sender adds it for its flow).
   * ACK and CANCEL reuse the INVITE's sequence number; every other request takes the next one.
   */
  createRequest(method: string, options: { seq?: number } = {}): SipRequest {
    const seq = options.seq ?? ++this.localSeq;
    const headers = new SipHeaders();
    let uri = this.remoteTarget;
    const routes = [...this.routeSet];
    const first = routes[0];
    if (first !== undefined && !parseSipUri(parseNameAddr(first).uri).params.has("lr")) {
      // Strict router (§12.2.1.1): the first route becomes the Request-URI, the remote target the last route.
      uri = parseNameAddr(first).uri;
      routes.shift();
      routes.push(`<${this.remoteTarget}>`);
    }
    for (const route of routes) headers.append("route", route);
    headers.append("max-forwards", "70");
    headers.append("from", this.localParty);
    headers.append("to", this.remoteParty);
    headers.append("call-id", this.id.callId);
    headers.append("cseq", `${seq} ${method}`);
    return { kind: "request", method, uri, headers, body: "" };
  }

  /** Checks the far end's CSeq (§12.2.2); false when it is lower than the last one (answer 500). */
  acceptRemoteSeq(seq: number): boolean {
    if (this.remoteSeq !== null && seq < this.remoteSeq) return false;
    this.remoteSeq = seq;
    return true;
  }
}

/** A Via value for a request sent on a flow. */
export function viaFor(protocol: string, host: string, port: number): { value: string; branch: string } {
  const branch = newBranch();
  const h = host.includes(":") ? `[${host}]` : host;
  return { value: `SIP/2.0/${protocol.toUpperCase()} ${h}:${port};branch=${branch};rport`, branch };
}

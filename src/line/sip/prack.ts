/**
 * RFC 3262 for a call we place: a reliable provisional response (Require: 100rel, RSeq) is
 * acknowledged with PRACK in its early dialog, RAck naming its RSeq and the INVITE's CSeq.
 * The INVITE and its flow are call-placing.ts's; this part keeps the RSeq order per early dialog
 * and the sequence numbers the PRACKs took (the confirmed dialog goes on from them).
 */
import { SipCallState, type CallShared } from "./call-state.ts";
import { Dialog } from "./dialog.ts";
import { cseqOf, tagOf, type SipRequest, type SipResponse } from "./sip-message.ts";

export class Prack {
  readonly #call: CallShared;
  /** The last reliable provisional we PRACKed (per INVITE CSeq) and the early dialog's sequence number. */
  #prackState: { inviteSeq: number; lastRseq: Map<string, number>; localSeq: number } | null = null;

  constructor(call: CallShared) {
    this.#call = call;
  }

  /** The highest CSeq our PRACKs took in the early dialog (0 before any). */
  get localSeq(): number {
    return this.#prackState?.localSeq ?? 0;
  }

  /**
   * PRACKs the reliable provisional `response` to `invite`. Only the next RSeq in order is
   * PRACKed (§4: a retransmission, or one out of order, is not); the PRACK's own retransmission
   * is its transaction's.
   */
  send(invite: SipRequest | null, response: SipResponse): void {
    const call = this.#call;
    const toTag = tagOf(response.headers.get("to"));
    const rseq = Number.parseInt(response.headers.get("rseq") ?? "", 10);
    if (invite === null || call.flow === null || !Number.isInteger(rseq) || toTag === null) return;
    const inviteSeq = cseqOf(invite).seq;
    if (this.#prackState?.inviteSeq !== inviteSeq) this.#prackState = { inviteSeq, lastRseq: new Map(), localSeq: inviteSeq };
    const state = this.#prackState;
    // RSeq counts per early dialog (a forked INVITE has several): PRACK only the next one in order.
    const last = state.lastRseq.get(toTag);
    if (last !== undefined && rseq !== last + 1) return;
    let early: Dialog;
    try {
      early = new Dialog({ invite, response, localSeq: state.localSeq });
    } catch {
      return;
    }
    const prack = early.createRequest("PRACK");
    state.localSeq = early.localSeq;
    state.lastRseq.set(toTag, rseq);
    prack.headers.append("rack", `${rseq} ${inviteSeq} INVITE`);
    void (async () => {
      // Like every request in the (early) dialog: the outbound proxy, else the route set or the
      // far end's Contact (§12.2.1.1); the INVITE's own flow when that is where it points.
      let flow = call.flow!;
      if (call.options.outboundProxy === undefined) {
        try {
          const hop = await call.host.resolveHop(early.nextHopUri, call.transport);
          if (hop.address !== flow.remote.address || hop.port !== flow.remote.port || hop.protocol !== flow.protocol) flow = await call.host.openFlow(hop);
        } catch {
          // The INVITE's flow is the best we have.
        }
      }
      if (call.state === SipCallState.Terminated) return;
      call.addVia(prack, flow);
      call.authorize(prack);
      call.host.startClientTransaction(prack, flow, {
        // The INVITE's final response decides the call; a refused PRACK changes nothing here.
        onResponse: () => undefined,
        onRequestTimeout: () => undefined,
        onTransportError: () => undefined,
      });
    })();
  }
}

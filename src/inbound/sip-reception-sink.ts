/**
 * Where the SIP line's receptions go (line/sip-fax-line/inbound-calls.ts `InboundSink`): the
 * called number is looked up among the inbound numbers (inbound-settings.ts `inboundNumberState`:
 * only an active number of a profile answers, with its fax id as the CSID; a paused one, or one
 * whose profile has its most faxes waiting for the customer, is refused for now), and what arrived is stored as a received
 * fax with its deliveries in one transaction (enqueue-reception.ts). The line calls `store` once
 * per call and again only after a failure; the received fax's id is chosen once per call (by the
 * line, before it answers, when it spools the reception: the same id after a restart), so a
 * retry after a commit whose answer was lost stores nothing twice.
 *
 * What is kept of a reception (docs/inbound-api.md): pages as received, `pages_announced` only
 * when the fax ended normally (T.30 announces no page count: a broken-off fax's total is not
 * known), the T.30 completion code as `reason_code` when the fax is not OK (or `call_ended` when
 * the call ended before the engine's phase E, `spool_failed` when a page could not be kept on the
 * node's disk, `node_stopped` when it was stored from the spool after a restart), and its text or the way the call ended as
 * `raw_cause`.
 */
import type { Kysely } from "kysely";
import type { InboundSink, ReceivedCall } from "../line/sip-fax-line/inbound-calls.ts";
import { newReceivedFaxId } from "../lib/ids.ts";
import type { Database } from "../store/database.ts";
import { storeReception } from "./enqueue-reception.ts";
import { inboundNumberState } from "./inbound-settings.ts";

export interface SipReceptionSinkDeps {
  db: Kysely<Database>;
  datacenter: string;
  /** After each stored reception: metrics and the notifier's wake-up. */
  onStored?: (stored: { id: string; status: string; transport: string; deliveries: number }) => void;
}

export function sipReceptionSink(deps: SipReceptionSinkDeps): InboundSink {
  const ids = new WeakMap<ReceivedCall, string>();
  return {
    async lookup(e164) {
      // One function says what a number is (inbound-settings.ts); only an active one answers,
      // a paused one or one whose profile is full asks the caller to try again later.
      const number = await inboundNumberState(deps.db, e164);
      switch (number.state) {
        case "active":
          return { custNr: number.custNr, topic: number.topic, csid: number.faxId };
        case "paused":
          return { refused: "paused", detail: `paused on its ${number.pausedAt}` };
        case "full":
          return { refused: "over_quota", detail: `profile ${number.topic} has ${number.waiting} faxes waiting for the customer (maxWaitingFaxes ${number.maxWaiting})` };
        default:
          return null;
      }
    },
    async store(call) {
      let id = call.id ?? ids.get(call);
      if (id === undefined) {
        id = newReceivedFaxId(call.endedAt);
        ids.set(call, id);
      }
      const r = call.report;
      const stored = await storeReception(deps.db, {
        id,
        cust_nr: call.number.custNr,
        topic: call.number.topic,
        datacenter: deps.datacenter,
        to_number: call.toNumber,
        from_number: call.fromNumber,
        remote_csid: r.remoteCsid,
        pages: r.pages,
        pages_announced: r.status === "OK" ? r.pages : null,
        resolution: r.resolution,
        transport: r.transport,
        bit_rate: r.bitRate > 0 ? r.bitRate : null,
        duration_secs: r.durationSecs,
        status: r.status,
        reason_code: r.status === "OK" ? null : (r.reasonCode ?? r.completion ?? "call_ended"),
        raw_cause: r.rawCause,
        received_at: call.endedAt,
        image: call.image,
        image_bytes: call.image?.length ?? 0,
        locked_until: null,
        acknowledged_at: null,
        purged_at: null,
        source_job_id: null,
        page_quality: r.pageQuality !== undefined ? JSON.stringify(r.pageQuality) : null,
      });
      if (stored.stored) deps.onStored?.({ id, status: r.status, transport: r.transport ?? "none", deliveries: stored.deliveries });
    },
  };
}

/**
 * Receiving on the test line: a test account that faxes one of its own inbound numbers (a DID of
 * one of its topics) receives the fax there, as if the call had come in over a trunk. Clients can
 * so develop against the pull API without a line: send with the REST API to the number, then poll
 * its topic. Only the account's own numbers receive this way; a test call to another customer's
 * number, or to one that is not active, paused or full (inbound-settings.ts), is delivered as the
 * test line decides by the number, and nothing arrives there (the SIP line answers such calls 404,
 * 480 or 486; the test line does not simulate the receiver's refusals).
 *
 * The reception is stored after the sender has recorded the call's outcome (the outcome is what
 * the client's report depends on; a reception that cannot be stored is logged and does not hold it
 * up). A node that dies between the two loses this simulated reception: a test-line shortcut,
 * not the SIP line's reception, which will store before it confirms the fax to the caller.
 */
import type { Kysely } from "kysely";
import type { Database, JobRow, RecipientRow } from "../store/database.ts";
import { storeReception } from "./enqueue-reception.ts";
import { inboundNumberState } from "./inbound-settings.ts";

export interface LoopbackCall {
  job: Pick<JobRow, "id" | "cust_nr" | "resolution" | "csid" | "is_test">;
  recipient: Pick<RecipientRow, "fax_image_id">;
  /** The number the test call went to. */
  e164: string;
  pagesSent: number;
  durationSecs: number;
  bitRate: number;
  /** The sender's own fax id (the job's CSID or the node's). */
  senderCsid: string;
  datacenter: string;
  now: number;
  /** The reception's id, chosen by the caller so that a retried store write cannot store it twice. */
  id: string;
}

/** Stores the reception (and queues its deliveries) when the number belongs to the job's own customer; returns its id, or null. */
export async function receiveTestCall(db: Kysely<Database>, call: LoopbackCall): Promise<{ id: string; deliveries: number; status: string } | null> {
  if (call.job.is_test !== 1 || call.recipient.fax_image_id === null) return null;
  // As the SIP line answers (inbound-settings.ts): only an active number of a profile receives.
  const number = await inboundNumberState(db, call.e164);
  if (number.state !== "active" || number.custNr !== call.job.cust_nr) return null;
  const image = await db.selectFrom("fax_images").select(["content", "pages"]).where("id", "=", call.recipient.fax_image_id).executeTakeFirst();
  if (!image) return null;
  const id = call.id;
  const stored = await storeReception(db, {
    id,
    cust_nr: number.custNr,
    topic: number.topic,
    datacenter: call.datacenter,
    to_number: call.e164,
    from_number: null,
    remote_csid: call.senderCsid,
    pages: call.pagesSent,
    pages_announced: image.pages,
    resolution: call.job.resolution,
    transport: "test",
    bit_rate: call.bitRate,
    duration_secs: call.durationSecs,
    status: call.pagesSent === image.pages ? "OK" : "PARTIAL",
    reason_code: null,
    raw_cause: null,
    received_at: call.now,
    image: image.content,
    image_bytes: image.content.length,
    locked_until: null,
    acknowledged_at: null,
    purged_at: null,
    source_job_id: call.job.id,
  });
  return stored.stored ? { id, deliveries: stored.deliveries, status: call.pagesSent === image.pages ? "OK" : "PARTIAL" } : null;
}

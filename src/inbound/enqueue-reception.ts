/**
 * Storing a reception and queueing its deliveries in one transaction: the received fax, then one
 * `fax.received` notification per e-mail address, one for the web service and one for the SFTP
 * server (when the fax has pages: fax-to-SFTP files documents), in the outbox the status pushes use (notifications table; the notifier role delivers, retries for days, keeps a
 * log). A receiver that is down loses nothing: the fax waits in its topic and the notice in the
 * outbox. Storing the same reception again (a retried write) changes nothing.
 */
import type { Kysely } from "kysely";
import { FAX_RECEIVED } from "../notifications/events.ts";
import { MAIL_RECEIVER, receiverOf } from "../notifications/enqueue-notifications.ts";
import type { Database } from "../store/database.ts";
import { insertNotification } from "../store/queries/notifications.ts";
import { insertReceivedFax, type NewReceivedFax } from "../store/queries/received-faxes.ts";
import { sftpTargetLabel } from "../notifications/sftp/send-sftp.ts";
import { rollUpReception } from "../store/queries/report-rollups.ts";
import { receivedFaxSummary, type ReceivedFaxSummary } from "./pull-view.ts";

/** What a fax.received notification carries (notifications.payload); the image is read at delivery. */
export interface ReceivedFaxNotice {
  receivedFax: ReceivedFaxSummary;
  /** For mails: what to attach. */
  attachment?: string;
}

/** Whom the per-receiver concurrency limit counts an SFTP delivery against: its server. */
export function sftpReceiver(server: { host: string; port: number }): string {
  return `sftp://${server.host.includes(":") ? `[${server.host}]` : server.host}:${server.port}`;
}

/** Stores the reception and its deliveries; returns how many deliveries were queued (0 when it was stored before). */
export async function storeReception(db: Kysely<Database>, row: NewReceivedFax): Promise<{ stored: boolean; deliveries: number }> {
  return db.transaction().execute(async (trx) => {
    if (!(await insertReceivedFax(trx, row))) return { stored: false, deliveries: 0 };
    const topic = await trx.selectFrom("inbound_topics").select(["mail_to", "mail_attachment", "push_url"]).where("cust_nr", "=", row.cust_nr).where("name", "=", row.topic).executeTakeFirst();
    if (!topic) {
      await rollUpReception(trx, row.id);
      return { stored: true, deliveries: 0 };
    }
    const receivedFax = receivedFaxSummary(row);
    const base = { jobId: row.id, custNr: row.cust_nr, datacenter: row.datacenter, event: FAX_RECEIVED, auth: null };
    let deliveries = 0;
    if (topic.push_url) {
      await insertNotification(trx, { ...base, channel: "http", target: topic.push_url, receiver: receiverOf(topic.push_url), payload: JSON.stringify({ receivedFax } satisfies ReceivedFaxNotice) }, Number(row.received_at));
      deliveries += 1;
    }
    for (const address of topic.mail_to ? (JSON.parse(topic.mail_to) as string[]) : []) {
      const payload: ReceivedFaxNotice = { receivedFax, attachment: topic.mail_attachment ?? "PDF" };
      await insertNotification(trx, { ...base, channel: "email", target: address, receiver: MAIL_RECEIVER, payload: JSON.stringify(payload) }, Number(row.received_at));
      deliveries += 1;
    }
    if (row.pages > 0 && row.image !== null && row.image !== undefined) {
      const sftp = await trx
        .selectFrom("inbound_sftp_deliveries")
        .select(["host", "port", "username", "directory"])
        .where("cust_nr", "=", row.cust_nr)
        .where("topic", "=", row.topic)
        .executeTakeFirst();
      if (sftp) {
        // The settings themselves (login, formats, names) are read when it is delivered.
        await insertNotification(trx, { ...base, channel: "sftp", target: sftpTargetLabel(sftp), receiver: sftpReceiver(sftp), payload: JSON.stringify({ receivedFax } satisfies ReceivedFaxNotice) }, Number(row.received_at));
        deliveries += 1;
      }
    }
    // Counted in the reporting rollups with the deliveries just queued (they name its accountingService).
    await rollUpReception(trx, row.id);
    return { stored: true, deliveries };
  });
}

/**
 * Answers built from several statements are read from one snapshot of the store, in each
 * dialect: a writer that commits between the statements (forced here, through a second
 * connection to the same store, right after a chosen statement's result comes back) shows in
 * all of the answer or in none of it. Before, the console said "documents not purged" beside
 * an empty list of documents, a report came back with no recipients, a job that completed
 * during a live-update poll was neither open nor completed, and a notification redelivered
 * during the retention purge was deleted unsent.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from "kysely";
import { openStore } from "../../src/store/dialects/open-store.ts";
import type { Store } from "../../src/store/store.ts";
import { consoleJobChanges, getConsoleJob, listConsoleJobs } from "../../src/store/queries/console-jobs.ts";
import { deleteJobs, getReport, getReportsByIds, listCompletedReports } from "../../src/store/queries/job-reports.ts";
import { listJobNotifications, purgeFinishedNotifications, redeliverNotification } from "../../src/store/queries/notifications.ts";
import { purgeCompletedDocuments } from "../../src/retention/purge-expired-data.ts";
import { seedCompletedJobs } from "../support/seed-completed-jobs.ts";
import { tempDir, testConfig } from "../support/test-node.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";

/** Runs `between` once, when the first result whose first row `matches` comes back (a row, or undefined for none). */
class Between implements KyselyPlugin {
  ran = false;
  constructor(
    private readonly matches: (row: UnknownRow | undefined) => boolean,
    private readonly between: () => Promise<void>,
  ) {}
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const first = args.result.rows[0];
    if (!this.ran && this.matches(first)) {
      this.ran = true;
      await this.between();
    }
    return args.result;
  }
}

const DC = "DE1";
const LOGIN = "snap";
const scope = { login: LOGIN, datacenters: [DC] };

for (const dialect of DIALECTS) {
  describe(`${dialect}: answers read from one snapshot`, () => {
    const store = withDialect(dialect);
    const dir = tempDir("faxline-read-snapshot-");
    let reader: Store;
    let writer: Store;
    let seq = 0;

    before(async () => {
      const config = testConfig(dir.path, { ...store.overrides(), "node.datacenter": DC });
      reader = await openStore(config);
      writer = await openStore(config, { migrate: false });
    });
    after(async () => {
      await reader?.close();
      await writer?.close();
    });

    /** A delivered job of LOGIN, completed a minute ago. */
    async function completedJob(): Promise<string> {
      const [jobId] = await seedCompletedJobs(writer.db, { custNr: "10001", login: LOGIN, datacenter: DC, count: 1, firstCompletedAt: Date.now() - 60_000 - seq++ });
      return jobId!;
    }

    it("the console's job view: a document purge shows in neither the job nor its documents", async () => {
      const jobId = await completedJob();
      await writer.db.updateTable("jobs").set({ documents_purged_at: null }).where("id", "=", jobId).execute();
      await writer.db.insertInto("job_documents").values({ job_id: jobId, ordinal: 0, name: "letter.txt", charset: "UTF-8", reference_url: null, content: Buffer.from("Dear Sir"), size_bytes: 8 }).execute();
      let purged = 0;
      const racing = reader.db.withPlugin(
        new Between((row) => row !== undefined && "documents_purged_at" in row, async () => {
          purged = await purgeCompletedDocuments(writer.db, { datacenter: DC, now: Date.now(), defaultRetentionDays: 30, batchSize: 100 });
        }),
      );
      const during = await getConsoleJob(racing, scope, jobId);
      assert.equal(purged, 1, "the purge ran between the statements");
      assert.ok(during);
      assert.equal(during.job.documents_purged_at, null);
      assert.deepEqual(during.documents.map((d) => d.name), ["letter.txt"], "the documents as they were when the job row was read");
      assert.equal(during.recipients.length, 1);
      assert.equal(during.attempts.length, 1);

      const afterwards = await getConsoleJob(reader.db, scope, jobId);
      assert.ok(afterwards);
      assert.notEqual(afterwards.job.documents_purged_at, null);
      assert.deepEqual(afterwards.documents, []);
    });

    it("REST reports: a report deleted meanwhile is whole, with its recipients, in GET by id, the list and bulk GET", async () => {
      const extended = { ...scope, extended: true };
      for (const read of [
        (db: Store["db"], jobId: string) => getReport(db, scope, jobId),
        (db: Store["db"], jobId: string) => getReport(db, extended, jobId),
        async (db: Store["db"], jobId: string) => (await listCompletedReports(db, scope, 1000)).find((r) => r.jobId === jobId) ?? null,
        async (db: Store["db"], jobId: string) => (await listCompletedReports(db, extended, 1000)).find((r) => r.jobId === jobId) ?? null,
        async (db: Store["db"], jobId: string) => (await getReportsByIds(db, scope, [jobId]))[0] ?? null,
      ]) {
        const jobId = await completedJob();
        // After the first statement, whatever it read (GET by id reads the contract's view in one).
        const between = new Between(() => true, () => deleteJobs(writer.db, [jobId]));
        const during = await read(reader.db.withPlugin(between), jobId);
        assert.ok(between.ran);
        assert.ok(during, "the report as it was when its job row was read");
        assert.equal(during.recipientStatus.length, 1, "with its recipient");
        assert.equal(during.recipientStatus[0]!.status, "OK");
        assert.equal(await getReport(reader.db, scope, jobId), null, "and gone afterwards");
      }
    });

    it("the console's job list: a job deleted meanwhile is listed with its recipients", async () => {
      const jobId = await completedJob();
      const between = new Between(() => true, () => deleteJobs(writer.db, [jobId]));
      const rows = await listConsoleJobs(reader.db.withPlugin(between), { login: LOGIN, datacenters: [DC], q: jobId, limit: 10 });
      assert.ok(between.ran);
      assert.deepEqual(rows.map((r) => [r.id, r.recipients.length]), [[jobId, 1]]);
      assert.deepEqual(await listConsoleJobs(reader.db, { login: LOGIN, datacenters: [DC], q: jobId, limit: 10 }), [], "and gone afterwards");
    });

    it("console live updates: a job completing during the poll is open or completed, not neither", async () => {
      const jobId = await completedJob();
      await writer.db.updateTable("jobs").set({ state: "active", completed_at: null }).where("id", "=", jobId).execute();
      const since = Date.now();
      // Completed after the first statement (whatever it found), with a completed_at before the poll's window (the
      // completer took its clock before a commit that waited on the job's lock).
      const racing = reader.db.withPlugin(
        new Between(
          () => true,
          async () => {
            await writer.db.updateTable("jobs").set({ state: "completed", completed_at: since - 5_000 }).where("id", "=", jobId).execute();
          },
        ),
      );
      const changes = await consoleJobChanges(racing, scope, since);
      assert.ok(changes.open.has(jobId) || changes.createdOrCompleted.includes(jobId), "the job is in the answer");
      assert.ok(changes.open.has(jobId), "still open in the snapshot taken before it completed");
    });

    it("notifications: the delivery log's tries match its notification; a redelivery during the purge is kept", async () => {
      const jobId = await completedJob();
      const id = `msg_snap${seq++}`;
      const finished = Date.now() - 10 * 86_400_000;
      await writer.db
        .insertInto("notifications")
        .values({ id, job_id: jobId, cust_nr: "10001", datacenter: DC, channel: "http", event: "job.completed", target: "http://127.0.0.1:9/x", receiver: "http://127.0.0.1:9", auth: null, payload: "{}", state: "failed", attempts: 1, schedule_step: 3, next_attempt_at: finished, locked_by: null, lease_until: null, last_error: "refused", created_at: finished - 1000, finished_at: finished })
        .execute();
      await writer.db.insertInto("notification_attempts").values({ id: `${id}_1`, notification_id: id, attempt_no: 1, node: "snap", started_at: finished - 500, duration_ms: 500, outcome: "failed", status_code: null, error: "refused", response_excerpt: null }).execute();

      // A try recorded between the two statements of the delivery log.
      const racing = reader.db.withPlugin(
        new Between(
          (row) => row !== undefined && "payload" in row,
          async () => {
            await writer.db.updateTable("notifications").set({ attempts: 2 }).where("id", "=", id).execute();
            await writer.db.insertInto("notification_attempts").values({ id: `${id}_2`, notification_id: id, attempt_no: 2, node: "snap", started_at: finished + 1, duration_ms: 1, outcome: "failed", status_code: null, error: "refused", response_excerpt: null }).execute();
          },
        ),
      );
      const [entry] = await listJobNotifications(racing, jobId);
      assert.ok(entry);
      assert.equal(entry.notification.attempts, entry.tries.length, "as many tries as the notification counts");

      // The purge reads the notification as finished long ago; a redelivery commits before its delete.
      let redelivered = "";
      const purging = reader.db.withPlugin(
        new Between(
          (row) => row?.id === id,
          async () => {
            redelivered = await redeliverNotification(writer.db, jobId, id, Date.now());
          },
        ),
      );
      const deleted = await purgeFinishedNotifications(purging, DC, Date.now() - 86_400_000, 100);
      assert.equal(redelivered, "queued");
      assert.equal(deleted, 0, "the redelivered notification is not deleted");
      const kept = await reader.db.selectFrom("notifications").select("state").where("id", "=", id).executeTakeFirst();
      assert.equal(kept?.state, "pending");
    });
  });
}

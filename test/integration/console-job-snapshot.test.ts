/**
 * The console's job view is read from one snapshot of the store, in each dialect: a retention
 * purge that commits between its statements (forced here, through a second connection to the
 * same store, right after the job row comes back) shows in neither the job nor its documents.
 * Before, the view could say "documents not purged" beside an empty list of documents.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from "kysely";
import { openStore } from "../../src/store/dialects/open-store.ts";
import type { Store } from "../../src/store/store.ts";
import { getConsoleJob } from "../../src/store/queries/console-jobs.ts";
import { purgeCompletedDocuments } from "../../src/retention/purge-expired-data.ts";
import { seedCompletedJobs } from "../support/seed-completed-jobs.ts";
import { tempDir, testConfig } from "../support/test-node.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";

/** Runs `between` once, when the first result of a statement on `jobs` comes back. */
class AfterJobRow implements KyselyPlugin {
  private done = false;
  constructor(private readonly between: () => Promise<void>) {}
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const first = args.result.rows[0];
    if (!this.done && first !== undefined && "documents_purged_at" in first) {
      this.done = true;
      await this.between();
    }
    return args.result;
  }
}

for (const dialect of DIALECTS) {
  describe(`${dialect}: the console's job view`, () => {
    const store = withDialect(dialect);
    const dir = tempDir("faxline-console-snapshot-");
    let reader: Store;
    let writer: Store;
    let jobId: string;
    const DC = "DE1";
    const scope = { login: "snap", datacenters: [DC] };

    before(async () => {
      const config = testConfig(dir.path, { ...store.overrides(), "node.datacenter": DC });
      reader = await openStore(config);
      writer = await openStore(config, { migrate: false });
      [jobId] = (await seedCompletedJobs(writer.db, { custNr: "10001", login: "snap", datacenter: DC, count: 1, firstCompletedAt: Date.now() - 60_000 })) as [string];
      await writer.db.updateTable("jobs").set({ documents_purged_at: null }).where("id", "=", jobId).execute();
      await writer.db.insertInto("job_documents").values({ job_id: jobId, ordinal: 0, name: "letter.txt", charset: "UTF-8", reference_url: null, content: Buffer.from("Dear Sir"), size_bytes: 8 }).execute();
    });
    after(async () => {
      await reader?.close();
      await writer?.close();
    });

    it("shows a purge that commits while it reads in neither the job nor its documents", async () => {
      let purged = 0;
      const racing = reader.db.withPlugin(
        new AfterJobRow(async () => {
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
  });
}

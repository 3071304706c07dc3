/**
 * The capability cache on a real store of each dialect: migration 0004 creates the table, an
 * attempt's report round-trips through the store, and the next call's mode is decided from
 * what was stored, across a reopen of the store.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Store } from "../../src/store/store.ts";
import { DIALECTS, openTestStore, testStore, type TestStore } from "../support/dialects.ts";
import {
  deleteDestinationCapability,
  getDestinationCapability,
  purgeDestinationCapabilities,
  recordAttemptCapability,
  saveDestinationCapability,
} from "../../src/store/queries/destination-capabilities.ts";
import { chooseFaxMode, type FaxMode } from "../../src/line/outcomes/fallback-ladder.ts";
import { tempDir } from "../support/test-node.ts";

const T38_ECM: FaxMode = { transport: "t38", ecm: true, maxBitRate: 14_400 };
const G711_ECM: FaxMode = { transport: "g711", ecm: true, maxBitRate: 14_400 };
const G711_9600: FaxMode = { transport: "g711", ecm: false, maxBitRate: 9_600 };
const TRUNK = { t38: true, ecm: true };
const MAX_AGE = 30 * 86_400_000;
const T0 = 1_700_000_000_000;
const E164 = "+4930123456";

for (const dialect of DIALECTS) describe(`${dialect}: destination capabilities in the store`, () => {
  let ts: TestStore;
  const dir = tempDir();
  before(async () => {
    ts = await testStore(dialect);
  });
  after(async () => {
    await ts.drop();
    dir.remove();
  });
  const open = (): Promise<Store> => openTestStore(ts, dir.path);

  it("round-trips what an attempt taught, and decides the next mode from it", async () => {
    let store = await open();
    try {
      const { db } = store;
      assert.equal(await getDestinationCapability(db, E164), null);
      assert.equal(chooseFaxMode(TRUNK, null, T0, MAX_AGE).rung, 0);

      // Busy teaches nothing: no row is written.
      assert.equal(await recordAttemptCapability(db, E164, { mode: T38_ECM, delivered: false, advancesLadder: false, t38Refused: false }, T0), null);
      assert.equal(await getDestinationCapability(db, E164), null);

      // T.38 refused, the call went on as G.711 with ECM, then failed in T.30.
      const failed = await recordAttemptCapability(
        db,
        E164,
        { mode: G711_ECM, delivered: false, advancesLadder: true, t38Refused: true, reasonCode: "fax_negotiation_failed" },
        T0 + 1000,
      );
      assert.deepEqual(await getDestinationCapability(db, E164), failed);
      assert.deepEqual(failed, {
        e164: E164,
        worked: null,
        workedBitRate: null,
        workedAt: null,
        failed: G711_ECM,
        failedAt: T0 + 1000,
        failedReason: "fax_negotiation_failed",
        failuresInRow: 1,
        t38RefusedAt: T0 + 1000,
        updatedAt: T0 + 1000,
      });
      const next = chooseFaxMode(TRUNK, await getDestinationCapability(db, E164), T0 + 2000, MAX_AGE);
      assert.deepEqual(next, { mode: G711_9600, rung: 3, basis: "after_failure" });

      // Delivered there: stored as what worked, across a reopen of the store.
      await recordAttemptCapability(db, E164, { mode: next.mode, delivered: true, advancesLadder: false, t38Refused: false, bitRate: 7_200 }, T0 + 3000);
      await store.close();
      store = await open();
      const stored = await getDestinationCapability(store.db, E164);
      assert.deepEqual(stored, {
        e164: E164,
        worked: G711_9600,
        workedBitRate: 7_200,
        workedAt: T0 + 3000,
        failed: null,
        failedAt: null,
        failedReason: null,
        failuresInRow: 0,
        t38RefusedAt: T0 + 1000,
        updatedAt: T0 + 3000,
      });
      assert.deepEqual(chooseFaxMode(TRUNK, stored, T0 + 4000, MAX_AGE), { mode: G711_9600, rung: 3, basis: "worked" });

      // No-answer leaves the row untouched.
      const unchanged = await recordAttemptCapability(store.db, E164, { mode: G711_9600, delivered: false, advancesLadder: false, t38Refused: false }, T0 + 5000);
      assert.deepEqual(unchanged, stored);
      assert.deepEqual(await getDestinationCapability(store.db, E164), stored);

      // save replaces; delete forgets; purge removes old rows only, in batches.
      await saveDestinationCapability(store.db, { ...stored!, e164: "+4940111111", updatedAt: T0 - 10 });
      await saveDestinationCapability(store.db, { ...stored!, e164: "+4940222222", updatedAt: T0 - 5 });
      await saveDestinationCapability(store.db, { ...stored!, e164: "+4940222222", updatedAt: T0 - 4, failuresInRow: 2 });
      assert.equal((await getDestinationCapability(store.db, "+4940222222"))!.failuresInRow, 2);
      assert.equal(await purgeDestinationCapabilities(store.db, T0, 1), 1);
      assert.equal(await getDestinationCapability(store.db, "+4940111111"), null);
      assert.equal(await purgeDestinationCapabilities(store.db, T0, 10), 1);
      assert.notEqual(await getDestinationCapability(store.db, E164), null);
      assert.equal(await deleteDestinationCapability(store.db, E164), true);
      assert.equal(await deleteDestinationCapability(store.db, E164), false);
      assert.equal(await getDestinationCapability(store.db, E164), null);
    } finally {
      await store.close();
    }
  });

  it("migration 0004 is registered and creates the table", async () => {
    const store = await open();
    try {
      const tables = await store.db.introspection.getTables();
      const table = tables.find((t) => t.name === "destination_capabilities");
      assert.ok(table, "destination_capabilities exists");
      assert.deepEqual(
        table.columns.map((c) => c.name).sort(),
        [
          "e164", "failed_at", "failed_ecm", "failed_max_bit_rate", "failed_reason", "failed_transport", "failures_in_row",
          "t38_refused_at", "updated_at", "worked_at", "worked_bit_rate", "worked_ecm", "worked_max_bit_rate", "worked_transport",
        ],
      );
    } finally {
      await store.close();
    }
  });
});

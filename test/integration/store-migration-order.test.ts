/**
 * Migration numbers are handed out in blocks to work that lands in any order (docs/adr: the
 * lead's numbering; 0026 landed after 0030 and 0035): a store that already ran later migrations
 * runs an earlier one it lacks when it opens, instead of refusing to start. Simulated on each
 * dialect by undoing 0026 on a migrated store (its column dropped, its row in Kysely's
 * bookkeeping deleted) and opening the store again.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { sql } from "kysely";
import { DIALECTS, openTestStore, withDialect } from "../support/dialects.ts";
import { tempDir } from "../support/test-node.ts";

for (const dialect of DIALECTS) {
  describe(`${dialect}: a migration that lands after later ones`, () => {
    const store = withDialect(dialect);
    const dir = tempDir("faxline-migration-order-");
    after(() => dir.remove());

    it("runs when the store opens, though later migrations ran before it", async () => {
      const first = await openTestStore(store.store(), dir.path);
      try {
        await sql`ALTER TABLE received_faxes DROP COLUMN page_quality`.execute(first.db);
        await sql`DELETE FROM kysely_migration WHERE name = '0026-add-received-page-quality'`.execute(first.db);
        const later = await sql<{ name: string }>`SELECT name FROM kysely_migration WHERE name > '0026' ORDER BY name`.execute(first.db);
        assert.ok(later.rows.some((r) => r.name.startsWith("0030")), "later migrations had run");
      } finally {
        await first.close();
      }
      const again = await openTestStore(store.store(), dir.path);
      try {
        const ran = await sql<{ name: string }>`SELECT name FROM kysely_migration WHERE name = '0026-add-received-page-quality'`.execute(again.db);
        assert.equal(ran.rows.length, 1, "0026 ran when the store opened");
        await again.db.selectFrom("received_faxes").select("page_quality").limit(1).execute();
      } finally {
        await again.close();
      }
    });
  });
}

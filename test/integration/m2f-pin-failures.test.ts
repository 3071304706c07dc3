/**
 * Wrong mail-to-fax PINs in the store (migration 0046, store/queries/mail-to-fax.ts): counted per
 * client address and sender in one statement, locked out at mailToFax.pinMaxFailures for
 * mailToFax.pinLockout, counted afresh after the period or the lockout, forgotten on a right PIN
 * and by the retention role; the same on both dialects, and two stores (two nodes) count together.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { clearWrongPins, forgetWrongPins, pinLockedUntil, recordWrongPin } from "../../src/store/queries/mail-to-fax.ts";
import { DIALECTS, suiteStore } from "../support/dialects.ts";

const T0 = Date.UTC(2026, 10, 29, 8);
const MINUTE = 60_000;
const LIMITS = { maxFailures: 3, lockoutMs: 15 * MINUTE };

for (const dialect of DIALECTS) {
  describe(`${dialect}: wrong mail-to-fax PINs in the store`, () => {
    const suite = suiteStore(dialect);
    const pair = { remote: "192.0.2.10", sender: "erin@example.net" };

    it("counts wrong PINs per address and sender and locks the pair out at the limit, for the lockout", async () => {
      const db = suite.store.db;
      assert.equal(await recordWrongPin(db, pair, T0, LIMITS), 1);
      assert.equal(await recordWrongPin(db, pair, T0 + MINUTE, LIMITS), 2);
      assert.equal(await pinLockedUntil(db, pair.remote, pair.sender, T0 + MINUTE), null, "two of three: not yet");
      assert.equal(await recordWrongPin(db, { ...pair, remote: "192.0.2.11" }, T0 + MINUTE, LIMITS), 1, "another address counts apart");
      assert.equal(await recordWrongPin(db, { ...pair, sender: "frank@example.net" }, T0 + MINUTE, LIMITS), 1, "another sender counts apart");
      assert.equal(await recordWrongPin(db, pair, T0 + 2 * MINUTE, LIMITS), 3);
      assert.equal(await pinLockedUntil(db, pair.remote, pair.sender, T0 + 2 * MINUTE), T0 + 17 * MINUTE);
      assert.equal(await pinLockedUntil(db, pair.remote, pair.sender, T0 + 17 * MINUTE - 1), T0 + 17 * MINUTE);
      assert.equal(await pinLockedUntil(db, pair.remote, pair.sender, T0 + 17 * MINUTE), null, "the lockout ends");
      assert.equal(await recordWrongPin(db, pair, T0 + 18 * MINUTE, LIMITS), 1, "after a lockout the count starts again");
      assert.equal(await pinLockedUntil(db, pair.remote, pair.sender, T0 + 18 * MINUTE), null);
    });

    it("forgets wrong PINs older than the lockout period, and all of them on a right PIN", async () => {
      const db = suite.store.db;
      const other = { remote: "192.0.2.20", sender: "gina@example.net" };
      await recordWrongPin(db, other, T0, LIMITS);
      await recordWrongPin(db, other, T0 + MINUTE, LIMITS);
      assert.equal(await recordWrongPin(db, other, T0 + 17 * MINUTE, LIMITS), 1, "the two of more than 15 minutes ago no longer count");
      await recordWrongPin(db, other, T0 + 18 * MINUTE, LIMITS);
      await clearWrongPins(db, other.remote, other.sender);
      assert.equal(await recordWrongPin(db, other, T0 + 19 * MINUTE, LIMITS), 1, "a right PIN forgave them");
    });

    it("wrong PINs counted at once (as several nodes do, on several connections) all count: none is lost to a race", async () => {
      const db = suite.store.db;
      const shared = { remote: "198.51.100.7", sender: "hank@example.net" };
      const counts = await Promise.all([0, 1, 2, 3].map((i) => recordWrongPin(db, shared, T0 + i, LIMITS)));
      assert.deepEqual([...counts].sort(), [1, 2, 3, 4], "no wrong PIN lost to a race");
      assert.notEqual(await pinLockedUntil(db, shared.remote, shared.sender, T0 + 10), null);
    });

    it("the retention role's sweep removes rows whose period and lockout have passed, and keeps the others", async () => {
      const db = suite.store.db;
      const old = { remote: "203.0.113.1", sender: "ivy@example.net" };
      const locked = { remote: "203.0.113.2", sender: "jo@example.net" };
      await recordWrongPin(db, old, T0, LIMITS);
      for (let i = 0; i < 3; i++) await recordWrongPin(db, locked, T0 + 100 * MINUTE, LIMITS);
      const now = T0 + 110 * MINUTE;
      assert.ok((await forgetWrongPins(db, now, LIMITS.lockoutMs)) >= 1);
      const left = await db.selectFrom("m2f_pin_failures").select(["remote", "sender"]).execute();
      assert.ok(!left.some((r) => r.remote === old.remote), "the old count is gone");
      assert.ok(left.some((r) => r.remote === locked.remote), "a running lockout stays");
      assert.notEqual(await pinLockedUntil(db, locked.remote, locked.sender, now), null);
    });
  });
}
